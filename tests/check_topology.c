/* Check suite for platforms/dt_topology.c: link tables and routes of hand-built platforms against hand-derived
 * hop lists and the alpha formulas of DESIGN.md §3 (pure C, no SimGrid). */
#include "platforms/dt_topology.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIC_LAT 1.5e-6
#define LINK_LAT 3e-7
#define INTRA_LAT 1e-6

static dt_platform base_platform(int nodes, int gpus_per_node, int nics_per_node)
{
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.name = "test";
  p.gpu_model = "H100";
  p.gpu_peak = 989e12;
  p.gpu_efficiency = 1.0;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  p.intra_kind = DT_INTRA_NVSWITCH;
  p.intra_bandwidth = 450e9;
  p.intra_latency = INTRA_LAT;
  p.nics_per_node = nics_per_node;
  p.nic_bandwidth = 50e9;
  p.nic_latency = NIC_LAT;
  p.link_bandwidth = 100e9;
  p.link_latency = LINK_LAT;
  p.oversubscription = 1;
  p.bandwidth_factor = 1.0;
  p.latency_factor = 1.0;
  if (nodes > 1)
    p.topology = DT_NET_SINGLE_SWITCH;
  return p;
}

static dt_platform fat_tree(int nodes, int gpus_per_node, int nics_per_node, int levels, int radix, int k,
                            dt_wiring wiring)
{
  dt_platform p = base_platform(nodes, gpus_per_node, nics_per_node);
  p.topology = DT_NET_FAT_TREE;
  p.levels = levels;
  p.radix = radix;
  p.oversubscription = k;
  p.wiring = wiring;
  return p;
}

static dt_topology *build(const dt_platform *p)
{
  dt_topology *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_topology_build(p, &t, &err) == DT_OK, "build: %s", err.msg);
  ck_assert_ptr_nonnull(t);
  return t;
}

static void assert_close(double got, double want, const char *what)
{
  ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want), "%s: got %.17g, want %.17g", what, got, want);
}

/* Asserts the route src -> dst is exactly the hops listed as "linkname up" / "linkname down", and returns its
 * latency through *lat and bandwidth through *bw. */
static void expect_route(const dt_topology *t, int src, int dst, double *lat, double *bw, int n, ...)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  int got = dt_topology_route(t, src, dst, hops, lat, bw);
  ck_assert_msg(got == n, "gpu%d->gpu%d: %d hops, want %d", src, dst, got, n);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) {
    const char *want = va_arg(ap, const char *);
    char name[128], full[160];
    snprintf(full, sizeof full, "%s %s", dt_topology_link_name(t, hops[i].link, name, sizeof name),
             hops[i].dir ? "down" : "up");
    ck_assert_msg(strcmp(full, want) == 0, "gpu%d->gpu%d hop %d: '%s', want '%s'", src, dst, i, full, want);
  }
  va_end(ap);
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every link has a distinct name (SimGrid link names must be unique). */
static void assert_unique_names(const dt_topology *t)
{
  size_t n = dt_topology_link_count(t);
  char **names = calloc(n, sizeof *names);
  for (size_t i = 0; i < n; i++) {
    char buf[128];
    names[i] = strdup(dt_topology_link_name(t, i, buf, sizeof buf));
  }
  qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 1; i < n; i++)
    ck_assert_msg(strcmp(names[i - 1], names[i]) != 0, "duplicate link name '%s'", names[i]);
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

