/* Check suite for replay/dt_linkload.c: transfers recorded by hand on a two-node platform, against bytes, busy
 * time and peak concurrency derived by hand, and a long random stream folded under a watermark against a
 * brute-force sweep of the same intervals (pure C, no SimGrid). */
#include "replay/dt_linkload.h"

#include "common/dt_util.h"
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

/* The topology of two_nodes() p (borrowed: p must outlive it). */
static dt_topology *two_nodes_topology(const dt_platform *p)
{
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(p, &topo, &err), DT_OK);
  return topo;
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
  dt_topology *topo = two_nodes_topology(&p);
  dt_error err;
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
  dt_topology *topo = two_nodes_topology(&p);
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
  dt_topology *topo = two_nodes_topology(&p);
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

/* Many directions at once: random transfers among the 16 GPUs of a 3-level fat-tree (routes of 2 to 8 hops, more
 * peers per GPU than the route cache keeps), of three groups and pairs and three op kinds, overlapping in time,
 * recorded in issue order under a watermark that folds the log many times (and a dropped route cache halfway). Per
 * direction, against sums and a brute-force sweep over the same transfers routed by dt_topology_route: bytes, the
 * per-dimension, per-kind and per-group bytes added in the same order (equal to the bit), busy time and peak.
 * Three byte streams (_i): some counts not whole from the start (the sums added as they come); every count whole
 * (the runs' sums taken at their close, exact); whole for the first three quarters, then not (the open runs are
 * closed at the switch, then the sums added as they come). */
typedef struct bf_dir {
  double bytes, by_dim[DT_DIM_COUNT], by_kind[DT_OP_COUNT], by_group[4]; /* groups 0-2, pairs */
  uint64_t transfers;
  double (*iv)[2];
  size_t n, cap;
} bf_dir;

