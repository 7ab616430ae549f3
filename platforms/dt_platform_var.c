/* The `variability:` platform section (dt_platform_var.h): its YAML reader, called by dt_platform_yaml.c for the
 * section's value, the check of its GPU and node numbers once the platform is known, and the lookups. */
#include "dt_platform_var.h"

#include "../common/dt_units.h"
#include "../common/dt_yaml.h"
#include "../common/dt_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lists "0-7,9" ---- */

/* A whole decimal number of at most 18 digits at *p; advances *p. -1 when none. */
static int take_number(const char **p, int64_t *out)
{
  const char *s = *p;
  int64_t v = 0;
  int n = 0;
  while (isdigit((unsigned char)*s)) {
    if (++n > 18)
      return -1;
    v = v * 10 + (*s++ - '0');
  }
  if (n == 0)
    return -1;
  *p = s;
  *out = v;
  return 0;
}

int dt_var_list_parse(const char *s, int64_t max, dt_var_list *out, char *why, size_t why_size)
{
  size_t cap = 0;
  out->n = 0;
  out->r = NULL;
  const char *p = s;
  if (!*p)
    goto bad;
  while (*p) {
    int64_t a, b;
    if (take_number(&p, &a) != 0)
      goto bad;
    b = a;
    if (*p == '-') {
      p++;
      if (take_number(&p, &b) != 0)
        goto bad;
      if (b < a) {
        snprintf(why, why_size, "range '%lld-%lld' in '%s' ends before it starts", (long long)a, (long long)b, s);
        goto fail;
      }
    }
    if (b > max) {
      snprintf(why, why_size, "%lld in '%s' is above the largest, %lld", (long long)b, s, (long long)max);
      goto fail;
    }
    out->r = dt_grow(out->r, &cap, out->n, sizeof *out->r);
    out->r[out->n][0] = a;
    out->r[out->n][1] = b;
    out->n++;
    if (*p == ',' && p[1])
      p++;
    else if (*p)
      goto bad;
  }
  return 0;
bad:
  snprintf(why, why_size, "expected a list such as 3, 0-7 or 0,5,9-11, found '%s'", s);
fail:
  dt_var_list_free(out);
  return -1;
}

int dt_var_list_has(const dt_var_list *l, int64_t x)
{
  for (size_t i = 0; i < l->n; i++)
    if (x >= l->r[i][0] && x <= l->r[i][1])
      return 1;
  return 0;
}

int64_t dt_var_list_max(const dt_var_list *l)
{
  int64_t m = -1;
  for (size_t i = 0; i < l->n; i++)
    if (l->r[i][1] > m)
      m = l->r[i][1];
  return m;
}

void dt_var_list_free(dt_var_list *l)
{
  free(l->r);
  l->r = NULL;
  l->n = 0;
}

/* ---- lookups ---- */

static double lookup(const dt_var_entry *e, size_t n, int gpu, int G, double dflt)
{
  double v = dflt;
  for (size_t i = 0; i < n; i++)
    if (dt_var_list_has(&e[i].which, e[i].by_node ? gpu / (G > 0 ? G : 1) : gpu))
      v = e[i].value;
  return v;
}

double dt_platform_var_speed(const dt_platform_var *v, int gpu, int gpus_per_node)
{
  return v ? lookup(v->speed, v->nspeed, gpu, gpus_per_node, 1.0) : 1.0;
}

double dt_platform_var_late(const dt_platform_var *v, int gpu, int gpus_per_node)
{
  return v ? lookup(v->late, v->nlate, gpu, gpus_per_node, 0.0) : 0.0;
}

void dt_platform_var_free(dt_platform_var *v)
{
  if (!v)
    return;
  for (size_t i = 0; i < v->nspeed; i++)
    dt_var_list_free(&v->speed[i].which);
  for (size_t i = 0; i < v->nlate; i++)
    dt_var_list_free(&v->late[i].which);
  free(v->speed);
  free(v->late);
  free(v);
}

/* ---- YAML ---- */

typedef struct vloader {
  yaml_document_t *doc;
  const char *file;
  dt_error *err;
} vloader;

static int vfail(vloader *L, const yaml_node_t *n, const char *fmt, ...) DT_PRINTF(3, 4);
static int vfail(vloader *L, const yaml_node_t *n, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(L->err, L->file, n ? (long)n->start_mark.line + 1 : 0, n ? (long)n->start_mark.column + 1 : 0, fmt,
                ap);
  va_end(ap);
  return DT_ERR;
}

