/* The collective cost model as data (docs/replay.md, "Plans"): the table of (op, algorithm) rows -- where each
 * can run, its plan, its note --, the one executor that runs any plan on SimGrid for one member, and the one
 * evaluator that prices a plan on the group's shape for auto (dt_coll_select.c). The patterns a phase runs (who
 * sends how many bytes to whom in one step) are listed by the algorithm families, dt_coll_<family>.c; nothing
 * else in the replay knows what an algorithm costs. */
#include "dt_coll.h"
#include "dt_coll_solve.h"

#include "../common/dt_util.h"
#include "dt_linkload.h"

#include <simgrid/engine.h>

#include <math.h>
#include <stdlib.h>

/* NCCL 2.23: PAT for all-gather and reduce-scatter on one rank per node; 2.31: also across nodes of several ranks
 * with NVLS inside them ("multi-RPN PAT": the 2.31.2 change as aws-ofi-nccl's tuner PR #1394 describes it; its code
 * read in src/tuning/pat.cc at v2.32.3-1, 2.31.2's source not being available) (nccl.version, docs/platform.md) */
#define V_PAT 22300
#define V_PAT_NVLS 23100

/* mailbox tags of the phases (each phase of an instance has its own, so that no two exchange messages) */
#define TAG_RING 0
#define TAG_RS 1000
#define TAG_AG 1001
#define TAG_NVLS 1200
#define TAG_NVLS_DOWN 1201
#define TAG_NVLS_TREE 1300
#define TAG_RAIL 1400 /* + rail */
#define TAG_TREE 2000

/* ---- the patterns ---- */

/* The flows of one step of a phase over the whole group, for a folded class's representative (it alone runs
 * the exchange, every member's flows are recorded). */
static void ring_flows(const rp_gshape *gs, const rp_phase *ph, int32_t **src, int32_t **dst, size_t *nflows)
{
  (void)ph;
  rp_ring_flows(gs, src, dst, nflows);
}

static void tree_flows(const rp_gshape *gs, const rp_phase *ph, int32_t **src, int32_t **dst, size_t *nflows)
{
  rp_tree_flows(gs, ph->arg, src, dst, nflows);
}

typedef struct pattern_ops {
  void (*list)(const rp_inst *x, const rp_phase *ph, rp_listing *L);
  void (*walk)(const rp_inst *x, const rp_phase *ph, const rp_listing *L); /* step fidelity, phases with walk */
  void (*flows)(const rp_gshape *gs, const rp_phase *ph, int32_t **src, int32_t **dst, size_t *nflows);
  int (*closed)(const rp_gshape *gs); /* waited in closed form on this shape whatever the op, or NULL: never */
} pattern_ops;

static const pattern_ops patterns[RP_PAT_COUNT] = {
    [RP_PAT_RING] = {rp_list_ring, NULL, ring_flows, rp_closed_ring},
    [RP_PAT_NODE_RING] = {rp_list_node_ring, NULL, NULL, NULL},
    [RP_PAT_NODE_NEXT] = {rp_list_node_next, NULL, NULL, NULL},
    [RP_PAT_RAILS] = {rp_list_rails, NULL, NULL, NULL},
    [RP_PAT_TREE] = {rp_list_tree, rp_walk_tree, tree_flows, rp_closed_tree},
    [RP_PAT_NODE_TREE] = {rp_list_node_tree, rp_walk_node_tree, NULL, NULL},
    [RP_PAT_CHAIN] = {rp_list_chain, rp_walk_chain, NULL, NULL},
    [RP_PAT_DIRECT] = {rp_list_direct, NULL, NULL, NULL},
    [RP_PAT_PAT] = {rp_list_pat, NULL, NULL, NULL},
};

/* The most sends or receives a member lists in one step of the phase. */
static size_t listing_cap(const rp_gshape *s, const rp_phase *ph)
{
  switch ((rp_pattern)ph->pattern) {
  case RP_PAT_RING:
    return 2 * (size_t)s->nchannels;
  case RP_PAT_RAILS:
    return (size_t)s->max_per_node;
  case RP_PAT_TREE:
    return 4 * (size_t)s->nchannels;
  case RP_PAT_NODE_TREE:
    return 4;
  case RP_PAT_CHAIN:
    return (size_t)s->nchannels;
  case RP_PAT_DIRECT:
    return (size_t)s->n;
  default:
    return 1;
  }
}

