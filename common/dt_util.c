/* Allocation (and the out-of-memory exit), growable arrays and the edit-distance lookup behind "did you mean" hints. */
#include "dt_util.h"

#include "dt_outfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

/* ---- what dtsim is doing, for the out-of-memory message ---- */

static char phase[256];
static size_t alloc_cap; /* DTSIM_TEST_ALLOC_LIMIT: a request above it fails (tests only); 0 = no cap */
static const char *alloc_cap_phase; /* DTSIM_TEST_ALLOC_PHASE: the cap holds only while the phase starts so */
static int alloc_cap_read;

void dt_phase(const char *fmt, ...)
{
  if (!fmt) {
    phase[0] = '\0';
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(phase, sizeof phase, fmt, ap);
  va_end(ap);
}

const char *dt_phase_get(void)
{
  return phase;
}

void dt_oom(size_t size)
{
  static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)size;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof unit / sizeof *unit) {
    v /= 1024;
    u++;
  }
  char msg[512];
  int n = size == 0 ? snprintf(msg, sizeof msg, "dtsim: out of memory")
          : u == 0 ? snprintf(msg, sizeof msg, "dtsim: out of memory (asked for %zu bytes)", size)
                 : snprintf(msg, sizeof msg, "dtsim: out of memory (asked for %.1f %s)", v, unit[u]);
  if (n < 0 || (size_t)n >= sizeof msg)
    n = (int)sizeof msg - 1;
  if (phase[0])
    n += snprintf(msg + n, sizeof msg - (size_t)n, " while %s", phase);
  if ((size_t)n >= sizeof msg - 1)
    n = (int)sizeof msg - 2;
  msg[n++] = '\n';
  /* what was printed so far reaches its reader; nothing is allocated from here on */
  fflush(stdout);
  fflush(stderr);
  ssize_t w = write(2, msg, (size_t)n);
  (void)w;
  dt_exit2();
}

void dt_exit2(void)
{
  fflush(stdout);
  fflush(stderr);
  dt_outfile_remove_unfinished();
  /* _exit, not exit: from inside a SimGrid actor, exit() runs the engine's atexit and static destructors,
   * which wait for the actors (one of them is the caller) */
  _exit(2);
}

static int over_cap(size_t size)
{
  if (!alloc_cap_read) {
    const char *e = getenv("DTSIM_TEST_ALLOC_LIMIT");
    long long v;
    if (e && dt_parse_whole(e, 1, 9223372036854775807LL, &v) == 0)
      alloc_cap = (size_t)v;
    alloc_cap_phase = getenv("DTSIM_TEST_ALLOC_PHASE");
    alloc_cap_read = 1;
  }
  return alloc_cap && size > alloc_cap &&
         (!alloc_cap_phase || strncmp(phase, alloc_cap_phase, strlen(alloc_cap_phase)) == 0);
}

void *dt_xmalloc(size_t size)
{
  void *p = over_cap(size) ? NULL : malloc(size ? size : 1);
  if (!p)
    dt_oom(size);
  return p;
}

void *dt_xcalloc(size_t count, size_t size)
{
  size_t total;
  if (__builtin_mul_overflow(count, size, &total))
    dt_oom(SIZE_MAX);
  void *p = over_cap(total) ? NULL : calloc(count ? count : 1, size ? size : 1);
  if (!p)
    dt_oom(total);
  return p;
}

void *dt_xrealloc(void *ptr, size_t size)
{
  void *p = over_cap(size) ? NULL : realloc(ptr, size ? size : 1);
  if (!p)
    dt_oom(size);
  return p;
}

char *dt_xstrdup(const char *s)
{
  return s ? dt_xstrndup(s, strlen(s)) : NULL;
}

