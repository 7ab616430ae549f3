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
  double exposed_by_dim_s[DT_DIM_COUNT]; /* per dimension: the union of its communication intervals not covered
                                            by compute (issue to completion, as exposed_comm_s) */
} dt_rank_stats;

/* Per op kind, over instances (a collective counts once, a send/recv pair once under DT_OP_SEND). */
typedef struct dt_kind_stats {
  uint64_t count;
  uint64_t bytes;        /* sum of each instance's per-rank input bytes */
  double time_s;         /* sum of instance times: last member's arrival to last member's completion */
  double nccl_bytes;     /* sum of S_nccl (bytes, or n*bytes for allgather) */
  double bus_bytes;      /* sum of S_nccl * busbw factor (nccl-tests PERFORMANCE.md) */
} dt_kind_stats;

/* One op on the critical path: [start_s, end_s] is the part on the path (a collective or send/recv: from its last
 * member's arrival to its completion on this rank; other ops: issue to completion). */
typedef struct dt_cp_segment {
  int32_t rank;
  int32_t stream;        /* the sN number */
  uint32_t op;           /* index of the op in the stream */
  dt_op_kind kind;       /* a send/recv pair: DT_OP_SEND or DT_OP_RECV as the op is */
  int32_t group;         /* trace group, -1 when none */
  dt_dim dim;
  double start_s, end_s;
} dt_cp_segment;

/* Most segments dt_critical keeps (the last ones, up to the makespan). */
#define DT_CP_MAX_SEGMENTS 20000

/* The critical path (docs/report.md): the chain of ops, each waiting for the previous, that ends at the makespan,
 * and its split. compute_s + host_s + wait_s + sum of comm_s = makespan (up to rounding). */
typedef struct dt_critical {
  double compute_s;      /* compute ops on the path */
  double host_s;         /* delay ops (host/launch time from captures) */
  double wait_s;         /* time on the path where no op of it ran (waiting for peers or an after= edge) */
  double comm_s[DT_DIM_COUNT][DT_OP_COUNT]; /* communication on the path (exposed: nothing hides it), by dimension
                                               and op kind (pairs under DT_OP_SEND) */
  size_t nops;           /* ops on the path */
  size_t nranks_on_path; /* distinct ranks it visits */
  size_t nsegs;          /* segments kept, in time order: the last DT_CP_MAX_SEGMENTS of nops */
  dt_cp_segment *segs;
} dt_critical;

/* Message sizes (per-rank bytes of an instance) in powers of two: bucket 0 holds 0 bytes, bucket b >= 1 holds
 * [2^(b-1), 2^b). */
#define DT_HIST_BUCKETS 66
typedef struct dt_hist {
  uint64_t count[DT_HIST_BUCKETS];
  double bytes[DT_HIST_BUCKETS];
} dt_hist;

/* Bucket of a size (see dt_hist). */
int dt_hist_bucket(uint64_t bytes);

/* One candidate (algorithm, protocol) of an explained collective and its contention-free estimate (s), of which
 * lat_s is the part that does not grow with the size (the estimate at 0 bytes). */
typedef struct dt_explain_cand {
  int algo, proto;       /* dt_algo, dt_proto (-1: the textbook model has no protocol) */
  double est_s, lat_s;
} dt_explain_cand;

#define DT_EXPLAIN_MAX_CANDS 32

/* The collectives of one op kind on one group with one per-rank size and one choice, for --explain
 * (dt_replay_opts.explain): the group's shape, every candidate's estimate as NCCL's tuner makes it
 * (replay/dt_coll_select.c), and the simulated times of its instances. */
typedef struct dt_explain_row {
  dt_op_kind kind;
  int32_t group;         /* trace group */
  uint64_t bytes;        /* per-rank input bytes (an all-to-all: the sum a member sends) */
  int32_t n, nnodes, max_per_node, nchannels;
  int algo, proto;       /* the choice (proto -1 without the NCCL model) */
  double alpha_s;        /* textbook alpha: the largest latency of a ring hop (s) */
  double bw_Bps;         /* textbook B: the ring's bottleneck bandwidth per member (bytes/s) */
  double alpha_intra_s, alpha_net_s, bw_intra_Bps, bw_net_Bps; /* the group's member-to-member routes */
  double fixed_s, eff;   /* the choice's fixed latency (s) and bandwidth efficiency (NCCL model; 0 and 1 without) */
  double est_s, est_lat_s; /* the choice's estimate and its size-independent part (s) */
  size_t ncand;
  dt_explain_cand cand[DT_EXPLAIN_MAX_CANDS]; /* runnable candidates, in the tuner's order */
  uint64_t count;        /* instances */
  double time_s, min_s, max_s; /* their simulated times (last arrival to last completion): sum, least, most */
} dt_explain_row;

