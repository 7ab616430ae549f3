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

/* The numbers behind one explained collective shape or send/recv row, for reports other than `run`'s (`dtsim
 * bench --explain`): the alpha-beta closed form (lat = ka x alpha, bw = kb x S / B, s; B bytes/s), the estimate the
 * simulation is compared with (the NCCL model's on an `nccl:` platform, else the closed form) and its
 * size-independent part, the chosen algorithm's fixed latency and efficiency, the mean simulated time (s), algbw
 * and busbw (GB/s, nccl-tests) and deviation = mean / estimate - 1. Plain data (no pointers). */
typedef struct dt_explain_numbers {
  char choice[32];   /* "ring/Simple", "nvls/Simple", "p2p/simple", "ring" (textbook) */
  char formula[32];  /* "2(n-1)a + 2(n-1)/n S/B", "a + S/B", ... */
  int nccl;          /* 1: the estimate is the NCCL model's */
  double alpha_s, bw_Bps, ka, kb, ab_latency_s, ab_bandwidth_s;
  double estimate_s, estimate_latency_s, fixed_s, efficiency;
  double mean_s, algbw_GBps, busbw_GBps, deviation;
} dt_explain_numbers;

/* Fills x for shape sh of in's stats, or for send/recv row r. */
void dt_explain_numbers_of(const dt_report_input *in, const dt_explain_shape *sh, dt_explain_numbers *x);
void dt_explain_p2p_numbers(const dt_report_input *in, const dt_explain_p2p *r, dt_explain_numbers *x);

/* Writes the explanation of one collective shape (its header line and the ran / why / protocol / alpha-beta / NCCL
 * model / simulated / difference lines) or of one send/recv row to f. */
void dt_explain_shape_text(FILE *f, const dt_report_input *in, const dt_explain_shape *sh);
void dt_explain_p2p_text(FILE *f, const dt_report_input *in, const dt_explain_p2p *r);

/* Writes the text explanation to f (after the report). Shows at most 12 shapes, the largest. */
void dt_explain_text(FILE *f, const dt_report_input *in);

/* Writes the "explain" key and its array (every shape, up to 500) into the open JSON map g; nothing when the
 * replay kept no rows. Keys per shape: docs/report.md, Explain. */
void dt_explain_json(yajl_gen g, const dt_report_input *in);

#endif
