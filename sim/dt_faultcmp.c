/* The cost of slow and failed links (dt_faultcmp.h): a baseline run in a forked child, per-instance totals from
 * dt_replay_opts.on_instance in both runs, and the report's section. Instance time is as in by_kind: from the
 * last member's arrival to the last member's completion, summed over instances. */
#include "dt_faultcmp.h"

#include "../common/dt_json.h"
#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../replay/dt_linkload.h"
#include "dt_fork.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout of a tally: a header, then (count, time) per op kind, (count, time, exposed on the critical path) per
 * dimension, (count, time) per trace group and one more slot for send/recv pairs. */
enum { H_MAKESPAN = 0, H_ITER, H_NITER, H_ABORTED, H_SLOWEST, H_COUNT };
#define K_AT(k) (H_COUNT + 2 * (size_t)(k))
#define D_AT(d) (K_AT(DT_OP_COUNT) + 3 * (size_t)(d))
#define G_AT(g) (D_AT(DT_DIM_COUNT) + 2 * (size_t)(g))

/* 1 when x names a link class (a degrade of every link of it), 0 for one link (its index in x->link) */
static int names_class(const dt_fault *x)
{
  for (int c = 0; c < DT_LC_COUNT; c++)
    if (strcmp(x->target, dt_link_class_name((dt_link_class)c)) == 0)
      return 1;
  return 0;
}

static void tally_alloc(dt_fault_tally *t, size_t ngroups)
{
  t->n = G_AT(ngroups + 1);
  t->v = dt_xcalloc(t->n, sizeof *t->v);
}

static void on_instance(const dt_instance_record *rec, void *data)
{
  dt_fault_cmp *cmp = data;
  const dt_trace *t = cmp->trace;
  double *v = cmp->cur->v;
  size_t g = rec->group >= 0 && (size_t)rec->group < t->ngroups ? (size_t)rec->group : t->ngroups;
  dt_dim d = g < t->ngroups ? t->groups[g].dim : dt_trace_p2p_dim(t);
  double dt = rec->end_s - rec->arrival_last_s;
  if (!(dt > 0))
    dt = 0;
  v[G_AT(g)] += 1;
  v[G_AT(g) + 1] += dt;
  if ((unsigned)d < DT_DIM_COUNT) {
    v[D_AT(d)] += 1;
    v[D_AT(d) + 1] += dt;
  }
}

void dt_faultcmp_init(dt_fault_cmp *cmp, const dt_trace *t, dt_faults *f, dt_replay_opts *opts)
{
  memset(cmp, 0, sizeof *cmp);
  cmp->trace = t;
  cmp->faults = f;
  tally_alloc(&cmp->base, t->ngroups);
  tally_alloc(&cmp->run, t->ngroups);
  cmp->cur = &cmp->run;
  opts->on_instance = on_instance;
  opts->on_instance_data = cmp;
}

static void fill_from_stats(dt_fault_tally *tl, const dt_stats *s)
{
  double *v = tl->v;
  v[H_MAKESPAN] = s->makespan_s;
  double sum = 0;
  for (size_t i = 0; i < s->niterations; i++)
    sum += s->iterations_s[i];
  v[H_ITER] = s->niterations ? sum / (double)s->niterations : 0;
  v[H_NITER] = (double)s->niterations;
  v[H_ABORTED] = s->aborted != NULL;
  for (int k = 0; k < DT_OP_COUNT; k++) {
    v[K_AT(k)] = (double)s->by_kind[k].count;
    v[K_AT(k) + 1] = s->by_kind[k].time_s;
  }
  if (s->critical)
    for (int d = 0; d < DT_DIM_COUNT; d++) {
      double e = 0;
      for (int k = 0; k < DT_OP_COUNT; k++)
        e += s->critical->comm_s[d][k];
      v[D_AT(d) + 2] = e;
    }
}

void dt_faultcmp_finish(dt_fault_cmp *cmp, const dt_stats *s)
{
  fill_from_stats(&cmp->run, s);
}

typedef struct base_job {
  dt_fault_cmp *cmp;
  const dt_platform *p;
  const dt_replay_opts *opts;
} base_job;

