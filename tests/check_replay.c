/* Check suite for replay/: the closed forms of DESIGN.md §6 on one NVSwitch node at both fidelities, fabric
 * contention (oversubscription, shared NICs), route latency, overlap and skew statistics, batches and deadlock
 * detection, per-kind accounting, placement files. Expected values come from the alpha-beta formulas and hand
 * counts, never from the replay itself. SimGrid can be initialised once per process: every test case runs in
 * its own forked process (Check's default fork mode). */
#include "dt_test.h"
#include "common/dt_util.h"
#include "replay/dt_replay.h"
#include "replay/dt_stats.h"
#include "traces/dt_trace.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REL 1e-6
#define MIB 1048576ULL

/* ---- platforms ---- */

static dt_platform base_platform(int nodes, int gpus_per_node)
{
  dt_platform p = dt_test_platform(nodes, gpus_per_node);
  return p;
}

/* One DGX-like node: 8 GPUs on an NVSwitch, alpha = intra_latency, B = intra_bandwidth. */
static dt_platform node8(void)
{
  return base_platform(1, 8);
}

static dt_platform multi_node(int nodes, int gpus_per_node, int nics_per_node)
{
  dt_platform p = base_platform(nodes, gpus_per_node);
  p.nics_per_node = nics_per_node;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1.5e-6;
  p.link_bandwidth = 50e9;
  p.link_latency = 3e-7;
  return p;
}

/* ---- traces ---- */

static int32_t add_group(dt_trace *t, const char *name, int32_t first, int32_t n)
{
  int32_t ranks[64];
  for (int32_t i = 0; i < n; i++)
    ranks[i] = first + i;
  dt_error err;
  int g = dt_trace_add_group(t, name, ranks, (size_t)n, 0, 0, &err);
  ck_assert_msg(g >= 0, "add_group: %s", err.msg);
  return g;
}

static dt_op *add_op(dt_trace *t, int32_t rank, int32_t stream, dt_op_kind kind)
{
  dt_trace_stream(t, rank, stream, 1); /* create the stream first: dt_trace_append may move rank's streams */
  dt_op *op = dt_trace_append(t, rank, stream);
  op->kind = kind;
  return op;
}

static dt_op *add_coll(dt_trace *t, int32_t rank, int32_t stream, dt_op_kind kind, int32_t group, uint64_t bytes)
{
  dt_op *op = add_op(t, rank, stream, kind);
  op->group = group;
  op->bytes = bytes;
  return op;
}

static dt_op *add_p2p(dt_trace *t, int32_t rank, int32_t stream, dt_op_kind kind, int32_t peer, uint64_t bytes)
{
  dt_op *op = add_op(t, rank, stream, kind);
  op->peer = peer;
  op->bytes = bytes;
  return op;
}

static dt_op *add_compute(dt_trace *t, int32_t rank, int32_t stream, double dur)
{
  dt_op *op = add_op(t, rank, stream, DT_OP_COMPUTE);
  op->dur = dur;
  return op;
}

static void add_dep(dt_op *op, int32_t stream_pos, int32_t index)
{
  op->deps = dt_xrealloc(op->deps, sizeof *op->deps * (op->ndeps + 1));
  op->deps[op->ndeps].stream = stream_pos;
  op->deps[op->ndeps].index = index;
  op->ndeps++;
}

/* Replay options for the tests: under AddressSanitizer SimGrid must switch contexts with threads (STYLE.md). */
static void test_opts(dt_replay_opts *o, dt_fidelity fid)
{
  dt_replay_opts_init(o);
  o->fidelity = fid;
#if defined(__SANITIZE_ADDRESS__)
  static char thread_factory[] = "--cfg=contexts/factory:thread";
  static char *args[] = {thread_factory};
  o->simgrid_argc = 1;
  o->simgrid_argv = args;
#endif
}

/* Validates t, replays it on p and returns the statistics (t is freed). */
static dt_stats *replay(const dt_platform *p, dt_trace *t, dt_fidelity fid)
{
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  dt_replay_opts o;
  test_opts(&o, fid);
  dt_stats *s = NULL;
  ck_assert_msg(dt_replay_run(p, t, &o, &s, &err) == DT_OK, "replay: %s", err.msg);
  ck_assert_ptr_nonnull(s);
  dt_trace_free(t);
  return s;
}

#define ck_assert_rel(got, want)                                                                                       \
  do {                                                                                                                 \
    double g_ = (got), w_ = (want);                                                                                    \
    ck_assert_msg(fabs(g_ - w_) <= REL * fabs(w_) + 1e-15, "%s = %.12g, expected %.12g (rel err %.3g)", #got, g_, w_,  \
                  w_ != 0 ? fabs(g_ - w_) / fabs(w_) : fabs(g_));                                                      \
  } while (0)

/* ---- closed forms on one NVSwitch node (DESIGN.md §6) ---- */

static const uint64_t S8 = 64 * MIB; /* divisible by 8 */