char *dt_xstrndup(const char *s, size_t n)
{
  char *p = dt_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

int dt_parse_whole_u64(const char *s, uint64_t hi, uint64_t *out)
{
  if (!s || !*s)
    return -1;
  uint64_t v = 0;
  int big = 0;
  for (const char *p = s; *p; p++) { /* past an overflow, keep reading: a non-digit still makes it no number */
    if (*p < '0' || *p > '9')
      return -1;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      big = 1;
    else
      v = v * 10 + d;
  }
  if (big || v > hi)
    return -2;
  *out = v;
  return 0;
}

int dt_parse_whole(const char *s, long long lo, long long hi, long long *out)
{
  uint64_t v;
  int rc = dt_parse_whole_u64(s, hi < 0 ? 0 : (uint64_t)hi, &v);
  if (rc == 0 && (hi < 0 || v < (uint64_t)(lo < 0 ? 0 : lo)))
    rc = -2;
  if (rc == 0)
    *out = (long long)v;
  return rc;
}

int dt_parse_rank_list(const char *s, int32_t limit, int32_t **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!s || limit < 1)
    return -1;
  char *copy = dt_xstrdup(s);
  size_t cap = 0;
  int rc = 0;
  for (char *item = copy; rc == 0;) {
    char *comma = strchr(item, ','), *dash;
    if (comma)
      *comma = '\0';
    long long a, b;
    if ((dash = strchr(item, '-')) != NULL)
      *dash = '\0';
    if (dt_parse_whole(item, 0, limit - 1, &a) != 0 || (dash && dt_parse_whole(dash + 1, a, limit - 1, &b) != 0))
      rc = -1;
    else if (!dash)
      b = a;
    for (long long v = a; rc == 0 && v <= b; v++) {
      *out = dt_grow(*out, &cap, *n, sizeof **out);
      (*out)[(*n)++] = (int32_t)v;
    }
    if (!comma)
      break;
    item = comma + 1;
  }
  free(copy);
  if (rc != 0) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

int dt_read_file(const char *path, size_t max, char **out, size_t *len)
{
  *out = NULL;
  if (len)
    *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t n = 0, cap = 0;
  char *buf = NULL;
  for (;;) {
    buf = dt_grow(buf, &cap, n + 65536 < max + 2 ? n + 65536 : max + 2, 1);
    size_t want = cap - 1 - n < max + 1 - n ? cap - 1 - n : max + 1 - n;
    size_t got = fread(buf + n, 1, want, f);
    n += got;
    if (got == 0 || n > max)
      break;
  }
  int bad = ferror(f), e = errno; /* a directory opens, then fails to read: EISDIR */
  fclose(f);
  if (bad || n > max) {
    free(buf);
    errno = bad ? (e ? e : EIO) : EFBIG;
    return bad ? -1 : -2;
  }
  buf[n] = '\0';
  *out = buf;
  if (len)
    *len = n;
  return 0;
}

int dt_read_config(const char *path, const char *what, char **out, size_t *len, dt_error *err)
{
  /* "an nccl-tests output": the article as the kind is read aloud */
  const char *art = strchr("aeiou", what[0]) || strncmp(what, "nccl", 4) == 0 ? "an" : "a";
  int got = dt_read_file(path, DT_CONFIG_FILE_MAX, out, len);
  if (got == -2)
    return dt_error_set(err, path, 0, 0, "holds more than %zu MiB, the most %s %s may (a device such as /dev/zero is "
                        "read up to that)", DT_CONFIG_FILE_MAX >> 20, art, what);
  if (got != 0 && errno == EISDIR)
    return dt_error_set(err, path, 0, 0, "is a directory, not %s %s", art, what);
  if (got != 0)
    return dt_error_set(err, path, 0, 0, "cannot open %s: %s", what, strerror(errno));
  return DT_OK;
}

void *dt_grow(void *array, size_t *cap, size_t need, size_t elem)
{
  if (need < *cap)
    return array;
  size_t old = *cap;
  size_t n = old < 8 ? 8 : old;
  while (n <= need) {
    if (n > SIZE_MAX / 2 / elem)
      dt_oom(SIZE_MAX);
    n *= 2;
  }
  array = dt_xrealloc(array, n * elem);
  memset((char *)array + old * elem, 0, (n - old) * elem);
  *cap = n;
  return array;
}

static size_t edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  size_t *row = dt_xmalloc((lb + 1) * sizeof *row);
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
      size_t best = diag + cost;
      if (row[j] + 1 < best)
        best = row[j] + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  size_t d = row[lb];
  free(row);
  return d;
}

const char *dt_nearest_word(const char *word, const char *const *cands, size_t n)
{
  size_t limit = strlen(word) / 3;
  if (limit < 2)
    limit = 2;
  const char *best = NULL;
  size_t best_d = limit + 1;
  for (size_t i = 0; i < n; i++) {
    size_t d = edit_distance(word, cands[i]);
    if (d < best_d) {
      best_d = d;
      best = cands[i];
    }
  }
  return best;
}

double dt_wall_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double dt_quantile_sorted(const double *v, size_t n, double q)
{
  if (n == 0)
    return 0;
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void dt_sort_doubles(double *v, size_t n)
{
  if (n > 1)
    qsort(v, n, sizeof *v, cmp_double);
}

double dt_median_sorted(const double *v, size_t n)
{
  if (n == 0)
    return NAN;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
