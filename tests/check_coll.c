/* Check suite for the collective algorithms (replay/dt_coll_*.c): the contention-free closed forms of
 * docs/replay.md for every algorithm at both fidelities with the NCCL model's protocol costs, channels over
 * NICs (a 2 x 8 ring with 8 NICs has 8x the inter-node bandwidth of 1 NIC), `auto` switching from a
 * latency-bound to a bandwidth-bound choice and the crossover moving with latency, a heterogeneous group,
 * PXN, the overlap tax, and the `nccl:` YAML keys. Expected values come from the formulas, never from the
 * replay. SimGrid runs once per process: every test runs in its own forked process (Check's default). */
#include "dt_test.h"
#include "common/dt_util.h"
#include "platforms/dt_platform.h"
#include "replay/dt_linkload.h"
#include "replay/dt_replay.h"
#include "replay/dt_stats.h"
#include "traces/dt_trace.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REL 1e-6
#define MIB 1048576ULL
#define GIB (1024 * MIB)

static const uint64_t S8 = 64 * MIB;

#define ck_assert_rel(got, want)                                                                                       \
  do {                                                                                                                 \
    double g_ = (got), w_ = (want);                                                                                    \
    ck_assert_msg(fabs(g_ - w_) <= REL * fabs(w_) + 1e-15, "%s = %.12g, expected %.12g (rel err %.3g)", #got, g_, w_,  \
                  w_ != 0 ? fabs(g_ - w_) / fabs(w_) : fabs(g_));                                                      \
  } while (0)

/* ---- platforms: the NCCL model with its defaults ---- */

static dt_platform base_platform(int nodes, int gpus_per_node)
{
  dt_platform p = dt_test_platform(nodes, gpus_per_node);
  p.nccl = 1;
  dt_platform_nccl_defaults(&p);
  return p;
}

/* nodes x gpus_per_node on a single switch, `nics` NICs of 50 GB/s per node */
static dt_platform multi_node(int nodes, int gpus_per_node, int nics)
{
  dt_platform p = base_platform(nodes, gpus_per_node);
  p.nics_per_node = nics;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1.5e-6;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 400e9; /* the NICs are the bottleneck */
  p.link_latency = 3e-7;
  return p;
}

static double net_alpha(const dt_platform *p)
{
  return 2 * p->nic_latency + 2 * p->link_latency;
}

/* ---- traces ---- */

static int32_t add_group_list(dt_trace *t, const char *name, const int32_t *ranks, int32_t n)
{
  dt_error err;
  int g = dt_trace_add_group(t, name, ranks, (size_t)n, 0, 0, &err);
  ck_assert_msg(g >= 0, "add_group: %s", err.msg);
  return g;
}

static int32_t add_group(dt_trace *t, const char *name, int32_t first, int32_t n)
{
  int32_t ranks[256];
  for (int32_t i = 0; i < n; i++)
    ranks[i] = first + i;
  return add_group_list(t, name, ranks, n);
}

static dt_op *add_op(dt_trace *t, int32_t rank, int32_t stream, dt_op_kind kind)
{
  dt_trace_stream(t, rank, stream, 1);
  dt_op *op = dt_trace_append(t, rank, stream);
  op->kind = kind;
  return op;
}

static dt_op *add_coll(dt_trace *t, int32_t rank, dt_op_kind kind, int32_t group, uint64_t bytes)
{
  dt_op *op = add_op(t, rank, 0, kind);
  op->group = group;
  op->bytes = bytes;
  return op;
}

/* --exact for the replays of this (forked) test: test_shortcut_exact sets it */
static int exact_replay;

static dt_stats *replay(const dt_platform *p, dt_trace *t, dt_fidelity fid, dt_algo algo, int proto)
{
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  o.fidelity = fid;
  o.algo = algo;
  o.proto = proto;
  o.exact = exact_replay;
#if defined(__SANITIZE_ADDRESS__)
  static char thread_factory[] = "--cfg=contexts/factory:thread";
  static char *args[] = {thread_factory};
  o.simgrid_argc = 1;
  o.simgrid_argv = args;
#endif
  dt_stats *s = NULL;
  ck_assert_msg(dt_replay_run(p, t, &o, &s, &err) == DT_OK, "replay: %s", err.msg);
  ck_assert_int_eq(s->ndeadlock, 0);
  dt_trace_free(t);
  return s;
}

/* One collective of `kind` over the first n ranks (all of them members); returns its instance time. */
static double one(const dt_platform *p, int32_t n, dt_op_kind kind, uint64_t bytes, dt_fidelity fid, dt_algo algo,
                  int proto)
{
  dt_trace *t = dt_trace_new(n);
  int32_t g = add_group(t, "all", 0, n);
  for (int32_t r = 0; r < n; r++)
    add_coll(t, r, kind, g, bytes);
  dt_stats *s = replay(p, t, fid, algo, proto);
  ck_assert_int_eq(s->by_kind[kind].count, 1);
  double time = s->by_kind[kind].time_s;
  ck_assert_rel(s->makespan_s, time);
  dt_stats_free(s);
  return time;
}

/* Runs fn(arg) in a child process (SimGrid runs once per process) and returns its result. */
static double forked(double (*fn)(void *), void *arg)
{
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    double v = fn(arg);
    ssize_t w = write(fd[1], &v, sizeof v);
    _exit(w == (ssize_t)sizeof v ? 0 : 1);
  }
  close(fd[1]);
  double v = NAN;
  ssize_t got = read(fd[0], &v, sizeof v);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ck_assert_msg(got == (ssize_t)sizeof v && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
  return v;
}

static dt_fidelity fid_of(int i)
{
  return i % 2 ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW;
}

/* ---- closed forms on one NVSwitch node: alpha = 1 us, B = 450 GB/s, per-protocol L, h, e ---- */

/* loop index i: fidelity i % 2, protocol i / 2 */
START_TEST(test_ring_allreduce)
{
  dt_platform p = base_platform(1, 8);
  dt_proto pr = (dt_proto)(_i / 2);
  const dt_proto_model *m = &p.protocols[pr];
  double n = 8, S = (double)S8;
  double want = m->latency + 2 * (n - 1) * (p.intra_latency + m->hop_latency) +
                2 * (n - 1) / n * S / (m->efficiency * p.intra_bandwidth);
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_RING, pr), want);
}
END_TEST

/* all-gather and reduce-scatter rings, Simple, 4 channels (the bytes split over 4 rings of one node) */
START_TEST(test_ring_allgather_reducescatter)
{
  dt_platform p = base_platform(1, 8);
  p.channels = 4;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double n = 8, S = (double)S8, a = p.intra_latency + m->hop_latency;
  int ag = _i / 2;
  double want = ag ? m->latency + (n - 1) * a + (n - 1) * S / p.intra_bandwidth
                   : m->latency + (n - 1) * a + (n - 1) / n * S / p.intra_bandwidth;
  ck_assert_rel(one(&p, 8, ag ? DT_OP_ALLGATHER : DT_OP_REDUCESCATTER, S8, fid_of(_i), DT_ALGO_RING, DT_PROTO_SIMPLE),
                want);
}
END_TEST

/* NCCL's tree on one node is a chain over the 8 members in ring order (both trees of a channel the same chain,
 * each S/(2C)): depth n - 1 = 7 each way. One channel (_i < 4): the head receives both trees' S/2 from member 1
 * and sends nothing, the tail sends and receives nothing, every other member sends and receives 2 x S/2: the
 * busiest port S per phase. Eight channels on 8 NICs (_i >= 4): channel c starts on NIC c's GPU, so each GPU
 * heads one channel and ends one, and carries 2 x S/16 on the 7 others: 7/8 S per phase.
 * T = L + L_tree + 2 (n-1)(alpha + h) + 2 V / (e_proto e_tree B), V = S or 7/8 S */
