/* Check suite for the plan table (replay/dt_coll_plan.c), without SimGrid: the closed forms of docs/replay.md as
 * the analytical evaluation of each algorithm's plan on a group's shape (what auto's estimate prices), the
 * patterns' listings (every send of every member has its receive, and the bytes add up to the algorithm's
 * volume), and the table's answers on where each algorithm can run. check_coll runs the same closed forms as
 * SimGrid replays. Expected values are the formulas, computed here from the platform's numbers. */
#include "dt_test.h"
#include "common/dt_util.h"
#include "platforms/dt_platform.h"
#include "platforms/dt_topology.h"
#include "replay/dt_coll.h"
#include "traces/dt_trace.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REL 1e-9
#define MIB 1048576.0

#define ck_assert_rel(got, want)                                                                                       \
  do {                                                                                                                 \
    double g_ = (got), w_ = (want);                                                                                    \
    ck_assert_msg(fabs(g_ - w_) <= REL * fabs(w_) + 1e-18, "%s = %.15g, expected %.15g (rel err %.3g)", #got, g_, w_, \
                  w_ != 0 ? fabs(g_ - w_) / fabs(w_) : fabs(g_));                                                      \
  } while (0)

static dt_platform nccl_node(int gpus)
{
  dt_platform p = dt_test_platform(1, gpus);
  p.nccl = 1;
  dt_platform_nccl_defaults(&p);
  return p;
}

/* nodes x gpus_per_node on a single switch, `nics` NICs of 50 GB/s per node (the bottleneck) */
static dt_platform nodes_platform(int nodes, int gpus_per_node, int nics, int nccl)
{
  dt_platform p = dt_test_platform(nodes, gpus_per_node);
  if (nccl) {
    p.nccl = 1;
    dt_platform_nccl_defaults(&p);
  }
  p.nics_per_node = nics;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1.5e-6;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 400e9;
  p.link_latency = 3e-7;
  return p;
}

/* a NIC route: GPU -> NIC -> switch -> NIC -> GPU */
static double net_alpha(const dt_platform *p)
{
  return 2 * p->nic_latency + 2 * p->link_latency;
}

/* A replay context without SimGrid: the platform's topology, one group of the given ranks (rank r on GPU r)
 * issuing one op of `kind`, and its shape. */
typedef struct fixture {
  dt_platform p;
  dt_trace *t;
  dt_topology *topo;
  int32_t *gpu;
  rp_ctx c;
  const rp_gshape *gs;
} fixture;

/* 1: the fixture's group gets its exact shortcuts (closed forms) when it qualifies, as without --exact */
static int shortcuts;

static void fixture_init(fixture *f, const dt_platform *p, const int32_t *ranks, int32_t n, dt_op_kind kind,
                         dt_algo algo)
{
  memset(f, 0, sizeof *f);
  f->p = *p;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_topology_build(&f->p, &f->topo, &err) == DT_OK, "topology: %s", err.msg);
  int32_t nranks = 0;
  for (int32_t i = 0; i < n; i++)
    if (ranks[i] + 1 > nranks)
      nranks = ranks[i] + 1;
  f->t = dt_trace_new(nranks);
  int g = dt_trace_add_group(f->t, "g", ranks, (size_t)n, 0, 0, &err);
  ck_assert_msg(g >= 0, "group: %s", err.msg);
  for (int32_t i = 0; i < n; i++) {
    dt_trace_stream(f->t, ranks[i], 0, 1);
    dt_op *op = dt_trace_append(f->t, ranks[i], 0);
    op->kind = kind;
    op->group = g;
    op->bytes = 1 << 20;
  }
  ck_assert_msg(dt_trace_validate(f->t, &err) == DT_OK, "validate: %s", err.msg);
  f->gpu = dt_xmalloc(sizeof *f->gpu * (size_t)nranks);
  for (int32_t r = 0; r < nranks; r++)
    f->gpu[r] = r;
  f->c.p = &f->p;
  f->c.t = f->t;
  f->c.topo = f->topo;
  f->c.gpu_of_rank = f->gpu;
  f->c.fidelity = DT_FIDELITY_FLOW;
  f->c.algo = algo;
  f->c.proto = -1;
  f->c.exact = !shortcuts;
  rp_coll_init(&f->c);
  f->gs = rp_gshape_of(&f->c, g);
}

