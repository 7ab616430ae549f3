/* Exact shortcuts (docs/replay.md, "Shortcuts"): an exchange of a collective whose flows nothing else can share
 * is waited for in closed form instead of being simulated as SimGrid flows, when SimGrid's answer is known in
 * advance. Two facts make that answer known:
 *   - exclusivity, from the whole trace before the run: the links the group's flows can cross are used by no
 *     other group or send/recv pair, and two instances of the group never overlap (each member issues the
 *     group's ops from one stream, never in a batch, so instance k + 1 starts after every member completed k);
 *   - uniformity, from the group's routes: every flow of the exchange starts at once with the same bytes and the
 *     same route latency, and each one crosses a link where it gets the smallest fair share of all the links
 *     (bandwidth / flows on it). Then SimGrid's max-min sharing (CM02, no TCP window, every flow the same sharing
 *     penalty: dt_sg_platform.cpp shares a link equally, as InfiniBand's credit-based flow control and NVLink's
 *     arbitration do) gives every flow that share from start to end, and each completes after latency + bytes /
 *     share. The same latency is still needed: a flow takes no bandwidth until its latency is paid.
 * Only NVSwitch platforms qualify: there a route between nodes never crosses a GPU port (dt_topology.h), so the
 * GPU ports of a node are used only by the flows between its GPUs. --exact turns the shortcuts off.
 * A group inside one node whose GPU ports other traffic also uses (TP 4 on 8-GPU nodes: the DP rings' hop inside
 * the node) is exclusive instance by instance when that traffic provably runs at other times: every flow that
 * crosses GPU port q has q's rank as an endpoint and runs while that rank's op is in flight (from its issue to its
 * completion), so an instance whose op is ordered, on every member, before or after every such op of the member
 * (stream order and after= edges) never meets it (docs/replay.md, "Time-separated instances"). */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_NONE (-1)
#define OWNER_MANY (-2)
#define OWNER_P2P (-3)

/* Two links per dt_topology link: the hop's direction is part of the SimGrid link (split-duplex). */
static size_t dir_link(const dt_hop *h)
{
  return (size_t)h->link * 2 + h->dir;
}

static void claim(int32_t *owner, size_t slot, int32_t who)
{
  if (owner[slot] == OWNER_NONE)
    owner[slot] = who;
  else if (owner[slot] != who)
    owner[slot] = OWNER_MANY;
}

/* ---- time separation: which ops of a rank are ordered before which (stream order and after= edges) ---- */

/* For every op (s, i) of a rank's body: hb[(off[s] + i) * ns + q] = the last op of stream q that has completed
 * whenever (s, i) is issued (-1: none), from stream order, after= edges and their closure. Monotone in i. */
typedef struct hb_body {
  const dt_rank *body;
  size_t ns;
  size_t *off; /* [ns + 1] */
  int32_t *hb; /* [off[ns] * ns] */
} hb_body;

static void hb_free(hb_body *h)
{
  free(h->off);
  free(h->hb);
  memset(h, 0, sizeof *h);
}

/* One step of the closure: the ops [b, e) of stream s (one op, or one batch: issued together after every edge of
 * its ops). 0 when an edge points at an op not computed yet (unless `force`: then the edge is left out, which
 * only loses orderings, never claims a false one). */
static int hb_step(hb_body *h, const size_t *done, size_t s, size_t b, size_t e, int force)
{
  const dt_rank *body = h->body;
  size_t ns = h->ns;
  int32_t *v = &h->hb[(h->off[s] + b) * ns];
  for (size_t k = b; k < e; k++) {
    const dt_op *op = &body->streams[s].ops[k];
    for (uint32_t d = 0; d < op->ndeps; d++) {
      int32_t ts = op->deps[d].stream, ti = op->deps[d].index;
      if (ts < 0 || (size_t)ts >= ns || ti < 0 || (size_t)ti >= body->streams[ts].nops)
        continue;
      if ((size_t)ts == s && (size_t)ti >= b)
        continue; /* an edge into its own batch or ahead in its stream: never satisfied (a deadlock) */
      if (done[ts] <= (size_t)ti && !force)
        return 0;
    }
  }
  for (size_t q = 0; q < ns; q++)
    v[q] = b > 0 ? h->hb[(h->off[s] + b - 1) * ns + q] : -1;
  if (b > 0)
    v[s] = (int32_t)(b - 1);
  for (size_t k = b; k < e; k++) {
    const dt_op *op = &body->streams[s].ops[k];
    for (uint32_t d = 0; d < op->ndeps; d++) {
      int32_t ts = op->deps[d].stream, ti = op->deps[d].index;
      if (ts < 0 || (size_t)ts >= ns || ti < 0 || (size_t)ti >= body->streams[ts].nops ||
          done[ts] <= (size_t)ti || ((size_t)ts == s && (size_t)ti >= b))
        continue;
      const int32_t *w = &h->hb[(h->off[ts] + (size_t)ti) * ns];
      for (size_t q = 0; q < ns; q++)
        if (w[q] > v[q])
          v[q] = w[q];
      if (ti > v[ts])
        v[ts] = ti;
    }
  }
  for (size_t k = b + 1; k < e; k++)
    memcpy(&h->hb[(h->off[s] + k) * ns], v, sizeof *v * ns);
  return 1;
}

