/* Per-link accounting (docs/report.md, bottleneck report): every transfer of bytes between two GPUs is recorded
 * with one call, dt_linkload_add, whether SimGrid carried it as a flow or a model computed it analytically.
 * dtsim maps the transfer onto the links of its route (dt_topology_route, not SimGrid's load plugin) and keeps,
 * per direction of every link: bytes, busy time (the length of the union of the intervals with at least one
 * transfer active), the peak number of concurrent transfers, and the bytes by parallelism dimension, op kind
 * and group; dt_linkload_finish aggregates them per link class. Memory: a fixed record per link direction, a
 * (link, group) table, and the intervals not yet folded (folded below a watermark no later transfer starts
 * before, so they follow the transfers in flight, not the run's length). */
#ifndef DT_LINKLOAD_H
#define DT_LINKLOAD_H

#include "../platforms/dt_topology.h"
#include "../traces/dt_trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dt_linkload dt_linkload;

/* Most jobs the accounting tells apart (dt_linkload_set_jobs). */
#define DT_LINK_MAX_JOBS 16

/* Bytes one group put on one link direction. */
typedef struct dt_group_bytes {
  int32_t group;       /* group index in the trace, -1 for send/recv pairs */
  double bytes;
} dt_group_bytes;

/* One direction of one link that carried bytes. */
typedef struct dt_link_load {
  uint32_t link;       /* topology link index */
  uint8_t dir;         /* 0 up (out of the source side), 1 down (dt_hop.dir) */
  dt_link_class cls;
  char *name;          /* topology link name + " up" / " down", owned */
  double bandwidth;    /* bytes/s of the direction */
  double bytes;        /* payload bytes carried (before a protocol's efficiency) */
  double busy_s;       /* length of the union of the intervals with >= 1 transfer active */
  uint32_t peak_flows; /* most transfers active at once */
  uint64_t transfers;  /* transfers that crossed it */
  double by_dim[DT_DIM_COUNT];
  double by_kind[DT_OP_COUNT]; /* pairs under DT_OP_SEND */
  size_t ngroups;
  dt_group_bytes *groups; /* owned, by bytes, largest first (ties: group index) */
} dt_link_load;

/* One link class over the platform. */
typedef struct dt_class_load {
  size_t links;        /* link directions of the class in the platform */
  size_t used;         /* of them, those that carried bytes */
  double bytes;
  double busy_sum_s;   /* sum of busy_s over the used directions */
  double busy_max_s;   /* largest busy_s of one direction */
  uint32_t peak_flows; /* largest peak of one direction */
  uint64_t transfers;  /* link crossings */
  double by_dim[DT_DIM_COUNT];
  double by_kind[DT_OP_COUNT];
  /* with jobs (dt_linkload_set_jobs; else zero): bytes each job put on the class; the directions that carried
     bytes of two jobs or more, and the bytes each job put on those */
  double by_job[DT_LINK_MAX_JOBS];
  size_t shared;
  double shared_by_job[DT_LINK_MAX_JOBS];
} dt_class_load;

typedef struct dt_linkstats {
  uint64_t transfers;  /* dt_linkload_add calls with bytes > 0 */
  size_t nlinks;
  dt_link_load *links; /* used directions, busiest first (busy_s, then bytes / bandwidth, then link index and
                          direction) */
  dt_class_load classes[DT_LC_COUNT];
  int32_t njobs;       /* jobs told apart (dt_linkload_set_jobs), 0 without */
  double end_s;        /* the latest end of a transfer counted (s), 0 without any: at most the stop
                          (dt_linkload_stop) */
} dt_linkstats;

/* New accounting for the links of topo, with the trace t's group labels. Both are borrowed and must outlive it. */
dt_linkload *dt_linkload_new(const dt_topology *topo, const dt_trace *t);

/* Lets the accounting fold intervals: fn(data) returns a simulated time before which no transfer still to be
 * added starts (the replay: the earliest issue of an op still running or to come). Without it intervals are
 * kept until dt_linkload_finish. */
void dt_linkload_set_watermark(dt_linkload *ll, double (*fn)(void *data), void *data);

/* Also hands every transfer it records, as given (before a start is moved to the watermark), to fn(data, src_gpu,
 * dst_gpu, bytes, start_s, end_s): the transfers of dt_linkload_add and each flow of dt_linkload_add_set, in that
 * order, those with bytes > 0 and a route only (the timeline's fabric counters, dt_timeline_observe). fn NULL: none.
 * Costs nothing without it. */