static void fixture_free(fixture *f)
{
  rp_coll_free(&f->c);
  dt_trace_free(f->t);
  dt_topology_free(f->topo);
  free(f->gpu);
}

static void fixture_first(fixture *f, const dt_platform *p, int32_t n, dt_op_kind kind, dt_algo algo)
{
  int32_t ranks[64];
  for (int32_t i = 0; i < n; i++)
    ranks[i] = i;
  fixture_init(f, p, ranks, n, kind, algo);
}

/* The plan's analytical time, as auto prices it. */
static double priced(fixture *f, dt_op_kind kind, double S, dt_algo a, dt_proto pr)
{
  return rp_estimate_S(&f->c, kind, S, f->gs, a, pr);
}

/* ---- the closed forms, single NVSwitch node (alpha, B: intra_node; L, h, e: the protocol's) ---- */

/* ring all-reduce per protocol: L + 2(n-1)(alpha + h) + 2(n-1)/n S/(eB) */
START_TEST(test_ring_allreduce)
{
  dt_platform p = nccl_node(8);
  dt_proto pr = (dt_proto)_i;
  const dt_proto_model *m = &p.protocols[pr];
  double n = 8, S = 64 * MIB;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  double want = m->latency + 2 * (n - 1) * (p.intra_latency + m->hop_latency) +
                2 * (n - 1) / n * S / (m->efficiency * p.intra_bandwidth);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_RING, pr), want);
  fixture_free(&f);
}
END_TEST

/* reduce-scatter and all-gather rings over 4 channels: L + (n-1)(alpha + h) + (n-1)/n S/B (all-gather: (n-1)
 * S/B, S the shard) */
START_TEST(test_ring_rs_ag)
{
  dt_platform p = nccl_node(8);
  p.channels = 4;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double n = 8, S = 64 * MIB, a = p.intra_latency + m->hop_latency;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLGATHER, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_REDUCESCATTER, S, DT_ALGO_RING, DT_PROTO_SIMPLE),
                m->latency + (n - 1) * a + (n - 1) / n * S / p.intra_bandwidth);
  ck_assert_rel(priced(&f, DT_OP_ALLGATHER, S, DT_ALGO_RING, DT_PROTO_SIMPLE),
                m->latency + (n - 1) * a + (n - 1) * S / p.intra_bandwidth);
  fixture_free(&f);
}
END_TEST

/* NCCL's tree on one node: a chain of depth n - 1 = 7 each way, one channel: the busiest port S per phase:
 * L + L_tree + 2 (n-1)(alpha + h) + 2 S/(e e_tree B). Across nodes the network hops cost the tree's NET latency
 * h_t (ppn1_net_hop_latency), and the estimate's bandwidth term is at least NCCL's tuner's, S per phase over the
 * ring's bandwidth (the tree's graph has the ring's per-channel bandwidth): 4 nodes x 1 GPU, one NIC each, depth 2,
 * busiest NIC direction 2 flows of S/2 (check_coll's test_tree_nodes), the ring's bandwidth the NIC's:
 * L + L_tree + 4 (alpha_n + h_t) + 2 S/(e B_n), the replay's time; 2 nodes x 2 GPUs, 2 NICs, 2 channels: the
 * chain hop and one network hop each way, the NICs carry S/4 per phase (the replay's 2 (S/4)/(e B_n)) but the
 * tuner's term is S over the ring's 2 NICs: L + L_tree + 2 [(alpha_i + h) + (alpha_n + h_t)] + 2 S/(2 e B_n). */