START_TEST(test_tree_allreduce)
{
  int eight = _i >= 4;
  dt_platform p = eight ? multi_node(1, 8, 8) : base_platform(1, 8);
  if (eight)
    p.channels = 8;
  dt_proto pr = _i % 4 / 2 ? DT_PROTO_LL128 : DT_PROTO_SIMPLE;
  const dt_proto_model *m = &p.protocols[pr];
  const dt_algo_model *am = &p.algorithms[DT_ALGO_TREE];
  double S = (double)S8, V = eight ? 7.0 / 8 * S : S;
  double want = m->latency + am->latency + 2 * 7 * (p.intra_latency + m->hop_latency) +
                2 * V / (m->efficiency * am->efficiency * p.intra_bandwidth);
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_TREE, pr), want);
}
END_TEST

/* NCCL's tree across nodes (a chain in each node, a double binary tree between the nodes' heads), both fidelities;
 * its network hops cost the tree's NET latency h_t (ppn1_net_hop_latency: LL 5, LL128 8.5, Simple 14 us).
 * _i < 2: 2 nodes x 2 GPUs, 2 NICs, 2 channels. Channel 0's chains are GPU 0 -> 1 and 2 -> 3 (heads on NIC 0),
 * channel 1's 1 -> 0 and 3 -> 2. Tree 0: node 1 under node 0, tree 1 the mirror. Up phase, each flow S/4: every
 * GPU sends 2 flows over NVLink (the channel it does not head, both trees) and its NIC one flow each way (its
 * channel's tree in which its node is the child, and the other's): NICs S/4 at 50 GB/s against NVLink S/2 at
 * 450 GB/s, NIC-bound. Per phase: the chain hop, alpha_i + h, the network hop, alpha_n + h_t, and S/4 over the
 * NIC: T = L + L_tree + 2 [(alpha_i + h) + (alpha_n + h_t)] + 2 (S/4) / (e B_n).
 * _i >= 2: 4 nodes x 1 GPU, one NIC each, one channel: tree 0 is 0 <- {1, 2}, 1 <- 3; tree 1 its mirror, 3 <- {2, 1},
 * 2 <- 0; each flow S/2. Up phase: node 0 receives 2 flows (1, 2) and sends 1 (to 2), node 1 sends 2 (to 0 and 3)
 * and receives 1, node 2 sends 2, node 3 receives 2: each member has a flow on a NIC direction shared by 2, S/2 at
 * 25 GB/s. Depth log2 4 = 2 each way:
 * T = L + L_tree + 4 (alpha_n + h_t) + 2 (S/2) / (e B_n / 2)
 * _i >= 4: the 2 x 2 case with LL on nccl.version 2.17.1, whose tuner prices LL's NVLink steps 1.8 times dearer
 * across nodes (ncclTopoTuneModel, v2.9.6-1 to v2.17.1-1): h = 1.8 x 0.6 us. */
START_TEST(test_tree_nodes)
{
  int single = _i >= 2 && _i < 4, old = _i >= 4;
  dt_platform p = single ? multi_node(4, 1, 1) : multi_node(2, 2, 2);
  dt_proto pr = old ? DT_PROTO_LL : DT_PROTO_SIMPLE;
  if (old)
    p.nccl_version = 21701;
  const dt_proto_model *m = &p.protocols[pr];
  double e = m->efficiency * p.algorithms[DT_ALGO_TREE].efficiency, S = (double)S8;
  double fixed = m->latency + p.algorithms[DT_ALGO_TREE].latency, an = net_alpha(&p), ht = m->ppn1_net_hop_latency;
  double h = old ? 1.8 * m->hop_latency : m->hop_latency;
  double want = single ? fixed + 4 * (an + ht) + 2 * (S / 2) / (e * p.nic_bandwidth / 2)
                       : fixed + 2 * ((p.intra_latency + h) + (an + ht)) + 2 * (S / 4) / (e * p.nic_bandwidth);
  ck_assert_rel(one(&p, 4, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_TREE, pr), want);
}
END_TEST

/* NVLS on an NVSwitch that reduces: T = L + 2 (alpha + h) + S/B; busbw 2(n-1)/n S/T above the link rate */
START_TEST(test_nvls_allreduce)
{
  dt_platform p = base_platform(1, 8);
  p.nvls = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)(1024 * MIB);
  double want = m->latency + p.algorithms[DT_ALGO_NVLS].latency + 2 * (p.intra_latency + m->hop_latency) +
                S / p.intra_bandwidth;
  double t = one(&p, 8, DT_OP_ALLREDUCE, 1024 * MIB, fid_of(_i), DT_ALGO_NVLS, DT_PROTO_SIMPLE);
  ck_assert_rel(t, want);
  ck_assert(2.0 * 7 / 8 * S / t > p.intra_bandwidth);
}
END_TEST

/* Pipelined chain broadcast / reduce, 2 channels: T = L + (n-1)(alpha + h) + S/B */
START_TEST(test_chain)
{
  dt_platform p = base_platform(1, 8);
  p.channels = 2;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8;
  double want = m->latency + 7 * (p.intra_latency + m->hop_latency) + S / p.intra_bandwidth;
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "all", 0, 8);
  dt_op_kind kind = _i / 2 ? DT_OP_REDUCE : DT_OP_BROADCAST;
  for (int32_t r = 0; r < 8; r++)
    add_coll(t, r, kind, g, S8)->root = 3;
  dt_stats *s = replay(&p, t, fid_of(_i), DT_ALGO_AUTO, DT_PROTO_SIMPLE);
  ck_assert_rel(s->by_kind[kind].time_s, want);
  dt_stats_free(s);
}
END_TEST

/* Direct all-to-all: n-1 grouped send/recv rounds, each paying its hop, one base latency:
 * T = L + (n-1)(alpha + h) + (n-1)/n S/B */
START_TEST(test_alltoall)
{
  dt_platform p = base_platform(1, 8);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8;
  double want = m->latency + 7 * (p.intra_latency + m->hop_latency) + 7.0 / 8 * S / p.intra_bandwidth;
  ck_assert_rel(one(&p, 8, DT_OP_ALLTOALL, S8, fid_of(_i), DT_ALGO_AUTO, DT_PROTO_SIMPLE), want);
}
END_TEST

/* All-to-all on 2 nodes x 2 GPUs, one NIC per GPU: every member has 1 NVLink peer and 2 network peers, each
 * round paying its hop (network peers cost alpha_n + h_net); each NIC carries 2 x S/4 out and in, the
 * bottleneck: T = L + (alpha_i + h) + 2 (alpha_n + h_net) + (S/2)/(e B_n). loop: LL, Simple */
START_TEST(test_alltoall_nodes)
{
  dt_platform p = multi_node(2, 2, 2);
  dt_proto pr = _i ? DT_PROTO_SIMPLE : DT_PROTO_LL;
  const dt_proto_model *m = &p.protocols[pr];
  double S = (double)S8;
  double want = m->latency + p.intra_latency + m->hop_latency + 2 * (net_alpha(&p) + m->net_hop_latency) +
                (S / 2) / (m->efficiency * p.nic_bandwidth);
  ck_assert_rel(one(&p, 4, DT_OP_ALLTOALL, S8, DT_FIDELITY_FLOW, DT_ALGO_AUTO, pr), want);
}
END_TEST

/* ---- across nodes ---- */

/* Hierarchical on 2 nodes x 4 GPUs, 4 NICs (one per GPU):
 * T = L + 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2(N-1)(an + hn) + 2(N-1)/N (S/m)/Bn */
