/* Unit tests of stragglers and jitter (platforms/dt_platform_var.h, replay/dt_variability.h): the list syntax, the
 * platform section's lookups (a node entry, a later entry winning), the command line over the platform, and the
 * jitter's distribution against the lognormal's moments and quantiles computed by hand. */
#include "dt_test.h"

#include "platforms/dt_platform_var.h"
#include "replay/dt_variability.h"

#include <math.h>
#include <stdio.h>

START_TEST(test_lists)
{
  dt_var_list l;
  char why[256];
  ck_assert_int_eq(dt_var_list_parse("0-3,8,10-11", 100, &l, why, sizeof why), 0);
  ck_assert(dt_var_list_has(&l, 0) && dt_var_list_has(&l, 3) && dt_var_list_has(&l, 8) && dt_var_list_has(&l, 11));
  ck_assert(!dt_var_list_has(&l, 4) && !dt_var_list_has(&l, 9) && !dt_var_list_has(&l, 12));
  ck_assert_int_eq((int)dt_var_list_max(&l), 11);
  dt_var_list_free(&l);
  const char *bad[] = {"", "3-", "-3", "1,,2", "1,", "a", "2-1", "0-200", " 1", "1.5", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg(dt_var_list_parse(bad[i], 100, &l, why, sizeof why) == -1, "'%s' accepted", bad[i]);
    ck_assert(l.r == NULL && l.n == 0);
  }
}
END_TEST

static const char base[] = "dtsim_platform: 1\nname: t\ngpu: {model: X, peak: 1TFLOPS}\nnodes: 2\ngpus_per_node: 4\n"
                           "intra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: 1us}\n"
                           "nics: {per_node: 1, bandwidth: 100Gb/s, latency: 1us}\n"
                           "network: {topology: single-switch, link_bandwidth: 100Gb/s, link_latency: 1us}\n";

static dt_platform *load(const char *section, dt_error *err)
{
  char text[2048];
  snprintf(text, sizeof text, "%s%s", base, section);
  dt_platform *p = NULL;
  dt_platform_parse(text, strlen(text), "t.yaml", &p, err);
  return p;
}