/* Runs one collective of `kind` over all 8 GPUs and checks makespan and the kind's time against want. */
static void check_single(dt_op_kind kind, uint64_t bytes, int32_t root, dt_fidelity fid, double want)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  for (int32_t r = 0; r < 8; r++) {
    dt_op *op = add_coll(t, r, 0, kind, g, bytes);
    op->root = root;
  }
  dt_stats *s = replay(&p, t, fid);
  ck_assert_int_eq(s->ndeadlock, 0);
  ck_assert_rel(s->makespan_s, want);
  ck_assert_int_eq(s->by_kind[kind].count, 1);
  ck_assert_rel(s->by_kind[kind].time_s, want);
  for (int r = 0; r < 8; r++) {
    ck_assert_rel(s->per_rank[r].comm_s, want);
    ck_assert_rel(s->per_rank[r].end_s, want);
  }
  dt_stats_free(s);
}

static double alpha8(void)
{
  return node8().intra_latency;
}
static double bw8(void)
{
  return node8().intra_bandwidth;
}

static double allreduce_form(double n, double S)
{
  return 2 * (n - 1) * alpha8() + 2 * (n - 1) / n * S / bw8();
}

START_TEST(test_allreduce_flow)
{
  check_single(DT_OP_ALLREDUCE, S8, 0, DT_FIDELITY_FLOW, allreduce_form(8, (double)S8));
}
END_TEST

START_TEST(test_allreduce_step)
{
  check_single(DT_OP_ALLREDUCE, S8, 0, DT_FIDELITY_STEP, allreduce_form(8, (double)S8));
}
END_TEST

START_TEST(test_allgather_flow)
{
  check_single(DT_OP_ALLGATHER, S8, 0, DT_FIDELITY_FLOW, 7 * alpha8() + 7.0 * (double)S8 / bw8());
}
END_TEST

START_TEST(test_allgather_step)
{
  check_single(DT_OP_ALLGATHER, S8, 0, DT_FIDELITY_STEP, 7 * alpha8() + 7.0 * (double)S8 / bw8());
}
END_TEST

START_TEST(test_reducescatter_flow)
{
  check_single(DT_OP_REDUCESCATTER, S8, 0, DT_FIDELITY_FLOW, 7 * alpha8() + 7.0 / 8 * (double)S8 / bw8());
}
END_TEST

START_TEST(test_reducescatter_step)
{
  check_single(DT_OP_REDUCESCATTER, S8, 0, DT_FIDELITY_STEP, 7 * alpha8() + 7.0 / 8 * (double)S8 / bw8());
}
END_TEST

START_TEST(test_broadcast)
{
  /* pipelined chain from root 3 in group order; flow model at both fidelities */
  check_single(DT_OP_BROADCAST, S8, 3, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW, 7 * alpha8() + (double)S8 / bw8());
}
END_TEST

START_TEST(test_reduce)
{
  check_single(DT_OP_REDUCE, S8, 5, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW, 7 * alpha8() + (double)S8 / bw8());
}
END_TEST

START_TEST(test_alltoall)
{
  check_single(DT_OP_ALLTOALL, S8, 0, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW,
               alpha8() + 7.0 / 8 * (double)S8 / bw8());
}
END_TEST

START_TEST(test_barrier)
{
  check_single(DT_OP_BARRIER, 0, 0, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW, 14 * alpha8());
}
END_TEST

START_TEST(test_other_is_allreduce)
{
  check_single(DT_OP_OTHER, S8, 0, DT_FIDELITY_FLOW, allreduce_form(8, (double)S8));
}
END_TEST

START_TEST(test_alltoallv_splits)
{
  /* every member sends splits[j] to member j: the busiest GPU link carries the sum over j != i of splits[j];
   * with splits = 1..8 MiB, member 0 sends 2+...+8 = 35 MiB (it skips its own 1 MiB) and is the bottleneck */
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  for (int32_t r = 0; r < 8; r++) {
    dt_op *op = add_coll(t, r, 0, DT_OP_ALLTOALL, g, 0);
    op->nsplits = 8;
    op->splits = dt_xmalloc(sizeof *op->splits * 8);
    op->bytes = 0;
    for (int j = 0; j < 8; j++) {
      op->splits[j] = (uint64_t)(j + 1) * MIB;
      op->bytes += op->splits[j];
    }
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  /* member 7 receives 8 MiB from each of 7 peers: 56 MiB down its link, the bottleneck */
  ck_assert_rel(s->makespan_s, alpha8() + 56.0 * MIB / bw8());
  ck_assert_int_eq(s->by_kind[DT_OP_ALLTOALL].bytes, 36 * MIB);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_mixed_ring)
{
  /* 2 nodes x 2 GPUs, one NIC per node, single switch: ring 0-1-2-3 alternates NVLink and NIC hops. The NIC hops
   * are both the slowest and the highest-latency ones, so both fidelities give the closed form with their
   * alpha and B (docs/replay.md, mixed rings) */
  dt_platform p = multi_node(2, 2, 1);
  p.topology = DT_NET_SINGLE_SWITCH;
  dt_trace *t = dt_trace_new(4);
  int32_t g = add_group(t, "all", 0, 4);
  for (int32_t r = 0; r < 4; r++)
    add_coll(t, r, 0, DT_OP_ALLREDUCE, g, S8);
  dt_stats *s = replay(&p, t, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW);
  double alpha = 2 * p.nic_latency + 2 * p.link_latency, B = p.nic_bandwidth;
  ck_assert_rel(s->makespan_s, 6 * alpha + 1.5 * (double)S8 / B);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_single_member)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(2);
  int32_t g = add_group(t, "solo", 0, 1);
  add_coll(t, 0, 0, DT_OP_ALLREDUCE, g, S8);
  add_compute(t, 1, 0, 1e-3);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->by_kind[DT_OP_ALLREDUCE].count, 1);
  ck_assert_rel(s->by_kind[DT_OP_ALLREDUCE].time_s, 0);
  ck_assert_rel(s->per_rank[0].end_s, 0);
  ck_assert_rel(s->makespan_s, 1e-3);
  dt_stats_free(s);
}
END_TEST