START_TEST(test_hier_allreduce)
{
  dt_platform p = multi_node(2, 4, 4);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8, mm = 4, N = 2;
  double want = m->latency + 2 * ((mm - 1) * (p.intra_latency + m->hop_latency) + (mm - 1) / mm * S / p.intra_bandwidth) +
                2 * (N - 1) * (net_alpha(&p) + m->net_hop_latency) + 2 * (N - 1) / N * (S / mm) / p.nic_bandwidth;
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_HIER, DT_PROTO_SIMPLE), want);
}
END_TEST

/* CollNet (SHARP) on the same platform: the inter-node stage is up to the switch and back once:
 * T = L + La + 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2 (an + hn) + (S/m)/Bn */
START_TEST(test_collnet_allreduce)
{
  dt_platform p = multi_node(2, 4, 4);
  p.sharp = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8, mm = 4;
  double want = m->latency + p.algorithms[DT_ALGO_COLLNET].latency +
                2 * ((mm - 1) * (p.intra_latency + m->hop_latency) + (mm - 1) / mm * S / p.intra_bandwidth) +
                2 * (net_alpha(&p) + m->net_hop_latency) + (S / mm) / p.nic_bandwidth;
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_COLLNET, DT_PROTO_SIMPLE), want);
}
END_TEST

/* NVLS-tree on 4 nodes x 2 GPUs, 2 NICs: switch pass up, a double binary tree of S/m over the 4 nodes (depth 2,
 * busiest port S/m per phase), switch pass down:
 * T = L + La + 2 (ai + h + S/Bi) + 2 D (an + hn) + 2 (S/m)/Bn */
START_TEST(test_nvls_tree_allreduce)
{
  dt_platform p = multi_node(4, 2, 2);
  p.nvls = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8, mm = 2, D = 2;
  double want = m->latency + p.algorithms[DT_ALGO_NVLS_TREE].latency +
                2 * (p.intra_latency + m->hop_latency + S / p.intra_bandwidth) +
                2 * D * (net_alpha(&p) + m->net_hop_latency) + 2 * (S / mm) / p.nic_bandwidth;
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_NVLS_TREE, DT_PROTO_SIMPLE), want);
}
END_TEST

/* Heterogeneous group: 2 GPUs of node 0 and 4 of node 1 (2 nodes x 4 GPUs, 4 NICs). Rails P = 4; node 0's
 * members hold 2 rails each, so its NICs carry 2 x S/4 ring flows:
 * T = L + 2 [3 (ai + h) + 3/4 S/Bi] + 2 (an + hn) + S/(2 Bn) (node 1's intra stages are the longer ones) */
START_TEST(test_hier_heterogeneous)
{
  dt_platform p = multi_node(2, 4, 4);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = (double)S8;
  double want = m->latency + 2 * (3 * (p.intra_latency + m->hop_latency) + 0.75 * S / p.intra_bandwidth) +
                2 * (net_alpha(&p) + m->net_hop_latency) + S / (2 * p.nic_bandwidth);
  dt_trace *t = dt_trace_new(8);
  int32_t ranks[] = {0, 1, 4, 5, 6, 7};
  int32_t g = add_group_list(t, "hetero", ranks, 6);
  for (int k = 0; k < 6; k++)
    add_coll(t, ranks[k], DT_OP_ALLREDUCE, g, S8);
  dt_stats *s = replay(&p, t, fid_of(_i), DT_ALGO_HIER, DT_PROTO_SIMPLE);
  ck_assert_rel(s->by_kind[DT_OP_ALLREDUCE].time_s, want);
  dt_stats_free(s);
}
END_TEST

/* 2 nodes x 8 GPUs, 8 channels: with 8 NICs each channel's ring crosses between nodes on its own NIC; with 1
 * NIC all 8 share it. The NIC is the bottleneck either way: about 8x the inter-node bandwidth. */
static double ring_2x8(void *arg)
{
  dt_platform p = multi_node(2, 8, *(int *)arg);
  p.channels = 8;
  p.protocols[DT_PROTO_SIMPLE] = (dt_proto_model){0, 0, 0, 1, 0}; /* the bandwidth term alone */
  return one(&p, 16, DT_OP_ALLREDUCE, GIB, DT_FIDELITY_FLOW, DT_ALGO_RING, DT_PROTO_SIMPLE);
}

START_TEST(test_ring_uses_all_nics)
{
  int eight = 8, single = 1;
  double t8 = forked(ring_2x8, &eight), t1 = forked(ring_2x8, &single);
  double ratio = t1 / t8;
  ck_assert_msg(ratio > 7.5 && ratio < 8.5, "1 NIC / 8 NICs time ratio %.3f, expected about 8", ratio);
  /* and the 8-NIC ring is NIC-bound: 2 (n-1)/n S / (8 B_nic) plus latency */
  dt_platform p = multi_node(2, 8, 8);
  double bw_term = 2.0 * 15 / 16 * (double)GIB / (8 * p.nic_bandwidth);
  ck_assert_msg(t8 > bw_term && t8 < 1.05 * bw_term, "t8 %.6g vs bandwidth term %.6g", t8, bw_term);
}
END_TEST

/* A data-parallel group of TP 4 on 8-GPU nodes with 8 NICs: GPUs 0 and 4 of 2 nodes (ranks 0, 4, 8, 12), 8
 * channels, ring all-gather of S per rank, Simple with no latency terms, no PXN, NICs the bottleneck (50 GB/s
 * against 450 GB/s NVLink). Each channel's ring enters a node on one of the two GPUs and leaves it from the
 * other, so the channels that start on GPU 0 all receive on NIC 0 and send on NIC 4. Alternated evenly, each NIC
 * carries 4 of the 8 channels' S/8 flows in each direction, 3 steps of (S/8) / (B/4): T = 12/8 S/B (plus
 * microseconds of latency). 5 channels on one NIC (the rings' old rule: rail c, else member c mod 2) give
 * 15/8 S/B. */
static double ring_tp4_dp(void *arg)
{
  (void)arg;
  dt_platform p = multi_node(2, 8, 8);
  p.channels = 8;
  p.pxn = 0;
  p.protocols[DT_PROTO_SIMPLE] = (dt_proto_model){0, 0, 0, 1, 0}; /* the bandwidth term alone */
  dt_trace *t = dt_trace_new(16);
  int32_t members[4] = {0, 4, 8, 12};
  int32_t g = add_group_list(t, "dp", members, 4);
  for (int32_t i = 0; i < 4; i++)
    add_coll(t, members[i], DT_OP_ALLGATHER, g, GIB);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_RING, DT_PROTO_SIMPLE);
  double time = s->by_kind[DT_OP_ALLGATHER].time_s;
  dt_stats_free(s);
  return time;
}

START_TEST(test_ring_channels_balance_nics)
{
  double got = forked(ring_tp4_dp, NULL);
  dt_platform p = multi_node(2, 8, 8);
  double want = 12.0 / 8 * (double)GIB / p.nic_bandwidth;
  ck_assert_msg(fabs(got - want) <= 1e-3 * want, "TP 4 data-parallel ring all-gather %.6g s, want %.6g s (12/8 S/B; "
                "15/8 S/B = %.6g s is 5 channels on one NIC)", got, want, 15.0 / 8 * (double)GIB / p.nic_bandwidth);
}
END_TEST

/* PXN: 2 nodes x 2 GPUs, 2 NICs, rail-optimized 2-level fat-tree (radix 4: a rail's leaf has 2 down-ports, 2
 * up). Channel 0's ring is 0 1 | 2 3: GPU 1 (rail 1) sends to GPU 2 (node 1, rail 0), and GPU 3 (rail 1) to
 * GPU 0. Without PXN the hop crosses rails through a spine: alpha = 2 nic + 4 cables. With PXN it goes over
 * NVLink to GPU 0 (rail 0), then within rail 0's leaf: alpha = nvlink + 2 nic + 2 cables. One channel,
 * zero-byte barrier, 2(n-1) = 6 steps of which NCCL counts 2(N-1) = 2 as network steps:
 * T = L + 4 h + 2 h_net + alpha_1 + 5 alpha_mean, where the first step's latency is the slowest hop's (the
 * relay's legs run at once: 2 nic + 2 cables) and the others the mean of the ring's 4 hops (2 NVLink, 2 across
 * the nodes, relayed or not). */