START_TEST(test_one_node)
{
  dt_platform p = base_platform(1, 8, 0);
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 8);
  double lat, bw;
  expect_route(t, 0, 5, &lat, &bw, 2, "gpu0 up", "gpu5 down");
  assert_close(lat, INTRA_LAT, "intra latency");
  assert_close(bw, 450e9, "intra bandwidth");
  assert_close(dt_topology_link(t, 3)->latency, INTRA_LAT / 2, "half the intra latency per GPU port");
  ck_assert_int_eq(dt_topology_link(t, 3)->kind, DT_LINK_GPU);
  /* loopback stays on the GPU's own port */
  expect_route(t, 4, 4, &lat, &bw, 2, "gpu4 up", "gpu4 down");
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  ck_assert_int_eq(dt_topology_route(t, 0, 8, hops, NULL, NULL), -1);
  ck_assert_int_eq(dt_topology_route(t, -1, 0, hops, NULL, NULL), -1);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_single_switch)
{
  /* 4 nodes x 4 GPUs x 2 NICs: 16 GPU ports, 8 NICs, 8 NIC-to-switch cables */
  dt_platform p = base_platform(4, 4, 2);
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 16 + 8 + 8);
  double lat, bw;
  /* GPU 15 = node 3, GPU 3 -> NIC floor(3*2/4) = 1 -> global NIC 7 */
  expect_route(t, 0, 15, &lat, &bw, 4, "nic0.0 up", "cable:nic0-switch up", "cable:nic7-switch down",
               "nic3.1 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "single-switch alpha");
  assert_close(bw, 50e9, "NIC-bound bandwidth");
  expect_route(t, 1, 2, &lat, &bw, 2, "gpu1 up", "gpu2 down");
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_two_level_node_wiring)
{
  /* radix 8, 1:1 -> 4 down, 4 up. 8 nodes x 2 NICs = 16 NICs -> 4 leaves, 4 spines, 16 leaf-spine cables */
  dt_platform p = fat_tree(8, 8, 2, 2, 8, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->leaves, 4);
  ck_assert_uint_eq(dt_topology_link_count(t), 64 + 16 + 16 + 16);
  double lat, bw;
  /* same leaf: GPU 12 = node 1 GPU 4 -> NIC 1.1 = global 3, leaf 0 */
  expect_route(t, 0, 12, &lat, &bw, 4, "nic0.0 up", "cable:nic0-leaf0 up", "cable:nic3-leaf0 down", "nic1.1 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "same-leaf alpha");
  /* leaf-spine-leaf: GPU 63 -> NIC 7.1 = global 15 on leaf 3; spine = 15 mod 4 = 3 */
  expect_route(t, 0, 63, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-spine3 up",
               "cable:leaf3-spine3 down", "cable:nic15-leaf3 down", "nic7.1 down");
  assert_close(lat, 2 * NIC_LAT + 4 * LINK_LAT, "leaf-spine-leaf alpha");
  assert_close(bw, 50e9, "bottleneck bandwidth");
  /* GPU 58 -> NIC 7.0 = global 14: spine 2; the way back 63 -> 0 takes spine 0 mod 4 = 0 */
  expect_route(t, 0, 58, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-spine2 up",
               "cable:leaf3-spine2 down", "cable:nic14-leaf3 down", "nic7.0 down");
  expect_route(t, 63, 0, &lat, &bw, 6, "nic7.1 up", "cable:nic15-leaf3 up", "cable:leaf3-spine0 up",
               "cable:leaf0-spine0 down", "cable:nic0-leaf0 down", "nic0.0 down");
  /* the spine is the destination NIC mod u for every pair that crosses it */
  for (int dst = 32; dst < 64; dst++) {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    int n = dt_topology_route(t, 0, dst, hops, NULL, NULL);
    ck_assert_int_eq(n, 6);
    int dst_nic = (dst / 8) * 2 + (dst % 8) / 4;
    char name[64], want[64];
    snprintf(want, sizeof want, "cable:leaf0-spine%d", dst_nic % 4);
    ck_assert_str_eq(dt_topology_link_name(t, hops[2].link, name, sizeof name), want);
  }
  /* GPUs 0-3 share NIC 0.0; GPU 4 has NIC 0.1; no GPU port on an inter-node route */
  dt_hop h0[DT_ROUTE_MAX_HOPS], h1[DT_ROUTE_MAX_HOPS], h4[DT_ROUTE_MAX_HOPS];
  dt_topology_route(t, 0, 40, h0, NULL, NULL);
  dt_topology_route(t, 3, 41, h1, NULL, NULL);
  dt_topology_route(t, 4, 40, h4, NULL, NULL);
  ck_assert_uint_eq(h0[0].link, h1[0].link);
  ck_assert_int_eq(h0[0].dir, h1[0].dir);
  ck_assert_uint_ne(h0[0].link, h4[0].link);
  ck_assert_int_eq(dt_topology_link(t, h0[0].link)->kind, DT_LINK_NIC);
  ck_assert_int_eq(dt_topology_link(t, h0[1].link)->kind, DT_LINK_CABLE);
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_two_level_rail_wiring)
{
  /* radix 8, 1:1; 8 nodes x 4 NICs, rail wiring: 4 rails x 2 leaves; NIC n = node*4 + i sits on leaf
   * i*2 + node/4 */
  dt_platform p = fat_tree(8, 8, 4, 2, 8, 1, DT_WIRING_RAIL);
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->leaves, 8);
  ck_assert_uint_eq(dt_topology_link_count(t), 64 + 32 + 32 + 8 * 4);
  double lat, bw;
  /* rail 0, nodes 0 and 1: same leaf */
  expect_route(t, 0, 8, &lat, &bw, 4, "nic0.0 up", "cable:nic0-leaf0 up", "cable:nic4-leaf0 down", "nic1.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "same-leaf alpha");
  /* rail 0, node 4: leaf 1; spine 16 mod 4 = 0 */
  expect_route(t, 0, 32, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-spine0 up",
               "cable:leaf1-spine0 down", "cable:nic16-leaf1 down", "nic4.0 down");
  assert_close(lat, 2 * NIC_LAT + 4 * LINK_LAT, "leaf-spine-leaf alpha");
  /* across rails: GPU 10 = node 1 GPU 2 -> NIC 1.1 = global 5 on leaf 2; spine 5 mod 4 = 1 */
  expect_route(t, 0, 10, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-spine1 up",
               "cable:leaf2-spine1 down", "cable:nic5-leaf2 down", "nic1.1 down");
  expect_route(t, 0, 2, &lat, &bw, 2, "gpu0 up", "gpu2 down");
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_oversubscribed)
{
  /* radix 6, 2:1 -> 4 down, 2 up; 8 single-GPU nodes: 2 leaves, 2 spines, 4 leaf-spine cables.
   * Factors scale every link. */
  dt_platform p = fat_tree(8, 1, 1, 2, 6, 2, DT_WIRING_NODE);
  p.bandwidth_factor = 0.5;
  p.latency_factor = 2.0;
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->spines, 2);
  ck_assert_uint_eq(dt_topology_link_count(t), 8 + 8 + 8 + 4);
  double lat, bw;
  expect_route(t, 0, 4, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-spine0 up",
               "cable:leaf1-spine0 down", "cable:nic4-leaf1 down", "nic4.0 down");
  assert_close(lat, 2.0 * (2 * NIC_LAT + 4 * LINK_LAT), "scaled alpha");
  assert_close(bw, 0.5 * 50e9, "scaled bandwidth");
  expect_route(t, 1, 5, &lat, &bw, 6, "nic1.0 up", "cable:nic1-leaf0 up", "cable:leaf0-spine1 up",
               "cable:leaf1-spine1 down", "cable:nic5-leaf1 down", "nic5.0 down");
  assert_close(dt_topology_link(t, 0)->latency, 2.0 * INTRA_LAT / 2, "scaled GPU port latency");
  assert_close(dt_topology_link(t, 0)->bandwidth, 0.5 * 450e9, "scaled GPU port bandwidth");
  assert_close(dt_topology_link(t, 27)->bandwidth, 0.5 * 100e9, "scaled cable bandwidth");
  dt_topology_free(t);

  /* model.network_bandwidth_factor replaces the factor for NICs and cables only (links: 8 GPU ports, 8 NICs,
   * 8 NIC cables, 4 leaf-spine cables) */
  p.network_bandwidth_factor = 0.9;
  t = build(&p);
  assert_close(dt_topology_link(t, 0)->bandwidth, 0.5 * 450e9, "GPU port keeps bandwidth_factor");
  assert_close(dt_topology_link(t, 8)->bandwidth, 0.9 * 50e9, "NIC takes network_bandwidth_factor");
  assert_close(dt_topology_link(t, 16)->bandwidth, 0.9 * 100e9, "NIC cable takes network_bandwidth_factor");
  assert_close(dt_topology_link(t, 27)->bandwidth, 0.9 * 100e9, "leaf-spine cable takes network_bandwidth_factor");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_three_level)
{
  /* radix 4, 1:1 -> 2 down, 2 up; pods of R/2 = 2 leaves and 2 aggregation switches; 12 single-NIC nodes ->
   * 6 leaves, 3 pods, 4 cores. Cables: 12 NIC, 6*2 leaf-agg, 3 pods * 2 aggs * 2 uplinks agg-core */
  dt_platform p = fat_tree(12, 2, 1, 3, 4, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->pods, 3);
  ck_assert_uint_eq(dt_topology_link_count(t), 24 + 12 + 12 + 12 + 12);
  double lat, bw;
  /* same leaf: NIC 0 and NIC 1 */
  expect_route(t, 0, 2, &lat, &bw, 4, "nic0.0 up", "cable:nic0-leaf0 up", "cable:nic1-leaf0 down", "nic1.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "same-leaf alpha");
  /* same pod: NIC 2 on leaf 1; agg 2 mod 2 = 0 */
  expect_route(t, 0, 4, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-agg0 up",
               "cable:leaf1-agg0 down", "cable:nic2-leaf1 down", "nic2.0 down");
  assert_close(lat, 2 * NIC_LAT + 4 * LINK_LAT, "same-pod alpha");
  /* across pods: NIC 11 on leaf 5, pod 2; agg j = 11 mod 2 = 1, core uplink (11/2) mod 2 = 1: core 1*2+1 = 3,
   * reached from agg 0*2+1 = 1 and back down to agg 2*2+1 = 5 */
  expect_route(t, 0, 23, &lat, &bw, 8, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-agg1 up",
               "cable:agg1-core3 up", "cable:agg5-core3 down", "cable:leaf5-agg5 down", "cable:nic11-leaf5 down",
               "nic11.0 down");
  assert_close(lat, 2 * NIC_LAT + 6 * LINK_LAT, "cross-pod alpha");
  /* from one source, destinations in other pods reach all 4 cores */
  int core_used[4] = {0};
  for (int dst = 8; dst < 24; dst += 2) {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    ck_assert_int_eq(dt_topology_route(t, 0, dst, hops, NULL, NULL), 8);
    char name[64];
    const char *s = strstr(dt_topology_link_name(t, hops[3].link, name, sizeof name), "core");
    ck_assert_ptr_nonnull(s);
    core_used[atoi(s + 4)]++;
  }
  for (int c = 0; c < 4; c++)
    ck_assert_msg(core_used[c] == 2, "core %d carries %d of 8 destinations", c, core_used[c]);
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_three_level_one_pod)
{
  /* 3 single-NIC nodes on radix 4: 2 leaves, one pod, no cores built */
  dt_platform p = fat_tree(3, 1, 1, 3, 4, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->spines, 0);
  ck_assert_uint_eq(dt_topology_link_count(t), 3 + 3 + 3 + 2 * 2);
  double lat, bw;
  expect_route(t, 0, 2, &lat, &bw, 6, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-agg0 up",
               "cable:leaf1-agg0 down", "cable:nic2-leaf1 down", "nic2.0 down");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_does_not_fit)
{
  /* radix 4, 2 levels: at most 4 leaves of 2 NICs */
  dt_platform p = fat_tree(9, 1, 1, 2, 4, 1, DT_WIRING_NODE);
  dt_topology *t = (dt_topology *)&p; /* must be reset to NULL */
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_topology_build(&p, &t, &err), DT_ERR);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(err.msg, "at most 8 NICs") != NULL, "message: %s", err.msg);
}
END_TEST

