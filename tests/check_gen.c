/* Check suite for the GPT workload generator (traces/dt_gen*.c): every rank's sequence of collectives and
 * send/recv for a small configuration counted by hand (L 4, TP 2, PP 2, DP 2, 4 micro-batches, Megatron's 1F1B),
 * volume relations across presets (ZeRO-3 / DP, sequence length), the 1F1B and interleaved orders, rejected
 * configurations, workload files, and that generated traces validate and replay without deadlock. Expected values
 * come from the formulas written out here, never from the generator's output. */
#include "common/dt_util.h"
#include "replay/dt_replay.h"
#include "traces/dt_gen.h"
#include "traces/dt_trace.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

static void set(dt_gen_config *c, const char *key, const char *value)
{
  dt_error err;
  ck_assert_msg(dt_gen_set(c, key, value, &err) == DT_OK, "set %s=%s: %s", key, value, err.msg);
}

/* The hand-count configuration: L 4, h 64, 4 heads, f 256, V 256, s 32, b 2, bf16, TP 2, PP 2, DP 2,
 * global batch 16 = 4 micro-batches x b 2 x DP 2. */
static dt_gen_config small(void)
{
  dt_gen_config c;
  dt_gen_config_init(&c);
  set(&c, "layers", "4");
  set(&c, "hidden", "64");
  set(&c, "heads", "4");
  set(&c, "ffn", "256");
  set(&c, "vocab", "256");
  set(&c, "seq", "32");
  set(&c, "microbatch", "2");
  set(&c, "global_batch", "16");
  set(&c, "tp", "2");
  set(&c, "pp", "2");
  set(&c, "dp", "2");
  return c;
}

static dt_trace *build(const dt_gen_config *c, int materialize)
{
  dt_trace *t = NULL;
  dt_error err;
  ck_assert_msg(dt_gen_build(c, materialize, &t, &err) == DT_OK, "build: %s", err.msg);
  return t;
}

typedef struct seq {
  char **items;
  size_t n, cap;
} seq;

static void seq_add(seq *s, const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  s->items = dt_grow(s->items, &s->cap, s->n, sizeof *s->items);
  s->items[s->n++] = dt_xstrdup(buf);
}

static void seq_free(seq *s)
{
  for (size_t i = 0; i < s->n; i++)
    free(s->items[i]);
  free(s->items);
  memset(s, 0, sizeof *s);
}

static void group_text(const dt_trace *t, int32_t g, char *buf, size_t size)
{
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < t->groups[g].nranks && len + 12 < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", (int)t->groups[g].ranks[i]);
}

/* Rank's communication in issue order as text: "allreduce 0,1 8192", "send 4 t0 8192 b2" (batch ordinal). */
static void actual_comm(const dt_trace *t, int32_t rank, seq *out)
{
  size_t n = dt_trace_rank_op_count(t, rank);
  dt_dep *order = dt_xmalloc(sizeof *order * (n + 1));
  dt_trace_rank_order(t, rank, order);
  const dt_rank *body = dt_trace_rank_body(t, rank);
  int64_t last_batch = -1;
  int nbatch = -1;
  for (size_t i = 0; i < n; i++) {
    const dt_op *op = &body->streams[order[i].stream].ops[order[i].index];
    char members[256];
    if (dt_op_is_collective(op->kind)) {
      group_text(t, dt_trace_op_group(t, rank, op), members, sizeof members);
      seq_add(out, "%s %s %llu", dt_op_kind_name(op->kind), members, (unsigned long long)op->bytes);
    } else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV) {
      if (op->batch != last_batch || op->batch < 0)
        nbatch++;
      last_batch = op->batch;
      seq_add(out, "%s %d t%lld %llu b%d", dt_op_kind_name(op->kind), (int)dt_trace_op_peer(t, rank, op),
              (long long)op->tag, (unsigned long long)op->bytes, nbatch);
    }
  }
  free(order);
}

/* ---- hand count: L 4, TP 2, PP 2, DP 2, 4 micro-batches ---- */

/* Sizes by hand: TP and PP message b*s*h*e = 2*32*64*2 = 8192 bytes; cross-entropy all-reduce b*s*4 = 256.
 * Parameters per TP rank of a layer: QKV 64*192/2 + proj 64*64/2 = 8192, MLP 2*64*256/2 = 16384, two
 * LayerNorms 4*64 = 256: 24832. Embedding (V 256 already a multiple of 128*tp) 256*64/2 = 8192.
 * Stage 0: 2 layers + embedding = 57856 elements = 115712 bytes; stage 1: 2 layers + final norm 128 +
 * output layer 8192 = 57984 elements = 115968 bytes. Default buckets (40M elements) hold a stage at once. */
enum { MSG = 8192, LOSS = 256 };

static void expect_fwd(seq *s, int stage, const char *tp)
{
  if (stage == 0)
    seq_add(s, "allreduce %s %d", tp, MSG); /* vocab-parallel embedding */
  for (int l = 0; l < 2; l++) {
    seq_add(s, "allreduce %s %d", tp, MSG); /* attention output (row-parallel) */
    seq_add(s, "allreduce %s %d", tp, MSG); /* MLP output */
  }
  if (stage == 1)
    for (int k = 0; k < 3; k++)
      seq_add(s, "allreduce %s %d", tp, LOSS); /* cross entropy: max, target logit, sum exp */
}

static void expect_bwd(seq *s, int stage, const char *tp)
{
  if (stage == 1)
    seq_add(s, "allreduce %s %d", tp, MSG); /* input gradient of the column-parallel output layer */
  for (int l = 0; l < 2; l++) {
    seq_add(s, "allreduce %s %d", tp, MSG);
    seq_add(s, "allreduce %s %d", tp, MSG);
  }
}

static void expected_comm(int32_t rank, seq *s)
{
  int stage = rank / 4, dpi = (rank / 2) % 2, tpi = rank % 2;
  char tp[32], dp[32];
  snprintf(tp, sizeof tp, "%d,%d", stage * 4 + dpi * 2, stage * 4 + dpi * 2 + 1);
  snprintf(dp, sizeof dp, "%d,%d", stage * 4 + tpi, stage * 4 + 2 + tpi);
  int peer = stage == 0 ? rank + 4 : rank - 4;
  int b = 0;
  if (stage == 0) {
    /* warm-up p - 0 - 1 = 1 forward, steady 3, cool-down 1 */
    expect_fwd(s, 0, tp);
    seq_add(s, "send %d t0 %d b%d", peer, MSG, b++);
    for (int i = 0; i < 3; i++) {
      expect_fwd(s, 0, tp);
      seq_add(s, "send %d t0 %d b%d", peer, MSG, b); /* send_forward_recv_backward */
      seq_add(s, "recv %d t1 %d b%d", peer, MSG, b++);
      expect_bwd(s, 0, tp);
    }
    seq_add(s, "recv %d t1 %d b%d", peer, MSG, b++);
    expect_bwd(s, 0, tp);
    seq_add(s, "allreduce %s %d", dp, 115712); /* gradient bucket after the last backward */
  } else {
    seq_add(s, "recv %d t0 %d b%d", peer, MSG, b++);
    for (int i = 0; i < 4; i++) {
      expect_fwd(s, 1, tp);
      expect_bwd(s, 1, tp);
      if (i == 3) /* the bucket is issued as the last backward produces it, before send_backward */
        seq_add(s, "allreduce %s %d", dp, 115968);
      if (i < 3) {
        seq_add(s, "send %d t1 %d b%d", peer, MSG, b); /* send_backward_recv_forward */
        seq_add(s, "recv %d t0 %d b%d", peer, MSG, b++);
      } else {
        seq_add(s, "send %d t1 %d b%d", peer, MSG, b++);
      }
    }
  }
}

