/* State shared by the replay's actors (dt_replay.c) and the collective algorithms (dt_collectives.c).
 * Internal to replay/: one simulation per process, so one context lives for the duration of dt_replay_run. */
#ifndef DT_REPLAY_INTERNAL_H
#define DT_REPLAY_INTERNAL_H

#include "../platforms/dt_topology.h"
#include "../traces/dt_trace.h"
#include "dt_replay.h"

#include <simgrid/forward.h>

#include <stddef.h>
#include <stdint.h>

/* Run-time state of one collective instance: arrivals so far and the semaphore early members block on
 * until the last one arrives. Created by the first member, destroyed by the last one to finish. */
typedef struct rp_instance {
  int32_t arrived;
  int32_t finished;
  sg_sem_t sem;
} rp_instance;

/* Group-local index lookup: (global rank, index in group) sorted by rank. */
typedef struct rp_member {
  int32_t rank;
  int32_t index;
} rp_member;

typedef struct rp_ctx {
  const dt_platform *p;
  const dt_trace *t;
  dt_topology *topo;
  dt_fidelity fidelity;
  const int32_t *gpu_of_rank; /* nranks entries */
  sg_host_t *host_of_rank;    /* nranks entries */

  rp_instance *instances; /* t->ninstances entries */
  rp_member **members;    /* per group: its members sorted by global rank */
  double *ring_alpha;     /* per group: max route latency over the ring's hops, < 0 until computed */
} rp_ctx;

/* Runs collective op (a member of instance op->match) for global rank `rank`: arrives at the instance,
 * blocks until the last member has arrived, then runs the algorithm as flows between member hosts.
 * Returns when this member's part is complete. Called from an actor on the rank's host. */
void rp_collective_run(rp_ctx *c, const dt_op *op, int32_t rank);

/* Group-local index of global rank in group g, or -1. */
int32_t rp_member_index(const rp_ctx *c, int32_t g, int32_t rank);

/* Bytes each member of an all-to-all sends in total (sum of splits, or bytes). */
uint64_t rp_alltoall_bytes(const dt_op *op);

#endif
