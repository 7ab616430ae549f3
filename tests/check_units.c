/* Unit tests for common/dt_units.c: bandwidth, time, compute-rate and byte-count parsing (SI and binary
 * prefixes, bits and bytes, bad inputs) and the readable formatters. Expected values are hand conversions. */
#include "dt_test.h"
#include "common/dt_units.h"
#include "common/dt_strtab.h"
#include "common/dt_util.h"
#include "common/dt_yaml.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL_EQ(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-12 * fabs(b), "%s = %.17g, expected %.17g", #a, (a), (b))

static double bw(const char *text)
{
  double v = -1;
  char why[256] = "";
  ck_assert_msg(dt_parse_bandwidth(text, &v, why, sizeof why) == 0, "'%s': %s", text, why);
  return v;
}

static double tm(const char *text)
{
  double v = -1;
  char why[256] = "";
  ck_assert_msg(dt_parse_time(text, &v, why, sizeof why) == 0, "'%s': %s", text, why);
  return v;
}

static double fl(const char *text)
{
  double v = -1;
  char why[256] = "";
  ck_assert_msg(dt_parse_flop_rate(text, &v, why, sizeof why) == 0, "'%s': %s", text, why);
  return v;
}

typedef int (*parse_fn)(const char *, double *, char *, size_t);

/* Asserts that text is rejected, that the output is untouched, and that the reason contains `hint`. */
static void rejects(parse_fn f, const char *text, const char *hint)
{
  double v = 42.0;
  char why[256] = "";
  ck_assert_msg(f(text, &v, why, sizeof why) == -1, "'%s' was accepted (%g)", text ? text : "(null)", v);
  ck_assert_msg(v == 42.0, "'%s' wrote the output on failure", text ? text : "(null)");
  ck_assert_msg(strstr(why, hint) != NULL, "'%s': reason lacks \"%s\": %s", text ? text : "(null)", hint, why);
}

START_TEST(test_bandwidth_bytes_and_bits)
{
  REL_EQ(bw("450GB/s"), 4.5e11);
  REL_EQ(bw("450GBps"), 4.5e11);
  REL_EQ(bw("1B/s"), 1.0);
  REL_EQ(bw("400Gb/s"), 5e10); /* 400e9 bits / 8 */
  REL_EQ(bw("400Gbps"), 5e10);
  REL_EQ(bw("400Gbit/s"), 5e10);
  REL_EQ(bw("200Gb/s"), 2.5e10);
  REL_EQ(bw("100Mb/s"), 1.25e7);
  REL_EQ(bw("10kB/s"), 1e4);
  REL_EQ(bw("10KB/s"), 1e4);
  REL_EQ(bw("1.5TB/s"), 1.5e12);
  REL_EQ(bw("2PB/s"), 2e15);
  REL_EQ(bw("0.5 GB/s"), 5e8);    /* space between number and unit */
  REL_EQ(bw("  25GB/s  "), 2.5e10); /* surrounding spaces */
  REL_EQ(bw("0GB/s"), 0.0);
  REL_EQ(bw("1e2GB/s"), 1e11);
}
END_TEST

START_TEST(test_bandwidth_binary_prefixes)
{
  REL_EQ(bw("25GiB/s"), 25.0 * 1073741824.0);
  REL_EQ(bw("1KiB/s"), 1024.0);
  REL_EQ(bw("3MiB/s"), 3.0 * 1048576.0);
  REL_EQ(bw("2TiB/s"), 2.0 * 1099511627776.0);
  REL_EQ(bw("8Gib/s"), 1073741824.0); /* 8 * 2^30 bits = 2^30 bytes */
}
END_TEST

