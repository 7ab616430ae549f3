/* Exact shortcuts (docs/replay.md, "Shortcuts"): an exchange of a collective whose flows nothing else can share
 * is waited for in closed form instead of being simulated as SimGrid flows, when SimGrid's answer is known in
 * advance. Two facts make that answer known:
 *   - exclusivity, from the whole trace before the run: the links the group's flows can cross are used by no
 *     other group or send/recv pair, and two instances of the group never overlap (each member issues the
 *     group's ops from one stream, never in a batch, so instance k + 1 starts after every member completed k);
 *   - uniformity, from the group's routes: every flow of the exchange starts at once with the same bytes and the
 *     same route latency, and each one crosses a link where it gets the smallest fair share of all the links
 *     (bandwidth / flows on it). Then SimGrid's max-min sharing (CM02, no TCP window, equal sharing penalties)
 *     gives every flow that share from start to end, and each completes after latency + bytes / share.
 * Only NVSwitch platforms qualify: there a route between nodes never crosses a GPU port (dt_topology.h), so the
 * GPU ports of a node are used only by the flows between its GPUs. --exact turns the shortcuts off. */
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

uint8_t *rp_closed_exclusive(const rp_ctx *c)
{
  const dt_platform *p = c->p;
  const dt_trace *t = c->t;
  size_t ng = t->ngroups;
  uint8_t *ok = dt_xcalloc(ng + 1, 1);
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

  for (size_t g = 0; g < ng; g++) {
    const dt_group *gr = &t->groups[g];
    int multi = 0;
    for (size_t i = 0; i < gr->nranks && ok[g]; i++) {
      int32_t gpu = c->gpu_of_rank[gr->ranks[i]];
      multi |= gpu / G != c->gpu_of_rank[gr->ranks[0]] / G;
      if (owner[gpu] != OWNER_NONE && owner[gpu] != (int32_t)g)
        ok[g] = 0;
    }
    if (ok[g] && multi && owner[net] != (int32_t)g)
      ok[g] = 0;
  }
  free(owner);
  free(count);
  return ok;
}

int rp_closed_uniform(const rp_ctx *c, int32_t g, size_t nflows, const int32_t *src, const int32_t *dst, double *lat,
                      double *rate)
{
  if (nflows == 0)
    return 0;
  size_t nlinks = dt_topology_link_count(c->topo) * 2;
  uint32_t *count = dt_xcalloc(nlinks + 1, sizeof *count);
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
      count[dir_link(&hops[h])]++;
  }
  /* pass 2: the smallest fair share m over all links; every flow must cross a link with share m (then max-min
   * gives every flow m, and no flow ever finishes before the others to free bandwidth) */
  double m = INFINITY;
  for (size_t k = 0; k < nlinks && ok; k++)
    if (count[k]) {
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
  free(count);
  if (!ok || !(m > 0) || !isfinite(m))
    return 0;
  *lat = lat0;
  *rate = m;
  return 1;
}