START_TEST(test_pxn_route)
{
  dt_platform p = multi_node(2, 2, 2);
  p.topology = DT_NET_FAT_TREE;
  p.levels = 2;
  p.radix = 4;
  p.wiring = DT_WIRING_RAIL;
  p.channels = 1;
  p.pxn = _i;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double cross = 2 * p.nic_latency + 4 * p.link_latency;
  double relayed = p.intra_latency + 2 * p.nic_latency + 2 * p.link_latency;
  double across = _i ? relayed : cross;
  double mean = (2 * p.intra_latency + 2 * across) / 4;
  double first = _i ? 2 * p.nic_latency + 2 * p.link_latency : cross;
  double want = m->latency + 4 * m->hop_latency + 2 * m->net_hop_latency + first + 5 * mean;
  dt_trace *t = dt_trace_new(4);
  int32_t g = add_group(t, "all", 0, 4);
  for (int32_t r = 0; r < 4; r++)
    add_coll(t, r, DT_OP_BARRIER, g, 0);
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_RING, DT_PROTO_SIMPLE);
  ck_assert_rel(s->by_kind[DT_OP_BARRIER].time_s, want);
  ck_assert(fabs(relayed - cross) > 1e-7);
  dt_stats_free(s);
}
END_TEST

/* A ring mixing NVLink and network hops: all-gather on 2 nodes x 4 GPUs, 4 NICs (one per GPU), 4 channels, LL.
 * Channel c's ring enters both nodes on GPU c (rail c); each node's last member (rail c - 1) reaches the other
 * node through the PXN relay GPU c of its own node: 6 NVLink hops (alpha_i) and 2 relayed hops
 * (alpha_i + alpha_n) per ring. Each NIC carries one channel's relayed flow, 7 steps of S/4 bytes, the
 * bottleneck. Flow (NCCL pipelines the ring): the bottleneck hop's own latency, then the mean hop latency for
 * the 6 other steps, NCCL's split of the per-step costs (N - 1 = 1 network step, 6 NVLink steps):
 *   T_flow = L + alpha_n + 6 (6 alpha_i + 2 (alpha_i + alpha_n)) / 8 + 6 h + h_net + 7 (S/4) / (e B_n)
 * Step (the teaching model): every step waits for its slowest hop, the relayed NIC leg, and the largest h:
 *   T_step = L + 7 (alpha_n + h_net + (S/4) / (e B_n)) */
START_TEST(test_ring_mixed)
{
  dt_platform p = multi_node(2, 4, 4);
  const dt_proto_model *m = &p.protocols[DT_PROTO_LL];
  double S = 4.0 * MIB, ai = p.intra_latency, an = net_alpha(&p), e = m->efficiency, Bn = p.nic_bandwidth;
  double want = _i ? m->latency + 7 * (an + m->net_hop_latency + (S / 4) / (e * Bn))
                   : m->latency + an + 6 * (6 * ai + 2 * (ai + an)) / 8 + 6 * fmax(m->hop_latency, 1e-6) +
                         m->net_hop_latency + 7 * (S / 4) / (e * Bn); /* 1 us: the Intel host's floor, below */
  ck_assert_rel(one(&p, 8, DT_OP_ALLGATHER, 4 * MIB, fid_of(_i), DT_ALGO_RING, DT_PROTO_LL), want);
}
END_TEST

/* NCCL's per-step network overhead floor on a multi-node ring (getNetOverhead and ncclTopoTuneModel,
 * src/graph/tuning.cc, 2.18 on): every NVLink step of a ring that spans nodes costs at least the host's network
 * post overhead, 1 us on an Intel host, 2 us on an AMD one, 3 times that with Simple. The ring of test_ring_mixed
 * (2 nodes x 4 GPUs, 4 NICs, PXN), LL with net_hop_latency 0.5 us so that the floor shows at step fidelity too:
 *   flow: T = L + a_n + 6 (6 a_i + 2 (a_i + a_n)) / 8 + 6 max(h, f) + h_net + 7 (S/4) / (e B_n)
 *   step: T = L + 7 (a_n + max(h_net, h, f) + (S/4) / (e B_n))
 * loop / 2: 0 Intel (f = 1 us), 1 AMD (2 us), 2 AMD with nccl.version 2.17.1 (no floor, but LL's NVLink steps
 * x 1.8 across nodes, as NCCL's tuner up to 2.17: h = 1.08 us), 3 Simple on AMD (6 us) */
START_TEST(test_net_overhead_floor)
{
  dt_platform p = multi_node(2, 4, 4);
  int v = _i / 2;
  dt_proto pr = v == 3 ? DT_PROTO_SIMPLE : DT_PROTO_LL;
  p.host_cpu = v == 0 ? DT_CPU_INTEL : DT_CPU_AMD;
  if (v == 2)
    p.nccl_version = 21701;
  p.protocols[DT_PROTO_LL].net_hop_latency = 0.5e-6;
  const dt_proto_model *m = &p.protocols[pr];
  double f = v == 0 ? 1e-6 : v == 1 ? 2e-6 : v == 2 ? 0 : 6e-6;
  double S = 4.0 * MIB, ai = p.intra_latency, an = net_alpha(&p), e = m->efficiency, Bn = p.nic_bandwidth;
  double h = v == 2 ? 1.8 * m->hop_latency : fmax(m->hop_latency, f);
  double want = _i % 2 ? m->latency + 7 * (an + fmax(m->net_hop_latency, h) + (S / 4) / (e * Bn))
                       : m->latency + an + 6 * (6 * ai + 2 * (ai + an)) / 8 + 6 * h + m->net_hop_latency +
                             7 * (S / 4) / (e * Bn);
  ck_assert_rel(one(&p, 8, DT_OP_ALLGATHER, 4 * MIB, fid_of(_i), DT_ALGO_RING, pr), want);
}
END_TEST

/* One rank per node (NCCL >= 2.23, ncclTopoTuneModel: "with ppn=1 latencies are fully exposed, use the Tree
 * network latency"): every network step costs the protocol's ppn1_net_hop_latency (LL 5 us) instead of its
 * net_hop_latency (LL 2.7 us). Ring all-gather over 4 nodes x 1 GPU, 1 NIC: 3 steps, all across the network:
 *   T = L + 3 (a_n + h_net1) + 3 S / (e B_n)   (both fidelities; nccl.version 2.22: h_net instead) */
START_TEST(test_ppn1_net_latency)
{
  dt_platform p = multi_node(4, 1, 1);
  if (_i / 2)
    p.nccl_version = 22203;
  const dt_proto_model *m = &p.protocols[DT_PROTO_LL];
  double hn = _i / 2 ? m->net_hop_latency : m->ppn1_net_hop_latency;
  ck_assert(m->ppn1_net_hop_latency == 5e-6); /* NCCL's tree NET latency for LL, the default */
  double S = (double)MIB;
  double want = m->latency + 3 * (net_alpha(&p) + hn) + 3 * S / (m->efficiency * p.nic_bandwidth);
  ck_assert_rel(one(&p, 4, DT_OP_ALLGATHER, MIB, fid_of(_i), DT_ALGO_RING, DT_PROTO_LL), want);
}
END_TEST

