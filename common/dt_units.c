/* Unit-string parsers and formatters shared by the platform loader, the trace reader and the reports. */
#include "dt_units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits "  12.5 GB/s " into a number and a trimmed unit suffix. Returns 0 or -1 when no number leads. A number
 * too large for a double ("1e400GB/s") is +infinity, which every parser's maximum then refuses with the range. */
static int split_number(const char *text, double *value, char *unit, size_t unit_size)
{
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  if (*p == '\0' || *p == '-' || *p == '+')
    return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(p, &end);
  if (end == p || isnan(v) || v < 0) /* ERANGE: +inf on overflow, the nearest double on underflow */
    return -1;
  /* strtod accepts "inf", "nan" and hex: only plain decimal numbers are quantities here */
  for (const char *q = p; q < end; q++)
    if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '-' || *q == '+'))
      return -1;
  while (isspace((unsigned char)*end))
    end++;
  size_t n = strlen(end);
  while (n > 0 && isspace((unsigned char)end[n - 1]))
    n--;
  if (n >= unit_size)
    n = unit_size - 1;
  memcpy(unit, end, n);
  unit[n] = '\0';
  *value = v;
  return 0;
}

int dt_number_is_nonzero(const char *text)
{
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  for (; isdigit((unsigned char)*p) || *p == '.' || *p == '-'; p++)
    if (*p >= '1' && *p <= '9')
      return 1;
  return 0;
}

int dt_parse_real(const char *text, double *out)
{
  if (!text || !*text || *text == '+')
    return -1;
  for (const char *q = text; *q; q++)
    if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '-' || *q == '+'))
      return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || isnan(v))
    return -1;
  if (fabs(v) < DT_NONZERO_MIN && dt_number_is_nonzero(text))
    return -2; /* would read as 0 or a subnormal */
  *out = v; /* overflow: +-HUGE_VAL */
  return 0;
}

/* The error of a nonzero quantity that converts to less than DT_NONZERO_MIN in its SI unit (what: "time", si: "s"):
 * it would read as 0 or as a subnormal double. Returns -2, the parsers' code for it. */
static int below_nonzero_min(const char *what, const char *text, const char *si, char *why, size_t why_size)
{
  snprintf(why, why_size, "%s '%s' is out of range: a nonzero %s is at least %g %s (the smallest dtsim reads; "
           "write 0 for none)", what, text, what, DT_NONZERO_MIN, si);
  return -2;
}

/* A number followed by a unit, as every quantity is (DESIGN.md §3): splits text, or says with `expect` (what
 * was expected) why it is not one -- no number, or a bare number without its unit. Returns 0 or -1. */
static int read_quantity(const char *text, const char *expect, double *value, char *unit, size_t unit_size,
                         char *why, size_t why_size)
{
  if (!text || split_number(text, value, unit, unit_size) != 0) {
    snprintf(why, why_size, "%s, found '%s'", expect, text ? text : "");
    return -1;
  }
  if (unit[0] == '\0') {
    snprintf(why, why_size, "%s, found the bare number '%s'", expect, text);
    return -1;
  }
  return 0;
}

