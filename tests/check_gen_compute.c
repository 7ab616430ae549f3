/* The generator's compute shapes and the options of issue 13 (docs/generator.md, docs/compute.md): kernels that
 * add up to each op's FLOP with the GEMM shapes written out by hand, FP8, context parallelism, shape overrides
 * that derive what depends on them, DeepSpeed's pipeline partition, TP and p2p overlap, and the kernels= round
 * trip through the native format. Expected values come from the formulas here, never from the generator. */
#include "common/dt_util.h"
#include "replay/dt_replay.h"
#include "traces/dt_gen.h"
#include "traces/dt_trace.h"
#include "traces/dt_trace_io.h"

#include "dt_test.h"

#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void set(dt_gen_config *c, const char *key, const char *value)
{
  dt_error err;
  ck_assert_msg(dt_gen_set(c, key, value, &err) == DT_OK, "set %s=%s: %s", key, value, err.msg);
}

/* L 4, h 64, 4 heads, f 256, V 256, s 32, b 2, TP 2, PP 2, DP 2, 4 micro-batches (check_gen.c's hand-count case) */
static dt_gen_config small(void)
{
  dt_gen_config c;
  dt_gen_config_init(&c);
  const char *kv[][2] = {{"layers", "4"},  {"hidden", "64"}, {"heads", "4"},      {"ffn", "256"},
                         {"vocab", "256"}, {"seq", "32"},    {"microbatch", "2"}, {"global_batch", "16"},
                         {"tp", "2"},      {"pp", "2"},      {"dp", "2"}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    set(&c, kv[i][0], kv[i][1]);
  return c;
}

static dt_trace *build(const dt_gen_config *c)
{
  dt_trace *t = NULL;
  dt_error err;
  ck_assert_msg(dt_gen_build(c, 0, &t, &err) == DT_OK, "build: %s", err.msg);
  return t;
}

static const dt_op *find_op(const dt_trace *t, int32_t rank, const char *name)
{
  const dt_rank *rk = &t->ranks[rank];
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++)
      if (rk->streams[s].ops[i].name && strcmp(rk->streams[s].ops[i].name, name) == 0)
        return &rk->streams[s].ops[i];
  ck_abort_msg("no op %s on rank %d", name, rank);
  return NULL;
}

static void expect_gemm(const dt_kernel *k, int dtype, int64_t m, int64_t n, int64_t kk)
{
  ck_assert_int_eq(k->kind, DT_KERN_GEMM);
  ck_assert_int_eq(k->dtype, dtype);
  ck_assert_msg(k->m == m && k->n == n && k->k == kk, "gemm %lldx%lldx%lld, want %lldx%lldx%lld", (long long)k->m,
                (long long)k->n, (long long)k->k, (long long)m, (long long)n, (long long)kk);
  ck_assert_double_eq_tol(k->flop, 2.0 * (double)m * (double)n * (double)kk * (double)k->batch, 1e-6);
}

/* Every compute op's kernels add up to its flop= (dense models), in several configurations. */
static const char *const sum_cases[] = {"",
                                        "sp=true",
                                        "dtype=fp8",
                                        "recompute=full",
                                        "recompute=selective",
                                        "flash_attention=false",
                                        "sp=true cp=2 seq=64",
                                        "tp_overlap=true sp=true"};

START_TEST(test_kernels_sum)
{
  dt_gen_config c = small();
  char *copy = dt_xstrdup(sum_cases[_i]), *save = NULL;
  for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(tok, '=');
    *eq = '\0';
    set(&c, tok, eq + 1);
  }
  free(copy);
  dt_trace *t = build(&c);
  size_t nops = 0;
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *rk = dt_trace_rank_body(t, r);
    for (size_t s = 0; s < rk->nstreams; s++)
      for (size_t i = 0; i < rk->streams[s].nops; i++) {
        const dt_op *op = &rk->streams[s].ops[i];
        if (op->kind != DT_OP_COMPUTE)
          continue;
        ck_assert_msg(op->nkernels > 0, "%s has no kernels", op->name);
        double f = 0;
        for (uint32_t k = 0; k < op->nkernels; k++)
          f += op->kernels[k].flop;
        ck_assert_msg(fabs(f - op->flop) <= 1e-9 * (op->flop > 0 ? op->flop : 1),
                      "case '%s' %s: kernels %.17g, op %.17g", sum_cases[_i], op->name, f, op->flop);
        nops++;
      }
  }
  ck_assert(nops > 0);
  dt_trace_free(t);
}
END_TEST