/* ---- the plans ---- */

static void add(rp_plan *pl, rp_pattern pat, int arg, int32_t tag, int32_t steps, int32_t depth, int32_t inter,
                double bytes, int walk)
{
  if (pl->nphases >= RP_PLAN_MAX)
    return;
  pl->ph[pl->nphases++] = (rp_phase){(uint8_t)pat, (uint8_t)arg, (uint8_t)walk, tag, steps, depth, inter, bytes};
}

/* all-reduce: 2(n-1) steps of S/n (reduce-scatter then all-gather); reduce-scatter: n-1 steps of S/n;
 * all-gather: n-1 steps of the shard S. NCCL's tuner splits the per-step latencies into nInterSteps network
 * steps and the rest NVLink ones. */
static void plan_ring(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)i;
  int32_t n1 = gs->n > 1 ? gs->n - 1 : 0;
  int32_t steps = kind == DT_OP_ALLREDUCE ? 2 * n1 : n1;
  int32_t inter = (int32_t)rp_ring_inter_steps(gs, kind == DT_OP_ALLREDUCE);
  if (inter > steps)
    inter = steps;
  add(pl, RP_PAT_RING, 0, TAG_RING, steps, 1, inter, kind == DT_OP_ALLGATHER ? S : S / gs->n, 0);
}

/* reduce up the trees, then broadcast down, each pipelined over NCCL's tree depth: the largest node's chain, m - 1
 * NVLink hops, and the D_N = floor(log2 N) network hops of the tree between the nodes (`inter`: its network hops;
 * dt_coll_tree.c) */
static void plan_tree(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)kind;
  (void)i;
  int32_t DN = rp_tree_depth(gs->nnodes), D = gs->max_per_node - 1 + DN;
  add(pl, RP_PAT_TREE, 1, TAG_TREE, 1, D, DN, S, 0);
  add(pl, RP_PAT_TREE, 0, TAG_TREE, 1, D, DN, S, 1);
}

/* one pass through the switch in two steps (reduce, multicast) */
static void plan_nvls(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)gs;
  (void)kind;
  (void)i;
  add(pl, RP_PAT_NODE_NEXT, 0, TAG_NVLS, 2, 1, -1, S / 2, 0);
}

/* the switch pass up, a tree over the nodes per local index carrying S/m, the pass down */
static void plan_nvls_tree(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)kind;
  (void)i;
  int32_t m = gs->max_per_node, D = rp_tree_depth(gs->nnodes);
  add(pl, RP_PAT_NODE_NEXT, 0, TAG_NVLS, 1, 1, -1, S, 0);
  add(pl, RP_PAT_NODE_TREE, 1, TAG_NVLS_TREE, 1, D, -1, S / m, 0);
  add(pl, RP_PAT_NODE_TREE, 0, TAG_NVLS_TREE, 1, D, -1, S / m, 1);
  add(pl, RP_PAT_NODE_NEXT, 0, TAG_NVLS_DOWN, 1, 1, -1, S, 0);
}

/* a ring reduce-scatter in each node (S/m_x per step), the rails across nodes, a ring all-gather in each node;
 * m_x is member i's node's count (the largest node's for the estimate) */
static void plan_hier_rails(const rp_gshape *gs, double S, int32_t i, int collnet, rp_plan *pl)
{
  int32_t m = i >= 0 ? gs->node_first[gs->node_of[i] + 1] - gs->node_first[gs->node_of[i]] : gs->max_per_node;
  int32_t N = gs->nnodes, P = gs->max_per_node;
  add(pl, RP_PAT_NODE_RING, 0, TAG_RS, m - 1, 1, -1, S / m, 0);
  if (collnet)
    add(pl, RP_PAT_RAILS, 1, TAG_RAIL, 2, 1, -1, S / P / 2, 0);
  else
    add(pl, RP_PAT_RAILS, 0, TAG_RAIL, 2 * (N - 1), 1, -1, S / P / N, 0);
  add(pl, RP_PAT_NODE_RING, 0, TAG_AG, m - 1, 1, -1, S / m, 0);
}