static void hb_build(hb_body *h, const dt_rank *body)
{
  hb_free(h);
  size_t ns = body->nstreams;
  h->body = body;
  h->ns = ns;
  h->off = dt_xmalloc(sizeof *h->off * (ns + 1));
  h->off[0] = 0;
  for (size_t s = 0; s < ns; s++)
    h->off[s + 1] = h->off[s] + body->streams[s].nops;
  h->hb = dt_xmalloc(sizeof *h->hb * (h->off[ns] * ns + 1));
  size_t *done = dt_xcalloc(ns + 1, sizeof *done);
  /* streams advance in turns until every op is placed; edges pointing at ops not placed yet wait for a later
   * turn, and when no stream can advance (a cycle: a deadlocking trace) the rest is placed without them */
  for (int force = 0, moved = 1, left = 1; left; force = !moved) {
    moved = left = 0;
    for (size_t s = 0; s < ns; s++) {
      const dt_stream *st = &body->streams[s];
      while (done[s] < st->nops) {
        size_t b = done[s], e = b + 1;
        if (st->ops[b].batch >= 0)
          while (e < st->nops && st->ops[e].batch == st->ops[b].batch)
            e++;
        if (!hb_step(h, done, s, b, e, force))
          break;
        done[s] = e;
        moved = 1;
        force = 0;
      }
      left |= done[s] < st->nops;
    }
  }
  free(done);
}

/* Nodes where a group has two or more members (its flows inside a node start and end there), sorted. */
typedef struct mates {
  size_t *off;    /* [ngroups + 1] */
  int32_t *nodes; /* [off[ngroups]] */
} mates;

static int cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static void mates_build(mates *m, const rp_ctx *c, int G)
{
  const dt_trace *t = c->t;
  size_t ng = t->ngroups, total = 0, cap = 0;
  m->off = dt_xmalloc(sizeof *m->off * (ng + 1));
  m->nodes = NULL;
  int32_t *tmp = NULL;
  for (size_t g = 0; g < ng; g++) {
    const dt_group *gr = &t->groups[g];
    m->off[g] = total;
    if (gr->nranks > cap) {
      cap = gr->nranks;
      tmp = dt_xrealloc(tmp, sizeof *tmp * cap);
    }
    for (size_t i = 0; i < gr->nranks; i++)
      tmp[i] = c->gpu_of_rank[gr->ranks[i]] / G;
    qsort(tmp, gr->nranks, sizeof *tmp, cmp_i32);
    for (size_t i = 0; i + 1 < gr->nranks; i++)
      if (tmp[i] == tmp[i + 1] && (total == m->off[g] || m->nodes[total - 1] != tmp[i])) {
        m->nodes = dt_xrealloc(m->nodes, sizeof *m->nodes * (total + 1));
        m->nodes[total++] = tmp[i];
      }
  }
  m->off[ng] = total;
  free(tmp);
}

static int mates_on(const mates *m, int32_t g, int32_t node)
{
  size_t lo = m->off[g], hi = m->off[g + 1];
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->nodes[mid] < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->off[g + 1] && m->nodes[lo] == node;
}

static void busy_set(uint64_t **busy, int32_t g, int64_t k)
{
  if (k < 0)
    return;
  size_t w = (size_t)k / 64 + 1, have = busy[g] ? (size_t)busy[g][0] : 0;
  if (w > have) {
    size_t n = have ? have : 4;
    while (n < w)
      n *= 2;
    busy[g] = dt_xrealloc(busy[g], sizeof **busy * (n + 1));
    memset(busy[g] + have + 1, 0, sizeof **busy * (n - have));
    busy[g][0] = n;
  }
  busy[g][w] |= (uint64_t)1 << ((uint64_t)k % 64);
}

int rp_closed_busy(const uint64_t *busy, int64_t k)
{
  if (!busy)
    return 0;
  if (k < 0)
    return 1;
  size_t w = (size_t)k / 64 + 1;
  return w <= busy[0] && (busy[w] >> ((uint64_t)k % 64) & 1);
}

