/* Report writers for one replay (DESIGN.md §7): the human-readable text report and the JSON object. */
#ifndef DT_REPORT_H
#define DT_REPORT_H

#include "../platforms/dt_platform.h"
#include "../replay/dt_stats.h"
#include "../traces/dt_trace.h"

#include <stdio.h>

/* Everything a report shows. notes are the trace's notes followed by the replay's (borrowed pointers). */
typedef struct dt_report_input {
  const dt_platform *platform;
  const dt_trace *trace;
  const dt_stats *stats;
  const char *trace_label;  /* file name(s) shown in the header */
  const char *fidelity;     /* "flow" or "step" */
  size_t top_links;         /* busiest link directions listed (text and JSON) */
  /* optional section of another command (several jobs: sim/cmd_jobs.c), NULL by default: written after the links
   * section, before the notes; json_extra gets the yajl_gen with the top-level map open and writes keys into it */
  void (*text_extra)(FILE *f, const void *data);
  void (*json_extra)(void *yajl_gen, const void *data);
  const void *extra;
  const struct dt_fault_cmp *faults; /* slow and failed links against the baseline (dt_faultcmp.h), or NULL */
  const struct dt_samples *samples; /* --samples (sim/dt_samples.h): the summaries over seeds, or NULL */
} dt_report_input;

/* Writes the JSON object of DESIGN.md §7 (schema 1) and a newline to f, generated with yajl: keys schema,
 * makespan_s, ranks, iterations_s, per_rank, by_kind (kinds with at least one instance, in native op
 * order), notes, and deadlock when ops were left blocked. Floats use %.17g (round-trip exact), integers
 * stay integers, no NaN or infinity. Returns DT_OK, or DT_ERR (err set) when the generator fails. */
int dt_report_json(FILE *f, const dt_report_input *in, dt_error *err);

/* Writes the text report: header, makespan and iterations (and the captured step time beside the simulated
 * one when the trace carries it), per-rank compute / communication / exposed / wait (a table up to 16 ranks;
 * above, min, median and max and the slowest ranks), per op kind count, bytes, time, algbw and busbw in
 * GB/s (1e9 bytes/s), notes and blocked ops. */
void dt_report_text(FILE *f, const dt_report_input *in);

/* Notes of a report, in order: the trace's meta lines ("meta key=value"; a `meta note=` line is the note
 * itself), the trace's notes, the captured step time beside the simulated one when known, the replay's notes.
 * dt_report_note returns the i-th, formatted into buf (size bytes) or pointing into the trace or stats;
 * valid until buf is reused or the inputs are freed. */
size_t dt_report_note_count(const dt_report_input *in);
const char *dt_report_note(const dt_report_input *in, size_t i, char *buf, size_t size);

#endif