static void plan_hier(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)kind;
  plan_hier_rails(gs, S, i, 0, pl);
}

static void plan_collnet(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)kind;
  plan_hier_rails(gs, S, i, 1, pl);
}

/* one step pipelined over the chain's n - 1 hops, from the root (broadcast) or toward it (reduce) */
static void plan_chain(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)i;
  add(pl, RP_PAT_CHAIN, kind == DT_OP_REDUCE, 0, 1, gs->n - 1, -1, S, 1);
}

static void plan_direct(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)gs;
  (void)kind;
  (void)i;
  add(pl, RP_PAT_DIRECT, 0, 0, 1, 1, -1, S, 0);
}

/* ceil(log2 N) steps between the nodes, each its own phase (the peers change), of min(d, N - d) shards; with m > 1
 * members per node (2.31+) an NVLS pass inside the node: after the exchange for an all-gather (each GPU multicasts
 * the N shards its exchange gathered: its port carries N shards up and the other (m - 1) N down, the larger), before
 * it for a reduce-scatter (the switch reduces each GPU's N partial shards from all m inputs: its port carries its
 * whole input S up and N shards down, the larger) */
static void plan_pat(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl)
{
  (void)i;
  int ag = kind == DT_OP_ALLGATHER;
  double shard = ag ? S : S / gs->n; /* all-gather: S is the shard */
  int32_t N = gs->nnodes, m = gs->max_per_node;
  int K = rp_pat_steps(N);
  if (m > 1 && !ag)
    add(pl, RP_PAT_NODE_NEXT, 0, TAG_NVLS, 1, 1, -1, S, 0);
  for (int s = 0; s < K; s++)
    add(pl, RP_PAT_PAT, s, s, 1, 1, -1, shard, 0);
  if (m > 1 && ag)
    add(pl, RP_PAT_NODE_NEXT, 0, TAG_NVLS, 1, 1, -1, (double)(m - 1) * N * shard, 0);
}

/* ---- where each can run ---- */

static const char *anywhere(const dt_platform *p, const rp_gshape *gs)
{
  (void)p;
  (void)gs;
  return NULL;
}

static const char *why_not_nvls(const dt_platform *p, const rp_gshape *gs)
{
  if (!p->nvls || p->intra_kind != DT_INTRA_NVSWITCH)
    return "it needs 'intra_node.nvls' on an NVSwitch node";
  return gs->nnodes == 1 ? NULL : "it runs on one node only (nvls-tree spans nodes)";
}

static const char *why_not_nvls_tree(const dt_platform *p, const rp_gshape *gs)
{
  if (!p->nvls || p->intra_kind != DT_INTRA_NVSWITCH)
    return "it needs 'intra_node.nvls' on NVSwitch nodes";
  if (gs->nnodes < 2)
    return "it needs a group on two or more nodes";
  return gs->min_per_node == gs->max_per_node ? NULL : "it needs the same number of members on every node";
}

static const char *why_not_hier(const dt_platform *p, const rp_gshape *gs)
{
  (void)p;
  return gs->nnodes > 1 ? NULL : "it needs a group on two or more nodes";
}

static const char *why_not_collnet(const dt_platform *p, const rp_gshape *gs)
{
  if (!p->sharp)
    return "it needs 'network.sharp'";
  return gs->nnodes > 1 ? NULL : "it needs a group on two or more nodes";
}