/* The GEMM shapes of one layer, by hand (b s = 64 tokens, h 64, dh 16, tp 2): QKV 64 x 96 x 64, output 64 x 64 x
 * 32, MLP up 64 x 128 x 64 and down 64 x 64 x 128; attention over 2 x 4/2 = 4 heads of 32 x 32 x 16; the backward
 * has each GEMM's data gradient (m, k, n) and weight gradient (k, n, m). With FP8 the GEMMs are fp8, the attention
 * and the TP messages stay bf16 (b s h 2 bytes). */
START_TEST(test_gemm_shapes)
{
  for (int fp8 = 0; fp8 < 2; fp8++) {
    dt_gen_config c = small();
    if (fp8)
      set(&c, "dtype", "fp8");
    int gd = fp8 ? DT_DTYPE_FP8 : DT_DTYPE_BF16;
    dt_trace *t = build(&c);
    const dt_op *a = find_op(t, 0, "fwd.l0.attn");
    ck_assert_int_eq(a->nkernels, 4); /* norm + residual, QKV, attention, output */
    ck_assert_int_eq(a->kernels[0].kind, DT_KERN_ELEM);
    expect_gemm(&a->kernels[1], gd, 64, 96, 64);
    ck_assert_int_eq(a->kernels[2].kind, DT_KERN_ATTN);
    ck_assert_int_eq(a->kernels[2].dtype, DT_DTYPE_BF16);
    ck_assert(a->kernels[2].batch == 4 && a->kernels[2].m == 32 && a->kernels[2].n == 32 && a->kernels[2].k == 16);
    ck_assert(a->kernels[2].causal);
    ck_assert_double_eq_tol(a->kernels[2].flop, 4.0 * 2 * 32 * 32 * 64 / 2, 1e-6);
    expect_gemm(&a->kernels[3], gd, 64, 64, 32);
    const dt_op *m = find_op(t, 0, "fwd.l0.mlp");
    expect_gemm(&m->kernels[1], gd, 64, 128, 64);
    expect_gemm(&m->kernels[2], gd, 64, 64, 128);
    const dt_op *mb = find_op(t, 0, "bwd.l0.mlp");
    expect_gemm(&mb->kernels[0], gd, 64, 64, 128); /* up's data gradient */
    expect_gemm(&mb->kernels[1], gd, 64, 128, 64); /* up's weight gradient */
    const dt_op *ar = find_op(t, 0, "tp.fwd.l0.attn");
    ck_assert_uint_eq(ar->bytes, 2 * 32 * 64 * 2);
    dt_trace_free(t);
  }
}
END_TEST

/* Context parallelism: world tp cp pp dp, CP groups of cp consecutive DP indices, gradients over dp x cp, each
 * rank's tokens and FLOP / cp, the K/V all-gather of b s/cp 2 kv dh / tp e bytes per layer (and its gradient's
 * reduce-scatter in the backward). */