START_TEST(test_large_is_cheap)
{
  /* 1,024 nodes x 8 GPUs x 8 NICs on a 3-level radix-64 tree: a few arrays, routes without tables */
  dt_platform p = fat_tree(1024, 8, 8, 3, 64, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  const dt_fabric_shape *s = dt_topology_shape(t);
  ck_assert_int_eq(s->leaves, 256);
  ck_assert_int_eq(s->pods, 8);
  size_t want = 8192 + 8192 + 8192 + 256 * 32 + 8 * 32 * 32;
  ck_assert_uint_eq(dt_topology_link_count(t), want);
  double lat, bw;
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  ck_assert_int_eq(dt_topology_route(t, 0, 8191, hops, &lat, &bw), 8);
  assert_close(lat, 2 * NIC_LAT + 6 * LINK_LAT, "cross-pod alpha");
  dt_topology_free(t);
  dt_topology_free(NULL);
}
END_TEST

/* ---- nvlink-mesh, pcie, dragonfly: routes drawn by hand ---- */

/* The DGX-1 V100 hybrid cube-mesh (platforms/dgx1-v100.yaml): quads 0-3 and 4-7, cube edges i-(i+4). */
static dt_nvlink dgx1_links[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2},
                                 {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},
                                 {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1}};

START_TEST(test_mesh_dgx1)
{
  dt_platform p = base_platform(1, 8, 0);
  p.intra_kind = DT_INTRA_NVLINK_MESH;
  p.intra_bandwidth = 0;
  p.intra_latency = 2e-6; /* per NVLink hop */
  p.nvlink_bandwidth = 25e9;
  p.nvlinks = dgx1_links;
  p.n_nvlinks = 16;
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 8 + 16);
  ck_assert_int_eq(dt_topology_link(t, 8)->kind, DT_LINK_NVLINK);
  double lat, bw;
  /* direct pair with two NVLinks: one hop, alpha = one hop latency, 2 x 25 GB/s */
  expect_route(t, 0, 3, &lat, &bw, 1, "nvlink0.0-3 up");
  assert_close(lat, 2e-6, "direct alpha");
  assert_close(bw, 50e9, "NV2 bandwidth");
  expect_route(t, 3, 0, &lat, &bw, 1, "nvlink0.0-3 down");
  expect_route(t, 2, 6, &lat, &bw, 1, "nvlink0.2-6 up");
  assert_close(bw, 25e9, "NV1 bandwidth");
  /* 0 and 5 are not adjacent: neighbours of 0 are 1, 2, 3, 4; 1 and 4 both touch 5; the lowest (1) wins */
  expect_route(t, 0, 5, &lat, &bw, 2, "nvlink0.0-1 up", "nvlink0.1-5 up");
  assert_close(lat, 2 * 2e-6, "2-hop alpha");
  assert_close(bw, 25e9, "bottleneck: the single 0-1 link");
  /* 5 -> 0: neighbours of 5 are 1, 4, 6, 7; 1 touches 0 */
  expect_route(t, 5, 0, &lat, &bw, 2, "nvlink0.1-5 down", "nvlink0.0-1 down");
  /* 7 -> 0: neighbours 3, 4, 5, 6; 3 touches 0 (NV1 then NV2) */
  expect_route(t, 7, 0, &lat, &bw, 2, "nvlink0.3-7 down", "nvlink0.0-3 down");
  assert_close(bw, 25e9, "3-7 is NV1");
  /* 1 -> 6: neighbours 0, 2, 3, 5; 2 touches 6 (NV2 then NV1) */
  expect_route(t, 1, 6, &lat, &bw, 2, "nvlink0.1-2 up", "nvlink0.2-6 up");
  /* every pair is 1 or 2 hops: 16 adjacent pairs, 12 at two hops */
  int one = 0, two = 0;
  for (int a = 0; a < 8; a++)
    for (int b = a + 1; b < 8; b++) {
      dt_hop hops[DT_ROUTE_MAX_HOPS];
      int n = dt_topology_route(t, a, b, hops, NULL, NULL);
      one += n == 1;
      two += n == 2;
    }
  ck_assert_int_eq(one, 16);
  ck_assert_int_eq(two, 12);
  /* loopback: the GPU's own port, with its 6 NVLinks of bandwidth */
  expect_route(t, 4, 4, &lat, &bw, 2, "gpu4 up", "gpu4 down");
  assert_close(lat, 2e-6, "loopback alpha");
  assert_close(bw, 150e9, "6 x 25 GB/s");
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_mesh_two_nodes)
{
  /* 2 nodes of a 4-GPU ring 0-1-2-3-0 with 1 NIC: intra-node routes are per node, inter-node ones skip NVLink */
  static dt_nvlink ring[] = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {0, 3, 1}};
  dt_platform p = base_platform(2, 4, 1);
  p.intra_kind = DT_INTRA_NVLINK_MESH;
  p.nvlink_bandwidth = 25e9;
  p.nvlinks = ring;
  p.n_nvlinks = 4;
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 8 + 2 + 2 + 8);
  double lat, bw;
  /* node 1: GPUs 4..7; 4 -> 6 = local 0 -> 2: neighbours 1 and 3 both 1 hop from 2; 1 wins */
  expect_route(t, 4, 6, &lat, &bw, 2, "nvlink1.0-1 up", "nvlink1.1-2 up");
  assert_close(lat, 2 * INTRA_LAT, "2 hops");
  expect_route(t, 1, 6, &lat, &bw, 4, "nic0.0 up", "cable:nic0-switch up", "cable:nic1-switch down", "nic1.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "inter-node alpha as DESIGN.md section 3");
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

#define PCIE_LAT 2e-6
#define CPU_LAT 1e-6

static dt_platform pcie_platform(int nodes, int nics)
{
  dt_platform p = base_platform(nodes, 8, nics);
  p.intra_kind = DT_INTRA_PCIE;
  p.gpus_per_switch = 4;
  p.intra_bandwidth = 32e9;
  p.intra_latency = PCIE_LAT;
  p.cpu_bandwidth = 20e9;
  p.cpu_latency = CPU_LAT;
  return p;
}

START_TEST(test_pcie)
{
  dt_platform p = pcie_platform(1, 0);
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 8 + 2);
  double lat, bw;
  /* same switch: the two GPUs' PCIe links */
  expect_route(t, 0, 3, &lat, &bw, 2, "gpu0 up", "gpu3 down");
  assert_close(lat, PCIE_LAT, "same-switch alpha");
  assert_close(bw, 32e9, "GPU link bandwidth");
  /* across the CPU: up switch 0's CPU link, down switch 1's */
  expect_route(t, 1, 6, &lat, &bw, 4, "gpu1 up", "cpulink0.0 up", "cpulink0.1 down", "gpu6 down");
  assert_close(lat, PCIE_LAT + CPU_LAT, "cross-switch alpha");
  assert_close(bw, 20e9, "CPU link bottleneck");
  expect_route(t, 7, 4, &lat, &bw, 2, "gpu7 up", "gpu4 down");
  expect_route(t, 5, 2, &lat, &bw, 4, "gpu5 up", "cpulink0.1 up", "cpulink0.0 down", "gpu2 down");
  ck_assert_int_eq(dt_topology_link(t, 8)->kind, DT_LINK_CPU);
  assert_close(dt_topology_link(t, 9)->latency, CPU_LAT / 2, "half the CPU latency per switch link");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_pcie_nics)
{
  /* 2 nodes, 1 NIC per node: NIC 0 serves GPUs 0-7 and hangs off switch 0 (the switch of its first GPU) */
  dt_platform p = pcie_platform(2, 1);
  dt_topology *t = build(&p);
  ck_assert_uint_eq(dt_topology_link_count(t), 16 + 2 + 2 + 4);
  double lat, bw;
  /* GPU 2 (switch 0) -> GPU 9 (node 1, switch 0): PCIe link, NIC, cables, NIC, PCIe link */
  expect_route(t, 2, 9, &lat, &bw, 6, "gpu2 up", "nic0.0 up", "cable:nic0-switch up", "cable:nic1-switch down",
               "nic1.0 down", "gpu9 down");
  assert_close(lat, PCIE_LAT + 2 * NIC_LAT + 2 * LINK_LAT, "NIC on the GPU's switch");
  /* GPU 6 (switch 1) -> GPU 13 (node 1, switch 1): through the CPU on both sides */
  expect_route(t, 6, 13, &lat, &bw, 10, "gpu6 up", "cpulink0.1 up", "cpulink0.0 down", "nic0.0 up",
               "cable:nic0-switch up", "cable:nic1-switch down", "nic1.0 down", "cpulink1.0 up", "cpulink1.1 down",
               "gpu13 down");
  assert_close(lat, PCIE_LAT + 2 * CPU_LAT + 2 * NIC_LAT + 2 * LINK_LAT, "NIC behind the other switch");
  assert_close(bw, 20e9, "CPU link bottleneck");
  assert_unique_names(t);
  dt_topology_free(t);

  /* 2 NICs per node: each switch has its own, no CPU crossing between nodes */
  p = pcie_platform(2, 2);
  t = build(&p);
  expect_route(t, 6, 13, &lat, &bw, 6, "gpu6 up", "nic0.1 up", "cable:nic1-switch up", "cable:nic3-switch down",
               "nic1.1 down", "gpu13 down");
  dt_topology_free(t);
}
END_TEST

