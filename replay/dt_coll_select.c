/* `auto`: the choice of algorithm and protocol per instance, as NCCL's tuner makes it (src/graph/tuning.cc,
 * read, not copied): every (algorithm, protocol) the op and the platform allow gets an estimated time,
 * latency(algorithm, protocol, nodes, ranks) + bytes / bandwidth(algorithm, protocol, channels), and the least
 * wins. The estimate of a candidate is its plan (the row of dt_coll_plan.c the replay runs) priced on the group's
 * shape by rp_plan_estimate; the NCCL model's costs of a candidate are computed here, once, for both. Without the
 * NCCL model (no `nccl:` section) the choice is the textbook one: ring, chain, direct. */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* NCCL releases from which a tuning term applies (nccl.version, docs/platform.md), from reading
 * src/graph/tuning.cc and src/enqueue.cc at each tag: */
#define V_NET_OVERHEAD 21800 /* 2.18: multi-node rings pay at least the network post overhead per step */
#define V_LL_INTRA 21800     /* up to 2.17: LL's NVLink step latency x 1.8 across nodes (removed in 2.18.1) */
#define LL_INTRA_FACTOR 1.8
#define V_PPN1 22300         /* 2.23: one rank per node pays the tree's NET latency per network step */
#define V_STRICT 22400       /* 2.24: an algorithm forced by NCCL_ALGO that cannot run is an error */

/* NCCL's PAT latency model (ncclTopoTuneModel, src/graph/tuning.cc, 2.23-2.30.7; ncclTuningPatModelInit,
 * src/tuning/pat.cc at v2.32.3-1, the same for several ranks per node): baseLat + log2(nNodes) x interLat / 3.5 +
 * 2.8 us x nRanks ("still a linear part") */
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
  /* the tree's network hops cost the tree's NET latency in every release (hwLat[NET][TREE], which
   * ppn1_net_hop_latency holds); from 2.23 one member per node makes every algorithm's network step cost it (the
   * tuner's, not p2p's) */
  if (gs->nnodes > 1 && (a == DT_ALGO_TREE || (gs->max_per_node == 1 && v >= V_PPN1 && a != DT_ALGO_DIRECT)))
    k.net_hop = p->protocols[pr].ppn1_net_hop_latency * p->latency_factor;
  /* NCCL up to 2.17 prices LL's intra-node steps 1.8 times dearer when the communicator spans nodes (intraLat in
   * ncclTopoTuneModel, src/graph/tuning.cc, v2.9.6-1 to v2.17.1-1), for the ring, the tree and CollNet alike */
  if (gs->nnodes > 1 && v < V_LL_INTRA && pr == DT_PROTO_LL &&
      (a == DT_ALGO_RING || a == DT_ALGO_TREE || a == DT_ALGO_COLLNET))
    k.hop *= LL_INTRA_FACTOR;
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

/* Whether algorithm a can run op kind on this platform and group shape (its row of the plan table). */
static int runnable(const rp_ctx *c, dt_op_kind kind, const rp_gshape *gs, dt_algo a)
{
  const rp_algo_row *row = rp_algo_row_of(kind, a);
  return row && !row->why_not(c->p, gs);
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
  dt_op_kind kind = rp_algo_kind(op_kind);
  const rp_algo_row *row = rp_algo_row_of(kind, a);
  if (!row || row->why_not(c->p, gs))
    return -1;
  if (a == DT_ALGO_PAT && pr != DT_PROTO_SIMPLE) /* NCCL runs PAT with Simple only */
    return -1;
  /* the plan the replay runs, for the member that finishes last, priced on the group's shape */
  rp_plan pl;
  pl.nphases = 0;
  row->plan(gs, kind, S, -1, &pl);
  return rp_plan_estimate(c->p, gs, &pl, rp_costs_group(c->p, a, pr, kind, gs));
}

int rp_auto_candidate(const dt_platform *p, const rp_gshape *gs, dt_algo a)
{
  /* PAT on several ranks per node (NCCL 2.31+) is opt-in only: ncclTuningPatModelSim (src/tuning/pat.cc,
   * v2.32.3-1) gives it FLT_MAX / 2, so the tuner never picks it; NCCL_ALGO (--algo pat) runs it */
  if (a == DT_ALGO_PAT && gs->max_per_node > 1)
    return 0;
  /* hier is dtsim's own: NCCL's tuner weighs tree, ring, CollNet, NVLS, NVLS-tree and PAT (ncclTopoTuneModel,
   * src/graph/tuning.cc, v2.17.1-1 to v2.30.7-1), so on the NCCL model auto never picks it; --algo hier runs it */
  if (a == DT_ALGO_HIER && p->nccl)
    return 0;
  return 1;
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
      if (!rp_auto_candidate(c->p, gs, (dt_algo)a))
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
  const rp_algo_row *row = rp_algo_row_of(kind, a);
  const char *why = row ? row->why_not(c->p, gs)
                        : "dtsim has no such algorithm for this op (docs/replay.md, Algorithms)";
  return why ? why : "it cannot run here";
}

const char *rp_forced_why_not(const rp_ctx *c, const dt_op *op, const rp_gshape *gs)
{
  dt_op_kind kind = rp_algo_kind(op->kind);
  return runnable(c, kind, gs, c->algo) ? "PAT runs with the Simple protocol only" : why_not(c, kind, gs, c->algo);
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