START_TEST(test_bandwidth_bad)
{
  rejects(dt_parse_bandwidth, "400", "bare number '400'");
  rejects(dt_parse_bandwidth, "400GB", "unit 'GB'");
  rejects(dt_parse_bandwidth, "400Gs", "unit 'Gs'");
  rejects(dt_parse_bandwidth, "fast", "'fast'");
  rejects(dt_parse_bandwidth, "", "expected a bandwidth");
  rejects(dt_parse_bandwidth, NULL, "expected a bandwidth");
  rejects(dt_parse_bandwidth, "-5GB/s", "'-5GB/s'");
  rejects(dt_parse_bandwidth, "+5GB/s", "'+5GB/s'");
  rejects(dt_parse_bandwidth, "infGB/s", "'infGB/s'");
  rejects(dt_parse_bandwidth, "nanGB/s", "'nanGB/s'");
  rejects(dt_parse_bandwidth, "0x10GB/s", "'0x10GB/s'");
  rejects(dt_parse_bandwidth, "1e999GB/s", "'1e999GB/s'");
  rejects(dt_parse_bandwidth, "5 GB/s extra", "unit 'GB/s extra'");
  rejects(dt_parse_bandwidth, "1.2us", "unit 'us'");
}
END_TEST

START_TEST(test_time)
{
  REL_EQ(tm("1.2us"), 1.2e-6);
  REL_EQ(tm("500ns"), 5e-7);
  REL_EQ(tm("0.003ms"), 3e-6);
  REL_EQ(tm("2s"), 2.0);
  REL_EQ(tm("7ps"), 7e-12);
  REL_EQ(tm("1.25 ms"), 1.25e-3);
  REL_EQ(tm("3\xC2\xB5s"), 3e-6); /* the micro sign, U+00B5 in UTF-8 */
  REL_EQ(tm("0s"), 0.0);
  rejects(dt_parse_time, "300", "bare number '300'");
  rejects(dt_parse_time, "1 parsec", "unit 'parsec'");
  rejects(dt_parse_time, "1min", "unit 'min'");
  rejects(dt_parse_time, "1Ms", "unit 'Ms'");
  rejects(dt_parse_time, "-3ns", "'-3ns'");
  rejects(dt_parse_time, "us", "'us'");
}
END_TEST

START_TEST(test_flop_rate)
{
  REL_EQ(fl("989TFLOPS"), 9.89e14);
  REL_EQ(fl("312TFLOP/s"), 3.12e14);
  REL_EQ(fl("1.5PFLOPS"), 1.5e15);
  REL_EQ(fl("2EFLOPS"), 2e18);
  REL_EQ(fl("19.5 TFLOPS"), 1.95e13);
  REL_EQ(fl("10GFLOPS"), 1e10);
  REL_EQ(fl("1FLOPS"), 1.0);
  rejects(dt_parse_flop_rate, "989", "bare number '989'");
  rejects(dt_parse_flop_rate, "989TB/s", "unit 'TB/s'");
  rejects(dt_parse_flop_rate, "1TiFLOPS", "unit 'TiFLOPS'"); /* binary prefixes are for bytes only */
  rejects(dt_parse_flop_rate, "lots", "'lots'");
}
END_TEST

static double pw(const char *text)
{
  double v = -1;
  char why[256] = "";
  ck_assert_msg(dt_parse_power(text, &v, why, sizeof why) == 0, "'%s': %s", text, why);
  return v;
}

/* Power for the platform's energy figures: W with m, k, M prefixes, a bare number and other units refused. */
START_TEST(test_power)
{
  REL_EQ(pw("700W"), 700.0);
  REL_EQ(pw("0.7kW"), 700.0);
  REL_EQ(pw("1.7 kW"), 1700.0);
  REL_EQ(pw("25W"), 25.0);
  REL_EQ(pw("500mW"), 0.5);
  REL_EQ(pw("1MW"), 1e6); /* the maximum */
  REL_EQ(pw("0W"), 0.0);
  rejects(dt_parse_power, "700", "bare number '700'");
  rejects(dt_parse_power, "700J", "unit 'J'");
  rejects(dt_parse_power, "1GW", "unit 'GW'");
  rejects(dt_parse_power, "1.1MW", "above the 1e+06 W");
  rejects(dt_parse_power, "-5W", "'-5W'");
  rejects(dt_parse_power, "W", "'W'");
  char buf[64];
  ck_assert_str_eq(dt_format_energy(0, buf, sizeof buf), "0 J");
  ck_assert_str_eq(dt_format_energy(830, buf, sizeof buf), "830 J");
  ck_assert_str_eq(dt_format_energy(12500, buf, sizeof buf), "12.5 kJ");
  ck_assert_str_eq(dt_format_energy(999.99, buf, sizeof buf), "1 kJ");
  ck_assert_str_eq(dt_format_energy(3.2e6, buf, sizeof buf), "3.2 MJ");
  ck_assert_str_eq(dt_format_energy(4.5e12, buf, sizeof buf), "4500 GJ");
}
END_TEST