START_TEST(test_context_parallel)
{
  dt_gen_config c = small();
  set(&c, "seq", "64");
  dt_trace *t1 = build(&c);
  set(&c, "cp", "2");
  ck_assert_int_eq(dt_gen_world(&c), 2 * 2 * 2 * 2);
  ck_assert_int_eq(dt_gen_microbatches(&c), 4);
  dt_trace *t = build(&c);
  ck_assert_int_eq(t->nranks, 16);
  int g = dt_trace_find_group(t, "cp.pp0.tp0.0");
  ck_assert_int_ge(g, 0);
  ck_assert_uint_eq(t->groups[g].nranks, 2);
  ck_assert_int_eq(t->groups[g].ranks[0], dt_gen_rank(&c, 0, 0, 0));
  ck_assert_int_eq(t->groups[g].ranks[1], dt_gen_rank(&c, 0, 1, 0));
  ck_assert_int_eq(t->groups[g].ranks[1], 2); /* TP innermost, then CP */
  int dpg = dt_trace_find_group(t, "dp.pp0.tp0");
  ck_assert_uint_eq(t->groups[dpg].nranks, 4);
  ck_assert_double_eq_tol(find_op(t, 0, "fwd.l0.mlp")->flop, find_op(t1, 0, "fwd.l0.mlp")->flop / 2, 1e-3);
  const dt_op *kv = find_op(t, 0, "cp.fwd.l0.kv");
  ck_assert_int_eq(kv->kind, DT_OP_ALLGATHER);
  ck_assert_uint_eq(kv->bytes, 2 * 32 * 2 * 4 * 16 / 2 * 2);
  const dt_op *dkv = find_op(t, 0, "cp.bwd.l0.dkv");
  ck_assert_int_eq(dkv->kind, DT_OP_REDUCESCATTER);
  ck_assert_uint_eq(dkv->bytes, 2 * kv->bytes);
  ck_assert_uint_eq(find_op(t, 0, "tp.fwd.l0.attn")->bytes, 2 * 32 * 64 * 2);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "%s", err.msg);
  set(&c, "seq", "66");
  ck_assert_int_eq(dt_gen_validate(&c, 0, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "2 x cp (4) to divide the sequence length 66") != NULL, "%s", err.msg);
  dt_trace_free(t);
  dt_trace_free(t1);
}
END_TEST

/* Overriding a preset's shape: --hidden rescales a 4h FFN unless ffn was given; --heads keeps multi-head attention
 * multi-head and grouped-query attention's heads per KV head unless kv_heads was given; the shape name says what
 * ran. */
START_TEST(test_shape_overrides)
{
  dt_gen_config c;
  dt_error err;
  char name[256];
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset("gpt3-175b", &c, &err) == DT_OK);
  ck_assert_str_eq(dt_gen_shape_name(&c, name, sizeof name), "gpt3-175b");
  set(&c, "hidden", "8192");
  ck_assert_int_eq(c.ffn, 4 * 8192);
  set(&c, "heads", "64");
  ck_assert_int_eq(c.kv_heads, 64);
  ck_assert_msg(strstr(dt_gen_shape_name(&c, name, sizeof name), "gpt3-175b shape L 96 h 8192 heads 64/64 f 32768") ==
                    name,
                "%s", name);
  ck_assert(dt_gen_validate(&c, 0, &err) == DT_OK);
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset("gpt3-175b", &c, &err) == DT_OK);
  set(&c, "ffn", "40000");
  set(&c, "hidden", "8192");
  ck_assert_int_eq(c.ffn, 40000);
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset("llama2-70b", &c, &err) == DT_OK);
  set(&c, "heads", "32");
  ck_assert_int_eq(c.kv_heads, 4); /* 8 heads per KV head */
  ck_assert_int_eq(c.ffn, 28672);  /* not 4h: kept */
  set(&c, "hidden", "4096");
  ck_assert_int_eq(c.ffn, 28672);
  set(&c, "kv_heads", "32");
  set(&c, "heads", "64");
  ck_assert_int_eq(c.kv_heads, 32);
}
END_TEST

/* DeepSpeed's transformer|embedding partition: BLOOM's 70 layers on 12 stages are 5, 6 x 10, 5. */
START_TEST(test_embed_as_layers)
{
  dt_gen_config c;
  dt_error err;
  dt_gen_config_init(&c);
  ck_assert(dt_gen_preset("bloom-176b", &c, &err) == DT_OK);
  set(&c, "pp", "12");
  ck_assert_int_eq(dt_gen_validate(&c, 0, &err), DT_ERR);
  set(&c, "embed_as_layers", "true");
  ck_assert_msg(dt_gen_validate(&c, 0, &err) == DT_OK, "%s", err.msg);
  int32_t next = 0, total = 0;
  for (int32_t s = 0; s < 12; s++) {
    int32_t first, n = dt_gen_stage_layers(&c, s, &first);
    ck_assert_int_eq(n, s == 0 || s == 11 ? 5 : 6);
    ck_assert_int_eq(first, next);
    next += n;
    total += n;
  }
  ck_assert_int_eq(total, 70);
  set(&c, "layers", "71");
  ck_assert_int_eq(dt_gen_validate(&c, 0, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "embed_as_layers") != NULL, "%s", err.msg);
}
END_TEST

