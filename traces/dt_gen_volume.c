/* Volumes of a generated iteration for `dtsim gen --summary`: bytes per GPU and in total by scheme and op kind,
 * the message-size histogram, and the seed study's closed forms computed from the configuration alone.
 * Reads each op array once (template ranks weigh as many GPUs as run them). */
#include "dt_gen.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes one member sends for an op of `bytes` on n ranks with ring algorithms (DESIGN.md §6). */
static double wire_bytes(dt_op_kind kind, double bytes, double n)
{
  switch (kind) {
  case DT_OP_ALLREDUCE:
  case DT_OP_OTHER:
    return 2 * (n - 1) / n * bytes;
  case DT_OP_ALLGATHER:
    return (n - 1) * bytes;
  case DT_OP_REDUCESCATTER:
  case DT_OP_ALLTOALL:
    return (n - 1) / n * bytes;
  case DT_OP_BROADCAST:
  case DT_OP_REDUCE:
  case DT_OP_SEND:
    return bytes;
  default:
    return 0;
  }
}

static int hist_bucket(uint64_t b)
{
  int k = 0;
  while (b > 0 && k < DT_GEN_HIST - 1) {
    b >>= 1;
    k++;
  }
  return k; /* 0 for 0 bytes, k for [2^(k-1), 2^k) */
}

int dt_gen_volume_compute(const dt_gen_config *c, const dt_trace *t, dt_gen_volume *v, dt_error *err)
{
  memset(v, 0, sizeof *v);
  if (dt_gen_world(c) != t->nranks)
    return dt_error_set(err, "", 0, 0, "trace has %d ranks, the configuration %lld", (int)t->nranks,
                        (long long)dt_gen_world(c));
  v->stages = c->pp;
  v->ranks_per_stage = c->tp * c->dp;
  for (int k = 0; k < DT_SCHEME_COUNT; k++) {
    v->stage_bytes[k] = dt_xcalloc((size_t)c->pp, sizeof(double));
    v->stage_wire[k] = dt_xcalloc((size_t)c->pp, sizeof(double));
    v->stage_ops[k] = dt_xcalloc((size_t)c->pp, sizeof(double));
  }
  v->stage_flop = dt_xcalloc((size_t)c->pp, sizeof(double));
  /* how many ranks run each op array */
  double *weight = dt_xcalloc((size_t)t->nranks, sizeof *weight);
  for (int32_t r = 0; r < t->nranks; r++) {
    int32_t owner = t->ranks[r].template_rank >= 0 ? t->ranks[r].template_rank : r;
    weight[owner] += 1;
  }
  for (int32_t r = 0; r < t->nranks; r++) {
    if (weight[r] == 0)
      continue;
    int32_t stage = r / v->ranks_per_stage;
    /* per GPU of the stage: this body's share (a materialized stage has ranks_per_stage bodies of weight 1) */
    double share = weight[r] / v->ranks_per_stage;
    const dt_rank *rk = &t->ranks[r];
    for (size_t si = 0; si < rk->nstreams; si++) {
      const dt_stream *st = &rk->streams[si];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        if (op->kind == DT_OP_COMPUTE) {
          v->stage_flop[stage] += share * op->flop;
          continue;
        }
        if (op->kind == DT_OP_RECV || !(dt_op_is_collective(op->kind) || op->kind == DT_OP_SEND))
          continue;
        double n = op->kind == DT_OP_SEND ? 2 : (double)t->groups[op->group].nranks;
        double bytes = (double)op->bytes, wire = wire_bytes(op->kind, bytes, n);
        v->kind_ops[op->kind] += weight[r];
        v->kind_bytes[op->kind] += weight[r] * bytes;
        v->hist[hist_bucket(op->bytes)] += weight[r];
        int sc = dt_gen_scheme_of(op->name);
        if (sc < 0)
          continue;
        v->stage_bytes[sc][stage] += share * bytes;
        v->stage_wire[sc][stage] += share * wire;
        v->stage_ops[sc][stage] += share;
        v->total_bytes[sc] += weight[r] * bytes;
        v->total_wire[sc] += weight[r] * wire;
        v->total_ops[sc] += weight[r];
        if (op->bytes > v->max_msg[sc])
          v->max_msg[sc] = op->bytes;
      }
    }
  }
  free(weight);
  double e = c->elem_bytes;
  v->cf_tp_msg = (double)c->microbatch * c->seq * c->hidden * e;
  v->cf_pp_msg = c->sp ? v->cf_tp_msg / c->tp : v->cf_tp_msg;
  v->cf_dp_m = (double)dt_gen_stage_params(c, 0) * e;
  v->cf_dp_volume = 2 * v->cf_dp_m;
  if (c->zero == 3)
    v->cf_dp_volume *= 1.5 * (double)dt_gen_microbatches(c);
  else if (c->zero == 2) /* a reduce-scatter of m in every micro-batch's backward, one all-gather of m at the end */
    v->cf_dp_volume = v->cf_dp_m * ((double)dt_gen_microbatches(c) + 1);
  v->cf_expert_m = (double)dt_gen_stage_expert_params(c, 0) * e;
  v->expert_dp = c->experts > 0 ? c->dp / c->ep : 1;
  v->cf_expert_volume = v->expert_dp > 1 ? 2 * v->cf_expert_m : 0;
  v->cf_dp_ring = (c->dp > 1 ? v->cf_dp_volume * (c->dp - 1) / c->dp : 0) +
                  (v->expert_dp > 1 ? v->cf_expert_volume * (v->expert_dp - 1) / v->expert_dp : 0);
  return DT_OK;
}

void dt_gen_volume_free(dt_gen_volume *v)
{
  if (!v)
    return;
  for (int k = 0; k < DT_SCHEME_COUNT; k++) {
    free(v->stage_bytes[k]);
    free(v->stage_wire[k]);
    free(v->stage_ops[k]);
  }
  free(v->stage_flop);
  memset(v, 0, sizeof *v);
}
