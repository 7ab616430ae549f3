/* Check suite for replay/dt_sg_platform.cpp: the SimGrid platform realises dt_topology exactly (same links,
 * directions, latencies, bandwidths for every pair), and flows cost alpha + S/B with max-min sharing.
 * SimGrid can be initialised once per process: every test runs in its own forked process (Check's default). */
#include "dt_test.h"
#include "platforms/dt_topology.h"
#include "replay/dt_sg_platform.h"

#include <check.h>
#include <glob.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xbt/dynar.h>

static void sg_start(void)
{
  static char arg0[] = "check_sg_platform";
  static char arg1[] = "--log=root.thresh:critical";
  char *argv[] = {arg0, arg1, NULL};
  int argc = 2;
  simgrid_init(&argc, argv);
}

static dt_platform base_platform(int nodes, int gpus_per_node, int nics_per_node)
{
  dt_platform p = dt_test_platform(nodes, gpus_per_node);
  p.nics_per_node = nics_per_node;
  p.nic_bandwidth = 50e9;
  p.nic_latency = 1.5e-6;
  p.link_bandwidth = 100e9;
  p.link_latency = 3e-7;
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

static dt_topology *build_sg(const dt_platform *p)
{
  dt_topology *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_topology_build(p, &t, &err) == DT_OK, "topology: %s", err.msg);
  sg_start();
  ck_assert_msg(dt_sg_platform_build(t, &err) == DT_OK, "sg platform: %s", err.msg);
  return t;
}

static sg_host_t host(int gpu)
{
  char name[32];
  snprintf(name, sizeof name, "gpu%d", gpu);
  sg_host_t h = sg_host_by_name(name);
  ck_assert_msg(h != NULL, "no host %s", name);
  return h;
}

static void assert_close(double got, double want, double rel, const char *what)
{
  ck_assert_msg(fabs(got - want) <= rel * fabs(want), "%s: got %.17g, want %.17g", what, got, want);
}

/* The latency a flow from a to b pays: the sum of its SimGrid route's link latencies in route order (what
 * dt_sg_platform.cpp's latency factor charges; the route itself reports one latency for all, the sharing penalty). */
static double route_latency(sg_host_t a, sg_host_t b)
{
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(a, b, links);
  double lat = 0;
  for (unsigned long i = 0; i < xbt_dynar_length(links); i++)
    lat += sg_link_get_latency(xbt_dynar_get_as(links, i, sg_link_t));
  xbt_dynar_free(&links);
  return lat;
}

/* SimGrid's route between two GPUs has dt_topology's links, in order, as NAME_UP / NAME_DOWN, the same latency
 * sum and bottleneck bandwidth, and reports the same latency to SimGrid as every other route (the loopback's):
 * CM02 takes it as the flow's sharing penalty, which must be equal for all. */
static void compare_route(const dt_topology *t, int src, int dst)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double lat, bw;
  int n = dt_topology_route(t, src, dst, hops, &lat, &bw);
  ck_assert_int_gt(n, 0);
  sg_host_t a = host(src), b = host(dst);
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(a, b, links);
  ck_assert_msg((int)xbt_dynar_length(links) == n, "gpu%d->gpu%d: %lu links in simgrid, %d in dt_topology", src,
                dst, xbt_dynar_length(links), n);
  for (int i = 0; i < n; i++) {
    char want[160], name[128];
    snprintf(want, sizeof want, "%s%s", dt_topology_link_name(t, hops[i].link, name, sizeof name),
             hops[i].dir ? "_DOWN" : "_UP");
    const char *got = sg_link_get_name(xbt_dynar_get_as(links, i, sg_link_t));
    ck_assert_msg(strcmp(got, want) == 0, "gpu%d->gpu%d hop %d: simgrid '%s', dt_topology '%s'", src, dst, i, got,
                  want);
  }
  xbt_dynar_free(&links);
  assert_close(route_latency(a, b), lat, 1e-12, "route latency");
  ck_assert_msg(sg_host_get_route_latency(a, b) == sg_host_get_route_latency(a, a),
                "gpu%d->gpu%d reports latency %.17g to simgrid, its loopback %.17g: unequal sharing penalties", src,
                dst, sg_host_get_route_latency(a, b), sg_host_get_route_latency(a, a));
  assert_close(sg_host_get_route_bandwidth(a, b), bw, 1e-12, "route bandwidth");
}

static void compare_all_pairs(const dt_topology *t)
{
  int g = dt_platform_gpu_count(dt_topology_platform(t));
  for (int s = 0; s < g; s++)
    for (int d = 0; d < g; d++)
      if (s != d)
        compare_route(t, s, d);
}

