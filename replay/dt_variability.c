/* Stragglers, jitter and late ranks (dt_variability.h): the options' parsers, the per-rank resolution of the
 * platform's section and the options, and the counter-based jitter draw. */
#include "dt_variability.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ---- */

int dt_var_opts_add(dt_var_opts *o, const char *arg, int late, char *why, size_t why_size)
{
  const char *flag = late ? "--late" : "--slow";
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    snprintf(why, why_size, "%s expects RANKS=%s (e.g. %s), found '%s'", flag, late ? "TIME" : "FACTOR",
             late ? "3=2ms" : "0-7=0.5", arg);
    return -1;
  }
  char list[256];
  if ((size_t)(eq - arg) >= sizeof list) {
    snprintf(why, why_size, "%s: the rank list is too long (at most %zu characters)", flag, sizeof list - 1);
    return -1;
  }
  memcpy(list, arg, (size_t)(eq - arg));
  list[eq - arg] = '\0';
  dt_var_rank_entry e;
  char lwhy[256];
  if (dt_var_list_parse(list, DT_TRACE_MAX_RANKS, &e.ranks, lwhy, sizeof lwhy) != 0) {
    snprintf(why, why_size, "%s: bad ranks: %s", flag, lwhy);
    return -1;
  }
  const char *val = eq + 1;
  if (late) {
    char twhy[256];
    if (strcmp(val, "0") == 0) /* a bare 0 is no delay, as --fail's @0 (the message says "from 0") */
      e.value = 0;
    else if (dt_parse_time(val, &e.value, twhy, sizeof twhy) != 0 || !(e.value <= DT_TIME_MAX)) {
      snprintf(why, why_size, "%s %s: expected a delay from 0 to %g s with a unit (e.g. 2ms), found '%s'", flag,
               list, DT_TIME_MAX, val);
      dt_var_list_free(&e.ranks);
      return -1;
    }
  } else if (dt_var_plain_real(val, &e.value) != 0 || !(e.value >= DT_VAR_SPEED_MIN && e.value <= DT_VAR_SPEED_MAX)) {
    snprintf(why, why_size, "%s %s: expected a speed factor from %g to %g (1 = nominal, 0.5 = half speed), found '%s'",
             flag, list, DT_VAR_SPEED_MIN, DT_VAR_SPEED_MAX, val);
    dt_var_list_free(&e.ranks);
    return -1;
  }
  dt_var_rank_entry **arr = late ? &o->late : &o->slow;
  size_t *n = late ? &o->nlate : &o->nslow;
  *arr = dt_xrealloc(*arr, sizeof **arr * (*n + 1));
  (*arr)[(*n)++] = e;
  return 0;
}

int dt_var_opts_sigma(dt_var_opts *o, const char *arg, char *why, size_t why_size)
{
  double x;
  if (dt_var_plain_real(arg, &x) != 0 || !(x >= 0 && x <= DT_VAR_SIGMA_MAX)) {
    snprintf(why, why_size, "--jitter expects the lognormal sigma, a number from 0 to %g, found '%s'",
             DT_VAR_SIGMA_MAX, arg);
    return -1;
  }
  o->has_sigma = 1;
  o->sigma = x;
  return 0;
}

int dt_var_opts_seed(dt_var_opts *o, const char *arg, char *why, size_t why_size)
{
  long long s;
  if (dt_parse_whole(arg, 0, (long long)DT_VAR_SEED_MAX, &s) != 0) {
    snprintf(why, why_size, "--seed expects a whole number from 0 to %llu, found '%s'",
             (unsigned long long)DT_VAR_SEED_MAX, arg);
    return -1;
  }
  o->has_seed = 1;
  o->seed = (uint64_t)s;
  return 0;
}

void dt_var_opts_free(dt_var_opts *o)
{
  for (size_t i = 0; i < o->nslow; i++)
    dt_var_list_free(&o->slow[i].ranks);
  for (size_t i = 0; i < o->nlate; i++)
    dt_var_list_free(&o->late[i].ranks);
  free(o->slow);
  free(o->late);
  memset(o, 0, sizeof *o);
}

int dt_var_has_jitter(const dt_var_opts *o, const dt_platform *p)
{
  if (o && o->has_sigma)
    return o->sigma > 0;
  return p && p->variability && p->variability->jitter_sigma > 0;
}

/* ---- resolution ---- */

