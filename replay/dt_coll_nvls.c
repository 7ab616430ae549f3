/* The NVLS pattern (NVLink SHARP, docs/replay.md): on a node whose NVSwitch reduces in the switch
 * (`intra_node.nvls`), each GPU sends its bytes to the switch once and receives the reduced bytes once. The
 * switch is the GPU ports the flows cross: member k of the node sends to member k+1 (mod m), so that every GPU
 * port carries S up and S down at the per-GPU link rate. NVLS is one pass of two steps (reduce in the switch,
 * multicast from it): T = 2 (alpha + h) + S/B (bus bandwidth 2(n-1)/n S/T can exceed the link rate); NVLS-tree
 * (NCCL_ALGO_NVLS_TREE) across nodes is a pass up, a double binary tree between the nodes over each local
 * index's members carrying S/m (RP_PAT_NODE_TREE), and a pass down (dt_coll_plan.c). */
#include "dt_coll.h"

/* To this member's successor among its node's members, at that hop's own latency. */
void rp_list_node_next(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t nd = s->node_of[x->i], f = s->node_first[nd], m = s->node_first[nd + 1] - f;
  int32_t next = s->by_node[f + (s->local[x->i] + 1) % m];
  L->sends[L->ns++] = (rp_send){next, ph->tag, ph->bytes};
  L->tags[L->nr++] = ph->tag;
  L->alpha = rp_alpha(x, x->i, next);
  L->h = x->hop;
}