/* PAT (dt_coll_pat.c) on one GPU per node, 1 NIC each, with NCCL's PAT cost model (ncclTopoTuneModel,
 * src/graph/tuning.cc, 2.23-2.30.7: baseLat 8 us + log2(nNodes) x interLat / 3.5 + 2.8 us x nRanks, bus
 * bandwidth x 0.75; one rank per node: interLat is the tree's NET latency, Simple 14 us):
 *   T = L_pat + 2.8 us n + K (a_n + h_net1 / 3.5) + (n - 1) shard / (e_pat B_n),  K = ceil(log2 n)
 * loop / 2: 0 all-gather on 4 nodes (K 2, shards 1 + 2), 1 reduce-scatter on 5 nodes (K 3, shards 1 + 2 + 1,
 * shard S/5). Both fidelities. */
START_TEST(test_pat)
{
  int rs = _i / 2;
  int32_t n = rs ? 5 : 4;
  dt_platform p = multi_node(n, 1, 1);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  const dt_algo_model *pa = &p.algorithms[DT_ALGO_PAT];
  ck_assert(pa->latency == 8e-6 && pa->efficiency == 0.75 && m->ppn1_net_hop_latency == 14e-6);
  double S = (double)S8, K = rs ? 3 : 2, shard = rs ? S / n : S;
  double want = pa->latency + 2.8e-6 * n + K * (net_alpha(&p) + m->ppn1_net_hop_latency / 3.5) +
                (n - 1) * shard / (m->efficiency * pa->efficiency * p.nic_bandwidth);
  ck_assert_rel(one(&p, n, rs ? DT_OP_REDUCESCATTER : DT_OP_ALLGATHER, S8, fid_of(_i), DT_ALGO_PAT, DT_PROTO_SIMPLE),
                want);
}
END_TEST

/* PAT across nodes of several members with NVLS inside them (NCCL >= 2.31, "multi-RPN PAT", src/tuning/pat.cc at
 * v2.32.3-1: needs the NVLS transport and as many local ranks per node as NVLS heads): the exchange of test_pat between
 * the N nodes, per local index, and one NVLS pass inside each node (member k to k+1 in the node), after the exchange
 * for an all-gather, before it for a reduce-scatter. NCCL's PAT costs as above, with the network latency of PAT
 * itself (Simple's net_hop_latency, 14 us; not the one-rank-per-node term) and every per-step latency / 3.5:
 *   all-gather, 4 nodes x 2 (K 2, shards 1 + 2):
 *     T = L_pat + 2.8 us n + K (a_n + h_net / 3.5) + (N - 1) s / (e B_n) + a_i + h / 3.5 + (m - 1) N s / (e B_i)
 *   reduce-scatter, 3 nodes x 2 (K 2, shards 1 + 1, s = S/n):
 *     T = L_pat + 2.8 us n + a_i + h / 3.5 + S / (e B_i) + K (a_n + h_net / 3.5) + (N - 1) s / (e B_n)
 * (e = e_Simple e_pat). loop / 2: 0 all-gather, 1 reduce-scatter (both fidelities); 2 auto never picks it (NCCL's
 * tuner prices multi-RPN PAT at FLT_MAX / 2: opt-in only); 3 nccl.version 2.30 refuses --algo pat here. */
static double pat_nvls_old(void *arg)
{
  (void)arg;
  dt_platform p = multi_node(4, 2, 2);
  p.nvls = 1;
  p.nccl_version = 23007;
  dt_trace *t = dt_trace_new(8);
  int32_t g = add_group(t, "dp", 0, 8);
  for (int32_t r = 0; r < 8; r++)
    add_coll(t, r, DT_OP_ALLGATHER, g, MIB);
  dt_error err;
  dt_error_clear(&err);
  ck_assert(dt_trace_validate(t, &err) == DT_OK);
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  o.algo = DT_ALGO_PAT;
#if defined(__SANITIZE_ADDRESS__)
  static char thread_factory[] = "--cfg=contexts/factory:thread";
  static char *args[] = {thread_factory};
  o.simgrid_argc = 1;
  o.simgrid_argv = args;
#endif
  dt_stats *s = NULL;
  int rc = dt_replay_run(&p, t, &o, &s, &err);
  if (rc != DT_OK)
    ck_assert_msg(strstr(err.msg, "needs one member per node (NCCL's PAT before 2.31)") != NULL, "error: %s", err.msg);
  dt_stats_free(s);
  dt_trace_free(t);
  return rc != DT_OK ? -1 : 1;
}

START_TEST(test_pat_nvls)
{
  int rs = _i / 2 == 1;
  int32_t N = rs ? 3 : 4, m = 2, n = N * m;
  dt_platform p = multi_node(N, m, m);
  p.nvls = 1;
  ck_assert(p.intra_kind == DT_INTRA_NVSWITCH && p.nccl_version >= 23100);
  if (_i / 2 == 3) {
    ck_assert(forked(pat_nvls_old, NULL) < 0);
    return;
  }
  if (_i / 2 == 2) {
    dt_trace *t = dt_trace_new(n);
    int32_t g = add_group(t, "all", 0, n);
    for (int32_t r = 0; r < n; r++)
      add_coll(t, r, DT_OP_ALLGATHER, g, 1024);
    dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_AUTO, -1);
    int found = 0;
    for (size_t k = 0; k < s->nnotes; k++)
      if (strncmp(s->notes[k], "allgather: ", 11) == 0) {
        found = 1;
        ck_assert_msg(strstr(s->notes[k], "pat/") == NULL, "auto picked PAT: %s", s->notes[k]);
      }
    ck_assert(found);
    dt_stats_free(s);
    return;
  }
  const dt_proto_model *pm = &p.protocols[DT_PROTO_SIMPLE];
  const dt_algo_model *pa = &p.algorithms[DT_ALGO_PAT];
  double e = pm->efficiency * pa->efficiency, K = 2, S = (double)S8, shard = rs ? S / n : S;
  double net = K * (net_alpha(&p) + pm->net_hop_latency / 3.5) + (N - 1) * shard / (e * p.nic_bandwidth);
  double pass =
      p.intra_latency + pm->hop_latency / 3.5 + (rs ? S : (double)(m - 1) * N * shard) / (e * p.intra_bandwidth);
  double want = pa->latency + 2.8e-6 * n + net + pass;
  ck_assert_rel(one(&p, n, rs ? DT_OP_REDUCESCATTER : DT_OP_ALLGATHER, S8, fid_of(_i), DT_ALGO_PAT, DT_PROTO_SIMPLE),
                want);
}
END_TEST

/* Strict --algo (NCCL >= 2.24): PAT forced on 2 GPUs per node cannot run: the replay refuses the trace before it
 * runs and says why; with nccl.version 2.23 it falls back to the ring. */
static double pat_forced(void *arg)
{
  dt_platform p = multi_node(2, 2, 2);
  p.nccl_version = *(int *)arg;
  dt_trace *t = dt_trace_new(4);
  int32_t g = add_group(t, "dp", 0, 4);
  for (int32_t r = 0; r < 4; r++)
    add_coll(t, r, DT_OP_ALLGATHER, g, MIB);
  dt_error err;
  dt_error_clear(&err);
  ck_assert(dt_trace_validate(t, &err) == DT_OK);
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  o.algo = DT_ALGO_PAT;
#if defined(__SANITIZE_ADDRESS__)
  static char thread_factory[] = "--cfg=contexts/factory:thread";
  static char *args[] = {thread_factory};
  o.simgrid_argc = 1;
  o.simgrid_argv = args;
#endif
  dt_stats *s = NULL;
  int rc = dt_replay_run(&p, t, &o, &s, &err);
  double r = -1;
  if (rc != DT_OK)
    ck_assert_msg(strstr(err.msg, "algorithm 'pat' cannot run allgather on group 'dp' (4 members on 2 nodes): it "
                                  "needs one member per node") != NULL, "error: %s", err.msg);
  else
    r = s->by_kind[DT_OP_ALLGATHER].time_s;
  dt_stats_free(s);
  dt_trace_free(t);
  return r;
}