/* In the child: the same run without the faults; out is the child's copy of cmp->base.v. */
static int run_base(void *arg, void *out, dt_error *err)
{
  base_job *j = arg;
  dt_replay_opts o = *j->opts;
  o.faults = NULL;
  o.timeline = NULL; /* the run with the faults writes it */
  j->cmp->base.v = out;
  j->cmp->cur = &j->cmp->base;
  o.on_instance = on_instance;
  o.on_instance_data = j->cmp;
  dt_stats *s = NULL;
  if (dt_replay_run(j->p, j->cmp->trace, &o, &s, err) != DT_OK)
    return DT_ERR;
  fill_from_stats(&j->cmp->base, s);
  /* a lower bound of the run with the faults: the bytes each link carried here at its degraded bandwidth (routes
   * are the same but for failed links), for the note on a long --flap run */
  double lb = 0;
  for (size_t k = 0; s->links && k < s->links->nlinks; k++) {
    const dt_link_load *l = &s->links->links[k];
    double f = 1;
    for (size_t i = 0; i < j->cmp->faults->n; i++) {
      const dt_fault *x = &j->cmp->faults->v[i];
      if (x->kind == DT_FAULT_DEGRADE && (names_class(x) ? strcmp(x->target, dt_link_class_name(l->cls)) == 0
                                                          : x->link == l->link))
        f *= x->factor;
    }
    if (f < 1 && l->bandwidth > 0 && l->bytes / (l->bandwidth * f) > lb)
      lb = l->bytes / (l->bandwidth * f);
  }
  j->cmp->base.v[H_SLOWEST] = lb;
  dt_stats_free(s);
  return DT_OK;
}

int dt_faultcmp_baseline(dt_fault_cmp *cmp, const dt_platform *p, const dt_replay_opts *opts, dt_error *err)
{
  base_job j = {cmp, p, opts};
  if (dt_run_forked(run_base, &j, cmp->base.v, cmp->base.n * sizeof *cmp->base.v, "the baseline run (without "
                    "the link faults)", err) != DT_OK)
    return DT_ERR;
  /* faults that change links only at or after this end cannot act: the run keeps its shortcuts (dt_degrade.h) */
  dt_faults_set_natural_end(cmp->faults, cmp->base.v[H_MAKESPAN]);
  /* up front: a flap's outages over the run (no faster than without faults) each re-solve the sharing */
  for (size_t i = 0; i < cmp->faults->n; i++) {
    const dt_fault *x = &cmp->faults->v[i];
    double T = fmax(cmp->base.v[H_MAKESPAN], cmp->base.v[H_SLOWEST]);
    double outages = x->kind == DT_FAULT_FLAP ? (T - x->start_s) / x->period_s : 0;
    if (outages >= DT_FAULTCMP_OUTAGES_NOTE) {
      char b1[32], b2[32];
      fprintf(stderr, "dtsim: note: --flap %s: the run lasts at least %s (%s), so at least %.3g outages of period "
              "%s; each re-solves the sharing, which takes a while (a line on stderr every 10 s says how far)\n",
              x->target, dt_format_time(T, b1, sizeof b1), T > cmp->base.v[H_MAKESPAN] ? "the bytes of a degraded "
              "link at its new bandwidth" : "the run without faults", outages, dt_format_time(x->period_s, b2,
              sizeof b2));
    }
  }
  return DT_OK;
}

void dt_faultcmp_free(dt_fault_cmp *cmp)
{
  if (!cmp)
    return;
  free(cmp->base.v);
  free(cmp->run.v);
  cmp->base.v = cmp->run.v = NULL;
}

/* ---- report ---- */

static double ratio(double with, double without)
{
  return without > 0 ? with / without : 0;
}

static int kind_shown(dt_op_kind k)
{
  return k != DT_OP_COMPUTE && k != DT_OP_DELAY && k != DT_OP_MARK && k != DT_OP_RECV;
}

/* Groups (and the pairs' slot) with instances, by time added (largest first, then index). */
static const dt_fault_cmp *sort_cmp;
static int cmp_delta_desc(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  double dx = sort_cmp->run.v[G_AT(x) + 1] - sort_cmp->base.v[G_AT(x) + 1];
  double dy = sort_cmp->run.v[G_AT(y) + 1] - sort_cmp->base.v[G_AT(y) + 1];
  if (dx != dy)
    return (dx < dy) - (dx > dy);
  return (x > y) - (x < y);
}

