/* The double binary tree patterns (NCCL's tree, docs/replay.md). Over m members in a channel's order, tree 0 is
 * the heap over positions (parent of q is (q-1)/2) and tree 1 the same heap over the mirrored positions
 * (m-1-q), so that the interior members of one tree are leaves of the other; each tree carries half of each
 * channel's bytes. The tree plans (dt_coll_plan.c) reduce up, then broadcast down, every edge streaming at once
 * (pipelined over the heap's depth D = floor(log2 m)):
 *   flow: reduce flows; (D-1) alpha + D h; broadcast flows; (D-1) alpha + D h    -> 2 D (alpha + h) + 2 S/B
 *   step: reduce flows; h; broadcast flows; h; then the last chunk's latency walks up tree 0 to the root's
 *         children and back down to the leaves as zero-byte messages over the real routes, 2 (D-1) hops
 * with S/B the time of the busiest port (an interior member receives both children's halves: S for m >= 3, S/2
 * for m = 2). */
#include "dt_coll.h"

#include "../common/dt_util.h"
#include "dt_linkload.h"

#include <stdlib.h>

#define TAG_WALK_UP 1900
#define TAG_WALK_DOWN 1901

int rp_tree_depth(int32_t m)
{
  int d = 0;
  while (m > 1) {
    m >>= 1;
    d++;
  }
  return d;
}

/* Position in the channel's order of heap index q in tree t. */
static int32_t pos_of(int t, int32_t q, int32_t m)
{
  return t == 0 ? q : m - 1 - q;
}

void rp_tree_flows(const rp_gshape *gs, int up, int32_t **src, int32_t **dst, size_t *nflows)
{
  int32_t m = gs->n;
  *src = *dst = NULL;
  *nflows = 0;
  if (m < 2)
    return;
  size_t nf = (size_t)gs->nchannels * 2 * (size_t)(m - 1), k = 0;
  *src = dt_xmalloc(sizeof **src * nf);
  *dst = dt_xmalloc(sizeof **dst * nf);
  for (int c = 0; c < gs->nchannels; c++)
    for (int t = 0; t < 2; t++)
      for (int32_t q = 1; q < m; q++) {
        const int32_t *ord = gs->order + (size_t)c * m;
        int32_t child = ord[pos_of(t, q, m)], parent = ord[pos_of(t, (q - 1) / 2, m)];
        (*src)[k] = up ? child : parent;
        (*dst)[k++] = up ? parent : child;
      }
  *nflows = k;
}

/* Sends and receives of one phase (up: children to parent; down: parent to children) for C channels and both
 * trees; orders[c * m + k] is the member at position k of channel c, the member's own position in channel c is
 * pos[c * pos_stride]. */
static void tree_phase(rp_listing *L, const int32_t *orders, int C, int32_t m, const int32_t *pos, size_t pos_stride,
                       double bytes, int32_t tag0, int up)
{
  for (int c = 0; c < C; c++)
    for (int t = 0; t < 2; t++) {
      int32_t k = pos[(size_t)c * pos_stride], q = t == 0 ? k : m - 1 - k;
      int32_t tag = tag0 + (c * 2 + t) * 2 + (up ? 0 : 1);
      const int32_t *ord = orders + (size_t)c * m;
      if (up) {
        if (q > 0)
          L->sends[L->ns++] = (rp_send){ord[pos_of(t, (q - 1) / 2, m)], tag, bytes};
        for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
          L->tags[L->nr++] = tag;
      } else {
        if (q > 0)
          L->tags[L->nr++] = tag;
        for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
          L->sends[L->ns++] = (rp_send){ord[pos_of(t, ch, m)], tag, bytes};
      }
    }
}

/* The whole group's trees over its channels' orders, each tree carrying ph->bytes / (2C); the group's largest
 * latency and per-step latency. Exact shortcut (dt_coll_closed.c): nothing else shares the tree's links, and in
 * each phase every flow starts at once (the members enter it together: after the barrier, then after a phase
 * that ended at once) with one latency and one fair share. */