START_TEST(test_strict_algo)
{
  int v232 = 23200, v223 = 22300;
  ck_assert(forked(pat_forced, &v232) < 0);
  ck_assert(forked(pat_forced, &v223) > 0);
}
END_TEST

/* ---- point-to-point on the NCCL model ---- */

/* A send/recv pair pays NCCL's p2p protocol (LL up to 16 KiB inside a node, Simple above and between nodes, where
 * NCCL allocates no LL buffers for p2p; a forced LL wins): T = L + alpha + h + S/(eB), with h and alpha of the hop
 * (NVLink, or NIC route and h_net between nodes).
 * loop: 0 1 KiB on one node (LL); 1 64 MiB on one node (Simple); 2 64 MiB across 2 nodes (Simple, NIC-bound);
 * 3 64 MiB on one node with --proto LL; 4 1 KiB across 2 nodes (Simple) */
START_TEST(test_p2p)
{
  int across = _i == 2 || _i == 4;
  dt_platform p = across ? multi_node(2, 1, 1) : base_platform(1, 2);
  uint64_t bytes = _i == 0 || _i == 4 ? 1024 : S8;
  dt_proto pr = _i == 0 || _i == 3 ? DT_PROTO_LL : DT_PROTO_SIMPLE;
  const dt_proto_model *m = &p.protocols[pr];
  double want = across ? m->latency + net_alpha(&p) + m->net_hop_latency + (double)bytes / (m->efficiency * p.nic_bandwidth)
                       : m->latency + p.intra_latency + m->hop_latency + (double)bytes / (m->efficiency * p.intra_bandwidth);
  dt_trace *t = dt_trace_new(2);
  dt_op *a = add_op(t, 0, 0, DT_OP_SEND);
  a->peer = 1;
  a->bytes = bytes;
  dt_op *b = add_op(t, 1, 0, DT_OP_RECV);
  b->peer = 0;
  b->bytes = bytes;
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_AUTO, _i == 3 ? DT_PROTO_LL : -1);
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 1);
  ck_assert_rel(s->by_kind[DT_OP_SEND].time_s, want);
  ck_assert_rel(s->makespan_s, want);
  dt_stats_free(s);
}
END_TEST

/* A batch of a 1 KiB send (LL) and a 64 MiB receive (Simple) on each of 2 ranks: each pair is timed on its own
 * (the small one does not wait for the large one), the batch ends with the slower. */
START_TEST(test_p2p_batch)
{
  dt_platform p = base_platform(1, 2);
  const dt_proto_model *ll = &p.protocols[DT_PROTO_LL], *sp = &p.protocols[DT_PROTO_SIMPLE];
  double small = ll->latency + p.intra_latency + ll->hop_latency + 1024 / (ll->efficiency * p.intra_bandwidth);
  double large = sp->latency + p.intra_latency + sp->hop_latency + (double)S8 / (sp->efficiency * p.intra_bandwidth);
  dt_trace *t = dt_trace_new(2);
  for (int32_t r = 0; r < 2; r++) {
    dt_op *a = add_op(t, r, 0, DT_OP_SEND);
    a->peer = 1 - r;
    a->bytes = r == 0 ? 1024 : S8;
    a->batch = 3;
    dt_op *b = add_op(t, r, 0, DT_OP_RECV);
    b->peer = 1 - r;
    b->bytes = r == 0 ? S8 : 1024;
    b->batch = 3;
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_AUTO, -1);
  ck_assert_int_eq(s->by_kind[DT_OP_SEND].count, 2);
  ck_assert_rel(s->by_kind[DT_OP_SEND].time_s, small + large);
  ck_assert_rel(s->makespan_s, large);
  dt_stats_free(s);
}
END_TEST

/* ---- auto ---- */

/* The allreduce choices of a run of sizes 2^10 .. 2^30 over 2 x 8 GPUs: the largest size whose choice is not
 * ring/Simple, from the replay's notes ("allreduce: tree/LL for 1 KiB to 64 KiB (7 instances), ..."). */
static const char *allreduce_note(const dt_stats *s)
{
  for (size_t k = 0; k < s->nnotes; k++)
    if (strncmp(s->notes[k], "allreduce: ", 11) == 0)
      return s->notes[k];
  return NULL;
}

static double first_simple(const char *note);

/* Child: the crossover (log2 bytes) on platform arg. */
static double crossover(void *arg)
{
  const dt_platform *p = arg;
  dt_trace *t = dt_trace_new(16);
  int32_t g = add_group(t, "all", 0, 16);
  for (int e = 10; e <= 30; e++)
    for (int32_t r = 0; r < 16; r++)
      add_coll(t, r, DT_OP_ALLREDUCE, g, 1ULL << e);
  dt_stats *s = replay(p, t, DT_FIDELITY_FLOW, DT_ALGO_AUTO, -1);
  const char *note = allreduce_note(s);
  ck_assert_ptr_nonnull(note);
  ck_assert_msg(strstr(note, "/LL for 1 KiB") || strstr(note, "/LL128 for 1 KiB"), "small sizes: %s", note);
  ck_assert_msg(strstr(note, "/Simple for") && strstr(note, "to 1 GiB"), "large sizes: %s", note);
  fprintf(stderr, "%s\n", note);
  double c = first_simple(note);
  dt_stats_free(s);
  return c;
}


/* Smallest size (log2) chosen with the Simple protocol, parsed from the note. */
static double first_simple(const char *note)
{
  int best = 99;
  const char *q = note;
  while ((q = strstr(q, "/Simple for ")) != NULL) {
    q += strlen("/Simple for ");
    double v;
    char unit[8];
    if (sscanf(q, "%lf %7s", &v, unit) == 2) {
      double b = v * (strcmp(unit, "KiB") == 0 ? 1024.0 : strcmp(unit, "MiB") == 0 ? 1048576.0
                      : strcmp(unit, "GiB") == 0   ? 1073741824.0 : 1.0);
      int e = (int)lround(log2(b));
      if (e < best)
        best = e;
    }
  }
  return best;
}

START_TEST(test_auto_crossover)
{
  dt_platform p = multi_node(2, 8, 8);
  double cross = forked(crossover, &p);
  /* a costlier Simple start-up (base and per-step latency x 2) moves the crossover to larger sizes */
  dt_platform q = multi_node(2, 8, 8);
  q.protocols[DT_PROTO_SIMPLE].latency *= 2;
  q.protocols[DT_PROTO_SIMPLE].hop_latency *= 2;
  q.protocols[DT_PROTO_SIMPLE].net_hop_latency *= 2;
  double cross2 = forked(crossover, &q);
  ck_assert_msg(cross2 > cross, "crossover 2^%g then 2^%g", cross, cross2);
}
END_TEST

/* auto on 2 x 8 GPUs, 8 NICs (NCCL 2.32 defaults): the choices NCCL's tuner makes (ncclTopoTuneModel, v2.30.7-1).
 * At 1 KiB, LL: the tree 6.6 + 2 [7 (1 + 0.6) + (3.6 + 5)] = 46.2 us (chain hops at alpha_i 1 us and h 0.6, one
 * network hop at alpha_n 3.6 and the tree's NET latency 5) against the ring's 6.6 + 3.6 + 29 x 1.45 + 28 x 1 +
 * 2 x 2.7 = 85.7 us (29 more hops at the rings' mean latency (14 x 1 + 2 x 4.6 PXN) / 16, 28 NVLink steps at the
 * 1 us network overhead floor, 2 network steps); NCCL's tuner: tree 6.8 + 2 (7 x 0.6 + 5) = 25.2 us, ring 6.6 +
 * 28 x 1 + 2 x 2.7 = 40 us: the tree. dtsim's hier is not NCCL's, and auto does not weigh it. At 1 GiB
 * the tree's estimate takes the ring's bandwidth per phase, as NCCL's tuner does: 2 S / (0.92 x 400 GB/s) =
 * 5.84 ms (5.94 with its latency) against the ring's 2 x 15/16 S / 400 GB/s = 5.03 ms (5.21): the ring. */