static int cmp_need(const void *a, const void *b)
{
  const struct rp_need *x = a, *y = b;
  if (x->g != y->g)
    return x->g < y->g ? -1 : 1;
  if (x->k != y->k)
    return x->k < y->k ? -1 : 1;
  return (x->q > y->q) - (x->q < y->q);
}

void rp_sep_need_free(rp_sep_need *need)
{
  free(need->off);
  free(need->e);
  need->off = NULL;
  need->e = NULL;
}

/* The instances of the candidate groups (cand[g]: inside one node, one stream per member, never batched) that
 * may meet other traffic on their members' GPU ports: an instance is busy when, on one of its members, an op
 * whose flows can cross that member's port (a collective of another group with two or more members on its node,
 * a send or receive with a peer on its node) is ordered neither before nor after it. For each such member and
 * stream, `need` gets the ops of that stream that must have completed for the instance to be separated at run
 * time (rp_closed_ready): up to the last of those ops. */
static void time_separate(const rp_ctx *c, const uint8_t *cand, int G, uint64_t **busy, rp_sep_need *need)
{
  size_t ne = 0, ecap = 0;
  need->off = dt_xcalloc((size_t)c->t->nranks + 1, sizeof *need->off);
  need->e = NULL;
  const dt_trace *t = c->t;
  size_t ng = t->ngroups;
  uint8_t *cand_rank = dt_xcalloc((size_t)t->nranks + 1, 1);
  for (size_t g = 0; g < ng; g++)
    if (cand[g])
      for (size_t i = 0; i < t->groups[g].nranks; i++)
        cand_rank[t->groups[g].ranks[i]] = 1;
  mates m;
  mates_build(&m, c, G);
  hb_body h = {0};
  size_t *pu = NULL, pu_cap = 0;
  for (int32_t r = 0; r < t->nranks; r++) {
    size_t e0 = ne;
    need->off[r + 1] = ne;
    if (!cand_rank[r])
      continue;
    const dt_rank *body = dt_trace_rank_body(t, r);
    size_t ns = body->nstreams;
    if (ns < 2)
      continue; /* one stream: every op ordered after the one before */
    if (h.body != body)
      hb_build(&h, body);
    /* port users, counted: pu[off[s] + s + i] = port users among ops 0 .. i - 1 of stream s */
    size_t npu = h.off[ns] + ns;
    if (npu > pu_cap) {
      pu_cap = npu;
      pu = dt_xrealloc(pu, sizeof *pu * pu_cap);
    }
    int32_t node = c->gpu_of_rank[r] / G;
    for (size_t s = 0; s < ns; s++) {
      const dt_stream *st = &body->streams[s];
      size_t *p = &pu[h.off[s] + s];
      p[0] = 0;
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        int user = 0;
        if (dt_op_is_collective(op->kind)) {
          int32_t g = dt_trace_op_group(t, r, op);
          user = g >= 0 && (size_t)g < ng && mates_on(&m, g, node);
        } else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV) {
          int32_t peer = dt_trace_op_peer(t, r, op);
          user = peer >= 0 && peer < t->nranks && peer != r && c->gpu_of_rank[peer] / G == node;
        }
        p[i + 1] = p[i] + (size_t)user;
      }
    }
    for (size_t s = 0; s < ns; s++) {
      const dt_stream *st = &body->streams[s];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        if (!dt_op_is_collective(op->kind))
          continue;
        int32_t g = dt_trace_op_group(t, r, op);
        if (g < 0 || (size_t)g >= ng || !cand[g])
          continue;
        const int32_t *hx = &h.hb[(h.off[s] + i) * ns];
        for (size_t q = 0; q < ns; q++) {
          if (q == s)
            continue;
          size_t nq = body->streams[q].nops;
          /* ops of q up to hx[q] completed before it; from the first whose issue follows its completion on */
          size_t lo = (size_t)(hx[q] + 1), hi = nq;
          while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (h.hb[(h.off[q] + mid) * ns + s] >= (int32_t)i)
              hi = mid;
            else
              lo = mid + 1;
          }
          const size_t *p = &pu[h.off[q] + q];
          if (p[lo] > p[hx[q] + 1]) {
            busy_set(busy, g, op->match);
            size_t last = lo;
            while (p[last] == p[last - 1]) /* the last of them: p[last] - p[last - 1] = 1 */
              last--;
            if (ne == ecap) {
              ecap = ecap ? 2 * ecap : 256;
              need->e = dt_xrealloc(need->e, sizeof *need->e * ecap);
            }
            need->e[ne++] = (struct rp_need){g, (int32_t)q, op->match, last};
          }
        }
      }
    }
    if (ne > e0) /* need->e is NULL while no rank has needed anything */
      qsort(need->e + e0, ne - e0, sizeof *need->e, cmp_need);
    need->off[r + 1] = ne;
  }
  hb_free(&h);
  free(pu);
  free(m.off);
  free(m.nodes);
  free(cand_rank);
}

