/* Allocation, growable arrays and the edit-distance lookup behind "did you mean" hints. */
#include "dt_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t size)
{
  fprintf(stderr, "dtsim: out of memory allocating %zu bytes\n", size);
  abort();
}

void *dt_xmalloc(size_t size)
{
  void *p = malloc(size ? size : 1);
  if (!p)
    oom(size);
  return p;
}

void *dt_xcalloc(size_t count, size_t size)
{
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p)
    oom(count * size);
  return p;
}

void *dt_xrealloc(void *ptr, size_t size)
{
  void *p = realloc(ptr, size ? size : 1);
  if (!p)
    oom(size);
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

int dt_parse_whole(const char *s, long long lo, long long hi, long long *out)
{
  if (!s || !*s)
    return -1;
  unsigned long long v = 0;
  int big = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    if (v > (9223372036854775807ull - (unsigned)(*p - '0')) / 10)
      big = 1;
    else
      v = v * 10 + (unsigned)(*p - '0');
  }
  if (big || (long long)v < lo || (long long)v > hi)
    return -2;
  *out = (long long)v;
  return 0;
}

void *dt_grow(void *array, size_t *cap, size_t need, size_t elem)
{
  if (need < *cap)
    return array;
  size_t old = *cap;
  size_t n = old < 8 ? 8 : old;
  while (n <= need)
    n *= 2;
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