static void check_hand_counts(int materialize)
{
  dt_gen_config c = small();
  dt_trace *t = build(&c, materialize);
  ck_assert_int_eq(t->nranks, 8);
  for (int32_t r = 0; r < 8; r++) {
    seq want = {0}, got = {0};
    expected_comm(r, &want);
    actual_comm(t, r, &got);
    size_t n = want.n < got.n ? want.n : got.n;
    for (size_t i = 0; i < n; i++)
      ck_assert_msg(strcmp(want.items[i], got.items[i]) == 0, "rank %d op %zu: want '%s', got '%s'", (int)r, i,
                    want.items[i], got.items[i]);
    ck_assert_msg(want.n == got.n, "rank %d: want %zu communication ops, got %zu", (int)r, want.n, got.n);
    seq_free(&want);
    seq_free(&got);
  }
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  dt_trace_free(t);
}

START_TEST(test_hand_counts_templates)
{
  check_hand_counts(0);
}
END_TEST

START_TEST(test_hand_counts_materialized)
{
  check_hand_counts(1);
}
END_TEST

/* Templates keep one op array per stage: ops stored = the two templates' ops, not ranks x ops. */
START_TEST(test_templates_share_ops)
{
  dt_gen_config c = small();
  dt_trace *t = build(&c, 0);
  size_t stored = 0;
  for (int32_t r = 0; r < t->nranks; r++)
    for (size_t s = 0; s < t->ranks[r].nstreams; s++)
      stored += t->ranks[r].streams[s].nops;
  ck_assert_uint_eq(stored, dt_trace_rank_op_count(t, 0) + dt_trace_rank_op_count(t, 4));
  for (int32_t r = 0; r < 8; r++)
    ck_assert_int_eq(t->ranks[r].template_rank, (r == 0 || r == 4) ? -1 : (r / 4) * 4);
  dt_trace_free(t);
}
END_TEST

/* Compute: forward FLOP of a GPT layer with f = 4h is 24 b s h^2 + 4 b s^2 h (Narayanan et al. 2021); per TP rank
 * divided by t; backward twice the forward. */
START_TEST(test_flops)
{
  dt_gen_config c = small();
  set(&c, "pp", "1");
  set(&c, "dp", "1");
  set(&c, "global_batch", "2");
  dt_trace *t = build(&c, 0);
  double b = 2, s = 32, h = 64, want = (24 * b * s * h * h + 4 * b * s * s * h) / 2;
  double fwd = 0, bwd = 0, logits = 0;
  const dt_stream *st = &t->ranks[0].streams[0];
  for (size_t i = 0; i < st->nops; i++) {
    const dt_op *op = &st->ops[i];
    if (op->kind != DT_OP_COMPUTE)
      continue;
    if (strncmp(op->name, "fwd.l0.", 7) == 0)
      fwd += op->flop;
    if (strncmp(op->name, "bwd.l0.", 7) == 0)
      bwd += op->flop;
    if (strcmp(op->name, "fwd.logits") == 0)
      logits += op->flop;
  }
  ck_assert_double_eq_tol(fwd, want, want * 1e-12);
  ck_assert_double_eq_tol(bwd, 2 * want, want * 1e-12);
  ck_assert_double_eq_tol(logits, 2 * b * s * h * 256 / 2, 1);
  dt_trace_free(t);
}
END_TEST

/* ---- volume relations ---- */

static dt_gen_volume volume_of(const dt_gen_config *c)
{
  dt_trace *t = build(c, 0);
  dt_gen_volume v;
  dt_error err;
  ck_assert_msg(dt_gen_volume_compute(c, t, &v, &err) == DT_OK, "%s", err.msg);
  dt_trace_free(t);
  return v;
}

START_TEST(test_zero3_over_dp)
{
  const char *preset = dt_gen_preset_name((size_t)_i);
  dt_gen_config c;
  dt_error err;
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset(preset, &c, &err) == DT_OK);
  set(&c, "dp", "4");
  char gb[32];
  snprintf(gb, sizeof gb, "%d", 4 * c.microbatch); /* one micro-batch */
  set(&c, "global_batch", gb);
  dt_gen_volume dp = volume_of(&c);
  set(&c, "zero", "3");
  dt_gen_volume z3 = volume_of(&c);
  double a = dp.stage_wire[DT_SCHEME_DP][0] + dp.stage_wire[DT_SCHEME_ZERO][0];
  double z = z3.stage_wire[DT_SCHEME_DP][0] + z3.stage_wire[DT_SCHEME_ZERO][0];
  ck_assert_msg(a > 0 && z / a >= 1.4 && z / a <= 1.6, "%s: ZeRO-3 / DP = %g", preset, z / a);
  /* the DP all-reduce moves about 2m: 2(d-1)/d times the gradient bytes m */
  double m = (double)dt_gen_stage_params(&c, 0) * c.elem_bytes;
  ck_assert_msg(a >= 2 * 0.75 * m * 0.999 && a <= 2 * 0.75 * m * 1.001 + 8, "%s: DP wire %g, m %g", preset, a, m);
  dt_gen_volume_free(&dp);
  dt_gen_volume_free(&z3);
}
END_TEST

START_TEST(test_seq_scaling)
{
  const char *preset = dt_gen_preset_name((size_t)_i);
  dt_gen_config c;
  dt_error err;
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset(preset, &c, &err) == DT_OK);
  set(&c, "tp", "2");
  set(&c, "pp", "2");
  set(&c, "dp", "2");
  set(&c, "microbatch", "1");
  set(&c, "global_batch", "4");
  set(&c, "seq", "1024");
  dt_gen_volume v1 = volume_of(&c);
  set(&c, "seq", "2048");
  dt_gen_volume v2 = volume_of(&c);
  ck_assert_uint_eq(v2.max_msg[DT_SCHEME_TP], 2 * v1.max_msg[DT_SCHEME_TP]);
  ck_assert_uint_eq(v2.max_msg[DT_SCHEME_PP], 2 * v1.max_msg[DT_SCHEME_PP]);
  ck_assert_uint_eq(v1.max_msg[DT_SCHEME_TP], 1 * 1024 * (uint64_t)c.hidden * c.elem_bytes);
  ck_assert_double_eq(v1.total_bytes[DT_SCHEME_DP], v2.total_bytes[DT_SCHEME_DP]);
  ck_assert(v1.total_bytes[DT_SCHEME_DP] > 0);
  dt_gen_volume_free(&v1);
  dt_gen_volume_free(&v2);
}
END_TEST