static const char *text_of(const yaml_node_t *n)
{
  return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* What a node holds, for "found ..." */
static const char *found(const yaml_node_t *n, char *buf, size_t size)
{
  if (n->type == YAML_MAPPING_NODE)
    snprintf(buf, size, "a mapping");
  else if (n->type == YAML_SEQUENCE_NODE)
    snprintf(buf, size, "a sequence");
  else if (!*text_of(n))
    snprintf(buf, size, "nothing");
  else
    snprintf(buf, size, "'%.200s'", text_of(n));
  return buf;
}

int dt_var_plain_real(const char *s, double *out)
{
  return dt_parse_real(s, out);
}

/* Checks that every key of map is one of keys (n of them), not twice; fills val[i] with key i's value or NULL. */
static int keys_of(vloader *L, yaml_node_t *map, const char *where, const char *const *keys, size_t n,
                   yaml_node_t **val)
{
  char buf[256];
  for (size_t i = 0; i < n; i++)
    val[i] = NULL;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(L->doc, pr->key), *v = yaml_document_get_node(L->doc, pr->value);
    const char *name = text_of(k);
    if (!name)
      return vfail(L, k, "expected a key name in '%s', found %s", where, found(k, buf, sizeof buf));
    size_t i = 0;
    while (i < n && strcmp(keys[i], name) != 0)
      i++;
    if (i == n) {
      const char *near = dt_nearest_word(name, keys, n);
      if (near)
        return vfail(L, k, "unknown key '%s' in '%s' (did you mean '%s'?)", name, where, near);
      return vfail(L, k, "unknown key '%s' in '%s'", name, where);
    }
    if (val[i])
      return vfail(L, k, "duplicate key '%s' in '%s' (first given at line %ld)", name, where,
                   (long)val[i]->start_mark.line + 1);
    val[i] = v;
  }
  return DT_OK;
}

/* `speed:` or `late:`: a sequence of {gpus: LIST | nodes: LIST, factor: F | delay: TIME}. */
static int entries(vloader *L, yaml_node_t *seq, int late, dt_var_entry **out, size_t *nout)
{
  const char *what = late ? "variability.late" : "variability.speed";
  const char *vkey = late ? "delay" : "factor";
  char buf[256], why[512];
  if (seq->type == YAML_SEQUENCE_NODE && seq->data.sequence.items.top == seq->data.sequence.items.start)
    return vfail(L, seq, "'%s' is an empty list: give at least one {gpus: LIST or nodes: LIST, %s: %s} entry, or "
                 "leave '%s' out", what, vkey, late ? "TIME" : "FACTOR", what);
  if (seq->type != YAML_SEQUENCE_NODE)
    return vfail(L, seq, "expected a sequence of {gpus: LIST or nodes: LIST, %s: %s} entries for '%s', found %s",
                 vkey, late ? "TIME" : "FACTOR", what, found(seq, buf, sizeof buf));
  size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
  *out = dt_xcalloc(n, sizeof **out);
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *e = yaml_document_get_node(L->doc, seq->data.sequence.items.start[i]);
    dt_var_entry *x = &(*out)[i];
    x->line = (long)e->start_mark.line + 1;
    x->col = (long)e->start_mark.column + 1;
    if (e->type != YAML_MAPPING_NODE)
      return vfail(L, e, "expected an entry {gpus: LIST or nodes: LIST, %s: ...} in '%s', found %s", vkey, what,
                   found(e, buf, sizeof buf));
    const char *keys[3] = {"gpus", "nodes", vkey};
    yaml_node_t *v[3];
    if (keys_of(L, e, what, keys, 3, v) != DT_OK)
      return DT_ERR;
    if (!v[0] == !v[1])
      return vfail(L, e, "an entry of '%s' needs exactly one of 'gpus' and 'nodes'", what);
    if (!v[2])
      return vfail(L, e, "missing required key '%s' in an entry of '%s' (%s)", vkey, what,
                   dt_yaml_mapping_at(e, buf, sizeof buf));
    x->by_node = v[1] != NULL;
    yaml_node_t *w = v[x->by_node ? 1 : 0];
    if (!text_of(w) || dt_var_list_parse(text_of(w), INT32_MAX, &x->which, why, sizeof why) != 0)
      return vfail(L, w, "bad value for '%s.%s': %s", what, keys[x->by_node],
                   text_of(w) ? why : "expected a list such as 3, 0-7 or 0,5,9-11");
    *nout = i + 1;
    const char *t = text_of(v[2]);
    if (late) {
      if (t && strcmp(t, "0") == 0) /* a bare 0 is no delay */
        x->value = 0;
      else if (!t || dt_parse_time(t, &x->value, why, sizeof why) != 0)
        return vfail(L, v[2], "bad value for '%s.delay': %s", what, t ? why : "expected a time such as '2ms'");
      if (!(x->value <= DT_TIME_MAX))
        return vfail(L, v[2], "expected a delay from 0 to %g s for '%s.delay', found %s", DT_TIME_MAX, what,
                     found(v[2], buf, sizeof buf));
    } else if (dt_var_plain_real(t, &x->value) != 0 || !(x->value >= DT_VAR_SPEED_MIN && x->value <= DT_VAR_SPEED_MAX)) {
      return vfail(L, v[2], "expected a speed factor from %g to %g (1 = nominal, 0.5 = half speed) for "
                   "'%s.factor', found %s", DT_VAR_SPEED_MIN, DT_VAR_SPEED_MAX, what, found(v[2], buf, sizeof buf));
    }
  }
  return DT_OK;
}

