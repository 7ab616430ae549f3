/* dtsim scale: the trace of a run with more data-parallel replicas, from the trace (or capture) of fewer
 * (docs/scale.md). Ranks are laid out as Megatron-LM does, TP innermost, then DP, then PP:
 * rank = t + TP * (j + DP * k) for TP rank t, DP replica j, PP stage k. */
#ifndef DT_SCALE_H
#define DT_SCALE_H

#include "dt_trace.h"

#include <stdio.h>

typedef struct dt_scale_opts {
  int32_t tp, pp;          /* the input's tensor- and pipeline-parallel degrees (>= 1); its DP degree is
                              nranks / (tp * pp) */
  int32_t dp;              /* the DP degree wanted (>= 1) */
  const char *const *grad; /* names of the input's gradient (data-parallel) groups, ngrad entries */
  size_t ngrad;
} dt_scale_opts;

/* Writes into *out (owned by the caller, dt_trace_free) the trace of o->dp replicas of the input's layout:
 * rank (t, j, k) runs the ops of the input's rank (t, j mod dp0, k); a group inside one replica is used by
 * each replica as its own copy (named NAME_dpJ); each gradient group — it must be exactly the DP group
 * {(t, 0..dp0-1, k)} of one (t, k) — becomes the DP group of the new layout, of o->dp ranks, keeping its name;
 * point-to-point peers stay in their replica. Sizes follow the layout: all-gathers on a gradient group gather
 * parameter shards (ZeRO), so their per-rank bytes scale by dp0 / dp; all-reduce and reduce-scatter inputs (the
 * whole gradient) and broadcasts keep theirs. Replicas past the input's are template users of it (memory of
 * the input's ops). The layout, the rank mapping and every group's fate are printed to report (may be NULL)
 * and added as notes. Errors (DT_ERR, err set): a layout that does not divide the ranks, a gradient group that
 * is not a DP group or is named twice, an unknown group name, a group (other than all ranks) that spans
 * replicas without being named a gradient group, a peer in another replica, an all-to-all on a gradient group,
 * an all-gather shard that dp0 / dp does not divide into whole bytes. The input must be validated. */
int dt_trace_scale(const dt_trace *in, const dt_scale_opts *o, dt_trace **out, FILE *report, dt_error *err);

#endif