uint8_t *rp_closed_exclusive(const rp_ctx *c, uint64_t ***busy_out, rp_sep_need *need)
{
  const dt_platform *p = c->p;
  const dt_trace *t = c->t;
  size_t ng = t->ngroups;
  uint8_t *ok = dt_xcalloc(ng + 1, 1);
  uint64_t **busy = dt_xcalloc(ng + 1, sizeof *busy);
  *busy_out = busy;
  need->off = NULL;
  need->e = NULL;
  if (p->intra_kind != DT_INTRA_NVSWITCH)
    return ok;
  int G = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
  int ngpus = dt_platform_gpu_count(p);
  size_t net = (size_t)ngpus; /* one slot for every link between nodes: NICs and cables */
  int32_t *owner = dt_xmalloc(sizeof *owner * (net + 1));
  for (size_t k = 0; k <= net; k++)
    owner[k] = OWNER_NONE;
  int32_t *count = dt_xcalloc((size_t)(ngpus / G) + 1, sizeof *count);

  /* groups: a group on one node claims its members' GPU ports; a group spanning nodes claims the network and
   * the GPU ports of its members on nodes where it has two or more (its flows inside those nodes) */
  for (size_t g = 0; g < ng; g++) {
    const dt_group *gr = &t->groups[g];
    ok[g] = gr->nranks > 1;
    int multi = 0;
    for (size_t i = 0; i < gr->nranks; i++) {
      int node = c->gpu_of_rank[gr->ranks[i]] / G;
      count[node]++;
      multi |= node != c->gpu_of_rank[gr->ranks[0]] / G;
    }
    if (multi)
      claim(owner, net, (int32_t)g);
    for (size_t i = 0; i < gr->nranks; i++) {
      int32_t gpu = c->gpu_of_rank[gr->ranks[i]];
      if (!multi || count[gpu / G] > 1)
        claim(owner, (size_t)gpu, (int32_t)g);
    }
    for (size_t i = 0; i < gr->nranks; i++)
      count[c->gpu_of_rank[gr->ranks[i]] / G] = 0;
  }

  /* ops: sends claim their route's ports (same node) or the network; a group issued from two streams of one
   * rank, or in a batch, may overlap itself */
  int32_t *last_rank = dt_xmalloc(sizeof *last_rank * (ng + 1));
  size_t *last_stream = dt_xmalloc(sizeof *last_stream * (ng + 1));
  for (size_t g = 0; g < ng; g++)
    last_rank[g] = -1;
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *body = dt_trace_rank_body(t, r);
    for (size_t s = 0; s < body->nstreams; s++) {
      const dt_stream *st = &body->streams[s];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        if (dt_op_is_collective(op->kind)) {
          int32_t g = dt_trace_op_group(t, r, op);
          if (g < 0 || (size_t)g >= ng)
            continue;
          if (op->batch >= 0 || (last_rank[g] == r && last_stream[g] != s))
            ok[g] = 0;
          last_rank[g] = r;
          last_stream[g] = s;
        } else if (op->kind == DT_OP_SEND) {
          int32_t peer = dt_trace_op_peer(t, r, op);
          if (peer < 0 || peer >= t->nranks)
            continue;
          int32_t a = c->gpu_of_rank[r], b = c->gpu_of_rank[peer];
          if (a / G == b / G) {
            claim(owner, (size_t)a, OWNER_P2P);
            claim(owner, (size_t)b, OWNER_P2P);
          } else {
            claim(owner, net, OWNER_P2P);
          }
        }
      }
    }
  }
  free(last_rank);
  free(last_stream);

  /* a group inside one node whose ports other traffic claims (and only that) is a candidate for time separation */
  uint8_t *cand = dt_xcalloc(ng + 1, 1);
  int any = 0;
  for (size_t g = 0; g < ng; g++) {
    const dt_group *gr = &t->groups[g];
    int multi = 0, shared = 0;
    for (size_t i = 0; i < gr->nranks && ok[g]; i++) {
      int32_t gpu = c->gpu_of_rank[gr->ranks[i]];
      multi |= gpu / G != c->gpu_of_rank[gr->ranks[0]] / G;
      shared |= owner[gpu] != OWNER_NONE && owner[gpu] != (int32_t)g;
    }
    if (ok[g] && multi && owner[net] != (int32_t)g)
      ok[g] = 0;
    if (ok[g] && shared) {
      ok[g] = 0;
      cand[g] = !multi;
      any |= cand[g];
    }
  }
  if (any) {
    time_separate(c, cand, G, busy, need);
    for (size_t g = 0; g < ng; g++)
      if (cand[g])
        ok[g] = busy[g] ? 2 : 1;
  }
  free(cand);
  free(owner);
  free(count);
  return ok;
}