/* MoE: dense and expert parameters by hand, and their closed forms scaled by the ring's (n-1)/n add up to what the
 * trace sends. small() with 8 experts, ep 2, dp 4 (expert-data-parallel groups of dp/ep = 2), 2 micro-batches.
 * Per TP rank and layer: attention 8192, router h x E = 64 x 8 = 512, norms 256: 8960 dense; an expert's MLP
 * 2 x 64 x 256 / 2 = 16384, 8 / ep = 4 experts: 65536. Stage 0 (2 layers + embedding 8192): dense 26112,
 * experts 131072. Sent per GPU: 2m (3/4) + 2mx (1/2) with e = 2. */
START_TEST(test_moe_closed_forms)
{
  dt_gen_config c = small();
  set(&c, "dp", "4");
  set(&c, "experts", "8");
  set(&c, "ep", "2");
  set(&c, "global_batch", "16");
  ck_assert_int_eq(dt_gen_stage_params(&c, 0), 26112);
  ck_assert_int_eq(dt_gen_stage_expert_params(&c, 0), 131072);
  dt_gen_volume v = volume_of(&c);
  double m = 26112.0 * 2, mx = 131072.0 * 2, sent = 2 * m * 3 / 4 + 2 * mx / 2;
  ck_assert_double_eq(v.cf_dp_m, m);
  ck_assert_double_eq(v.cf_expert_m, mx);
  ck_assert_double_eq(v.cf_expert_volume, 2 * mx);
  ck_assert_int_eq(v.expert_dp, 2);
  ck_assert_double_eq_tol(v.cf_dp_ring, sent, 1e-6);
  double wire = v.stage_wire[DT_SCHEME_DP][0] + v.stage_wire[DT_SCHEME_ZERO][0];
  ck_assert_double_eq_tol(wire, sent, 1e-6);
  dt_gen_volume_free(&v);
}
END_TEST

/* ZeRO-2 reduce-scatters the gradients in each of the m micro-batches' backward and all-gathers the parameters
 * once: m_grad (mb + 1) bytes, (dp-1)/dp of it sent. small() with pp 1, dp 4, 2 micro-batches: 4 layers x 24832
 * + embedding 8192 + final norm 128 + output layer 8192 = 115840 elements. */
START_TEST(test_zero2_closed_form)
{
  dt_gen_config c = small();
  set(&c, "pp", "1");
  set(&c, "dp", "4");
  set(&c, "zero", "2");
  set(&c, "global_batch", "16");
  dt_gen_volume v = volume_of(&c);
  double m = 115840.0 * 2;
  ck_assert_double_eq(v.cf_dp_m, m);
  ck_assert_double_eq(v.cf_dp_volume, 3 * m);
  ck_assert_double_eq_tol(v.cf_dp_ring, 3 * m * 3 / 4, 1e-6);
  ck_assert_double_eq_tol(v.stage_wire[DT_SCHEME_DP][0] + v.stage_wire[DT_SCHEME_ZERO][0], 3 * m * 3 / 4, 1e-6);
  dt_gen_volume_free(&v);
}
END_TEST

/* With SP the TP all-gather carries the b s h e / t shard and the reduce-scatter the whole b s h e; per layer and
 * micro-batch 2 all-gathers + 2 reduce-scatters forward, 4 + 2 backward (DESIGN.md §5). */
START_TEST(test_sequence_parallel)
{
  dt_gen_config c = small();
  set(&c, "pp", "1");
  set(&c, "dp", "1");
  set(&c, "global_batch", "2");
  set(&c, "sp", "true");
  dt_trace *t = build(&c, 0);
  int ag_fwd = 0, rs_fwd = 0, ag_bwd = 0, rs_bwd = 0;
  const dt_stream *st = &t->ranks[0].streams[0];
  for (size_t i = 0; i < st->nops; i++) {
    const dt_op *op = &st->ops[i];
    if (!op->name || strncmp(op->name, "tp.", 3) != 0 || !strstr(op->name, ".l1."))
      continue;
    int fwd = strncmp(op->name, "tp.fwd", 6) == 0;
    if (op->kind == DT_OP_ALLGATHER) {
      ck_assert_uint_eq(op->bytes, MSG / 2);
      fwd ? ag_fwd++ : ag_bwd++;
    } else if (op->kind == DT_OP_REDUCESCATTER) {
      ck_assert_uint_eq(op->bytes, MSG);
      fwd ? rs_fwd++ : rs_bwd++;
    }
  }
  ck_assert_int_eq(ag_fwd, 2);
  ck_assert_int_eq(rs_fwd, 2);
  ck_assert_int_eq(ag_bwd, 4);
  ck_assert_int_eq(rs_bwd, 2);
  dt_trace_free(t);
}
END_TEST

/* ---- schedule order ---- */

/* Micro-batches whose forward of `layer` (compute "fwd.l<layer>.attn") stage 0 runs before its first backward. */
static int forwards_before_backward(const dt_trace *t, int32_t rank, const char *fwd_name)
{
  size_t n = dt_trace_rank_op_count(t, rank);
  dt_dep *order = dt_xmalloc(sizeof *order * (n + 1));
  dt_trace_rank_order(t, rank, order);
  const dt_rank *body = dt_trace_rank_body(t, rank);
  int f = 0;
  for (size_t i = 0; i < n; i++) {
    const dt_op *op = &body->streams[order[i].stream].ops[order[i].index];
    if (op->kind != DT_OP_COMPUTE)
      continue;
    if (strncmp(op->name, "bwd.", 4) == 0)
      break;
    if (strcmp(op->name, fwd_name) == 0)
      f++;
  }
  free(order);
  return f;
}

START_TEST(test_1f1b_order)
{
  dt_gen_config c = small();
  set(&c, "layers", "8");
  set(&c, "pp", "4");
  set(&c, "dp", "1");
  set(&c, "global_batch", "16"); /* 8 micro-batches */
  dt_trace *t = build(&c, 0);
  /* stage k runs p - k - 1 warm-up forwards and one more before its first backward */
  for (int k = 0; k < 4; k++) {
    char name[32];
    snprintf(name, sizeof name, "fwd.l%d.attn", 2 * k);
    ck_assert_int_eq(forwards_before_backward(t, dt_gen_rank(&c, k, 0, 0), name), 4 - k);
  }
  dt_trace_free(t);
}
END_TEST

START_TEST(test_interleaved_order)
{
  dt_gen_config c = small();
  set(&c, "layers", "8");
  set(&c, "pp", "2");
  set(&c, "dp", "1");
  set(&c, "schedule", "interleaved");
  set(&c, "virtual_stages", "2");
  set(&c, "global_batch", "8"); /* 4 micro-batches, a multiple of pp */
  dt_trace *t = build(&c, 0);
  /* stage 0 holds chunks 0 (layers 0-1) and 2 (layers 4-5); warm-up (p-1)*2 + (v-1)*p = 4 forwards of chunks
   * taken p micro-batches at a time: chunk 0 mb 0,1, chunk 1 mb 0,1; then one more forward (chunk 0, mb 2) */
  ck_assert_int_eq(forwards_before_backward(t, 0, "fwd.l0.attn"), 3);
  ck_assert_int_eq(forwards_before_backward(t, 0, "fwd.l4.attn"), 2);
  /* stage 1 (chunks 1 and 3): warm-up (v-1)*p = 2 forwards of chunk 1, then chunk 3 mb 0 */
  ck_assert_int_eq(forwards_before_backward(t, 2, "fwd.l2.attn"), 2);
  ck_assert_int_eq(forwards_before_backward(t, 2, "fwd.l6.attn"), 1);
  /* every layer runs every micro-batch forward and backward once */
  const dt_stream *st = &t->ranks[2].streams[0];
  int f6 = 0, b6 = 0;
  for (size_t i = 0; i < st->nops; i++) {
    f6 += st->ops[i].name && strcmp(st->ops[i].name, "fwd.l6.attn") == 0;
    b6 += st->ops[i].name && strcmp(st->ops[i].name, "bwd.l6.attn") == 0;
  }
  ck_assert_int_eq(f6, 4);
  ck_assert_int_eq(b6, 4);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  dt_trace_free(t);
}
END_TEST


