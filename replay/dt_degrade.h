/* Slow, failed and flapping links (docs/whatif.md): `--degrade TARGET=FACTOR`, `--fail LINK@TIME` and
 * `--flap LINK=PERIOD,DOWNTIME[,START]`, parsed here, resolved against a dt_topology's link names and classes,
 * applied to its link table before the SimGrid platform is built (so every reader of routes and bandwidths sees
 * them), and, for what changes during the run, played by a SimGrid daemon actor. */
#ifndef DT_DEGRADE_H
#define DT_DEGRADE_H

#include "../common/dt_error.h"
#include "../platforms/dt_topology.h"
#include "../traces/dt_trace.h"

#include <simgrid/forward.h>
#include <stddef.h>
#include <stdint.h>

/* The smallest --degrade factor, and the shortest --flap period, s (each outage re-solves the sharing). */
#define DT_DEGRADE_FACTOR_MIN 1e-9
#define DT_FLAP_PERIOD_MIN 1e-3

typedef enum { DT_FAULT_DEGRADE = 0, DT_FAULT_FAIL, DT_FAULT_FLAP } dt_fault_kind;

/* One fault as given on the command line. */
typedef struct dt_fault {
  dt_fault_kind kind;
  char *target;    /* a link class ("leaf-spine", degrade only) or a link name as `dtsim platform show --links` prints
                      it ("nic3.1", "cable:leaf0-spine3"; the "cable:" prefix may be left out); owned */
  double factor;   /* degrade: bandwidth multiplier in (0, 1] */
  double at_s;     /* fail: simulated time the link fails (0: failed from the start) */
  double period_s; /* flap: time between the starts of two outages */
  double down_s;   /* flap: length of each outage, 0 < down_s < period_s */
  double start_s;  /* flap: start of the first outage (default 0) */
  size_t nlinks;   /* links it resolved to (dt_faults_apply), 0 before */
  size_t link;     /* fail, flap: the link's index (dt_faults_apply) */
} dt_fault;

/* The faults of one run, in command-line order. Zero-initialised (or dt_faults_init) is the empty set. */
typedef struct dt_faults {
  size_t n;
  dt_fault *v;
  int has_end;     /* dt_faults_set_natural_end was called: */
  double end_s;    /* the end of the same run without the faults (s) */
} dt_faults;

void dt_faults_init(dt_faults *f);
/* Frees what the set owns and empties it (a NULL f is a no-op). */
void dt_faults_clear(dt_faults *f);

/* Parses one option's argument and appends it: DEGRADE "TARGET=FACTOR" (FACTOR a plain number from DT_DEGRADE_FACTOR_MIN to 1), FAIL
 * "LINK@TIME" (TIME with a unit such as 10ms, or 0 for failed from the start), FLAP "LINK=PERIOD,DOWNTIME[,START]"
 * (times with units, 0 < DOWNTIME < PERIOD). Names are checked later (dt_faults_apply: they need the platform).
 * Returns 0, or -1 with why (size why_size) saying what was expected and what was found. */
int dt_faults_parse(dt_faults *f, dt_fault_kind kind, const char *arg, char *why, size_t why_size);

/* 1 when a fault changes the links during the run (a --fail at a time > 0, a --flap): the replay's shortcuts
 * are then turned off (they decide from the links before the run) and dt_faults_start starts its daemons. 0 when
 * every fault is such a change at or after the natural end (dt_faults_set_natural_end): the run is the one without
 * them up to that end, so none can act, and the run is simulated as without them. */
int dt_faults_dynamic(const dt_faults *f);

/* The same run without the faults ends at end_s (s; its last op, docs/whatif.md): what dt_faults_dynamic weighs. */
void dt_faults_set_natural_end(dt_faults *f, double end_s);

/* Resolves every target against topo's link names and classes (fills nlinks and link) and applies what holds
 * from the start: a degrade multiplies the bandwidth of each link it names (dt_topology_scale_bandwidth), a fail
 * at time 0 marks its link down (dt_topology_set_down: routes avoid it). Returns DT_OK, or DT_ERR with err naming
 * the unknown target, the nearest names (did you mean) and how to list them, or a class given to --fail/--flap. */
int dt_faults_apply(dt_faults *f, dt_topology *topo, dt_error *err);

/* Finds a pair of global ranks that must communicate in trace t (two members of one group, either direction, or
 * a send's ranks) but whose route is unreachable on topo (dt_topology_route: a failed link with no detour).
 * gpu_of_rank maps ranks to GPUs. Returns 1 with *a and *b set, or 0 when every such pair has a route. Costs
 * one route per ordered member pair of each group and per send: call only when a link is down. */
int dt_faults_unreachable(const dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank, int32_t *a,
                          int32_t *b);

/* DT_OK when dt_faults_unreachable finds no pair, else DT_ERR with err naming the pair ("the failed links
 * partition the fabric: ranks 3 and 12 ..."). */
int dt_faults_partition_error(const dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank, dt_error *err);

/* Checks f against platform p before anything runs: builds a topology, resolves and applies f
 * (dt_faults_apply) and looks for a partition (dt_faults_partition_error) with placement (global GPU per rank,
 * or NULL for rank r on GPU r). Returns DT_OK or DT_ERR with err set as those do. */
int dt_faults_check(dt_faults *f, const dt_platform *p, const dt_trace *t, const int32_t *placement, dt_error *err);

/* What a fault did, one line for the report's notes ("degrade leaf-spine x0.5: 64 links", ...), into buf. */
const char *dt_fault_describe(const dt_fault *x, const dt_topology *topo, char *buf, size_t size);

/* Called by the runtime part when the run must stop at simulated time now_s (why: a lowercase sentence), or,
 * with why NULL, when routes changed at now_s (a link failed and flows started later take detours: drop what
 * caches routes). */
typedef void (*dt_fault_abort_fn)(void *data, double now_s, const char *why);

/* Starts the runtime part inside the SimGrid simulation (after dt_sg_platform_build, before simgrid_run): one
 * daemon actor per fail at a time > 0 and per flap, on host `host` (any host; it only sleeps). A fail at time T:
 * if a flow crosses the link at T (SimGrid's link is in use), abort(data, T, why) -- NCCL has no retransmission
 * over another path, its communicator reports a transport error and the job stops; else the link is marked down
 * in topo so that flows started after T take the detour, and if some pair of t can then no longer reach each
 * other, abort names it. A flap: during each outage the link's SimGrid bandwidth (both directions) drops to
 * 1 byte/s (SimGrid ignores a bandwidth of 0) and flows crossing it stall, then it is restored; routes do not
 * change. topo, t, gpu_of_rank and f must outlive the simulation. Returns DT_OK, or DT_ERR when a link is
 * missing from the SimGrid platform. */
int dt_faults_start(const dt_faults *f, dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank,
                    sg_host_t host, dt_fault_abort_fn abort_fn, void *data, dt_error *err);
/* Frees the runtime part's state (after simgrid_run; a no-op when nothing was started). */
void dt_faults_stop(void);

#endif
