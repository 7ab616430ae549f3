/* Teaching mode (`dtsim run --explain`, docs/report.md): for the run at hand, what each collective did -- its
 * algorithm and protocol, why NCCL's tuner model chose them, the alpha-beta terms with this run's numbers, algbw and
 * busbw as nccl-tests defines them, the simulated time and why it differs from the estimate -- and what bounds the
 * iteration. Reads the replay's dt_stats.explain rows (dt_replay_opts.explain). */
#ifndef DT_EXPLAIN_H
#define DT_EXPLAIN_H

#include "dt_report.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

/* Collective shapes as the explanation shows them: the replay's rows merged over groups of one shape (same kind,
 * size, choice, members, nodes and estimate), by total simulated time, largest first. */
typedef struct dt_explain_shape {
  const dt_explain_row *row; /* the first row of the shape (borrowed from the stats) */
  size_t ngroups;            /* groups merged */
  uint64_t count;            /* instances over them */
  double time_s, min_s, max_s;
} dt_explain_shape;

/* The merged shapes of s (caller frees *out), *n of them. */
void dt_explain_shapes(const dt_stats *s, dt_explain_shape **out, size_t *n);

/* Writes the text explanation to f (after the report). Shows at most 12 shapes, the largest. */
void dt_explain_text(FILE *f, const dt_report_input *in);

/* Writes the "explain" key and its array (every shape, up to 500) into the open JSON map g; nothing when the
 * replay kept no rows. Keys per shape: docs/report.md, Explain. */
void dt_explain_json(yajl_gen g, const dt_report_input *in);

#endif
