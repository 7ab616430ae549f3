/* `auto`: the choice of algorithm and protocol per instance, as NCCL's tuner makes it (src/graph/tuning.cc,
 * read, not copied): every (algorithm, protocol) the op and the platform allow gets an estimated time,
 * latency(algorithm, protocol, nodes, ranks) + bytes / bandwidth(algorithm, protocol, channels), and the least
 * wins. The estimates are the contention-free closed forms of docs/replay.md on the group's shape (its
 * intra- and inter-node latency and bandwidth, its rings' mean hop latency), with NCCL's split of a ring's
 * per-step costs into intra- and inter-node ones. Without the NCCL model (no `nccl:` section) the choice is the textbook one: ring, chain,
 * direct. */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* NCCL releases from which a tuning term applies (nccl.version, docs/platform.md), from reading
 * src/graph/tuning.cc and src/enqueue.cc at each tag: */
#define V_NET_OVERHEAD 21800 /* 2.18: multi-node rings pay at least the network post overhead per step */
#define V_PPN1 22300         /* 2.23: one rank per node pays the tree's NET latency per network step */
#define V_PAT 22300          /* 2.23: PAT for all-gather and reduce-scatter */
#define V_STRICT 22400       /* 2.24: an algorithm forced by NCCL_ALGO that cannot run is an error */

/* NCCL's PAT latency model (ncclTopoTuneModel, src/graph/tuning.cc, 2.23-2.30.7): baseLat + log2(nNodes) x
 * interLat / 3.5 + 2.8 us x nRanks ("still a linear part") */
#define PAT_NET_DIVISOR 3.5
#define PAT_RANK_LATENCY 2.8e-6

dt_algo rp_default_algo(dt_op_kind kind)
{
  switch (rp_algo_kind(kind)) {
  case DT_OP_BROADCAST:
  case DT_OP_REDUCE:
    return DT_ALGO_CHAIN;
  case DT_OP_ALLTOALL:
    return DT_ALGO_DIRECT;
  default:
    return DT_ALGO_RING;
  }
}

rp_costs rp_costs_of(const dt_platform *p, dt_algo a, dt_proto pr)
{
  rp_costs k = {0, 0, 0, 1};
  if (!p->nccl)
    return k;
  const dt_proto_model *pm = &p->protocols[pr];
  const dt_algo_model *am = &p->algorithms[a];
  k.fixed = (pm->latency + am->latency) * p->latency_factor;
  k.hop = pm->hop_latency * p->latency_factor;
  k.net_hop = pm->net_hop_latency * p->latency_factor;
  k.eff = (pm->efficiency > 0 ? pm->efficiency : 1) * (am->efficiency > 0 ? am->efficiency : 1);
  return k;
}

/* NCCL's network post overhead (getNetOverhead, src/graph/tuning.cc): 1 us on Intel and non-x86 hosts, 2 us on
 * AMD ones; Simple pays it 3 times. s, with the latency factor. */
static double net_overhead(const dt_platform *p, dt_proto pr)
{
  double o = p->host_cpu == DT_CPU_AMD ? 2e-6 : 1e-6;
  return (pr == DT_PROTO_SIMPLE ? 3 * o : o) * p->latency_factor;
}

rp_costs rp_costs_group(const dt_platform *p, dt_algo a, dt_proto pr, dt_op_kind kind, const rp_gshape *gs)
{
  rp_costs k = rp_costs_of(p, a, pr);
  if (!p->nccl)
    return k;
  int v = p->nccl_version;
  kind = rp_algo_kind(kind);
  if (gs->nnodes > 1 && gs->max_per_node == 1 && v >= V_PPN1 && a != DT_ALGO_DIRECT) /* the tuner's, not p2p's */
    k.net_hop = p->protocols[pr].ppn1_net_hop_latency * p->latency_factor;
  if (gs->nnodes > 1 && v >= V_NET_OVERHEAD && a == DT_ALGO_RING &&
      (kind == DT_OP_ALLREDUCE || kind == DT_OP_ALLGATHER || kind == DT_OP_REDUCESCATTER))
    k.hop = fmax(k.hop, net_overhead(p, pr));
  if (a == DT_ALGO_PAT) { /* its own base latency (not the protocol's), its linear part, its log-step latency */
    k.fixed = (p->algorithms[a].latency + PAT_RANK_LATENCY * gs->n) * p->latency_factor;
    k.hop /= PAT_NET_DIVISOR;
    k.net_hop /= PAT_NET_DIVISOR;
  }
  return k;
}