static size_t *groups_by_delta(const dt_fault_cmp *cmp, size_t *n)
{
  size_t ng = cmp->trace->ngroups + 1, k = 0;
  size_t *idx = dt_xmalloc(sizeof *idx * ng);
  for (size_t g = 0; g < ng; g++)
    if (cmp->run.v[G_AT(g)] > 0 || cmp->base.v[G_AT(g)] > 0)
      idx[k++] = g;
  sort_cmp = cmp;
  qsort(idx, k, sizeof *idx, cmp_delta_desc);
  sort_cmp = NULL;
  *n = k;
  return idx;
}

static const char *group_name(const dt_trace *t, size_t g)
{
  return g < t->ngroups ? (t->groups[g].name ? t->groups[g].name : "?") : "send/recv";
}

static dt_dim group_dim(const dt_trace *t, size_t g)
{
  return g < t->ngroups ? t->groups[g].dim : dt_trace_p2p_dim(t);
}

/* with - without, 0 when it is within 1e-9 of without: the rounding of sums taken in another order (the run
 * with faults that change links during the run simulates every exchange as flows, the baseline may take the
 * closed forms, docs/replay.md), not an effect of the faults */
static double added(double with, double without)
{
  double d = with - without;
  return fabs(d) <= 1e-9 * fabs(without) ? 0 : d;
}

/* Why fault i of f changes nothing, or part of the run only, into buf; NULL when nothing makes it moot. end_s is
 * the end of the run with the faults (its last op), < 0 when it was aborted. Faults on one link: a failed link
 * carries no new flow, so a later failure, a degrade or a flap of it acts only until it fails. */
static const char *fault_remark(const dt_faults *f, size_t i, double end_s, char *buf, size_t size)
{
  const dt_fault *x = &f->v[i];
  char t1[64];
  size_t who = f->n;
  for (size_t j = 0; j < f->n && !names_class(x); j++) { /* the first failure of x's link, other than x */
    const dt_fault *y = &f->v[j];
    if (j == i || y->kind != DT_FAULT_FAIL || y->nlinks != 1 || y->link != x->link)
      continue;
    if (x->kind == DT_FAULT_FAIL && (y->at_s > x->at_s || (y->at_s == x->at_s && j > i)))
      continue; /* x fails it first */
    if (who == f->n || y->at_s < f->v[who].at_s)
      who = j;
  }
  if (who < f->n) {
    const dt_fault *y = &f->v[who];
    if (x->kind == DT_FAULT_FAIL)
      snprintf(buf, size, "no effect: --fail %s fails the link %s%s", y->target, y->at_s == 0 ? "from the start" : "at ",
               y->at_s == 0 ? "" : dt_format_time(y->at_s, t1, sizeof t1));
    else if (y->at_s == 0)
      snprintf(buf, size, "no effect: --fail %s@0 fails the link from the start (it carries no flow)", y->target);
    else
      snprintf(buf, size, "acts until --fail %s fails the link at %s (it then carries no new flow)", y->target,
               dt_format_time(y->at_s, t1, sizeof t1));
    return buf;
  }
  double at = x->kind == DT_FAULT_FAIL ? x->at_s : x->kind == DT_FAULT_FLAP ? x->start_s : 0;
  if (end_s >= 0 && at > 0 && at >= end_s) {
    snprintf(buf, size, "no effect: after the run ended (at %s)", dt_format_time(end_s, t1, sizeof t1));
    return buf;
  }
  return NULL;
}

static double run_end(const dt_fault_cmp *cmp)
{
  return cmp->run.v[H_ABORTED] > 0 ? -1 : cmp->run.v[H_MAKESPAN];
}

static void text_row(FILE *f, const char *label, double count, double without, double with)
{
  char b1[64], b2[64], b3[64];
  double d = added(with, without);
  fprintf(f, "  %-18s %-8.0f %-13s %-13s %s%-12s x%.4g\n", label, count, dt_format_time(without, b1, sizeof b1),
          dt_format_time(with, b2, sizeof b2), d < 0 ? "-" : "+", dt_format_time(d < 0 ? -d : d, b3, sizeof b3),
          ratio(with, without));
}