/* ---- overlap options: streams, order and waits by hand ---- */

/* The stream position of stream id `id` on rank r (-1 when absent). */
static int stream_of(const dt_trace *t, int32_t r, int32_t id)
{
  const dt_rank *rk = &t->ranks[r];
  for (size_t s = 0; s < rk->nstreams; s++)
    if (rk->streams[s].id == id)
      return (int)s;
  return -1;
}

/* "s<id>:<index>" of every op op waits for (after=), in order, as one string. */
static void deps_text(const dt_trace *t, int32_t r, const dt_op *op, char *buf, size_t size)
{
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t d = 0; d < op->ndeps && len + 16 < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%ss%d:%d", d ? " " : "", (int)t->ranks[r].streams[op->deps[d].stream].id,
                            (int)op->deps[d].index);
}

/* The n-th (0-based) op named name on stream id of rank r. */
static const dt_op *nth_op(const dt_trace *t, int32_t r, int32_t id, const char *name, int n)
{
  int s = stream_of(t, r, id);
  ck_assert_msg(s >= 0, "rank %d has no stream s%d", (int)r, (int)id);
  const dt_stream *st = &t->ranks[r].streams[s];
  for (size_t i = 0; i < st->nops; i++)
    if (st->ops[i].name && strcmp(st->ops[i].name, name) == 0 && n-- == 0)
      return &st->ops[i];
  ck_abort_msg("rank %d s%d: no op %s", (int)r, (int)id, name);
  return NULL;
}

/* Index on its stream of the n-th op named name on stream id of rank r. */
static int nth_index(const dt_trace *t, int32_t r, int32_t id, const char *name, int n)
{
  const dt_op *op = nth_op(t, r, id, name, n);
  return (int)(op - t->ranks[r].streams[stream_of(t, r, id)].ops);
}

/* overlap_param_gather, by hand: L 4, h 64, f 256, V 256 (untied), tp 1, pp 1, dp 2, ZeRO-1, bucket 0 (one bucket
 * per gradient unit). Units per rank: embedding 256*64 = 16384, each layer QKV 64*192 + proj 64*64 + MLP
 * 2*64*256 + norms 4*64 = 49408, output layer 16384 + final norm 128 = 16512 elements (all even: no padding).
 * The last backward fills bucket0 = output, 1-4 = layers 3..0, 5 = embedding; a gather's bytes are its shard,
 * elements / 2 * 2 bytes. The window starts with the gathers of the previous step's update: bucket5 at once and
 * bucket4 with it (no s0 op yet when the embedding's pre-hook dispatches it), each later one after the s0 op
 * before the previous bucket's first layer; the first forward of each unit waits for its bucket. */
START_TEST(test_param_gather_overlap)
{
  dt_gen_config c = small();
  set(&c, "tp", "1");
  set(&c, "pp", "1");
  set(&c, "global_batch", "16"); /* 4 micro-batches of b 2 on dp 2 */
  set(&c, "zero", "1");
  set(&c, "bucket", "0");
  set(&c, "overlap_param_gather", "true");
  dt_trace *t = build(&c, 0);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  int s1 = stream_of(t, 0, 1);
  const dt_stream *g = &t->ranks[0].streams[s1];
  /* s1: six gathers in forward order, then the six reduce-scatters of the last backward; nothing after */
  static const char *const want[][3] = {
      {"zero.ag.bucket5", "16384", ""},
      {"zero.ag.bucket4", "49408", ""},
      {"zero.ag.bucket3", "49408", "fwd.embed"},
      {"zero.ag.bucket2", "49408", "fwd.l0.mlp"},
      {"zero.ag.bucket1", "49408", "fwd.l1.mlp"},
      {"zero.ag.bucket0", "16512", "fwd.l2.mlp"},
  };
  ck_assert_int_eq(g->nops, 12);
  const dt_stream *s0 = &t->ranks[0].streams[stream_of(t, 0, 0)];
  for (int i = 0; i < 6; i++) {
    const dt_op *op = &g->ops[i];
    ck_assert_str_eq(op->name, want[i][0]);
    ck_assert_int_eq(op->kind, DT_OP_ALLGATHER);
    ck_assert_uint_eq(op->bytes, strtoull(want[i][1], NULL, 10));
    if (!*want[i][2]) {
      ck_assert_int_eq(op->ndeps, 0);
    } else {
      ck_assert_int_eq(op->ndeps, 1);
      ck_assert_int_eq(op->deps[0].stream, stream_of(t, 0, 0));
      ck_assert_str_eq(s0->ops[op->deps[0].index].name, want[i][2]);
      ck_assert_int_eq(op->deps[0].index, nth_index(t, 0, 0, want[i][2], 0)); /* the first micro-batch's */
    }
  }
  for (int i = 6; i < 12; i++) {
    char name[32];
    snprintf(name, sizeof name, "zero.rs.bucket%d", i - 6);
    ck_assert_str_eq(g->ops[i].name, name);
    ck_assert_int_eq(g->ops[i].kind, DT_OP_REDUCESCATTER);
    /* the gather of bucket k is its reduce-scatter's shard: bytes / dp */
    char ag[32];
    snprintf(ag, sizeof ag, "zero.ag.bucket%d", i - 6);
    ck_assert_uint_eq(nth_op(t, 0, 1, ag, 0)->bytes * 2, g->ops[i].bytes);
  }
  /* each unit's first forward waits for its bucket's gather; its later forwards wait for nothing on s1 */
  static const char *const first[][2] = {{"fwd.embed", "s1:0"},   {"fwd.l0.attn", "s1:1"}, {"fwd.l1.attn", "s1:2"},
                                         {"fwd.l2.attn", "s1:3"}, {"fwd.l3.attn", "s1:4"}, {"fwd.logits", "s1:5"}};
  for (int i = 0; i < 6; i++) {
    char deps[128];
    deps_text(t, 0, nth_op(t, 0, 0, first[i][0], 0), deps, sizeof deps);
    ck_assert_msg(strcmp(deps, first[i][1]) == 0, "%s waits for '%s', expected '%s'", first[i][0], deps, first[i][1]);
    for (int mb = 1; mb < 4; mb++)
      ck_assert_int_eq(nth_op(t, 0, 0, first[i][0], mb)->ndeps, 0);
  }
  dt_trace_free(t);
  /* without the flag the same buckets are gathered after the last s0 op, in backward order */
  set(&c, "overlap_param_gather", "false");
  t = build(&c, 0);
  g = &t->ranks[0].streams[stream_of(t, 0, 1)];
  ck_assert_int_eq(g->nops, 12);
  s0 = &t->ranks[0].streams[stream_of(t, 0, 0)];
  for (int i = 6; i < 12; i++) {
    char name[32];
    snprintf(name, sizeof name, "zero.ag.bucket%d", i - 6);
    ck_assert_str_eq(g->ops[i].name, name);
    ck_assert_int_eq(g->ops[i].deps[0].index, (int)s0->nops - 1);
  }
  dt_trace_free(t);
  /* param_gather_prefetch chunk (MegaScale): one model chunk here, so all six gathers open the window in forward
   * order with no dependency, and the chunk's first forward op waits for the last of them (s1 runs them in order);
   * no other forward op waits on s1 */
  set(&c, "overlap_param_gather", "true");
  set(&c, "param_gather_prefetch", "chunk");
  t = build(&c, 0);
  g = &t->ranks[0].streams[stream_of(t, 0, 1)];
  ck_assert_int_eq(g->nops, 12);
  for (int i = 0; i < 6; i++) {
    ck_assert_str_eq(g->ops[i].name, want[i][0]);
    ck_assert_int_eq(g->ops[i].ndeps, 0);
  }
  s0 = &t->ranks[0].streams[stream_of(t, 0, 0)];
  for (size_t i = 0; i < s0->nops; i++) {
    char deps[128];
    deps_text(t, 0, &s0->ops[i], deps, sizeof deps);
    ck_assert_msg(strcmp(deps, i == 0 ? "s1:5" : "") == 0, "s0 op %zu (%s) waits for '%s'", i, s0->ops[i].name, deps);
  }
  dt_trace_free(t);
  dt_error_clear(&err);
  ck_assert_int_eq(dt_gen_set(&c, "param_gather_prefetch", "layer", &err), DT_ERR);
  ck_assert_str_eq(err.msg, "'param_gather_prefetch' expects bucket or chunk, found 'layer'");
  /* Megatron refuses the flag without the distributed optimizer */
  dt_gen_config z = small();
  set(&z, "overlap_param_gather", "true");
  dt_error_clear(&err);
  ck_assert_int_eq(dt_gen_validate(&z, 0, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "overlap_param_gather needs ZeRO stage 1") != NULL, "%s", err.msg);
}
END_TEST