START_TEST(test_tree)
{
  dt_platform p = nccl_node(8);
  const dt_proto_model *m = &p.protocols[DT_PROTO_LL128];
  const dt_algo_model *am = &p.algorithms[DT_ALGO_TREE];
  double S = 64 * MIB;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_TREE, DT_PROTO_LL128),
                m->latency + am->latency + 2 * 7 * (p.intra_latency + m->hop_latency) +
                    2 * S / (m->efficiency * am->efficiency * p.intra_bandwidth));
  fixture_free(&f);

  p = nodes_platform(4, 1, 1, 1);
  m = &p.protocols[DT_PROTO_SIMPLE];
  double e = m->efficiency * p.algorithms[DT_ALGO_TREE].efficiency, L = m->latency + p.algorithms[DT_ALGO_TREE].latency;
  fixture_first(&f, &p, 4, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_TREE, DT_PROTO_SIMPLE),
                L + 4 * (net_alpha(&p) + m->ppn1_net_hop_latency) + 2 * S / (e * p.nic_bandwidth));
  fixture_free(&f);

  p = nodes_platform(2, 2, 2, 1);
  m = &p.protocols[DT_PROTO_SIMPLE];
  fixture_first(&f, &p, 4, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_TREE, DT_PROTO_SIMPLE),
                L + 2 * ((p.intra_latency + m->hop_latency) + (net_alpha(&p) + m->ppn1_net_hop_latency)) +
                    2 * S / (2 * e * p.nic_bandwidth));
  fixture_free(&f);
}
END_TEST

/* NVLS: L + L_nvls + 2 (alpha + h) + S/B; without intra_node.nvls it cannot run */
START_TEST(test_nvls)
{
  dt_platform p = nccl_node(8);
  p.nvls = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = 1024 * MIB;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_NVLS, DT_PROTO_SIMPLE),
                m->latency + p.algorithms[DT_ALGO_NVLS].latency + 2 * (p.intra_latency + m->hop_latency) +
                    S / p.intra_bandwidth);
  f.p.nvls = 0;
  ck_assert(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_NVLS, DT_PROTO_SIMPLE) < 0);
  fixture_free(&f);
}
END_TEST

/* chain broadcast and reduce, 2 channels: L + (n-1)(alpha + h) + S/B */
START_TEST(test_chain)
{
  dt_platform p = nccl_node(8);
  p.channels = 2;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = 64 * MIB, want = m->latency + 7 * (p.intra_latency + m->hop_latency) + S / p.intra_bandwidth;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_BROADCAST, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_BROADCAST, S, DT_ALGO_CHAIN, DT_PROTO_SIMPLE), want);
  ck_assert_rel(priced(&f, DT_OP_REDUCE, S, DT_ALGO_CHAIN, DT_PROTO_SIMPLE), want);
  fixture_free(&f);
}
END_TEST

/* direct all-to-all: L + (n-1)(alpha + h) + (n-1)/n S/B; on 2 nodes x 2 GPUs with a NIC each, 1 NVLink round
 * and 2 network rounds, the NIC carrying half of S: L + (ai + h) + 2 (an + hn) + (S/2)/(e Bn) */
START_TEST(test_alltoall)
{
  double S = 64 * MIB;
  fixture f;
  dt_platform p = nccl_node(8);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  fixture_first(&f, &p, 8, DT_OP_ALLTOALL, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLTOALL, S, DT_ALGO_DIRECT, DT_PROTO_SIMPLE),
                m->latency + 7 * (p.intra_latency + m->hop_latency) + 7.0 / 8 * S / p.intra_bandwidth);
  fixture_free(&f);
  p = nodes_platform(2, 2, 2, 1);
  m = &p.protocols[DT_PROTO_LL];
  fixture_first(&f, &p, 4, DT_OP_ALLTOALL, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLTOALL, S, DT_ALGO_DIRECT, DT_PROTO_LL),
                m->latency + p.intra_latency + m->hop_latency + 2 * (net_alpha(&p) + m->net_hop_latency) +
                    (S / 2) / (m->efficiency * p.nic_bandwidth));
  fixture_free(&f);
}
END_TEST

