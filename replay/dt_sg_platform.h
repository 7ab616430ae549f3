/* The one C++ piece: builds the SimGrid platform for a dt_topology (DESIGN.md §2-§3), behind a C call. */
#ifndef DT_SG_PLATFORM_H
#define DT_SG_PLATFORM_H

#include "../common/dt_error.h"
#include "../platforms/dt_topology.h"

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts SimGrid (simgrid_init) with argc/argv, catching what SimGrid throws on a bad --cfg key or value so
 * that it becomes DT_ERR with err set instead of an abort. Call once per process, before dt_sg_platform_build. */
int dt_sg_init(int *argc, char **argv, dt_error *err);

/* Must run after simgrid_init() and before any actor is created. Sets the network model that makes flows
 * match the alpha-beta closed forms (network/model:CM02, network/crosstraffic:0, network/TCP-gamma:0),
 * then creates one host per global GPU, named "gpu<global index>", and links/routes realising exactly
 * dt_topology_route() for every pair (same links, directions, latencies, bandwidths; src == dst is the
 * loopback over the GPU's own port). Link dt_topology_link_name(i) becomes SimGrid links NAME_UP and NAME_DOWN.
 * Hosts get speed gpu.peak * gpu.efficiency (FLOP/s) and data NULL. t (and its platform) must outlive the
 * simulation: routes are computed from it on demand. Returns DT_OK, or DT_ERR with err set if SimGrid rejects
 * the platform or a platform was already built. Call once per process. docs/simgrid-mapping.md explains how. */
int dt_sg_platform_build(const dt_topology *t, dt_error *err);

/* Waits for n comms as sg_comm_wait_all does (releasing the caller's references) and fills start[i] and finish[i]
 * with the simulated times comm i started moving data (both sides posted) and completed, in seconds. If the actor
 * is killed while it waits (a run a link failure aborted, the end of a deadlocked one), the comms are marked
 * cancelled before their references go, so that SimGrid prints no backtrace for them. */
void dt_sg_comm_wait_all_times(sg_comm_t *comms, size_t n, double *start, double *finish);

/* Waits for the first of n comms (n >= 1) to complete, as sg_comm_wait_any does (releasing the caller's reference
 * to that one only), and returns its index, with the simulated times it started moving data (both sides posted)
 * and completed in *start and *finish (s). also[0, nalso) are the caller's other comms in flight, not waited here:
 * if the actor is killed while it waits, they are released with the waited ones, all marked cancelled (as
 * dt_sg_comm_wait_all_times does); otherwise they are left alone. */
size_t dt_sg_comm_wait_any_times(sg_comm_t *comms, size_t n, sg_comm_t *also, size_t nalso, double *start,
                                 double *finish);

/* Whether a SimGrid link (one direction) carries at least one flow now (s4u::Link::is_used). */
int dt_sg_link_in_use(sg_link_t link);

/* Deadlock detection while daemon actors keep the clock moving (a --flap's outages, replay/dt_degrade.h): SimGrid
 * finds a deadlock only when no event is left, which a periodic daemon never lets happen. dt_sg_activity_watch
 * (once, before simgrid_run; it costs a callback per sleep and per comm posted, so only runs with such daemons
 * call it) counts the actors sleeping (but those given to dt_sg_activity_ignore) and bumps an epoch whenever one
 * starts a sleep or a comm is posted. dt_sg_activity_quiet returns 1 when none sleeps and no link carries a flow,
 * and stores the
 * epoch: two quiet answers a while apart with the same epoch mean that nothing but daemons can act any more
 * (every other actor waits on something that will never come). It scans every link: call it now and then. */
void dt_sg_activity_watch(void);
/* Leaves actor (a daemon that keeps the clock moving) out of the count. */
void dt_sg_activity_ignore(sg_actor_t actor);
int dt_sg_activity_quiet(unsigned long *epoch);

#ifdef __cplusplus
}
#endif

#endif