/* p2p_overlap on the interleaved schedule, by hand: L 4, tp 1, pp 2, dp 1, v 2 (one layer per chunk), 4
 * micro-batches. Stage 1 holds chunk 0 = layer 1 and chunk 1 = layer 3 (the logits); chunk_of(k) = (k mod 4) / 2,
 * mb_of(k) = (k / 4) * 2 + k mod 2; warm-up (p - 1 - 1) * 2 + (v - 1) * p = 2 forwards, 6 steady steps.
 *  - recv_forward for k 0, blocking: recv_fwd.mb0 on s5, waited by the first forward (fwd.l1.attn #0);
 *  - warm-up k 0: forward (chunk 0, mb 0), then send_forward_recv_forward posted: recv_fwd.mb1 (s5:1), send_fwd.mb0
 *    (s3:0), both after fwd.l1.mlp #0 and waited by the next forward, fwd.l1.attn #1;
 *  - warm-up k 1 (the last): forward (chunk 0, mb 1), recv_fwd.mb2 (s5:2) and send_fwd.mb1 (s3:1), waited by the
 *    first steady forward fwd.l3.attn #0; its send_backward_recv_backward has nothing (the last stage's first
 *    backward needs no gradient);
 *  - steady k 0: forward chunk 1 mb 0 (nothing to send), recv_fwd.mb3 (s5:3); backward chunk 1 mb 0 (waits
 *    nothing), send_bwd.mb0 (s4:0); recv_next: chunk_of(k - 1) backward is chunk 0: none;
 *  - steady k 1: forward chunk 1 mb 1 waits s5:3, posts recv_fwd.mb4 (s5:4); backward chunk 1 mb 1 waits s4:0,
 *    posts send_bwd.mb1 (s4:1) and recv_bwd.mb0 (s6:0);
 *  - steady k 2: forward chunk 0 mb 2 (fwd.l1.attn #2) waits s5:4; backward chunk 0 mb 0 (bwd.l1.mlp #0) waits
 *    s4:1 and s6:0.
 * In all: s5 8 receives (every forward), s6 4 (chunk 0's backwards), s3 4 sends (chunk 0's forwards), s4 8 (every
 * backward), no p2p op on s0. */
START_TEST(test_p2p_early_receives)
{
  dt_gen_config c = small();
  set(&c, "tp", "1");
  set(&c, "dp", "1");
  set(&c, "global_batch", "8"); /* 4 micro-batches of b 2 */
  set(&c, "schedule", "interleaved");
  set(&c, "virtual_stages", "2");
  set(&c, "p2p_overlap", "true");
  dt_trace *t = build(&c, 0);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "validate: %s", err.msg);
  const int32_t r = 1; /* stage 1 */
  static const struct {
    int id;
    size_t n;
    dt_op_kind kind;
    int tag;
  } streams[] = {{3, 4, DT_OP_SEND, 0}, {4, 8, DT_OP_SEND, 1}, {5, 8, DT_OP_RECV, 0}, {6, 4, DT_OP_RECV, 1}};
  for (size_t k = 0; k < 4; k++) {
    const dt_stream *st = &t->ranks[r].streams[stream_of(t, r, streams[k].id)];
    ck_assert_msg(st->nops == streams[k].n, "s%d: %zu ops, expected %zu", streams[k].id, st->nops, streams[k].n);
    for (size_t i = 0; i < st->nops; i++) {
      ck_assert_int_eq(st->ops[i].kind, streams[k].kind);
      ck_assert_int_eq(st->ops[i].tag, streams[k].tag);
      ck_assert_int_eq(st->ops[i].peer, 0);
      ck_assert_int_eq(st->ops[i].batch, -1);
    }
  }
  const dt_stream *s0 = &t->ranks[r].streams[stream_of(t, r, 0)];
  for (size_t i = 0; i < s0->nops; i++)
    ck_assert(s0->ops[i].kind != DT_OP_SEND && s0->ops[i].kind != DT_OP_RECV);
  static const struct {
    const char *name;
    int n;
    const char *deps;
  } waits[] = {{"fwd.l1.attn", 0, "s5:0"},      {"fwd.l1.attn", 1, "s5:1 s3:0"}, {"fwd.l3.attn", 0, "s5:2 s3:1"},
               {"bwd.logits", 0, ""},           {"fwd.l3.attn", 1, "s5:3"},      {"bwd.logits", 1, "s4:0"},
               {"fwd.l1.attn", 2, "s5:4"},      {"bwd.l1.mlp", 0, "s4:1 s6:0"}};
  for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
    char deps[128];
    deps_text(t, r, nth_op(t, r, 0, waits[i].name, waits[i].n), deps, sizeof deps);
    ck_assert_msg(strcmp(deps, waits[i].deps) == 0, "%s #%d waits for '%s', expected '%s'", waits[i].name, waits[i].n,
                  deps, waits[i].deps);
  }
  /* names and posting points: recv_fwd.mb1 and send_fwd.mb0 after the first forward's last op */
  static const struct {
    int id, index;
    const char *name, *after;
    int n;
  } posts[] = {{5, 0, "pp.recv_fwd.mb0", NULL, 0},     {5, 1, "pp.recv_fwd.mb1", "fwd.l1.mlp", 0},
               {3, 0, "pp.send_fwd.mb0", "fwd.l1.mlp", 0}, {5, 3, "pp.recv_fwd.mb3", "fwd.logits", 0},
               {4, 0, "pp.send_bwd.mb0", "bwd.l3.attn", 0}, {6, 0, "pp.recv_bwd.mb0", "bwd.l3.attn", 1}};
  for (size_t i = 0; i < sizeof posts / sizeof posts[0]; i++) {
    const dt_op *op = &t->ranks[r].streams[stream_of(t, r, posts[i].id)].ops[posts[i].index];
    ck_assert_str_eq(op->name, posts[i].name);
    if (!posts[i].after) {
      ck_assert_int_eq(op->ndeps, 0);
      continue;
    }
    ck_assert_int_eq(op->ndeps, 1);
    ck_assert_int_eq(op->deps[0].index, nth_index(t, r, 0, posts[i].after, posts[i].n));
  }
  dt_trace_free(t);
}
END_TEST