int rp_pat_steps(int32_t n)
{
  int k = 0;
  while (k < 30 && ((int32_t)1 << k) < n)
    k++;
  return k;
}

rp_ring_plan rp_ring_plan_of(dt_op_kind kind, const rp_gshape *gs, double S)
{
  rp_ring_plan r;
  size_t n1 = gs->n > 1 ? (size_t)(gs->n - 1) : 0;
  r.steps = kind == DT_OP_ALLREDUCE ? 2 * n1 : n1;
  r.inter = rp_ring_inter_steps(gs, kind == DT_OP_ALLREDUCE);
  if (r.inter > r.steps)
    r.inter = r.steps;
  r.chunk = kind == DT_OP_ALLGATHER ? S : S / gs->n; /* all-gather: S is the shard */
  return r;
}

double rp_ring_rest(const rp_gshape *gs, rp_ring_plan plan, rp_costs k, int nccl)
{
  if (plan.steps == 0)
    return 0;
  if (!nccl)
    return (double)(plan.steps - 1) * gs->ring_alpha;
  return (double)(plan.steps - 1) * gs->ring_alpha_mean + (double)(plan.steps - plan.inter) * k.hop +
         (double)plan.inter * k.net_hop;
}

/* Whether algorithm a can run op kind on this platform and group shape. */
static int runnable(const rp_ctx *c, dt_op_kind kind, const rp_gshape *gs, dt_algo a)
{
  const dt_platform *p = c->p;
  if (!rp_algo_has(kind, a))
    return 0;
  switch (a) {
  case DT_ALGO_NVLS:
    return p->nvls && p->intra_kind == DT_INTRA_NVSWITCH && gs->nnodes == 1;
  case DT_ALGO_NVLS_TREE:
    return p->nvls && p->intra_kind == DT_INTRA_NVSWITCH && gs->nnodes > 1 && gs->min_per_node == gs->max_per_node;
  case DT_ALGO_HIER:
    return gs->nnodes > 1;
  case DT_ALGO_COLLNET:
    return p->sharp && gs->nnodes > 1;
  case DT_ALGO_PAT: /* NCCL_PAT_ENABLE's default: one GPU per node, from 2.23 */
    return p->nccl && p->nccl_version >= V_PAT && gs->nnodes > 1 && gs->max_per_node == 1;
  default:
    return 1;
  }
}

double rp_ring_bw(const rp_gshape *gs)
{
  double C = gs->nchannels, nics = gs->nics_used, m = gs->max_per_node;
  return gs->nnodes > 1 ? fmin(gs->bw_intra, fmin(C, nics) * gs->bw_net * m / nics) : gs->bw_intra;
}

double rp_estimate(const rp_ctx *c, const dt_op *op, const rp_gshape *gs, dt_algo a, dt_proto pr)
{
  double S = op->kind == DT_OP_BARRIER ? 0 : op->kind == DT_OP_ALLTOALL ? (double)rp_alltoall_bytes(op)
                                                                         : (double)op->bytes;
  return rp_estimate_S(c, op->kind, S, gs, a, pr);
}

