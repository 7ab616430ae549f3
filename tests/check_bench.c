/* Check suite for the bench engine (sim/dt_bench.c) and the replay's per-instance records it reads: nccl-tests'
 * size conventions and alignment worked by hand, size sweeps, the benchmark trace's shape (template ranks), and
 * the records' arrival and completion times against alpha-beta closed forms on one NVSwitch node. SimGrid runs
 * once per process: every test case runs in its own forked process (Check's default fork mode). */
#include "replay/dt_replay.h"
#include "sim/dt_bench.h"
#include "traces/dt_trace.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REL 1e-9

static int near(double a, double b)
{
  return fabs(a - b) <= REL * fabs(b) + 1e-15;
}

/* 4 GPUs on one NVSwitch: alpha = 1 us, B = 100 GB/s, no NCCL model (DESIGN.md §6 closed forms). */
static dt_platform node4(void)
{
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.name = "node4";
  p.source = "node4.yaml";
  p.gpu_model = "X";
  p.gpu_peak = 1e12;
  p.gpu_efficiency = 1.0;
  p.nodes = 1;
  p.gpus_per_node = 4;
  p.intra_kind = DT_INTRA_NVSWITCH;
  p.intra_bandwidth = 100e9;
  p.intra_latency = 1e-6;
  p.oversubscription = 1;
  p.bandwidth_factor = 1.0;
  p.latency_factor = 1.0;
  return p;
}

/* ---- sizes ---- */

START_TEST(test_size_conventions)
{
  dt_bench_row r;
  /* all_reduce: count = size / 4, size rounded down to whole floats */
  dt_bench_size(dt_bench_op_find("all_reduce"), 4, 1001, &r);
  ck_assert_uint_eq(r.size, 1000);
  ck_assert_uint_eq(r.count, 250);
  ck_assert_uint_eq(r.bytes, 1000);
  /* all_gather: 1000 B = 250 floats, / 4 ranks = 62, aligned to 4 floats = 60 per rank: size 960, shard 240 B */
  dt_bench_size(dt_bench_op_find("all_gather"), 4, 1000, &r);
  ck_assert_uint_eq(r.count, 60);
  ck_assert_uint_eq(r.size, 960);
  ck_assert_uint_eq(r.bytes, 240);
  /* reduce_scatter: size is the whole input, dtsim's bytes the per-rank input (the same) */
  dt_bench_size(dt_bench_op_find("reduce_scatter"), 8, 1 << 20, &r);
  ck_assert_uint_eq(r.count, (1 << 20) / 4 / 8);
  ck_assert_uint_eq(r.size, 1 << 20);
  ck_assert_uint_eq(r.bytes, 1 << 20);
  /* alltoall: size is each rank's send buffer; count per peer */
  dt_bench_size(dt_bench_op_find("alltoall"), 8, 1 << 20, &r);
  ck_assert_uint_eq(r.count, 32768);
  ck_assert_uint_eq(r.bytes, 1 << 20);
  /* 8 B over 8 ranks: 2 floats / 8 = 0 per rank, nothing to gather (as nccl-tests) */
  dt_bench_size(dt_bench_op_find("all_gather"), 8, 8, &r);
  ck_assert_uint_eq(r.size, 0);
  /* broadcast and sendrecv: the buffer */
  dt_bench_size(dt_bench_op_find("broadcast"), 8, 4096, &r);
  ck_assert_uint_eq(r.bytes, 4096);
  dt_bench_size(dt_bench_op_find("sendrecv"), 8, 4096, &r);
  ck_assert_uint_eq(r.bytes, 4096);
  ck_assert_ptr_null(dt_bench_op_find("allreduce"));
}
END_TEST