void dt_faultcmp_text(FILE *f, const dt_fault_cmp *cmp)
{
  const double *b = cmp->base.v, *r = cmp->run.v;
  char buf[512], b1[64], b2[64], b3[64];
  fprintf(f, "\nslow and failed links (against the same run without them)\n");
  for (size_t i = 0; i < cmp->faults->n; i++) {
    char why[256];
    const char *remark = fault_remark(cmp->faults, i, run_end(cmp), why, sizeof why);
    fprintf(f, "  - %s%s%s\n", dt_fault_describe(&cmp->faults->v[i], NULL, buf, sizeof buf), remark ? "; " : "",
            remark ? remark : "");
  }
  if (r[H_ABORTED] > 0) {
    fprintf(f, "  the run stopped (see 'aborted' below): no iteration to compare\n");
    return;
  }
  double d = added(r[H_ITER], b[H_ITER]);
  fprintf(f, "  iteration %s without, %s with: %s%s (%+.3g %%)\n", dt_format_time(b[H_ITER], b1, sizeof b1),
          dt_format_time(r[H_ITER], b2, sizeof b2), d < 0 ? "-" : "+", dt_format_time(d < 0 ? -d : d, b3, sizeof b3),
          b[H_ITER] > 0 ? 100.0 * d / b[H_ITER] : 0.0);
  fprintf(f, "  %-18s %-8s %-13s %-13s %-13s %s\n", "by kind", "count", "without", "with", "added", "ratio");
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (kind_shown((dt_op_kind)k) && r[K_AT(k)] > 0)
      text_row(f, dt_op_kind_name((dt_op_kind)k), r[K_AT(k)], b[K_AT(k) + 1], r[K_AT(k) + 1]);
  fprintf(f, "  %-18s %-8s %-13s %-13s %-13s %s\n", "by dimension", "count", "without", "with", "added", "ratio");
  for (int dd = 0; dd < DT_DIM_COUNT; dd++)
    if (r[D_AT(dd)] > 0)
      text_row(f, dt_dim_name((dt_dim)dd), r[D_AT(dd)], b[D_AT(dd) + 1], r[D_AT(dd) + 1]);
  for (int dd = 0; dd < DT_DIM_COUNT; dd++)
    if (r[D_AT(dd) + 2] > 0 || b[D_AT(dd) + 2] > 0)
      fprintf(f, "  %-4s comm on the path: %s without, %s with\n", dt_dim_name((dt_dim)dd),
              dt_format_time(b[D_AT(dd) + 2], b1, sizeof b1), dt_format_time(r[D_AT(dd) + 2], b2, sizeof b2));
  size_t n;
  size_t *idx = groups_by_delta(cmp, &n);
  size_t shown = n < 10 ? n : 10;
  fprintf(f, "  %-18s %-8s %-13s %-13s %-13s %s   (%zu of %zu, most time added first)\n", "by group", "count",
          "without", "with", "added", "ratio", shown, n);
  for (size_t i = 0; i < shown; i++) {
    size_t g = idx[i];
    char label[64];
    snprintf(label, sizeof label, "%s (%s)", group_name(cmp->trace, g), dt_dim_name(group_dim(cmp->trace, g)));
    text_row(f, label, r[G_AT(g)], b[G_AT(g) + 1], r[G_AT(g) + 1]);
  }
  free(idx);
  fprintf(f, "  time: summed over instances, last member's arrival to last member's completion (as 'by op kind')\n");
}

static void jstr(yajl_gen g, const char *s)
{
  dt_json_string(g, s); /* valid UTF-8 whatever a capture named its groups */
}

static const char *dim_key(dt_dim d)
{
  return d == DT_DIM_NONE ? "none" : dt_dim_name(d);
}

static void jnum(yajl_gen g, const char *key, double v)
{
  char buf[64];
  if (!(v == v) || v > 1e308 || v < -1e308)
    v = 0;
  snprintf(buf, sizeof buf, "%.17g", v);
  jstr(g, key);
  yajl_gen_number(g, buf, strlen(buf));
}

