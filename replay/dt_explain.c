/* --explain's rows: per (op kind, group, per-rank size, choice), the group's shape, every candidate (algorithm,
 * protocol) with the estimate NCCL's tuner model gives it (dt_coll_select.c) and its size-independent part, and the
 * simulated times of the instances. Rows are found through a small open-addressing table keyed by dt_mix64; their
 * number is bounded (MAX_ROWS), instances beyond it are counted as dropped. sim/dt_explain.c writes them. */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 65536
#define MAX_P2P_ROWS 4096

struct rp_explain {
  dt_explain_row *rows;
  size_t n, cap;
  int32_t *slots; /* 1 + row index, 0: empty; nslots a power of two, at most half full */
  size_t nslots;
  uint64_t dropped;
  dt_explain_p2p *p2p; /* send/recv rows, by first appearance; few (sizes x route shapes): found by a linear
                          search that starts at the last row found */
  size_t np2p, p2p_cap, p2p_last;
  uint64_t p2p_dropped;
};

struct rp_explain *rp_explain_new(void)
{
  struct rp_explain *x = dt_xcalloc(1, sizeof *x);
  x->nslots = 1024;
  x->slots = dt_xcalloc(x->nslots, sizeof *x->slots);
  return x;
}

static uint64_t key_hash(dt_op_kind kind, int32_t g, uint64_t bytes, dt_algo a, dt_proto pr)
{
  return dt_mix64(dt_mix64(bytes) ^ ((uint64_t)(uint32_t)g << 16) ^ ((uint64_t)kind << 8) ^ ((uint64_t)a << 4) ^
                  (uint64_t)pr);
}

static int same(const dt_explain_row *r, dt_op_kind kind, int32_t g, uint64_t bytes, int a, int pr)
{
  return r->kind == kind && r->group == g && r->bytes == bytes && r->algo == a && r->proto == pr;
}

static void rehash(struct rp_explain *x)
{
  free(x->slots);
  x->nslots *= 2;
  x->slots = dt_xcalloc(x->nslots, sizeof *x->slots);
  for (size_t i = 0; i < x->n; i++) {
    const dt_explain_row *r = &x->rows[i];
    size_t h = key_hash(r->kind, r->group, r->bytes, (dt_algo)r->algo, r->proto < 0 ? DT_PROTO_COUNT : (dt_proto)r->proto) &
               (x->nslots - 1);
    while (x->slots[h])
      h = (h + 1) & (x->nslots - 1);
    x->slots[h] = (int32_t)(i + 1);
  }
}

int32_t rp_explain_choose(rp_ctx *c, const dt_op *op, int32_t g, const rp_gshape *gs, dt_algo a, dt_proto pr)
{
  struct rp_explain *x = c->explain;
  const dt_platform *p = c->p;
  int prx = p->nccl ? (int)pr : -1;
  uint64_t bytes = op->kind == DT_OP_BARRIER ? 0 : op->kind == DT_OP_ALLTOALL ? rp_alltoall_bytes(op) : op->bytes;
  size_t h = key_hash(op->kind, g, bytes, a, prx < 0 ? DT_PROTO_COUNT : pr) & (x->nslots - 1);
  for (; x->slots[h]; h = (h + 1) & (x->nslots - 1))
    if (same(&x->rows[x->slots[h] - 1], op->kind, g, bytes, (int)a, prx))
      return x->slots[h];
  if (x->n == MAX_ROWS) {
    x->dropped++;
    return 0;
  }
  x->rows = dt_grow(x->rows, &x->cap, x->n, sizeof *x->rows);
  dt_explain_row *r = &x->rows[x->n];
  memset(r, 0, sizeof *r);
  r->kind = op->kind;
  r->group = g;
  r->bytes = bytes;
  r->n = gs->n;
  r->nnodes = gs->nnodes;
  r->max_per_node = gs->max_per_node;
  r->nchannels = gs->nchannels;
  r->algo = (int)a;
  r->proto = prx;
  r->alpha_s = gs->ring_alpha;
  r->bw_Bps = rp_ring_bw(gs);
  r->alpha_intra_s = gs->alpha_intra;
  r->alpha_net_s = gs->alpha_net;
  r->bw_intra_Bps = gs->bw_intra;
  r->bw_net_Bps = gs->bw_net;
  rp_costs k = rp_costs_of(p, a, pr);
  r->fixed_s = k.fixed;
  r->eff = k.eff;
  r->est_s = rp_estimate_S(c, op->kind, (double)bytes, gs, a, pr);
  r->est_lat_s = rp_estimate_S(c, op->kind, 0, gs, a, pr);
  /* the candidates auto weighs (without the NCCL model only the choice: the textbook has no other) */
  for (int ca = DT_ALGO_AUTO + 1; ca < DT_ALGO_COUNT && p->nccl; ca++)
    for (int cp = 0; cp < DT_PROTO_COUNT && r->ncand < DT_EXPLAIN_MAX_CANDS && rp_auto_candidate(p, gs, (dt_algo)ca);
         cp++) {
      double t = rp_estimate_S(c, op->kind, (double)bytes, gs, (dt_algo)ca, (dt_proto)cp);
      if (t < 0)
        continue;
      r->cand[r->ncand++] = (dt_explain_cand){ca, cp, t, rp_estimate_S(c, op->kind, 0, gs, (dt_algo)ca, (dt_proto)cp)};
    }
  if (!p->nccl)
    r->cand[r->ncand++] = (dt_explain_cand){(int)a, -1, r->est_s, r->est_lat_s};
  x->n++;
  x->slots[h] = (int32_t)x->n;
  int32_t id = (int32_t)x->n;
  if (2 * x->n > x->nslots)
    rehash(x);
  return id;
}