START_TEST(test_many_directions)
{
  dt_platform p = dt_test_platform(8, 2);
  p.nics_per_node = 2;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.link_bandwidth = 100e9;
  p.link_latency = 1e-7;
  p.topology = DT_NET_FAT_TREE;
  p.levels = 3;
  p.radix = 4; /* 16 NICs: 8 leaves in 4 pods */
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(16);
  int32_t all[16];
  for (int i = 0; i < 16; i++)
    all[i] = i;
  int g[3] = {dt_trace_add_group(t, "tp.0", all, 2, 0, 0, &err), dt_trace_add_group(t, "dp.0", all, 16, 0, 0, &err),
              dt_trace_add_group(t, "world", all, 16, 0, 0, &err)};
  dt_op_kind kinds[3] = {DT_OP_ALLREDUCE, DT_OP_ALLGATHER, DT_OP_SEND};
  size_t ndirs = 2 * dt_topology_link_count(topo);
  bf_dir *bf = calloc(ndirs, sizeof *bf);
  dt_linkload *ll = dt_linkload_new(topo, t);
  dt_linkload_set_watermark(ll, wm, NULL);
  unsigned x = 4242;
  double base = 0;
  int longest = 0;
  size_t n = 200000;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    int32_t src = (int32_t)(x >> 16 & 15), dst = (int32_t)(x >> 20 & 15);
    x = x * 1103515245u + 12345u;
    int which = (int)((x >> 16) % 4); /* 0-2: a group, 3: a pair */
    int32_t group = which < 3 ? g[which] : -1;
    dt_op_kind kind = which < 3 ? kinds[(x >> 20) % 2] : DT_OP_SEND;
    if ((x >> 24 & 7) == 0) /* runs of one group on a direction, broken now and then */
      kind = kinds[(x >> 27) % 3];
    x = x * 1103515245u + 12345u;
    int whole = _i == 1 || (_i == 2 && i < 3 * n / 4);
    double bytes = (double)(1 + (x >> 16 & 0xfff)) / ((x >> 28 & 1) && !whole ? 3.0 : 1.0); /* some not exact */
    base += (double)(x >> 20 & 3) * 1e-6;
    next_start = base; /* no later transfer starts before it */
    x = x * 1103515245u + 12345u;
    double start = base + (double)(x >> 16 & 7) * 1e-6, end = start + (double)(x >> 20 & 15) * 1e-6; /* some empty */
    if (i == n / 2)
      dt_linkload_forget_routes(ll);
    dt_linkload_add(ll, src, dst, bytes, start, end, kind, group);
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    int nh = dt_topology_route(topo, src, dst, hops, NULL, NULL);
    ck_assert_int_gt(nh, 0);
    if (nh > longest)
      longest = nh;
    dt_dim dim = group >= 0 ? t->groups[group].dim : dt_trace_p2p_dim(t);
    for (int h = 0; h < nh; h++) {
      bf_dir *d = &bf[2 * hops[h].link + hops[h].dir];
      d->bytes += bytes;
      d->by_dim[dim] += bytes;
      d->by_kind[kind] += bytes;
      d->by_group[which] += bytes;
      d->transfers++;
      if (end > start) {
        d->iv = dt_grow(d->iv, &d->cap, d->n, sizeof *d->iv);
        d->iv[d->n][0] = start;
        d->iv[d->n][1] = end;
        d->n++;
      }
    }
  }
  ck_assert_int_ge(longest, 8); /* the long-route cache was used */
  dt_linkstats *s = dt_linkload_finish(ll);
  size_t used = 0, overlapped = 0;
  for (size_t k = 0; k < ndirs; k++) {
    bf_dir *d = &bf[k];
    if (d->bytes == 0)
      continue;
    used++;
    const dt_link_load *L = NULL;
    for (size_t i = 0; i < s->nlinks && !L; i++)
      if (s->links[i].link == k / 2 && s->links[i].dir == k % 2)
        L = &s->links[i];
    ck_assert_ptr_nonnull(L);
    ck_assert_double_eq(L->bytes, d->bytes);
    ck_assert_uint_eq(L->transfers, d->transfers);
    for (int i = 0; i < DT_DIM_COUNT; i++)
      ck_assert_double_eq(L->by_dim[i], d->by_dim[i]);
    for (int i = 0; i < DT_OP_COUNT; i++)
      ck_assert_double_eq(L->by_kind[i], d->by_kind[i]);
    for (size_t i = 0; i < L->ngroups; i++) {
      int which = L->groups[i].group < 0 ? 3 : L->groups[i].group == g[0] ? 0 : L->groups[i].group == g[1] ? 1 : 2;
      ck_assert_double_eq(L->groups[i].bytes, d->by_group[which]);
    }
    double *S = malloc(sizeof *S * (d->n + 1)), *E = malloc(sizeof *E * (d->n + 1));
    for (size_t i = 0; i < d->n; i++) {
      S[i] = d->iv[i][0];
      E[i] = d->iv[i][1];
    }
    qsort(S, d->n, sizeof *S, cmp_d);
    qsort(E, d->n, sizeof *E, cmp_d);
    size_t i = 0, j = 0, cnt = 0, peak = 0;
    while (i < d->n) {
      if (E[j] <= S[i]) {
        cnt--;
        j++;
      } else {
        if (++cnt > peak)
          peak = cnt;
        i++;
      }
    }
    overlapped += peak > 1;
    double busy = dt_interval_union(d->iv, d->n);
    ck_assert_uint_eq(L->peak_flows, peak);
    ck_assert_msg(fabs(L->busy_s - busy) <= 1e-9 * busy, "busy %.12g, brute force %.12g", L->busy_s, busy);
    free(S);
    free(E);
    free(d->iv);
  }
  ck_assert_uint_eq(s->nlinks, used);
  ck_assert_uint_gt(overlapped, 0);
  dt_linkstats_free(s);
  free(bf);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

/* Flow sets (dt_linkload_add_set) against the same flows added one by one (dt_linkload_add), on the fat-tree of
 * test_many_directions: sets of 1 to 12 flows over fixed GPUs (rings, pairs), of two groups and pairs, some
 * instances without a duration, under a watermark that folds the log many times (so inside sets too), jobs told
 * apart (_i 0) or not (_i 1: the sets that overlap no other have twins for a while) and the routes dropped halfway
 * (the sets are resolved again). Every figure equal to the bit. */
/* What an observer saw: how many transfers and a hash of their every field, in order. */
typedef struct obs_sum {
  size_t n;
  uint64_t hash;
} obs_sum;