START_TEST(test_bytes)
{
  uint64_t v = 0;
  char why[256];
  ck_assert_int_eq(dt_parse_bytes("8388608", &v, why, sizeof why), 0);
  ck_assert_uint_eq(v, 8388608u);
  ck_assert_int_eq(dt_parse_bytes("0", &v, why, sizeof why), 0);
  ck_assert_uint_eq(v, 0u);
  ck_assert_int_eq(dt_parse_bytes("9007199254740992", &v, why, sizeof why), 0); /* 2^53, the limit */
  ck_assert_uint_eq(v, DT_BYTES_MAX);
  v = 7;
  ck_assert_int_eq(dt_parse_bytes("9007199254740993", &v, why, sizeof why), -1); /* 2^53 + 1 */
  ck_assert_ptr_nonnull(strstr(why, "above the 9007199254740992 (2^53) bytes"));
  ck_assert_int_eq(dt_parse_bytes("18446744073709551615", &v, why, sizeof why), -1); /* 2^64 - 1: was kept whole */
  ck_assert_int_eq(dt_parse_bytes("18446744073709551616", &v, why, sizeof why), -1); /* 2^64 */
  ck_assert_ptr_nonnull(strstr(why, "2^53"));
  ck_assert_int_eq(dt_parse_bytes("-1", &v, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "'-1'"));
  ck_assert_int_eq(dt_parse_bytes("8MiB", &v, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "'8MiB'"));
  ck_assert_int_eq(dt_parse_bytes("1.5", &v, why, sizeof why), -1);
  ck_assert_int_eq(dt_parse_bytes("", &v, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "found nothing"));
  ck_assert_int_eq(dt_parse_bytes(NULL, &v, why, sizeof why), -1);
  ck_assert_uint_eq(v, 7u); /* untouched by failures */
}
END_TEST

