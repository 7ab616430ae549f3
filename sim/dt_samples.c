/* `dtsim run --samples N` (dt_samples.h): one child process per extra seed, then the summaries. */
#include "dt_samples.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "dt_fork.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dt_sample_point_of(const dt_stats *s, dt_sample_point *out)
{
  memset(out, 0, sizeof *out);
  double sum = 0;
  for (size_t i = 0; i < s->niterations; i++)
    sum += s->iterations_s[i];
  out->iteration_s = s->niterations ? sum / (double)s->niterations : 0;
  out->makespan_s = s->makespan_s;
  out->stopped = s->aborted ? DT_SAMPLE_ABORTED : s->ndeadlock > 0 ? DT_SAMPLE_DEADLOCK : DT_SAMPLE_OK;
  const dt_critical *c = s->critical;
  if (!c)
    return;
  out->compute_s = c->compute_s;
  out->host_s = c->host_s;
  out->wait_s = c->wait_s;
  for (int d = 0; d < DT_DIM_COUNT; d++)
    for (int k = 0; k < DT_OP_COUNT; k++)
      out->comm_s[d] += c->comm_s[d][k];
}

typedef struct child_job {
  const dt_platform *p;
  const dt_trace *t;
  const dt_replay_opts *ro;
  uint64_t seed;
} child_job;

/* In the child: one replay under job->seed. */
static int run_seed(void *arg, void *out, dt_error *err)
{
  const child_job *job = arg;
  dt_replay_opts ro = *job->ro;
  dt_var_opts vo;
  memset(&vo, 0, sizeof vo);
  if (ro.variability)
    vo = *ro.variability; /* shallow: the child only reads it */
  vo.has_seed = 1;
  vo.seed = job->seed;
  ro.variability = &vo;
  ro.links = 0;
  ro.timeline = NULL;
  dt_stats *s = NULL;
  if (dt_replay_run(job->p, job->t, &ro, &s, err) != DT_OK)
    return DT_ERR;
  dt_sample_point_of(s, out); /* an aborted or deadlocked seed is counted, not summarised */
  dt_stats_free(s);
  return DT_OK;
}

int dt_samples_run(const dt_platform *p, const dt_trace *t, const dt_replay_opts *ro, size_t n, uint64_t seed0,
                   dt_samples **out, dt_error *err)
{
  *out = NULL;
  dt_samples *sm = dt_xcalloc(1, sizeof *sm);
  sm->n = n;
  sm->seed0 = seed0;
  sm->points = dt_xcalloc(n ? n : 1, sizeof *sm->points);
  double wall0 = dt_wall_now(), said = wall0;
  for (size_t i = 1; i < n; i++) {
    child_job job = {p, t, ro, seed0 + i};
    char what[64];
    snprintf(what, sizeof what, "the run of seed %llu", (unsigned long long)job.seed);
    if (dt_run_forked(run_seed, &job, &sm->points[i], sizeof sm->points[i], what, err) != DT_OK) {
      dt_samples_free(sm);
      return DT_ERR;
    }
    /* a long --samples says so up front (from the first seed's wall time), then how far it is now and then */
    double w = dt_wall_now(), per = (w - wall0) / (double)i, left = per * (double)(n - i); /* n - 1 children + us */
    char b1[32], b2[32];
    if (i == 1 && left >= DT_SAMPLES_ESTIMATE_S) {
      fprintf(stderr, "dtsim: --samples %zu: the first seed took %s of wall time, so the %zu seeds will take about "
              "%s, one after another (Ctrl-C stops)\n", n, dt_format_time(per, b1, sizeof b1), n,
              dt_format_time(per * (double)n, b2, sizeof b2));
      said = w;
    } else if (w - said >= DT_SAMPLES_PROGRESS_S) {
      fprintf(stderr, "dtsim: --samples: %zu of %zu seeds done, about %s left\n", i, n,
              dt_format_time(left, b1, sizeof b1));
      said = w;
    }
  }
  *out = sm;
  return DT_OK;
}

/* The summary of field `offset` (a double of dt_sample_point) over the points. */
static dt_sample_stat summarise(const dt_samples *sm, size_t offset, double *scratch)
{
  dt_sample_stat st = {0, 0, 0};
  double sum = 0;
  size_t m = 0; /* the seeds that completed */
  for (size_t i = 0; i < sm->n; i++) {
    if (sm->points[i].stopped != DT_SAMPLE_OK)
      continue;
    scratch[m] = *(const double *)((const char *)&sm->points[i] + offset);
    sum += scratch[m++];
  }
  if (m == 0)
    return st;
  dt_sort_doubles(scratch, m);
  st.mean = sum / (double)m;
  st.p5 = dt_quantile_sorted(scratch, m, 0.05);
  st.p95 = dt_quantile_sorted(scratch, m, 0.95);
  return st;
}

void dt_samples_finish(dt_samples *sm, const dt_stats *first)
{
  dt_sample_point_of(first, &sm->points[0]);
  sm->sigma = first->jitter_sigma;
  sm->ncompleted = sm->naborted = sm->ndeadlocked = 0;
  for (size_t i = 0; i < sm->n; i++) {
    int st = sm->points[i].stopped;
    sm->ncompleted += st == DT_SAMPLE_OK;
    sm->naborted += st == DT_SAMPLE_ABORTED;
    sm->ndeadlocked += st == DT_SAMPLE_DEADLOCK;
  }
  double *scratch = dt_xmalloc(sizeof *scratch * (sm->n ? sm->n : 1));
  sm->iteration_s = summarise(sm, offsetof(dt_sample_point, iteration_s), scratch);
  sm->makespan_s = summarise(sm, offsetof(dt_sample_point, makespan_s), scratch);
  sm->compute_s = summarise(sm, offsetof(dt_sample_point, compute_s), scratch);
  sm->host_s = summarise(sm, offsetof(dt_sample_point, host_s), scratch);
  sm->wait_s = summarise(sm, offsetof(dt_sample_point, wait_s), scratch);
  for (int d = 0; d < DT_DIM_COUNT; d++) {
    sm->comm_s[d] = summarise(sm, offsetof(dt_sample_point, comm_s) + sizeof(double) * (size_t)d, scratch);
    for (size_t i = 0; i < sm->n; i++)
      sm->has_dim[d] |= sm->points[i].stopped == DT_SAMPLE_OK && sm->points[i].comm_s[d] > 0;
  }
  free(scratch);
}

void dt_samples_free(dt_samples *sm)
{
  if (!sm)
    return;
  free(sm->points);
  free(sm);
}
