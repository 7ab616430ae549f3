/* Check scaffolding shared by the unit suites: a table of named cases becomes one TCase each (Check's fork mode
 * stays on: SimGrid can be initialised once per process), and one runner gives the exit code. */
#ifndef DT_TEST_H
#define DT_TEST_H

#include "platforms/dt_platform.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

typedef struct dt_test_case {
  const char *name;
  const TTest *test;
  int loops; /* 0 or 1: run once; n > 1: a loop test with _i = 0 .. n-1 */
} dt_test_case;

/* Suite `name` with one TCase per case; timeout_s > 0 sets each TCase's timeout (seconds). */
static inline Suite *dt_test_suite(const char *name, const dt_test_case *cases, size_t n, double timeout_s)
{
  Suite *s = suite_create(name);
  for (size_t i = 0; i < n; i++) {
    TCase *tc = tcase_create(cases[i].name);
    if (timeout_s > 0)
      tcase_set_timeout(tc, timeout_s);
    if (cases[i].loops > 1)
      tcase_add_loop_test(tc, cases[i].test, 0, cases[i].loops);
    else
      tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}

/* Runs the suite and returns the process exit code (EXIT_SUCCESS when every test passed). */
static inline int dt_test_run(Suite *s)
{
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A platform filled in code for tests: nodes x gpus_per_node H100-like GPUs (989 TFLOP/s at efficiency 0.5) on an
 * NVSwitch of 450 GB/s per GPU per direction and 1 us, no NICs or network, model factors 1. Strings are static. */
static inline dt_platform dt_test_platform(int nodes, int gpus_per_node)
{
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.name = "test";
  p.source = "test.yaml";
  p.gpu_model = "H100";
  p.gpu_peak = 989e12;
  p.gpu_efficiency = 0.5;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  p.intra_kind = DT_INTRA_NVSWITCH;
  p.intra_bandwidth = 450e9;
  p.intra_latency = 1e-6;
  p.oversubscription = 1;
  p.bandwidth_factor = 1.0;
  p.latency_factor = 1.0;
  return p;
}

#endif
