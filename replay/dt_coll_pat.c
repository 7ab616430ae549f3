/* The PAT pattern ("parallel aggregated trees", NCCL 2.23+) for all-gather and reduce-scatter: a logarithmic
 * exchange between the nodes instead of the ring's n - 1 steps. Modelled as the recursive-distance exchange its
 * cost model describes (src/graph/tuning.cc, later src/tuning/pat.cc: log2(nNodes) network steps, read, not
 * copied): over the N nodes in order, all-gather step k (k = 0 .. K-1, K = ceil(log2 N), distance d = 2^k) sends
 * the min(d, N - d) shards a member holds to the member of the same local index on the node d positions before
 * and receives as many from the one d after; reduce-scatter runs the same steps in reverse order (partial sums of
 * as many shards, distance halving). Every member moves N - 1 shards across the network in all, as in a ring
 * over the nodes. With one member per node (NCCL 2.23+) that is the whole collective; with several (NCCL 2.31+,
 * "multi-RPN PAT", NVLS nodes only) each local index runs its own exchange and an NVLS pass inside the node does
 * the rest (dt_coll_plan.c). Its plan is K phases of one step, plus the pass: the same at both fidelities. */
#include "dt_coll.h"

/* Step ph->arg of K; ph->bytes is the shard (all-gather: S; reduce-scatter: S / n). */
void rp_list_pat(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *gs = x->gs;
  int32_t N = gs->nnodes;
  int allgather = rp_algo_kind(x->op->kind) == DT_OP_ALLGATHER;
  int K = rp_pat_steps(N), s = ph->arg;
  int k = allgather ? s : K - 1 - s;
  int32_t d = (int32_t)1 << k, cnt = d < N - d ? d : N - d;
  int32_t q = gs->node_of[x->i], l = gs->local[x->i]; /* its node and its index there (equal counts per node) */
  int32_t to = allgather ? (q + N - d) % N : (q + d) % N;
  int32_t from = allgather ? (q + d) % N : (q + N - d) % N;
  int32_t peer_to = gs->by_node[gs->node_first[to] + l], peer_from = gs->by_node[gs->node_first[from] + l];
  L->sends[L->ns++] = (rp_send){peer_to, ph->tag, cnt * ph->bytes};
  L->tags[L->nr++] = ph->tag;
  L->alpha = 0;
  L->h = rp_hop(x, x->i, peer_from);
}