static void observe(void *data, int32_t src, int32_t dst, double bytes, double start, double end)
{
  obs_sum *o = data;
  double v[3] = {bytes, start, end};
  uint64_t u[3];
  memcpy(u, v, sizeof u);
  o->hash = dt_mix64(o->hash ^ dt_mix64((uint64_t)(uint32_t)src << 32 | (uint32_t)dst));
  for (int k = 0; k < 3; k++)
    o->hash = dt_mix64(o->hash ^ u[k]);
  o->n++;
}

START_TEST(test_flow_sets)
{
  dt_platform p = dt_test_platform(8, 2);
  p.nics_per_node = 2;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.link_bandwidth = 100e9;
  p.link_latency = 1e-7;
  p.topology = DT_NET_FAT_TREE;
  p.levels = 3;
  p.radix = 4;
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(16);
  int32_t all[16], job_of_gpu[16];
  for (int i = 0; i < 16; i++) {
    all[i] = i;
    job_of_gpu[i] = i < 10 ? i % 3 : -1;
  }
  int g[2] = {dt_trace_add_group(t, "tp.0", all, 2, 0, 0, &err), dt_trace_add_group(t, "dp.0", all, 16, 0, 0, &err)};
  enum { NSETS = 24, MAXF = 12 };
  int32_t src[NSETS][MAXF], dst[NSETS][MAXF];
  size_t nf[NSETS];
  unsigned x = 777;
  for (int k = 0; k < NSETS; k++) {
    x = x * 1103515245u + 12345u;
    nf[k] = 1 + (x >> 16) % MAXF;
    int32_t first = (int32_t)(x >> 24 & 15);
    for (size_t f = 0; f < nf[k]; f++) { /* a ring over consecutive GPUs, or a pair when one flow */
      src[k][f] = (first + (int32_t)f) % 16;
      dst[k][f] = (first + (int32_t)(f + 1) % (int32_t)nf[k] + (nf[k] == 1 ? 5 : 0)) % 16;
    }
  }
  dt_linkload *one = dt_linkload_new(topo, t), *set = dt_linkload_new(topo, t);
  dt_linkload_set_watermark(one, wm, NULL);
  dt_linkload_set_watermark(set, wm, NULL);
  if (_i == 0) { /* jobs told apart (_i 1: not, so that sets have twins while nothing else crosses them) */
    dt_linkload_set_jobs(one, job_of_gpu, 3);
    dt_linkload_set_jobs(set, job_of_gpu, 3);
  }
  obs_sum seen_one = {0}, seen_set = {0}, added = {0};
  dt_linkload_set_observer(one, observe, &seen_one);
  dt_linkload_set_observer(set, observe, &seen_set);
  ck_assert_int_eq(dt_linkload_set_find(set, 5), -1);
  double base = 0;
  size_t n = 60000, resolved = 0;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    int k = (int)((x >> 16) % NSETS), which = (int)(x >> 24 & 3);
    int32_t group = which < 2 ? g[which] : -1;
    dt_op_kind kind = which < 2 ? ((x >> 27 & 1) ? DT_OP_ALLREDUCE : DT_OP_ALLGATHER) : DT_OP_SEND;
    x = x * 1103515245u + 12345u;
    double bytes = (double)(1 + (x >> 16 & 0xfff)) / ((x >> 28 & 1) ? 3.0 : 1.0);
    base += (double)(x >> 20 & 3) * 1e-6 / 3;
    next_start = base - 2e-3; /* lagging: folds keep much, so when the limit doubles depends on where they happen */
    x = x * 1103515245u + 12345u;
    double start = base + (double)(x >> 16 & 7) * 1e-6, end = start + (double)(x >> 20 & 15) * 1e-6 / 7;
    if (i == n / 2) {
      dt_linkload_forget_routes(one);
      dt_linkload_forget_routes(set);
      ck_assert_int_eq(dt_linkload_set_find(set, (uint64_t)k), -1);
    }
    for (size_t f = 0; f < nf[k]; f++) {
      dt_linkload_add(one, src[k][f], dst[k][f], bytes, start, end, kind, group);
      observe(&added, src[k][f], dst[k][f], bytes, start, end);
    }
    int32_t id = dt_linkload_set_find(set, (uint64_t)k);
    if (id < 0) {
      id = dt_linkload_set_new(set, (uint64_t)k, nf[k], src[k], dst[k]);
      resolved++;
    }
    ck_assert_int_ge(id, 0);
    ck_assert_int_eq(dt_linkload_set_find(set, (uint64_t)k), id);
    dt_linkload_add_set(set, id, bytes, start, end, kind, group);
  }
  ck_assert_uint_ge(resolved, NSETS + 1); /* again after the routes were dropped */
  if (_i == 0) /* a twin would stand for directions whose bytes per job differ */
    ck_assert_uint_eq(dt_linkload_shared(set), 0);
  else
    ck_assert_uint_gt(dt_linkload_shared(set), 0);
  /* the observer saw every flow as given, in order, from the sets as from the flows added one by one */
  ck_assert_uint_eq(seen_one.n, added.n);
  ck_assert_uint_eq(seen_set.n, added.n);
  ck_assert(seen_one.hash == added.hash && seen_set.hash == added.hash);
  dt_linkstats *a = dt_linkload_finish(one), *b = dt_linkload_finish(set);
  ck_assert_uint_eq(a->transfers, b->transfers);
  ck_assert_uint_eq(a->nlinks, b->nlinks);
  ck_assert_uint_gt(a->nlinks, 10);
  for (size_t k = 0; k < a->nlinks; k++) {
    const dt_link_load *A = &a->links[k], *B = &b->links[k];
    ck_assert_str_eq(A->name, B->name);
    ck_assert(A->bytes == B->bytes && A->busy_s == B->busy_s);
    ck_assert_uint_eq(A->peak_flows, B->peak_flows);
    ck_assert_uint_eq(A->transfers, B->transfers);
    ck_assert(memcmp(A->by_dim, B->by_dim, sizeof A->by_dim) == 0);
    ck_assert(memcmp(A->by_kind, B->by_kind, sizeof A->by_kind) == 0);
    ck_assert_uint_eq(A->ngroups, B->ngroups);
    for (size_t i = 0; i < A->ngroups; i++)
      ck_assert(A->groups[i].group == B->groups[i].group && A->groups[i].bytes == B->groups[i].bytes);
  }
  for (int c = 0; c < DT_LC_COUNT; c++)
    ck_assert(memcmp(a->classes[c].by_job, b->classes[c].by_job, sizeof a->classes[c].by_job) == 0 &&
              a->classes[c].shared == b->classes[c].shared);
  dt_linkstats_free(a);
  dt_linkstats_free(b);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