/* ---- across nodes ---- */

/* hier and collnet on 2 nodes x 4 GPUs, a NIC per GPU:
 *   hier:    L + 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2(N-1)(an + hn) + 2(N-1)/N (S/m)/Bn
 *   collnet: L + L_collnet + 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2 (an + hn) + (S/m)/Bn */
START_TEST(test_hier_collnet)
{
  dt_platform p = nodes_platform(2, 4, 4, 1);
  p.sharp = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = 64 * MIB, mm = 4, N = 2;
  double intra = 2 * ((mm - 1) * (p.intra_latency + m->hop_latency) + (mm - 1) / mm * S / p.intra_bandwidth);
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_HIER, DT_PROTO_SIMPLE),
                m->latency + intra + 2 * (N - 1) * (net_alpha(&p) + m->net_hop_latency) +
                    2 * (N - 1) / N * (S / mm) / p.nic_bandwidth);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_COLLNET, DT_PROTO_SIMPLE),
                m->latency + p.algorithms[DT_ALGO_COLLNET].latency + intra +
                    2 * (net_alpha(&p) + m->net_hop_latency) + (S / mm) / p.nic_bandwidth);
  fixture_free(&f);
}
END_TEST

/* heterogeneous hier: 2 GPUs of node 0 and 4 of node 1; node 0's members hold 2 rails each:
 * L + 2 [3 (ai + h) + 3/4 S/Bi] + 2 (an + hn) + S/(2 Bn) */
START_TEST(test_hier_heterogeneous)
{
  dt_platform p = nodes_platform(2, 4, 4, 1);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = 64 * MIB;
  int32_t ranks[] = {0, 1, 4, 5, 6, 7};
  fixture f;
  fixture_init(&f, &p, ranks, 6, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_HIER, DT_PROTO_SIMPLE),
                m->latency + 2 * (3 * (p.intra_latency + m->hop_latency) + 0.75 * S / p.intra_bandwidth) +
                    2 * (net_alpha(&p) + m->net_hop_latency) + S / (2 * p.nic_bandwidth));
  /* NVLS-tree needs as many members on every node */
  f.p.nvls = 1;
  ck_assert(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_NVLS_TREE, DT_PROTO_SIMPLE) < 0);
  fixture_free(&f);
}
END_TEST

/* NVLS-tree on 4 nodes x 2 GPUs: L + L_nt + 2 (ai + h + S/Bi) + 2 D (an + hn) + 2 (S/m)/Bn, D = 2 */
START_TEST(test_nvls_tree)
{
  dt_platform p = nodes_platform(4, 2, 2, 1);
  p.nvls = 1;
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  double S = 64 * MIB, mm = 2, D = 2;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_NVLS_TREE, DT_PROTO_SIMPLE),
                m->latency + p.algorithms[DT_ALGO_NVLS_TREE].latency +
                    2 * (p.intra_latency + m->hop_latency + S / p.intra_bandwidth) +
                    2 * D * (net_alpha(&p) + m->net_hop_latency) + 2 * (S / mm) / p.nic_bandwidth);
  fixture_free(&f);
}
END_TEST

/* PAT on one GPU per node (NCCL's PAT model): L_pat + 2.8 us n + K (an + h_net1 / 3.5) + (n-1) shard/(e e_pat Bn);
 * loop: all-gather on 4 nodes (K 2), reduce-scatter on 5 (K 3, shard S/5); Simple only */
START_TEST(test_pat)
{
  int rs = _i;
  int32_t n = rs ? 5 : 4;
  dt_platform p = nodes_platform(n, 1, 1, 1);
  const dt_proto_model *m = &p.protocols[DT_PROTO_SIMPLE];
  const dt_algo_model *pa = &p.algorithms[DT_ALGO_PAT];
  double S = 64 * MIB, K = rs ? 3 : 2, shard = rs ? S / n : S;
  dt_op_kind kind = rs ? DT_OP_REDUCESCATTER : DT_OP_ALLGATHER;
  fixture f;
  fixture_first(&f, &p, n, kind, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, kind, S, DT_ALGO_PAT, DT_PROTO_SIMPLE),
                pa->latency + 2.8e-6 * n + K * (net_alpha(&p) + m->ppn1_net_hop_latency / 3.5) +
                    (n - 1) * shard / (m->efficiency * pa->efficiency * p.nic_bandwidth));
  ck_assert(priced(&f, kind, S, DT_ALGO_PAT, DT_PROTO_LL) < 0);
  fixture_free(&f);
}
END_TEST