static const char *why_not_pat(const dt_platform *p, const rp_gshape *gs)
{
  if (!p->nccl || p->nccl_version < V_PAT) /* NCCL_PAT_ENABLE's default: one GPU per node, from 2.23 */
    return "it needs the NCCL model of 2.23 or later ('nccl.version')";
  if (gs->nnodes < 2)
    return "it needs a group on two or more nodes";
  if (gs->max_per_node == 1)
    return NULL;
  /* 2.31 (ncclPatEnable, src/tuning/pat.cc at v2.32.3-1): several ranks per node need the NVLS transport, and every
   * node as many local ranks as NVLS has heads (one per GPU with its own NIC, as dtsim reads it) */
  if (p->nccl_version < V_PAT_NVLS)
    return "it needs one member per node (NCCL's PAT before 2.31)";
  if (!p->nvls || p->intra_kind != DT_INTRA_NVSWITCH)
    return "it needs one member per node, or NVSwitch nodes with 'intra_node.nvls' (NCCL >= 2.31)";
  if (gs->min_per_node != gs->max_per_node)
    return "it needs the same number of members on every node";
  return gs->nics_used >= gs->max_per_node ? NULL : "it needs a NIC of its own for every member (NVLS heads)";
}

/* ---- the table ---- */

static const char NOTE_RING[] = "a ring per channel over the group (in group order; node by node on the NCCL model), "
                                "2(n-1) steps of S/n for an all-reduce, n-1 steps for a reduce-scatter (S/n) or an "
                                "all-gather (the shard)";
static const char NOTE_TREE[] = "NCCL's tree: per channel a chain through each node in ring order and a double binary "
                                "tree between the nodes' heads, each of its two trees half the bytes: reduce up, "
                                "broadcast down, every edge streaming";
static const char NOTE_NVLS[] = "NVLink SHARP: each GPU sends its bytes into the switch once and gets the reduced "
                                "bytes back once";
static const char NOTE_NVLS_TREE[] = "NVLS inside each node, a double binary tree between the nodes per local GPU "
                                     "carrying S/m";
static const char NOTE_HIER[] = "ring reduce-scatter in each node, a ring all-reduce per rail across nodes, ring "
                                "all-gather in each node";
static const char NOTE_COLLNET[] = "as hier, but each rail is reduced in the network (SHARP): up to the leaf switch "
                                   "once and back once";
static const char NOTE_PAT[] = "ceil(log2 N) exchanges between the nodes at doubling (all-gather) or halving "
                               "(reduce-scatter) distance per local GPU, with an NVLS pass inside the nodes when they "
                               "hold several members";
static const char NOTE_CHAIN[] = "a pipelined chain per channel from (broadcast) or toward (reduce) the root";
static const char NOTE_DIRECT[] = "one direct flow per member pair, aggregated per (member, node) pair when a group "
                                  "spanning nodes would need more than 4096 flows";

/* Indexed by (op kind as the algorithms run it, algorithm); a row without a plan is absent. `other` and barrier
 * run as all-reduces (a barrier of zero bytes). */
#define ROW(k, a, why, plan, note) [k][a] = {k, a, why, plan, note}
static const rp_algo_row rows[DT_OP_COUNT][DT_ALGO_COUNT] = {
    ROW(DT_OP_ALLREDUCE, DT_ALGO_RING, anywhere, plan_ring, NOTE_RING),
    ROW(DT_OP_ALLREDUCE, DT_ALGO_TREE, anywhere, plan_tree, NOTE_TREE),
    ROW(DT_OP_ALLREDUCE, DT_ALGO_NVLS, why_not_nvls, plan_nvls, NOTE_NVLS),
    ROW(DT_OP_ALLREDUCE, DT_ALGO_NVLS_TREE, why_not_nvls_tree, plan_nvls_tree, NOTE_NVLS_TREE),
    ROW(DT_OP_ALLREDUCE, DT_ALGO_HIER, why_not_hier, plan_hier, NOTE_HIER),
    ROW(DT_OP_ALLREDUCE, DT_ALGO_COLLNET, why_not_collnet, plan_collnet, NOTE_COLLNET),
    ROW(DT_OP_REDUCESCATTER, DT_ALGO_RING, anywhere, plan_ring, NOTE_RING),
    ROW(DT_OP_REDUCESCATTER, DT_ALGO_PAT, why_not_pat, plan_pat, NOTE_PAT),
    ROW(DT_OP_ALLGATHER, DT_ALGO_RING, anywhere, plan_ring, NOTE_RING),
    ROW(DT_OP_ALLGATHER, DT_ALGO_PAT, why_not_pat, plan_pat, NOTE_PAT),
    ROW(DT_OP_BROADCAST, DT_ALGO_CHAIN, anywhere, plan_chain, NOTE_CHAIN),
    ROW(DT_OP_REDUCE, DT_ALGO_CHAIN, anywhere, plan_chain, NOTE_CHAIN),
    ROW(DT_OP_ALLTOALL, DT_ALGO_DIRECT, anywhere, plan_direct, NOTE_DIRECT),
};
#undef ROW