/* The price of row r's textbook plan on a textbook shape (dt_explain_textbook_of): hops of latency a (intra and
 * net) and bandwidths Bi inside a node and Bn across, per-rank size S. */
static double textbook_price(const dt_explain_row *r, double a, double Bi, double Bn, double S)
{
  static const dt_platform textbook_platform; /* no nccl: section: no protocol or tuner terms */
  dt_op_kind kind = rp_algo_kind(r->kind);
  const rp_algo_row *row = rp_algo_row_of(kind, rp_default_algo(kind));
  if (!row)
    return 0;
  rp_gshape gs = {0};
  gs.n = r->n;
  gs.nchannels = 1;
  gs.nics_used = 1;
  gs.alpha_intra = gs.alpha_net = gs.ring_alpha = gs.ring_alpha_mean = a;
  gs.bw_intra = Bi;
  gs.bw_net = Bn;
  if (kind == DT_OP_ALLTOALL && r->nnodes > 1) { /* the group's nodes: bytes inside them and bytes that leave */
    gs.nnodes = r->nnodes;
    gs.min_per_node = gs.max_per_node = r->max_per_node;
  } else { /* one node: every hop alike */
    gs.nnodes = 1;
    gs.min_per_node = gs.max_per_node = r->n;
  }
  rp_plan pl;
  pl.nphases = 0;
  row->plan(&gs, kind, S, -1, &pl);
  return rp_plan_estimate(&textbook_platform, &gs, &pl, (rp_costs){0, 0, 0, 1});
}

dt_explain_textbook dt_explain_textbook_of(const dt_explain_row *r)
{
  dt_explain_textbook tb = {r->alpha_s, r->bw_Bps, 0, 0, 0};
  if (rp_algo_kind(r->kind) == DT_OP_ALLTOALL) {
    double Bi = r->bw_intra_Bps, Bn = r->bw_net_Bps;
    tb.alpha = r->nnodes > 1 ? r->alpha_net_s : r->alpha_intra_s;
    tb.B = Bi;
    if (r->nnodes > 1 && Bn > 0) { /* the network's share, unless the bytes inside the node take longer */
      double net = textbook_price(r, 0, Bi > 0 ? Bi / Bn : INFINITY, 1, 1);
      if (net == textbook_price(r, 0, INFINITY, 1, 1)) {
        tb.B = Bn;
        tb.net = 1;
        tb.kb = net;
      }
    }
    if (!tb.net)
      tb.kb = tb.B > 0 ? textbook_price(r, 0, 1, Bn > 0 ? Bn / tb.B : INFINITY, 1) : 0;
    tb.ka = textbook_price(r, 1, 1, 1, 0);
    return tb;
  }
  tb.ka = textbook_price(r, 1, 1, 1, 0);
  tb.kb = textbook_price(r, 0, 1, 1, 1);
  return tb;
}

void rp_explain_done(rp_ctx *c, int32_t xrow, double t, int m)
{
  struct rp_explain *x = c->explain;
  if (!x || xrow <= 0)
    return;
  dt_explain_row *r = &x->rows[xrow - 1];
  if (r->count == 0 || t < r->min_s)
    r->min_s = t;
  if (r->count == 0 || t > r->max_s)
    r->max_s = t;
  r->count += (uint64_t)m;
  r->time_s += t * m;
}