/* ---- rejected configurations ---- */

static void expect_reject(dt_gen_config *c, int64_t gpus, const char *needle)
{
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_gen_validate(c, gpus, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
}

START_TEST(test_rejects)
{
  dt_gen_config c = small();
  set(&c, "tp", "8");
  expect_reject(&c, 0, "does not divide the 4 attention heads");
  c = small();
  set(&c, "heads", "8");
  set(&c, "kv_heads", "2");
  set(&c, "tp", "4");
  set(&c, "dp", "1");
  set(&c, "global_batch", "8");
  expect_reject(&c, 0, "does not divide the 2 key/value heads");
  c = small();
  set(&c, "pp", "3");
  expect_reject(&c, 0, "pipeline parallel size 3 does not divide the 4 layers");
  c = small();
  set(&c, "schedule", "interleaved");
  set(&c, "virtual_stages", "4");
  expect_reject(&c, 0, "x virtual stages (4) = 8 does not divide the 4 layers");
  c = small();
  set(&c, "global_batch", "18");
  expect_reject(&c, 0, "global batch 18 is not a multiple of micro-batch 2 x data parallel size 2");
  c = small();
  expect_reject(&c, 4, "= 8 needs more GPUs than the platform's 4");
  c = small();
  set(&c, "zero", "3");
  expect_reject(&c, 0, "ZeRO stage 3 with pipeline parallelism");
  c = small();
  set(&c, "experts", "6");
  set(&c, "ep", "4");
  expect_reject(&c, 0, "expert parallel size 4 does not divide the 6 experts");
  c = small();
  set(&c, "experts", "8");
  set(&c, "ep", "4");
  expect_reject(&c, 0, "expert parallel size 4 does not divide the data parallel size 2");
  c = small();
  ck_assert_int_eq(dt_gen_validate(&c, 8, NULL), DT_OK);

  dt_error err;
  ck_assert_int_eq(dt_gen_set(&c, "tpp", "2", &err), DT_ERR);
  ck_assert_str_eq(err.msg, "unknown key 'tpp' (did you mean 'tp'?)");
  ck_assert_int_eq(dt_gen_set(&c, "recompute", "some", &err), DT_ERR);
  ck_assert_int_eq(dt_gen_set(&c, "zero", "4", &err), DT_ERR);
  ck_assert_int_eq(dt_gen_preset("gpt3-175", &c, &err), DT_ERR);
  ck_assert_str_eq(err.msg, "unknown preset 'gpt3-175' (did you mean 'gpt3-175b'?)");
}
END_TEST

START_TEST(test_workload_yaml)
{
  static const char good[] = "dtsim_workload: 1\n"
                             "preset: llama2-70b\n"
                             "training: {microbatch: 1, global_batch: 64}\n"
                             "parallel:\n"
                             "  tp: 8\n"
                             "  pp: 4\n"
                             "  dp: 2\n"
                             "  sp: true\n"
                             "  recompute: selective\n";
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  ck_assert_msg(dt_gen_parse_yaml(good, strlen(good), "w.yaml", &c, &err) == DT_OK, "%s", err.msg);
  ck_assert_int_eq(c.layers, 80);
  ck_assert_int_eq(c.kv_heads, 8);
  ck_assert_int_eq(c.ffn, 28672);
  ck_assert_int_eq(c.tp, 8);
  ck_assert_int_eq(c.sp, 1);
  ck_assert_int_eq(c.recompute, DT_RECOMPUTE_SELECTIVE);
  ck_assert_int_eq(dt_gen_validate(&c, 0, &err), DT_OK);

  static const char bad[] = "dtsim_workload: 1\n"
                            "parallel:\n"
                            "  tp: 2\n"
                            "  pipline: 4\n";
  dt_gen_config_init(&c);
  ck_assert_int_eq(dt_gen_parse_yaml(bad, strlen(bad), "w.yaml", &c, &err), DT_ERR);
  ck_assert_str_eq(err.file, "w.yaml");
  ck_assert_int_eq(err.line, 4);
  ck_assert_int_eq(err.col, 3);
  ck_assert_msg(strstr(err.msg, "unknown key 'pipline'") != NULL, "%s", err.msg);

  static const char badval[] = "dtsim_workload: 1\nmodel: {layers: four}\n";
  ck_assert_int_eq(dt_gen_parse_yaml(badval, strlen(badval), "w.yaml", &c, &err), DT_ERR);
  ck_assert_int_eq(err.line, 2);
  ck_assert_int_eq(err.col, 17);
}
END_TEST

/* A repeated key (libyaml keeps both) or section is an error at the repeat, naming the first line, as the platform
 * loader does. Columns counted by hand: "parallel: {tp: 2, " is 18 characters. */
START_TEST(test_workload_duplicates)
{
  static const char flow[] = "dtsim_workload: 1\npreset: neox-1.3b\nparallel: {tp: 2, tp: 4}\n";
  static const char block[] = "dtsim_workload: 1\nparallel:\n  tp: 2\n  dp: 2\n  tp: 4\n";
  static const char section[] =
      "dtsim_workload: 1\nparallel: {tp: 2}\ntraining: {global_batch: 8}\nparallel: {dp: 2}\n";
  static const char preset[] = "dtsim_workload: 1\npreset: neox-19m\npreset: neox-1.3b\n";
  const struct {
    const char *text;
    long line, col;
    const char *msg;
  } cases[] = {
      {flow, 3, 19, "duplicate key 'tp' in 'parallel' (first given at line 3)"},
      {block, 5, 3, "duplicate key 'tp' in 'parallel' (first given at line 3)"},
      {section, 4, 1, "duplicate key 'parallel' at the top level (first given at line 2)"},
      {preset, 3, 1, "duplicate key 'preset' at the top level (first given at line 2)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dt_gen_config c;
    dt_gen_config_init(&c);
    dt_error err;
    dt_error_clear(&err);
    ck_assert_int_eq(dt_gen_parse_yaml(cases[i].text, strlen(cases[i].text), "w.yaml", &c, &err), DT_ERR);
    ck_assert_str_eq(err.file, "w.yaml");
    ck_assert_int_eq(err.line, cases[i].line);
    ck_assert_int_eq(err.col, cases[i].col);
    ck_assert_str_eq(err.msg, cases[i].msg);
  }
}
END_TEST

static void parse_ok(const char *text, dt_gen_config *c)
{
  dt_error err;
  dt_gen_config_init(c);
  ck_assert_msg(dt_gen_parse_yaml(text, strlen(text), "w.yaml", c, &err) == DT_OK, "%s", err.msg);
}

static void expect_reject_at(const dt_gen_config *c, const char *file, long line, long col, const char *msg)
{
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_gen_validate(c, 0, &err), DT_ERR);
  ck_assert_str_eq(err.file, file);
  ck_assert_int_eq(err.line, line);
  ck_assert_int_eq(err.col, col);
  ck_assert_msg(strstr(err.msg, msg) != NULL, "message '%s' lacks '%s'", err.msg, msg);
}

/* A rejected value that a workload file set is reported at that file's key; a flag (dt_gen_set after the file)
 * takes the position away; the preset named in the file stands for the keys it set. */
START_TEST(test_workload_value_positions)
{
  dt_gen_config c;
  /* neox-1.3b has 16 heads; "parallel: {" is 11 characters, so tp is at column 12 */
  parse_ok("dtsim_workload: 1\npreset: neox-1.3b\nparallel: {tp: 3}\n", &c);
  ck_assert_str_eq(c.source, "w.yaml");
  long line = 0, col = 0;
  ck_assert_int_eq(dt_gen_key_pos(&c, "tp", &line, &col), 1);
  ck_assert_int_eq(line, 3);
  ck_assert_int_eq(col, 12);
  ck_assert_int_eq(dt_gen_key_pos(&c, "heads", &line, &col), 1);
  ck_assert_int_eq(line, 2);
  ck_assert_int_eq(dt_gen_key_pos(&c, "dp", &line, &col), 0);
  expect_reject_at(&c, "w.yaml", 3, 12, "tensor parallel size 3 does not divide the 16 attention heads");
  /* the same tp from a flag: the heads the file's preset set are the other half of the conflict */
  set(&c, "tp", "3");
  ck_assert_int_eq(dt_gen_key_pos(&c, "tp", &line, &col), 0);
  expect_reject_at(&c, "w.yaml", 2, 1, "tensor parallel size 3 does not divide the 16 attention heads");
  /* ZeRO-3 with pp 2: at the zero key (line 4, column 19) */
  parse_ok("dtsim_workload: 1\npreset: neox-1.3b\ntraining: {global_batch: 16}\nparallel: {pp: 2, zero: 3}\n", &c);
  expect_reject_at(&c, "w.yaml", 4, 19, "ZeRO stage 3 with pipeline parallelism (pp 2)");
  /* no model: the file alone, or its model section */
  parse_ok("dtsim_workload: 1\nparallel: {tp: 2}\n", &c);
  expect_reject_at(&c, "w.yaml", 0, 0, "no model: layers, hidden, heads, ffn, seq, vocab are not set");
  parse_ok("dtsim_workload: 1\ntraining: {global_batch: 4}\nmodel: {layers: 4, hidden: 64}\n", &c);
  expect_reject_at(&c, "w.yaml", 3, 1, "no model: heads, ffn, seq, vocab are not set");
  /* nothing from a file: no position */
  c = small();
  set(&c, "tp", "8");
  expect_reject_at(&c, "", 0, 0, "does not divide the 4 attention heads");
}
END_TEST

/* Counts state their range; --bucket takes `dtsim bench`'s sizes (K, M, G powers of 1024) besides SI and IEC
 * units; 0 or a size below one layer's gradients issues every gradient unit alone. */
START_TEST(test_value_ranges_and_sizes)
{
  dt_gen_config c = small();
  dt_error err;
  ck_assert_int_eq(dt_gen_set(&c, "microbatch", "1000000000", &err), DT_ERR);
  ck_assert_str_eq(err.msg, "'microbatch' expects a whole number from 1 to 100000000, found '1000000000'");
  ck_assert_int_eq(dt_gen_set(&c, "global_batch", "0", &err), DT_ERR);
  ck_assert_str_eq(err.msg, "'global_batch' expects a whole number from 1 to 1125899906842624, found '0'");
  const struct {
    const char *text;
    int64_t bytes;
  } sizes[] = {{"25M", 25LL << 20},   {"512K", 512LL << 10}, {"1G", 1LL << 30}, {"2T", 2LL << 40}, {"80MB", 80000000},
               {"64MiB", 64LL << 20}, {"1048576", 1048576},  {"0", 0},          {"default", -1}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    ck_assert_msg(dt_gen_set(&c, "bucket", sizes[i].text, &err) == DT_OK, "%s: %s", sizes[i].text, err.msg);
    ck_assert_msg(c.bucket_bytes == sizes[i].bytes, "%s: %lld", sizes[i].text, (long long)c.bucket_bytes);
  }
  ck_assert_int_eq(dt_gen_set(&c, "bucket", "25X", &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "powers of 1024") != NULL, "%s", err.msg);

  /* buckets on stage 0 of small() with pp 1: the output layer, 4 layers and the embedding are the gradient units
   * (docs/generator.md); the default bucket (40M elements) holds them all */
  set(&c, "pp", "1");
  const char *const per_unit[] = {"0", "1", "16K"};
  for (int k = -1; k < 3; k++) {
    set(&c, "bucket", k < 0 ? "default" : per_unit[k]);
    dt_trace *t = build(&c, 0);
    int buckets = 0;
    for (size_t s = 0; s < t->ranks[0].nstreams; s++)
      for (size_t i = 0; i < t->ranks[0].streams[s].nops; i++) {
        const char *n = t->ranks[0].streams[s].ops[i].name;
        buckets += n && strncmp(n, "dp.bucket", 9) == 0;
      }
    ck_assert_msg(buckets == (k < 0 ? 1 : 6), "bucket %s: %d buckets", k < 0 ? "default" : per_unit[k], buckets);
    dt_trace_free(t);
  }
}
END_TEST

/* tp_overlap overlaps SP's collectives: without sp it is refused at its key (as overlap_param_gather without
 * ZeRO-1; it silently moved the TP all-reduces to s2); p2p_overlap with pp 1 changes nothing and says so. */
START_TEST(test_overlap_needs)
{
  dt_gen_config c = small();
  char note[1024];
  set(&c, "tp_overlap", "true");
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 0);
  expect_reject_at(&c, "", 0, 0, "tp_overlap needs sp");
  set(&c, "sp", "true");
  set(&c, "p2p_overlap", "true");
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 0);
  ck_assert_str_eq(note, "");
  dt_error err;
  ck_assert_msg(dt_gen_validate(&c, dt_gen_world(&c), &err) == DT_OK, "%s", err.msg);
  /* tp 1: sp is turned off (a note), then tp_overlap is refused saying why; p2p_overlap with pp 1 is noted */
  set(&c, "tp", "1");
  set(&c, "pp", "1");
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 2);
  ck_assert_msg(strstr(note, "tp is 1 (Megatron-LM does the same)\np2p_overlap has no effect: pp is 1") != NULL, "%s",
                note);
  ck_assert_int_eq(c.p2p_overlap, 1);
  expect_reject_at(&c, "", 0, 0, "tp_overlap needs sp: it overlaps sequence parallelism's all-gathers and "
                   "reduce-scatters with their GEMMs (sp is off: tp is 1)");
  /* from a workload file, at the key's position */
  parse_ok("dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: 2, tp_overlap: true}\n", &c);
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 0);
  expect_reject_at(&c, "w.yaml", 3, 19, "tp_overlap needs sp");
}
END_TEST

