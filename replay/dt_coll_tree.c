/* Double binary tree all-reduce (NCCL's tree, docs/replay.md). Over m members in a channel's order, tree 0 is
 * the heap over positions (parent of q is (q-1)/2) and tree 1 the same heap over the mirrored positions
 * (m-1-q), so that the interior members of one tree are leaves of the other; each tree carries half of each
 * channel's bytes. Reduce up, then broadcast down, every edge streaming at once (pipelined):
 *   flow: reduce flows; (D-1) alpha; broadcast flows; (D-1) alpha           -> 2 D alpha + 2 S/B
 *   step: reduce flows; broadcast flows; then the last chunk's latency walks up tree 0 to the root's children
 *         and back down to the leaves as zero-byte messages over the real routes, 2 (D-1) hops
 * with D = floor(log2 m) the heap's depth, and S/B the time of the busiest port (an interior member receives
 * both children's halves: S for m >= 3, S/2 for m = 2). */
#include "dt_coll.h"

#include "../common/dt_util.h"
#include "dt_linkload.h"

#include <simgrid/engine.h>

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

/* Sends and receives of one phase (up: children to parent; down: parent to children) for every channel and
 * both trees; orders[c * m + k] is the member at position k of channel c, selfpos[c] this member's. closed: the
 * group's tree in closed form (rp_gshape.tree_cf, the phase's flows uniform), waited instead of simulated. */
static void tree_phase(const rp_inst *x, const int32_t *orders, int C, int32_t m, const int32_t *selfpos,
                       double bytes, int32_t tag0, int up, int closed)
{
  rp_send *sends = dt_xmalloc(sizeof *sends * (size_t)C * 4);
  int32_t *tags = dt_xmalloc(sizeof *tags * (size_t)C * 4);
  size_t ns = 0, nr = 0;
  for (int c = 0; c < C; c++)
    for (int t = 0; t < 2; t++) {
      int32_t k = selfpos[c], q = t == 0 ? k : m - 1 - k;
      int32_t tag = tag0 + (c * 2 + t) * 2 + (up ? 0 : 1);
      const int32_t *ord = orders + (size_t)c * m;
      if (up) {
        if (q > 0)
          sends[ns++] = (rp_send){ord[pos_of(t, (q - 1) / 2, m)], tag, bytes};
        for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
          tags[nr++] = tag;
      } else {
        if (q > 0)
          tags[nr++] = tag;
        for (int32_t ch = 2 * q + 1; ch <= 2 * q + 2 && ch < m; ch++)
          sends[ns++] = (rp_send){ord[pos_of(t, ch, m)], tag, bytes};
      }
    }
  rp_ctx *c = x->c;
  if (!closed) {
    rp_xfer(x, sends, ns, tags, nr);
  } else if (c->fold && c->fold_cls[c->t->groups[x->g].ranks[0]] == x->g) {
    /* a folded class: its representative alone runs the tree; every member's flows of the phase are recorded */
    double start = simgrid_get_clock(), wait = rp_closed_time(x, bytes, x->gs->tree_cf_lat[up], x->gs->tree_cf_rate[up]);
    if (c->linkload) {
      int32_t *src, *dst;
      size_t nf;
      rp_tree_flows(x->gs, up, &src, &dst, &nf);
      for (size_t f = 0; f < nf; f++)
        dt_linkload_add(c->linkload, rp_gpu_of_member(c, x->g, src[f]), rp_gpu_of_member(c, x->g, dst[f]), bytes,
                        start, start + wait, x->op->kind, x->g);
      free(src);
      free(dst);
    }
    rp_sleep(wait);
  } else if (ns > 0) {
    rp_closed_wait(x, sends, ns, x->gs->tree_cf_lat[up], x->gs->tree_cf_rate[up], 0, 0);
  } else if (nr > 0) { /* only receives: they end with every other flow of the phase */
    rp_sleep(rp_closed_time(x, bytes, x->gs->tree_cf_lat[up], x->gs->tree_cf_rate[up]));
  }
  free(sends);
  free(tags);
}

/* step fidelity: the latency walk over tree 0 of channel 0 (see the file comment). */
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

/* closed: the whole group's tree over its channels' orders in closed form (both phases uniform); 0 for a
 * subtree. */
static void tree_run(const rp_inst *x, const int32_t *orders, int C, int32_t m, const int32_t *selfpos,
                     double bytes_total, int32_t tag0, double alpha, double h, int closed)
{
  if (m <= 1)
    return;
  int D = rp_tree_depth(m);
  double half = bytes_total / (2.0 * C);
  if (closed && x->i == 0)
    x->c->closed_instances[x->op->kind]++;
  if (x->fid == DT_FIDELITY_STEP) {
    tree_phase(x, orders, C, m, selfpos, half, tag0, 1, closed);
    rp_sleep(h);
    tree_phase(x, orders, C, m, selfpos, half, tag0, 0, closed);
    rp_sleep(h);
    tree_walk(x, orders, m, selfpos[0], h);
    return;
  }
  double fill = (double)(D - 1) * alpha + (double)D * h;
  tree_phase(x, orders, C, m, selfpos, half, tag0, 1, closed);
  rp_sleep(fill);
  tree_phase(x, orders, C, m, selfpos, half, tag0, 0, closed);
  rp_sleep(fill);
}

void rp_tree_allreduce(const rp_inst *x)
{
  const rp_gshape *s = x->gs;
  int C = s->nchannels;
  int32_t *selfpos = dt_xmalloc(sizeof *selfpos * (size_t)C);
  for (int c = 0; c < C; c++)
    selfpos[c] = s->pos[(size_t)c * s->n + x->i];
  double alpha = s->nnodes > 1 && s->alpha_net > s->alpha_intra ? s->alpha_net : s->alpha_intra;
  double h = s->nnodes > 1 && x->net_hop > x->hop ? x->net_hop : x->hop;
  /* exact shortcut (dt_coll_closed.c): nothing else shares the tree's links, and in each phase every flow starts
   * at once (the members enter it together: after the barrier, then after a phase that ended at once) with one
   * latency and one fair share */
  int closed = s->tree_cf[0] && s->tree_cf[1];
  tree_run(x, s->order, C, s->n, selfpos, (double)x->op->bytes, 2000, alpha, h, closed);
  free(selfpos);
}

void rp_subtree_allreduce(const rp_inst *x, const int32_t *members, int32_t m, int32_t self, double bytes,
                          int32_t tag0)
{
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
  int32_t selfpos = self;
  tree_run(x, members, 1, m, &selfpos, bytes, tag0, alpha, h, 0);
}
