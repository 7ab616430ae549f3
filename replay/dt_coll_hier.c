/* Hierarchical all-reduce and CollNet (docs/replay.md). Both reduce-scatter inside each node (a ring over the
 * node's m_x members, S/m_x each), reduce across nodes, and all-gather inside each node. Across nodes the
 * buffer is cut into P = (most members a node has) rails; rail k is held on node x by its member
 * floor(k m_x / P), so heterogeneous groups (a node's GPUs split over groups of unequal size) work: a member of
 * a smaller node serves several rails and its NIC carries their bytes.
 *   hier: each rail is a ring all-reduce of S/P over the nodes (one rank per rail and node; members on one NIC
 *         share it). Homogeneous, one NIC per GPU:
 *         T = 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2(N-1)(an + hn) + 2(N-1)/N (S/m)/Bn
 *   collnet: each rail's bytes go up to the leaf switch once and the reduced bytes come back once (SHARP), as
 *         a flow from the rail's member to the next node's, in two steps:
 *         T = 2 [(m-1)(ai + h) + (m-1)/m S/Bi] + 2(an + hn) + (S/m)/Bn */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <stdlib.h>

#define TAG_RS 1000
#define TAG_AG 1001
#define TAG_RAIL 1400 /* + rail */

/* Node x's member holding rail k. */
static int32_t rail_member(const rp_gshape *s, int32_t nd, int32_t k, int32_t P)
{
  int32_t f = s->node_first[nd], m = s->node_first[nd + 1] - f;
  return s->by_node[f + (int32_t)((int64_t)k * m / P)];
}

/* This member's node members (in local order) and its index among them. */
static int32_t node_members(const rp_inst *x, const int32_t **members)
{
  const rp_gshape *s = x->gs;
  int32_t nd = s->node_of[x->i];
  *members = s->by_node + s->node_first[nd];
  return s->node_first[nd + 1] - s->node_first[nd];
}

/* The inter-node stage: every rail this member holds, all at once. ring: `steps` steps of chunk bytes to the
 * next node's holder; collnet: 2 steps of S/P/2. */
static void rails_run(const rp_inst *x, int collnet)
{
  const rp_gshape *s = x->gs;
  int32_t N = s->nnodes, P = s->max_per_node, me = s->node_of[x->i];
  size_t steps = collnet ? 2 : 2 * (size_t)(N - 1);
  double chunk = collnet ? x->S / P / 2 : x->S / P / N;
  rp_send *sends = dt_xmalloc(sizeof *sends * (size_t)P);
  int32_t *tags = dt_xmalloc(sizeof *tags * (size_t)P);
  size_t ns = 0;
  double amax = 0, h = 0;
  for (int32_t k = 0; k < P; k++) {
    if (rail_member(s, me, k, P) != x->i)
      continue;
    int32_t to = rail_member(s, (me + 1) % N, k, P);
    sends[ns] = (rp_send){to, TAG_RAIL + k, chunk};
    tags[ns++] = TAG_RAIL + k;
    double a = rp_alpha(x, x->i, to), hh = rp_hop(x, x->i, to);
    /* the ring's other hops: the rail's holders on the other nodes */
    for (int32_t nd = 0; nd < N && !collnet; nd++) {
      double l = rp_alpha(x, rail_member(s, nd, k, P), rail_member(s, (nd + 1) % N, k, P));
      if (l > a)
        a = l;
    }
    if (a > amax)
      amax = a;
    if (hh > h)
      h = hh;
  }
  if (x->fid == DT_FIDELITY_STEP) {
    for (size_t st = 0; st < steps; st++) {
      rp_xfer(x, sends, ns, tags, ns);
      rp_sleep(h);
    }
  } else {
    for (size_t k = 0; k < ns; k++)
      sends[k].bytes = chunk * (double)steps;
    rp_xfer(x, sends, ns, tags, ns);
    rp_sleep((double)(steps - 1) * amax + (double)steps * h);
  }
  free(sends);
  free(tags);
}

static void hier_run(const rp_inst *x, int collnet)
{
  const int32_t *members;
  int32_t m = node_members(x, &members);
  int32_t self = x->gs->local[x->i];
  rp_subring_run(x, members, m, self, (size_t)(m - 1), x->S / m, TAG_RS);
  rails_run(x, collnet);
  rp_subring_run(x, members, m, self, (size_t)(m - 1), x->S / m, TAG_AG);
}

void rp_hier_allreduce(const rp_inst *x)
{
  hier_run(x, 0);
}

void rp_collnet_allreduce(const rp_inst *x)
{
  hier_run(x, 1);
}