int dt_var_resolve(const dt_platform *p, const dt_var_opts *o, const int32_t *gpu_of_rank, int32_t nranks,
                   dt_var **out, dt_error *err)
{
  *out = NULL;
  const dt_platform_var *pv = p->variability;
  for (int late = 0; o && late < 2; late++) {
    const dt_var_rank_entry *e = late ? o->late : o->slow;
    size_t n = late ? o->nlate : o->nslow;
    for (size_t i = 0; i < n; i++)
      if (dt_var_list_max(&e[i].ranks) >= nranks)
        return dt_error_set(err, "", 0, 0, "%s names rank %lld, but the trace has ranks 0-%d", late ? "--late" : "--slow",
                            (long long)dt_var_list_max(&e[i].ranks), (int)nranks - 1);
  }
  double sigma = o && o->has_sigma ? o->sigma : pv ? pv->jitter_sigma : 0;
  int any = sigma > 0 || (pv && (pv->nspeed || pv->nlate)) || (o && (o->nslow || o->nlate));
  if (!any || nranks <= 0)
    return DT_OK;
  dt_var *v = dt_xcalloc(1, sizeof *v);
  v->nranks = nranks;
  v->speed = dt_xmalloc(sizeof *v->speed * (size_t)nranks);
  v->late = dt_xmalloc(sizeof *v->late * (size_t)nranks);
  v->sigma = sigma;
  v->seed = o && o->has_seed ? o->seed : pv && pv->has_seed ? pv->seed : 1;
  for (int32_t r = 0; r < nranks; r++) {
    int gpu = gpu_of_rank[r];
    v->speed[r] = dt_platform_var_speed(pv, gpu, p->gpus_per_node);
    v->late[r] = dt_platform_var_late(pv, gpu, p->gpus_per_node);
    for (size_t i = 0; o && i < o->nslow; i++)
      if (dt_var_list_has(&o->slow[i].ranks, r))
        v->speed[r] = o->slow[i].value;
    for (size_t i = 0; o && i < o->nlate; i++)
      if (dt_var_list_has(&o->late[i].ranks, r))
        v->late[r] = o->late[i].value;
    v->nslow += v->speed[r] != 1.0;
    v->nlate += v->late[r] > 0;
  }
  if (v->sigma == 0 && v->nslow == 0 && v->nlate == 0) { /* entries that change nothing: a run as without them */
    dt_var_free(v);
    return DT_OK;
  }
  *out = v;
  return DT_OK;
}

void dt_var_free(dt_var *v)
{
  if (!v)
    return;
  free(v->speed);
  free(v->late);
  free(v);
}

/* ---- the draw ---- */

#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

/* splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014; the constants of Vigna's reference splitmix64.c). */
static uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double dt_var_jitter(const dt_var *v, int32_t rank, size_t stream, size_t index)
{
  if (!v || !(v->sigma > 0))
    return 1.0;
  /* a splitmix64 stream whose state is the key hashed field by field: draws do not depend on event order */
  uint64_t s = mix64(v->seed + GOLDEN_GAMMA);
  s = mix64(s ^ ((uint64_t)(uint32_t)rank + GOLDEN_GAMMA));
  s = mix64(s ^ ((uint64_t)stream + 2 * GOLDEN_GAMMA));
  s = mix64(s ^ ((uint64_t)index + 3 * GOLDEN_GAMMA));
  uint64_t a = mix64(s += GOLDEN_GAMMA), b = mix64(s += GOLDEN_GAMMA);
  double u1 = (double)((a >> 11) + 1) * 0x1.0p-53; /* (0, 1]: log(u1) is finite */
  double u2 = (double)(b >> 11) * 0x1.0p-53;       /* [0, 1) */
  double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
  return exp(v->sigma * z - 0.5 * v->sigma * v->sigma);
}

double dt_var_compute(const dt_var *v, const dt_trace *t, int32_t rank, const dt_op *op, double d)
{
  if (!v)
    return d;
  double f = 1.0 / v->speed[rank];
  if (v->sigma > 0) {
    const dt_rank *body = dt_trace_rank_body(t, rank);
    for (size_t s = 0; s < body->nstreams; s++) {
      const dt_stream *st = &body->streams[s];
      if (op >= st->ops && op < st->ops + st->nops) {
        f *= dt_var_jitter(v, rank, s, (size_t)(op - st->ops));
        break;
      }
    }
  }
  return d * f;
}

/* Appends up to 4 ranks with their values where pick(v, r) holds: " (rank 3 at 0.5, ...)". */
static size_t list_ranks(const dt_var *v, int late, char *buf, size_t size)
{
  size_t len = 0;
  int shown = 0;
  for (int32_t r = 0; r < v->nranks && len < size; r++) {
    int hit = late ? v->late[r] > 0 : v->speed[r] != 1.0;
    if (!hit)
      continue;
    if (shown == 4) {
      len += (size_t)snprintf(buf + len, size - len, ", ...");
      break;
    }
    char t[64];
    if (late)
      len += (size_t)snprintf(buf + len, size - len, "%srank %d after %s", shown ? ", " : "", (int)r,
                              dt_format_time(v->late[r], t, sizeof t));
    else
      len += (size_t)snprintf(buf + len, size - len, "%srank %d at %g", shown ? ", " : "", (int)r, v->speed[r]);
    shown++;
  }
  return len < size ? len : size - 1;
}

const char *dt_var_describe(const dt_var *v, char *buf, size_t size)
{
  size_t len = (size_t)snprintf(buf, size, "variability (docs/whatif.md):");
  if (v->sigma > 0 && len < size)
    len += (size_t)snprintf(buf + len, size - len, " compute jitter lognormal, sigma %g, mean 1, drawn per compute op "
                            "from seed %llu;", v->sigma, (unsigned long long)v->seed);
  if (v->nslow && len < size) {
    len += (size_t)snprintf(buf + len, size - len, " %d rank%s at another compute speed (", (int)v->nslow,
                            v->nslow == 1 ? "" : "s");
    if (len < size)
      len += list_ranks(v, 0, buf + len, size - len);
    if (len < size)
      len += (size_t)snprintf(buf + len, size - len, ");");
  }
  if (v->nlate && len < size) {
    len += (size_t)snprintf(buf + len, size - len, " %d rank%s starting late (", (int)v->nlate,
                            v->nlate == 1 ? "" : "s");
    if (len < size)
      len += list_ranks(v, 1, buf + len, size - len);
    if (len < size)
      len += (size_t)snprintf(buf + len, size - len, ");");
  }
  if (len > 0 && len < size && buf[len - 1] == ';')
    buf[len - 1] = '\0';
  return buf;
}