START_TEST(test_auto_tree_nodes)
{
  dt_platform p = multi_node(2, 8, 8);
  dt_trace *t = dt_trace_new(16);
  int32_t g = add_group(t, "all", 0, 16);
  for (int32_t r = 0; r < 16; r++) {
    add_coll(t, r, DT_OP_ALLREDUCE, g, 1024);
    add_coll(t, r, DT_OP_ALLREDUCE, g, GIB);
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_AUTO, -1);
  const char *note = allreduce_note(s);
  ck_assert_ptr_nonnull(note);
  ck_assert_msg(strstr(note, "tree/LL for 1 KiB") && strstr(note, "ring/Simple for 1 GiB") && !strstr(note, "hier"),
                "%s", note);
  dt_stats_free(s);
}
END_TEST

/* Without an `nccl:` section the platform is textbook: ring, no protocol cost (DESIGN.md §6). */
START_TEST(test_textbook_default)
{
  dt_platform p = base_platform(1, 8);
  p.nccl = 0;
  double n = 8, S = (double)S8;
  double want = 2 * (n - 1) * p.intra_latency + 2 * (n - 1) / n * S / p.intra_bandwidth;
  ck_assert_rel(one(&p, 8, DT_OP_ALLREDUCE, S8, fid_of(_i), DT_ALGO_AUTO, -1), want);
}
END_TEST

/* Overlap tax 0.2: a compute op that starts while the rank's all-reduce runs takes dur / 0.8. */
START_TEST(test_overlap_tax)
{
  dt_platform p = base_platform(1, 2);
  p.overlap_tax = 0.2;
  dt_trace *t = dt_trace_new(2);
  int32_t g = add_group(t, "all", 0, 2);
  add_coll(t, 0, DT_OP_ALLREDUCE, g, 1 * GIB);
  add_coll(t, 1, DT_OP_ALLREDUCE, g, 1 * GIB);
  dt_op *c = add_op(t, 0, 1, DT_OP_COMPUTE);
  c->dur = 1e-6;
  dt_op *d = add_op(t, 0, 1, DT_OP_COMPUTE); /* starts at 1.25 us: the all-reduce is still running */
  d->dur = 1e-6;
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, DT_ALGO_RING, DT_PROTO_SIMPLE);
  ck_assert_rel(s->per_rank[0].compute_s, 2 * 1e-6 / 0.8);
  dt_stats_free(s);
}
END_TEST

/* ---- the YAML keys ---- */

