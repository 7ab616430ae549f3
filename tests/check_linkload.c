/* Check suite for replay/dt_linkload.c: transfers recorded by hand on a two-node platform, against bytes, busy
 * time and peak concurrency derived by hand, and a long random stream folded under a watermark against a
 * brute-force sweep of the same intervals (pure C, no SimGrid). */
#include "replay/dt_linkload.h"

#include "dt_test.h"
#include "replay/dt_stats.h"

#include <math.h>
#include <stdio.h>

/* two nodes of two GPUs, one NIC each, on a single switch */
static dt_platform two_nodes(void)
{
  dt_platform p = dt_test_platform(2, 2);
  p.nics_per_node = 1;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.link_bandwidth = 100e9;
  p.link_latency = 1e-7;
  p.topology = DT_NET_SINGLE_SWITCH;
  return p;
}

static const dt_link_load *find(const dt_linkstats *s, const char *name)
{
  for (size_t k = 0; k < s->nlinks; k++)
    if (strcmp(s->links[k].name, name) == 0)
      return &s->links[k];
  return NULL;
}

START_TEST(test_hand)
{
  dt_platform p = two_nodes();
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(4);
  int32_t dp[2] = {0, 2}, tp[2] = {0, 1};
  int gdp = dt_trace_add_group(t, "dp.0", dp, 2, 0, 0, &err);
  int gtp = dt_trace_add_group(t, "tp.0", tp, 2, 0, 0, &err);
  ck_assert_int_eq(t->groups[gdp].dim, DT_DIM_DP);
  ck_assert_int_eq(t->groups[gtp].dim, DT_DIM_TP);
  dt_linkload *ll = dt_linkload_new(topo, t);
  /* GPUs 0 and 1 (node 0) both send to node 1 through node 0's only NIC: [0, 2) and [1, 3), then [5, 6) */
  dt_linkload_add(ll, 0, 2, 1000, 0, 2, DT_OP_ALLREDUCE, gdp);
  dt_linkload_add(ll, 1, 3, 3000, 1, 3, DT_OP_SEND, -1);
  dt_linkload_add(ll, 0, 3, 500, 5, 6, DT_OP_ALLGATHER, gdp);
  dt_linkload_add(ll, 0, 1, 7000, 0, 1, DT_OP_ALLREDUCE, gtp); /* inside node 0: GPU ports only */
  dt_linkload_add(ll, 0, 1, 0, 0, 1, DT_OP_ALLREDUCE, gtp);    /* no bytes: not recorded */
  dt_linkstats *s = dt_linkload_finish(ll);
  ck_assert_uint_eq(s->transfers, 4);
  const dt_link_load *nic = find(s, "nic0.0 up");
  ck_assert_ptr_nonnull(nic);
  ck_assert_int_eq(nic->cls, DT_LC_GPU_NIC);
  ck_assert_double_eq(nic->bytes, 4500);
  ck_assert_double_eq_tol(nic->busy_s, 4.0, 1e-12); /* [0, 3) and [5, 6) */
  ck_assert_uint_eq(nic->peak_flows, 2);
  ck_assert_uint_eq(nic->transfers, 3);
  ck_assert_double_eq(nic->by_dim[DT_DIM_DP], 1500);
  ck_assert_double_eq(nic->by_dim[DT_DIM_NONE], 3000); /* no PP group: pairs have no dimension */
  ck_assert_double_eq(nic->by_kind[DT_OP_SEND], 3000);
  ck_assert_double_eq(nic->by_kind[DT_OP_ALLGATHER], 500);
  ck_assert_uint_eq(nic->ngroups, 2);
  ck_assert_int_eq(nic->groups[0].group, -1); /* largest first */
  ck_assert_double_eq(nic->groups[0].bytes, 3000);
  ck_assert_int_eq(nic->groups[1].group, gdp);
  ck_assert_ptr_nonnull(find(s, "nic1.0 down"));
  ck_assert_ptr_null(find(s, "nic1.0 up"));
  /* the busiest direction first */
  ck_assert_str_eq(s->links[0].name, "nic0.0 up");
  const dt_link_load *g0 = find(s, "gpu0 up");
  ck_assert_ptr_nonnull(g0);
  ck_assert_int_eq(g0->cls, DT_LC_NVSWITCH_PORT);
  ck_assert_double_eq(g0->bytes, 7000);
  ck_assert_double_eq(g0->by_dim[DT_DIM_TP], 7000);
  /* classes: the NIC-to-switch cables carry the same 4500 bytes up (node 0) and down (node 1) */
  ck_assert_double_eq(s->classes[DT_LC_NIC_SWITCH].bytes, 9000);
  ck_assert_uint_eq(s->classes[DT_LC_NIC_SWITCH].used, 2);
  ck_assert_uint_eq(s->classes[DT_LC_NIC_SWITCH].links, 4);
  ck_assert_uint_eq(s->classes[DT_LC_GPU_NIC].peak_flows, 2);
  ck_assert_double_eq_tol(s->classes[DT_LC_GPU_NIC].busy_max_s, 4.0, 1e-12);
  dt_linkstats_free(s);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

/* A long stream of overlapping transfers, added in start order, folded under the watermark "the next start". */
static double next_start;
static double wm(void *data)
{
  (void)data;
  return next_start;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

START_TEST(test_fold)
{
  dt_platform p = two_nodes();
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(4);
  dt_linkload *ll = dt_linkload_new(topo, t);
  dt_linkload_set_watermark(ll, wm, NULL);
  size_t n = 300000;
  double(*iv)[2] = malloc(sizeof *iv * n);
  double *S = malloc(sizeof *S * n), *E = malloc(sizeof *E * n);
  unsigned x = 12345;
  double start = 0;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    start += (double)(x >> 16 & 1023) * 1e-6;
    x = x * 1103515245u + 12345u;
    iv[i][0] = start;
    iv[i][1] = start + (double)(x >> 16 & 4095) * 1e-6 + 1e-6;
  }
  for (size_t i = 0; i < n; i++) {
    next_start = iv[i][0];
    dt_linkload_add(ll, 0, 2, 1, iv[i][0], iv[i][1], DT_OP_SEND, -1);
  }
  for (size_t i = 0; i < n; i++) {
    S[i] = iv[i][0];
    E[i] = iv[i][1];
  }
  qsort(S, n, sizeof *S, cmp_d);
  qsort(E, n, sizeof *E, cmp_d);
  size_t i = 0, j = 0, cnt = 0, peak = 0;
  while (i < n) {
    if (E[j] <= S[i]) {
      cnt--;
      j++;
    } else {
      if (++cnt > peak)
        peak = cnt;
      i++;
    }
  }
  double busy = dt_interval_union(iv, n);
  dt_linkstats *s = dt_linkload_finish(ll);
  const dt_link_load *nic = find(s, "nic0.0 up");
  ck_assert_ptr_nonnull(nic);
  ck_assert_double_eq(nic->bytes, (double)n);
  ck_assert_uint_eq(nic->peak_flows, peak);
  ck_assert_msg(fabs(nic->busy_s - busy) <= 1e-9 * busy, "busy %.12g, brute force %.12g", nic->busy_s, busy);
  ck_assert_uint_gt(peak, 1);
  dt_linkstats_free(s);
  free(iv);
  free(S);
  free(E);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

/* The sweep's two paths and its sort: _i = 0, intervals in order each after the last ended (a ring's steps on a
 * port: summed without sorting), with watermark folds cutting some of them; 1, 40,000 overlapping intervals
 * recorded in a shuffled order, folded once at the end (the radix sort); 2, 20 of them (insertion). Busy time and
 * peak against a brute force over the same intervals. */
START_TEST(test_fold_orders)
{
  dt_platform p = two_nodes();
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(4);
  dt_linkload *ll = dt_linkload_new(topo, t);
  dt_linkload_set_watermark(ll, wm, NULL);
  size_t n = _i == 0 ? 200000 : _i == 1 ? 40000 : 20;
  double(*iv)[2] = malloc(sizeof *iv * n);
  unsigned x = 777;
  double start = 0;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    double len = (double)(x >> 16 & 4095) * 1e-6 + 1e-6;
    iv[i][0] = start;
    iv[i][1] = start + len;
    start = _i == 0 ? iv[i][1] + (double)(x >> 20 & 3) * 1e-6 : start + 1e-6 * (double)(x >> 24 & 7);
  }
  if (_i > 0)
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
      x = x * 1103515245u + 12345u;
      size_t j = (x >> 8) % (i + 1);
      double a = iv[i][0], b = iv[i][1];
      iv[i][0] = iv[j][0];
      iv[i][1] = iv[j][1];
      iv[j][0] = a;
      iv[j][1] = b;
    }
  for (size_t i = 0; i < n; i++) {
    /* in order: the watermark falls inside the interval being recorded (no later one starts before it) */
    next_start = _i == 0 ? iv[i][0] : 0;
    dt_linkload_add(ll, 0, 2, 1, iv[i][0], iv[i][1], DT_OP_SEND, -1);
  }
  double *S = malloc(sizeof *S * n), *E = malloc(sizeof *E * n);
  for (size_t i = 0; i < n; i++) {
    S[i] = iv[i][0];
    E[i] = iv[i][1];
  }
  qsort(S, n, sizeof *S, cmp_d);
  qsort(E, n, sizeof *E, cmp_d);
  size_t i = 0, j = 0, cnt = 0, peak = 0;
  while (i < n) {
    if (E[j] <= S[i]) {
      cnt--;
      j++;
    } else {
      if (++cnt > peak)
        peak = cnt;
      i++;
    }
  }
  double busy = dt_interval_union(iv, n);
  dt_linkstats *s = dt_linkload_finish(ll);
  const dt_link_load *nic = find(s, "nic0.0 up");
  ck_assert_ptr_nonnull(nic);
  ck_assert_uint_eq(nic->peak_flows, peak);
  ck_assert_msg(fabs(nic->busy_s - busy) <= 1e-9 * busy, "busy %.12g, brute force %.12g", nic->busy_s, busy);
  if (_i == 0)
    ck_assert_uint_eq(peak, 1);
  else
    ck_assert_uint_gt(peak, 5);
  dt_linkstats_free(s);
  free(iv);
  free(S);
  free(E);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

START_TEST(test_dim_names)
{
  ck_assert_int_eq(dt_dim_from_group_name("tp.pp0.dp1"), DT_DIM_TP);
  ck_assert_int_eq(dt_dim_from_group_name("dp.pp0.tp1"), DT_DIM_DP);
  ck_assert_int_eq(dt_dim_from_group_name("edp.pp0.tp1.0"), DT_DIM_DP);
  ck_assert_int_eq(dt_dim_from_group_name("emb.dp0.tp1"), DT_DIM_PP);
  ck_assert_int_eq(dt_dim_from_group_name("ep3"), DT_DIM_EP);
  ck_assert_int_eq(dt_dim_from_group_name("mesh_CP"), DT_DIM_CP);
  ck_assert_int_eq(dt_dim_from_group_name("TENSOR_MODEL_PARALLEL"), DT_DIM_TP);
  ck_assert_int_eq(dt_dim_from_group_name("world"), DT_DIM_NONE);
  ck_assert_int_eq(dt_dim_from_group_name("default_pg"), DT_DIM_NONE);
  ck_assert_int_eq(dt_dim_from_group_name(""), DT_DIM_NONE);
  ck_assert_str_eq(dt_dim_name(DT_DIM_SP), "SP");
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"hand", test_hand, 0}, {"fold", test_fold, 0}, {"fold_orders", test_fold_orders, 3}, {"dim_names", test_dim_names, 0}};
  return dt_test_run(dt_test_suite("linkload", cases, sizeof cases / sizeof cases[0], 60));
}