/* Every figure of two results equal to the bit. */
static void same_stats(const dt_linkstats *a, const dt_linkstats *b)
{
  ck_assert_uint_eq(a->transfers, b->transfers);
  ck_assert_uint_eq(a->nlinks, b->nlinks);
  for (size_t k = 0; k < a->nlinks; k++) {
    const dt_link_load *A = &a->links[k], *B = &b->links[k];
    ck_assert_str_eq(A->name, B->name);
    ck_assert(A->bytes == B->bytes && A->busy_s == B->busy_s);
    ck_assert_uint_eq(A->peak_flows, B->peak_flows);
    ck_assert_uint_eq(A->transfers, B->transfers);
    ck_assert(memcmp(A->by_dim, B->by_dim, sizeof A->by_dim) == 0);
    ck_assert(memcmp(A->by_kind, B->by_kind, sizeof A->by_kind) == 0);
    ck_assert_uint_eq(A->ngroups, B->ngroups);
    for (size_t i = 0; i < A->ngroups; i++)
      ck_assert(A->groups[i].group == B->groups[i].group && A->groups[i].bytes == B->groups[i].bytes);
  }
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *A = &a->classes[c], *B = &b->classes[c];
    ck_assert(A->links == B->links && A->used == B->used && A->bytes == B->bytes && A->busy_sum_s == B->busy_sum_s &&
              A->busy_max_s == B->busy_max_s && A->peak_flows == B->peak_flows && A->transfers == B->transfers);
  }
}

/* Twins: flow sets whose directions nothing else crosses (rings over disjoint GPUs, one ring listed twice in two
 * orders, a loopback) share one stand-in direction; against the same flows added one by one, every figure equal
 * to the bit, while the stand-ins took the records: under a lagging watermark that folds inside sets many times
 * (the folds a set's record is logged whole across), with transfers without a duration and some starting before
 * the watermark, byte counts whole (_i 0, the lazy sums) or not (_i 1); (_i 2) a transfer and a new set crossing
 * two twins' directions halfway (those twins are left); (_i 3) every transfer starting before the watermark (a
 * fold inside a set's record would move its start: each such record leaves its twin). */