/* PAT across nodes of 2 members with NVLS inside (NCCL 2.31+): the closed forms of check_coll's pat_nvls, priced;
 * auto never picks it. loop: all-gather on 4 nodes x 2 (K 2), reduce-scatter on 3 x 2 (K 2, s = S/6) */
START_TEST(test_pat_nvls)
{
  int rs = _i;
  int32_t N = rs ? 3 : 4, m = 2, n = N * m;
  dt_platform p = nodes_platform(N, m, m, 1);
  p.nvls = 1;
  const dt_proto_model *pm = &p.protocols[DT_PROTO_SIMPLE];
  const dt_algo_model *pa = &p.algorithms[DT_ALGO_PAT];
  double S = 64 * MIB, K = 2, e = pm->efficiency * pa->efficiency, s = rs ? S / n : S;
  dt_op_kind kind = rs ? DT_OP_REDUCESCATTER : DT_OP_ALLGATHER;
  fixture f;
  fixture_first(&f, &p, n, kind, DT_ALGO_AUTO);
  double pass = p.intra_latency + pm->hop_latency / 3.5 + (rs ? S : (double)(m - 1) * N * s) / (e * p.intra_bandwidth);
  ck_assert_rel(priced(&f, kind, S, DT_ALGO_PAT, DT_PROTO_SIMPLE), pa->latency + 2.8e-6 * n +
                                                                       K * (net_alpha(&p) + pm->net_hop_latency / 3.5) +
                                                                       (N - 1) * s / (e * p.nic_bandwidth) + pass);
  fixture_free(&f);
}
END_TEST

/* A textbook ring across nodes, one member per node: every hop is a NIC route, 2(n-1) alpha + 2(n-1)/n S/B
 * (the estimate once left out the first hop's latency). loop: 2 and 4 ranks. */