dt_op_kind rp_algo_kind(dt_op_kind kind)
{
  return kind == DT_OP_OTHER || kind == DT_OP_BARRIER ? DT_OP_ALLREDUCE : kind;
}

const rp_algo_row *rp_algo_row_of(dt_op_kind kind, dt_algo algo)
{
  kind = rp_algo_kind(kind);
  if ((unsigned)kind >= DT_OP_COUNT || (unsigned)algo >= DT_ALGO_COUNT || !rows[kind][algo].plan)
    return NULL;
  return &rows[kind][algo];
}

/* ---- the executor ---- */

/* A folded class's representative: it alone runs the class's instances (rp_fold_plan). */
static int folded_rep(const rp_inst *x)
{
  const rp_ctx *c = x->c;
  return c->fold && c->fold_cls[c->t->groups[x->g].ranks[0]] == x->g;
}

/* A phase's exchange waited in closed form: lat + whole(bytes / eff) / rate, with `before` and `after` (s) in
 * the same single wait, and the same transfers recorded by the per-link accounting as the flows would have. */
static void closed_exchange(const rp_inst *x, const rp_phase *ph, const rp_listing *L, double before, double after)
{
  const pattern_ops *po = &patterns[ph->pattern];
  rp_ctx *c = x->c;
  if (folded_rep(x) && po->flows) {
    double b = before > 0 ? before : 0, start = rp_now() + b;
    double wait = rp_closed_time(x, L->cf_bytes, L->cf_lat, L->cf_rate);
    if (c->linkload) { /* the group's flows of this pattern are a flow set of the accounting, listed once */
      uint64_t key = (uint64_t)(uint32_t)x->g << 16 | (uint64_t)ph->pattern << 8 | ph->arg;
      int32_t set = dt_linkload_set_find(c->linkload, key);
      if (set < 0) {
        int32_t *src, *dst;
        size_t nf;
        po->flows(x->gs, ph, &src, &dst, &nf);
        for (size_t f = 0; f < nf; f++) {
          src[f] = rp_gpu_of_member(c, x->g, src[f]);
          dst[f] = rp_gpu_of_member(c, x->g, dst[f]);
        }
        set = dt_linkload_set_new(c->linkload, key, nf, src, dst);
        free(src);
        free(dst);
      }
      dt_linkload_add_set(c->linkload, set, L->cf_bytes, start, start + wait, x->op->kind, x->g);
    }
    rp_sleep(b + wait + (after > 0 ? after : 0));
  } else if (L->ns > 0) {
    rp_closed_wait(x, L->sends, L->ns, L->cf_lat, L->cf_rate, before, after);
  } else { /* only receives: they end with every other flow of the phase */
    rp_sleep((before > 0 ? before : 0) + rp_closed_time(x, L->cf_bytes, L->cf_lat, L->cf_rate) +
             (after > 0 ? after : 0));
  }
}

static void exchange(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  if (L->closed)
    closed_exchange(x, ph, L, 0, 0);
  else
    rp_xfer(x, L->sends, L->ns, L->tags, L->nr);
}

/* The flow merge's latency after a phase's transfer: the route latency of each pipelined hop after the first and
 * every hop's per-step latency, hops = steps + depth - 1 (a ring on its NCCL split: `inter` network steps). */
static double flow_tail(const rp_phase *ph, double alpha, double h, double hop, double net_hop)
{
  int32_t hops = ph->steps + ph->depth - 1;
  if (ph->inter >= 0)
    return (double)(hops - 1) * alpha + (double)(hops - ph->inter) * hop + (double)ph->inter * net_hop;
  return (double)(hops - 1) * alpha + (double)hops * h;
}