START_TEST(test_twins)
{
  dt_platform p = dt_test_platform(8, 2);
  p.nics_per_node = 2;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1e-6;
  p.link_bandwidth = 100e9;
  p.link_latency = 1e-7;
  p.topology = DT_NET_FAT_TREE;
  p.levels = 3;
  p.radix = 4;
  dt_topology *topo = NULL;
  dt_error err;
  ck_assert_int_eq(dt_topology_build(&p, &topo, &err), DT_OK);
  dt_trace *t = dt_trace_new(16);
  int32_t all[16];
  for (int i = 0; i < 16; i++)
    all[i] = i;
  int g[2] = {dt_trace_add_group(t, "tp.0", all, 4, 0, 0, &err), dt_trace_add_group(t, "dp.0", all, 16, 0, 0, &err)};
  enum { NSETS = 6 };
  static const int32_t src[NSETS][8] = {{0, 1, 2, 3}, {2, 3, 0, 1}, {4, 5, 6}, {7}, {8, 9, 10, 11, 12, 13, 14, 15},
                                        {9}};
  static const int32_t dst[NSETS][8] = {{1, 2, 3, 0}, {3, 0, 1, 2}, {5, 6, 4}, {7}, {9, 10, 11, 12, 13, 14, 15, 8},
                                        {10}};
  static const size_t nf[NSETS] = {4, 4, 3, 1, 8, 1};
  dt_linkload *one = dt_linkload_new(topo, t), *set = dt_linkload_new(topo, t);
  dt_linkload_set_watermark(one, wm, NULL);
  dt_linkload_set_watermark(set, wm, NULL);
  int32_t id[NSETS];
  for (int k = 0; k < NSETS - 1; k++)
    id[k] = dt_linkload_set_new(set, (uint64_t)k, nf[k], src[k], dst[k]);
  unsigned x = 99;
  double base = 0;
  size_t n = 80000, late = 0;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    int k = (int)((x >> 16) % (NSETS - 1));
    if (_i == 2 && i >= n / 2 && (x >> 28 & 3) == 0)
      k = NSETS - 1; /* crosses two of set 4's directions */
    int32_t group = k < 3 ? g[0] : k == 4 ? g[1] : -1;
    dt_op_kind kind = k == 3 || k == 5 ? DT_OP_SEND : (x >> 27 & 1) ? DT_OP_ALLREDUCE : DT_OP_ALLGATHER;
    x = x * 1103515245u + 12345u;
    double bytes = (double)(1 + (x >> 16 & 0xfff)) / (_i == 1 && (x >> 28 & 1) ? 3.0 : 1.0);
    base += _i == 3 ? 5e-6 : (double)(x >> 20 & 3) * 1e-6 / 3; /* _i 3: apart, so that a start moved shows */
    next_start = base - 2e-3; /* lagging: folds keep much */
    x = x * 1103515245u + 12345u;
    double start = base + (double)(x >> 16 & 7) * 1e-6, end = start + (double)(x >> 20 & 15) * 1e-6 / 7;
    if (i % 997 == 0 || _i == 3) { /* before the watermark */
      start = next_start - 1e-6;
      end = start + 3e-6;
      late++;
    }
    if (_i == 2 && i == n / 2) { /* a transfer over set 2's ring */
      dt_linkload_add(one, 5, 6, 100, start, end, DT_OP_SEND, -1);
      dt_linkload_add(set, 5, 6, 100, start, end, DT_OP_SEND, -1);
    }
    for (size_t f = 0; f < nf[k]; f++)
      dt_linkload_add(one, src[k][f], dst[k][f], bytes, start, end, kind, group);
    if (k == NSETS - 1 && dt_linkload_set_find(set, (uint64_t)k) < 0)
      id[k] = dt_linkload_set_new(set, (uint64_t)k, nf[k], src[k], dst[k]);
    dt_linkload_add_set(set, id[k], bytes, start, end, kind, group);
  }
  uint64_t shared = dt_linkload_shared(set);
  ck_assert_uint_gt(late, 10);
  if (_i < 2) /* the records went to a stand-in */
    ck_assert_uint_gt(shared, n - n / 100);
  else if (_i == 2) /* two of four twins left halfway */
    ck_assert(shared > n / 2 && shared < n - n / 10);
  else /* left at the first fold inside one of their records (the loopback's may be spared: 1 in 5 records) */
    ck_assert_uint_lt(shared, n / 3);
  dt_linkstats *a = dt_linkload_finish(one), *b = dt_linkload_finish(set);
  ck_assert_uint_gt(a->nlinks, 20);
  same_stats(a, b);
  dt_linkstats_free(a);
  dt_linkstats_free(b);
  dt_trace_free(t);
  dt_topology_free(topo);
}
END_TEST