int rp_closed_uniform(const rp_ctx *c, int32_t g, size_t nflows, const int32_t *src, const int32_t *dst, double *lat,
                      double *rate)
{
  if (nflows == 0)
    return 0;
  /* flows per link direction in the context's scratch (zero between calls), and the directions touched: the
   * cost follows the flows, not the platform's size (a scan of every link per group was O(groups x links)) */
  uint32_t *count = rp_link_scratch(c);
  size_t *touched = dt_xmalloc(sizeof *touched * nflows * DT_ROUTE_MAX_HOPS), nt = 0;
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double lat0 = -1;
  int ok = 1;
  /* pass 1: flows per link, and one route latency for all */
  for (size_t f = 0; f < nflows && ok; f++) {
    double l = 0;
    int nh = dt_topology_route(c->topo, rp_gpu_of_member(c, g, src[f]), rp_gpu_of_member(c, g, dst[f]), hops, &l,
                               NULL);
    if (nh <= 0) {
      ok = 0;
      break;
    }
    if (lat0 < 0)
      lat0 = l;
    else if (fabs(l - lat0) > 1e-12 * fmax(l, lat0))
      ok = 0;
    for (int h = 0; h < nh; h++)
      if (count[dir_link(&hops[h])]++ == 0)
        touched[nt++] = dir_link(&hops[h]);
  }
  /* pass 2: the smallest fair share m over all links; every flow must cross a link with share m (then max-min
   * gives every flow m, and no flow ever finishes before the others to free bandwidth) */
  double m = INFINITY;
  for (size_t i = 0; i < nt && ok; i++) {
    size_t k = touched[i];
    double share = dt_topology_link(c->topo, k / 2)->bandwidth / count[k];
    if (share < m)
      m = share;
  }
  for (size_t f = 0; f < nflows && ok; f++) {
    int nh = dt_topology_route(c->topo, rp_gpu_of_member(c, g, src[f]), rp_gpu_of_member(c, g, dst[f]), hops, NULL,
                               NULL);
    double fm = INFINITY;
    for (int h = 0; h < nh; h++) {
      size_t k = dir_link(&hops[h]);
      double share = dt_topology_link(c->topo, k / 2)->bandwidth / count[k];
      if (share < fm)
        fm = share;
    }
    if (!(fm <= m * (1 + 1e-12)))
      ok = 0;
  }
  for (size_t i = 0; i < nt; i++)
    count[touched[i]] = 0;
  free(touched);
  if (!ok || !(m > 0) || !isfinite(m))
    return 0;
  *lat = lat0;
  *rate = m;
  return 1;
}

/* ---- folding lock-step ranks ---- */

/* sigma_k(x): the member k of x's class (x is a representative, member 0). */
static int32_t sigma(const rp_ctx *c, int32_t x, int32_t k)
{
  return (int32_t)c->t->groups[c->fold_cls[x]].ranks[k];
}

/* The flow a -> b of the representatives (global ranks) and its images under every sigma_k cross links that map
 * one to one, position by position, with equal bandwidth and latency, and the images of different k never
 * share a link (img: F x nl, own: nl, both zeroed, entries + 1). */
static int flow_symmetric(const rp_ctx *c, int32_t a, int32_t b, int32_t *img, int64_t *own, size_t nl)
{
  dt_hop h0[DT_ROUTE_MAX_HOPS], hk[DT_ROUTE_MAX_HOPS];
  int n0 = dt_topology_route(c->topo, c->gpu_of_rank[a], c->gpu_of_rank[b], h0, NULL, NULL);
  if (n0 < 0)
    return 0;
  for (int32_t k = 0; k < c->fold; k++) {
    int nk = dt_topology_route(c->topo, c->gpu_of_rank[sigma(c, a, k)], c->gpu_of_rank[sigma(c, b, k)], hk, NULL, NULL);
    if (nk != n0)
      return 0;
    for (int h = 0; h < n0; h++) {
      size_t l0 = dir_link(&h0[h]), lk = dir_link(&hk[h]);
      const dt_link *x = dt_topology_link(c->topo, l0 / 2), *y = dt_topology_link(c->topo, lk / 2);
      if (x->bandwidth != y->bandwidth || x->latency != y->latency)
        return 0;
      int32_t *m = &img[(size_t)k * nl + l0];
      int64_t who = (int64_t)k * (int64_t)nl + (int64_t)l0 + 1;
      if ((*m && *m != (int32_t)lk + 1) || (own[lk] && own[lk] != who))
        return 0;
      *m = (int32_t)lk + 1;
      own[lk] = who;
    }
  }
  return 1;
}