double rp_estimate_S(const rp_ctx *c, dt_op_kind op_kind, double S, const rp_gshape *gs, dt_algo a, dt_proto pr)
{
  const dt_platform *p = c->p;
  dt_op_kind kind = rp_algo_kind(op_kind);
  if (!runnable(c, kind, gs, a))
    return -1;
  if (a == DT_ALGO_PAT && pr != DT_PROTO_SIMPLE) /* NCCL runs PAT with Simple only */
    return -1;
  rp_costs k = rp_costs_group(p, a, pr, kind, gs);
  double L = k.fixed, hi = k.hop, hn = k.net_hop, e = k.eff;
  double n = gs->n, N = gs->nnodes, m = gs->max_per_node, mmin = gs->min_per_node;
  double ai = gs->alpha_intra + hi, an = gs->alpha_net + hn;
  double Bi = gs->bw_intra, Bn = gs->bw_net;
  double amax = N > 1 && an > ai ? an : ai;
  /* a ring's inter-node bandwidth: one NIC per channel, at most the NICs the node's members use */
  double Bring = rp_ring_bw(gs);
  double Btree = N > 1 ? fmin(Bi, Bn) : Bi;
  switch (a) {
  case DT_ALGO_RING: {
    /* the plan the replay runs (rp_ring_run) and its flow-fidelity charge: the bottleneck hop's own latency,
     * then rp_ring_rest for the other steps, and the volume over the bottleneck bandwidth */
    rp_ring_plan plan = rp_ring_plan_of(kind, gs, S);
    double vol = (double)plan.steps * plan.chunk;
    double first = N > 1 && Bring < Bi ? gs->alpha_net : gs->alpha_intra;
    return L + first + rp_ring_rest(gs, plan, k, 1) + vol / (e * Bring);
  }
  case DT_ALGO_TREE: {
    double D = rp_tree_depth(gs->n);
    return L + 2 * D * amax + 2 * S / (e * Btree);
  }
  case DT_ALGO_NVLS:
    return L + 2 * ai + S / (e * Bi);
  case DT_ALGO_NVLS_TREE: {
    double D = rp_tree_depth(gs->nnodes);
    return L + 2 * ai + 2 * S / (e * Bi) + 2 * D * an + 2 * (S / m) / (e * Bn);
  }
  case DT_ALGO_HIER:
    return L + 2 * ((m - 1) * ai + (m - 1) / m * S / (e * Bi)) + 2 * (N - 1) * an +
           2 * (N - 1) / N * (S / mmin) / (e * Bn);
  case DT_ALGO_COLLNET:
    return L + 2 * ((m - 1) * ai + (m - 1) / m * S / (e * Bi)) + 2 * an + (S / mmin) / (e * Bn);
  case DT_ALGO_CHAIN:
    return L + (n - 1) * amax + S / (e * Bring);
  case DT_ALGO_PAT: /* dt_coll_pat.c: ceil(log2 n) steps, n - 1 shards in all, over the NIC */
    return L + rp_pat_steps(gs->n) * an + (n - 1) * (kind == DT_OP_ALLGATHER ? S : S / n) / (e * Bn);
  case DT_ALGO_DIRECT: /* n - 1 p2p rounds, each its hop's latency (dt_coll_alltoall.c) */
    return L + (m - 1) * ai + (n - m) * an + fmax((m - 1) / n * S / Bi, (n - m) / n * S / Bn) / e;
  default:
    return -1;
  }
}

void rp_select(rp_ctx *c, const dt_op *op, const rp_gshape *gs, dt_algo *algo, dt_proto *proto)
{
  dt_op_kind kind = rp_algo_kind(op->kind);
  *algo = rp_default_algo(kind);
  *proto = DT_PROTO_SIMPLE;
  if (c->proto >= 0 && c->proto < DT_PROTO_COUNT)
    *proto = (dt_proto)c->proto;
  if (c->algo != DT_ALGO_AUTO) {
    if (runnable(c, kind, gs, c->algo) && !(c->algo == DT_ALGO_PAT && c->proto >= 0 && c->proto != DT_PROTO_SIMPLE))
      *algo = c->algo;
    if (c->proto >= 0 || !c->p->nccl)
      return;
    /* forced algorithm, free protocol: the protocol with the least estimate */
    double best = -1;
    for (int pr = 0; pr < DT_PROTO_COUNT; pr++) {
      double t = rp_estimate(c, op, gs, *algo, (dt_proto)pr);
      if (t >= 0 && (best < 0 || t < best)) {
        best = t;
        *proto = (dt_proto)pr;
      }
    }
    return;
  }
  if (!c->p->nccl)
    return;
  double best = -1;
  for (int a = DT_ALGO_AUTO + 1; a < DT_ALGO_COUNT; a++)
    for (int pr = 0; pr < DT_PROTO_COUNT; pr++) {
      if (c->proto >= 0 && pr != c->proto)
        continue;
      double t = rp_estimate(c, op, gs, (dt_algo)a, (dt_proto)pr);
      if (t >= 0 && (best < 0 || t < best)) { /* ties: the earlier algorithm and protocol */
        best = t;
        *algo = (dt_algo)a;
        *proto = (dt_proto)pr;
      }
    }
}

