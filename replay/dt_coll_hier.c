/* The patterns of the hierarchical all-reduce and CollNet (docs/replay.md): a ring over each node's members
 * (reduce-scatter, then all-gather: S/m_x per step), and the rails across nodes. Across nodes the buffer is cut
 * into P = (most members a node has) rails; rail k is held on node x by its member floor(k m_x / P), so
 * heterogeneous groups (a node's GPUs split over groups of unequal size) work: a member of a smaller node serves
 * several rails and its NIC carries their bytes. hier runs each rail as a ring all-reduce over the nodes
 * (2(N-1) steps of S/P/N); collnet sends each rail's bytes up to the leaf switch once and gets the reduced bytes
 * back once (SHARP), as a flow from the rail's holder to the next node's, in 2 steps of S/P/2 (dt_coll_plan.c). */
#include "dt_coll.h"

/* Node x's member holding rail k. */
static int32_t rail_member(const rp_gshape *s, int32_t nd, int32_t k, int32_t P)
{
  int32_t f = s->node_first[nd], m = s->node_first[nd + 1] - f;
  return s->by_node[f + (int32_t)((int64_t)k * m / P)];
}

/* To the next member of this member's node; every hop of the node's ring at its largest latency. */
void rp_list_node_ring(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t nd = s->node_of[x->i];
  const int32_t *members = s->by_node + s->node_first[nd];
  int32_t m = s->node_first[nd + 1] - s->node_first[nd], self = s->local[x->i];
  double amax = 0, h = 0;
  for (int32_t k = 0; k < m; k++) {
    double a = rp_alpha(x, members[k], members[(k + 1) % m]), hk = rp_hop(x, members[k], members[(k + 1) % m]);
    if (a > amax)
      amax = a;
    if (hk > h)
      h = hk;
  }
  L->sends[L->ns++] = (rp_send){members[(self + 1) % m], ph->tag, ph->bytes};
  L->tags[L->nr++] = ph->tag;
  L->alpha = amax;
  L->h = h;
}

/* Every rail this member holds, all at once, to the next node's holder of the rail (arg 1: collnet, whose
 * latency is the rail's own hop; a ring's is its slowest hop over the nodes). Tags ph->tag + rail. */
void rp_list_rails(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t N = s->nnodes, P = s->max_per_node, me = s->node_of[x->i];
  int collnet = ph->arg;
  double amax = 0, h = 0;
  for (int32_t k = 0; k < P; k++) {
    if (rail_member(s, me, k, P) != x->i)
      continue;
    int32_t to = rail_member(s, (me + 1) % N, k, P);
    L->sends[L->ns++] = (rp_send){to, ph->tag + k, ph->bytes};
    L->tags[L->nr++] = ph->tag + k;
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
  L->alpha = amax;
  L->h = h;
}
