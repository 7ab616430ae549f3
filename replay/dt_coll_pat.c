/* The PAT pattern ("parallel aggregated trees", NCCL 2.23+) for all-gather and reduce-scatter with one member per
 * node: a logarithmic exchange instead of the ring's n - 1 steps. Modelled as the recursive-distance exchange its
 * cost model describes (src/graph/tuning.cc: log2(nNodes) network steps, read, not copied): over the members in
 * node order, all-gather step k (k = 0 .. K-1, K = ceil(log2 n), distance d = 2^k) sends the min(d, n - d) shards
 * a member holds to the member d positions before it and receives as many from the member d after; reduce-scatter
 * runs the same steps in reverse order (partial sums of as many shards, distance halving). Every member moves
 * n - 1 shards in all, as in a ring. Its plan (dt_coll_plan.c) is K phases of one step: the same at both
 * fidelities. */
#include "dt_coll.h"

/* Step ph->arg of K; ph->bytes is the shard (all-gather: S; reduce-scatter: S / n). */
void rp_list_pat(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *gs = x->gs;
  int32_t n = x->n;
  int allgather = rp_algo_kind(x->op->kind) == DT_OP_ALLGATHER;
  int K = rp_pat_steps(n), s = ph->arg;
  int k = allgather ? s : K - 1 - s;
  int32_t d = (int32_t)1 << k, cnt = d < n - d ? d : n - d;
  int32_t q = gs->node_of[x->i]; /* one member per node: its position in node order */
  int32_t to = allgather ? (q + n - d) % n : (q + d) % n;
  int32_t from = allgather ? (q + d) % n : (q + n - d) % n;
  L->sends[L->ns++] = (rp_send){gs->by_node[to], ph->tag, cnt * ph->bytes};
  L->tags[L->nr++] = ph->tag;
  L->alpha = 0;
  L->h = rp_hop(x, x->i, gs->by_node[from]);
}
