/* Collective algorithms of the replay (DESIGN.md §6) as point-to-point flows between member hosts: ring
 * all-reduce / all-gather / reduce-scatter (barrier and `other` as all-reduce), pipelined-chain broadcast and
 * reduce, direct all-to-all. An instance starts when its last member arrives. docs/replay.md has the formulas. */
#include "dt_replay_internal.h"

#include "../common/dt_util.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Flows carry no data; every put sends the address of this byte and nobody frees it. */
static char payload_token;

int32_t rp_member_index(const rp_ctx *c, int32_t g, int32_t rank)
{
  const rp_member *m = c->members[g];
  size_t lo = 0, hi = c->t->groups[g].nranks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m[mid].rank < rank)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->t->groups[g].nranks && m[lo].rank == rank ? m[lo].index : -1;
}

uint64_t rp_alltoall_bytes(const dt_op *op)
{
  if (!op->splits)
    return op->bytes;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < op->nsplits; i++)
    sum += op->splits[i];
  return sum;
}

/* Mailbox on which member `member` of the live instance with id `inst` receives: per instance and
 * destination, so that concurrent instances between the same hosts never exchange messages. Ids are recycled
 * only once every member of the previous holder has completed, so its mailboxes are empty again. */
static sg_mailbox_t instance_mailbox(int64_t inst, int32_t member)
{
  char name[48];
  snprintf(name, sizeof name, "c%lld.%d", (long long)inst, (int)member);
  return sg_mailbox_by_name(name);
}

static long whole_bytes(double bytes)
{
  return bytes > 0 ? (long)llround(bytes) : 0;
}

static double route_latency(const rp_ctx *c, int32_t from_rank, int32_t to_rank)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double lat = 0;
  if (dt_topology_route(c->topo, c->gpu_of_rank[from_rank], c->gpu_of_rank[to_rank], hops, &lat, NULL) < 0)
    return 0;
  return lat;
}

/* Largest route latency over the hops member i -> i+1 (mod n) of group g, cached per group. */
static double ring_alpha(rp_ctx *c, int32_t g)
{
  if (c->ring_alpha[g] >= 0)
    return c->ring_alpha[g];
  const dt_group *gr = &c->t->groups[g];
  double a = 0;
  for (size_t i = 0; i < gr->nranks; i++) {
    double l = route_latency(c, gr->ranks[i], gr->ranks[(i + 1) % gr->nranks]);
    if (l > a)
      a = l;
  }
  c->ring_alpha[g] = a;
  return a;
}

/* Largest route latency over the chain's hops: position p = (i - root) mod n; broadcast sends p -> p+1,
 * reduce p+1 -> p. */
static double chain_alpha(const rp_ctx *c, const dt_group *gr, int32_t root, int toward_root)
{
  size_t n = gr->nranks;
  double a = 0;
  for (size_t p = 0; p + 1 < n; p++) {
    int32_t r0 = gr->ranks[((size_t)root + p) % n], r1 = gr->ranks[((size_t)root + p + 1) % n];
    double l = toward_root ? route_latency(c, r1, r0) : route_latency(c, r0, r1);
    if (l > a)
      a = l;
  }
  return a;
}

/* Sends send_bytes to member `to` (if to >= 0) and receives one message (if recv), concurrently; returns
 * when both are complete. */
static void exchange(int64_t inst, int32_t to, long send_bytes, int32_t self, int recv)
{
  sg_comm_t comms[2];
  size_t n = 0;
  void *got = NULL;
  if (to >= 0)
    comms[n++] = sg_mailbox_put_async(instance_mailbox(inst, to), &payload_token, send_bytes);
  if (recv)
    comms[n++] = sg_mailbox_get_async(instance_mailbox(inst, self), &got);
  if (n > 0)
    sg_comm_wait_all(comms, n);
}

/* Ring of n members of group g in group order: `steps` steps of `chunk` bytes each to the next member. */
static void run_ring(rp_ctx *c, int64_t inst, int32_t g, int32_t i, int32_t n, size_t steps, double chunk,
                     dt_fidelity fid)
{
  int32_t next = (i + 1) % n;
  if (fid == DT_FIDELITY_STEP) {
    long b = whole_bytes(chunk);
    for (size_t s = 0; s < steps; s++)
      exchange(inst, next, b, i, 1);
    return;
  }
  /* flow: one aggregated flow per neighbour carrying every step's bytes, then the latency of the other
   * steps, taken as the largest hop latency of the ring (exact when all hops are alike) */
  exchange(inst, next, whole_bytes(chunk * (double)steps), i, 1);
  double extra = (double)(steps - 1) * ring_alpha(c, g);
  if (extra > 0)
    sg_actor_sleep_for(extra);
}

