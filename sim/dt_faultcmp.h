/* What slow and failed links cost (docs/whatif.md, docs/report.md "faults"): the same run without the faults
 * (the baseline, simulated in a forked child: SimGrid runs once per process) and with them, compared per
 * collective kind, parallelism dimension and group, and per iteration. */
#ifndef DT_FAULTCMP_H
#define DT_FAULTCMP_H

#include "../common/dt_error.h"
#include "../platforms/dt_platform.h"
#include "../replay/dt_degrade.h"
#include "../replay/dt_replay.h"
#include "../traces/dt_trace.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

/* One run's totals, plain doubles (they cross the fork's pipe): see dt_faultcmp.c for the layout. */
typedef struct dt_fault_tally {
  size_t n;
  double *v; /* owned */
} dt_fault_tally;

typedef struct dt_fault_cmp {
  const dt_trace *trace;    /* borrowed */
  dt_faults *faults;        /* borrowed, resolved (dt_faults_apply filled their link counts); the baseline sets
                               its natural end (dt_faults_set_natural_end) */
  dt_fault_tally base, run; /* without and with the faults */
  dt_fault_tally *cur;      /* the one the per-instance callback fills */
} dt_fault_cmp;

/* Prepares cmp for trace t and faults f (both borrowed, must outlive cmp) and hooks the per-instance tally into
 * opts (on_instance): call before dt_replay_run of the run with the faults. */
void dt_faultcmp_init(dt_fault_cmp *cmp, const dt_trace *t, dt_faults *f, dt_replay_opts *opts);

/* A --flap with this many outages or more over the baseline's makespan gets a note on stderr before the run. */
#define DT_FAULTCMP_OUTAGES_NOTE 1e5

/* Simulates the baseline: p and t with opts minus its faults, in a child process, into cmp->base; gives the faults
 * its makespan as the run's natural end (dt_faults_set_natural_end); then notes a --flap that will have
 * DT_FAULTCMP_OUTAGES_NOTE outages or more. Returns DT_OK, or DT_ERR with err set when the
 * child fails (its error is the child's). */
int dt_faultcmp_baseline(dt_fault_cmp *cmp, const dt_platform *p, const dt_replay_opts *opts, dt_error *err);

/* Fills cmp->run's per-kind, iteration and critical-path totals from the run with the faults (its per-instance
 * totals were tallied during the run). */
void dt_faultcmp_finish(dt_fault_cmp *cmp, const dt_stats *s);

/* The report's section: text (a table per kind, per dimension, the groups slowed most) and the JSON object
 * "faults" (docs/report.md; its key and value are written into g). */
void dt_faultcmp_text(FILE *f, const dt_fault_cmp *cmp);
void dt_faultcmp_json(yajl_gen g, const dt_fault_cmp *cmp);

void dt_faultcmp_free(dt_fault_cmp *cmp);

#endif