START_TEST(test_size_sweeps)
{
  uint64_t *v;
  size_t n;
  dt_error err;
  ck_assert_int_eq(dt_bench_sizes(8, 8ull << 30, 2, 0, &v, &n, &err), DT_OK);
  ck_assert_uint_eq(n, 31); /* 2^3 .. 2^33 */
  ck_assert_uint_eq(v[0], 8);
  ck_assert_uint_eq(v[30], 8ull << 30);
  free(v);
  ck_assert_int_eq(dt_bench_sizes(1024, 4096, 0, 1024, &v, &n, &err), DT_OK);
  ck_assert_uint_eq(n, 4);
  ck_assert_uint_eq(v[3], 4096);
  free(v);
  ck_assert_int_eq(dt_bench_sizes(100, 1000, 4, 0, &v, &n, &err), DT_OK); /* 100, 400 (1600 > max) */
  ck_assert_uint_eq(n, 2);
  free(v);
  ck_assert_int_eq(dt_bench_sizes(1000, 10, 2, 0, &v, &n, &err), DT_ERR);
  ck_assert_ptr_nonnull(strstr(err.msg, "larger than the maximum"));
  ck_assert_int_eq(dt_bench_sizes(0, 10, 2, 0, &v, &n, &err), DT_ERR);
  ck_assert_int_eq(dt_bench_sizes(8, 10, 1, 0, &v, &n, &err), DT_ERR);

  uint64_t s;
  char why[256];
  ck_assert_int_eq(dt_bench_parse_size("8G", &s, why, sizeof why), 0);
  ck_assert_uint_eq(s, 8ull << 30);
  ck_assert_int_eq(dt_bench_parse_size("512K", &s, why, sizeof why), 0);
  ck_assert_uint_eq(s, 512 * 1024);
  ck_assert_int_eq(dt_bench_parse_size("64MB", &s, why, sizeof why), 0);
  ck_assert_uint_eq(s, 64ull << 20);
  ck_assert_int_eq(dt_bench_parse_size("1048576", &s, why, sizeof why), 0);
  ck_assert_uint_eq(s, 1048576);
  ck_assert_int_eq(dt_bench_parse_size("x1", &s, why, sizeof why), -1);
  ck_assert_int_eq(dt_bench_parse_size("1Q", &s, why, sizeof why), -1);
  ck_assert_int_eq(dt_bench_parse_size("99999999999999T", &s, why, sizeof why), -1);
}
END_TEST

/* ---- the trace ---- */

START_TEST(test_trace_shape)
{
  uint64_t sizes[] = {1024, 4096, 65536};
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.op = dt_bench_op_find(_i ? "sendrecv" : "all_reduce");
  o.ngpus = 6;
  o.sizes = sizes;
  o.nsizes = 3;
  o.iters = 4;
  o.warmup = 2;
  dt_trace *t;
  dt_error err;
  ck_assert_int_eq(dt_bench_trace(&o, &t, &err), DT_OK);
  ck_assert_int_eq(t->nranks, 6);
  /* 3 sizes x (2 + 4) iterations: collective instances, or one pair per rank per step */
  if (_i) {
    ck_assert_int_eq(t->npairs, 3 * 6 * 6);
    ck_assert_int_eq(t->ninstances, 0);
  } else {
    ck_assert_int_eq(t->ninstances, 3 * 6);
  }
  ck_assert_int_eq(t->ranks[0].template_rank, -1);
  for (int r = 1; r < 6; r++)
    ck_assert_int_eq(t->ranks[r].template_rank, 0); /* one op array shared by every rank */
  ck_assert_uint_eq(dt_trace_op_count(t), (size_t)6 * 18 * (_i ? 2 : 1));
  dt_trace_free(t);
}
END_TEST

/* ---- per-instance records ---- */

typedef struct got {
  dt_instance_record r[8];
  int n;
} got;

static void keep(const dt_instance_record *rec, void *data)
{
  got *g = data;
  if (g->n < 8)
    g->r[g->n] = *rec;
  g->n++;
}

/* Rank 0 computes 1 ms and then all-reduces; the other ranks all-reduce at once; then all ranks all-reduce
 * again. A record per instance: the first arrives last at 1 ms, each ends a ring all-reduce later
 * (2(n-1) alpha + 2(n-1)/n S/B); the second arrives when the first ends. Then a send/recv pair. */