/* The reason algorithm a cannot run op kind on group shape gs, for the error of a strict --algo. */
static const char *why_not(const rp_ctx *c, dt_op_kind kind, const rp_gshape *gs, dt_algo a)
{
  const dt_platform *p = c->p;
  if (!rp_algo_has(kind, a))
    return "dtsim has no such algorithm for this op (docs/replay.md, Algorithms)";
  switch (a) {
  case DT_ALGO_NVLS:
    return !p->nvls || p->intra_kind != DT_INTRA_NVSWITCH ? "it needs 'intra_node.nvls' on an NVSwitch node"
                                                           : "it runs on one node only (nvls-tree spans nodes)";
  case DT_ALGO_NVLS_TREE:
    return !p->nvls || p->intra_kind != DT_INTRA_NVSWITCH ? "it needs 'intra_node.nvls' on NVSwitch nodes"
           : gs->nnodes < 2                               ? "it needs a group on two or more nodes"
                                                          : "it needs the same number of members on every node";
  case DT_ALGO_HIER:
    return "it needs a group on two or more nodes";
  case DT_ALGO_COLLNET:
    return !p->sharp ? "it needs 'network.sharp'" : "it needs a group on two or more nodes";
  case DT_ALGO_PAT:
    return !p->nccl || p->nccl_version < V_PAT ? "it needs the NCCL model of 2.23 or later ('nccl.version')"
           : gs->nnodes < 2                    ? "it needs a group on two or more nodes"
                                               : "it needs one member per node (NCCL's PAT default)";
  default:
    return "it cannot run here";
  }
}

int rp_select_check(rp_ctx *c, dt_error *err)
{
  const dt_platform *p = c->p;
  const dt_trace *t = c->t;
  if (c->algo == DT_ALGO_AUTO || !p->nccl || p->nccl_version < V_STRICT)
    return DT_OK;
  /* each (group, op kind) once: a bit per kind */
  uint32_t *seen = dt_xcalloc(t->ngroups + 1, sizeof *seen);
  int rc = DT_OK;
  for (int32_t r = 0; r < t->nranks && rc == DT_OK; r++) {
    const dt_rank *body = dt_trace_rank_body(t, r);
    for (size_t s = 0; s < body->nstreams && rc == DT_OK; s++)
      for (size_t i = 0; i < body->streams[s].nops && rc == DT_OK; i++) {
        const dt_op *op = &body->streams[s].ops[i];
        if (!dt_op_is_collective(op->kind))
          continue;
        int32_t g = dt_trace_op_group(t, r, op);
        if (g < 0 || (size_t)g >= t->ngroups || (seen[g] >> op->kind & 1u))
          continue;
        seen[g] |= 1u << op->kind;
        const dt_group *gr = &t->groups[g];
        if (gr->nranks < 2)
          continue;
        const rp_gshape *gs = rp_gshape_of(c, g);
        dt_op_kind kind = rp_algo_kind(op->kind);
        if (runnable(c, kind, gs, c->algo) &&
            !(c->algo == DT_ALGO_PAT && c->proto >= 0 && c->proto != DT_PROTO_SIMPLE))
          continue;
        const char *why = runnable(c, kind, gs, c->algo) ? "PAT runs with the Simple protocol only"
                                                         : why_not(c, kind, gs, c->algo);
        char ver[32];
        int vp = p->nccl_version % 100;
        snprintf(ver, sizeof ver, vp ? "%d.%d.%d" : "%d.%d", p->nccl_version / 10000, p->nccl_version / 100 % 100, vp);
        rc = dt_error_set(err, op->file < t->nfiles ? t->files[op->file] : "", op->line, 0,
                          "algorithm '%s' cannot run %s on group '%s' (%d members on %d node%s): %s (the platform "
                          "follows NCCL %s, which refuses an algorithm that cannot run, as NCCL >= 2.24 does; use "
                          "--algo auto, or 'nccl.version' below 2.24 to fall back to the op's default)",
                          dt_algo_name(c->algo), dt_op_kind_name(op->kind), gr->name ? gr->name : "?", (int)gs->n,
                          (int)gs->nnodes, gs->nnodes == 1 ? "" : "s", why, ver);
      }
  }
  free(seen);
  return rc;
}