START_TEST(test_routes_one_node)
{
  dt_platform p = base_platform(1, 8, 0);
  dt_topology *t = build_sg(&p);
  ck_assert_int_eq((int)sg_host_count(), 8);
  compare_all_pairs(t);
  assert_close(route_latency(host(0), host(5)), 1e-6, 1e-12, "intra latency");
  assert_close(sg_host_get_route_bandwidth(host(0), host(5)), 450e9, 1e-12, "intra bandwidth");
  assert_close(sg_host_get_speed(host(3)), 989e12 * 0.5, 1e-12, "host speed");
  dt_error err;
  ck_assert_int_eq(dt_sg_platform_build(t, &err), DT_ERR); /* once per process */
  ck_assert_msg(strstr(err.msg, "already built") != NULL, "message: %s", err.msg);
  compare_route(t, 2, 2); /* loopback over the GPU's own port */
  assert_close(route_latency(host(2), host(2)), 1e-6, 1e-12, "loopback latency");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_routes_single_switch)
{
  dt_platform p = base_platform(4, 4, 2);
  p.topology = DT_NET_SINGLE_SWITCH;
  p.bandwidth_factor = 0.9;
  p.latency_factor = 1.1;
  dt_topology *t = build_sg(&p);
  compare_all_pairs(t);
  /* factors reach SimGrid: 2 NICs + 2 cables, scaled */
  assert_close(route_latency(host(0), host(15)), 1.1 * (2 * 1.5e-6 + 2 * 3e-7), 1e-12, "latency");
  assert_close(sg_host_get_route_bandwidth(host(0), host(15)), 0.9 * 50e9, 1e-12, "bandwidth");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_routes_two_level_node)
{
  /* radix 8, 1:1: 4 down, 4 up; 16 NICs -> 4 leaves, 4 spines */
  dt_platform p = fat_tree(8, 8, 2, 2, 8, 1, DT_WIRING_NODE);
  dt_topology *t = build_sg(&p);
  compare_all_pairs(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_routes_two_level_rail_oversubscribed)
{
  /* radix 12, 2:1: 8 down, 4 up; rail wiring, 4 rails of 3 leaves */
  dt_platform p = fat_tree(20, 4, 4, 2, 12, 2, DT_WIRING_RAIL);
  dt_topology *t = build_sg(&p);
  compare_all_pairs(t);
  dt_topology_free(t);
}
END_TEST

START_TEST(test_routes_three_level)
{
  /* radix 4: 2 down, 2 up, pods of 2 leaves; 12 NICs -> 6 leaves, 3 pods, 4 cores */
  dt_platform p = fat_tree(12, 2, 1, 3, 4, 1, DT_WIRING_NODE);
  dt_topology *t = build_sg(&p);
  compare_all_pairs(t);
  assert_close(route_latency(host(0), host(23)), 2 * 1.5e-6 + 6 * 3e-7, 1e-12, "cross-pod latency");
  dt_topology_free(t);
}
END_TEST

/* ---- flows ---- */

#define MAX_FLOWS 8
static double flow_end[MAX_FLOWS];
static double flow_bytes = 1e8;

static void receiver(int argc, char *argv[])
{
  ck_assert_int_eq(argc, 2);
  int id = atoi(argv[1]);
  char box[32];
  snprintf(box, sizeof box, "flow%d", id);
  sg_mailbox_get(sg_mailbox_by_name(box));
  flow_end[id] = simgrid_get_clock();
}

static void sender(int argc, char *argv[])
{
  ck_assert_int_eq(argc, 2);
  char box[32];
  snprintf(box, sizeof box, "flow%s", argv[1]);
  static int token; /* SimGrid refuses NULL payloads; nothing is freed */
  sg_mailbox_put(sg_mailbox_by_name(box), &token, (long)flow_bytes);
}

/* Starts flow `id` from GPU src to GPU dst at time 0. */
static void start_flow(int id, int src, int dst)
{
  char idbuf[16];
  snprintf(idbuf, sizeof idbuf, "%d", id);
  char *argv[] = {"flow", idbuf, NULL};
  sg_actor_create("sender", host(src), sender, 2, argv);
  sg_actor_create("receiver", host(dst), receiver, 2, argv);
}

START_TEST(test_flow_alpha_beta)
{
  /* one flow per route kind, one at a time in separate runs is not possible (one simulation per process):
   * flows on disjoint links run concurrently and each must cost its own alpha + S/B */
  dt_platform p = fat_tree(8, 8, 2, 2, 8, 1, DT_WIRING_NODE);
  p.nic_bandwidth = 50e9;
  p.link_bandwidth = 40e9; /* cables are the bottleneck between nodes */
  dt_topology *t = build_sg(&p);
  int pairs[][2] = {{0, 1}, {8, 4}, {32, 63}}; /* intra node; same leaf (NIC 2 -> 1); cross spine (NIC 8 -> 15) */
  double want[3];
  for (int i = 0; i < 3; i++) {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    double lat, bw;
    dt_topology_route(t, pairs[i][0], pairs[i][1], hops, &lat, &bw);
    want[i] = lat + flow_bytes / bw;
    start_flow(i, pairs[i][0], pairs[i][1]);
  }
  simgrid_run();
  assert_close(flow_end[0], 1e-6 + flow_bytes / 450e9, 1e-8, "intra-node flow");
  assert_close(flow_end[1], 2 * 1.5e-6 + 2 * 3e-7 + flow_bytes / 40e9, 1e-8, "same-leaf flow");
  assert_close(flow_end[2], 2 * 1.5e-6 + 4 * 3e-7 + flow_bytes / 40e9, 1e-8, "cross-spine flow");
  for (int i = 0; i < 3; i++)
    assert_close(flow_end[i], want[i], 1e-8, "flow vs dt_topology alpha + S/B");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_flow_shared_nic)
{
  /* GPUs 0 and 1 sit behind NIC 0.0 (8 GPUs, 2 NICs); they send to GPUs behind NICs 1.0 and 1.1, all on leaf 0:
   * equal latencies, the NIC (50 GB/s < cables 100 GB/s) is shared, each flow gets half */
  dt_platform p = fat_tree(8, 8, 2, 2, 8, 1, DT_WIRING_NODE);
  dt_topology *t = build_sg(&p);
  start_flow(0, 0, 8);
  start_flow(1, 1, 12);
  simgrid_run();
  double alpha = 2 * 1.5e-6 + 2 * 3e-7;
  assert_close(flow_end[0], alpha + flow_bytes / (50e9 / 2), 1e-8, "first flow on shared NIC");
  assert_close(flow_end[1], alpha + flow_bytes / (50e9 / 2), 1e-8, "second flow on shared NIC");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_flow_unequal_latency_shares)
{
  /* Flows of different route latencies share a link equally (plain max-min: InfiniBand's credit-based flow control
   * and NVLink's arbitration serve flows in turn; docs/simgrid-mapping.md), each still paying its own latency.
   * GPUs 0 and 1 share NIC 0.0: flow 0 stays on leaf 0 (alpha L0 = 2 nic + 2 cables), flow 1 crosses a spine
   * (L1 = 2 nic + 4 cables). Flow 0 runs alone from L0 to L1, then both run at B / 2 until flow 0 ends; flow 1 then
   * has the NIC alone. (CM02's own rule, shares in proportion to 1 / Li, ends flow 0 at 3.717 ms, not 4.003.) */
  dt_platform p = fat_tree(8, 8, 2, 2, 8, 1, DT_WIRING_NODE);
  dt_topology *t = build_sg(&p);
  start_flow(0, 0, 8);
  start_flow(1, 1, 63);
  simgrid_run();
  double b = 50e9, l0 = 2 * 1.5e-6 + 2 * 3e-7, l1 = 2 * 1.5e-6 + 4 * 3e-7;
  double t0 = l1 + (flow_bytes - b * (l1 - l0)) / (b / 2);
  double t1 = t0 + (flow_bytes - b / 2 * (t0 - l1)) / b;
  assert_close(flow_end[0], t0, 1e-8, "shorter-latency flow");
  assert_close(flow_end[1], t1, 1e-8, "longer-latency flow");
  dt_topology_free(t);
}
END_TEST

START_TEST(test_flow_oversubscribed_spine)
{
  /* 2:1 leaf (radix 6: 4 down, 2 up), 1 GPU and 1 NIC per node, nodes 0-3 on leaf 0, 4-7 on leaf 1. The
   * permutation i -> i+4 crosses the spines: 4 flows over 2 uplinks of leaf 0; destinations 4..7 mod 2 put
   * two flows on each uplink, so each gets half a cable: the bandwidth term doubles */
  dt_platform p = fat_tree(8, 1, 1, 2, 6, 2, DT_WIRING_NODE);
  p.nic_bandwidth = 100e9;
  p.link_bandwidth = 100e9;
  dt_topology *t = build_sg(&p);
  for (int i = 0; i < 4; i++)
    start_flow(i, i, i + 4);
  simgrid_run();
  double alpha = 2 * 1.5e-6 + 4 * 3e-7;
  for (int i = 0; i < 4; i++)
    assert_close(flow_end[i], alpha + 2 * flow_bytes / 100e9, 1e-8, "oversubscribed flow");
  dt_topology_free(t);
}
END_TEST

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void time_build(dt_platform *p, const char *label)
{
  double t0 = now_s();
  dt_topology *t = build_sg(p);
  double t1 = now_s();
  int g = dt_platform_gpu_count(p);
  ck_assert_int_eq((int)sg_host_count(), g);
  /* a spread of pairs, same node to far pods */
  unsigned seed = 12345;
  for (int i = 0; i < 2000; i++) {
    seed = seed * 1103515245u + 12345u;
    int s = (int)((seed >> 8) % (unsigned)g);
    seed = seed * 1103515245u + 12345u;
    int d = (int)((seed >> 8) % (unsigned)g);
    if (s != d)
      compare_route(t, s, d);
  }
  fprintf(stderr, "check_sg_platform: %s: %d GPUs, %zu split-duplex links, built in %.3f s\n", label, g,
          dt_topology_link_count(t), t1 - t0);
  ck_assert_msg(t1 - t0 < 60.0, "building %d GPUs took %.1f s", g, t1 - t0);
  dt_topology_free(t);
}

START_TEST(test_build_time_1024)
{
  dt_platform p = fat_tree(128, 8, 8, 2, 64, 1, DT_WIRING_RAIL);
  time_build(&p, "2-level rail radix 64");
}
END_TEST

START_TEST(test_build_time_8192)
{
  dt_platform p = fat_tree(1024, 8, 8, 3, 64, 1, DT_WIRING_NODE);
  time_build(&p, "3-level node radix 64");
}
END_TEST

#define SHIPPED_LOOPS 32 /* iterations of test_shipped_platforms: at least the number of shipped platforms */

/* Every shipped platforms/NAME.yaml loads, builds in SimGrid and routes as dt_topology (loop index = file). */
START_TEST(test_shipped_platforms)
{
  const char *dir = getenv("DTSIM_SOURCE_DIR");
  char pattern[1024];
  snprintf(pattern, sizeof pattern, "%s/platforms/*.yaml", dir ? dir : ".");
  glob_t g;
  int rc = glob(pattern, 0, NULL, &g);
  ck_assert_msg(rc == 0 && g.gl_pathc > 0, "no platform files match %s", pattern);
  /* every file gets an iteration: more files than SHIPPED_LOOPS would leave some untested */
  ck_assert_msg(g.gl_pathc <= SHIPPED_LOOPS, "%zu platform files but only %d loop iterations: raise SHIPPED_LOOPS",
                g.gl_pathc, SHIPPED_LOOPS);
  if ((size_t)_i < g.gl_pathc) {
    dt_platform *p = NULL;
    dt_error err;
    dt_error_clear(&err);
    ck_assert_msg(dt_platform_load(g.gl_pathv[_i], &p, &err) == DT_OK, "%s: %s", g.gl_pathv[_i], err.msg);
    dt_topology *t = build_sg(p);
    int n = dt_platform_gpu_count(p);
    for (int s = 0; s < n; s += 1 + n / 64)
      for (int d = 0; d < n; d++)
        if (s != d)
          compare_route(t, s, d);
    dt_topology_free(t);
    dt_platform_free(p);
  }
  globfree(&g);
}
END_TEST

static Suite *sg_platform_suite(void)
{
  Suite *s = suite_create("sg_platform");
  TCase *tc = tcase_create("routes");
  tcase_add_test(tc, test_routes_one_node);
  tcase_add_test(tc, test_routes_single_switch);
  tcase_add_test(tc, test_routes_two_level_node);
  tcase_add_test(tc, test_routes_two_level_rail_oversubscribed);
  tcase_add_test(tc, test_routes_three_level);
  suite_add_tcase(s, tc);
  tcase_add_loop_test(tc, test_shipped_platforms, 0, SHIPPED_LOOPS);
  tc = tcase_create("flows");
  tcase_add_test(tc, test_flow_alpha_beta);
  tcase_add_test(tc, test_flow_shared_nic);
  tcase_add_test(tc, test_flow_unequal_latency_shares);
  tcase_add_test(tc, test_flow_oversubscribed_spine);
  suite_add_tcase(s, tc);
  tc = tcase_create("scale");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_build_time_1024);
  tcase_add_test(tc, test_build_time_8192);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(sg_platform_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