static dt_stats *replay(const dt_trace *t)
{
  dt_platform p = dt_test_platform(2, 8);
  p.nics_per_node = 8;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 50e9;
  p.link_latency = 3e-7;
  dt_stats *s = NULL;
  dt_error err;
  ck_assert_msg(dt_replay_run(&p, t, NULL, &s, &err) == DT_OK, "%s", err.msg);
  return s;
}

/* TP overlap (with SP): every TP collective on s2, none on s0; p2p overlap: sends on s3 (to the next stage) and
 * s4 (to the previous one), receives on s0 with 1F1B and on s5 (from the previous stage) and s6 (from the next)
 * with the interleaved schedule; parameter-gather overlap: no all-gather waits for the end of the backward. All
 * replay without deadlock, no slower than without them (checked in child processes: one replay per process). */
static const char *const overlap_cases[] = {"tp_overlap=true",
                                            "p2p_overlap=true",
                                            "p2p_overlap=true tp_overlap=true",
                                            "p2p_overlap=true schedule=interleaved virtual_stages=2",
                                            "p2p_overlap=true tp_overlap=true schedule=interleaved virtual_stages=2",
                                            "p2p_overlap=true pp=4 layers=8 global_batch=32",
                                            "p2p_overlap=true pp=4 layers=8 global_batch=32 schedule=interleaved "
                                            "virtual_stages=2",
                                            "zero=1 overlap_param_gather=true",
                                            "zero=1 overlap_param_gather=true tp_overlap=true p2p_overlap=true "
                                            "schedule=interleaved virtual_stages=2 bucket=0",
                                            "zero=1 overlap_param_gather=true param_gather_prefetch=chunk "
                                            "p2p_overlap=true schedule=interleaved virtual_stages=2"};

START_TEST(test_overlap)
{
  dt_gen_config c = small();
  set(&c, "sp", "true");
  char *copy = dt_xstrdup(overlap_cases[_i]), *save = NULL;
  for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(tok, '=');
    *eq = '\0';
    set(&c, tok, eq + 1);
  }
  free(copy);
  dt_trace *t = build(&c);
  dt_error err;
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "%s", err.msg);
  const dt_rank *rk = &t->ranks[0];
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      const dt_op *op = &rk->streams[s].ops[i];
      if (c.tp_overlap && strncmp(op->name, "tp.", 3) == 0)
        ck_assert_msg(rk->streams[s].id == 2, "%s on s%d", op->name, rk->streams[s].id);
      if (c.p2p_overlap && op->kind == DT_OP_SEND)
        ck_assert_msg(rk->streams[s].id == (op->tag == 0 ? 3 : 4), "%s on s%d", op->name, rk->streams[s].id);
      if (op->kind == DT_OP_RECV) {
        int want = c.p2p_overlap && c.schedule == DT_SCHEDULE_INTERLEAVED ? (op->tag == 0 ? 5 : 6) : 0;
        ck_assert_msg(rk->streams[s].id == want, "%s on s%d, expected s%d", op->name, rk->streams[s].id, want);
      }
      /* a parameter all-gather never waits for a backward op */
      if (c.overlap_param_gather && op->kind == DT_OP_ALLGATHER && strncmp(op->name, "zero.ag.", 8) == 0)
        for (uint32_t d = 0; d < op->ndeps; d++) {
          const dt_op *w = &rk->streams[op->deps[d].stream].ops[op->deps[d].index];
          ck_assert_msg(strncmp(w->name, "fwd.", 4) == 0, "%s waits for %s", op->name, w->name);
        }
    }
  int fds[2];
  ck_assert(pipe(fds) == 0);
  for (int off = 0; off < 2; off++) {
    pid_t pid = fork();
    if (pid == 0) {
      dt_gen_config d = c;
      if (off)
        d.tp_overlap = d.p2p_overlap = d.overlap_param_gather = 0;
      dt_trace *u = build(&d);
      dt_error e;
      if (dt_trace_validate(u, &e) != DT_OK)
        _exit(3);
      dt_stats *s = replay(u);
      double v[2] = {s->makespan_s, (double)s->ndeadlock};
      _exit(write(fds[1], v, sizeof v) == (ssize_t)sizeof v ? 0 : 4);
    }
    int ws;
    waitpid(pid, &ws, 0);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child %d failed", off);
  }
  double v[4];
  ck_assert(read(fds[0], v, sizeof v) == (ssize_t)sizeof v);
  close(fds[0]);
  close(fds[1]);
  ck_assert_msg(v[1] == 0, "case '%s' deadlocks", overlap_cases[_i]);
  /* within 0.1 %: a send posted on its own stream may meet a little more contention (ns) than inside its batch */
  ck_assert_msg(v[0] <= v[2] * (1 + 1e-3), "case '%s': %.9g s with overlap, %.9g s without", overlap_cases[_i], v[0],
                v[2]);
  dt_trace_free(t);
}
END_TEST