/* Megatron-LM turns sequence parallelism off when tp is 1 (arguments.py); so does dt_gen_resolve, with a note. */
START_TEST(test_sp_without_tp)
{
  dt_gen_config c = small();
  char note[256];
  set(&c, "tp", "1");
  set(&c, "sp", "true");
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 1);
  ck_assert_int_eq(c.sp, 0);
  ck_assert_msg(strstr(note, "sequence parallelism turned off: tp is 1") != NULL, "%s", note);
  parse_ok("dtsim_workload: 1\npreset: neox-19m\nparallel: {sp: true}\n", &c);
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 1);
  ck_assert_msg(strncmp(note, "w.yaml:3:12: ", 13) == 0, "%s", note);
  c = small();
  set(&c, "sp", "true");
  ck_assert_int_eq(dt_gen_resolve(&c, note, sizeof note), 0);
  ck_assert_int_eq(c.sp, 1);
  ck_assert_str_eq(note, "");
}
END_TEST

/* A workload path that is a directory says so. */
START_TEST(test_workload_directory)
{
  char dir[] = "/tmp/check_gen_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  ck_assert_int_eq(dt_gen_load_yaml(dir, &c, &err), DT_ERR);
  ck_assert_str_eq(err.file, dir);
  ck_assert_str_eq(err.msg, "is a directory, not a workload file");
  rmdir(dir);
}
END_TEST