/* ---- fabric: oversubscription, shared NIC, route latency ---- */

/* 16 single-GPU nodes, one NIC each, 2-level fat-tree of radix 10, node wiring; NIC i sends S to NIC i+8 for
 * i < 8. With k = 1 (5 down, 5 up per leaf) destination-mod-k gives every flow its own uplink and spine: the
 * permutation is non-blocking. With k = 4 (8 down, 2 up) leaf 0 holds NICs 0-7 and each of its 2 uplinks carries
 * 4 flows: the bandwidth term is 4x. Every flow crosses leaf-spine-leaf: alpha = 2 nic + 4 cables. */
static double permutation_time(int k)
{
  dt_platform p = multi_node(16, 1, 1);
  p.topology = DT_NET_FAT_TREE;
  p.levels = 2;
  p.radix = 10;
  p.oversubscription = k;
  p.wiring = DT_WIRING_NODE;
  dt_trace *t = dt_trace_new(16);
  for (int32_t i = 0; i < 8; i++) {
    add_p2p(t, i, 0, DT_OP_SEND, i + 8, S8);
    add_p2p(t, i + 8, 0, DT_OP_RECV, i, S8);
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 8);
  double m = s->makespan_s;
  dt_stats_free(s);
  return m;
}

START_TEST(test_oversubscription)
{
  dt_platform p = multi_node(16, 1, 1);
  double alpha = 2 * p.nic_latency + 4 * p.link_latency;
  double beta = (double)S8 / p.link_bandwidth;
  double t = permutation_time(_i ? 4 : 1);
  ck_assert_rel(t, alpha + (_i ? 4 : 1) * beta);
}
END_TEST

START_TEST(test_shared_nic)
{
  /* 2 nodes of 2 GPUs behind one NIC, single switch; GPU 0 -> 2 and GPU 1 -> 3 share both NICs: each gets half */
  dt_platform p = multi_node(2, 2, 1);
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 4 * p.nic_bandwidth; /* the NIC is the bottleneck */
  dt_trace *t = dt_trace_new(4);
  for (int32_t i = 0; i < 2; i++) {
    add_p2p(t, i, 0, DT_OP_SEND, i + 2, S8);
    add_p2p(t, i + 2, 0, DT_OP_RECV, i, S8);
  }
  double alpha = 2 * p.nic_latency + 2 * p.link_latency;
  double half = p.nic_bandwidth / 2;
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_rel(s->makespan_s, alpha + (double)S8 / half);
  ck_assert_rel(s->by_kind[DT_OP_SEND].time_s, 2 * (alpha + (double)S8 / half));
  dt_stats_free(s);
}
END_TEST

START_TEST(test_route_latency)
{
  /* zero-byte (and 1-byte) send between leaves of the k=1 tree above: 3 switches, alpha = 2 nic + 4 link */
  dt_platform p = multi_node(16, 1, 1);
  p.topology = DT_NET_FAT_TREE;
  p.levels = 2;
  p.radix = 10;
  p.wiring = DT_WIRING_NODE;
  uint64_t bytes = (uint64_t)_i;
  dt_trace *t = dt_trace_new(16);
  add_p2p(t, 0, 0, DT_OP_SEND, 12, bytes);
  add_p2p(t, 12, 0, DT_OP_RECV, 0, bytes);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_rel(s->makespan_s, 2 * p.nic_latency + 4 * p.link_latency + (double)bytes / p.link_bandwidth);
  dt_stats_free(s);
}
END_TEST

/* ---- overlap, skew, statistics ---- */

static double ar8(void)
{
  return allreduce_form(8, (double)S8);
}