/* kernels= survives the native format: write, read back, the same kernels on every compute op. */
START_TEST(test_native_round_trip)
{
  dt_gen_config c = small();
  set(&c, "dtype", "fp8");
  set(&c, "flash_attention", "false");
  dt_trace *t = build(&c);
  char path[] = "/tmp/dtsim-kernels-XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  close(fd);
  dt_error err;
  ck_assert_msg(dt_trace_write_native(t, path, &err) == DT_OK, "%s", err.msg);
  const char *paths[] = {path};
  dt_trace *u = NULL;
  ck_assert_msg(dt_trace_read_native(paths, 1, &u, &err) == DT_OK, "%s", err.msg);
  unlink(path);
  size_t compared = 0;
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *a = dt_trace_rank_body(t, r), *b = dt_trace_rank_body(u, r);
    for (size_t s = 0; s < a->nstreams; s++)
      for (size_t i = 0; i < a->streams[s].nops; i++) {
        const dt_op *x = &a->streams[s].ops[i], *y = &b->streams[s].ops[i];
        ck_assert_uint_eq(x->nkernels, y->nkernels);
        for (uint32_t k = 0; k < x->nkernels; k++) {
          const dt_kernel *p = &x->kernels[k], *q = &y->kernels[k];
          ck_assert(p->kind == q->kind && p->dtype == q->dtype && p->causal == q->causal && p->bwd == q->bwd);
          ck_assert(p->m == q->m && p->n == q->n && p->k == q->k && p->batch == q->batch);
          ck_assert(p->flop == q->flop && p->bytes == q->bytes);
          compared++;
        }
      }
  }
  ck_assert(compared > 0);
  /* a malformed item is an error at its line */
  static const char bad[] = "dtsim_trace 1\nranks 1\nrank 0\ns0 compute flop=10 kernels=gemm:bf16:1:2:3\n";
  dt_trace *v = NULL;
  ck_assert_int_eq(dt_trace_parse_native(bad, strlen(bad), "bad.dtt", &v, &err), DT_ERR);
  ck_assert_int_eq(err.line, 4);
  ck_assert_msg(strstr(err.msg, "bad kernels= item 1") != NULL, "%s", err.msg);
  static const char bad2[] = "dtsim_trace 1\nranks 1\nrank 0\ns0 compute flop=10 kernels=gemm:bf17:1:2:3:1:10:0\n";
  ck_assert_int_eq(dt_trace_parse_native(bad2, strlen(bad2), "bad.dtt", &v, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "unknown dtype 'bf17'") != NULL, "%s", err.msg);
  dt_trace_free(u);
  dt_trace_free(t);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"kernels_sum", test_kernels_sum, (int)(sizeof sum_cases / sizeof sum_cases[0])},
      {"gemm_shapes", test_gemm_shapes, 0},
      {"context_parallel", test_context_parallel, 0},
      {"shape_overrides", test_shape_overrides, 0},
      {"embed_as_layers", test_embed_as_layers, 0},
      {"overlap", test_overlap, (int)(sizeof overlap_cases / sizeof overlap_cases[0])},
      {"native_round_trip", test_native_round_trip, 0},
  };
  return dt_test_run(dt_test_suite("gen_compute", cases, sizeof cases / sizeof cases[0], 120));
}
