/* Check suite for replay/dt_degrade.c: the --degrade / --fail / --flap argument parser, name resolution (classes,
 * links with and without the cable: prefix, near matches) and what applying does to a topology's table. The runs
 * themselves are checked against closed forms in tests/e2e_degrade.sh. */
#include "replay/dt_degrade.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static dt_platform ft8(void)
{
  /* tests/data/degrade/ft8.yaml: 8 single-GPU nodes, 2 leaves, 4 spines, 12.5 GB/s everywhere on the network */
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.name = "ft8";
  p.gpu_model = "T";
  p.gpu_peak = 1e14;
  p.gpu_efficiency = 1;
  p.nodes = 8;
  p.gpus_per_node = 1;
  p.intra_kind = DT_INTRA_NVSWITCH;
  p.intra_bandwidth = 1e11;
  p.intra_latency = 2e-6;
  p.nics_per_node = 1;
  p.nic_bandwidth = 12.5e9;
  p.nic_latency = 1e-6;
  p.topology = DT_NET_FAT_TREE;
  p.levels = 2;
  p.radix = 8;
  p.oversubscription = 1;
  p.link_bandwidth = 12.5e9;
  p.link_latency = 5e-7;
  p.bandwidth_factor = p.latency_factor = 1;
  return p;
}

static int parse(dt_faults *f, dt_fault_kind k, const char *arg, const char *want_in_why)
{
  char why[512] = "";
  int rc = dt_faults_parse(f, k, arg, why, sizeof why);
  if (want_in_why)
    ck_assert_msg(rc != 0 && strstr(why, want_in_why), "'%s': '%s' does not say '%s'", arg, why, want_in_why);
  return rc;
}

START_TEST(test_parse)
{
  dt_faults f;
  dt_faults_init(&f);
  ck_assert_int_eq(parse(&f, DT_FAULT_DEGRADE, "leaf-spine=0.5", NULL), 0);
  ck_assert_int_eq(parse(&f, DT_FAULT_FAIL, "leaf0-spine3@10ms", NULL), 0);
  ck_assert_int_eq(parse(&f, DT_FAULT_FAIL, "nic3.0@0", NULL), 0);
  ck_assert_int_eq(parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms,1ms", NULL), 0);
  ck_assert_int_eq(parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms,1ms,2.5ms", NULL), 0);
  ck_assert_uint_eq(f.n, 5);
  ck_assert_str_eq(f.v[0].target, "leaf-spine");
  ck_assert(f.v[0].factor == 0.5);
  ck_assert(fabs(f.v[1].at_s - 0.01) < 1e-15);
  ck_assert(f.v[2].at_s == 0);
  ck_assert(fabs(f.v[3].period_s - 0.01) < 1e-15 && fabs(f.v[3].down_s - 0.001) < 1e-15 && f.v[3].start_s == 0);
  ck_assert(fabs(f.v[4].start_s - 0.0025) < 1e-15);
  ck_assert(dt_faults_dynamic(&f));
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=1.01", "from 1e-09 to 1");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=0", "from 1e-09 to 1");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=-0.5", "from 1e-09 to 1");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=nan", "from 1e-09 to 1");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=0.5x", "from 1e-09 to 1");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=1e-10", "from 1e-09 to 1");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=999us,1us", "at least 0.001 s");
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine", "expects TARGET=FACTOR");
  parse(&f, DT_FAULT_DEGRADE, "=0.5", "expects TARGET=FACTOR");
  parse(&f, DT_FAULT_FAIL, "leaf0-spine3@", "expects LINK@TIME");
  parse(&f, DT_FAULT_FAIL, "leaf0-spine3@10", "the failure time");
  parse(&f, DT_FAULT_FAIL, "leaf0-spine3@-1ms", "the failure time");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms", "expects LINK=PERIOD,DOWNTIME");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms,1ms,0,4", "expects LINK=PERIOD,DOWNTIME");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms,10ms", "below the period");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=10ms,0", "above 0");
  parse(&f, DT_FAULT_FLAP, "leaf0-spine3=often,1ms", "the period");
  ck_assert_uint_eq(f.n, 5); /* the refused ones were not added */
  dt_faults_clear(&f);
  ck_assert_uint_eq(f.n, 0);
  ck_assert(!dt_faults_dynamic(&f));
  /* the natural end (the run without the faults): changes at or after it cannot act */
  ck_assert_int_eq(parse(&f, DT_FAULT_FAIL, "leaf0-spine3@10ms", NULL), 0);
  ck_assert_int_eq(parse(&f, DT_FAULT_FLAP, "leaf0-spine2=10ms,1ms,2.5ms", NULL), 0);
  ck_assert(dt_faults_dynamic(&f));
  dt_faults_set_natural_end(&f, 0.0025); /* the flap starts at it: neither acts */
  ck_assert(!dt_faults_dynamic(&f));
  dt_faults_set_natural_end(&f, 0.005); /* the flap starts before it */
  ck_assert(dt_faults_dynamic(&f));
  dt_faults_set_natural_end(&f, 0.001);
  ck_assert_int_eq(parse(&f, DT_FAULT_DEGRADE, "leaf-spine=0.5", NULL), 0); /* may slow the run past 1 ms */
  ck_assert(dt_faults_dynamic(&f));
  dt_faults_clear(&f);
  ck_assert(!f.has_end);
}
END_TEST