int rp_closed_tree(const rp_gshape *gs)
{
  return gs->tree_cf[0] && gs->tree_cf[1];
}

void rp_list_tree(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int C = s->nchannels, up = ph->arg;
  tree_phase(L, s->order, C, s->n, s->pos + x->i, (size_t)s->n, ph->bytes / (2.0 * C), ph->tag, up);
  L->alpha = s->nnodes > 1 && s->alpha_net > s->alpha_intra ? s->alpha_net : s->alpha_intra;
  L->h = s->nnodes > 1 && x->net_hop > x->hop ? x->net_hop : x->hop;
  if (rp_closed_tree(s)) {
    L->closed = 1;
    L->cf_lat = s->tree_cf_lat[up];
    L->cf_rate = s->tree_cf_rate[up];
    L->cf_bytes = ph->bytes / (2.0 * C);
  }
}

/* The members with this member's local index, node by node (NVLS-tree: the shape is homogeneous), into buf (N
 * entries) or a heap array the caller frees when it is not buf. */
static int32_t *node_tree_members(const rp_inst *x, int32_t *buf, size_t nbuf)
{
  const rp_gshape *s = x->gs;
  int32_t N = s->nnodes, li = s->local[x->i];
  int32_t *members = (size_t)N <= nbuf ? buf : dt_xmalloc(sizeof *members * (size_t)N);
  for (int32_t nd = 0; nd < N; nd++)
    members[nd] = s->by_node[s->node_first[nd] + li];
  return members;
}

/* One channel's trees over the nodes' members of this local index; the largest latency and per-step latency of
 * their edges. */
void rp_list_node_tree(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  int32_t buf[64] = {0}, *members = node_tree_members(x, buf, 64), m = x->gs->nnodes, self = x->gs->node_of[x->i];
  double alpha = 0, h = 0;
  for (int32_t q = 1; q < m; q++) {
    int32_t parent = members[(q - 1) / 2];
    for (int t = 0; t < 2; t++) {
      int32_t a = members[pos_of(t, q, m)], b = t == 0 ? parent : members[pos_of(1, (q - 1) / 2, m)];
      double l = rp_alpha(x, a, b), hh = rp_hop(x, a, b);
      if (l > alpha)
        alpha = l;
      if (hh > h)
        h = hh;
    }
  }
  tree_phase(L, members, 1, m, &self, 1, ph->bytes / 2.0, ph->tag, ph->arg);
  L->alpha = alpha;
  L->h = h;
  if (members != buf)
    free(members);
}

/* step fidelity: the latency walk over tree 0 of the order ord (see the file comment); k: this member's
 * position. */
static void tree_walk(const rp_inst *x, const int32_t *ord, int32_t m, int32_t k, double h)
{
  int32_t q = k;
  int32_t tags[2] = {TAG_WALK_UP, TAG_WALK_UP};
  int32_t nch = 0;
  for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
    nch++;
  if (q == 0)
    return;
  int32_t parent = (q - 1) / 2;
  /* up: from the leaves to the root's children */
  rp_xfer(x, NULL, 0, tags, (size_t)nch);
  if (parent != 0) {
    rp_sleep(h);
    rp_send s = {ord[parent], TAG_WALK_UP, 0};
    rp_xfer(x, &s, 1, NULL, 0);
    /* down: back from the root's children */
    int32_t t = TAG_WALK_DOWN;
    rp_xfer(x, NULL, 0, &t, 1);
  }
  rp_send sends[2];
  size_t ns = 0;
  for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
    sends[ns++] = (rp_send){ord[ch], TAG_WALK_DOWN, 0};
  if (ns > 0) {
    rp_sleep(h);
    rp_xfer(x, sends, ns, NULL, 0);
  }
}

void rp_walk_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  (void)ph;
  tree_walk(x, x->gs->order, x->gs->n, x->gs->pos[x->i], L->h);
}

void rp_walk_node_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  (void)ph;
  int32_t buf[64] = {0}, *members = node_tree_members(x, buf, 64);
  tree_walk(x, members, x->gs->nnodes, x->gs->node_of[x->i], L->h);
  if (members != buf)
    free(members);
}
