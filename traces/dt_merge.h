/* Several jobs in one trace (docs/whatif.md, "Several jobs on one fabric"): the traces of jobs that share a
 * cluster become one trace whose ranks are the jobs' ranks one job after another, so that one replay runs them
 * together and every whole-trace analysis (the replay's shortcuts) sees all of them. */
#ifndef DT_MERGE_H
#define DT_MERGE_H

#include "dt_trace.h"

/* Most jobs one merged trace holds. */
#define DT_MERGE_MAX_JOBS 16

/* Builds a new trace (caller frees with dt_trace_free) from njobs (1 .. DT_MERGE_MAX_JOBS) validated traces:
 * job j's rank r becomes rank first[j] + r (first[0] = 0, first[njobs] = the total; first has njobs + 1
 * entries), its groups are renamed "NAME/group" (names[j], its dimension kept), its sends keep their peers in
 * the job, and its files, metas and notes are kept (metas and notes prefixed with "NAME: "). Ranks that run a
 * template keep it unless one of their peers would wrap around the job (an expanded capture's ring), then they
 * get a copy of their template's ops. Returns DT_OK with *out validated, or DT_ERR (err set) when there are too
 * many jobs or ranks, or validation fails (it should not for validated inputs). Time and memory O(ops owned +
 * template users x groups). */
int dt_trace_merge(dt_trace *const *jobs, const char *const *names, size_t njobs, int32_t *first, dt_trace **out,
                   dt_error *err);

#endif