/* Reads an optional prefix at the start of unit; returns its multiplier and advances *rest. */
static double take_prefix(const char *unit, const char **rest, int allow_binary)
{
  static const struct {
    const char *p;
    double mult;
  } binary[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                {"Pi", 1125899906842624.0}};
  static const struct {
    char p;
    double mult;
  } si[] = {{'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15}, {'E', 1e18}};
  if (allow_binary)
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
      if (strncmp(unit, binary[i].p, 2) == 0) {
        *rest = unit + 2;
        return binary[i].mult;
      }
  for (size_t i = 0; i < sizeof si / sizeof si[0]; i++)
    if (unit[0] == si[i].p && unit[1] != '\0') {
      *rest = unit + 1;
      return si[i].mult;
    }
  *rest = unit;
  return 1.0;
}

int dt_parse_bandwidth(const char *text, double *out, char *why, size_t why_size)
{
  double v;
  char unit[32];
  const char *expect = "expected a bandwidth with a unit such as '450GB/s', '400Gb/s', '400Gbps' or '25GiB/s'";
  if (read_quantity(text, expect, &v, unit, sizeof unit, why, why_size) != 0)
    return -1;
  const char *rest;
  double mult = take_prefix(unit, &rest, 1);
  double per = 0;
  if (strcmp(rest, "B/s") == 0 || strcmp(rest, "Bps") == 0)
    per = 1.0;
  else if (strcmp(rest, "b/s") == 0 || strcmp(rest, "bps") == 0 || strcmp(rest, "bit/s") == 0)
    per = 1.0 / 8.0;
  if (per == 0) {
    snprintf(why, why_size, "%s, found unit '%s'", expect, unit);
    return -1;
  }
  double x = v * mult * per;
  if (x < DT_NONZERO_MIN && dt_number_is_nonzero(text))
    return below_nonzero_min("bandwidth", text, "B/s", why, why_size);
  if (!(x <= DT_BANDWIDTH_MAX)) {
    snprintf(why, why_size, "bandwidth '%s' is out of range: above the %.0e B/s dtsim accepts", text,
             DT_BANDWIDTH_MAX);
    return -1;
  }
  *out = x;
  return 0;
}

/* A quantity read from a table of exact unit spellings, each a power of ten of the SI unit: its name for
 * messages ("time"), what a bad value is told is expected, the SI unit and the largest value dtsim accepts (with
 * the words that scope it, "" or " for one device"). */
typedef struct unit_row {
  const char *u;
  int exp10;
} unit_row;

typedef struct unit_table {
  const char *what, *expect, *si, *scope;
  double max;
  const unit_row *rows;
  size_t nrows;
} unit_table;

static const unit_row time_units[] = {{"s", 0}, {"ms", -3}, {"us", -6}, {"\xC2\xB5s", -6}, {"ns", -9}, {"ps", -12}};
static const unit_table time_table = {"time", "expected a time with a unit such as '500ns', '1.2us', '0.003ms' or '2s'",
                                      "s", "", DT_TIME_MAX, time_units, sizeof time_units / sizeof time_units[0]};
static const unit_row power_units[] = {{"W", 0}, {"mW", -3}, {"kW", 3}, {"KW", 3}, {"MW", 6}};
static const unit_table power_table = {"power", "expected a power with a unit such as '700W' or '0.7kW'", "W",
                                       " for one device", DT_POWER_MAX, power_units,
                                       sizeof power_units / sizeof power_units[0]};

/* Reads text as a number with one of tab's units into *out (in the SI unit). Returns 0, or -1 with why set. */
static int parse_in_units(const unit_table *tab, const char *text, double *out, char *why, size_t why_size)
{
  double v;
  char unit[32];
  if (read_quantity(text, tab->expect, &v, unit, sizeof unit, why, why_size) != 0)
    return -1;
  for (size_t i = 0; i < tab->nrows; i++)
    if (strcmp(unit, tab->rows[i].u) == 0) {
      /* Scale in decimal, not by multiplying with an inexact 1e-3: "2.778747ms" reads as strtod("2.778747e-3"),
       * the double nearest to the written value, so a writer's shortest exact form reads back exactly. */
      const char *p = text;
      while (isspace((unsigned char)*p))
        p++;
      size_t n = strspn(p, "0123456789.eE+-");
      char num[96];
      double x;
      if (n > 0 && n < 64 && !memchr(p, 'e', n) && !memchr(p, 'E', n)) {
        snprintf(num, sizeof num, "%.*se%d", (int)n, p, tab->rows[i].exp10);
        x = strtod(num, NULL);
      } else {
        x = v * pow(10.0, tab->rows[i].exp10);
      }
      if (x < DT_NONZERO_MIN && dt_number_is_nonzero(text))
        return below_nonzero_min(tab->what, text, tab->si, why, why_size);
      if (!(x <= tab->max)) {
        snprintf(why, why_size, "%s '%s' is out of range: above the %.0e %s dtsim accepts%s", tab->what, text,
                 tab->max, tab->si, tab->scope);
        return -1;
      }
      *out = x;
      return 0;
    }
  snprintf(why, why_size, "%s, found unit '%s'", tab->expect, unit);
  return -1;
}

int dt_parse_time(const char *text, double *out, char *why, size_t why_size)
{
  return parse_in_units(&time_table, text, out, why, why_size);
}

int dt_parse_flop_rate(const char *text, double *out, char *why, size_t why_size)
{
  double v;
  char unit[32];
  const char *expect = "expected a compute rate with a unit such as '989TFLOPS' or '312TFLOP/s'";
  if (read_quantity(text, expect, &v, unit, sizeof unit, why, why_size) != 0)
    return -1;
  const char *rest;
  double mult = take_prefix(unit, &rest, 0);
  if (strcmp(rest, "FLOPS") != 0 && strcmp(rest, "FLOP/s") != 0 && strcmp(rest, "flops") != 0) {
    snprintf(why, why_size, "%s, found unit '%s'", expect, unit);
    return -1;
  }
  double x = v * mult;
  if (x < DT_NONZERO_MIN && dt_number_is_nonzero(text))
    return below_nonzero_min("compute rate", text, "FLOP/s", why, why_size);
  if (!(x <= DT_FLOP_RATE_MAX)) {
    snprintf(why, why_size, "compute rate '%s' is out of range: above the %.0e FLOP/s dtsim accepts", text,
             DT_FLOP_RATE_MAX);
    return -1;
  }
  *out = x;
  return 0;
}

int dt_parse_power(const char *text, double *out, char *why, size_t why_size)
{
  return parse_in_units(&power_table, text, out, why, why_size);
}

int dt_parse_bytes(const char *text, uint64_t *out, char *why, size_t why_size)
{
  if (!text || !*text) {
    snprintf(why, why_size, "expected a byte count, a whole number from 0 to %llu (2^53), found nothing",
             (unsigned long long)DT_BYTES_MAX);
    return -1;
  }
  for (const char *p = text; *p; p++)
    if (!isdigit((unsigned char)*p)) {
      snprintf(why, why_size, "expected a byte count, a whole number from 0 to %llu (2^53), found '%.64s'",
               (unsigned long long)DT_BYTES_MAX, text);
      return -1;
    }
  errno = 0;
  unsigned long long v = strtoull(text, NULL, 10);
  if (errno == ERANGE || v > DT_BYTES_MAX) {
    snprintf(why, why_size, "byte count '%s' is above the %llu (2^53) bytes one op may move", text,
             (unsigned long long)DT_BYTES_MAX);
    return -1;
  }
  *out = (uint64_t)v;
  return 0;
}

const char *dt_format_time(double s, char *buf, size_t size)
{
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1e9, "ns"}, {1e6, "us"}, {1e3, "ms"}, {1.0, "s"}};
  if (s == 0 || !isfinite(s)) {
    snprintf(buf, size, "0 s");
    return buf;
  }
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    double v = s * units[i].scale;
    /* 999.96 would round to "1000" with 4 digits: show it in the next unit instead */
    if (fabs(v) < 999.95) {
      snprintf(buf, size, "%.4g %s", v, units[i].unit);
      return buf;
    }
  }
  if (fabs(s) < 1e6)
    snprintf(buf, size, "%.1f s", s);
  else /* engineering notation keeps the report's columns (11 characters at most) */
    snprintf(buf, size, "%.4g s", s);
  return buf;
}

const char *dt_format_energy(double j, char *buf, size_t size)
{
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1.0, "J"}, {1e-3, "kJ"}, {1e-6, "MJ"}, {1e-9, "GJ"}};
  if (j == 0 || !isfinite(j)) {
    snprintf(buf, size, "0 J");
    return buf;
  }
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    double v = j * units[i].scale;
    if (fabs(v) < 999.95 || i + 1 == sizeof units / sizeof units[0]) {
      snprintf(buf, size, "%.4g %s", v, units[i].unit);
      return buf;
    }
  }
  return buf;
}

const char *dt_format_bytes(double b, char *buf, size_t size)
{
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t i = 0;
  while (b >= 1024.0 && i + 1 < sizeof units / sizeof units[0]) {
    b /= 1024.0;
    i++;
  }
  if (i == 0)
    snprintf(buf, size, "%.0f B", b);
  else
    snprintf(buf, size, "%.4g %s", b, units[i]);
  return buf;
}
