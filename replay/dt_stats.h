/* Statistics of one replay, in simulated seconds and bytes (DESIGN.md §7). Filled by dt_replay_run,
 * read by the report writers in sim/. */
#ifndef DT_STATS_H
#define DT_STATS_H

#include "../traces/dt_trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dt_rank_stats {
  double compute_s;      /* length of the union of the rank's compute intervals */
  double comm_s;         /* union of its communication intervals, issue to completion */
  double exposed_comm_s; /* the part of comm_s not covered by compute */
  double wait_s;         /* union of the intervals spent waiting for the last member of an instance */
  double end_s;          /* completion time of the rank's last op (0 for an idle rank) */
} dt_rank_stats;

/* Per op kind, over instances (a collective counts once, a send/recv pair once under DT_OP_SEND). */
typedef struct dt_kind_stats {
  uint64_t count;
  uint64_t bytes;        /* sum of each instance's per-rank input bytes */
  double time_s;         /* sum of instance times: last member's arrival to last member's completion */
  double nccl_bytes;     /* sum of S_nccl (bytes, or n*bytes for allgather) */
  double bus_bytes;      /* sum of S_nccl * busbw factor (nccl-tests PERFORMANCE.md) */
} dt_kind_stats;

typedef struct dt_stats {
  double makespan_s;     /* first op start (0) to last op end */
  int32_t nranks;
  dt_rank_stats *per_rank; /* nranks entries */
  dt_kind_stats by_kind[DT_OP_COUNT];
  size_t niterations;
  double *iterations_s;  /* rank 0's mark completion times differenced; without marks one entry: makespan */
  size_t nnotes;
  char **notes;          /* assumptions and warnings of the replay (not the trace's own notes) */
  size_t peak_live_instances; /* most collective instances in flight at once (first arrival to last completion) */
  size_t peak_live_pairs;     /* most send/recv pairs in flight at once */
  size_t ndeadlock;
  char **deadlock;       /* one line per blocked op: "rank 3 s1 op 4 (allreduce group=tp0, trace.dtt:12)" */
  struct dt_linkstats *links; /* per-link accounting (replay/dt_linkload.h), owned; NULL when turned off */
} dt_stats;

/* algbw and busbw in bytes/s of a kind (0 when its time is 0): nccl_bytes/time_s and bus_bytes/time_s. */
double dt_kind_algbw(const dt_kind_stats *k);
double dt_kind_busbw(const dt_kind_stats *k);

/* busbw factor of a collective of kind on n ranks (nccl-tests PERFORMANCE.md): allreduce 2(n-1)/n;
 * allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, send 1; others 0 (not reported). */
double dt_busbw_factor(dt_op_kind kind, size_t n);

/* Length of the union of n [start, end) intervals (sorted in place). */
double dt_interval_union(double (*iv)[2], size_t n);

/* Frees the statistics and everything they own (per-rank table, iterations, notes, deadlock lines, links); NULL is
 * a no-op. */
void dt_stats_free(dt_stats *s);

#endif