#define LOCAL_LAT 4e-7
#define GLOBAL_LAT 9e-7

START_TEST(test_dragonfly)
{
  /* 3 groups x 2 routers x 2 nodes (1 GPU, 1 NIC each): node n on router n/2, group n/4. One global link per
   * router (a*h = 2 = G-1): palm-tree ports q = (h - g - 1) mod 3 put g0-g1 on routers 0 and 3, g0-g2 on
   * routers 1 and 4, g1-g2 on routers 2 and 5. */
  dt_platform p = base_platform(12, 1, 1);
  p.topology = DT_NET_DRAGONFLY;
  p.groups = 3;
  p.routers_per_group = 2;
  p.nodes_per_router = 2;
  p.global_links_per_router = 1;
  p.local_bandwidth = 80e9;
  p.local_latency = LOCAL_LAT;
  p.global_bandwidth = 40e9;
  p.global_latency = GLOBAL_LAT;
  dt_topology *t = build(&p);
  /* 12 GPU ports, 12 NICs, 12 NIC cables, 3 local (one per group), 3 global */
  ck_assert_uint_eq(dt_topology_link_count(t), 12 * 3 + 3 + 3);
  double lat, bw;
  /* same router */
  expect_route(t, 0, 1, &lat, &bw, 4, "nic0.0 up", "cable:nic0-router0 up", "cable:nic1-router0 down", "nic1.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT, "same-router alpha");
  /* same group, other router: one local hop */
  expect_route(t, 0, 2, &lat, &bw, 5, "nic0.0 up", "cable:nic0-router0 up", "cable:router0-router1 up",
               "cable:nic2-router1 down", "nic2.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT + LOCAL_LAT, "same-group alpha");
  /* other group, both ends off the gateway: router 1 -> gateway 0, global g0-g1, gateway 3 -> router 2 */
  expect_route(t, 2, 4, &lat, &bw, 7, "nic2.0 up", "cable:nic2-router1 up", "cable:router0-router1 down",
               "cable:group0-group1.0 up", "cable:router2-router3 down", "cable:nic4-router2 down", "nic4.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT + 2 * LOCAL_LAT + GLOBAL_LAT, "other-group alpha (hand sum)");
  assert_close(bw, 40e9, "global link bottleneck");
  expect_route(t, 4, 2, &lat, &bw, 7, "nic4.0 up", "cable:nic4-router2 up", "cable:router2-router3 up",
               "cable:group0-group1.0 down", "cable:router0-router1 up", "cable:nic2-router1 down", "nic2.0 down");
  /* source on the gateway: router 0 holds g0-g1; destination on g1's gateway router 3 (node 6) */
  expect_route(t, 0, 6, &lat, &bw, 5, "nic0.0 up", "cable:nic0-router0 up", "cable:group0-group1.0 up",
               "cable:nic6-router3 down", "nic6.0 down");
  assert_close(lat, 2 * NIC_LAT + 2 * LINK_LAT + GLOBAL_LAT, "gateway-to-gateway alpha");
  /* g2 -> g0 leaves from router 4 (q = (0 - 2 - 1) mod 3 = 0) and lands on router 1 */
  expect_route(t, 10, 0, &lat, &bw, 7, "nic10.0 up", "cable:nic10-router5 up", "cable:router4-router5 down",
               "cable:group0-group2.0 down", "cable:router0-router1 down", "cable:nic0-router0 down", "nic0.0 down");
  ck_assert_int_eq(dt_topology_link(t, 36)->kind, DT_LINK_LOCAL);
  ck_assert_int_eq(dt_topology_link(t, 39)->kind, DT_LINK_GLOBAL);
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_dragonfly_parallel_globals)
{
  /* 2 groups x 2 routers x 1 node, 2 global links per router: 4 ports per group, 1 other group -> 4 parallel
   * links; link b mod 4 for destination NIC b, on router (r * 1 + 0) / 2 of each group */
  dt_platform p = base_platform(4, 1, 1);
  p.topology = DT_NET_DRAGONFLY;
  p.groups = 2;
  p.routers_per_group = 2;
  p.nodes_per_router = 1;
  p.global_links_per_router = 2;
  p.local_bandwidth = p.global_bandwidth = 25e9;
  dt_topology *t = build(&p);
  ck_assert_int_eq(dt_topology_shape(t)->global_per_pair, 4);
  ck_assert_uint_eq(dt_topology_link_count(t), 4 * 3 + 2 + 4);
  double lat, bw;
  /* b = 2 -> link r = 2 at port q = r * (G-1) + 0 = 2, router q / h = 1 of each group: router 0 -> 1 (local),
   * global .2, router 3 -> 2 (local) */
  expect_route(t, 0, 2, &lat, &bw, 7, "nic0.0 up", "cable:nic0-router0 up", "cable:router0-router1 up",
               "cable:group0-group1.2 up", "cable:router2-router3 down", "cable:nic2-router2 down", "nic2.0 down");
  /* b = 3 -> link 3, gateways router 1 and router 3 = the destination's router */
  expect_route(t, 1, 3, &lat, &bw, 5, "nic1.0 up", "cable:nic1-router1 up", "cable:group0-group1.3 up",
               "cable:nic3-router3 down", "nic3.0 down");
  assert_unique_names(t);
  dt_topology_free(t);
}
END_TEST


/* ---- slow and failed links (dt_topology_scale_bandwidth, dt_topology_set_down) ---- */

static size_t link_named(const dt_topology *t, const char *name)
{
  char buf[128];
  for (size_t i = 0; i < dt_topology_link_count(t); i++)
    if (strcmp(dt_topology_link_name(t, i, buf, sizeof buf), name) == 0)
      return i;
  ck_abort_msg("no link '%s'", name);
  return 0;
}

START_TEST(test_fail_two_level)
{
  /* 8 single-NIC nodes, radix 8, 1:1: 2 leaves of 4, 4 spines; NIC 7's flows from leaf 0 take spine 7 mod 4 = 3 */
  dt_platform p = fat_tree(8, 1, 1, 2, 8, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  double lat, bw;
  expect_route(t, 3, 7, &lat, &bw, 6, "nic3.0 up", "cable:nic3-leaf0 up", "cable:leaf0-spine3 up",
               "cable:leaf1-spine3 down", "cable:nic7-leaf1 down", "nic7.0 down");
  size_t c = link_named(t, "cable:leaf0-spine3");
  dt_topology_set_down(t, c, 1);
  ck_assert(dt_topology_is_down(t, c));
  /* spines 0, 1, 2 are left for leaves 0-1: the (7 mod 3)-th of them, spine 1; alpha unchanged */
  expect_route(t, 3, 7, &lat, &bw, 6, "nic3.0 up", "cable:nic3-leaf0 up", "cable:leaf0-spine1 up",
               "cable:leaf1-spine1 down", "cable:nic7-leaf1 down", "nic7.0 down");
  assert_close(lat, 2 * NIC_LAT + 4 * LINK_LAT, "detour alpha");
  /* the reverse flow (key 3) came down spine 3 to leaf 0: now spine 3 mod 3 = 0 */
  expect_route(t, 7, 3, &lat, &bw, 6, "nic7.0 up", "cable:nic7-leaf1 up", "cable:leaf1-spine0 up",
               "cable:leaf0-spine0 down", "cable:nic3-leaf0 down", "nic3.0 down");
  /* a flow whose spine is up keeps it */
  expect_route(t, 1, 5, &lat, &bw, 6, "nic1.0 up", "cable:nic1-leaf0 up", "cable:leaf0-spine1 up",
               "cable:leaf1-spine1 down", "cable:nic5-leaf1 down", "nic5.0 down");
  /* every spine of leaf 0 down: across the leaves unreachable, inside a leaf still fine */
  for (int s = 0; s < 4; s++) {
    char name[64];
    snprintf(name, sizeof name, "cable:leaf0-spine%d", s);
    dt_topology_set_down(t, link_named(t, name), 1);
  }
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  ck_assert_int_eq(dt_topology_route(t, 3, 7, hops, NULL, NULL), DT_ROUTE_UNREACHABLE);
  ck_assert_int_eq(dt_topology_route(t, 0, 3, hops, NULL, NULL), 4);
  /* back up: the original route again */
  for (int s = 0; s < 4; s++) {
    char name[64];
    snprintf(name, sizeof name, "cable:leaf0-spine%d", s);
    dt_topology_set_down(t, link_named(t, name), 0);
  }
  expect_route(t, 3, 7, &lat, &bw, 6, "nic3.0 up", "cable:nic3-leaf0 up", "cable:leaf0-spine3 up",
               "cable:leaf1-spine3 down", "cable:nic7-leaf1 down", "nic7.0 down");
  /* a failed NIC has no detour */
  dt_topology_set_down(t, link_named(t, "nic3.0"), 1);
  ck_assert_int_eq(dt_topology_route(t, 3, 7, hops, NULL, NULL), DT_ROUTE_UNREACHABLE);
  /* a degraded cable: the route's bottleneck */
  dt_topology_scale_bandwidth(t, link_named(t, "cable:leaf0-spine2"), 0.25);
  expect_route(t, 2, 6, &lat, &bw, 6, "nic2.0 up", "cable:nic2-leaf0 up", "cable:leaf0-spine2 up",
               "cable:leaf1-spine2 down", "cable:nic6-leaf1 down", "nic6.0 down");
  assert_close(bw, 25e9, "degraded cable bottleneck (100 GB/s x 0.25)");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_fail_three_level)
{
  /* test_three_level's tree: 0 -> 23 goes leaf0-agg1, agg1-core3, agg5-core3, leaf5-agg5 */
  dt_platform p = fat_tree(12, 2, 1, 3, 4, 1, DT_WIRING_NODE);
  dt_topology *t = build(&p);
  double lat, bw;
  size_t core = link_named(t, "cable:agg1-core3");
  dt_topology_set_down(t, core, 1);
  /* the other core uplink of aggregation switches 1 and 5: m = 0, core 1*2 + 0 = 2 */
  expect_route(t, 0, 23, &lat, &bw, 8, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-agg1 up",
               "cable:agg1-core2 up", "cable:agg5-core2 down", "cable:leaf5-agg5 down", "cable:nic11-leaf5 down",
               "nic11.0 down");
  dt_topology_set_down(t, core, 0);
  dt_topology_set_down(t, link_named(t, "cable:leaf0-agg1"), 1);
  /* aggregation index 0 instead (pods 0 and 2: switches 0 and 4), its core (11/2) mod 2 = 1 */
  expect_route(t, 0, 23, &lat, &bw, 8, "nic0.0 up", "cable:nic0-leaf0 up", "cable:leaf0-agg0 up",
               "cable:agg0-core1 up", "cable:agg4-core1 down", "cable:leaf5-agg4 down", "cable:nic11-leaf5 down",
               "nic11.0 down");
  assert_close(lat, 2 * NIC_LAT + 6 * LINK_LAT, "detour alpha across pods");
  /* with aggregation index 0 unable to reach a core of pod 2 either, nothing is left */
  dt_topology_set_down(t, link_named(t, "cable:agg0-core0"), 1);
  dt_topology_set_down(t, link_named(t, "cable:agg0-core1"), 1);
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  ck_assert_int_eq(dt_topology_route(t, 0, 23, hops, NULL, NULL), DT_ROUTE_UNREACHABLE);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_fail_dragonfly_global)
{
  /* test_dragonfly_parallel_globals: 0 -> 2 takes global link 2 of 4; failed, the (2 mod 3)-th still up: link 3,
   * whose gateways are routers 1 and 3 */
  dt_platform p = base_platform(4, 1, 1);
  p.topology = DT_NET_DRAGONFLY;
  p.groups = 2;
  p.routers_per_group = 2;
  p.nodes_per_router = 1;
  p.global_links_per_router = 2;
  p.local_bandwidth = p.global_bandwidth = 25e9;
  dt_topology *t = build(&p);
  dt_topology_set_down(t, link_named(t, "cable:group0-group1.2"), 1);
  double lat, bw;
  expect_route(t, 0, 2, &lat, &bw, 7, "nic0.0 up", "cable:nic0-router0 up", "cable:router0-router1 up",
               "cable:group0-group1.3 up", "cable:router2-router3 down", "cable:nic2-router2 down", "nic2.0 down");
  dt_topology_free(t);
}
END_TEST

static Suite *topology_suite(void)
{
  Suite *s = suite_create("topology");
  TCase *tc = tcase_create("routes");
  tcase_add_test(tc, test_one_node);
  tcase_add_test(tc, test_single_switch);
  tcase_add_test(tc, test_two_level_node_wiring);
  tcase_add_test(tc, test_two_level_rail_wiring);
  tcase_add_test(tc, test_oversubscribed);
  tcase_add_test(tc, test_three_level);
  tcase_add_test(tc, test_three_level_one_pod);
  suite_add_tcase(s, tc);
  tc = tcase_create("kinds");
  tcase_add_test(tc, test_mesh_dgx1);
  tcase_add_test(tc, test_mesh_two_nodes);
  tcase_add_test(tc, test_pcie);
  tcase_add_test(tc, test_pcie_nics);
  tcase_add_test(tc, test_dragonfly);
  tcase_add_test(tc, test_dragonfly_parallel_globals);
  suite_add_tcase(s, tc);
  tc = tcase_create("faults");
  tcase_add_test(tc, test_fail_two_level);
  tcase_add_test(tc, test_fail_three_level);
  tcase_add_test(tc, test_fail_dragonfly_global);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_add_test(tc, test_does_not_fit);
  tcase_add_test(tc, test_large_is_cheap);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(topology_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