int dt_platform_var_parse_yaml(yaml_document_t *doc, yaml_node_t *map, const char *file, dt_platform_var **out,
                               dt_error *err)
{
  vloader L = {doc, file, err};
  char buf[256];
  *out = NULL;
  if (map->type != YAML_MAPPING_NODE)
    return vfail(&L, map, "expected a mapping for 'variability', found %s", found(map, buf, sizeof buf));
  static const char *const keys[] = {"seed", "jitter", "speed", "late"};
  yaml_node_t *v[4];
  if (keys_of(&L, map, "variability", keys, 4, v) != DT_OK)
    return DT_ERR;
  dt_platform_var *pv = dt_xcalloc(1, sizeof *pv);
  *out = pv; /* the caller frees it, also on error */
  if (v[0]) {
    long long s;
    if (dt_parse_whole(text_of(v[0]), 0, (long long)DT_VAR_SEED_MAX, &s) != 0)
      return vfail(&L, v[0], "expected a whole number from 0 to %llu for 'variability.seed', found %s",
                   (unsigned long long)DT_VAR_SEED_MAX, found(v[0], buf, sizeof buf));
    pv->has_seed = 1;
    pv->seed = (uint64_t)s;
  }
  if (v[1]) {
    if (v[1]->type != YAML_MAPPING_NODE)
      return vfail(&L, v[1], "expected a mapping {distribution: lognormal, sigma: S} for 'variability.jitter', "
                   "found %s", found(v[1], buf, sizeof buf));
    static const char *const jkeys[] = {"distribution", "sigma"};
    yaml_node_t *j[2];
    if (keys_of(&L, v[1], "variability.jitter", jkeys, 2, j) != DT_OK)
      return DT_ERR;
    if (j[0] && (!text_of(j[0]) || strcmp(text_of(j[0]), "lognormal") != 0))
      return vfail(&L, j[0], "unknown value %s for 'variability.jitter.distribution' (expected 'lognormal')",
                   found(j[0], buf, sizeof buf));
    if (!j[1])
      return vfail(&L, v[1], "missing required key 'sigma' in 'variability.jitter' (%s)",
                   dt_yaml_mapping_at(v[1], buf, sizeof buf));
    if (dt_var_plain_real(text_of(j[1]), &pv->jitter_sigma) != 0 ||
        !(pv->jitter_sigma >= 0 && pv->jitter_sigma <= DT_VAR_SIGMA_MAX))
      return vfail(&L, j[1], "expected a number from 0 to %g for 'variability.jitter.sigma', found %s",
                   DT_VAR_SIGMA_MAX, found(j[1], buf, sizeof buf));
  }
  if (v[2] && entries(&L, v[2], 0, &pv->speed, &pv->nspeed) != DT_OK)
    return DT_ERR;
  if (v[3] && entries(&L, v[3], 1, &pv->late, &pv->nlate) != DT_OK)
    return DT_ERR;
  return DT_OK;
}

int dt_platform_var_check(const dt_platform_var *v, const char *file, int nodes, int gpus_per_node, dt_error *err)
{
  for (int late = 0; v && late < 2; late++) {
    const dt_var_entry *e = late ? v->late : v->speed;
    size_t n = late ? v->nlate : v->nspeed;
    for (size_t i = 0; i < n; i++) {
      int64_t lim = e[i].by_node ? nodes : (int64_t)nodes * gpus_per_node;
      if (dt_var_list_max(&e[i].which) >= lim)
        return dt_error_set(err, file, e[i].line, e[i].col,
                            "'variability.%s' names %s %lld, but the platform has %s 0-%lld", late ? "late" : "speed",
                            e[i].by_node ? "node" : "GPU", (long long)dt_var_list_max(&e[i].which),
                            e[i].by_node ? "nodes" : "GPUs", (long long)lim - 1);
    }
  }
  return DT_OK;
}