START_TEST(test_instance_records)
{
  dt_platform p = node4();
  dt_trace *t = dt_trace_new(4);
  dt_error err;
  int32_t ranks[] = {0, 1, 2, 3};
  ck_assert_int_eq(dt_trace_add_group(t, "world", ranks, 4, 0, 0, &err), 0);
  uint64_t S = 100000000; /* S/B = 1 ms */
  for (int r = 0; r < 4; r++) {
    if (r == 0) {
      dt_op *c = dt_trace_append(t, r, 0);
      c->kind = DT_OP_COMPUTE;
      c->dur = 1e-3;
    }
    for (int k = 0; k < 2; k++) {
      dt_op *a = dt_trace_append(t, r, 0);
      a->kind = DT_OP_ALLREDUCE;
      a->group = 0;
      a->bytes = S;
    }
  }
  dt_op *s = dt_trace_append(t, 0, 0);
  s->kind = DT_OP_SEND;
  s->peer = 1;
  s->bytes = S;
  dt_op *rv = dt_trace_append(t, 1, 0);
  rv->kind = DT_OP_RECV;
  rv->peer = 0;
  rv->bytes = S;
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);

  got g = {0};
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  ck_assert_ptr_null(o.on_instance); /* off by default */
  o.on_instance = keep;
  o.on_instance_data = &g;
  dt_stats *st;
  ck_assert_int_eq(dt_replay_run(&p, t, &o, &st, &err), DT_OK);
  ck_assert_int_eq(g.n, 3);
  double ar = 6 * 1e-6 + 1.5 * 1e-3; /* 2(n-1) alpha + 2(n-1)/n S/B */
  ck_assert_int_eq(g.r[0].kind, DT_OP_ALLREDUCE);
  ck_assert_int_eq(g.r[0].group, 0);
  ck_assert_int_eq(g.r[0].seq, 0);
  ck_assert_int_eq(g.r[0].nranks, 4);
  ck_assert_uint_eq(g.r[0].bytes, S);
  ck_assert(near(g.r[0].arrival_last_s, 1e-3));
  ck_assert(near(g.r[0].end_s, 1e-3 + ar));
  ck_assert_str_eq(g.r[0].algo, "ring");
  ck_assert_int_eq(g.r[1].seq, 1);
  ck_assert(near(g.r[1].arrival_last_s, 1e-3 + ar));
  ck_assert(near(g.r[1].end_s, 1e-3 + 2 * ar));
  /* the pair: rank 1 is ready at the second all-reduce's end, rank 0 too; alpha + S/B */
  ck_assert_int_eq(g.r[2].kind, DT_OP_SEND);
  ck_assert_int_eq(g.r[2].group, -1);
  ck_assert_int_eq(g.r[2].src, 0);
  ck_assert_int_eq(g.r[2].dst, 1);
  ck_assert_int_eq(g.r[2].nranks, 2);
  ck_assert(near(g.r[2].end_s - g.r[2].arrival_last_s, 1e-6 + 1e-3));
  /* the records agree with the per-kind totals */
  ck_assert(near(st->by_kind[DT_OP_ALLREDUCE].time_s, 2 * ar));
  dt_stats_free(st);
  dt_trace_free(t);
}
END_TEST

/* A whole benchmark: each size's time is the closed form, and -g adds (G - 1) launches. */
START_TEST(test_bench_run)
{
  dt_platform p = node4();
  uint64_t sizes[] = {4096, 100000000};
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.op = dt_bench_op_find("all_gather");
  o.ngpus = 4;
  o.sizes = sizes;
  o.nsizes = 2;
  o.iters = 3;
  o.warmup = 1;
  o.gpus_per_process = 4;
  o.launch_s = 2e-6;
  dt_bench_row *rows;
  dt_error err;
  ck_assert_int_eq(dt_bench_run(&p, &o, &rows, &err), DT_OK);
  /* all_gather (n-1) alpha + (n-1) shard/B + 3 launches; shard = size / 4 */
  for (int i = 0; i < 2; i++) {
    double shard = (double)sizes[i] / 4;
    double want = 3e-6 + 3 * shard / 100e9 + 3 * 2e-6;
    ck_assert_uint_eq(rows[i].size, sizes[i]);
    ck_assert(near(rows[i].time_s, want));
    ck_assert(near(rows[i].algbw, (double)sizes[i] / want));
    ck_assert(near(rows[i].busbw, rows[i].algbw * 0.75));
  }
  free(rows);
}
END_TEST