void dt_linkload_set_observer(dt_linkload *ll,
                              void (*fn)(void *data, int32_t src_gpu, int32_t dst_gpu, double bytes, double start_s,
                                         double end_s),
                              void *data);

/* Tells jobs apart (several jobs on one fabric, docs/whatif.md): a transfer belongs to job job_of_gpu[its source
 * GPU] (one entry per GPU of the topology, borrowed, must outlive ll; -1: no job), 0 .. njobs - 1, njobs at most
 * DT_LINK_MAX_JOBS (more are ignored). Without this call nothing per job is kept. */
void dt_linkload_set_jobs(dt_linkload *ll, const int32_t *job_of_gpu, int32_t njobs);

/* Drops the routes cached per GPU pair: call when the topology's routes change (a link failed during the run,
 * replay/dt_degrade.h). NULL is a no-op. */
void dt_linkload_forget_routes(dt_linkload *ll);

/* The run stopped at simulated time t_s (a link failure aborted it, replay/dt_degrade.h): from now on every
 * transfer recorded is counted for the part of it before t_s only, its interval [start, min(end, t_s)) and its
 * bytes in proportion (bytes x the share of its interval before t_s: its mean rate); one that starts at or after
 * t_s counts nothing. The replay records a flow when it has moved its data (its end is then in the past) and a
 * modelled transfer when it starts (its end may be later), and the flows SimGrid was carrying when the run stopped
 * at t_s, with the bytes they had moved: so every transfer is counted for what it moved while it ran, and no link
 * direction is busy longer than the run (docs/report.md, "A run that stopped"). A later t_s than the first is
 * ignored; NULL is a no-op. */
void dt_linkload_stop(dt_linkload *ll, double t_s);

/* Records one transfer of `bytes` payload bytes from global GPU src_gpu to dst_gpu, active in simulated time
 * [start_s, end_s), for an op of `kind` on trace group `group` (-1 and DT_OP_SEND for a send/recv pair; the
 * group's dimension, or the trace's point-to-point dimension, labels it). A transfer from a GPU to itself
 * crosses its loopback port, as in the topology. Bytes <= 0 or a bad GPU: nothing is recorded. A start before
 * the watermark already folded is moved to it. O(route hops). */
void dt_linkload_add(dt_linkload *ll, int32_t src_gpu, int32_t dst_gpu, double bytes, double start_s, double end_s,
                     dt_op_kind kind, int32_t group);

/* Flow sets: transfers between fixed GPUs that are recorded together, again and again (a collective's exchange
 * over its group: every member to its ring successor). Registered once under a caller's key, their routes are
 * resolved once; each dt_linkload_add_set then logs one small record for all of them, however many, and the
 * per-direction work happens when the log is folded. The results are those of calling dt_linkload_add for each
 * flow in order, identical to the last bit.
 *
 * dt_linkload_set_find: the set registered under key, or -1 when there is none or when the routes changed since it
 * was (dt_linkload_forget_routes): then register it again. NULL ll: -1. */
int32_t dt_linkload_set_find(const dt_linkload *ll, uint64_t key);
/* Registers the nflows transfers src_gpu[k] -> dst_gpu[k] (global GPUs; arrays borrowed, copied) under key (a
 * key registered before now names this set) and returns the set's index, >= 0 (-1: NULL ll). Flows with no route
 * or a negative GPU are left out, as dt_linkload_add leaves them out. O(nflows) route lookups. */
int32_t dt_linkload_set_new(dt_linkload *ll, uint64_t key, size_t nflows, const int32_t *src_gpu,
                            const int32_t *dst_gpu);
/* Records every flow of set `set` as one transfer of `bytes`, active in [start_s, end_s), of `kind` on `group`:
 * the same as dt_linkload_add for each flow in order. Bytes <= 0 or a bad set: nothing. O(1) but for a fold. */
void dt_linkload_add_set(dt_linkload *ll, int32_t set, double bytes, double start_s, double end_s,
                         dt_op_kind kind, int32_t group);

/* How many dt_linkload_add_set records so far were applied once for all of their flows' directions instead of once
 * per direction: those of sets whose directions nothing else crossed (a tensor-parallel group's NVLink ports),
 * which therefore all have the same figures. For tests and benchmarks; NULL: 0. */
uint64_t dt_linkload_shared(const dt_linkload *ll);

/* Ends the accounting: folds what is left, frees ll, returns the results (free with dt_linkstats_free). */
dt_linkstats *dt_linkload_finish(dt_linkload *ll);

/* Frees results; NULL is a no-op. */
void dt_linkstats_free(dt_linkstats *s);

#endif