/* The algorithms rp_select chose for (group, kind, bytes), remembered: a class's ops repeat few sizes. */
#define FOLD_MEMO 256
typedef struct fold_memo {
  int32_t g; /* + 1, 0: empty */
  int kind, ok;
  uint64_t bytes;
} fold_memo;

/* Whether the collective op on single-node group g will run with a plan waited in closed form (a ring, a tree). */
static int closed_algo(rp_ctx *c, fold_memo *memo, const dt_op *op, int32_t g, const rp_gshape *gs)
{
  fold_memo *m = &memo[dt_mix64((uint64_t)g << 40 ^ (uint64_t)op->kind << 56 ^ op->bytes) & (FOLD_MEMO - 1)];
  if (m->g == g + 1 && m->kind == (int)op->kind && m->bytes == op->bytes)
    return m->ok;
  dt_algo a;
  dt_proto pr;
  rp_select(c, op, gs, &a, &pr);
  const rp_algo_row *row = rp_algo_row_of(op->kind, a);
  int ok = 0;
  if (row) {
    rp_plan pl;
    pl.nphases = 0;
    row->plan(gs, rp_algo_kind(op->kind), (double)op->bytes, 0, &pl);
    ok = rp_plan_closed(gs, &pl);
  }
  *m = (fold_memo){g + 1, (int)op->kind, ok, op->bytes};
  return ok;
}

/* The ops of one body (an op array a template rank and its users share, or a rank's own) that folding looks at,
 * each distinct one once: rp_fold_plan checks every rank against its body's summary instead of against every op
 * (the checks depend only on an op's group, kind and bytes, or on its peer). */
typedef struct fold_set {
  const dt_op **v; /* the first op of each distinct key, in op order */
  size_t n, vcap;
  uint32_t *slot;  /* open addressing: 1 + index into v, 0: empty; cap a power of two */
  size_t cap;
} fold_set;

typedef struct fold_body {
  fold_set coll;   /* collectives, by (group, kind, bytes) */
  fold_set grp;    /* collectives, by group */
  uint8_t *a2a;    /* per grp entry: some collective on it is an all-to-all */
  fold_set p2p;    /* sends and receives, by (peer, kind) */
  fold_set send;   /* sends, by peer */
} fold_body;

enum { KEY_COLL, KEY_GRP, KEY_P2P };

static uint64_t fold_hash(int key, const dt_op *op)
{
  switch (key) {
  case KEY_COLL:
    return dt_mix64((uint64_t)(uint32_t)op->group << 32 ^ (uint64_t)op->kind << 24 ^ dt_mix64(op->bytes));
  case KEY_GRP:
    return dt_mix64((uint64_t)(uint32_t)op->group);
  default:
    return dt_mix64((uint64_t)(uint32_t)op->peer << 8 ^ (uint64_t)op->kind);
  }
}

static int fold_eq(int key, const dt_op *a, const dt_op *b)
{
  switch (key) {
  case KEY_COLL:
    return a->group == b->group && a->kind == b->kind && a->bytes == b->bytes;
  case KEY_GRP:
    return a->group == b->group;
  default:
    return a->peer == b->peer && a->kind == b->kind;
  }
}

/* Adds op to s unless an op with its key is there; returns the index of its key's entry. */
static size_t fold_add(fold_set *s, int key, const dt_op *op)
{
  if (2 * (s->n + 1) > s->cap) { /* rehash at half full */
    size_t cap = s->cap ? s->cap * 2 : 64;
    uint32_t *slot = dt_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < s->n; i++) {
      size_t h = fold_hash(key, s->v[i]) & (cap - 1);
      while (slot[h])
        h = (h + 1) & (cap - 1);
      slot[h] = (uint32_t)i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
  }
  size_t h = fold_hash(key, op) & (s->cap - 1);
  for (; s->slot[h]; h = (h + 1) & (s->cap - 1))
    if (fold_eq(key, s->v[s->slot[h] - 1], op))
      return s->slot[h] - 1;
  s->v = dt_grow(s->v, &s->vcap, s->n, sizeof *s->v);
  s->v[s->n] = op;
  s->slot[h] = (uint32_t)++s->n;
  return s->n - 1;
}