static int same_p2p(const dt_explain_p2p *r, uint64_t bytes, uint64_t npairs, int cross, int nhops, double alpha,
                    double bw, double eff, double cost)
{
  return (npairs ? r->batch_bytes : r->bytes) == bytes && r->batch_pairs == npairs &&
         (r->src_node != r->dst_node) == cross && r->nhops == nhops && r->alpha_s == alpha && r->bw_Bps == bw &&
         r->eff == eff && r->cost_s == cost;
}

void rp_explain_p2p(rp_ctx *c, int32_t src, int32_t dst, uint64_t bytes, uint64_t npairs, double t, int m)
{
  struct rp_explain *x = c->explain;
  if (!x)
    return;
  int32_t gs = c->gpu_of_rank[src], gd = c->gpu_of_rank[dst];
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double alpha = 0, bw = 0, eff = 1;
  int nh = dt_topology_route(c->topo, gs, gd, hops, &alpha, &bw);
  if (nh < 0 || nh > DT_EXPLAIN_P2P_HOPS) {
    x->p2p_dropped += (uint64_t)m;
    return;
  }
  const char *proto = NULL;
  uint64_t each = npairs ? (bytes + npairs / 2) / npairs : bytes; /* a batch queue: the bytes of one of its pairs */
  double cost = rp_p2p_cost(c, src, dst, each, &eff, &proto);
  int gpn = c->p->gpus_per_node, cross = gs / gpn != gd / gpn;
  size_t k = x->p2p_last;
  for (size_t i = 0; i < x->np2p; i++, k = k + 1 == x->np2p ? 0 : k + 1)
    if (same_p2p(&x->p2p[k], bytes, npairs, cross, nh, alpha, bw, eff, cost))
      break;
  if (x->np2p == 0 || !same_p2p(&x->p2p[k], bytes, npairs, cross, nh, alpha, bw, eff, cost)) {
    if (x->np2p == MAX_P2P_ROWS) {
      x->p2p_dropped += (uint64_t)m;
      return;
    }
    x->p2p = dt_grow(x->p2p, &x->p2p_cap, x->np2p, sizeof *x->p2p);
    dt_explain_p2p *r = &x->p2p[x->np2p];
    memset(r, 0, sizeof *r);
    r->bytes = each;
    r->batch_pairs = npairs;
    r->batch_bytes = npairs ? bytes : 0;
    r->src = src;
    r->dst = dst;
    r->src_node = gs / gpn;
    r->dst_node = gd / gpn;
    r->nhops = nh;
    for (int h = 0; h < nh; h++) {
      r->hop_link[h] = hops[h].link;
      r->hop_dir[h] = hops[h].dir;
      const dt_link *l = dt_topology_link(c->topo, hops[h].link);
      if (l && l->bandwidth < dt_topology_link(c->topo, hops[r->slowest].link)->bandwidth)
        r->slowest = h;
    }
    char name[48];
    dt_topology_link_name(c->topo, hops[r->slowest].link, name, sizeof name);
    snprintf(r->slowest_name, sizeof r->slowest_name, "%s %s", name, hops[r->slowest].dir ? "down" : "up");
    r->alpha_s = alpha;
    r->bw_Bps = bw;
    r->eff = eff;
    r->cost_s = cost;
    r->proto = proto;
    r->min_s = r->max_s = t;
    k = x->np2p++;
  }
  dt_explain_p2p *r = &x->p2p[k];
  x->p2p_last = k;
  r->min_s = t < r->min_s ? t : r->min_s;
  r->max_s = t > r->max_s ? t : r->max_s;
  r->count += (uint64_t)m;
  r->time_s += t * m;
}

void rp_explain_take(rp_ctx *c, dt_stats *s)
{
  struct rp_explain *x = c->explain;
  if (!x)
    return;
  if (s) {
    s->explain = x->rows;
    s->nexplain = x->n;
    s->explain_dropped = x->dropped;
    s->explain_p2p = x->p2p;
    s->nexplain_p2p = x->np2p;
    s->explain_p2p_dropped = x->p2p_dropped;
  } else {
    free(x->rows);
    free(x->p2p);
  }
  free(x->slots);
  free(x);
  c->explain = NULL;
}
