/* The tree patterns. RP_PAT_TREE is NCCL's tree for all-reduce as NCCL connects it (src/graph/connect.cc,
 * ncclTopoPreset and connectTrees; src/graph/trees.cc, ncclGetDtree; read at v2.17.1-1 and v2.30.7-1, not copied):
 * per channel, a chain inside each node over the node's members in the channel's ring order (its first member,
 * the head, is the one on the channel's NIC), and between the nodes a double binary tree over one rank per node,
 * the heads: tree 0 the heap over the nodes (the parent of node q is (q-1)/2), tree 1 the same heap over the
 * mirrored nodes (N-1-q), so that the interior nodes of one are leaves of the other (NCCL's btree and its mirror
 * put the root's one child where the heap puts two; both have floor(log2 N) levels for N a power of two). A child
 * node's head sends to its parent node's head, or, when it is the parent's second child and the parent node holds
 * several members, to the member after the head (NCCL's balanced tree, NCCL_TOPO_PATTERN_BALANCED_TREE: the
 * parent and one child on the first GPU's NIC, the other child on the second's). Each tree carries half of each
 * channel's bytes; on one node both are the same chain. The plan (dt_coll_plan.c) reduces up, then broadcasts
 * down, every edge streaming at once, pipelined over D = (m-1) + D_N hops, m the largest node's members and
 * D_N = floor(log2 N) -- NCCL's tree depth (connectTrees) and its tuner's latency 2((m-1) intraLat + log2i(N)
 * interLat) (src/graph/tuning.cc):
 *   flow: reduce flows, then the other hops' latency; broadcast flows, the same
 *         -> per phase (m-1)(alpha_i + h) + D_N (alpha_n + h_net) + V/B
 *   step: reduce flows; h; broadcast flows; h; then the last chunk's latency walks up tree 0 of channel 0 to the
 *         root's children and back down to the leaves as zero-byte messages over the real routes
 * with V/B the time of the busiest port: a GPU's NVLink port carries 2 x S/(2C) for every channel it does not
 * head (sends up) and is not the tail of (receives from below), the head's NIC one tree's half per channel it
 * heads (N = 2) or up to both (N > 2).
 * RP_PAT_NODE_TREE (NVLS-tree) is the heap's double binary tree over the nodes per local index, one channel. */
#include "dt_coll.h"

#include "../common/dt_util.h"
#include "dt_linkload.h"

#include <math.h>
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

/* ---- NCCL's tree: chains inside the nodes, a double binary tree between their heads ---- */

static int32_t node_size(const rp_gshape *s, int32_t x)
{
  return s->node_first[x + 1] - s->node_first[x];
}

/* Whether node x's members are the run of channel c's order that starts at node_first[x] (always on the NCCL
 * model, whose rings go node by node; the textbook order is the group's). */
static int node_run(const rp_gshape *s, int c, int32_t x)
{
  const int32_t *ord = s->order + (size_t)c * s->n;
  for (int32_t k = s->node_first[x]; k < s->node_first[x + 1]; k++)
    if (s->node_of[ord[k]] != x)
      return 0;
  return 1;
}

/* The member at chain position j of node x in channel c (node x's members in the order channel c visits them),
 * or -1. */
static int32_t chain_at(const rp_gshape *s, int c, int32_t x, int32_t j)
{
  const int32_t *ord = s->order + (size_t)c * s->n;
  if (j < 0 || j >= node_size(s, x))
    return -1;
  if (node_run(s, c, x))
    return ord[s->node_first[x] + j];
  for (int32_t k = 0; k < s->n; k++)
    if (s->node_of[ord[k]] == x && j-- == 0)
      return ord[k];
  return -1;
}

/* Member i's position in its node's chain of channel c. */
static int32_t chain_pos(const rp_gshape *s, int c, int32_t i)
{
  int32_t x = s->node_of[i], k = s->pos[(size_t)c * s->n + i];
  if (node_run(s, c, x))
    return k - s->node_first[x];
  const int32_t *ord = s->order + (size_t)c * s->n;
  int32_t j = 0;
  for (int32_t q = 0; q < k; q++)
    j += s->node_of[ord[q]] == x;
  return j;
}

