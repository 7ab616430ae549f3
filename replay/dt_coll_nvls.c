/* NVLS (NVLink SHARP, docs/replay.md): on a node whose NVSwitch reduces in the switch (`intra_node.nvls`), each
 * GPU sends its S bytes to the switch once and receives the reduced S once. The switch is the GPU ports the
 * flows cross: member k of the node sends to member k+1 (mod m), so that every GPU port carries S up and S
 * down at the per-GPU link rate, in two steps (reduce in the switch, multicast from it):
 *   T = 2 (alpha + h) + S/B    (bus bandwidth 2(n-1)/n S/T can exceed the link rate)
 * flow: one flow of S then alpha + 2h; step: two steps of S/2, h after each.
 * NVLS-tree (NCCL_ALGO_NVLS_TREE) across nodes: the reduce into the switch (alpha + h + S/B), a double binary
 * tree between the nodes over each local index's members carrying S/m, the multicast (alpha + h + S/B). */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <stdlib.h>

#define TAG_NVLS 1200
#define TAG_NVLS_DOWN 1201
#define TAG_NVLS_TREE 1300

/* This member's successor among its node's members. */
static int32_t node_next(const rp_inst *x)
{
  const rp_gshape *s = x->gs;
  int32_t nd = s->node_of[x->i], f = s->node_first[nd], m = s->node_first[nd + 1] - f;
  return s->by_node[f + (s->local[x->i] + 1) % m];
}

/* One pass of S through the switch: `steps` steps. */
static void switch_pass(const rp_inst *x, double S, int steps, int32_t tag)
{
  int32_t next = node_next(x);
  double h = x->hop, alpha = rp_alpha(x, x->i, next);
  if (x->fid == DT_FIDELITY_STEP) {
    for (int k = 0; k < steps; k++) {
      rp_send snd = {next, tag, S / steps};
      rp_xfer(x, &snd, 1, &tag, 1);
      rp_sleep(h);
    }
    return;
  }
  rp_send snd = {next, tag, S};
  rp_xfer(x, &snd, 1, &tag, 1);
  rp_sleep((steps - 1) * alpha + steps * h);
}

void rp_nvls_allreduce(const rp_inst *x)
{
  switch_pass(x, x->S, 2, TAG_NVLS);
}

void rp_nvls_tree_allreduce(const rp_inst *x)
{
  const rp_gshape *s = x->gs;
  int32_t N = s->nnodes, li = s->local[x->i];
  int32_t m = s->node_first[s->node_of[x->i] + 1] - s->node_first[s->node_of[x->i]];
  switch_pass(x, x->S, 1, TAG_NVLS);
  /* the members with this local index, node by node (the shape is homogeneous: rp_select checks) */
  int32_t stack_members[64];
  int32_t *members = N <= 64 ? stack_members : dt_xmalloc(sizeof *members * (size_t)N);
  for (int32_t nd = 0; nd < N; nd++)
    members[nd] = s->by_node[s->node_first[nd] + li];
  rp_subtree_allreduce(x, members, N, s->node_of[x->i], x->S / m, TAG_NVLS_TREE);
  if (members != stack_members)
    free(members);
  switch_pass(x, x->S, 1, TAG_NVLS_DOWN);
}
