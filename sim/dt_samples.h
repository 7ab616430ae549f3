/* Uncertainty (`dtsim run --samples N`, docs/whatif.md): the same run under N jitter seeds (seed, seed+1, ...), each
 * but the first in a child process (SimGrid runs once per process, dt_fork.h), and the mean and 5-95 % interval
 * of the iteration time and of each part of the critical-path split. */
#ifndef DT_SAMPLES_H
#define DT_SAMPLES_H

#include "../replay/dt_replay.h"

#include <stddef.h>
#include <stdint.h>

#define DT_SAMPLES_MAX 100000 /* --samples at most this */
/* A --samples run whose seeds will take this long or more (wall seconds, estimated from the first child's time)
 * says so on stderr before going on, and then every DT_SAMPLES_PROGRESS_S how many seeds are done. */
#define DT_SAMPLES_ESTIMATE_S 10.0
#define DT_SAMPLES_PROGRESS_S 30.0

/* What one seed's run contributes, in seconds. */
typedef struct dt_sample_point {
  double iteration_s;          /* mean of its iterations_s */
  double makespan_s;
  double compute_s, host_s, wait_s; /* its critical path's split (dt_critical) */
  double comm_s[DT_DIM_COUNT];      /* exposed communication on the critical path per dimension, over kinds */
  int stopped;                      /* DT_SAMPLE_OK, or the run stopped early: its numbers are not summarised */
} dt_sample_point;

enum { DT_SAMPLE_OK = 0, DT_SAMPLE_ABORTED, DT_SAMPLE_DEADLOCK };

/* Mean and the 5 % and 95 % quantiles (linear interpolation between order statistics: Hyndman and Fan's
 * definition 7, numpy's default) over the samples. */
typedef struct dt_sample_stat {
  double mean, p5, p95;
} dt_sample_stat;

typedef struct dt_samples {
  size_t n;                 /* samples (seeds) */
  uint64_t seed0;           /* the first seed; sample i ran seed0 + i */
  double sigma;             /* the jitter's lognormal sigma */
  dt_sample_point *points;  /* n, owned: point i is seed seed0 + i */
  size_t ncompleted;        /* seeds whose run completed: the summaries are over these */
  size_t naborted, ndeadlocked; /* seeds a link failure stopped (aborted) or that deadlocked */
  dt_sample_stat iteration_s, makespan_s, compute_s, host_s, wait_s, comm_s[DT_DIM_COUNT];
  int has_dim[DT_DIM_COUNT]; /* a dimension with communication on the critical path in some sample */
} dt_samples;

/* The point of one run's statistics (stopped set when it was aborted or deadlocked). */
void dt_sample_point_of(const dt_stats *s, dt_sample_point *out);

/* Runs seeds seed0 + 1 ... seed0 + n - 1 of p and t with the options ro (their variability's seed replaced; no
 * per-link accounting, no timeline), one child process each, and returns *out with those n - 1 points at 1..n-1;
 * the caller runs seed0 itself and gives its statistics to dt_samples_finish. Call before any replay in this
 * process. A seed whose run was aborted or deadlocked is kept with its point's `stopped` set (the caller reports
 * it and exits 1); returns DT_ERR with err set (naming the seed) only when a child fails otherwise. */
int dt_samples_run(const dt_platform *p, const dt_trace *t, const dt_replay_opts *ro, size_t n, uint64_t seed0,
                   dt_samples **out, dt_error *err);
/* Stores the first seed's statistics as point 0 and computes the summaries over the seeds that completed (all
 * zero when none did). */
void dt_samples_finish(dt_samples *sm, const dt_stats *first);
void dt_samples_free(dt_samples *sm);

#endif