/* The chain position of parent node px at which the head of its child of heap index q attaches: the member after
 * the head for the second child (q even) when px holds several members (the balanced tree), else the head. */
static int32_t attach_pos(const rp_gshape *s, int32_t q, int32_t px)
{
  return q % 2 == 0 && node_size(s, px) > 1 ? 1 : 0;
}

/* Member i's parent in tree t of channel c (where its reduction goes), or -1 at the root. */
static int32_t tree_parent(const rp_gshape *s, int c, int t, int32_t i)
{
  int32_t x = s->node_of[i], j = chain_pos(s, c, i), N = s->nnodes;
  if (j > 0)
    return chain_at(s, c, x, j - 1);
  int32_t q = pos_of(t, x, N); /* the node's heap index (pos_of is its own inverse) */
  if (q == 0)
    return -1;
  int32_t px = pos_of(t, (q - 1) / 2, N);
  return chain_at(s, c, px, attach_pos(s, q, px));
}

/* Member i's children in tree t of channel c into ch (at most 3: the next member of its chain, the heads of the
 * child nodes attached to it); their count. */
static int tree_children(const rp_gshape *s, int c, int t, int32_t i, int32_t ch[3])
{
  int32_t x = s->node_of[i], j = chain_pos(s, c, i), N = s->nnodes;
  int k = 0;
  int32_t next = chain_at(s, c, x, j + 1);
  if (next >= 0)
    ch[k++] = next;
  if (j <= 1) {
    int32_t q = pos_of(t, x, N);
    for (int32_t cq = 2 * q + 1; cq <= 2 * q + 2 && cq < N; cq++)
      if (attach_pos(s, cq, x) == j)
        ch[k++] = chain_at(s, c, pos_of(t, cq, N), 0);
  }
  return k;
}

void rp_tree_flows(const rp_gshape *gs, int up, int32_t **src, int32_t **dst, size_t *nflows)
{
  int32_t n = gs->n;
  *src = *dst = NULL;
  *nflows = 0;
  if (n < 2)
    return;
  size_t nf = (size_t)gs->nchannels * 2 * (size_t)(n - 1), k = 0;
  *src = dt_xmalloc(sizeof **src * nf);
  *dst = dt_xmalloc(sizeof **dst * nf);
  for (int c = 0; c < gs->nchannels; c++)
    for (int t = 0; t < 2; t++)
      for (int32_t i = 0; i < n && k < nf; i++) {
        int32_t p = tree_parent(gs, c, t, i);
        if (p < 0)
          continue;
        (*src)[k] = up ? i : p;
        (*dst)[k++] = up ? p : i;
      }
  *nflows = k;
}