START_TEST(test_textbook_ring_nodes)
{
  int32_t n = _i ? 4 : 2;
  dt_platform p = nodes_platform(n, 1, 1, 0);
  double S = 64 * MIB, a = net_alpha(&p);
  fixture f;
  fixture_first(&f, &p, n, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_rel(priced(&f, DT_OP_ALLREDUCE, S, DT_ALGO_RING, DT_PROTO_SIMPLE),
                2 * (n - 1) * a + 2.0 * (n - 1) / n * S / p.nic_bandwidth);
  fixture_free(&f);
}
END_TEST

/* ---- the listings: every member's sends of every phase step have their receives ---- */

typedef struct flowkey {
  int32_t who, tag;
} flowkey;

static int cmp_key(const void *a, const void *b)
{
  const flowkey *x = a, *y = b;
  if (x->who != y->who)
    return (x->who > y->who) - (x->who < y->who);
  return (x->tag > y->tag) - (x->tag < y->tag);
}

/* Lists every phase of row's plan for every member; checks that the sends to (member, tag) are as many as the
 * receives that member posts on tag, and returns the bytes all members send in one step of every phase, summed
 * (before the efficiency). */
static double check_listings(fixture *f, const dt_op *op, dt_algo algo)
{
  const rp_gshape *gs = f->gs;
  dt_op_kind kind = rp_algo_kind(op->kind);
  const rp_algo_row *row = rp_algo_row_of(kind, algo);
  ck_assert_ptr_nonnull(row);
  ck_assert_msg(row->why_not(&f->p, gs) == NULL, "%s cannot run here", dt_algo_name(algo));
  ck_assert(row->note && row->note[0]);
  int32_t n = gs->n;
  size_t cap = 4 * (size_t)gs->nchannels + (size_t)n + (size_t)gs->max_per_node + 4;
  rp_send *sends = dt_xmalloc(sizeof *sends * cap);
  int32_t *tags = dt_xmalloc(sizeof *tags * cap);
  flowkey *out = dt_xmalloc(sizeof *out * cap * (size_t)n), *in = dt_xmalloc(sizeof *in * cap * (size_t)n);
  double total = 0;
  rp_costs k = rp_costs_group(&f->p, algo, DT_PROTO_SIMPLE, kind, gs);
  for (int phase = 0;; phase++) {
    size_t nout = 0, nin = 0;
    int more = 0;
    for (int32_t i = 0; i < n; i++) {
      rp_plan pl;
      pl.nphases = 0;
      row->plan(gs, kind, (double)op->bytes, i, &pl);
      if (phase >= pl.nphases)
        continue;
      more = 1;
      const rp_phase *ph = &pl.ph[phase];
      if (ph->steps <= 0)
        continue;
      rp_inst x = {.c = &f->c, .op = op, .g = 0, .i = i, .n = n, .id = 0, .gs = gs, .algo = algo,
                   .proto = DT_PROTO_SIMPLE, .eff = k.eff, .hop = k.hop, .net_hop = k.net_hop, .fixed = k.fixed,
                   .S = (double)op->bytes, .fid = DT_FIDELITY_STEP};
      rp_listing L = {.sends = sends, .tags = tags, .after = -1};
      /* the patterns are the executor's (dt_coll_plan.c): list through the same table */
      switch ((rp_pattern)ph->pattern) {
      case RP_PAT_RING: rp_list_ring(&x, ph, &L); break;
      case RP_PAT_NODE_RING: rp_list_node_ring(&x, ph, &L); break;
      case RP_PAT_NODE_NEXT: rp_list_node_next(&x, ph, &L); break;
      case RP_PAT_RAILS: rp_list_rails(&x, ph, &L); break;
      case RP_PAT_TREE: rp_list_tree(&x, ph, &L); break;
      case RP_PAT_NODE_TREE: rp_list_node_tree(&x, ph, &L); break;
      case RP_PAT_CHAIN: rp_list_chain(&x, ph, &L); break;
      case RP_PAT_DIRECT: rp_list_direct(&x, ph, &L); break;
      case RP_PAT_PAT: rp_list_pat(&x, ph, &L); break;
      default: ck_abort_msg("pattern %d", ph->pattern);
      }
      ck_assert(L.ns <= cap && L.nr <= cap);
      ck_assert(L.alpha >= 0 && L.h >= 0);
      for (size_t s = 0; s < L.ns; s++) {
        ck_assert(L.sends[s].to >= 0 && L.sends[s].to < n && L.sends[s].to != i);
        out[nout++] = (flowkey){L.sends[s].to, L.sends[s].tag};
        total += L.sends[s].bytes;
      }
      for (size_t r = 0; r < L.nr; r++)
        in[nin++] = (flowkey){i, L.tags[r]};
    }
    if (!more)
      break;
    ck_assert_msg(nout == nin, "%s phase %d: %zu sends, %zu receives", dt_algo_name(algo), phase, nout, nin);
    qsort(out, nout, sizeof *out, cmp_key);
    qsort(in, nin, sizeof *in, cmp_key);
    for (size_t q = 0; q < nout; q++)
      ck_assert_msg(out[q].who == in[q].who && out[q].tag == in[q].tag, "%s phase %d: a send to %d tag %d has no "
                    "receive", dt_algo_name(algo), phase, out[q].who, out[q].tag);
  }
  free(sends);
  free(tags);
  free(out);
  free(in);
  return total;
}

/* Every algorithm on 2 nodes x 4 GPUs with 4 NICs and 2 channels (PXN relays on, rings entering each node on
 * their own NIC): sends and receives pair up, and one step of every phase moves what the algorithm moves:
 * ring all-reduce n C (S/n)/C per step = S; tree 2 trees x (n-1) edges x C x S/(2C) per phase; chain (n-1) x S; a
 * NIC-relayed ring hop adds its relay's send. */
START_TEST(test_listings)
{
  dt_platform p = nodes_platform(2, 4, 4, 1);
  p.channels = 2;
  p.nvls = 1;
  p.sharp = 1;
  double S = 1 << 20, n = 8;
  fixture f;
  fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  dt_op op = {0};
  op.bytes = 1 << 20;
  op.root = 3;
  int relays = 0;
  for (size_t k = 0; k < (size_t)f.gs->nchannels * 8; k++)
    relays += f.gs->pxn_proxy[k] >= 0;
  op.kind = DT_OP_ALLREDUCE;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_RING), S + relays * S / n / 2);
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_TREE), 2 * (2 * (n - 1) * S / 2));
  /* hier: node rings 2 x 4 members x S/4 per node x 2 nodes; rails: 4 rails x 2 nodes x S/4/2 */
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_HIER), 2 * 2 * S + 8 * S / 8);
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_COLLNET), 2 * 2 * S + 8 * S / 8);
  /* nvls-tree: the passes n S each; the trees over 2 nodes per local index: 4 x 2 trees x 1 edge x S/4/2 */
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_NVLS_TREE), 2 * n * S + 2 * (4 * 2 * S / 8));
  op.kind = DT_OP_BROADCAST;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_CHAIN), (n - 1) * S);
  op.kind = DT_OP_REDUCE;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_CHAIN), (n - 1) * S);
  op.kind = DT_OP_ALLTOALL;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_DIRECT), n * (n - 1) * S / n);
  fixture_free(&f);
  /* PAT on 5 nodes: (n - 1) shards per member */
  p = nodes_platform(5, 1, 1, 1);
  fixture_first(&f, &p, 5, DT_OP_ALLGATHER, DT_ALGO_AUTO);
  op.kind = DT_OP_ALLGATHER;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_PAT), 5 * 4 * S);
  op.kind = DT_OP_REDUCESCATTER;
  ck_assert_rel(check_listings(&f, &op, DT_ALGO_PAT), 5 * 4 * S / 5);
  fixture_free(&f);
}
END_TEST

