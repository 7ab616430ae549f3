/* What SimGrid knows of a flow in flight, for the per-link accounting of a run that stops while flows move data
 * (replay/dt_linkload.h, dt_linkload_stop): a small C++ piece beside dt_sg_platform.cpp, behind a C call. */
#ifndef DT_SG_FLIGHT_H
#define DT_SG_FLIGHT_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where comm stands (posted with sg_mailbox_put_async or _get_async, its waiter still in SimGrid's wait): 0 when
 * its peer has not posted it yet (nothing moves); else 1, with *start_s the simulated time both sides had posted it
 * (its data moves from then on, after its route's latency), *finish_s the time it completed (-1: not yet) and
 * *remaining the simulated bytes it has still to move (its size while it pays its latency, 0 once complete). No
 * simcall: other actors do not run meanwhile. */
int dt_sg_comm_progress(sg_comm_t comm, double *start_s, double *finish_s, double *remaining);

#ifdef __cplusplus
}
#endif

#endif