/* Pipelined chain from the root in group order: all hops stream concurrently (α + S/B), plus the
 * pipeline fill of the other n-2 hops. */
static void run_chain(rp_ctx *c, const dt_op *op, int64_t inst, int32_t g, int32_t i, int32_t n, int toward_root)
{
  const dt_group *gr = &c->t->groups[g];
  int32_t root = op->root >= 0 && op->root < n ? op->root : 0;
  int32_t pos = (i - root + n) % n;
  int32_t to = -1;
  int recv = 0;
  if (!toward_root) { /* broadcast: p -> p+1 */
    if (pos < n - 1)
      to = (i + 1) % n;
    recv = pos > 0;
  } else { /* reduce: p+1 -> p, ending at the root */
    if (pos > 0)
      to = (i - 1 + n) % n;
    recv = pos < n - 1;
  }
  exchange(inst, to, whole_bytes((double)op->bytes), i, recv);
  if (n > 2)
    sg_actor_sleep_for((double)(n - 2) * chain_alpha(c, gr, root, toward_root));
}

/* Direct all-to-all: one flow to every other member (bytes/n each, or splits[j] to member j). */
static void run_alltoall(const dt_op *op, int64_t inst, int32_t i, int32_t n)
{
  sg_comm_t *comms = dt_xmalloc(sizeof *comms * 2 * (size_t)(n - 1));
  void **got = dt_xcalloc((size_t)n, sizeof *got);
  size_t k = 0;
  for (int32_t d = 1; d < n; d++) {
    int32_t j = (i + d) % n;
    double b = op->splits && (uint32_t)j < op->nsplits ? (double)op->splits[j] : (double)op->bytes / n;
    comms[k++] = sg_mailbox_put_async(instance_mailbox(inst, j), &payload_token, whole_bytes(b));
  }
  for (int32_t d = 1; d < n; d++)
    comms[k++] = sg_mailbox_get_async(instance_mailbox(inst, i), &got[d]);
  sg_comm_wait_all(comms, k);
  free(got);
  free(comms);
}

rp_live *rp_instance_of(rp_ctx *c, const dt_op *op, int32_t rank)
{
  int32_t g = dt_trace_op_group(c->t, rank, op);
  return rp_live_get(&c->instances, (uint64_t)g, (uint64_t)op->match, 0, (int32_t)c->t->groups[g].nranks);
}

void rp_collective_run(rp_ctx *c, const dt_op *op, int32_t rank)
{
  int32_t g = dt_trace_op_group(c->t, rank, op);
  int32_t n = (int32_t)c->t->groups[g].nranks;
  int32_t i = rp_member_index(c, g, rank);

  /* arrival: the instance starts when its last member issues it */
  rp_live *in = rp_instance_of(c, op, rank);
  double now = simgrid_get_clock();
  if (in->arrived == 0 || now > in->last_issue)
    in->last_issue = now;
  in->arrived++;
  if (n <= 1 || i < 0)
    return;
  if (in->arrived == 1)
    in->sem = sg_sem_init(0);
  if (in->arrived < n) {
    sg_sem_acquire(in->sem);
  } else {
    for (int32_t k = 0; k < n - 1; k++)
      sg_sem_release(in->sem);
  }
  int64_t inst = in->id; /* the record stays live until this member completes: `in` remains valid */

  double S = (double)op->bytes;
  double nn = (double)n;
  size_t steps = (size_t)n - 1;
  switch (op->kind) {
  case DT_OP_ALLREDUCE:
  case DT_OP_OTHER:
    run_ring(c, inst, g, i, n, 2 * steps, S / nn, c->fidelity);
    break;
  case DT_OP_BARRIER: /* zero-byte all-reduce; steps carry no bytes, so flow fidelity is exact */
    run_ring(c, inst, g, i, n, 2 * steps, 0, DT_FIDELITY_FLOW);
    break;
  case DT_OP_REDUCESCATTER:
    run_ring(c, inst, g, i, n, steps, S / nn, c->fidelity);
    break;
  case DT_OP_ALLGATHER:
    run_ring(c, inst, g, i, n, steps, S, c->fidelity);
    break;
  case DT_OP_BROADCAST:
    run_chain(c, op, inst, g, i, n, 0);
    break;
  case DT_OP_REDUCE:
    run_chain(c, op, inst, g, i, n, 1);
    break;
  case DT_OP_ALLTOALL:
    run_alltoall(op, inst, i, n);
    break;
  default:
    break;
  }
}