int rp_plan_closed(const rp_gshape *gs, const rp_plan *pl)
{
  int any = 0;
  for (int k = 0; k < pl->nphases; k++) {
    const rp_phase *ph = &pl->ph[k];
    if (ph->steps <= 0)
      continue;
    if (!patterns[ph->pattern].closed || !patterns[ph->pattern].closed(gs))
      return 0;
    any = 1;
  }
  return any;
}

size_t rp_plan_listing_cap(const rp_gshape *s, const rp_phase *ph)
{
  return listing_cap(s, ph);
}

double rp_plan_flow_list(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  L->ns = L->nr = 0;
  L->after = -1;
  patterns[ph->pattern].list(x, ph, L);
  for (size_t s = 0; s < L->ns; s++)
    L->sends[s].bytes *= (double)ph->steps;
  L->cf_bytes *= (double)ph->steps;
  return L->after >= 0 ? L->after : flow_tail(ph, L->alpha, L->h, x->hop, x->net_hop);
}

#define STACK_LIST 64

void rp_plan_run(const rp_inst *x, const rp_plan *pl)
{
  /* exact shortcut: an exclusive group's instance whose flows differ, evaluated and waited (dt_coll_solve.c) */
  if (rp_solve_plan_wait(x, pl))
    return;
  rp_send stack_sends[STACK_LIST];
  int32_t stack_tags[STACK_LIST];
  int fixed_paid = 0, counted = 0;
  for (int k = 0; k < pl->nphases; k++) {
    const rp_phase *ph = &pl->ph[k];
    if (ph->steps <= 0)
      continue;
    size_t cap = listing_cap(x->gs, ph);
    rp_listing L = {0};
    L.sends = cap <= STACK_LIST ? stack_sends : dt_xmalloc(sizeof *L.sends * cap);
    L.tags = cap <= STACK_LIST ? stack_tags : dt_xmalloc(sizeof *L.tags * cap);
    L.after = -1;
    patterns[ph->pattern].list(x, ph, &L);
    double before = 0;
    if (!fixed_paid) { /* the fixed latency: slept first, or merged into a closed wait that takes it */
      fixed_paid = 1;
      if (L.closed && L.merge)
        before = x->fixed;
      else
        rp_sleep(x->fixed);
    }
    if (L.closed && !counted && x->i == 0) {
      counted = 1;
      x->c->closed_instances[x->op->kind]++;
    }
    if (x->fid == DT_FIDELITY_STEP && L.after < 0) {
      /* step: every step its own exchange, then its per-step latency; a pipeline's latency walks it */
      for (int32_t s = 0; s < ph->steps; s++) {
        exchange(x, ph, &L);
        rp_sleep(L.h);
      }
      if (ph->walk && patterns[ph->pattern].walk)
        patterns[ph->pattern].walk(x, ph, &L);
    } else {
      /* flow: one transfer carrying every step's bytes (its own route latency is the first hop's), then the
       * other hops' latency; an exchange with the same latency at both fidelities (after >= 0) waits that */
      double tail = L.after >= 0 ? L.after : flow_tail(ph, L.alpha, L.h, x->hop, x->net_hop);
      for (size_t s = 0; s < L.ns; s++)
        L.sends[s].bytes *= (double)ph->steps;
      L.cf_bytes *= (double)ph->steps;
      if (L.closed && L.merge) {
        closed_exchange(x, ph, &L, before, tail);
      } else {
        exchange(x, ph, &L);
        rp_sleep(tail);
      }
    }
    if (L.sends != stack_sends)
      free(L.sends);
    if (L.tags != stack_tags)
      free(L.tags);
  }
  if (!fixed_paid)
    rp_sleep(x->fixed);
}

/* ---- the analytical evaluation (auto's estimate) ---- */

/* One phase on the group's shape: its first hop's latency, the flow merge's latency of the other hops, and the
 * busiest member's bytes over the pattern's bottleneck bandwidth, added to *t in that order. */