/* A plan waited in closed form (what folding ranks needs): inside one 8-GPU NVSwitch node with 8 NICs and channels the
 * ring and the tree are (every flow of a phase gets the same share), NVLS is not; with --exact nothing is. */
START_TEST(test_plan_closed)
{
  dt_platform p = nodes_platform(1, 8, 8, 1); /* channel c's order starts on the GPU of NIC c */
  p.channels = 8;
  p.nvls = 1;
  for (int exact = 0; exact < 2; exact++) {
    shortcuts = !exact;
    fixture f;
    fixture_first(&f, &p, 8, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
    dt_algo algos[] = {DT_ALGO_RING, DT_ALGO_TREE, DT_ALGO_NVLS};
    for (int a = 0; a < 3; a++) {
      rp_plan pl = {0};
      rp_algo_row_of(DT_OP_ALLREDUCE, algos[a])->plan(f.gs, DT_OP_ALLREDUCE, 1 << 20, 0, &pl);
      ck_assert_msg(rp_plan_closed(f.gs, &pl) == (!exact && algos[a] != DT_ALGO_NVLS), "%s, exact %d: closed %d "
                    "(ring_cf %d, tree_cf %d %d)", dt_algo_name(algos[a]), exact, rp_plan_closed(f.gs, &pl),
                    f.gs->ring_cf, f.gs->tree_cf[0], f.gs->tree_cf[1]);
    }
    fixture_free(&f);
  }
  shortcuts = 0;
}
END_TEST

/* ---- the table ---- */

START_TEST(test_table)
{
  ck_assert_ptr_null(rp_algo_row_of(DT_OP_BROADCAST, DT_ALGO_RING));
  ck_assert_ptr_null(rp_algo_row_of(DT_OP_ALLTOALL, DT_ALGO_TREE));
  ck_assert_ptr_nonnull(rp_algo_row_of(DT_OP_BARRIER, DT_ALGO_TREE)); /* a barrier runs as an all-reduce */
  dt_platform p = nodes_platform(2, 2, 2, 1);
  fixture f;
  fixture_first(&f, &p, 4, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_NVLS)->why_not(&f.p, f.gs),
                   "it needs 'intra_node.nvls' on an NVSwitch node");
  f.p.nvls = 1;
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_NVLS)->why_not(&f.p, f.gs),
                   "it runs on one node only (nvls-tree spans nodes)");
  ck_assert_ptr_null(rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_NVLS_TREE)->why_not(&f.p, f.gs));
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_COLLNET)->why_not(&f.p, f.gs), "it needs 'network.sharp'");
  /* 2 members per node: PAT runs with NVLS inside the nodes from 2.31 (multi-RPN PAT), not before, not without */
  ck_assert_ptr_null(rp_algo_row_of(DT_OP_ALLGATHER, DT_ALGO_PAT)->why_not(&f.p, f.gs));
  f.p.nvls = 0;
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLGATHER, DT_ALGO_PAT)->why_not(&f.p, f.gs),
                   "it needs one member per node, or NVSwitch nodes with 'intra_node.nvls' (NCCL >= 2.31)");
  f.p.nvls = 1;
  f.p.nccl_version = 23007;
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLGATHER, DT_ALGO_PAT)->why_not(&f.p, f.gs),
                   "it needs one member per node (NCCL's PAT before 2.31)");
  f.p.nccl_version = 22203;
  ck_assert_str_eq(rp_algo_row_of(DT_OP_ALLGATHER, DT_ALGO_PAT)->why_not(&f.p, f.gs),
                   "it needs the NCCL model of 2.23 or later ('nccl.version')");
  /* the ring's plan: 2(n-1) steps of S/n, NCCL's 2(N-1) network steps */
  rp_plan pl = {0};
  rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_RING)->plan(f.gs, DT_OP_ALLREDUCE, 4096, 0, &pl);
  ck_assert_int_eq(pl.nphases, 1);
  ck_assert_int_eq(pl.ph[0].steps, 6);
  ck_assert_int_eq(pl.ph[0].inter, 2);
  ck_assert(pl.ph[0].bytes == 1024);
  fixture_free(&f);
  /* NCCL's tuner before 2.23 (2.17.1 to 2.22.3) counted 2N network steps in a ring all-reduce: 4 of the 6 */
  p.nccl_version = 22203;
  fixture_first(&f, &p, 4, DT_OP_ALLREDUCE, DT_ALGO_AUTO);
  pl.nphases = 0;
  rp_algo_row_of(DT_OP_ALLREDUCE, DT_ALGO_RING)->plan(f.gs, DT_OP_ALLREDUCE, 4096, 0, &pl);
  ck_assert_int_eq(pl.ph[0].steps, 6);
  ck_assert_int_eq(pl.ph[0].inter, 4);
  fixture_free(&f);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"ring_allreduce", test_ring_allreduce, DT_PROTO_COUNT},
      {"ring_rs_ag", test_ring_rs_ag, 0},
      {"tree", test_tree, 0},
      {"nvls", test_nvls, 0},
      {"chain", test_chain, 0},
      {"alltoall", test_alltoall, 0},
      {"hier_collnet", test_hier_collnet, 0},
      {"hier_heterogeneous", test_hier_heterogeneous, 0},
      {"nvls_tree", test_nvls_tree, 0},
      {"pat", test_pat, 2},
      {"pat_nvls", test_pat_nvls, 2},
      {"textbook_ring_nodes", test_textbook_ring_nodes, 2},
      {"listings", test_listings, 0},
      {"plan_closed", test_plan_closed, 0},
      {"table", test_table, 0},
  };
  return dt_test_run(dt_test_suite("plan", cases, sizeof cases / sizeof cases[0], 120));
}