START_TEST(test_yaml_nccl)
{
  static const char yaml[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                             "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us, nvls: true}\n"
                             "nccl:\n  channels: 16\n  pxn: false\n  overlap_tax: 0.1\n  protocols:\n"
                             "    LL: {latency: 5us, efficiency: 0.3}\n    Simple: {hop_latency: 2us}\n"
                             "  algorithms:\n    nvls: {efficiency: 0.6}\n";
  dt_platform *p = NULL;
  dt_error err;
  ck_assert_msg(dt_platform_parse(yaml, strlen(yaml), "y.yaml", &p, &err) == DT_OK, "%s", err.msg);
  ck_assert_int_eq(p->nccl, 1);
  ck_assert_int_eq(p->nvls, 1);
  ck_assert_int_eq(p->channels, 16);
  ck_assert_int_eq(p->pxn, 0);
  ck_assert_rel(p->overlap_tax, 0.1);
  ck_assert_rel(p->protocols[DT_PROTO_LL].latency, 5e-6);
  ck_assert_rel(p->protocols[DT_PROTO_LL].efficiency, 0.3);
  ck_assert_rel(p->protocols[DT_PROTO_LL].hop_latency, 0.6e-6); /* default kept */
  ck_assert_rel(p->protocols[DT_PROTO_SIMPLE].hop_latency, 2e-6);
  ck_assert_rel(p->algorithms[DT_ALGO_NVLS].efficiency, 0.6);
  dt_platform_free(p);

  static const char bad[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                            "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                            "nccl:\n  protocols:\n    LL: {efficency: 0.3}\n";
  ck_assert_int_eq(dt_platform_parse(bad, strlen(bad), "b.yaml", &p, &err), DT_ERR);
  ck_assert_int_eq(err.line, 9);
  ck_assert_int_eq(err.col, 10);
  ck_assert_msg(strstr(err.msg, "unknown key 'efficency' in 'nccl.protocols.LL' (did you mean 'efficiency'?)"), "%s",
                err.msg);
  static const char notax[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                              "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                              "nccl: {overlap_tax: 1.5}\n";
  ck_assert_int_eq(dt_platform_parse(notax, strlen(notax), "t.yaml", &p, &err), DT_ERR);
  ck_assert_int_eq(err.line, 7);
  /* without the section: the textbook model */
  static const char plain[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                              "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n";
  ck_assert_int_eq(dt_platform_parse(plain, strlen(plain), "p.yaml", &p, &err), DT_OK);
  ck_assert_int_eq(p->nccl, 0);
  ck_assert_int_eq(dt_platform_channels(p), 1);
  dt_platform_free(p);

  /* nccl.version, host.cpu, ppn1_net_hop_latency, the PAT algorithm's keys */
  static const char ver[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                            "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                            "host: {cpu: amd}\nnccl:\n  version: 2.17.1-1\n  protocols:\n"
                            "    LL: {ppn1_net_hop_latency: 4us}\n  algorithms:\n    pat: {efficiency: 0.8}\n";
  ck_assert_msg(dt_platform_parse(ver, strlen(ver), "v.yaml", &p, &err) == DT_OK, "%s", err.msg);
  ck_assert_int_eq(p->nccl_version, 21701);
  ck_assert_int_eq(p->host_cpu, DT_CPU_AMD);
  ck_assert_rel(p->protocols[DT_PROTO_LL].ppn1_net_hop_latency, 4e-6);
  ck_assert_rel(p->protocols[DT_PROTO_SIMPLE].ppn1_net_hop_latency, 14e-6); /* default kept */
  ck_assert_rel(p->algorithms[DT_ALGO_PAT].efficiency, 0.8);
  ck_assert_rel(p->algorithms[DT_ALGO_PAT].latency, 8e-6);
  dt_platform_free(p);
  ck_assert_int_eq(dt_platform_parse(plain, strlen(plain), "p.yaml", &p, &err), DT_OK);
  ck_assert_int_eq(p->nccl_version, DT_NCCL_VERSION_DEFAULT);
  ck_assert_int_eq(p->host_cpu, DT_CPU_INTEL);
  dt_platform_free(p);
  static const char badver[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                               "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                               "nccl: {version: 3.1}\n";
  ck_assert_int_eq(dt_platform_parse(badver, strlen(badver), "b.yaml", &p, &err), DT_ERR);
  ck_assert_int_eq(err.line, 7);
  ck_assert_msg(strstr(err.msg, "expected an NCCL version such as '2.17.1' or '2.32' for 'nccl.version', found '3.1'"),
                "%s", err.msg);
  static const char badcpu[] = "dtsim_platform: 1\nname: y\ngpu: {model: H100, peak: 989TFLOPS}\nnodes: 1\n"
                               "gpus_per_node: 8\nintra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\n"
                               "host: {cpu: power}\n";
  ck_assert_int_eq(dt_platform_parse(badcpu, strlen(badcpu), "c.yaml", &p, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "'intel', 'amd', 'arm'") && strstr(err.msg, "host.cpu"), "%s", err.msg);
  ck_assert_int_eq(dt_nccl_version_parse("2.32"), 23200);
  ck_assert_int_eq(dt_nccl_version_parse("2.30.7-1"), 23007);
  ck_assert_int_eq(dt_nccl_version_parse("2"), -1);
  ck_assert_int_eq(dt_nccl_version_parse("2.x"), -1);
  ck_assert_int_eq(dt_nccl_version_parse("2.100"), -1);
  ck_assert_int_eq(dt_nccl_version_parse("2.17.1-"), -1);
}
END_TEST

/* ---- exact shortcuts: the closed-form wait gives what the flows give, and only where nothing else shares ---- */

typedef struct shortcut_case {
  int which; /* test loop index */
  int exact;
  int want_count; /* 1: return the number of closed-form instances instead of the makespan; 2: the per-link
                     accounting's busy time summed over the links, weighted by their bytes and peak flows */
} shortcut_case;

static double shortcut_run(void *arg)
{
  const shortcut_case *sc = arg;
  exact_replay = sc->exact;
  dt_platform p;
  int32_t n = 8;
  dt_op_kind kind = DT_OP_ALLREDUCE;
  dt_algo algo = DT_ALGO_RING;
  int proto = DT_PROTO_SIMPLE, contend = 0;
  switch (sc->which) {
  case 0: /* NCCL model, one node */
    p = base_platform(1, 8);
    break;
  case 1: /* textbook */
    p = dt_test_platform(1, 8);
    proto = -1;
    break;
  case 2: /* all-gather over 4 channels, LL */
    p = base_platform(1, 8);
    p.channels = 4;
    kind = DT_OP_ALLGATHER;
    proto = DT_PROTO_LL;
    break;
  case 3: /* all-to-all in a node */
    p = base_platform(1, 8);
    kind = DT_OP_ALLTOALL;
    algo = DT_ALGO_AUTO;
    break;
  case 4: /* all-to-all over 16 single-GPU nodes behind one switch */
    p = multi_node(16, 1, 1);
    n = 16;
    kind = DT_OP_ALLTOALL;
    algo = DT_ALGO_AUTO;
    break;
  case 5: /* a send between two members on another stream may share the first ring's ports: flows; it has
           * completed when the second starts, which is then waited (time-separated at its last arrival) */
    p = base_platform(1, 8);
    contend = 1;
    break;
  case 6: /* double binary trees over 8 channels in a node, each channel's order rotated to start on its NIC's
           * GPU: every GPU port carries 14 flows each way */
    p = multi_node(1, 8, 8);
    p.channels = 8;
    algo = DT_ALGO_TREE;
    break;
  case 7: /* one channel: the port of the member with one child carries fewer flows, no closed form: evaluated
           * (dt_coll_solve.c) */
    p = base_platform(1, 8);
    algo = DT_ALGO_TREE;
    break;
  default: /* trees over 2 nodes x 4: hops inside a node and across the network differ in latency: evaluated */
    p = multi_node(2, 4, 4);
    p.channels = 4;
    algo = DT_ALGO_TREE;
    break;
  }
  dt_trace *t = dt_trace_new(n);
  int32_t g = add_group(t, "all", 0, n);
  for (int32_t r = 0; r < n; r++) {
    add_coll(t, r, kind, g, S8);
    dt_op *c = add_op(t, r, 0, DT_OP_COMPUTE);
    c->dur = 1e-3;
    add_coll(t, r, kind, g, S8 / 2);
  }
  if (contend) {
    dt_op *snd = add_op(t, 0, 1, DT_OP_SEND);
    snd->peer = 1;
    snd->bytes = S8;
    dt_op *rcv = add_op(t, 1, 1, DT_OP_RECV);
    rcv->peer = 0;
    rcv->bytes = S8;
  }
  dt_stats *s = replay(&p, t, DT_FIDELITY_FLOW, algo, proto);
  double v = s->makespan_s;
  if (sc->want_count == 2) {
    v = 0;
    ck_assert_ptr_nonnull(s->links);
    for (size_t k = 0; k < s->links->nlinks; k++) {
      const dt_link_load *l = &s->links->links[k];
      v += l->busy_s * (1 + l->link + 7 * l->dir) + l->bytes * 1e-12 + l->peak_flows + l->transfers;
    }
  } else if (sc->want_count) {
    v = 0;
    for (size_t k = 0; k < s->nnotes; k++)
      if (strncmp(s->notes[k], "shortcuts: ", 11) == 0)
        v = atof(s->notes[k] + 11);
  }
  dt_stats_free(s);
  return v;
}

/* loop index: the cases of shortcut_run */
START_TEST(test_shortcut_exact)
{
  shortcut_case fast = {_i, 0, 0}, exact = {_i, 1, 0}, fast_count = {_i, 0, 1}, exact_count = {_i, 1, 1};
  double tf = forked(shortcut_run, &fast), te = forked(shortcut_run, &exact);
  ck_assert_rel(tf, te);
  ck_assert_msg(tf > 1e-3, "makespan %g", tf);
  ck_assert_rel(forked(shortcut_run, &exact_count), 0);
  /* instances in closed form or evaluated, per case */
  static const double closed[] = {2, 2, 2, 2, 2, 1, 2, 2, 2};
  ck_assert_rel(forked(shortcut_run, &fast_count), closed[_i]);
  /* the per-link accounting sees the same transfers either way */
  shortcut_case fast_links = {_i, 0, 2}, exact_links = {_i, 1, 2};
  double lf = forked(shortcut_run, &fast_links);
  ck_assert_msg(lf > 0, "no link carried bytes");
  ck_assert_rel(lf, forked(shortcut_run, &exact_links));
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"ring_allreduce", test_ring_allreduce, 6},
      {"ring_allgather_reducescatter", test_ring_allgather_reducescatter, 4},
      {"tree_allreduce", test_tree_allreduce, 6},
      {"tree_nodes", test_tree_nodes, 6},
      {"nvls_allreduce", test_nvls_allreduce, 2},
      {"chain", test_chain, 4},
      {"alltoall", test_alltoall, 2},
      {"alltoall_nodes", test_alltoall_nodes, 2},
      {"hier_allreduce", test_hier_allreduce, 2},
      {"collnet_allreduce", test_collnet_allreduce, 2},
      {"nvls_tree_allreduce", test_nvls_tree_allreduce, 2},
      {"hier_heterogeneous", test_hier_heterogeneous, 2},
      {"ring_uses_all_nics", test_ring_uses_all_nics, 1},
      {"ring_channels_balance_nics", test_ring_channels_balance_nics, 1},
      {"pxn_route", test_pxn_route, 2},
      {"ring_mixed", test_ring_mixed, 2},
      {"net_overhead_floor", test_net_overhead_floor, 8},
      {"ppn1_net_latency", test_ppn1_net_latency, 4},
      {"pat", test_pat, 4},
      {"pat_nvls", test_pat_nvls, 8},
      {"strict_algo", test_strict_algo, 1},
      {"p2p", test_p2p, 5},
      {"p2p_batch", test_p2p_batch, 1},
      {"auto_crossover", test_auto_crossover, 1},
      {"auto_tree_nodes", test_auto_tree_nodes, 1},
      {"textbook_default", test_textbook_default, 2},
      {"overlap_tax", test_overlap_tax, 1},
      {"yaml_nccl", test_yaml_nccl, 1},
      {"shortcut_exact", test_shortcut_exact, 9},
  };
  return dt_test_run(dt_test_suite("coll", cases, sizeof cases / sizeof cases[0], 120));
}