/* The textbook alpha-beta terms of row r's collective (docs/replay.md, Algorithms), priced where every algorithm's
 * cost lives: its textbook algorithm's plan (ring, chain or direct: the plan table, replay/dt_coll_plan.c) by the
 * plan evaluator (rp_plan_estimate) on a textbook shape -- no NCCL terms, every hop of latency *alpha and
 * bandwidth *B. For a ring or a chain: one node of r->n members, alpha = r->alpha_s, B = r->bw_Bps (the largest
 * ring hop's latency, the ring's bottleneck bandwidth); for an all-to-all the group's nodes, alpha its largest
 * member-to-member latency and B the bandwidth of the route class whose bytes take longest (*net: 1 when that is
 * the network share, the bytes that leave the node). Time = ka alpha + kb S / B (s), with *ka and *kb the plan's
 * coefficients (the evaluator's prices at unit latency and unit size / bandwidth), S = r->bytes. */
typedef struct dt_explain_textbook {
  double alpha, B, ka, kb;
  int net;
} dt_explain_textbook;
dt_explain_textbook dt_explain_textbook_of(const dt_explain_row *r);

/* Most hops of a route an explained send/recv row keeps (dt_topology.h's DT_ROUTE_MAX_HOPS). */
#define DT_EXPLAIN_P2P_HOPS 16

/* Pairs of one batch queue (direction, peer, tag) in flight at once: NCCL_STEPS (replay/dt_replay.c, PAIR_WINDOW;
 * docs/replay.md, Batches). A queue of N pairs alone on its route ends at ceil(N / 8) a + N S / B. */
#define DT_BATCH_PAIR_WINDOW 8

/* The send/recv pairs of one per-pair size over routes of one shape (same or other node, hop count, route latency,
 * slowest link's bandwidth, the NCCL model's protocol terms), for --explain: the route of the first pair, the
 * alpha-beta terms and the simulated times (last side's arrival to the pair's completion). */
typedef struct dt_explain_p2p {
  uint64_t bytes;        /* payload bytes of each pair (a batch queue's: its bytes over its pairs, rounded) */
  uint64_t batch_pairs;  /* 0: pairs outside batches, each an entry; N: queues of N pairs of one batch (one
                            direction, peer and tag), each an entry timed as the batch's sends are on the send row */
  uint64_t batch_bytes;  /* a batch queue's payload bytes in all (N x bytes when its pairs are alike); 0 outside */
  int32_t src, dst;      /* the first pair's ranks */
  int32_t src_node, dst_node;
  int nhops;
  uint32_t hop_link[DT_EXPLAIN_P2P_HOPS]; /* the first pair's route: topology link index and direction per hop */
  uint8_t hop_dir[DT_EXPLAIN_P2P_HOPS];
  int slowest;           /* the hop with the least bandwidth (the first of them) */
  char slowest_name[64]; /* its link's name and direction ("nic0.0 up", as the per-link accounting names it) */
  double alpha_s;        /* the route's latency: its links' latencies summed (s) */
  double bw_Bps;         /* its slowest link's bandwidth (bytes/s) */
  double eff, cost_s;    /* the NCCL model's protocol efficiency (the flow carries bytes / eff) and its fixed cost
                            (s), waited once the data arrived; 1 and 0 on a textbook platform */
  const char *proto;     /* the NCCL model's protocol label (static), NULL on a textbook platform */
  uint64_t count;        /* entries: pairs, or batch queues */
  double time_s, min_s, max_s; /* their simulated times: sum, least, most */
} dt_explain_p2p;

/* One job of several replayed together (dt_replay_opts.job_of_rank). */
typedef struct dt_job_stats {
  double end_s;          /* completion of the job's last op (every job starts at 0) */
  size_t niterations;
  double *iterations_s;  /* owned: the job's first rank's marks differenced; without marks one entry, end_s */
} dt_job_stats;