static void fold_set_free(fold_set *s)
{
  free(s->v);
  free(s->slot);
}

/* The summary of body's ops. */
static void fold_body_build(fold_body *b, const dt_rank *body)
{
  memset(b, 0, sizeof *b);
  size_t acap = 0;
  for (size_t s = 0; s < body->nstreams; s++)
    for (size_t i = 0; i < body->streams[s].nops; i++) {
      const dt_op *op = &body->streams[s].ops[i];
      if (dt_op_is_collective(op->kind)) {
        fold_add(&b->coll, KEY_COLL, op);
        size_t k = fold_add(&b->grp, KEY_GRP, op);
        b->a2a = dt_grow(b->a2a, &acap, k, sizeof *b->a2a);
        b->a2a[k] |= rp_algo_kind(op->kind) == DT_OP_ALLTOALL;
      } else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV) {
        fold_add(&b->p2p, KEY_P2P, op);
        if (op->kind == DT_OP_SEND)
          fold_add(&b->send, KEY_P2P, op);
      }
    }
}

static void fold_body_free(fold_body *b)
{
  fold_set_free(&b->coll);
  fold_set_free(&b->grp);
  free(b->a2a);
  fold_set_free(&b->p2p);
  fold_set_free(&b->send);
}

int rp_fold_plan(rp_ctx *c)
{
  const dt_trace *t = c->t;
  const dt_platform *p = c->p;
  size_t ng = t->ngroups, nr = t->nranks > 0 ? (size_t)t->nranks : 0;
  c->fold = 0;
  if (c->fidelity != DT_FIDELITY_FLOW || c->exact || !c->coll || nr < 2)
    return 0;
  int32_t *cls = dt_xmalloc(sizeof *cls * (nr + 1)), *idx = dt_xmalloc(sizeof *idx * (nr + 1));
  int32_t *gimg = NULL, *img = NULL;
  int64_t *own = NULL;
  uint8_t *a2a = dt_xcalloc(ng + 1, 1), *used = dt_xcalloc(ng + 1, 1);
  int ok = 1;
  int32_t F = 0;
  /* each body's distinct ops, summarised once (a generated trace has one body per pipeline stage): every check
   * below is a function of an op's group, kind and bytes or of its peer, so each rank is checked against its
   * body's distinct ones, not against all its ops (that was 15 % of the instructions at 2,048 GPUs) */
  int32_t *body_of = dt_xmalloc(sizeof *body_of * (nr + 1)); /* per owning rank: index into bodies, or -1 */
  fold_body *bodies = NULL;
  size_t nbodies = 0, bodies_cap = 0;
  for (size_t r = 0; r < nr; r++)
    body_of[r] = -1;
#define BODY(r) (&bodies[body_of[t->ranks[r].template_rank >= 0 ? (size_t)t->ranks[r].template_rank : (r)]])
  for (size_t r = 0; r < nr; r++) {
    size_t o = t->ranks[r].template_rank >= 0 ? (size_t)t->ranks[r].template_rank : r;
    if (body_of[o] >= 0)
      continue;
    bodies = dt_grow(bodies, &bodies_cap, nbodies, sizeof *bodies);
    fold_body_build(&bodies[nbodies], dt_trace_rank_body(t, (int32_t)r));
    body_of[o] = (int32_t)nbodies++;
  }
  /* 1. every rank's class: the one exclusive single-node group of its collectives whose ring is waited in closed
   * form; all classes of one size, every collective on them a ring or a tree (the algorithm rp_select will choose:
   * auto on the NCCL model, or --algo) waited in closed form; any other algorithm would run the class's instance
   * with members that never run */
  fold_memo memo[FOLD_MEMO];
  memset(memo, 0, sizeof memo);
  for (size_t r = 0; r < nr && ok; r++) {
    cls[r] = -1;
    const fold_set *cs = &BODY(r)->coll;
    for (size_t e = 0; e < cs->n && ok; e++) {
      const dt_op *op = cs->v[e];
      int32_t g = dt_trace_op_group(t, (int32_t)r, op);
      if (!rp_group_exclusive(c, g))
        continue;
      const rp_gshape *gs = rp_gshape_of(c, g);
      dt_op_kind k = rp_algo_kind(op->kind);
      if (gs->nnodes != 1 || (k != DT_OP_ALLREDUCE && k != DT_OP_REDUCESCATTER && k != DT_OP_ALLGATHER) ||
          (cls[r] >= 0 && cls[r] != g) || !closed_algo(c, memo, op, g, gs))
        ok = 0;
      cls[r] = g;
    }
    if (cls[r] < 0)
      ok = 0;
  }
  for (size_t r = 0; r < nr && ok; r++) {
    const dt_group *gr = &t->groups[cls[r]];
    if (F == 0)
      F = (int32_t)gr->nranks;
    if ((int32_t)gr->nranks != F)
      ok = 0;
    idx[r] = -1;
    for (size_t i = 0; i < gr->nranks; i++)
      if (gr->ranks[i] == (int32_t)r)
        idx[r] = (int32_t)i;
    if (idx[r] < 0)
      ok = 0;
  }
  if (ok && idx[0] != 0) /* rank 0's marks give the iterations: it must run */
    ok = 0;
  if (!ok || F < 2)
    goto done;
  c->fold = F;
  c->fold_cls = cls;
  /* 2. member k of a class runs what its representative runs, with every group and peer mapped by sigma_k */
  gimg = dt_xmalloc(sizeof *gimg * (ng + 1) * (size_t)F);
  for (size_t k = 0; k < (ng + 1) * (size_t)F; k++)
    gimg[k] = -1;
  for (size_t r = 0; r < nr && ok; r++) {
    int32_t k = idx[r], r0 = (int32_t)t->groups[cls[r]].ranks[0];
    if (dt_trace_rank_body(t, (int32_t)r) != dt_trace_rank_body(t, r0)) {
      ok = 0;
      break;
    }
    const fold_body *b = BODY(r);
    for (size_t e = 0; e < b->grp.n && ok; e++) {
      const dt_op *op = b->grp.v[e];
      int32_t g = dt_trace_op_group(t, (int32_t)r, op), g0 = dt_trace_op_group(t, r0, op);
      if (g0 == cls[r0]) {
        ok = g == g0;
        continue;
      }
      const dt_group *ga = &t->groups[g0], *gb = &t->groups[g];
      int32_t *im = &gimg[(size_t)g0 * F + k];
      if (*im != g) { /* each image is checked member by member once, not once per op (O(ranks x DP)) */
        ok = *im < 0 && ga->nranks == gb->nranks;
        for (size_t q = 0; q < ga->nranks && ok; q++)
          ok = idx[ga->ranks[q]] == 0 && gb->ranks[q] == sigma(c, ga->ranks[q], k);
        *im = g;
      }
      used[g0] = 1;
      a2a[g0] |= b->a2a[e];
    }
    for (size_t e = 0; e < b->p2p.n && ok; e++) {
      const dt_op *op = b->p2p.v[e];
      int32_t peer = dt_trace_op_peer(t, (int32_t)r, op), p0 = dt_trace_op_peer(t, r0, op);
      ok = idx[p0] == 0 && peer == sigma(c, p0, k);
    }
  }
  if (!ok)
    goto done;
  /* 3. the images of every flow the representatives can run are isomorphic and disjoint */
  size_t nl = dt_topology_link_count(c->topo) * 2;
  img = dt_xcalloc(nl * (size_t)F + 1, sizeof *img);
  own = dt_xcalloc(nl + 1, sizeof *own);
  for (size_t g = 0; g < ng && ok; g++) {
    if (!used[g])
      continue;
    const dt_group *gr = &t->groups[g];
    int32_t n = (int32_t)gr->nranks;
    /* textbook: rings between neighbours in group order; all-to-all and the NCCL model (its node-ordered rings,
     * trees, hierarchical rings and PXN relays): every pair */
    int all = a2a[g] || p->nccl;
    if (p->nccl && n > 512)
      ok = 0;
    for (int32_t i = 0; i < n && ok; i++)
      for (int32_t j = 0; j < n && ok; j++)
        if (i != j && (all || j == (i + 1) % n || i == (j + 1) % n))
          ok = flow_symmetric(c, gr->ranks[i], gr->ranks[j], img, own, nl);
  }
  for (size_t r = 0; r < nr && ok; r++) {
    if (idx[r] != 0)
      continue;
    const fold_set *ss = &BODY(r)->send;
    for (size_t e = 0; e < ss->n && ok; e++) /* flow_symmetric of a flow checked before passes again */
      ok = flow_symmetric(c, (int32_t)r, dt_trace_op_peer(t, (int32_t)r, ss->v[e]), img, own, nl);
  }
#undef BODY
done:
  for (size_t i = 0; i < nbodies; i++)
    fold_body_free(&bodies[i]);
  free(bodies);
  free(body_of);
  free(img);
  free(own);
  free(a2a);
  free(used);
  if (!ok || c->fold < 2) {
    c->fold = 0;
    c->fold_cls = NULL;
    free(cls);
    free(idx);
    free(gimg);
    return 0;
  }
  c->fold_idx = idx;
  c->fold_gimg = gimg;
  return c->fold;
}
