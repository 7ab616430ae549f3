/* Replay: runs a validated trace on a platform with SimGrid (DESIGN.md §6) and returns statistics.
 * SimGrid can be initialised once per process: call dt_replay_run at most once per process. */
#ifndef DT_REPLAY_H
#define DT_REPLAY_H

#include "../platforms/dt_platform.h"
#include "../traces/dt_trace.h"
#include "dt_stats.h"

typedef enum { DT_FIDELITY_FLOW = 0, DT_FIDELITY_STEP } dt_fidelity;

typedef struct dt_replay_opts {
  dt_fidelity fidelity;       /* default flow */
  const int32_t *placement;   /* global GPU of each rank (nranks entries), or NULL for the default
                                 rank r -> node r / G, GPU r mod G */
  int simgrid_argc;           /* extra SimGrid --cfg/--log arguments, may be 0 */
  char **simgrid_argv;
} dt_replay_opts;

void dt_replay_opts_init(dt_replay_opts *o);

/* Reads a placement file (lines `rank node gpu`, `#` comments) for nranks ranks on platform p into a new
 * array of nranks global GPU indices (caller frees). Ranks not listed keep the default placement. Errors
 * (file:line): bad line, rank/node/gpu out of range, a GPU used twice. */
int dt_placement_load(const char *path, const dt_platform *p, int32_t nranks, int32_t **gpu_of_rank, dt_error *err);

/* Simulates trace t (validated) on platform p. Returns DT_OK and *out (free with dt_stats_free) when the
 * simulation ran; a deadlock is not an error: (*out)->ndeadlock > 0 lists the blocked ops. Returns DT_ERR
 * (err set) for input that cannot run: more ranks than GPUs, a bad placement, a fabric that does not fit. */
int dt_replay_run(const dt_platform *p, const dt_trace *t, const dt_replay_opts *opts, dt_stats **out,
                  dt_error *err);

#endif