/* sendrecv on the NCCL model (node4 with `nccl: {}`): each pair pays NCCL's p2p protocol, LL up to 16 KiB and
 * Simple above, T = L + alpha + h + size/(eB), with NCCL's defaults: LL L = 6.6 us, h = 0.6 us, e = 1/4;
 * Simple L = 8.4 us, h = 3.4 us, e = 1 (docs/replay.md, point-to-point). Then an alltoall, whose latency grows
 * with its peers. */
START_TEST(test_bench_sendrecv_nccl)
{
  dt_platform p = node4();
  p.nccl = 1;
  dt_platform_nccl_defaults(&p);
  uint64_t sizes[] = {1024, 100000000};
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.op = dt_bench_op_find("sendrecv");
  o.ngpus = 4;
  o.sizes = sizes;
  o.nsizes = 2;
  dt_bench_row *rows;
  dt_error err;
  ck_assert_msg(dt_bench_run_forked(&p, &o, &rows, &err) == DT_OK, "%s", err.msg);
  ck_assert(near(rows[0].time_s, 6.6e-6 + 1e-6 + 0.6e-6 + 1024 / (0.25 * 100e9)));
  ck_assert_str_eq(rows[0].algo, "p2p/ll");
  ck_assert(near(rows[1].time_s, 8.4e-6 + 1e-6 + 3.4e-6 + 1e-3));
  ck_assert_str_eq(rows[1].algo, "p2p/simple");
  free(rows);
  /* alltoall of 1 KiB per rank: 3 grouped send/recv rounds, each paying alpha + h, one base latency, and
   * 3/4 of the buffer through each GPU's port at LL's efficiency: 6.6 + 3 (1 + 0.6) us + 768 B / (0.25 B) */
  o.op = dt_bench_op_find("alltoall");
  o.nsizes = 1;
  ck_assert_msg(dt_bench_run_forked(&p, &o, &rows, &err) == DT_OK, "%s", err.msg);
  ck_assert(near(rows[0].time_s, 6.6e-6 + 3 * 1.6e-6 + 768 / (0.25 * 100e9)));
  ck_assert_str_eq(rows[0].algo, "direct/ll");
  free(rows);
}
END_TEST

START_TEST(test_bench_errors)
{
  dt_platform p = node4();
  uint64_t sizes[] = {1024};
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.op = dt_bench_op_find("all_reduce");
  o.sizes = sizes;
  o.nsizes = 1;
  dt_bench_row *rows;
  dt_error err;
  o.ngpus = 5;
  ck_assert_int_eq(dt_bench_run(&p, &o, &rows, &err), DT_ERR);
  ck_assert_ptr_nonnull(strstr(err.msg, "5 GPUs requested but platform 'node4' has only 4"));
  o.ngpus = 4;
  o.gpus_per_node = 2; /* 2 nodes needed, 1 present */
  ck_assert_int_eq(dt_bench_run_forked(&p, &o, &rows, &err), DT_ERR);
  ck_assert_ptr_nonnull(strstr(err.msg, "need 2 nodes but platform 'node4' has only 1"));
  /* the forked run returns rows like the direct one */
  o.gpus_per_node = 0;
  ck_assert_int_eq(dt_bench_run_forked(&p, &o, &rows, &err), DT_OK);
  ck_assert(near(rows[0].time_s, 6e-6 + 1.5 * 1024 / 100e9));
  free(rows);
}
END_TEST

static Suite *bench_suite(void)
{
  Suite *s = suite_create("bench");
  TCase *tc = tcase_create("sizes");
  tcase_add_test(tc, test_size_conventions);
  tcase_add_test(tc, test_size_sweeps);
  suite_add_tcase(s, tc);
  tc = tcase_create("trace");
  tcase_add_loop_test(tc, test_trace_shape, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("records");
  tcase_add_test(tc, test_instance_records);
  suite_add_tcase(s, tc);
  tc = tcase_create("run");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_bench_run);
  tcase_add_test(tc, test_bench_errors);
  tcase_add_test(tc, test_bench_sendrecv_nccl);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(bench_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
