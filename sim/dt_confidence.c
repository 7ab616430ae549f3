/* The validated-error classes (dt_confidence.h): validation/errors.csv, compiled in by CMakeLists.txt, parsed
 * once; a lookup finds a value's band or the nearest band that has validation rows. */
#include "dt_confidence.h"

#include "dt_validation_errors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLASSES 32

static dt_conf_class classes[MAX_CLASSES];
static int nclasses = -1; /* -1: not parsed yet */

static double parse_bound(const char *s)
{
  return strcmp(s, "inf") == 0 ? INFINITY : strtod(s, NULL);
}

/* Lines "kind,band,lo,hi,rows,median,max"; '#' lines and the header are skipped; a class without rows has an
 * empty median. */
static void parse_table(void)
{
  nclasses = 0;
  const char *p = dt_validation_errors_csv;
  while (*p && nclasses < MAX_CLASSES) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[256];
    if (len < sizeof line && *p != '#' && strncmp(p, "class,", 6) != 0 && len > 0) {
      memcpy(line, p, len);
      line[len] = '\0';
      char *f[7] = {0};
      int nf = 0;
      for (char *q = line; nf < 7;) {
        f[nf++] = q;
        char *c = strchr(q, ',');
        if (!c)
          break;
        *c = '\0';
        q = c + 1;
      }
      if (nf == 7 && strlen(f[0]) < sizeof classes[0].kind && strlen(f[1]) < sizeof classes[0].band) {
        dt_conf_class *k = &classes[nclasses++];
        snprintf(k->kind, sizeof k->kind, "%s", f[0]);
        snprintf(k->band, sizeof k->band, "%s", f[1]);
        k->lo = parse_bound(f[2]);
        k->hi = parse_bound(f[3]);
        k->rows = atoi(f[4]);
        k->err = *f[5] ? strtod(f[5], NULL) : 0;
        if (!*f[5])
          k->rows = 0;
      }
    }
    p += len + (e ? 1 : 0);
  }
}

/* Distance of v from [lo, hi) in log scale (0 inside). */
static double log_distance(double v, double lo, double hi)
{
  double x = log(v > 1 ? v : 1);
  if (v < lo)
    return log(lo > 1 ? lo : 1) - x;
  if (v >= hi)
    return x - log(hi > 1 ? hi : 1);
  return 0;
}

const dt_conf_class *dt_confidence_class(const char *kind, double value)
{
  if (nclasses < 0)
    parse_table();
  const dt_conf_class *best = NULL;
  double bd = INFINITY;
  for (int i = 0; i < nclasses; i++) {
    const dt_conf_class *k = &classes[i];
    if (strcmp(k->kind, kind) != 0 || k->rows <= 0)
      continue;
    int all = strcmp(k->band, "all") == 0;
    if (value < 0) { /* unknown size: the class over every row */
      if (all)
        return k;
      continue;
    }
    if (all)
      continue;
    double d = log_distance(value, k->lo, k->hi);
    if (d < bd) {
      bd = d;
      best = k;
    }
  }
  return best;
}
