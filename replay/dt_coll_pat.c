/* PAT ("parallel aggregated trees", NCCL 2.23+) for all-gather and reduce-scatter with one member per node: a
 * logarithmic exchange instead of the ring's n - 1 steps. Modelled as the recursive-distance exchange its cost
 * model describes (src/graph/tuning.cc: log2(nNodes) network steps, read, not copied): over the members in node
 * order, all-gather step k (k = 0 .. K-1, K = ceil(log2 n), distance d = 2^k) sends the min(d, n - d) shards a
 * member holds to the member d positions before it and receives as many from the member d after; reduce-scatter
 * runs the same steps in reverse order (partial sums of as many shards, distance halving). Every member moves
 * n - 1 shards in all, as in a ring. The steps are run one by one at both fidelities (there are only K). */
#include "dt_coll.h"

void rp_pat_run(const rp_inst *x)
{
  const rp_gshape *gs = x->gs;
  int32_t n = x->n;
  if (n < 2)
    return;
  int allgather = rp_algo_kind(x->op->kind) == DT_OP_ALLGATHER;
  double shard = allgather ? x->S : x->S / n; /* all-gather: S is the shard; reduce-scatter: the whole input */
  int K = rp_pat_steps(n);
  int32_t q = gs->node_of[x->i]; /* one member per node: its position in node order */
  for (int s = 0; s < K; s++) {
    int k = allgather ? s : K - 1 - s;
    int32_t d = (int32_t)1 << k, cnt = d < n - d ? d : n - d;
    int32_t to = allgather ? (q + n - d) % n : (q + d) % n;
    int32_t from = allgather ? (q + d) % n : (q + n - d) % n;
    rp_send snd = {gs->by_node[to], s, cnt * shard};
    int32_t tag = s;
    rp_xfer(x, &snd, 1, &tag, 1);
    rp_sleep(rp_hop(x, x->i, gs->by_node[from]));
  }
}
