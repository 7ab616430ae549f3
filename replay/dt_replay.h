/* Replay: runs a validated trace on a platform with SimGrid (DESIGN.md §6) and returns statistics.
 * SimGrid can be initialised once per process: call dt_replay_run at most once per process. */
#ifndef DT_REPLAY_H
#define DT_REPLAY_H

#include "../platforms/dt_platform.h"
#include "../traces/dt_trace.h"
#include "dt_stats.h"
#include "dt_variability.h"

typedef enum { DT_FIDELITY_FLOW = 0, DT_FIDELITY_STEP } dt_fidelity;

/* One completed collective instance or send/recv pair, as the replay accounts it (DESIGN.md §7). Passed to
 * dt_replay_opts.on_instance when its last member completes; valid only during the call. */
typedef struct dt_instance_record {
  dt_op_kind kind;       /* the collective's kind, or DT_OP_SEND for a send/recv pair */
  int32_t group;         /* group index in the trace (-1 for a pair) */
  int32_t src, dst;      /* a pair's global ranks (-1 for a collective) */
  int64_t seq;           /* the instance's sequence number on its group, or the pair's on its channel (dt_op.match) */
  uint64_t bytes;        /* per-rank input bytes (an all-to-all: the sum a member sends; a barrier: 0) */
  int32_t nranks;        /* members (2 for a pair) */
  double arrival_last_s; /* simulated time the last member issued it */
  double end_s;          /* simulated time the last member completed it */
  const char *algo;      /* algorithm that ran ("ring", "chain", "direct", "p2p", ...), static, never NULL */
  const char *proto;     /* protocol that ran ("simple", "ll", ...), static, or NULL when the model has none */
} dt_instance_record;

/* Called once per completed instance or pair, in completion order, from inside the simulation. */
typedef void (*dt_instance_fn)(const dt_instance_record *rec, void *data);

typedef struct dt_replay_opts {
  dt_fidelity fidelity;       /* default flow */
  const int32_t *placement;   /* global GPU of each rank (nranks entries), or NULL for the default
                                 rank r -> node r / G, GPU r mod G */
  dt_algo algo;               /* DT_ALGO_AUTO (default): chosen per instance as NCCL's tuner does; else forced */
  int proto;                  /* a dt_proto to force, or -1 (default): chosen per instance */
  int simgrid_argc;           /* extra SimGrid --cfg/--log arguments, may be 0 */
  char **simgrid_argv;
  dt_instance_fn on_instance; /* optional, NULL by default: per-instance records (dtsim bench) cost nothing
                                 when unset, and the replay keeps no list of them */
  void *on_instance_data;     /* passed to on_instance */
  int links;                  /* per-link accounting (dt_linkload.h, stats->links): 1 (default) or 0 (off) */
  const char *timeline;       /* Chrome trace event file to write (dt_timeline.h), or NULL (default) */
  const int32_t *timeline_ranks; /* the ranks it shows (ntimeline_ranks), or NULL: every rank */
  size_t ntimeline_ranks;
  int explain;                /* 1: keep dt_stats.explain rows (the choice and estimate of every collective shape);
                                 0 (default): none */
  int exact;                  /* 0 (default): exact shortcuts allowed (docs/replay.md, "Shortcuts"); 1: every
                                 exchange is simulated as SimGrid flows (--exact) */
  const int32_t *job_of_rank; /* several jobs in one trace (traces/dt_merge.h): each rank's job, 0 .. njobs-1,
                                 or NULL (default): stats->jobs and the links' per-job bytes are then left out */
  int32_t njobs;              /* 1 .. DT_LINK_MAX_JOBS when job_of_rank is set */
  struct dt_faults *faults;   /* slow, failed and flapping links (replay/dt_degrade.h), or NULL (default); resolved
                                 against the platform by the run (it fills their link counts) */
  const dt_var_opts *variability; /* --slow, --late, --jitter, --seed (dt_variability.h), or NULL (default): the
                                 platform's `variability:` section alone applies */
} dt_replay_opts;

/* Fills the defaults: flow fidelity, default placement, auto algorithm and protocol, no SimGrid arguments, no
 * per-instance callback, per-link accounting on, shortcuts allowed. */
void dt_replay_opts_init(dt_replay_opts *o);

/* Reads a placement file (lines `rank node gpu`, `#` comments) for nranks ranks on platform p into a new
 * array of nranks global GPU indices (caller frees). Ranks not listed keep the default placement. Errors
 * (file:line): bad line, rank/node/gpu out of range, a GPU used twice. */
int dt_placement_load(const char *path, const dt_platform *p, int32_t nranks, int32_t **gpu_of_rank, dt_error *err);
/* The same, and *nlisted = how many ranks the file places (the others keep the default; callers say so). */
int dt_placement_load_listed(const char *path, const dt_platform *p, int32_t nranks, int32_t **gpu_of_rank,
                             size_t *nlisted, dt_error *err);

/* Simulates trace t (validated) on platform p. Returns DT_OK and *out (free with dt_stats_free) when the
 * simulation ran; a deadlock is not an error: (*out)->ndeadlock > 0 lists the blocked ops. Returns DT_ERR
 * (err set) for input that cannot run: more ranks than GPUs, a bad placement, a fabric that does not fit, a fault
 * naming no link, failed links that leave two communicating ranks without a route. A link failure during the run
 * that NCCL would not survive is not an error either: (*out)->aborted says why and when. */
int dt_replay_run(const dt_platform *p, const dt_trace *t, const dt_replay_opts *opts, dt_stats **out,
                  dt_error *err);

#endif