/* rank 0: s0 compute Tc, s1 all-reduce (after s0:0 when serial); ranks 1-7: s1 all-reduce */
static dt_stats *overlap_run(int serial, double tc)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  add_compute(t, 0, 0, tc);
  dt_op *ar = add_coll(t, 0, 1, DT_OP_ALLREDUCE, g, S8);
  if (serial)
    add_dep(ar, 0, 0);
  for (int32_t r = 1; r < 8; r++)
    add_coll(t, r, 1, DT_OP_ALLREDUCE, g, S8);
  return replay(&p, t, DT_FIDELITY_FLOW);
}

START_TEST(test_overlap)
{
  double tc = 100e-6, tar = ar8();
  ck_assert(tc < tar);
  dt_stats *s = overlap_run(0, tc);
  ck_assert_rel(s->makespan_s, tar);
  ck_assert_rel(s->per_rank[0].compute_s, tc);
  ck_assert_rel(s->per_rank[0].comm_s, tar);
  ck_assert_rel(s->per_rank[0].exposed_comm_s, tar - tc);
  ck_assert_rel(s->per_rank[1].exposed_comm_s, tar);
  ck_assert_rel(s->per_rank[0].wait_s, 0);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_overlap_serialised)
{
  double tc = 100e-6, tar = ar8();
  dt_stats *s = overlap_run(1, tc);
  ck_assert_rel(s->makespan_s, tc + tar);
  ck_assert_rel(s->per_rank[0].compute_s, tc);
  ck_assert_rel(s->per_rank[0].comm_s, tar);
  ck_assert_rel(s->per_rank[0].exposed_comm_s, tar);
  /* the others issued at 0 and waited for rank 0 */
  ck_assert_rel(s->per_rank[1].comm_s, tc + tar);
  ck_assert_rel(s->per_rank[1].wait_s, tc);
  ck_assert_rel(s->by_kind[DT_OP_ALLREDUCE].time_s, tar);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_skew)
{
  /* rank 3 computes 5 ms before issuing; everybody finishes at 5 ms + closed form */
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  for (int32_t r = 0; r < 8; r++) {
    if (r == 3)
      add_compute(t, r, 0, 5e-3);
    add_coll(t, r, 0, DT_OP_ALLREDUCE, g, S8);
  }
  dt_stats *s = replay(&p, t, _i ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW);
  for (int r = 0; r < 8; r++)
    ck_assert_rel(s->per_rank[r].end_s, 5e-3 + ar8());
  ck_assert_rel(s->per_rank[0].wait_s, 5e-3);
  ck_assert_rel(s->per_rank[3].wait_s, 0);
  ck_assert_rel(s->per_rank[0].comm_s, 5e-3 + ar8());
  ck_assert_rel(s->per_rank[3].comm_s, ar8());
  ck_assert_rel(s->by_kind[DT_OP_ALLREDUCE].time_s, ar8());
  dt_stats_free(s);
}
END_TEST

START_TEST(test_iterations)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(2);
  add_compute(t, 0, 0, 1e-3);
  add_op(t, 0, 0, DT_OP_MARK);
  add_compute(t, 0, 0, 2e-3);
  add_op(t, 0, 0, DT_OP_MARK);
  dt_op *d = add_op(t, 1, 0, DT_OP_DELAY);
  d->dur = 4e-3;
  dt_op *f = add_op(t, 1, 0, DT_OP_COMPUTE);
  f->flop = 989e12 * 0.5 * 1e-3; /* 1 ms at peak x efficiency */
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->niterations, 2);
  ck_assert_rel(s->iterations_s[0], 1e-3);
  ck_assert_rel(s->iterations_s[1], 2e-3);
  ck_assert_rel(s->makespan_s, 5e-3);
  ck_assert_rel(s->per_rank[1].compute_s, 1e-3); /* delay is not compute */
  ck_assert_rel(s->per_rank[1].end_s, 5e-3);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_no_marks)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(2);
  add_compute(t, 1, 0, 3e-3);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->niterations, 1);
  ck_assert_rel(s->iterations_s[0], 3e-3);
  ck_assert_rel(s->per_rank[0].end_s, 0);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_by_kind)
{
  /* hand example on 8 GPUs: one all-reduce of 8 MiB over 0-3, two all-gathers of 2 MiB shards over {4,5} and
   * {6,7} issued at the same time, one send of 1 MiB from 0 to 4 after the all-reduce */
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g4 = add_group(t, "g4", 0, 4), ga = add_group(t, "ga", 4, 2), gb = add_group(t, "gb", 6, 2);
  for (int32_t r = 0; r < 4; r++)
    add_coll(t, r, 0, DT_OP_ALLREDUCE, g4, 8 * MIB);
  for (int32_t r = 4; r < 8; r++)
    add_coll(t, r, 0, DT_OP_ALLGATHER, r < 6 ? ga : gb, 2 * MIB);
  add_p2p(t, 0, 0, DT_OP_SEND, 4, MIB);
  add_p2p(t, 4, 0, DT_OP_RECV, 0, MIB);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  double a = alpha8(), B = bw8();
  double t_ar = 6 * a + 1.5 * 8 * MIB / B, t_ag = a + 2.0 * MIB / B, t_send = a + 1.0 * MIB / B;

  const dt_kind_stats *ar = &s->by_kind[DT_OP_ALLREDUCE];
  ck_assert_int_eq(ar->count, 1);
  ck_assert_int_eq(ar->bytes, 8 * MIB);
  ck_assert_rel(ar->time_s, t_ar);
  ck_assert_rel(ar->nccl_bytes, 8.0 * MIB);
  ck_assert_rel(ar->bus_bytes, 8.0 * MIB * 1.5);
  ck_assert_rel(dt_kind_busbw(ar), 12.0 * MIB / t_ar);

  const dt_kind_stats *ag = &s->by_kind[DT_OP_ALLGATHER];
  ck_assert_int_eq(ag->count, 2);
  ck_assert_int_eq(ag->bytes, 4 * MIB);
  ck_assert_rel(ag->time_s, 2 * t_ag);
  ck_assert_rel(ag->nccl_bytes, 2 * 2 * 2.0 * MIB); /* n * bytes per instance */
  ck_assert_rel(ag->bus_bytes, 2 * 2 * 2.0 * MIB * 0.5);
  ck_assert_rel(dt_kind_algbw(ag), 4.0 * MIB / t_ag);

  /* the pair counts once, under send; the recv was posted at t_ag, the send at t_ar (> t_ag) */
  const dt_kind_stats *sd = &s->by_kind[DT_OP_SEND];
  ck_assert(t_ar > t_ag);
  ck_assert_int_eq(sd->count, 1);
  ck_assert_int_eq(sd->bytes, MIB);
  ck_assert_rel(sd->time_s, t_send);
  ck_assert_rel(dt_kind_busbw(sd), 1.0 * MIB / t_send);
  ck_assert_int_eq(s->by_kind[DT_OP_RECV].count, 0);
  ck_assert_rel(s->per_rank[4].wait_s, t_ar - t_ag);
  ck_assert_rel(s->makespan_s, t_ar + t_send);
  dt_stats_free(s);
}
END_TEST