/* A run that stopped at T = 4 (dt_linkload_stop): a transfer counts the part of it before T, its bytes in
 * proportion; one from T on counts nothing; a flow set follows the same rule; busy never passes T. */
START_TEST(test_stop)
{
  dt_platform p = two_nodes();
  dt_topology *topo = two_nodes_topology(&p);
  dt_trace *t = dt_trace_new(4);
  dt_linkload *ll = dt_linkload_new(topo, t);
  dt_linkload_add(ll, 0, 2, 1000, 0, 2, DT_OP_SEND, -1);  /* before the stop: whole */
  dt_linkload_add(ll, 0, 2, 6000, 1, 7, DT_OP_SEND, -1);  /* recorded before the stop, ends after it */
  dt_linkload_stop(ll, 4);
  dt_linkload_stop(ll, 9);                                /* a later stop: ignored */
  dt_linkload_add(ll, 0, 2, 800, 3, 5, DT_OP_SEND, -1);   /* half of it before T */
  dt_linkload_add(ll, 0, 2, 5000, 4, 6, DT_OP_SEND, -1);  /* from T on: nothing */
  int32_t src[1] = {0}, dst[1] = {2};
  int32_t set = dt_linkload_set_new(ll, 7, 1, src, dst);
  dt_linkload_add_set(ll, set, 300, 3.5, 4.5, DT_OP_SEND, -1); /* a flow set: half of it */
  dt_linkstats *s = dt_linkload_finish(ll);
  const dt_link_load *nic = find(s, "nic0.0 up");
  ck_assert_ptr_nonnull(nic);
  /* 1000 + 6000 x 6 / 6 recorded before the stop (its end was not known to be late) ... */
  ck_assert_uint_eq(s->transfers, 4);
  ck_assert_double_eq_tol(nic->bytes, 1000 + 6000 + 400 + 150, 1e-9);
  ck_assert_double_eq_tol(nic->busy_s, 7.0, 1e-12);
  ck_assert_double_eq_tol(s->end_s, 7.0, 1e-12); /* ... which the report's span takes (dt_stats_link_span) */
  dt_linkstats_free(s);

  /* recorded after the stop only: busy and end never pass T */
  ll = dt_linkload_new(topo, t);
  dt_linkload_stop(ll, 4);
  dt_linkload_add(ll, 0, 2, 6000, 1, 7, DT_OP_SEND, -1);
  dt_linkload_add(ll, 1, 3, 1000, 0, 8, DT_OP_SEND, -1);
  s = dt_linkload_finish(ll);
  nic = find(s, "nic0.0 up");
  ck_assert_ptr_nonnull(nic);
  ck_assert_double_eq_tol(nic->bytes, 6000 * 3.0 / 6 + 1000 * 4.0 / 8, 1e-9);
  ck_assert_double_eq_tol(nic->busy_s, 4.0, 1e-12);
  ck_assert_double_eq_tol(s->end_s, 4.0, 1e-12);
  dt_linkstats_free(s);
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
      {"hand", test_hand, 0}, {"fold", test_fold, 0}, {"fold_orders", test_fold_orders, 3},
      {"many_directions", test_many_directions, 3}, {"flow_sets", test_flow_sets, 2},
      {"twins", test_twins, 4}, {"stop", test_stop, 0},
      {"dim_names", test_dim_names, 0}};
  return dt_test_run(dt_test_suite("linkload", cases, sizeof cases / sizeof cases[0], 60));
}