static void jint(yajl_gen g, const char *key, double v)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%.0f", v);
  jstr(g, key);
  yajl_gen_number(g, buf, strlen(buf));
}

static void jrow(yajl_gen g, double count, double without, double with)
{
  jint(g, "count", count);
  jnum(g, "baseline_time_s", without);
  jnum(g, "time_s", with);
  jnum(g, "added_s", added(with, without));
  jnum(g, "ratio", ratio(with, without));
}

void dt_faultcmp_json(yajl_gen g, const dt_fault_cmp *cmp)
{
  static const char *const kinds[] = {"degrade", "fail", "flap"};
  const double *b = cmp->base.v, *r = cmp->run.v;
  jstr(g, "faults");
  yajl_gen_map_open(g);
  jstr(g, "applied");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < cmp->faults->n; i++) {
    const dt_fault *x = &cmp->faults->v[i];
    yajl_gen_map_open(g);
    jstr(g, "kind");
    jstr(g, kinds[x->kind]);
    jstr(g, "target");
    jstr(g, x->target);
    jint(g, "links", (double)x->nlinks);
    if (x->kind == DT_FAULT_DEGRADE)
      jnum(g, "factor", x->factor);
    if (x->kind == DT_FAULT_FAIL)
      jnum(g, "at_s", x->at_s);
    if (x->kind == DT_FAULT_FLAP) {
      jnum(g, "period_s", x->period_s);
      jnum(g, "down_s", x->down_s);
      jnum(g, "start_s", x->start_s);
    }
    char why[256];
    const char *remark = fault_remark(cmp->faults, i, run_end(cmp), why, sizeof why);
    if (remark) {
      jstr(g, "remark");
      jstr(g, remark);
    }
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  jstr(g, "aborted");
  yajl_gen_bool(g, r[H_ABORTED] > 0);
  jnum(g, "baseline_makespan_s", b[H_MAKESPAN]);
  jnum(g, "makespan_s", r[H_MAKESPAN]);
  jnum(g, "baseline_iteration_s", b[H_ITER]);
  if (r[H_ABORTED] > 0) { /* the stopped run completed no iteration to compare (the text says so too) */
    jstr(g, "iteration_s");
    yajl_gen_null(g);
    jstr(g, "iteration_delta_s");
    yajl_gen_null(g);
  } else {
    jnum(g, "iteration_s", r[H_ITER]);
    jnum(g, "iteration_delta_s", added(r[H_ITER], b[H_ITER]));
  }
  jstr(g, "by_kind");
  yajl_gen_map_open(g);
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (kind_shown((dt_op_kind)k) && (r[K_AT(k)] > 0 || b[K_AT(k)] > 0)) {
      jstr(g, dt_op_kind_name((dt_op_kind)k));
      yajl_gen_map_open(g);
      jrow(g, r[K_AT(k)], b[K_AT(k) + 1], r[K_AT(k) + 1]);
      yajl_gen_map_close(g);
    }
  yajl_gen_map_close(g);
  jstr(g, "by_dim");
  yajl_gen_map_open(g);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (r[D_AT(d)] > 0 || b[D_AT(d)] > 0) {
      jstr(g, dim_key((dt_dim)d));
      yajl_gen_map_open(g);
      jrow(g, r[D_AT(d)], b[D_AT(d) + 1], r[D_AT(d) + 1]);
      jnum(g, "baseline_exposed_s", b[D_AT(d) + 2]);
      jnum(g, "exposed_s", r[D_AT(d) + 2]);
      yajl_gen_map_close(g);
    }
  yajl_gen_map_close(g);
  jstr(g, "by_group");
  yajl_gen_array_open(g);
  size_t n;
  size_t *idx = groups_by_delta(cmp, &n);
  for (size_t i = 0; i < n; i++) {
    size_t gi = idx[i];
    yajl_gen_map_open(g);
    jstr(g, "group");
    jstr(g, group_name(cmp->trace, gi));
    jstr(g, "dim");
    jstr(g, dim_key(group_dim(cmp->trace, gi)));
    jrow(g, r[G_AT(gi)], b[G_AT(gi) + 1], r[G_AT(gi) + 1]);
    yajl_gen_map_close(g);
  }
  free(idx);
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
}
