/* Collectives of the replay (DESIGN.md §6): arrival (an instance starts when its last member issues it), the
 * choice of algorithm and protocol (dt_coll_select.c), and the run of the chosen row's plan by the plan executor
 * (dt_coll_plan.c). docs/replay.md has the closed forms. */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <simgrid/engine.h>
#include <simgrid/barrier.h>
#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_coll, dtsim, "collectives: the algorithm and protocol chosen per instance");

#include <stdlib.h>

int32_t rp_member_index(const rp_ctx *c, int32_t g, int32_t rank)
{
  const rp_member *m = c->members[g];
  size_t lo = 0, hi = c->t->groups[g].nranks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m[mid].rank < rank)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->t->groups[g].nranks && m[lo].rank == rank ? m[lo].index : -1;
}

uint64_t rp_alltoall_bytes(const dt_op *op)
{
  if (!op->splits)
    return op->bytes;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < op->nsplits; i++)
    sum += op->splits[i];
  return sum;
}

rp_live *rp_instance_of(rp_ctx *c, const dt_op *op, int32_t rank)
{
  int32_t g = dt_trace_op_group(c->t, rank, op);
  /* a folded class's instance has one running member, its representative */
  int32_t n = c->fold && c->fold_cls[rank] == g ? 1 : (int32_t)c->t->groups[g].nranks;
  return rp_live_get(&c->instances, (uint64_t)g, (uint64_t)op->match, 0, n);
}

static const char *const proto_labels[DT_PROTO_COUNT] = {"ll", "ll128", "simple"};

const char *rp_proto_label(dt_proto proto)
{
  return proto < DT_PROTO_COUNT ? proto_labels[proto] : NULL;
}

void rp_collective_run(rp_ctx *c, const dt_op *op, int32_t rank)
{
  int32_t g = dt_trace_op_group(c->t, rank, op);
  int32_t n = (int32_t)c->t->groups[g].nranks;
  int32_t i = rp_member_index(c, g, rank);

  /* arrival: the instance starts when its last member issues it */
  rp_live *in = rp_instance_of(c, op, rank);
  double now = rp_now();
  if (in->arrived == 0 || now > in->last_issue)
    in->last_issue = now;
  in->arrived++;
  if (n <= 1 || i < 0)
    return;
  c->comm_active[rank]++;
  if (in->arrived == 1 && in->n > 1)
    in->bar = sg_barrier_init((unsigned)in->n);
  if (in->arrived == in->n) { /* the last to arrive chooses, before anybody goes on */
    dt_algo a;
    dt_proto pr;
    rp_select(c, op, rp_gshape_of(c, g), &a, &pr);
    in->sel_algo = (int)a;
    in->sel_proto = (int)pr;
    in->sep = rp_closed_ready(c, g, op->match);
    if (c->explain)
      in->xrow = rp_explain_choose(c, op, g, rp_gshape_of(c, g), a, pr);
    XBT_VERB("%s #%lld on %s (%d ranks): %llu bytes, last member arrived at %.9g s: %s/%s, estimate %.9g s",
              dt_op_kind_name(op->kind), (long long)op->match, c->t->groups[g].name, (int)n,
              (unsigned long long)op->bytes, now, dt_algo_name(a), c->p->nccl ? dt_proto_name(pr) : "-",
              rp_estimate(c, op, rp_gshape_of(c, g), a, pr));
  }
  /* one simcall per member: the barrier lets everybody go when the last member reaches it (a semaphore the last
   * member released n - 1 times took twice as many) */
  if (in->bar)
    (void)sg_barrier_wait(in->bar);

  const dt_platform *p = c->p;
  rp_inst x;
  x.c = c;
  x.op = op;
  x.g = g;
  x.i = i;
  x.n = n;
  x.id = in->id; /* the record stays live until this member completes: `in` remains valid */
  /* without shortcuts where other traffic may meet it */
  x.gs = in->sep ? rp_gshape_of(c, g) : rp_gshape_inst(c, g, op->match);
  x.fid = c->fidelity;
  x.S = op->kind == DT_OP_BARRIER ? 0 : (double)op->bytes;
  x.algo = (dt_algo)in->sel_algo;
  x.proto = (dt_proto)in->sel_proto;
  rp_costs costs = rp_costs_group(p, x.algo, x.proto, op->kind, x.gs);
  x.eff = costs.eff;
  x.hop = costs.hop;
  x.net_hop = costs.net_hop;
  x.fixed = costs.fixed;
  if (i == 0) {
    /* folding: an instance of the representatives stands for one per class member (a class's own for itself) */
    int m = c->fold && c->fold_cls[rank] != g ? c->fold : 1;
    for (int f = 0; f < m; f++)
      rp_choice_record(c, op->kind, x.algo, x.proto, op->kind == DT_OP_ALLTOALL ? rp_alltoall_bytes(op) : op->bytes);
    if (c->algo != DT_ALGO_AUTO && x.algo != c->algo) {
      c->forced_fallback[op->kind] += (uint64_t)m; /* said in the notes: a silent substitution would mislead */
      if (!c->forced_why[op->kind])
        c->forced_why[op->kind] = rp_forced_why_not(c, op, x.gs);
    }
  }
  in->algo = dt_algo_name(x.algo);
  in->proto = p->nccl ? proto_labels[x.proto] : NULL;

  dt_op_kind k = rp_algo_kind(op->kind);
  const rp_algo_row *row = rp_algo_row_of(k, x.algo);
  if (row) {
    rp_plan pl;
    pl.nphases = 0;
    row->plan(x.gs, k, x.S, i, &pl);
    rp_plan_run(&x, &pl);
  } else {
    rp_sleep(x.fixed);
  }
  c->comm_active[rank]--;
}