START_TEST(test_platform_section)
{
  dt_error err;
  dt_platform *p = load("variability:\n  seed: 9\n  jitter: {sigma: 0.1}\n  speed:\n    - {nodes: 1, factor: 0.5}\n"
                        "    - {gpus: 5, factor: 2}\n  late:\n    - {gpus: \"0,7\", delay: 3ms}\n", &err);
  ck_assert_msg(p != NULL, "%s", err.msg);
  const dt_platform_var *v = p->variability;
  ck_assert(v && v->has_seed && v->seed == 9 && v->jitter_sigma == 0.1);
  ck_assert(dt_platform_var_speed(v, 0, 4) == 1.0 && dt_platform_var_speed(v, 4, 4) == 0.5);
  ck_assert(dt_platform_var_speed(v, 5, 4) == 2.0 && dt_platform_var_speed(v, 7, 4) == 0.5); /* later entry wins */
  ck_assert(dt_platform_var_late(v, 0, 4) == 3e-3 && dt_platform_var_late(v, 7, 4) == 3e-3);
  ck_assert(dt_platform_var_late(v, 1, 4) == 0);

  /* the command line wins for the ranks it names; placement maps ranks to GPUs */
  dt_var_opts o;
  memset(&o, 0, sizeof o);
  char why[512];
  ck_assert_int_eq(dt_var_opts_add(&o, "1=0.25", 0, why, sizeof why), 0);
  ck_assert_int_eq(dt_var_opts_add(&o, "2=1ms", 1, why, sizeof why), 0);
  ck_assert_int_eq(dt_var_opts_seed(&o, "4", why, sizeof why), 0);
  int32_t gpu_of_rank[3] = {4, 5, 0}; /* rank 0 on GPU 4 (node 1), rank 1 on GPU 5, rank 2 on GPU 0 */
  dt_var *r = NULL;
  ck_assert_int_eq(dt_var_resolve(p, &o, gpu_of_rank, 3, &r, &err), DT_OK);
  ck_assert(r != NULL);
  ck_assert(r->speed[0] == 0.5 && r->speed[1] == 0.25 && r->speed[2] == 1.0);
  ck_assert(r->late[0] == 0 && r->late[1] == 0 && r->late[2] == 1e-3);
  ck_assert(r->seed == 4 && r->sigma == 0.1 && r->nslow == 2 && r->nlate == 1);
  dt_var_free(r);
  /* a rank the trace does not have */
  ck_assert_int_eq(dt_var_opts_add(&o, "3=0.5", 0, why, sizeof why), 0);
  ck_assert_int_eq(dt_var_resolve(p, &o, gpu_of_rank, 3, &r, &err), DT_ERR);
  ck_assert(strstr(err.msg, "--slow names rank 3, but the trace has ranks 0-2") != NULL);
  dt_var_opts_free(&o);
  dt_platform_free(p);

  /* nothing that varies: no variability at all (the replay then consults nothing) */
  p = load("variability:\n  speed:\n    - {gpus: 0-7, factor: 1}\n", &err);
  ck_assert_msg(p != NULL, "%s", err.msg);
  ck_assert_int_eq(dt_var_resolve(p, NULL, gpu_of_rank, 3, &r, &err), DT_OK);
  ck_assert(r == NULL);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_platform_errors)
{
  static const struct {
    const char *yaml, *want;
  } bad[] = {
      {"variability:\n  speed:\n    - {gpus: 8, factor: 0.5}\n",
       "t.yaml:11:7: 'variability.speed' names GPU 8, but the platform has GPUs 0-7"},
      {"variability:\n  late:\n    - {nodes: 2, delay: 1ms}\n", "names node 2, but the platform has nodes 0-1"},
      {"variability:\n  speed:\n    - {gpus: 1, factor: 1001}\n", "expected a speed factor from 0.001 to 1000"},
      {"variability:\n  speed:\n    - {gpus: 1}\n", "missing required key 'factor'"},
      {"variability:\n  speed: {gpus: 1, factor: 0.5}\n", "expected a sequence of {gpus: LIST or nodes: LIST"},
      {"variability:\n  jitter: {sigma: -0.1}\n", "expected a number from 0 to 1 for 'variability.jitter.sigma'"},
      {"variability:\n  jitter: {distribution: lognormal}\n", "missing required key 'sigma'"},
      {"variability:\n  late:\n    - {gpus: 1, delay: 2e7s}\n", "above the 1e+06 s dtsim accepts"},
      {"variability:\n  speed:\n    - {gpus: 1, factor: 0.5, fator: 1}\n", "unknown key 'fator'"},
      {"variability: 3\n", "expected a mapping for 'variability', found '3'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dt_error err;
    dt_platform *p = load(bad[i].yaml, &err);
    ck_assert_msg(p == NULL, "case %zu accepted", i);
    ck_assert_msg(strstr(err.msg, bad[i].want) != NULL || strstr(dt_error_format(&err, (char[512]){0}, 512),
                  bad[i].want) != NULL, "case %zu: %s", i, err.msg);
  }
}
END_TEST

/* Standard normal quantile of 0.95 (tables). */
#define Z95 1.6448536269514722

START_TEST(test_jitter_distribution)
{
  dt_var v = {0};
  v.sigma = 0.3;
  v.seed = 12345;
  ck_assert(dt_var_jitter(&v, 3, 1, 7) == dt_var_jitter(&v, 3, 1, 7));
  ck_assert(dt_var_jitter(&v, 3, 1, 7) != dt_var_jitter(&v, 3, 1, 8));
  ck_assert(dt_var_jitter(&v, 3, 1, 7) != dt_var_jitter(&v, 4, 1, 7));
  ck_assert(dt_var_jitter(&v, 3, 1, 7) != dt_var_jitter(&v, 3, 0, 7));
  enum { N = 200000 };
  static double x[N];
  double s = 0, ls = 0, lq = 0;
  for (size_t i = 0; i < N; i++) {
    x[i] = dt_var_jitter(&v, (int32_t)(i % 64), i % 3, i / 192);
    s += x[i];
    ls += log(x[i]);
    lq += log(x[i]) * log(x[i]);
  }
  /* lognormal with mean 1: E = 1, sd = sqrt(exp(s^2) - 1); log has mean -s^2/2 and sd s */
  double sd = sqrt(exp(v.sigma * v.sigma) - 1), m = s / N, lm = ls / N, lsd = sqrt(lq / N - lm * lm);
  ck_assert_msg(fabs(m - 1) < 4 * sd / sqrt(N), "mean %g", m);
  ck_assert_msg(fabs(lm + v.sigma * v.sigma / 2) < 4 * v.sigma / sqrt(N), "log mean %g", lm);
  ck_assert_msg(fabs(lsd - v.sigma) < 4 * v.sigma / sqrt(2.0 * N), "log sd %g", lsd);
  /* share below the 5 % and above the 95 % quantiles exp(-s^2/2 -+ z95 s): 5 % each, binomial error */
  double q5 = exp(-v.sigma * v.sigma / 2 - Z95 * v.sigma), q95 = exp(-v.sigma * v.sigma / 2 + Z95 * v.sigma);
  size_t lo = 0, hi = 0;
  for (size_t i = 0; i < N; i++) {
    lo += x[i] < q5;
    hi += x[i] > q95;
  }
  double se = sqrt(0.05 * 0.95 / N);
  ck_assert_msg(fabs((double)lo / N - 0.05) < 4 * se, "below q5: %g", (double)lo / N);
  ck_assert_msg(fabs((double)hi / N - 0.05) < 4 * se, "above q95: %g", (double)hi / N);
  v.sigma = 0;
  ck_assert(dt_var_jitter(&v, 3, 1, 7) == 1.0);
}
END_TEST

START_TEST(test_options)
{
  dt_var_opts o;
  memset(&o, 0, sizeof o);
  char why[512];
  const char *bad_slow[] = {"1", "=0.5", "1=", "1=0", "1=0.0001", "1=2000", "1=nan", "1=inf", "1=0x1", "a=1"};
  for (size_t i = 0; i < sizeof bad_slow / sizeof bad_slow[0]; i++)
    ck_assert_msg(dt_var_opts_add(&o, bad_slow[i], 0, why, sizeof why) == -1, "--slow %s accepted", bad_slow[i]);
  const char *bad_late[] = {"1=3", "1=-1ms", "1=2e7s", "1=fast"};
  for (size_t i = 0; i < sizeof bad_late / sizeof bad_late[0]; i++)
    ck_assert_msg(dt_var_opts_add(&o, bad_late[i], 1, why, sizeof why) == -1, "--late %s accepted", bad_late[i]);
  ck_assert_int_eq(dt_var_opts_sigma(&o, "1.01", why, sizeof why), -1);
  ck_assert_int_eq(dt_var_opts_sigma(&o, "-0", why, sizeof why), 0); /* -0 is 0: no jitter */
  ck_assert_int_eq(dt_var_opts_seed(&o, "9007199254740993", why, sizeof why), -1);
  ck_assert_int_eq(dt_var_opts_seed(&o, "+3", why, sizeof why), -1);
  ck_assert(o.nslow == 0 && o.nlate == 0);
  dt_var_opts_free(&o);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"lists", test_lists, 1},
      {"platform_section", test_platform_section, 1},
      {"platform_errors", test_platform_errors, 1},
      {"jitter_distribution", test_jitter_distribution, 1},
      {"options", test_options, 1},
  };
  return dt_test_run(dt_test_suite("variability", cases, sizeof cases / sizeof cases[0], 0));
}