double rp_tree_port_time(const rp_gshape *s, double S)
{
  int C = s->nchannels;
  int32_t m = s->max_per_node, N = s->nnodes;
  /* the channels each member of node 0 heads and ends, when node 0 is a largest one (else: none) */
  enum { MAXM = 256 };
  int heads[MAXM] = {0}, tails[MAXM] = {0};
  int counted = node_size(s, 0) == m && m <= MAXM;
  for (int c = 0; c < C && counted; c++) {
    heads[s->local[chain_at(s, c, 0, 0)]]++;
    tails[s->local[chain_at(s, c, 0, m - 1)]]++;
  }
  int least = counted ? C : 0, most = counted ? 0 : C;
  for (int32_t j = 0; j < m && counted; j++) {
    least = heads[j] < least ? heads[j] : least;
    least = tails[j] < least ? tails[j] : least;
    most = heads[j] > most ? heads[j] : most;
  }
  double half = S / (2.0 * C); /* one tree's bytes per channel */
  double t = m > 1 ? 2 * half * (C - least) / s->bw_intra : 0;
  if (N > 1) { /* a head's NIC: one tree's half per channel it heads (N = 2: each node is the other's child), up to
                  both trees' (N > 2); NICs shared by several members take their channels together */
    double f = N == 2 ? 1 : 2, nics = s->nics_used > 0 ? s->nics_used : 1;
    double per_nic = nics >= m ? most : ceil(C / nics), nic_bw = s->bw_net * (nics >= m ? 1 : m / nics);
    t = fmax(t, f * half * per_nic / nic_bw);
  }
  return t;
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
  int32_t i = x->i;
  double bytes = ph->bytes / (2.0 * C), own = 0;
  for (int c = 0; c < C; c++)
    for (int t = 0; t < 2; t++) {
      int32_t tag = ph->tag + (c * 2 + t) * 2 + (up ? 0 : 1), ch[3];
      int32_t p = tree_parent(s, c, t, i);
      int nch = tree_children(s, c, t, i, ch);
      if (p >= 0) {
        if (up)
          L->sends[L->ns++] = (rp_send){p, tag, bytes};
        else
          L->tags[L->nr++] = tag;
        own = fmax(own, rp_alpha(x, i, p));
      }
      for (int k = 0; k < nch; k++) {
        if (up)
          L->tags[L->nr++] = tag;
        else
          L->sends[L->ns++] = (rp_send){ch[k], tag, bytes};
        own = fmax(own, rp_alpha(x, ch[k], i));
      }
    }
  /* the pipeline's route latency, (m-1) alpha_i + D_N alpha_n, less this member's own flows' (in them): the
   * hops after the first at their mean */
  double route = (double)(ph->depth - ph->inter) * s->alpha_intra + (double)ph->inter * s->alpha_net;
  L->alpha = ph->depth > 1 ? fmax(0, route - own) / (ph->depth - 1) : 0;
  L->h = s->nnodes > 1 && x->net_hop > x->hop ? x->net_hop : x->hop;
  if (rp_closed_tree(s)) {
    L->closed = 1;
    L->cf_lat = s->tree_cf_lat[up];
    L->cf_rate = s->tree_cf_rate[up];
    L->cf_bytes = bytes;
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

/* step fidelity: the latency walk over tree 0 of channel 0 (see the file comment): up from the leaves to the root's
 * children, each edge its own per-step latency and route, then back down (a member's children after the largest
 * of their edges' per-step latencies). */
void rp_walk_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  (void)ph;
  (void)L;
  const rp_gshape *s = x->gs;
  int32_t i = x->i, parent = tree_parent(s, 0, 0, i), ch[3];
  if (parent < 0)
    return;
  int nch = tree_children(s, 0, 0, i, ch);
  int32_t tags[3] = {TAG_WALK_UP, TAG_WALK_UP, TAG_WALK_UP};
  rp_xfer(x, NULL, 0, tags, (size_t)nch); /* from the children (a leaf has none) */
  if (tree_parent(s, 0, 0, parent) >= 0) {
    rp_sleep(rp_hop(x, i, parent));
    rp_send up = {parent, TAG_WALK_UP, 0};
    rp_xfer(x, &up, 1, NULL, 0);
    int32_t t = TAG_WALK_DOWN;
    rp_xfer(x, NULL, 0, &t, 1);
  }
  if (nch == 0)
    return;
  rp_send sends[3];
  double h = 0;
  for (int k = 0; k < nch; k++) {
    sends[k] = (rp_send){ch[k], TAG_WALK_DOWN, 0};
    h = fmax(h, rp_hop(x, i, ch[k]));
  }
  rp_sleep(h);
  rp_xfer(x, sends, (size_t)nch, NULL, 0);
}

void rp_walk_node_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  (void)ph;
  int32_t buf[64] = {0}, *members = node_tree_members(x, buf, 64);
  tree_walk(x, members, x->gs->nnodes, x->gs->node_of[x->i], L->h);
  if (members != buf)
    free(members);
}