typedef struct dt_stats {
  double makespan_s;     /* first op start (0) to last op end */
  int32_t nranks;
  dt_rank_stats *per_rank; /* nranks entries */
  dt_kind_stats by_kind[DT_OP_COUNT];
  size_t niterations;
  double *iterations_s;  /* rank 0's mark completion times differenced; without marks one entry: makespan */
  size_t nnotes;
  char **notes;          /* assumptions and warnings of the replay (not the trace's own notes) */
  size_t nfallbacks;
  char **fallbacks;      /* the notes that say a forced algorithm could not run some instances (also in notes,
                            owned apart): `dtsim bench` prints them, its table has no notes */
  size_t peak_live_instances; /* most collective instances in flight at once (first arrival to last completion) */
  size_t peak_live_pairs;     /* most send/recv pairs in flight at once */
  size_t ndeadlock;
  char **deadlock;       /* (with aborted set: the ops running or waiting when the run stopped) */
  char *aborted;         /* owned: why a link failure stopped the run (replay/dt_degrade.h), NULL otherwise */
  double aborted_s;      /* simulated time it stopped */       /* one line per blocked op: "rank 3 s1 op 4 (allreduce group=tp0, trace.dtt:12)" */
  size_t ops_total;      /* the trace's ops, folded ranks' included */
  size_t ops_done;       /* those that completed: below ops_total after a deadlock or an abort */
  double stopped_s;      /* simulated time the run reached: after an abort its time, after a deadlock the last time
                            anything moved (an op's end or a flow's); makespan_s (the end of the last op that
                            completed) may be earlier; makespan_s for a run that completed */
  struct dt_linkstats *links; /* per-link accounting (replay/dt_linkload.h), owned; NULL when turned off */
  dt_critical *critical;  /* the critical path, owned; NULL when no op completed */
  dt_hist hist_kind[DT_OP_COUNT]; /* message sizes per op kind, over instances (pairs under DT_OP_SEND) */
  dt_hist hist_dim[DT_DIM_COUNT]; /* per dimension */
  size_t nhist_groups;    /* trace groups + 1 */
  dt_hist *hist_group;    /* per trace group, the last entry for send/recv pairs; owned */
  size_t nexplain;        /* --explain rows (dt_explain_row), owned; 0 when off */
  dt_explain_row *explain;
  uint64_t explain_dropped; /* instances not explained: more distinct (kind, group, size, choice) than kept */
  size_t nexplain_p2p;    /* --explain send/recv rows (dt_explain_p2p), owned, by first appearance; 0 when off */
  dt_explain_p2p *explain_p2p;
  uint64_t explain_p2p_dropped; /* pairs not explained: more distinct (size, route shape) than kept */
  size_t njobs;           /* dt_replay_opts.njobs when job_of_rank was given, else 0 */
  dt_job_stats *jobs;     /* njobs entries, owned; NULL without jobs */
  int variability;        /* 1 when speed factors, jitter or late starts applied (replay/dt_variability.h) */
  uint64_t seed;          /* then: the jitter's seed */
  double jitter_sigma;    /* lognormal sigma of the per-compute-op factor, 0 = no jitter */
  int32_t nslow, nlate;   /* ranks with a speed factor other than 1, ranks that start late */
} dt_stats;

/* The time over which the per-link shares (busy, utilisation) are taken, s: the makespan of a run that completed;
 * for one that stopped early (a deadlock, an abort), the time the simulation reached (stopped_s), or the end of the
 * last transfer the accounting counted when that is later (a modelled transfer recorded before the stop), so that
 * every counted interval lies inside it: busy_s <= span by construction (docs/report.md). */
double dt_stats_link_span(const dt_stats *s);

/* algbw and busbw in bytes/s of a kind (0 when its time is 0): nccl_bytes/time_s and bus_bytes/time_s. */
double dt_kind_algbw(const dt_kind_stats *k);
double dt_kind_busbw(const dt_kind_stats *k);

/* The time a send/recv pair adds to the `send` row (s): last arrival to last completion of the pair (end_s -
 * arrival_s), or nothing when its send was posted in a batch (send_batched), whose time the batch adds once
 * (dt_kind_add_batch). docs/report.md says what the row means. */
double dt_kind_pair_time(int send_batched, double arrival_s, double end_s);

/* A rank's batch (ncclGroupStart/End) that held sends has completed: adds m times (folded ranks) its time to the
 * `send` row, once, as nccl-tests times a grouped sendrecv (the group's time, the bytes of all its sends; the
 * bytes come from its pairs). It adds end_s - arrival_s (s), nothing when it is not positive: the replay passes
 * 0 and the length of the union of its sends' pairs' [arrival of the later side, completion] intervals. */
void dt_kind_add_batch(dt_kind_stats *send, double arrival_s, double end_s, int m);

/* busbw factor of a collective of kind on n ranks (nccl-tests PERFORMANCE.md): allreduce 2(n-1)/n;
 * allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, send 1; others 0 (not reported). */
double dt_busbw_factor(dt_op_kind kind, size_t n);

/* Length of the union of n [start, end) intervals (sorted in place). */
double dt_interval_union(double (*iv)[2], size_t n);

/* Frees the statistics and everything they own (per-rank table, iterations, notes, deadlock lines, links); NULL is
 * a no-op. */
void dt_stats_free(dt_stats *s);

#endif