/* ---- batches and deadlock ---- */

static dt_trace *exchange_trace(int batched)
{
  dt_trace *t = dt_trace_new(2);
  for (int32_t r = 0; r < 2; r++) {
    dt_op *a = add_p2p(t, r, 0, DT_OP_SEND, 1 - r, S8);
    dt_op *b = add_p2p(t, r, 0, DT_OP_RECV, 1 - r, S8);
    a->batch = b->batch = batched ? 7 : -1;
  }
  return t;
}

START_TEST(test_batched_exchange)
{
  dt_platform p = node8();
  dt_stats *s = replay(&p, exchange_trace(1), DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->ndeadlock, 0);
  ck_assert_rel(s->makespan_s, alpha8() + (double)S8 / bw8());
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 2);
  dt_stats_free(s);
}
END_TEST

START_TEST(test_batched_collective)
{
  /* a batch holding an all-reduce and a send/recv with the neighbour: both run concurrently, the batch ends
   * with the slower one; the p2p uses GPU links in the same directions as the ring, so check only order */
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  for (int32_t r = 0; r < 8; r++) {
    dt_op *a = add_coll(t, r, 0, DT_OP_ALLREDUCE, g, S8);
    dt_op *b = add_p2p(t, r, 0, r % 2 ? DT_OP_RECV : DT_OP_SEND, r ^ 1, 0);
    a->batch = b->batch = 1;
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->ndeadlock, 0);
  ck_assert_rel(s->makespan_s, ar8());
  for (int r = 0; r < 8; r++)
    ck_assert_rel(s->per_rank[r].end_s, ar8());
  dt_stats_free(s);
}
END_TEST

