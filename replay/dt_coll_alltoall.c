/* All-to-all (DESIGN.md §6): direct, every member sends S/n (or splits[j]) to every other member at once,
 * alpha + (n-1)/n S/B. On the NCCL model the latency grows with the peers: NCCL runs an all-to-all as n-1
 * grouped send/recv pairs, scheduled in rounds (scheduleP2pTasksToPlan in src/enqueue.cc) that NCCL orders by
 * node distance (ncclP2pSchedule in src/init.cc: a round sends to node + g and receives from node - g, so both
 * its peers are inside the node or both across), and each round pays its p2p hop as a send/recv does (the
 * route latency and the protocol's per-step latency, NVLink or network); the group pays the base latency once:
 * L + sum over the other members j of (alpha_ij + h_ij) + (n-1)/n S/(eB) (docs/replay.md). When n(n-1) flows would be many and the group spans nodes, flows are aggregated per
 * (member, destination node): member i sends one flow with everything it has for node Y's members to the
 * member of Y at local index (local(i) mod m_Y), so that each NIC carries what it would carry with direct
 * flows; inside a node the flows stay direct. n*(nodes-1) + sum(m^2) flows instead of n(n-1). */
#include "dt_coll.h"


/* Above this many flows per instance, an all-to-all spanning nodes is aggregated per node pair. */
#define AGGREGATE_ABOVE_FLOWS 4096

#define TAG_DIRECT 0
#define TAG_NODE 1

static double share(const rp_inst *x, int32_t j)
{
  const dt_op *op = x->op;
  return op->splits && (uint32_t)j < op->nsplits ? (double)op->splits[j] : (double)op->bytes / x->n;
}

int rp_alltoall_aggregated(const rp_gshape *gs)
{
  return gs->nnodes > 1 && (double)gs->n * (gs->n - 1) > AGGREGATE_ABOVE_FLOWS;
}

/* This member's flows: direct to every other member, or aggregated per node; its n - 1 p2p rounds' latency on the
 * NCCL model (the same at both fidelities: the flows pay their own largest route latency, the rounds the rest). */
void rp_list_direct(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t n = x->n, i = x->i;
  double amax = 0, h = 0, rounds = 0; /* rounds: the NCCL model's latency of the n-1 p2p rounds */
  if (!rp_alltoall_aggregated(s)) {
    for (int32_t d = 1; d < n; d++) {
      int32_t j = (i + d) % n;
      L->sends[L->ns++] = (rp_send){j, ph->tag + TAG_DIRECT, share(x, j)};
      L->tags[L->nr++] = ph->tag + TAG_DIRECT;
      double l = rp_alpha(x, i, j), hh = rp_hop(x, i, j);
      rounds += l + hh;
      if (l > amax)
        amax = l;
      if (hh > h)
        h = hh;
    }
  } else {
    int32_t me = s->node_of[i], li = s->local[i];
    for (int32_t nd = 0; nd < s->nnodes; nd++) {
      int32_t f = s->node_first[nd], m = s->node_first[nd + 1] - f;
      if (nd == me) {
        for (int32_t q = 0; q < m; q++) {
          int32_t j = s->by_node[f + q];
          if (j != i) {
            L->sends[L->ns++] = (rp_send){j, ph->tag + TAG_DIRECT, share(x, j)};
            L->tags[L->nr++] = ph->tag + TAG_DIRECT;
          }
        }
        continue;
      }
      double sum = 0;
      for (int32_t q = 0; q < m; q++)
        sum += share(x, s->by_node[f + q]);
      int32_t to = s->by_node[f + li % m];
      L->sends[L->ns++] = (rp_send){to, ph->tag + TAG_NODE, sum};
      /* node nd's members with local index l, l mod m_me == li, send here */
      int32_t mme = s->node_first[me + 1] - s->node_first[me];
      for (int32_t l = li; l < m; l += mme)
        L->tags[L->nr++] = ph->tag + TAG_NODE;
      double lat = rp_alpha(x, i, to);
      if (lat > amax)
        amax = lat;
      if (x->net_hop > h)
        h = x->net_hop;
    }
    if (s->max_per_node > 1 && x->hop > h)
      h = x->hop;
    /* the rounds from the group's shape (its largest intra- and inter-node latencies): per-pair routes would
     * cost O(n) lookups per member here */
    int32_t mme = s->node_first[me + 1] - s->node_first[me];
    rounds = (mme - 1) * (s->alpha_intra + x->hop) + (n - mme) * (s->alpha_net + x->net_hop);
  }
  L->alpha = amax;
  L->h = h; /* 0 on a textbook platform: its all-to-all is one step */
  if (x->c->p->nccl)
    L->after = rounds - amax;
  if (s->a2a_cf && !x->op->splits) { /* exact shortcut: every flow S/n, the same latency and share */
    L->closed = 1;
    L->cf_lat = s->a2a_cf_lat;
    L->cf_rate = s->a2a_cf_rate;
    L->cf_bytes = share(x, (x->i + 1) % n);
  }
}