START_TEST(test_apply)
{
  dt_platform p = ft8();
  dt_topology *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_topology_build(&p, &t, &err), DT_OK);
  dt_faults f;
  dt_faults_init(&f);
  parse(&f, DT_FAULT_DEGRADE, "leaf-spine=0.5", NULL);
  parse(&f, DT_FAULT_DEGRADE, "nic3.0=0.25", NULL);
  parse(&f, DT_FAULT_DEGRADE, "cable:leaf1-spine2=0.5", NULL); /* and the class's 0.5: 0.25 */
  parse(&f, DT_FAULT_FAIL, "leaf0-spine3@0", NULL);
  parse(&f, DT_FAULT_FAIL, "leaf0-spine2@1ms", NULL); /* later: not down yet */
  ck_assert_int_eq(dt_faults_apply(&f, t, &err), DT_OK);
  ck_assert_uint_eq(f.v[0].nlinks, 8);
  ck_assert_uint_eq(f.v[1].nlinks, 1);
  char name[128];
  for (size_t i = 0; i < dt_topology_link_count(t); i++) {
    const char *n = dt_topology_link_name(t, i, name, sizeof name);
    double want = dt_topology_link_class(t, i) == DT_LC_LEAF_SPINE ? 6.25e9 : strcmp(n, "nic3.0") == 0 ? 3.125e9 : 0;
    if (strcmp(n, "cable:leaf1-spine2") == 0)
      want = 3.125e9;
    if (want > 0)
      ck_assert_msg(dt_topology_link(t, i)->bandwidth == want, "%s: %g, want %g", n, dt_topology_link(t, i)->bandwidth,
                    want);
    ck_assert_int_eq(dt_topology_is_down(t, i), strcmp(n, "cable:leaf0-spine3") == 0);
  }
  dt_faults_clear(&f);

  /* errors: an unknown name with its near matches and how to list them, a class to --fail, an absent class */
  const struct {
    dt_fault_kind kind;
    const char *arg, *want;
  } bad[] = {
      {DT_FAULT_DEGRADE, "leaf-spne=0.5", "did you mean 'leaf-spine'"},
      {DT_FAULT_DEGRADE, "nic3.7=0.5", "did you mean 'nic3.0'"},
      {DT_FAULT_FAIL, "leaf0-spine9@0", "'leaf0-spine0', 'leaf0-spine1', 'leaf0-spine2'"},
      {DT_FAULT_FAIL, "leaf0-spine9@0", "platform show PLATFORM --links"},
      {DT_FAULT_FAIL, "leaf-spine@0", "expects one link, found the link class 'leaf-spine'"},
      {DT_FAULT_FLAP, "gpu-nic=1ms,0.5ms", "expects one link"},
      {DT_FAULT_DEGRADE, "nvlink=0.5", "no link of class 'nvlink'"},
      {DT_FAULT_DEGRADE, "zzzzzzzzzzzz=0.5", "no link or link class 'zzzzzzzzzzzz' on platform 'ft8' (list them"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dt_faults_init(&f);
    parse(&f, bad[i].kind, bad[i].arg, NULL);
    dt_error_clear(&err);
    ck_assert_int_eq(dt_faults_apply(&f, t, &err), DT_ERR);
    ck_assert_msg(strstr(err.msg, bad[i].want), "'%s': '%s' does not say '%s'", bad[i].arg, err.msg, bad[i].want);
    dt_faults_clear(&f);
  }
  dt_topology_free(t);
}
END_TEST

START_TEST(test_unreachable)
{
  dt_platform p = ft8();
  dt_topology *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_topology_build(&p, &t, &err), DT_OK);
  dt_trace tr;
  memset(&tr, 0, sizeof tr);
  int32_t ranks[2] = {2, 5};
  dt_group g;
  memset(&g, 0, sizeof g);
  g.name = "pair";
  g.nranks = 2;
  g.ranks = ranks;
  tr.ngroups = 1;
  tr.groups = &g;
  int32_t gpu[8] = {0, 1, 2, 3, 4, 5, 6, 7}, a = -1, b = -1;
  ck_assert_int_eq(dt_faults_unreachable(t, &tr, gpu, &a, &b), 0);
  char name[128];
  for (size_t i = 0; i < dt_topology_link_count(t); i++)
    if (strcmp(dt_topology_link_name(t, i, name, sizeof name), "cable:nic5-leaf1") == 0)
      dt_topology_set_down(t, i, 1);
  ck_assert_int_eq(dt_faults_unreachable(t, &tr, gpu, &a, &b), 1);
  ck_assert(a == 2 && b == 5);
  ck_assert_int_eq(dt_faults_partition_error(t, &tr, gpu, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "ranks 2 and 5 (gpu2 and gpu5)"), "%s", err.msg);
  dt_topology_free(t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("degrade");
  TCase *tc = tcase_create("options");
  tcase_add_test(tc, test_parse);
  tcase_add_test(tc, test_apply);
  tcase_add_test(tc, test_unreachable);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