START_TEST(test_unbatched_deadlock)
{
  /* without a batch both ranks block in their send: reported, quietly, and the run returns */
  dt_platform p = node8();
  dt_trace *t = exchange_trace(0);
  dt_error err;
  ck_assert(dt_trace_validate(t, &err) == DT_OK);
  char path[] = "/tmp/check_replay_outXXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  fflush(stdout);
  fflush(stderr);
  int so = dup(1), se = dup(2);
  dup2(fd, 1);
  dup2(fd, 2);
  dt_replay_opts o;
  test_opts(&o, DT_FIDELITY_FLOW);
  dt_stats *s = NULL;
  int rc = dt_replay_run(&p, t, &o, &s, &err);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(so);
  close(se);
  struct stat st;
  ck_assert(fstat(fd, &st) == 0);
  close(fd);
  unlink(path);
  ck_assert_int_eq(rc, DT_OK);
  ck_assert_msg(st.st_size == 0, "the replay printed %lld bytes during a deadlock", (long long)st.st_size);
  ck_assert_int_eq(s->ndeadlock, 2);
  ck_assert_str_eq(s->deadlock[0], "rank 0 s0 op 0 (send peer=1 bytes=67108864 tag=0)");
  ck_assert_str_eq(s->deadlock[1], "rank 1 s0 op 0 (send peer=0 bytes=67108864 tag=0)");
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 0);
  ck_assert_rel(s->makespan_s, 0);
  dt_stats_free(s);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_deadlock_after_progress)
{
  /* rank 0 computes, then waits in an all-reduce rank 1 never issues (rank 1 waits for rank 0's send) */
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(2);
  int32_t g = add_group(t, "pair", 0, 2);
  add_compute(t, 0, 0, 1e-3);
  add_p2p(t, 0, 0, DT_OP_RECV, 1, 8);
  add_coll(t, 0, 0, DT_OP_ALLREDUCE, g, 8);
  add_coll(t, 1, 0, DT_OP_ALLREDUCE, g, 8);
  add_p2p(t, 1, 0, DT_OP_SEND, 0, 8);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->ndeadlock, 2);
  ck_assert_str_eq(s->deadlock[0], "rank 0 s0 op 1 (recv peer=1 bytes=8 tag=0)");
  ck_assert_str_eq(s->deadlock[1], "rank 1 s0 op 0 (allreduce group=pair bytes=8)");
  ck_assert_rel(s->makespan_s, 1e-3);
  ck_assert_rel(s->per_rank[0].compute_s, 1e-3);
  dt_stats_free(s);
}
END_TEST

/* ---- inputs ---- */

START_TEST(test_too_many_ranks)
{
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(9);
  add_compute(t, 8, 0, 1e-3);
  dt_error err;
  ck_assert(dt_trace_validate(t, &err) == DT_OK);
  dt_stats *s = NULL;
  ck_assert_int_eq(dt_replay_run(&p, t, NULL, &s, &err), DT_ERR);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(err.msg, "9 ranks") && strstr(err.msg, "8 GPUs"), "%s", err.msg);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_placement_replay)
{
  /* rank 0 on node 1 and rank 1 on node 0: their send crosses the switch instead of NVLink */
  dt_platform p = multi_node(2, 2, 1);
  p.topology = DT_NET_SINGLE_SWITCH;
  dt_trace *t = dt_trace_new(2);
  add_p2p(t, 0, 0, DT_OP_SEND, 1, 0);
  add_p2p(t, 1, 0, DT_OP_RECV, 0, 0);
  dt_error err;
  ck_assert(dt_trace_validate(t, &err) == DT_OK);
  int32_t place[2] = {2, 0};
  dt_replay_opts o;
  test_opts(&o, DT_FIDELITY_FLOW);
  o.placement = place;
  dt_stats *s = NULL;
  ck_assert_int_eq(dt_replay_run(&p, t, &o, &s, &err), DT_OK);
  ck_assert_rel(s->makespan_s, 2 * p.nic_latency + 2 * p.link_latency);
  dt_stats_free(s);
  dt_trace_free(t);
}
END_TEST

static char *write_tmp(const char *text)
{
  static char path[64];
  strcpy(path, "/tmp/check_replay_placeXXXXXX");
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  close(fd);
  return path;
}

START_TEST(test_placement_file)
{
  dt_platform p = multi_node(2, 4, 1);
  p.topology = DT_NET_SINGLE_SWITCH;
  char *path = write_tmp("# rank node gpu\n0 1 3   # rank 0 on the last GPU\n\n3 0 0\n");
  int32_t *map = NULL;
  dt_error err;
  ck_assert_msg(dt_placement_load(path, &p, 5, &map, &err) == DT_OK, "%s", err.msg);
  int32_t want[5] = {7, 1, 2, 0, 4};
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(map[i], want[i]);
  free(map);
  unlink(path);
}
END_TEST