/* Converted quantities stay finite and inside the documented maxima, whose value the message states. */
START_TEST(test_ranges)
{
  double v = 7;
  char why[256];
  ck_assert_int_eq(dt_parse_bandwidth("1e308GB/s", &v, why, sizeof why), -1); /* was inf */
  ck_assert_ptr_nonnull(strstr(why, "above the 1e+18 B/s"));
  ck_assert_int_eq(dt_parse_bandwidth("1000PB/s", &v, why, sizeof why), 0);   /* 1e18: the maximum */
  ck_assert_int_eq(dt_parse_time("1e308s", &v, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "above the 1e+06 s"));
  ck_assert_int_eq(dt_parse_time("1e16s", &v, why, sizeof why), -1);
  ck_assert_int_eq(dt_parse_time("1000000s", &v, why, sizeof why), 0);
  ck_assert_int_eq(dt_parse_flop_rate("1e308TFLOPS", &v, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "above the 1e+24 FLOP/s"));
  /* a number past a double's range (strtod's ERANGE) is out of range with the maximum, not "expected a unit" */
  static const struct {
    parse_fn f;
    const char *text, *want;
  } over[] = {
      {dt_parse_bandwidth, "1e400GB/s", "bandwidth '1e400GB/s' is out of range: above the 1e+18 B/s dtsim accepts"},
      {dt_parse_bandwidth, "1e400 Gb/s", "is out of range: above the 1e+18 B/s"},
      {dt_parse_time, "1e400s", "time '1e400s' is out of range: above the 1e+06 s dtsim accepts"},
      {dt_parse_time, "1e400us", "is out of range: above the 1e+06 s"},
      {dt_parse_flop_rate, "1e400TFLOPS", "compute rate '1e400TFLOPS' is out of range: above the 1e+24 FLOP/s"},
      {dt_parse_power, "1e400W", "power '1e400W' is out of range: above the 1e+06 W dtsim accepts for one device"},
  };
  for (size_t i = 0; i < sizeof over / sizeof over[0]; i++)
    rejects(over[i].f, over[i].text, over[i].want);
  /* a nonzero number that reads as 0 or a subnormal once its unit applies is out of range in every unit (was: 0,
   * so 'latency: 1e-400s' was accepted as no latency): -2, the message names the smallest nonzero value */
  static const struct {
    parse_fn f;
    const char *text, *want;
  } under[] = {
      {dt_parse_time, "1e-400s", "time '1e-400s' is out of range: a nonzero time is at least 1e-300 s"},
      {dt_parse_time, "1e-310s", "a nonzero time is at least 1e-300 s"},  /* a subnormal literal */
      {dt_parse_time, "1e-295ps", "a nonzero time is at least 1e-300 s"}, /* subnormal once scaled */
      {dt_parse_time, "0.0000000000000000000000000000000000000000000000000000000000000000000001e-230ps",
       "a nonzero time is at least 1e-300 s"}, /* past the digits scaled in decimal */
      {dt_parse_bandwidth, "1e-400GB/s", "bandwidth '1e-400GB/s' is out of range: a nonzero bandwidth is at least "
                                         "1e-300 B/s"},
      {dt_parse_flop_rate, "1e-400TFLOPS", "a nonzero compute rate is at least 1e-300 FLOP/s"},
      {dt_parse_power, "1e-400W", "a nonzero power is at least 1e-300 W"},
  };
  for (size_t i = 0; i < sizeof under / sizeof under[0]; i++) {
    v = 42;
    ck_assert_msg(under[i].f(under[i].text, &v, why, sizeof why) == -2, "'%s' not refused as below the minimum",
                  under[i].text);
    ck_assert_msg(v == 42 && strstr(why, under[i].want), "'%s': %s", under[i].text, why);
  }
  /* zero in any spelling is zero, and the smallest nonzero value is accepted */
  const char *zeros[] = {"0s", "0.0ms", "0e-400s", "0.000e5us"};
  for (size_t i = 0; i < sizeof zeros / sizeof zeros[0]; i++) {
    ck_assert_msg(dt_parse_time(zeros[i], &v, why, sizeof why) == 0 && v == 0, "'%s': %s", zeros[i], why);
  }
  ck_assert_int_eq(dt_parse_time("1e-300s", &v, why, sizeof why), 0);
  ck_assert(v == 1e-300);
  ck_assert_int_eq(dt_parse_real("1e-400", &v), -2);
  ck_assert_int_eq(dt_parse_real("-1e-310", &v), -2);
  ck_assert(v == 1e-300); /* untouched */
  ck_assert_int_eq(dt_parse_real("0e-400", &v), 0);
  ck_assert(v == 0);
  /* dt_parse_real: plain decimals; overflow is infinite for the caller's range check */
  ck_assert_int_eq(dt_parse_real("0.45", &v), 0);
  ck_assert(v == 0.45);
  ck_assert_int_eq(dt_parse_real("-2e-3", &v), 0);
  ck_assert(v == -2e-3);
  ck_assert_int_eq(dt_parse_real("1e400", &v), 0);
  ck_assert(isinf(v) && v > 0);
  v = 7;
  const char *bad[] = {"", "+1", " 1", "1 ", "inf", "nan", "0x10", "1e", "1.2.3", "1,5", "--1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(dt_parse_real(bad[i], &v) == -1, "'%s' accepted", bad[i]);
  ck_assert_int_eq(dt_parse_real(NULL, &v), -1);
  ck_assert(v == 7);
}
END_TEST

/* dt_parse_whole: one spelling of a whole number for every input (digits alone), and its range. */
START_TEST(test_whole)
{
  long long v = -1;
  ck_assert_int_eq(dt_parse_whole("8", 1, 10, &v), 0);
  ck_assert_int_eq(v, 8);
  ck_assert_int_eq(dt_parse_whole("010", 0, 100, &v), 0); /* decimal, not octal */
  ck_assert_int_eq(v, 10);
  ck_assert_int_eq(dt_parse_whole("9223372036854775807", 0, 9223372036854775807LL, &v), 0);
  ck_assert_int_eq(v, 9223372036854775807LL);
  v = 7;
  const char *bad[] = {"", "+8", "-0", "-1", " 8", "8 ", "0x8", "8.0", "1e3", "1_000", "\"8\"", "8k"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(dt_parse_whole(bad[i], 0, 100, &v) == -1, "'%s' accepted", bad[i]);
  ck_assert_int_eq(dt_parse_whole(NULL, 0, 100, &v), -1);
  ck_assert_int_eq(dt_parse_whole("0", 1, 100, &v), -2);
  ck_assert_int_eq(dt_parse_whole("101", 1, 100, &v), -2);
  ck_assert_int_eq(dt_parse_whole("9223372036854775808", 0, 9223372036854775807LL, &v), -2); /* 2^63 */
  ck_assert_int_eq(dt_parse_whole("99999999999999999999999", 0, 100, &v), -2);
  ck_assert_int_eq(v, 7); /* untouched on failure */
}
END_TEST

/* dt_parse_whole_u64: the same spelling over all 64 bits (2^64 - 1 is NCCL's largest count). */
START_TEST(test_whole_u64)
{
  uint64_t u = 7;
  ck_assert_int_eq(dt_parse_whole_u64("18446744073709551615", UINT64_MAX, &u), 0);
  ck_assert(u == UINT64_MAX);
  ck_assert_int_eq(dt_parse_whole_u64("18446744073709551616", UINT64_MAX, &u), -2); /* 2^64 */
  ck_assert_int_eq(dt_parse_whole_u64("18446744073709551616x", UINT64_MAX, &u), -1);
  ck_assert_int_eq(dt_parse_whole_u64("11", 10, &u), -2);
  ck_assert_int_eq(dt_parse_whole_u64("-1", UINT64_MAX, &u), -1);
  ck_assert_int_eq(dt_parse_whole_u64("", UINT64_MAX, &u), -1);
  ck_assert(u == UINT64_MAX); /* untouched on failure */
}
END_TEST

/* dt_parse_rank_list: "0-7,9" as --timeline-ranks and a job's --nodes write it; every value below the limit. */
START_TEST(test_rank_list)
{
  int32_t *r = NULL;
  size_t n = 0;
  ck_assert_int_eq(dt_parse_rank_list("0-2,9,4", 10, &r, &n), 0);
  ck_assert_uint_eq(n, 5);
  const int32_t want[] = {0, 1, 2, 9, 4};
  for (size_t i = 0; i < 5; i++)
    ck_assert_int_eq(r[i], want[i]);
  free(r);
  ck_assert_int_eq(dt_parse_rank_list("7", 8, &r, &n), 0);
  ck_assert(n == 1 && r[0] == 7);
  free(r);
  const char *bad[] = {"", ",", "0,", ",0", "0,,1", "8", "0-8", "3-2", "-1", "0-", "+1", " 1", "1 ", "1-2-3", "a",
                       "0x1", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    r = (int32_t *)&n;
    ck_assert_msg(dt_parse_rank_list(bad[i], 8, &r, &n) == -1, "'%s' accepted", bad[i]);
    ck_assert(r == NULL && n == 0);
  }
}
END_TEST

/* dt_sort_doubles, dt_median_sorted and dt_quantile_sorted: the order statistics the reports share, by hand. */
START_TEST(test_order_stats)
{
  double v[] = {3, -1, 2.5, 0, 2.5};
  dt_sort_doubles(v, 5);
  const double want[] = {-1, 0, 2.5, 2.5, 3};
  for (size_t i = 0; i < 5; i++)
    ck_assert(v[i] == want[i]);
  ck_assert(dt_median_sorted(v, 5) == 2.5);
  double w[] = {4, 1, 3, 2};
  dt_sort_doubles(w, 4);
  ck_assert(w[0] == 1 && w[1] == 2 && w[2] == 3 && w[3] == 4);
  ck_assert(dt_median_sorted(w, 4) == 2.5);         /* (2 + 3) / 2 */
  ck_assert(dt_quantile_sorted(w, 4, 0.25) == 1.75); /* position 0.25 x 3 = 0.75: 1 + 0.75 x (2 - 1) */
  ck_assert(dt_median_sorted(w, 1) == 1);
  ck_assert(isnan(dt_median_sorted(w, 0)));
  dt_sort_doubles(NULL, 0);
}
END_TEST

/* dt_strtab: indices in order of first appearance, prefixes by length, and lookups that stay right as it grows. */
START_TEST(test_strtab)
{
  dt_strtab tab = {0};
  ck_assert_int_eq(dt_strtab_find(&tab, "a", 1), -1);
  ck_assert_int_eq(dt_strtab_intern(&tab, "a", 1), 0);
  ck_assert_int_eq(dt_strtab_intern(&tab, "b", 1), 1);
  ck_assert_int_eq(dt_strtab_intern(&tab, "a", 1), 0);
  ck_assert_int_eq(dt_strtab_intern(&tab, "abc", 2), 2); /* "ab" */
  ck_assert_str_eq(tab.s[2], "ab");
  ck_assert_int_eq(dt_strtab_find(&tab, "ab", 2), 2);
  ck_assert_int_eq(dt_strtab_find(&tab, "abc", 3), -1);
  ck_assert_int_eq(dt_strtab_intern(&tab, "", 0), 3);
  char key[32];
  for (int i = 0; i < 5000; i++) { /* past several doublings of the index */
    snprintf(key, sizeof key, "k%d", i);
    ck_assert_int_eq(dt_strtab_intern(&tab, key, strlen(key)), 4 + i);
  }
  for (int i = 0; i < 5000; i++) {
    snprintf(key, sizeof key, "k%d", i);
    ck_assert_int_eq(dt_strtab_find(&tab, key, strlen(key)), 4 + i);
  }
  ck_assert_int_eq(dt_strtab_find(&tab, "b", 1), 1);
  ck_assert_int_eq(dt_strtab_find(&tab, "k5000", 5), -1);
  ck_assert_uint_eq(tab.n, 5004);
  dt_strtab_free(&tab);
  ck_assert_uint_eq(tab.n, 0);
  ck_assert_int_eq(dt_strtab_find(&tab, "a", 1), -1);
  dt_strtab_free(&tab);
}
END_TEST

START_TEST(test_format)
{
  char buf[64];
  ck_assert_str_eq(dt_format_time(0, buf, sizeof buf), "0 s");
  ck_assert_str_eq(dt_format_time(1.25e-3, buf, sizeof buf), "1.25 ms");
  ck_assert_str_eq(dt_format_time(830e-6, buf, sizeof buf), "830 us");
  ck_assert_str_eq(dt_format_time(2.5, buf, sizeof buf), "2.5 s");
  ck_assert_str_eq(dt_format_time(300e-9, buf, sizeof buf), "300 ns");
  /* values that round up to 1000 move to the next unit, never "1e+03 ns" */
  ck_assert_str_eq(dt_format_time(999.99e-9, buf, sizeof buf), "1 us");
  ck_assert_str_eq(dt_format_time(100.4e-9, buf, sizeof buf), "100.4 ns");
  ck_assert_str_eq(dt_format_time(123456.0, buf, sizeof buf), "123456.0 s");
  ck_assert_str_eq(dt_format_time(9.9e11, buf, sizeof buf), "9.9e+11 s"); /* a report column's width at most */
  ck_assert_str_eq(dt_format_bytes(512, buf, sizeof buf), "512 B");
  ck_assert_str_eq(dt_format_bytes(1024, buf, sizeof buf), "1 KiB");
  ck_assert_str_eq(dt_format_bytes(8388608, buf, sizeof buf), "8 MiB");
  ck_assert_str_eq(dt_format_bytes(1.5 * 1073741824.0, buf, sizeof buf), "1.5 GiB");
}
END_TEST

/* Expects dt_yaml_check to refuse text at line:col with a message containing want. */
static void yaml_refuses(const char *text, long line, long col, const char *want)
{
  dt_error e;
  dt_error_clear(&e);
  ck_assert_msg(dt_yaml_check(text, strlen(text), "y.yaml", &e) == DT_ERR, "accepted: %s", text);
  ck_assert_msg(e.line == line && e.col == col, "%s: at %ld:%ld, expected %ld:%ld: %s", text, e.line, e.col, line,
                col, e.msg);
  ck_assert_msg(strstr(e.msg, want) != NULL, "%s: message lacks \"%s\": %s", text, want, e.msg);
}

/* The guard before every YAML reader: tags, anchors, aliases and merge keys are refused where they are written,
 * with the key path and what each node is (a value, a mapping, a sequence, a key). */
START_TEST(test_yaml_guard)
{
  dt_error e;
  dt_error_clear(&e);
  static const char ok[] = "a: 1\nb: {c: [1, 2], d: x}\ne: '<<'\nf: \"*g\"\ng: a&b\n";
  ck_assert_msg(dt_yaml_check(ok, strlen(ok), "y.yaml", &e) == DT_OK, "%s", e.msg);
  yaml_refuses("a: &g 8\nb: *g\n", 1, 4, "expected a plain value for 'a', found a value with the anchor '&g'");
  yaml_refuses("a: 8\nb: *g\n", 2, 4, "expected a plain value for 'b', found the alias '*g'");
  yaml_refuses("a: {b: [1, *x]}\n", 1, 12, "expected a plain value for 'a.b', found the alias '*x'");
  yaml_refuses("a: &m {b: 1}\n", 1, 4, "expected a mapping for 'a' without an anchor, found a mapping with the anchor '&m'");
  yaml_refuses("a:\n  b: &s [1]\n", 2, 6, "expected a sequence for 'a.b' without an anchor, found a sequence with the "
                                         "anchor '&s'");
  yaml_refuses("a:\n  <<: {b: 1}\n  c: 2\n", 2, 3, "expected a plain key in 'a', found the merge key '<<' (dtsim's YAML "
                                                 "files use no anchors, aliases or merge keys");
  yaml_refuses("<<: {b: 1}\n", 1, 1, "expected a plain key at the top level, found the merge key '<<'");
  yaml_refuses("&k a: 1\n", 1, 1, "expected a plain key at the top level, found a key with the anchor '&k'");
  yaml_refuses("a: {*k : 1}\n", 1, 5, "expected a plain key in 'a', found the alias '*k'");
  yaml_refuses("a: !!map {b: 1}\n", 1, 4, "expected a mapping for 'a' without a tag, found a mapping with the tag '!!map'");
  yaml_refuses("a: !!seq [1]\n", 1, 4, "expected a sequence for 'a' without a tag, found a sequence with the tag '!!seq'");
  yaml_refuses("a: !!int 4\n", 1, 4, "expected a plain value for 'a', found a value with the tag '!!int'");
  yaml_refuses("a: [!foo 4]\n", 1, 5, "found a value with the tag '!foo'");
  yaml_refuses("!!str a: 4\n", 1, 1, "found a key with the tag '!!str'");
  /* one document per file (the workload and sweep readers ignored a second one) */
  yaml_refuses("a: 1\n---\nb: 2\n", 2, 1, "expected one YAML document, found a second one");
  yaml_refuses("a: 1\n...\n---\n", 3, 1, "found a second one");
  static const char one[] = "---\na: 1\n...\n";
  ck_assert_msg(dt_yaml_check(one, strlen(one), "y.yaml", &e) == DT_OK, "%s", e.msg);
  /* a billion laughs stops at its first anchor, before anything is expanded */
  yaml_refuses("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", 1, 4, "anchor '&a'");
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"bandwidth_bytes_and_bits", test_bandwidth_bytes_and_bits, 1},
      {"bandwidth_binary_prefixes", test_bandwidth_binary_prefixes, 1},
      {"bandwidth_bad", test_bandwidth_bad, 1},
      {"time", test_time, 1},
      {"flop_rate", test_flop_rate, 1},
      {"power", test_power, 1},
      {"bytes", test_bytes, 1},
      {"ranges", test_ranges, 1},
      {"format", test_format, 1},
      {"whole", test_whole, 1},
      {"whole_u64", test_whole_u64, 1},
      {"rank_list", test_rank_list, 1},
      {"order_stats", test_order_stats, 1},
      {"strtab", test_strtab, 1},
      {"yaml_guard", test_yaml_guard, 1},
  };
  return dt_test_run(dt_test_suite("units", cases, sizeof cases / sizeof cases[0], 0));
}