/* ---- validation and replay without deadlock ---- */

static const char *const replay_cases[][2] = {
    {"neox-19m", "tp=2 pp=2 dp=2 global_batch=32"},
    {"neox-19m", "tp=2 pp=2 dp=4 global_batch=32 sp=true recompute=full zero=1"},
    {"neox-19m", "pp=4 dp=2 layers=8 global_batch=32 schedule=interleaved virtual_stages=2"},
    {"neox-19m", "tp=2 pp=3 layers=12 global_batch=24 schedule=interleaved virtual_stages=2 sp=true"},
    {"neox-19m", "tp=2 dp=8 zero=3 global_batch=32"},
    {"neox-19m", "dp=8 zero=2 global_batch=64 dp_overlap=false bucket=4MB"},
    {"neox-19m", "tp=2 pp=2 dp=4 experts=8 top_k=2 ep=2 global_batch=32"},
    {"gpt3-175b", "tp=4 pp=4 dp=1 layers=8 global_batch=8 seq=256 recompute=selective"},
    {"llama2-70b", "tp=8 pp=2 layers=4 global_batch=4 seq=512"},
};
#define NREPLAY (int)(sizeof replay_cases / sizeof replay_cases[0])

static void apply(dt_gen_config *c, const char *preset, const char *kv)
{
  dt_error err;
  ck_assert(dt_gen_preset(preset, c, &err) == DT_OK);
  char *copy = dt_xstrdup(kv), *save = NULL;
  for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(tok, '=');
    *eq = '\0';
    set(c, tok, eq + 1);
  }
  free(copy);
}

START_TEST(test_replay_no_deadlock)
{
  dt_gen_config c;
  dt_gen_config_init(&c);
  apply(&c, replay_cases[_i][0], replay_cases[_i][1]);
  dt_trace *t = build(&c, 0);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "case %d: %s", _i, err.msg);
  /* two nodes of 8 GPUs behind one switch */
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.name = "gen-test";
  p.source = "gen-test.yaml";
  p.gpu_model = "H100";
  p.gpu_peak = 989e12;
  p.gpu_efficiency = 0.5;
  p.nodes = 2;
  p.gpus_per_node = 8;
  p.intra_kind = DT_INTRA_NVSWITCH;
  p.intra_bandwidth = 450e9;
  p.intra_latency = 1e-6;
  p.nics_per_node = 8;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 50e9;
  p.link_latency = 3e-7;
  p.oversubscription = 1;
  p.bandwidth_factor = 1;
  p.latency_factor = 1;
  dt_stats *s = NULL;
  ck_assert_msg(dt_replay_run(&p, t, NULL, &s, &err) == DT_OK, "case %d: %s", _i, err.msg);
  ck_assert_msg(s->ndeadlock == 0, "case %d deadlocks: %s", _i, s->ndeadlock ? s->deadlock[0] : "");
  ck_assert(s->makespan_s > 0);
  /* nothing overlaps compute on a rank's main stream, so the makespan is at least rank 0's compute time */
  ck_assert(s->makespan_s >= s->per_rank[0].compute_s);
  dt_stats_free(s);
  dt_trace_free(t);
}
END_TEST

static Suite *gen_suite(void)
{
  Suite *s = suite_create("gen");
  TCase *tc = tcase_create("hand_counts");
  tcase_add_test(tc, test_hand_counts_templates);
  tcase_add_test(tc, test_hand_counts_materialized);
  tcase_add_test(tc, test_templates_share_ops);
  tcase_add_test(tc, test_flops);
  tcase_add_test(tc, test_sequence_parallel);
  suite_add_tcase(s, tc);
  tc = tcase_create("volumes");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_zero3_over_dp, 0, (int)dt_gen_preset_count());
  tcase_add_loop_test(tc, test_seq_scaling, 0, (int)dt_gen_preset_count());
  tcase_add_test(tc, test_moe_closed_forms);
  tcase_add_test(tc, test_zero2_closed_form);
  suite_add_tcase(s, tc);
  tc = tcase_create("schedules");
  tcase_add_test(tc, test_1f1b_order);
  tcase_add_test(tc, test_interleaved_order);
  tcase_add_test(tc, test_param_gather_overlap);
  tcase_add_test(tc, test_p2p_early_receives);
  suite_add_tcase(s, tc);
  tc = tcase_create("inputs");
  tcase_add_test(tc, test_rejects);
  tcase_add_test(tc, test_workload_yaml);
  tcase_add_test(tc, test_workload_duplicates);
  tcase_add_test(tc, test_workload_value_positions);
  tcase_add_test(tc, test_value_ranges_and_sizes);
  tcase_add_test(tc, test_sp_without_tp);
  tcase_add_test(tc, test_overlap_needs);
  tcase_add_test(tc, test_workload_directory);
  suite_add_tcase(s, tc);
  tc = tcase_create("replay");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_replay_no_deadlock, 0, NREPLAY);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(gen_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