static void placement_error(const char *text, int32_t nranks, long line, const char *needle)
{
  dt_platform p = multi_node(2, 4, 1);
  p.topology = DT_NET_SINGLE_SWITCH;
  char *path = write_tmp(text);
  int32_t *map = NULL;
  dt_error err;
  ck_assert_int_eq(dt_placement_load(path, &p, nranks, &map, &err), DT_ERR);
  ck_assert_ptr_null(map);
  ck_assert_str_eq(err.file, path);
  ck_assert_int_eq(err.line, line);
  ck_assert_msg(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
  unlink(path);
}

START_TEST(test_placement_errors)
{
  placement_error("0 0\n", 4, 1, "expected 'rank node gpu'");
  placement_error("# c\n0 0 x\n", 4, 2, "expected 'rank node gpu'");
  placement_error("0 0 1 2\n", 4, 1, "expected 'rank node gpu'");
  placement_error("0 0 -1\n", 4, 1, "expected 'rank node gpu'");
  placement_error("4 0 0\n", 4, 1, "rank 4 out of range");
  placement_error("0 2 0\n", 4, 1, "node 2 out of range");
  placement_error("0 0 4\n", 4, 1, "gpu 4 out of range");
  placement_error("0 1 0\n0 1 1\n", 4, 2, "rank 0 placed twice");
  placement_error("0 1 0\n1 1 0\n", 4, 2, "GPU 4 (node 1, gpu 0) used twice");
  placement_error("\n\n0 0 2\n", 4, 3, "used twice"); /* rank 2 keeps its default GPU 2 */
  placement_error("# nothing\n", 9, 0, "rank 8 is not listed");

  int32_t *map = NULL;
  dt_error err;
  dt_platform p = node8();
  ck_assert_int_eq(dt_placement_load("/nonexistent/place.txt", &p, 2, &map, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "cannot open"), "%s", err.msg);
}
END_TEST

/* ---- template ranks and bounded live state ---- */

/* 8 ranks on one node, `iters` times on s0: compute 10 us, an all-reduce of 1 MiB on the rank's pair ({0,1},
 * {2,3}, ...), a ring exchange of 64 KiB (send to r+1, recv from r-1, one batch), a mark; on s1 an all-gather
 * of 64 KiB over all 8 after that compute. With `templates`, ranks 1-7 run rank 0's ops (pair groups mapped),
 * otherwise each rank owns the same program. */
static dt_trace *tpl_program(int templates, int iters)
{
  dt_trace *t = dt_trace_new(8);
  int32_t pair[4];
  for (int32_t i = 0; i < 4; i++) {
    char name[8];
    snprintf(name, sizeof name, "p%d", (int)i);
    pair[i] = add_group(t, name, 2 * i, 2);
  }
  int32_t all = add_group(t, "all", 0, 8);
  for (int32_t r = 0; r < (templates ? 1 : 8); r++) {
    dt_trace_stream(t, r, 0, 1);
    dt_trace_stream(t, r, 1, 1);
    for (int it = 0; it < iters; it++) {
      add_compute(t, r, 0, 10e-6);
      add_coll(t, r, 0, DT_OP_ALLREDUCE, pair[r / 2], MIB);
      add_p2p(t, r, 0, DT_OP_SEND, (r + 1) % 8, 64 * 1024)->batch = it;
      add_p2p(t, r, 0, DT_OP_RECV, (r + 7) % 8, 64 * 1024)->batch = it;
      add_op(t, r, 0, DT_OP_MARK);
      add_dep(add_coll(t, r, 1, DT_OP_ALLGATHER, all, 64 * 1024), 0, 5 * it);
    }
  }
  for (int32_t r = 1; templates && r < 8; r++) {
    int32_t map[5] = {pair[r / 2], -1, -1, -1, all};
    dt_error err;
    ck_assert_msg(dt_trace_set_template(t, r, 0, map, &err) == DT_OK, "%s", err.msg);
  }
  return t;
}

typedef struct digest {
  double makespan;
  size_t niter;
  double iter[64];
  dt_rank_stats per_rank[8];
  dt_kind_stats by_kind[DT_OP_COUNT];
  size_t ndeadlock;
} digest;

/* Replays tpl_program in a child process (SimGrid runs once per process) and returns its statistics. */
static void replay_in_child(int templates, int iters, digest *d)
{
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    dt_platform p = node8();
    dt_stats *s = replay(&p, tpl_program(templates, iters), DT_FIDELITY_FLOW);
    digest x;
    memset(&x, 0, sizeof x);
    x.makespan = s->makespan_s;
    x.niter = s->niterations;
    for (size_t i = 0; i < s->niterations && i < 64; i++)
      x.iter[i] = s->iterations_s[i];
    memcpy(x.per_rank, s->per_rank, sizeof x.per_rank);
    memcpy(x.by_kind, s->by_kind, sizeof x.by_kind);
    x.ndeadlock = s->ndeadlock;
    dt_stats_free(s);
    ssize_t w = write(fds[1], &x, sizeof x);
    _exit(w == (ssize_t)sizeof x ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  while (got < sizeof *d) {
    ssize_t n = read(fds[0], (char *)d + got, sizeof *d - got);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ck_assert_msg(got == sizeof *d && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the replay in the child failed");
}

START_TEST(test_template_same_stats)
{
  /* template users share rank 0's op array; the simulation and its statistics must not notice */
  digest a, b;
  replay_in_child(0, 20, &a);
  replay_in_child(1, 20, &b);
  ck_assert_int_eq(a.ndeadlock, 0);
  ck_assert_int_eq(b.ndeadlock, 0);
  ck_assert_uint_eq(a.niter, 20);
  ck_assert_int_eq(a.by_kind[DT_OP_ALLREDUCE].count, 20 * 4); /* hand count: 4 pairs per iteration */
  ck_assert_int_eq(a.by_kind[DT_OP_ALLGATHER].count, 20);
  ck_assert_int_eq(a.by_kind[DT_OP_SEND].count, 20 * 8);
  ck_assert(a.makespan == b.makespan);
  ck_assert_uint_eq(a.niter, b.niter);
  for (size_t i = 0; i < a.niter; i++)
    ck_assert(a.iter[i] == b.iter[i]);
  for (int r = 0; r < 8; r++) {
    ck_assert_msg(a.per_rank[r].compute_s == b.per_rank[r].compute_s, "rank %d compute", r);
    ck_assert_msg(a.per_rank[r].comm_s == b.per_rank[r].comm_s, "rank %d comm", r);
    ck_assert_msg(a.per_rank[r].exposed_comm_s == b.per_rank[r].exposed_comm_s, "rank %d exposed", r);
    ck_assert_msg(a.per_rank[r].wait_s == b.per_rank[r].wait_s, "rank %d wait", r);
    ck_assert_msg(a.per_rank[r].end_s == b.per_rank[r].end_s, "rank %d end", r);
  }
  for (int k = 0; k < DT_OP_COUNT; k++) {
    ck_assert_uint_eq(a.by_kind[k].count, b.by_kind[k].count);
    ck_assert_uint_eq(a.by_kind[k].bytes, b.by_kind[k].bytes);
    ck_assert(a.by_kind[k].time_s == b.by_kind[k].time_s);
    ck_assert(a.by_kind[k].nccl_bytes == b.by_kind[k].nccl_bytes);
    ck_assert(a.by_kind[k].bus_bytes == b.by_kind[k].bus_bytes);
  }
}
END_TEST

START_TEST(test_many_instances_bounded)
{
  /* 1,200 all-reduces over 8 ranks in series, each followed by a ring exchange: 1,200 instances and 9,600
   * pairs complete, yet at most two instances (a member may arrive at the next one while the last member
   * finishes the previous) and two exchanges' pairs per rank are ever live */
  const int iters = 1200;
  const uint64_t S = 8 * 1024;
  dt_platform p = node8();
  dt_trace *t = dt_trace_new(8);
  int32_t all = add_group(t, "all", 0, 8);
  for (int it = 0; it < iters; it++) {
    add_coll(t, 0, 0, DT_OP_ALLREDUCE, all, S);
    add_p2p(t, 0, 0, DT_OP_SEND, 1, 4096)->batch = it;
    add_p2p(t, 0, 0, DT_OP_RECV, 7, 4096)->batch = it;
  }
  dt_error err;
  for (int32_t r = 1; r < 8; r++)
    ck_assert(dt_trace_set_template(t, r, 0, NULL, &err) == DT_OK);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW);
  ck_assert_int_eq(s->ndeadlock, 0);
  ck_assert_int_eq(s->by_kind[DT_OP_ALLREDUCE].count, iters);
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 8 * iters);
  /* every member arrives together (the ring exchange is symmetric): each instance takes the closed form */
  ck_assert_rel(s->by_kind[DT_OP_ALLREDUCE].time_s, iters * allreduce_form(8, (double)S));
  ck_assert_uint_le(s->peak_live_instances, 2);
  ck_assert_uint_le(s->peak_live_pairs, 2 * 8);
  ck_assert_uint_ge(s->peak_live_pairs, 8); /* one exchange's 8 pairs are live together */
  dt_stats_free(s);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"allreduce_flow", test_allreduce_flow, 1},
      {"allreduce_step", test_allreduce_step, 1},
      {"allgather_flow", test_allgather_flow, 1},
      {"allgather_step", test_allgather_step, 1},
      {"reducescatter_flow", test_reducescatter_flow, 1},
      {"reducescatter_step", test_reducescatter_step, 1},
      {"broadcast", test_broadcast, 2},
      {"reduce", test_reduce, 2},
      {"alltoall", test_alltoall, 2},
      {"barrier", test_barrier, 2},
      {"other", test_other_is_allreduce, 1},
      {"alltoallv", test_alltoallv_splits, 1},
      {"mixed_ring", test_mixed_ring, 2},
      {"single_member", test_single_member, 1},
      {"oversubscription", test_oversubscription, 2},
      {"shared_nic", test_shared_nic, 1},
      {"route_latency", test_route_latency, 2},
      {"overlap", test_overlap, 1},
      {"overlap_serialised", test_overlap_serialised, 1},
      {"skew", test_skew, 2},
      {"iterations", test_iterations, 1},
      {"no_marks", test_no_marks, 1},
      {"by_kind", test_by_kind, 1},
      {"batched_exchange", test_batched_exchange, 1},
      {"batched_collective", test_batched_collective, 1},
      {"unbatched_deadlock", test_unbatched_deadlock, 1},
      {"deadlock_after_progress", test_deadlock_after_progress, 1},
      {"too_many_ranks", test_too_many_ranks, 1},
      {"placement_replay", test_placement_replay, 1},
      {"placement_file", test_placement_file, 1},
      {"placement_errors", test_placement_errors, 1},
      {"template_same_stats", test_template_same_stats, 1},
      {"many_instances_bounded", test_many_instances_bounded, 1},
  };
  return dt_test_run(dt_test_suite("replay", cases, sizeof cases / sizeof cases[0], 60));
}