static void phase_estimate(const dt_platform *p, const rp_gshape *gs, const rp_phase *ph, rp_costs k, double *t)
{
  double N = gs->nnodes, n = gs->n, m = gs->max_per_node;
  double ai = gs->alpha_intra, an = gs->alpha_net, Bi = gs->bw_intra, Bn = gs->bw_net, e = k.eff;
  /* the group's largest latency and per-step latency (a group on several nodes has hops of both kinds) */
  double amax = N > 1 && an > ai ? an : ai, hmax = N > 1 && k.net_hop > k.hop ? k.net_hop : k.hop;
  double vol = (double)ph->steps * ph->bytes; /* the busiest member's bytes in the phase */
  double first, alpha, h, B;
  switch ((rp_pattern)ph->pattern) {
  case RP_PAT_RING:
    /* the bottleneck hop's own latency: a NIC route when the ring's bandwidth is the NICs' or it has no hop
     * inside a node; then each later step the rings' mean hop latency on the NCCL model, their largest without */
    B = rp_ring_bw(gs);
    first = N > 1 && (B < Bi || gs->max_per_node == 1) ? an : ai;
    alpha = p->nccl ? gs->ring_alpha_mean : gs->ring_alpha;
    h = hmax;
    break;
  case RP_PAT_NODE_RING:
  case RP_PAT_NODE_NEXT:
    first = alpha = ai;
    h = k.hop;
    B = Bi;
    break;
  case RP_PAT_RAILS: /* a member of the smallest node holds P / m_min rails */
    first = alpha = an;
    h = k.net_hop;
    B = Bn;
    vol *= m / gs->min_per_node;
    break;
  case RP_PAT_TREE:
    /* the pipeline's route latencies and per-step latencies, then the busiest port's bytes; across nodes at least
     * the ring's bandwidth per phase, as NCCL's tuner prices the tree: its graph's per-channel bandwidth, which
     * the search sets from the NIC for the tree and the ring alike (ncclTopoTuneModel, src/graph/tuning.cc, at
     * v2.17.1-1 and v2.30.7-1: busBw = nChannels x bw for both, x 0.92 for the tree, algbw = busBw / 2) */
    *t += (double)(ph->depth - ph->inter) * (ai + k.hop) + (double)ph->inter * (an + k.net_hop);
    *t += fmax(rp_tree_port_time(gs, ph->bytes), N > 1 ? ph->bytes / rp_ring_bw(gs) : 0) / e;
    return;
  case RP_PAT_NODE_TREE:
  case RP_PAT_PAT:
    first = alpha = an;
    h = k.net_hop;
    B = Bn;
    if (ph->pattern == RP_PAT_PAT) {     /* step s moves min(d, N - d) shards */
      int32_t d = (int32_t)1 << ph->arg; /* all-gather's order; reduce-scatter's reverses it: the same sum */
      vol *= d < gs->nnodes - d ? d : gs->nnodes - d;
    }
    break;
  case RP_PAT_CHAIN:
    first = alpha = amax;
    h = hmax;
    B = rp_ring_bw(gs);
    break;
  case RP_PAT_DIRECT:
    /* n - 1 p2p rounds on the NCCL model, each its hop's latency; one route latency without it; the bytes to
     * the node's other members and to the other nodes' over their bandwidths */
    *t += p->nccl ? (m - 1) * (ai + k.hop) + (n - m) * (an + k.net_hop) : amax;
    *t += fmax((m - 1) / n * ph->bytes / Bi, (n - m) / n * ph->bytes / Bn) / e;
    return;
  default:
    return;
  }
  *t += first;
  *t += flow_tail(ph, alpha, h, k.hop, k.net_hop);
  *t += vol / (e * B);
}

double rp_plan_estimate(const dt_platform *p, const rp_gshape *gs, const rp_plan *pl, rp_costs k)
{
  double t = k.fixed;
  for (int i = 0; i < pl->nphases; i++)
    if (pl->ph[i].steps > 0)
      phase_estimate(p, gs, &pl->ph[i], k, &t);
  return t;
}
