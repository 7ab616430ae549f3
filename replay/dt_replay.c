/* The replay (DESIGN.md §6-§7): one SimGrid actor per (rank, stream) runs the stream's ops (its own, or its
 * template's) in order, waits on `after=` edges, sends and receives through one mailbox per live pair, runs
 * collectives through dt_collectives.c, and folds each op's issue and completion times into the statistics as
 * it completes: per-rank interval unions kept short by a watermark, per-kind totals when an instance's last
 * member completes. Memory follows ranks, streams and instances in flight, never ranks x ops.
 * docs/replay.md describes the model. */
#include "dt_replay.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../platforms/dt_compute.h"
#include "dt_critpath.h"
#include "dt_degrade.h"
#include "dt_linkload.h"
#include "dt_timeline.h"
#include "dt_replay_internal.h"
#include "dt_sg_platform.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* dtsim's SimGrid log categories: the root `dtsim` and one subcategory per replay module (docs/replay.md, Logs).
 * Everything is logged at verbose (a Release build compiles debug messages out), so the default threshold (info) prints nothing. */
XBT_LOG_NEW_CATEGORY(dtsim, "dtsim: the simulator's own messages, one subcategory per replay module");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_replay, dtsim, "replay: each completed collective instance and send/recv pair");
XBT_LOG_EXTERNAL_CATEGORY(dtsim_coll);

/* Above this many actors SimGrid's guard pages run out (DESIGN.md §6). */
#define GUARD_SIZE_ACTORS 30000
/* The watchdog gives up waiting for the streams at this simulated date: only reached when every stream is
 * blocked forever (a deadlock), since then no other event is left. Far above any run of valid input: the unit
 * ranges (common/dt_units.h, docs/platform.md) bound one op to about 1e33 s (DT_FLOP_MAX at the slowest GPU), so a run whose ops
 * all complete is never called a deadlock (at 1e15 s, a 1e16 s op was). */
#define WATCHDOG_TIMEOUT_S 1e200

/* Per flat stream, as a waiter on an `after=` edge: it sleeps on sem until op `need` of the stream it waits for
 * has completed, linked (next) in that stream's list of waiters. Only the stream that completes the op wakes it,
 * so a completion wakes nobody who would go back to sleep. */
typedef struct dep_waiter {
  sg_sem_t sem;
  size_t need;
  size_t next; /* next waiter on the same stream, or NO_WAITER */
} dep_waiter;

#define NO_WAITER ((size_t)-1)
#define STREAM_RUNNING ((size_t)-1)
#define STREAM_DONE ((size_t)-2)

typedef struct helper_arg {
  struct replay_run *run;
  int32_t rank;
  const dt_op *op;
  sg_sem_t done;
  double *end; /* where the op's own completion time goes */
} helper_arg;

/* Comms in flight per actor serving a batch: SimGrid 3.32 keeps an actor's activities in a std::list that
 * CommImpl::finish scans whole (std::list::remove) at every completion it waits for, so the queues of a batch
 * with many peers are spread over helper actors of at most this many comms in flight each (64 cost 0.75x the CPU
 * of 128 on 150,000 concurrent comms, bench/batch.sh). */
#define BATCH_CHUNK 64
/* Pairs of one queue of a batch (one direction, one peer, one tag) in flight at once: NCCL serves the tasks of a
 * group to one peer in order (scheduleP2pTasksToPlan, src/enqueue.cc, takes the head of each peer's send and
 * receive queue per pass), and a connection holds NCCL_STEPS = 8 steps in flight (src/include/device.h), a small op
 * taking one step: so at most 8 of a queue's pairs move at once, each next one posted as one completes
 * (docs/replay.md, Batches). */
#define PAIR_WINDOW DT_BATCH_PAIR_WINDOW

/* The run's stack budget for the actors a batch starts (actor_stacks_fit, below): an admitted actor calls
 * stacks_enter when it starts running and stacks_leave when it ends. */
static void stacks_enter(void);
static void stacks_leave(void);

/* A send or recv of a batch, sorted into queues by (kind, peer, tag, position). */
typedef struct batch_comm {
  int32_t kind, peer;
  int64_t tag;
  size_t off; /* op i + off of the batch */
} batch_comm;

/* A pair of a batch whose data arrived (comm_arrived) but whose own completion, after its p2p cost, is later. */
typedef struct batch_pend {
  size_t c;         /* its comm */
  double arrival;   /* a send's: the latest arrival of its pair's two sides (s) */
} batch_pend;

/* A stream's scratch for its batches, grown to its largest batch and freed with the run (not on the actor's
 * stack: a batch of 150,000 pairs overflowed it; not per batch: a deadlocked, killed actor must leak nothing). */
typedef struct batch_scratch {
  batch_comm *comm;   /* the batch's sends and receives, in queue order */
  size_t *qstart;     /* queue q is comm[qstart[q], qstart[q + 1]) */
  size_t *qnext;      /* its next comm to post */
  double *end;        /* per op of the batch: its own completion */
  double *arr;        /* per send of the batch that completed: the latest arrival of its pair's two sides */
  struct chunk_arg *chunks;
  size_t cap;
  helper_arg *helpers; /* per op of the batch that is neither a send, a recv nor a mark */
  size_t hcap;
  double issue;       /* when the batch was posted: every pair's arrival on this side */
  size_t fs;          /* its flat stream */
  size_t npend;       /* pairs whose data arrived but whose own completion (after their p2p cost) is later:
                         pend[0, npend) */
  batch_pend *pend;
  int send_added;     /* its sends' time is on the send row (batch_send_time): a run stopped later adds nothing */
  struct batch_coll {
    double arrival, end; /* over the batch's completed collectives of one kind: the latest last-member arrival of
                            their instances, the latest own completion (s) */
    double share;        /* the sum over them of the instance's multiplicity over its members that ran */
    size_t n;            /* how many */
  } coll[DT_OP_COUNT];   /* per collective kind: the batch's time on its row (coll_batch_done) */
  int ncoll;             /* collectives in coll: 0 for most batches (a pipeline's pairs), nothing to add */
  uint8_t *done;      /* per op of the batch: 1 once its pair completed (op_done), for the ops listed as running
                         when a failure or a deadlock stopped the run */
  size_t first;       /* the batch's first op, while `open` */
  int open;           /* 1 from run_batch's start until the stream has completed the whole batch */
} batch_scratch;

/* The queues [q0, q1) of a batch, served by one actor (serve_queues). */
typedef struct chunk_arg {
  struct replay_run *run;
  int32_t rank;
  const dt_stream *st;
  size_t i; /* the batch's first op */
  batch_scratch *b;
  size_t q0, q1;
  sg_sem_t done;
} chunk_arg;

typedef struct stream_arg {
  struct replay_run *run;
  int32_t rank;
  size_t flat; /* flat stream index */
  batch_scratch b;
} stream_arg;

/* A union of [start, end] intervals being built: disjoint, sorted, touching ones merged (as
 * dt_interval_union merges them); those that end before the rank's watermark are folded into `done`. */
typedef struct ivlist {
  double (*v)[2];
  size_t n, cap, lim;
  double done;
} ivlist;

/* Per rank: the unions of DESIGN.md §7, built as ops complete. */
typedef struct rank_acc {
  ivlist comp, comm, both, wait;
  ivlist dboth[DT_DIM_COUNT]; /* per dimension the trace uses: its communication and the compute, united */
  double end;
} rank_acc;

typedef struct replay_run {
  rp_ctx c;
  size_t nstreams;      /* over all ranks */
  size_t *rank_stream0; /* nranks+1: first flat stream index of each rank */
  size_t *stream_done;  /* per flat stream: ops completed (a prefix, ops complete in order) */
  double *stream_lo;    /* per flat stream: no op of it still to complete was issued before this time */
  rank_acc *acc;        /* nranks */
  dep_waiter *waiter;   /* nstreams: each stream as a waiter */
  size_t *wait_head;    /* nstreams: first waiter on each stream, or NO_WAITER */
  /* coalescing (run_local, docs/replay.md "Shortcuts"): on or off for the run; per flat stream what it does now
   * (STREAM_RUNNING, STREAM_DONE, or the flat stream whose op it waits for); per flat stream of a rank that owns
   * its ops, 1 for each op an `after=` edge of its rank waits for (NULL: none), shared by its template users */
  int coalesce;
  size_t *state;
  uint8_t **dep_target;
  size_t coalesced_runs, coalesced_ops; /* runs of GPU-local ops waited as one sleep, and the ops in them */
  stream_arg *args;     /* nstreams */
  size_t streams_left;
  sg_sem_t all_done;
  int exact_asked;      /* --exact was given (not only implied by a fault) */
  char *abort_why;      /* a link failure stopped the run (dt_degrade.h), NULL otherwise */
  double abort_s;
  size_t ops_done;
  double makespan;
  dt_kind_stats by_kind[DT_OP_COUNT];
  double *marks;        /* completion times of rank 0's marks, in completion order (so ascending) */
  size_t nmarks, marks_cap;
  size_t straddle;      /* rank 0's ops running on another stream when one of its marks completed */
  int32_t straddle_sid; /* the first such op: stream id, op index, the mark's time */
  size_t straddle_idx;
  double straddle_mark;
  dt_instance_fn on_instance;
  void *on_instance_data;
  sg_mailbox_t *pair_boxes; /* by pair id: looked up once (sg_mailbox_by_name is a simcall), NULL until then */
  size_t pair_boxes_cap;
  rp_cp *cp;            /* the critical path (dt_critpath.h) */
  dt_timeline *tl;      /* --timeline (dt_timeline.h), or NULL */
  dt_dim *dims;         /* per-dimension exposure: the dimensions the trace uses, ndims of them */
  int ndims;
  dt_hist hist_kind[DT_OP_COUNT], hist_dim[DT_DIM_COUNT];
  dt_hist *hist_group;  /* ngroups + 1 (the last: send/recv pairs) */
  /* several jobs (dt_replay_opts.job_of_rank): per rank the job whose marks it records (its first rank, or the
   * representative that runs for it when ranks are folded), -1 for others; per job its marks' completion times */
  const int32_t *job_of_rank;
  int32_t njobs;
  int32_t *mark_job;    /* nranks, NULL without jobs */
  double **jmarks;      /* njobs */
  size_t *njmarks, *jmarks_cap;
  int32_t *job_of_gpu;  /* per GPU, for the per-link accounting; NULL without jobs */
  dt_var *var;          /* speed factors, jitter, late starts (dt_variability.h), or NULL: none, nothing consulted */
  int var_unfolded;     /* folding was possible but refused because the ranks of a class differ */
} replay_run;

static char payload_token;
static int simgrid_started;

/* The clock of the stream that runs GPU-local ops ahead of SimGrid's clock now (run_local), or NULL. One
 * simulation runs per process, SimGrid runs one actor at a time (thread contexts too), and a stream running ahead
 * makes no simcall until it is back on SimGrid's clock, so one pointer serves every actor. */
static double *ahead_clock;

double rp_now(void)
{
  return ahead_clock ? *ahead_clock : simgrid_get_clock();
}

void rp_wait(double d)
{
  if (!(d > 0))
    return;
  if (ahead_clock)
    *ahead_clock += d;
  else
    sg_actor_sleep_for(d);
}

void dt_replay_opts_init(dt_replay_opts *o)
{
  memset(o, 0, sizeof *o);
  o->fidelity = DT_FIDELITY_FLOW;
  o->algo = DT_ALGO_AUTO;
  o->proto = -1;
  o->links = 1;
}

/* The per-link accounting's watermark: no transfer still to be recorded starts before the earliest issue of an op
 * in flight, nor before now (rp_cp_watermark). */
static double link_watermark(void *data)
{
  const replay_run *R = data;
  return rp_cp_watermark(R->cp, simgrid_get_clock());
}

/* ---- actors ---- */

/* The live pair of a send or recv (an op of rank's body): key (src, dst, tag, op->match). */
static rp_live *pair_of(replay_run *R, int32_t rank, const dt_op *op)
{
  int32_t peer = dt_trace_op_peer(R->c.t, rank, op);
  int32_t src = op->kind == DT_OP_SEND ? rank : peer, dst = op->kind == DT_OP_SEND ? peer : rank;
  return rp_live_get(&R->c.pairs, (uint64_t)(uint32_t)src << 32 | (uint32_t)dst, (uint64_t)op->tag,
                     (uint64_t)op->match, 2);
}

/* Arrives at the pair of a send or recv (its side issued at `now`, s) and returns its mailbox, named by the pair's
 * recycled id; proto labels the pair's protocol in its record (NULL: none). */
static sg_mailbox_t pair_mailbox(replay_run *R, int32_t rank, const dt_op *op, const char *proto, double now)
{
  rp_live *l = pair_of(R, rank, op);
  l->proto = proto;
  if (l->arrived == 0 || now > l->last_issue)
    l->last_issue = now;
  l->arrived++;
  size_t id = (size_t)l->id;
  if (id < R->pair_boxes_cap && R->pair_boxes[id])
    return R->pair_boxes[id];
  char name[32];
  snprintf(name, sizeof name, "p%d", (int)l->id);
  sg_mailbox_t box = sg_mailbox_by_name(name); /* a simcall: other actors run (and may grow the array) meanwhile */
  if (id >= R->pair_boxes_cap) {
    size_t cap = R->pair_boxes_cap ? R->pair_boxes_cap : 256;
    while (cap <= id)
      cap *= 2;
    R->pair_boxes = dt_xrealloc(R->pair_boxes, sizeof *R->pair_boxes * cap);
    memset(R->pair_boxes + R->pair_boxes_cap, 0, sizeof *R->pair_boxes * (cap - R->pair_boxes_cap));
    R->pair_boxes_cap = cap;
  }
  R->pair_boxes[id] = box;
  return box;
}

/* dur=, the compute model over the op's kernels, or flop / (peak x efficiency) (platforms/dt_compute.h) */
static double compute_seconds(const dt_platform *p, const dt_op *op)
{
  return dt_compute_op_seconds(p, op);
}

/* The NCCL model's cost of the pair of a send or recv of rank (rp_p2p_cost; 0 and eff 1 on a textbook platform). */
static double p2p_cost(replay_run *R, int32_t rank, const dt_op *op, double *eff, const char **label)
{
  int32_t peer = dt_trace_op_peer(R->c.t, rank, op);
  return op->kind == DT_OP_SEND ? rp_p2p_cost(&R->c, rank, peer, op->bytes, eff, label)
                                : rp_p2p_cost(&R->c, peer, rank, op->bytes, eff, label);
}

/* Bytes a send's flow carries: its bytes over the protocol's efficiency, whole. */
static long p2p_bytes(const dt_op *op, double eff)
{
  return eff == 1 ? (long)op->bytes : (long)llround((double)op->bytes / eff);
}

/* Member f of the class of representative `rank` (folding, rp_fold_plan). */
static int32_t fold_image(const replay_run *R, int32_t rank, int32_t f)
{
  return (int32_t)R->c.t->groups[R->c.fold_cls[rank]].ranks[f];
}

/* Per-link accounting of a send's flow, active from t0 to t1 (s), that moved `bytes` of its payload (op->bytes
 * unless the run stopped it). */
static void link_send(replay_run *R, int32_t rank, const dt_op *op, double bytes, double t0, double t1)
{
  int32_t peer = dt_trace_op_peer(R->c.t, rank, op);
  if (R->c.fold > 1) { /* the send and the folded ranks' same sends: one flow set per pair (the same figures) */
    uint64_t key = UINT64_C(1) << 63 | (uint64_t)(uint32_t)rank << 32 | (uint32_t)peer; /* the plans' keys < 2^48 */
    int32_t set = dt_linkload_set_find(R->c.linkload, key);
    if (set < 0) {
      int32_t *gpu = dt_xmalloc(sizeof *gpu * 2 * (size_t)R->c.fold);
      for (int32_t f = 0; f < R->c.fold; f++) {
        gpu[f] = R->c.gpu_of_rank[f ? fold_image(R, rank, f) : rank];
        gpu[R->c.fold + f] = R->c.gpu_of_rank[f ? fold_image(R, peer, f) : peer];
      }
      set = dt_linkload_set_new(R->c.linkload, key, (size_t)R->c.fold, gpu, gpu + R->c.fold);
      free(gpu);
    }
    dt_linkload_add_set(R->c.linkload, set, bytes, t0, t1, DT_OP_SEND, -1);
    return;
  }
  dt_linkload_add(R->c.linkload, R->c.gpu_of_rank[rank], R->c.gpu_of_rank[peer], bytes, t0, t1, DT_OP_SEND, -1);
  for (int32_t f = 1; f < R->c.fold; f++) /* the folded ranks' same send, on their own links */
    dt_linkload_add(R->c.linkload, R->c.gpu_of_rank[fold_image(R, rank, f)], R->c.gpu_of_rank[fold_image(R, peer, f)],
                    bytes, t0, t1, DT_OP_SEND, -1);
}

/* A send's flow in flight (rp_flight): the stream, its op, and its simulated size (p2p_bytes). */
typedef struct send_flight {
  replay_run *R;
  int32_t rank;
  const dt_op *op;
  double size;
} send_flight;

/* Per-link accounting of a send cut by the stop: the share of its payload it moved (rp_flights_cut). */
static void count_cut_send(replay_run *R, int32_t rank, const dt_op *op, double size, double remaining, double t0,
                           double t1)
{
  if (size > 0 && remaining < size)
    link_send(R, rank, op, (double)op->bytes * (1 - remaining / size), t0, t1);
}

static void send_cut(void *arg, size_t k, double remaining, double t0, double t1)
{
  const send_flight *sf = arg;
  (void)k;
  count_cut_send(sf->R, sf->rank, sf->op, sf->size, remaining, t0, t1);
}

/* Performs one op's effect for `rank` (no bookkeeping). */
static void exec_op(replay_run *R, int32_t rank, const dt_op *op)
{
  switch (op->kind) {
  case DT_OP_COMPUTE: {
    double d = compute_seconds(R->c.p, op);
    if (R->var) /* a straggler's speed factor and the op's jitter (docs/whatif.md) */
      d = dt_var_compute(R->var, R->c.t, rank, op, d);
    /* the overlap tax: NCCL kernels running on the rank slow its compute (docs/replay.md) */
    if (R->c.p->nccl && R->c.p->overlap_tax > 0 && R->c.comm_active[rank] > 0)
      d /= 1 - R->c.p->overlap_tax;
    rp_wait(d);
    break;
  }
  case DT_OP_DELAY:
    rp_wait(op->dur);
    break;
  case DT_OP_MARK:
    break;
  case DT_OP_SEND:
  case DT_OP_RECV: {
    const char *label;
    double eff, cost = p2p_cost(R, rank, op, &eff, &label);
    if (op->kind == DT_OP_SEND && R->c.linkload) { /* per-link accounting: the flow's own start and end */
      sg_comm_t cm = sg_mailbox_put_async(pair_mailbox(R, rank, op, label, simgrid_get_clock()), &payload_token,
                                          p2p_bytes(op, eff));
      double t0, t1;
      send_flight sf = {R, rank, op, (double)p2p_bytes(op, eff)};
      rp_flight fl = {.comms = &cm, .n = 1, .cut = send_cut, .arg = &sf};
      rp_flight_push(&R->c, &fl);
      dt_sg_comm_wait_all_times(&cm, 1, &t0, &t1);
      rp_flight_pop(&R->c, &fl);
      if (!R->c.stopped) /* (after the stop, rp_flights_cut counted it) */
        link_send(R, rank, op, (double)op->bytes, t0, t1);
    } else if (op->kind == DT_OP_SEND)
      sg_mailbox_put(pair_mailbox(R, rank, op, label, simgrid_get_clock()), &payload_token, p2p_bytes(op, eff));
    else
      (void)sg_mailbox_get(pair_mailbox(R, rank, op, label, simgrid_get_clock()));
    if (cost > 0) /* both sides wait the NCCL model's p2p cost once the data has arrived */
      sg_actor_sleep_for(cost);
    break;
  }
  default:
    if (dt_op_is_collective(op->kind))
      rp_collective_run(&R->c, op, rank);
    break;
  }
}

static void helper_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  helper_arg *h = sg_actor_self_get_data();
  stacks_enter();
  sg_actor_daemonize(sg_actor_self());
  exec_op(h->run, h->rank, h->op);
  *h->end = simgrid_get_clock();
  stacks_leave();
  sg_sem_release(h->done);
}

/* Makes b hold a batch of n ops, nh of them run by helpers. */
static void scratch_reserve(batch_scratch *b, size_t n, size_t nh)
{
  if (nh > b->hcap) {
    b->helpers = dt_xrealloc(b->helpers, nh * sizeof *b->helpers);
    b->hcap = nh;
  }
  if (n <= b->cap)
    return;
  b->comm = dt_xrealloc(b->comm, n * sizeof *b->comm);
  b->qstart = dt_xrealloc(b->qstart, (n + 1) * sizeof *b->qstart);
  b->qnext = dt_xrealloc(b->qnext, n * sizeof *b->qnext);
  b->pend = dt_xrealloc(b->pend, n * sizeof *b->pend);
  b->done = dt_xrealloc(b->done, n);
  b->end = dt_xrealloc(b->end, n * sizeof *b->end);
  b->arr = dt_xrealloc(b->arr, n * sizeof *b->arr);
  /* a chunk but the last holds more than BATCH_CHUNK - PAIR_WINDOW comms in flight, each of its own op */
  b->chunks = dt_xrealloc(b->chunks, (n / (BATCH_CHUNK - PAIR_WINDOW) + 2) * sizeof *b->chunks);
  b->cap = n;
}

static void scratch_free(batch_scratch *b)
{
  free(b->comm);
  free(b->qstart);
  free(b->qnext);
  free(b->pend);
  free(b->done);
  free(b->helpers);
  free(b->end);
  free(b->arr);
  free(b->chunks);
}

static int cmp_batch_comm(const void *x, const void *y)
{
  const batch_comm *a = x, *b = y;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  if (a->peer != b->peer)
    return a->peer < b->peer ? -1 : 1;
  if (a->tag != b->tag)
    return a->tag < b->tag ? -1 : 1;
  return (a->off > b->off) - (a->off < b->off);
}

/* Posts comm c of the batch starting at op i (its side arrives at the batch's issue); *cost receives its p2p
 * cost (waited after its data arrived), *got the payload of a receive. */
static sg_comm_t post_comm(replay_run *R, int32_t rank, const dt_stream *st, size_t i, batch_scratch *b, size_t c,
                           double *cost, void **got)
{
  const dt_op *op = &st->ops[i + b->comm[c].off];
  const char *label;
  double eff;
  *cost = p2p_cost(R, rank, op, &eff, &label);
  sg_mailbox_t box = pair_mailbox(R, rank, op, label, b->issue);
  if (op->kind == DT_OP_SEND)
    return sg_mailbox_put_async(box, &payload_token, p2p_bytes(op, eff));
  return sg_mailbox_get_async(box, got);
}

static void op_done(replay_run *R, int32_t rank, size_t fs, size_t index, const dt_op *op, double issue, double end);

/* The pairs of the batch starting at op i that completed by now (all of them when `all`) are done: each is folded
 * into the statistics as it completes (op_done), so that its record and its mailbox id are free for the next
 * ones, as when unbatched (kept to the batch's end, 150,000 pairs cost 1.5x the memory of the same unbatched).
 * A completed send's times go to the batch's send span then (its flow went to the per-link accounting when its
 * data arrived, comm_arrived). */
static void pairs_done(replay_run *R, int32_t rank, const dt_stream *st, size_t i, batch_scratch *b, int all)
{
  double now = simgrid_get_clock();
  size_t k = 0;
  for (size_t p = 0; p < b->npend; p++) {
    const batch_pend *e = &b->pend[p];
    size_t off = b->comm[e->c].off;
    const dt_op *op = &st->ops[i + off];
    if (!all && b->end[off] > now) {
      b->pend[k++] = *e;
      continue;
    }
    if (op->kind == DT_OP_SEND)
      b->arr[off] = e->arrival;
    b->done[off] = 1;
    op_done(R, rank, b->fs, i + off, op, b->issue, b->end[off]);
  }
  if (k < b->npend) /* op_done marked the stream's transfers all recorded: the batch's other pairs are not */
    rp_cp_hold(R->cp, b->fs, all ? INFINITY : b->issue);
  b->npend = k;
}

/* Comm c of the batch starting at op i moved its data from t0 to t1 (s) and completes its p2p cost later: its own
 * completion; folded into the statistics once done (pairs_done). A send's flow goes to the per-link accounting
 * now, for what it moved while it ran (dt_linkload_stop: the same rule for every transfer). */
static void comm_arrived(replay_run *R, int32_t rank, const dt_stream *st, size_t i, batch_scratch *b, size_t c,
                         double cost, double t0, double t1)
{
  const dt_op *op = &st->ops[i + b->comm[c].off];
  b->end[b->comm[c].off] = t1 + cost;
  /* a send's pair: both sides have arrived, so its last issue is final (and its record alive until op_done) */
  double arrival = op->kind == DT_OP_SEND ? pair_of(R, rank, op)->last_issue : 0;
  b->pend[b->npend++] = (batch_pend){c, arrival};
  if (op->kind == DT_OP_SEND && R->c.linkload && !R->c.stopped) /* (after the stop, rp_flights_cut counted it) */
    link_send(R, rank, op, (double)op->bytes, t0, t1);
}

/* serve_queues' comms in flight for rp_flight: comm k of `comms` is slot slot(k)'s, whose batch comm is
 * comm_of[slot] (batch ops from op i of st). */
typedef struct queue_flight {
  replay_run *R;
  int32_t rank;
  const dt_stream *st;
  size_t i;
  const batch_scratch *b;
  const size_t *comm_of, *slot_of;
  int rest;             /* comms are `rest`: comm k's slot is slot_of[BATCH_CHUNK - 1 - k], else slot_of[k] */
} queue_flight;

static void queue_cut(void *arg, size_t k, double remaining, double t0, double t1)
{
  const queue_flight *qf = arg;
  size_t sl = qf->slot_of[qf->rest ? BATCH_CHUNK - 1 - k : k];
  const dt_op *op = &qf->st->ops[qf->i + qf->b->comm[qf->comm_of[sl]].off];
  if (op->kind != DT_OP_SEND)
    return;
  const char *label;
  double eff;
  (void)p2p_cost(qf->R, qf->rank, op, &eff, &label);
  count_cut_send(qf->R, qf->rank, op, (double)p2p_bytes(op, eff), remaining, t0, t1);
}

/* Serves the queues [q0, q1) of the batch starting at op i: up to PAIR_WINDOW comms of each in flight, the next
 * of a queue posted when one of it completes; stores each op's own completion (data arrived, then its p2p
 * cost) in b->end. At most BATCH_CHUNK comms are in flight (the caller sizes [q0, q1) so). A queue of more than
 * PAIR_WINDOW pairs is waited with a wait-any, to post its next pair when one completes; the comms of the others
 * (all posted at once: the usual all-to-all of one pair per peer) are waited one after the other once those are
 * done, each with its own completion time, which costs O(1) per comm where a wait-any over them costs O(comms). */
static void serve_queues(replay_run *R, int32_t rank, const dt_stream *st, size_t i, batch_scratch *b, size_t q0,
                         size_t q1)
{
  /* the comms in flight: `act` packs those of long queues for the wait-any, `rest` those of short ones; each has a
   * slot of its own, which keeps its receive buffer */
  sg_comm_t act[BATCH_CHUNK], rest[BATCH_CHUNK];
  size_t slot_of[BATCH_CHUNK], na = 0, nr = 0;
  size_t comm_of[BATCH_CHUNK], queue_of[BATCH_CHUNK];
  double cost[BATCH_CHUNK], t0s[BATCH_CHUNK], t1s[BATCH_CHUNK];
  void *got[BATCH_CHUNK];
  for (size_t q = q0; q < q1; q++) {
    int refill = b->qstart[q + 1] - b->qstart[q] > PAIR_WINDOW;
    for (int w = 0; w < PAIR_WINDOW && b->qnext[q] < b->qstart[q + 1]; w++) {
      size_t c = b->qnext[q]++, sl = na + nr;
      comm_of[sl] = c;
      queue_of[sl] = q;
      sg_comm_t cm = post_comm(R, rank, st, i, b, c, &cost[sl], &got[sl]);
      if (refill) {
        slot_of[na] = sl;
        act[na++] = cm;
      } else {
        rest[nr++] = cm;
        slot_of[BATCH_CHUNK - nr] = sl;
      }
    }
  }
  queue_flight qa = {R, rank, st, i, b, comm_of, slot_of, 0}, qr = qa;
  qr.rest = 1;
  while (na > 0) {
    double t0, t1;
    rp_flight fa = {.comms = act, .n = na, .cut = queue_cut, .arg = &qa};
    rp_flight fr = {.comms = rest, .n = nr, .cut = queue_cut, .arg = &qr};
    rp_flight_push(&R->c, &fa);
    rp_flight_push(&R->c, &fr);
    size_t x = dt_sg_comm_wait_any_times(act, na, rest, nr, &t0, &t1), sl = slot_of[x], q = queue_of[sl];
    rp_flight_pop(&R->c, &fr);
    rp_flight_pop(&R->c, &fa);
    comm_arrived(R, rank, st, i, b, comm_of[sl], cost[sl], t0, t1);
    pairs_done(R, rank, st, i, b, 0);
    if (b->qnext[q] < b->qstart[q + 1]) { /* the queue's next comm, in the same slot */
      comm_of[sl] = b->qnext[q]++;
      act[x] = post_comm(R, rank, st, i, b, comm_of[sl], &cost[sl], &got[sl]);
    } else {
      na--;
      act[x] = act[na];
      slot_of[x] = slot_of[na];
    }
  }
  if (nr > 0) {
    rp_flight fr = {.comms = rest, .n = nr, .cut = queue_cut, .arg = &qr};
    rp_flight_push(&R->c, &fr);
    dt_sg_comm_wait_all_times(rest, nr, t0s, t1s);
    rp_flight_pop(&R->c, &fr);
    for (size_t r = 0; r < nr; r++) {
      size_t sl = slot_of[BATCH_CHUNK - 1 - r];
      comm_arrived(R, rank, st, i, b, comm_of[sl], cost[sl], t0s[r], t1s[r]);
    }
    pairs_done(R, rank, st, i, b, 0);
  }
}

static void chunk_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  chunk_arg *h = sg_actor_self_get_data();
  stacks_enter();
  sg_actor_daemonize(sg_actor_self());
  serve_queues(h->run, h->rank, h->st, h->i, h->b, h->q0, h->q1);
  stacks_leave();
  sg_sem_release(h->done);
}

/* SimGrid 3.32 gives every actor its own stack (contexts/stack-size KiB and contexts/guard-size pages,
 * posix_memalign) and aborts (exit 134, "Failed to allocate stack") when the address space is short of one: under
 * `ulimit -v` dtsim's heap may fit where the stacks do not (the shipped README example aborted from about 60,000
 * to 135,000 KiB). Anything else short of memory ends in dt_oom's exit 2 (dt_sg_platform.cpp installs it as
 * SimGrid's new_handler), so only the stacks are checked, against RLIMIT_AS and /proc/self/statm.
 *
 * The actors a batch starts during the run go through a run-wide budget (stack_budget): what /proc/self/statm
 * shows is not enough, because the actors a stream asks for are created later by SimGrid's maestro, after every
 * actor of the scheduling round has run: the two ranks of one batch of 20,000 pairs each saw room for their 313
 * stacks, together they needed 626 (exit 134 from ulimit -v 2,700,000 to 5,000,000 KiB). */

static void describe_op(const dt_trace *t, int32_t rank, const dt_stream *st, size_t i, char *buf, size_t size);

/* SimGrid's heap per actor (ActorImpl, s4u::Actor, its context: about 13 KiB measured, rounded up) and per comm
 * in flight (CommImpl, its network action and max-min variable, mailbox entries: about 2.6 KiB measured, rounded
 * up); a batch's actor has at most BATCH_CHUNK comms in flight. */
#define ACTOR_HEAP_BYTES 16384.0
#define COMM_HEAP_BYTES 4096.0
/* Room left for everything else that may grow between a check and the stacks' creation. */
#define STACK_SPARE_BYTES (4.0 * 1048576)

/* The run's address-space budget for the stacks of the actors batches start (one simulation per process, one
 * actor running at a time: plain counters). `reserved` counts those admitted and not ended (their stack and heap
 * room are held from the check until the actor ends); `live` those running their code, whose stack is mapped
 * already and so is inside /proc/self/statm's size (an actor not started yet is not, an ended one may still be:
 * both counted on the safe side). */
static struct {
  size_t reserved, live;
} stack_budget;

/* The run's budget of memory mappings (vm.max_map_count): SimGrid 3.32 mprotects each actor's guard pages, which
 * splits its stack's mapping, and the kernel refuses mprotect past max_map_count (SimGrid aborts, exit 134, "Failed
 * to protect stack"). Measured by counting /proc/self/maps before and after 4,000 actors: 2 mappings per actor with
 * guard pages (8 MiB and 64 KiB stacks alike), none without (the stacks merge with the mappings beside them).
 * `limit` is read and `base` (the process's mappings before its first actor) counted once, by map_budget_init;
 * `stream_actors` are those actor_stacks_fit admitted; a batch's actors are in stack_budget.reserved. */
static struct {
  int read;        /* 1 once read; 0 before */
  long limit;      /* vm.max_map_count, or 0 when it cannot be read (nothing checked) */
  long base;       /* mappings of the process before its first actor */
  size_t stream_actors;
} map_budget;
/* Mappings left for everything else the run may map after the check (libraries, malloc arenas, large blocks). */
#define MAP_SPARE 2048
/* Mappings per actor, as measured (map_budget, above). */
static long maps_per_actor(void)
{
  return sg_cfg_get_int("contexts/guard-size") > 0 ? 2 : 0;
}

/* Reads vm.max_map_count (or DTSIM_TEST_MAX_MAP_COUNT, a stand-in for tests) and counts the lines of
 * /proc/self/maps, once per process. */
static void map_budget_init(void)
{
  if (map_budget.read)
    return;
  map_budget.read = 1;
  long long v = 0;
  const char *e = getenv("DTSIM_TEST_MAX_MAP_COUNT");
  if (e && dt_parse_whole(e, 1, 1LL << 40, &v) != 0)
    v = 0;
  if (!e) {
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (!f || fscanf(f, "%lld", &v) != 1)
      v = 0;
    if (f)
      fclose(f);
  }
  FILE *m = fopen("/proc/self/maps", "r");
  if (!m) {
    map_budget.limit = 0;
    return;
  }
  long n = 0;
  int c;
  while ((c = getc(m)) != EOF)
    n += c == '\n';
  fclose(m);
  map_budget.limit = v > 0 ? (long)v : 0;
  map_budget.base = n;
}

/* Whether n more actors fit in vm.max_map_count beside every actor admitted before, with MAP_SPARE to spare
 * (1: yes, or the limit cannot be read); else 0 with why (naming `what`, size bytes). */
static int maps_fit(size_t n, const char *what, char *why, size_t size)
{
  map_budget_init();
  long each = maps_per_actor();
  if (n == 0 || map_budget.limit == 0 || each == 0)
    return 1;
  double held = (double)(map_budget.stream_actors + stack_budget.reserved) * (double)each;
  double left = (double)map_budget.limit - (double)map_budget.base - MAP_SPARE - held;
  if ((double)n * (double)each <= left)
    return 1;
  snprintf(why, size, "%s: %zu SimGrid actor%s with guard pages (contexts/guard-size %d) need %ld memory mappings "
           "each, %.0f in all, but the limit on mappings (vm.max_map_count %ld) leaves %.0f: run with --cfg "
           "contexts/guard-size:0 (no guard pages, no mappings of their own), raise vm.max_map_count (sysctl), or "
           "split the batch (docs/replay.md)",
           what, n, n == 1 ? "" : "s", sg_cfg_get_int("contexts/guard-size"), each, (double)n * (double)each,
           map_budget.limit, left > 0 ? left : 0.0);
  return 0;
}

/* Address space of one actor's stack as mapped: posix_memalign(page, stack + guard) costs its size, the guard
 * pages and up to two pages of alignment and chunk header (glibc, measured at 64 KiB, 1 MiB and 8 MiB). */
static double actor_stack_bytes(long page)
{
  return (double)sg_cfg_get_int("contexts/stack-size") * 1024 +
         ((double)sg_cfg_get_int("contexts/guard-size") + 2) * (double)page;
}

/* Reads the address-space limit and the process's size (bytes); 0 when there is no limit or it cannot be read. */
static int address_space(double *limit, double *used, long *page)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return 0;
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long vm_pages = 0;
  int got = f && fscanf(f, "%llu", &vm_pages) == 1;
  if (f)
    fclose(f);
  *page = sysconf(_SC_PAGESIZE);
  if (!got || *page <= 0)
    return 0;
  *limit = (double)rl.rlim_cur;
  *used = (double)vm_pages * (double)*page;
  return 1;
}

static void stacks_why(char *why, size_t size, const char *what, double limit, double left, size_t n, double each)
{
  snprintf(why, size, "%s: the address-space limit (ulimit -v %.0f KiB) leaves %.1f MiB, but %zu SimGrid actor%s "
           "need%s %.1f MiB each (a stack of contexts/stack-size %d KiB and contexts/guard-size %d pages, and "
           "SimGrid's heap for the actor and its comms): raise ulimit -v%s (docs/replay.md)",
           what, limit / 1024, left > 0 ? left / 1048576 : 0.0, n, n == 1 ? "" : "s", n == 1 ? "s" : "",
           each / 1048576, sg_cfg_get_int("contexts/stack-size"), sg_cfg_get_int("contexts/guard-size"),
           /* 64 KiB is the least stack --cfg accepts (sim/dt_cli.c, check_cfg) */
           sg_cfg_get_int("contexts/stack-size") > 64 ? ", or give smaller stacks with --cfg contexts/stack-size:KIB"
                                                      : ", or split the work into fewer actors (a smaller batch)");
}

/* Whether n actors created now, from maestro before the run (their stacks are mapped at once), fit in
 * vm.max_map_count (maps_fit; they are then counted in its budget) and under RLIMIT_AS with STACK_SPARE_BYTES to
 * spare (1: yes, or there is no limit, or the size cannot be read); else 0 with why (size bytes). */
static int actor_stacks_fit(size_t n, char *why, size_t size)
{
  double limit, used;
  long page;
  if (!maps_fit(n, "starting the stream actors", why, size))
    return 0;
  map_budget.stream_actors += n;
  if (n == 0 || !address_space(&limit, &used, &page))
    return 1;
  double stack = actor_stack_bytes(page), need = (double)n * (stack + ACTOR_HEAP_BYTES) + STACK_SPARE_BYTES;
  if (used + need <= limit)
    return 1;
  stacks_why(why, size, "starting the stream actors", limit, limit - used - STACK_SPARE_BYTES, n,
             stack + ACTOR_HEAP_BYTES);
  return 0;
}

/* Admits n actors a batch is about to start into the run's stack budget: 1 when their stacks, their heap and
 * that of the comms they may have in flight fit beside every actor admitted before and not ended, with
 * STACK_SPARE_BYTES to spare (or there is no limit); else 0 with why (naming `what`, size bytes) and nothing
 * reserved. Each admitted actor calls stacks_enter when it starts and stacks_leave when it ends. */
static int stacks_reserve(size_t n, const char *what, char *why, size_t size)
{
  double limit, used;
  long page;
  if (!maps_fit(n, what, why, size))
    return 0;
  if (n == 0 || !address_space(&limit, &used, &page)) {
    stack_budget.reserved += n;
    return 1;
  }
  double stack = actor_stack_bytes(page), each = stack + ACTOR_HEAP_BYTES + BATCH_CHUNK * COMM_HEAP_BYTES;
  double other = used - (double)stack_budget.live * stack; /* all but the stacks already counted in `reserved` */
  double held = (double)stack_budget.reserved * each;
  if (other + held + (double)n * each + STACK_SPARE_BYTES <= limit) {
    stack_budget.reserved += n;
    return 1;
  }
  stacks_why(why, size, what, limit, limit - other - held - STACK_SPARE_BYTES, n, each);
  return 0;
}

/* An admitted actor runs: its stack is mapped. */
static void stacks_enter(void)
{
  stack_budget.live++;
}

/* An admitted actor ends (its stack is freed once SimGrid has cleaned it up). */
static void stacks_leave(void)
{
  stack_budget.live--;
  stack_budget.reserved--;
}

/* Inside an actor, where no error can be returned: says why and ends the process with exit 2, as dt_oom does. */
static void actor_stacks_exit(const char *why)
{
  fflush(stdout);
  fprintf(stderr, "dtsim: error: %s\n", why);
  dt_exit2();
}

static uint64_t sat_add(uint64_t a, uint64_t b);

/* Adds the time of batch b's sends that completed to the send row, once (docs/report.md): the length of the
 * union of their pairs' [latest arrival of both sides, own completion] intervals, times the folded ranks it
 * stands for. A batch whose pairs all arrive at its post (the peer batched too) adds its latest completion less
 * that arrival; a peer that posts its receives one after the other adds each pair's own time (10 sequential
 * pairs: 10 pair times, not the last one's). */
static void batch_send_time(replay_run *R, const dt_stream *st, batch_scratch *b)
{
  if (b->send_added)
    return;
  b->send_added = 1;
  size_t n = 0, j = b->first;
  while (j < st->nops && st->ops[j].batch == st->ops[b->first].batch)
    j++;
  double(*iv)[2] = dt_xmalloc(sizeof *iv * (j - b->first + 1));
  for (size_t off = 0; off < j - b->first; off++)
    if (b->done[off] && st->ops[b->first + off].kind == DT_OP_SEND) {
      iv[n][0] = b->arr[off];
      iv[n][1] = b->end[off];
      n++;
    }
  if (n > 0)
    dt_kind_add_batch(&R->by_kind[DT_OP_SEND], 0, dt_interval_union(iv, n), R->c.fold ? R->c.fold : 1);
  free(iv);
}

/* --explain: each queue of sends of the completed batch starting at op i (nq queues) as one entry, timed as the send
 * row times a batch (batch_send_time): the union of its pairs' [arrival of the later side, completion] intervals
 * (each pair alone was compared with an uncontended single pair: +903,746 % for a batch that ran at 98 % of the
 * NIC). */
static void explain_batch(replay_run *R, int32_t rank, const dt_stream *st, size_t i, const batch_scratch *b,
                          size_t nq)
{
  for (size_t q = 0; q < nq; q++) {
    size_t c0 = b->qstart[q], c1 = b->qstart[q + 1];
    if (b->comm[c0].kind != DT_OP_SEND)
      continue;
    double(*iv)[2] = dt_xmalloc(sizeof *iv * (c1 - c0));
    uint64_t bytes = 0;
    for (size_t c = c0; c < c1; c++) {
      size_t off = b->comm[c].off;
      iv[c - c0][0] = b->arr[off];
      iv[c - c0][1] = b->end[off];
      bytes = sat_add(bytes, st->ops[i + off].bytes);
    }
    double t = dt_interval_union(iv, c1 - c0);
    free(iv);
    /* a queue of one pair is explained as a pair (the usual batch of a pipeline: one pair per peer) */
    rp_explain_p2p(&R->c, rank, b->comm[c0].peer, bytes, c1 - c0 > 1 ? c1 - c0 : 0, t > 0 ? t : 0,
                   R->c.fold ? R->c.fold : 1);
  }
}

/* Ops [i, j) of a stream form one batch (ncclGroupStart/End): its sends and receives are sorted into queues,
 * one per (direction, peer, tag), served in order with up to PAIR_WINDOW pairs of a queue in flight (the queues
 * together, over helper actors of at most BATCH_CHUNK comms in flight when one actor cannot hold them); any other
 * op runs in a helper actor on the same host; the batch completes when all have. b->end[k - i] receives op k's
 * own completion time (a pair's statistics must not include the wait for unrelated peers of the same batch).
 * b grows to hold them (scratch_reserve). Time O(n log n) for n ops, memory O(n) in b: a pair costs what it
 * costs unbatched, with at most PAIR_WINDOW per queue in SimGrid at once (docs/replay.md, Batches). */
static void run_batch(replay_run *R, int32_t rank, size_t fs, const dt_stream *st, size_t i, size_t j,
                      batch_scratch *b)
{
  size_t nc = 0, nh = 0, nq = 0, nchunks = 0;
  for (size_t k = i; k < j; k++)
    nh += st->ops[k].kind != DT_OP_SEND && st->ops[k].kind != DT_OP_RECV && st->ops[k].kind != DT_OP_MARK;
  scratch_reserve(b, j - i, nh);
  double *end = b->end;
  sg_sem_t hsem = NULL;
  nh = 0;
  b->issue = simgrid_get_clock();
  b->fs = fs;
  b->npend = 0;
  b->send_added = 0;
  b->first = i;
  b->open = 1;
  memset(b->done, 0, j - i);
  for (size_t k = i; k < j; k++) {
    const dt_op *op = &st->ops[k];
    end[k - i] = b->issue; /* marks complete at once */
    if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
      b->comm[nc++] = (batch_comm){(int32_t)op->kind, dt_trace_op_peer(R->c.t, rank, op), op->tag, k - i};
    else if (op->kind != DT_OP_MARK)
      nh++;
  }
  qsort(b->comm, nc, sizeof *b->comm, cmp_batch_comm);
  /* queues, and the actors serving them: consecutive queues while their comms in flight fit in BATCH_CHUNK */
  size_t inflight = 0;
  for (size_t c = 0; c < nc; c++) {
    if (c == 0 || cmp_batch_comm(&(batch_comm){b->comm[c].kind, b->comm[c].peer, b->comm[c].tag, 0},
                                 &(batch_comm){b->comm[c - 1].kind, b->comm[c - 1].peer, b->comm[c - 1].tag, 0})) {
      b->qstart[nq] = c;
      b->qnext[nq] = c;
      nq++;
    }
  }
  b->qstart[nq] = nc;
  for (size_t q = 0; q < nq; q++) {
    size_t len = b->qstart[q + 1] - b->qstart[q], w = len < PAIR_WINDOW ? len : PAIR_WINDOW;
    if (nchunks == 0 || inflight + w > BATCH_CHUNK) {
      b->chunks[nchunks++] = (chunk_arg){R, rank, st, i, b, q, q + 1, NULL};
      inflight = 0;
    }
    b->chunks[nchunks - 1].q1 = q + 1;
    inflight += w;
  }
  size_t na = nh + (nchunks > 1 ? nchunks : 0); /* the actors this batch starts */
  if (na > 0) { /* most batches (a pipeline's send/recv pairs) start none: nothing to describe or reserve */
    char what[700], where[600], why[1400];
    describe_op(R->c.t, rank, st, i, where, sizeof where);
    snprintf(what, sizeof what, "starting %zu helper actor%s for the batch of %zu ops at %s", na, na == 1 ? "" : "s",
             j - i, where);
    if (!stacks_reserve(na, what, why, sizeof why))
      actor_stacks_exit(why);
  }
  if (nh > 0 || nchunks > 1)
    hsem = sg_sem_init(0);
  nh = 0;
  for (size_t k = i; k < j; k++) {
    const dt_op *op = &st->ops[k];
    if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV || op->kind == DT_OP_MARK)
      continue;
    helper_arg *h = &b->helpers[nh++];
    h->run = R;
    h->rank = rank;
    h->op = op;
    h->done = hsem;
    h->end = &end[k - i];
    char name[64];
    snprintf(name, sizeof name, "r%d.s%d.op%zu", (int)rank, (int)st->id, k);
    sg_actor_t a = sg_actor_init(name, R->c.host_of_rank[rank]);
    sg_actor_set_data(a, h);
    sg_actor_start(a, helper_actor, 0, NULL);
  }
  if (nchunks == 1) {
    serve_queues(R, rank, st, i, b, 0, nq);
  } else {
    for (size_t k = 0; k < nchunks; k++) {
      chunk_arg *h = &b->chunks[k];
      h->done = hsem;
      char name[64];
      snprintf(name, sizeof name, "r%d.s%d.op%zu.q%zu", (int)rank, (int)st->id, i, h->q0);
      sg_actor_t a = sg_actor_init(name, R->c.host_of_rank[rank]);
      sg_actor_set_data(a, h);
      sg_actor_start(a, chunk_actor, 0, NULL);
    }
  }
  /* tests/e2e_limits.sh reads this line: no actor has more than BATCH_CHUNK comms in flight */
  XBT_VERB("batch of %zu ops on rank %d stream %d: %zu comms in %zu queues served by %zu actors, %zu other ops in "
           "helpers", j - i, (int)rank, (int)st->id, nc, nq, nchunks, nh);
  for (size_t k = 0; k < na; k++)
    sg_sem_acquire(hsem);
  if (hsem)
    sg_sem_destroy(hsem);
  /* A pair completes its own p2p cost after its data arrived; the batch ends with the last of them. */
  double last = 0;
  for (size_t c = 0; c < nc; c++)
    if (end[b->comm[c].off] > last)
      last = end[b->comm[c].off];
  if (last > simgrid_get_clock())
    sg_actor_sleep_for(last - simgrid_get_clock());
  pairs_done(R, rank, st, i, b, 1);
  batch_send_time(R, st, b);
  if (R->c.explain)
    explain_batch(R, rank, st, i, b, nq);
}

/* A rank's batch has completed: per collective kind, its time once on the kind's row, as the send row counts a
 * batch's sends (nccl-tests times a group of collectives launched together as one): from the latest last-member
 * arrival of its instances to its latest own completion of them. An instance of n members that ran is shared
 * among them: each adds 1/n of its time, an unbatched member 1/n of the instance's own (account), a batched one
 * 1/n of its batch's, times the instance's multiplicity (folding); a batch of K instances over the same n ranks
 * thus adds the span of the batch once (the mean of its members' spans), not K instance times. */
static void coll_batch_done(replay_run *R, batch_scratch *b)
{
  if (b->ncoll == 0)
    return;
  b->ncoll = 0;
  for (int k = 0; k < DT_OP_COUNT; k++) {
    struct batch_coll *bc = &b->coll[k];
    if (bc->n == 0)
      continue;
    if (bc->end > bc->arrival)
      R->by_kind[k].time_s += (bc->end - bc->arrival) * bc->share / (double)bc->n;
    *bc = (struct batch_coll){0, 0, 0, 0};
  }
}

/* Blocks until every `after=` edge of op (an op of stream `self`, a flat index, of rank) is complete. */
static void wait_deps(replay_run *R, int32_t rank, size_t self, const dt_op *op)
{
  for (uint32_t d = 0; d < op->ndeps; d++) {
    size_t fs = R->rank_stream0[rank] + (size_t)op->deps[d].stream;
    size_t need = (size_t)op->deps[d].index;
    if (R->stream_done[fs] > need)
      continue;
    dep_waiter *w = &R->waiter[self];
    if (!w->sem)
      w->sem = sg_sem_init(0);
    w->need = need;
    w->next = R->wait_head[fs];
    R->wait_head[fs] = self;
    R->state[self] = fs;
    sg_sem_acquire(w->sem); /* released by stream fs once stream_done[fs] > need */
    R->state[self] = STREAM_RUNNING;
  }
}

/* Stream fs has completed ops up to stream_done[fs]: wakes the waiters whose op is now done. */
static void wake_waiters(replay_run *R, size_t fs)
{
  size_t *link = &R->wait_head[fs];
  while (*link != NO_WAITER) {
    dep_waiter *w = &R->waiter[*link];
    if (R->stream_done[fs] > w->need) {
      R->state[*link] = STREAM_RUNNING; /* woken: it may act before it runs again (rank_quiet) */
      *link = w->next;
      sg_sem_release(w->sem);
    } else {
      link = &w->next;
    }
  }
}

/* ---- statistics, built as ops complete ---- */

/* a + b, or UINT64_MAX when the sum does not fit: a byte total never wraps (each op moves at most 2^53 bytes,
 * DT_TRACE_MAX_BYTES, so this takes more than 2,048 of the largest) */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* a * b, or UINT64_MAX when the product does not fit */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static void iv_add(ivlist *l, double s, double e)
{
  size_t j = l->n;
  while (j > 0 && l->v[j - 1][0] > e)
    j--;
  size_t i = j;
  while (i > 0 && l->v[i - 1][1] >= s)
    i--;
  if (i == j) {
    l->v = dt_grow(l->v, &l->cap, l->n, sizeof *l->v);
    memmove(l->v + j + 1, l->v + j, (l->n - j) * sizeof *l->v);
    l->v[j][0] = s;
    l->v[j][1] = e;
    l->n++;
    return;
  }
  double ns = s < l->v[i][0] ? s : l->v[i][0], ne = e > l->v[j - 1][1] ? e : l->v[j - 1][1];
  l->v[i][0] = ns;
  l->v[i][1] = ne;
  memmove(l->v + i + 1, l->v + j, (l->n - j) * sizeof *l->v);
  l->n -= j - i - 1;
}

/* Folds the intervals that end before w: no interval still to come starts before w, so none can touch them.
 * Strictly before: an interval ending at w could still merge with one starting at w. */
static void iv_fold(ivlist *l, double w)
{
  size_t k = 0;
  while (k < l->n && l->v[k][1] < w) {
    l->done += l->v[k][1] - l->v[k][0];
    k++;
  }
  if (k > 0 && l->n > k) /* memmove with a NULL array is undefined even for 0 bytes */
    memmove(l->v, l->v + k, (l->n - k) * sizeof *l->v);
  l->n -= k;
  l->lim = l->n * 2 > 16 ? l->n * 2 : 16;
}

/* Length of the union, summed in time order as dt_interval_union does (the same result to the bit). */
static double iv_total(const ivlist *l)
{
  double t = l->done;
  for (size_t k = 0; k < l->n; k++)
    t += l->v[k][1] - l->v[k][0];
  return t;
}

static void iv_free(ivlist *l)
{
  free(l->v);
}

static int over(const ivlist *l)
{
  return l->n > (l->lim ? l->lim : 16);
}

/* Keeps rank's lists short: folds what ends before the earliest issue of any op of the rank still running
 * or to come. A stream blocked on an `after=` edge issues its next op once woken, so not before now: without
 * that, a DP stream waiting for the backward kept every interval of the iteration unfolded (iv_add and memory
 * grew with the micro-batches). */
static void rank_compact(replay_run *R, int32_t rank)
{
  rank_acc *a = &R->acc[rank];
  int dover = 0;
  for (int d = 0; d < R->ndims; d++)
    dover |= over(&a->dboth[R->dims[d]]);
  if (!dover && !over(&a->comp) && !over(&a->comm) && !over(&a->both) && !over(&a->wait))
    return;
  double w = INFINITY, now = simgrid_get_clock();
  for (size_t fs = R->rank_stream0[rank]; fs < R->rank_stream0[rank + 1]; fs++) {
    double lo = R->stream_lo[fs];
    if (R->state[fs] < R->nstreams && lo < now) /* blocked in wait_deps (a woken one is running again) */
      lo = now;
    if (lo < w)
      w = lo;
  }
  iv_fold(&a->comp, w);
  iv_fold(&a->comm, w);
  iv_fold(&a->both, w);
  iv_fold(&a->wait, w);
  for (int d = 0; d < R->ndims; d++)
    iv_fold(&a->dboth[R->dims[d]], w);
}

/* Hands a completed instance or pair to the caller's on_instance callback. */
static void report_instance(replay_run *R, const rp_live *l, int pair, uint64_t bytes)
{
  const dt_op *op = l->op;
  dt_instance_record rec;
  rec.kind = pair ? DT_OP_SEND : op->kind;
  rec.group = pair ? -1 : (int32_t)l->key[0];
  rec.src = pair ? (int32_t)(l->key[0] >> 32) : -1;
  rec.dst = pair ? (int32_t)(uint32_t)l->key[0] : -1;
  rec.seq = op->match;
  rec.bytes = bytes;
  rec.nranks = l->n;
  rec.arrival_last_s = l->last_issue;
  rec.end_s = l->last_end;
  /* no algorithm ran for a pair or a one-member group: the kind's default names it */
  rec.algo = l->algo ? l->algo : pair ? "p2p" : dt_algo_name(rp_default_algo(rec.kind));
  rec.proto = l->proto;
  R->on_instance(&rec, R->on_instance_data);
}

/* How long rank computed (on its other streams) during the critical-path part of the communication op stream fs
 * just completed: its completed compute intervals and the computes still running, united, within the span. */
static double hidden_by_compute(replay_run *R, int32_t rank, size_t fs)
{
  double t0, t1;
  rp_cp_last_span(R->cp, fs, &t0, &t1);
  if (!(t1 > t0))
    return 0;
  /* the computes still running all end after t1: together they cover [s, t1], s their earliest issue */
  double s = t1;
  for (size_t q = R->rank_stream0[rank]; q < R->rank_stream0[rank + 1]; q++) {
    double since;
    if (q != fs && rp_cp_running_compute(R->cp, q, &since) && since < s)
      s = since;
  }
  if (s < t0)
    return t1 - t0;
  /* the completed ones: the rank's compute union (sorted, disjoint) within [t0, s] */
  const ivlist *c = &R->acc[rank].comp;
  double h = t1 - s;
  for (size_t k = c->n; k-- > 0 && c->v[k][1] > t0;) {
    double a = c->v[k][0] > t0 ? c->v[k][0] : t0, b = c->v[k][1] < s ? c->v[k][1] : s;
    if (b > a)
      h += b - a;
  }
  return h;
}

/* Message-size histograms: one instance of kind on trace group g (-1: a pair) of per-rank `bytes`. */
static void hist_add(replay_run *R, dt_op_kind kind, int32_t g, uint64_t bytes)
{
  const dt_trace *t = R->c.t;
  int b = dt_hist_bucket(bytes);
  dt_dim d = g >= 0 ? t->groups[g].dim : dt_trace_p2p_dim(t);
  dt_hist *h[3] = {&R->hist_kind[kind], &R->hist_dim[d], &R->hist_group[g >= 0 ? (size_t)g : t->ngroups]};
  for (int k = 0; k < 3; k++) {
    h[k]->count[b]++;
    h[k]->bytes[b] += (double)bytes;
  }
}

/* An instance or pair is complete: its per-kind totals (DESIGN.md §7). */
static void account(replay_run *R, const rp_live *l, int pair)
{
  const dt_op *op = l->op;
  /* folding: an instance or pair of the representatives stands for one per class member (a class's own instance
   * for itself) */
  int m = R->c.fold && (pair || R->c.fold_cls[l->op_rank] != (int32_t)l->key[0]) ? R->c.fold : 1;
  dt_op_kind kind = pair ? DT_OP_SEND : op->kind;
  int32_t g = pair ? -1 : (int32_t)l->key[0];
  size_t n = pair ? 2 : R->c.t->groups[g].nranks; /* l->n counts only the members that ran (folding) */
  uint64_t bytes = pair                        ? op->bytes
                   : kind == DT_OP_ALLTOALL ? rp_alltoall_bytes(op)
                   : kind == DT_OP_BARRIER  ? 0
                                            : op->bytes;
  for (int f = 0; f < m; f++) { /* folded: the images of the instance, each on its own group */
    int32_t ig = g >= 0 && m > 1 ? R->c.fold_gimg[(size_t)g * R->c.fold + f] : g;
    hist_add(R, kind, ig >= 0 || g < 0 ? ig : g, bytes);
  }
  double snccl = kind == DT_OP_ALLGATHER ? (double)n * (double)bytes : (double)bytes;
  dt_kind_stats *ks = &R->by_kind[kind];
  ks->count += (uint64_t)m;
  ks->bytes = sat_add(ks->bytes, sat_mul(bytes, (uint64_t)m));
  /* a pair whose send was batched: its batch adds its time once (run_batch); a collective: each member that ran
   * adds 1/n of its time, those in a batch through their batch's time (coll_batch_done) */
  if (pair)
    ks->time_s += dt_kind_pair_time(op->batch >= 0, l->last_issue, l->last_end) * m;
  else if (l->nbatched == 0)
    ks->time_s += (l->last_end - l->last_issue) * m;
  else
    ks->time_s += (l->last_end - l->last_issue) * m * (double)(l->n - l->nbatched) / l->n;
  ks->nccl_bytes += snccl * m;
  ks->bus_bytes += snccl * dt_busbw_factor(kind, n) * m;
  if (!pair && l->xrow)
    rp_explain_done(&R->c, l->xrow, l->last_end - l->last_issue, m);
  else if (pair && R->c.explain && op->batch < 0) /* a batched pair: its batch's queue is explained (run_batch) */
    rp_explain_p2p(&R->c, (int32_t)(l->key[0] >> 32), (int32_t)(uint32_t)l->key[0], bytes, 0,
                   l->last_end - l->last_issue, m);
  if (pair)
    XBT_VERB("send/recv %d -> %d tag %lld: %llu bytes, protocol %s, arrival %.9g s, end %.9g s",
              (int)(l->key[0] >> 32), (int)(uint32_t)l->key[0], (long long)l->key[1], (unsigned long long)bytes,
              l->proto ? l->proto : "-", l->last_issue, l->last_end);
  else
    XBT_VERB("%s #%lld on %s (%zu ranks): %llu bytes, %s/%s, arrival %.9g s, end %.9g s (%.9g s)",
              dt_op_kind_name(kind), (long long)op->match, R->c.t->groups[g].name, n, (unsigned long long)bytes,
              l->algo ? l->algo : dt_algo_name(rp_default_algo(kind)), l->proto ? l->proto : "-", l->last_issue,
              l->last_end, l->last_end - l->last_issue);
  if (R->on_instance)
    report_instance(R, l, pair, bytes);
}

/* One op of rank completed: issued at `issue` (its batch's issue), completed at `end` (its own completion;
 * the stream goes on when the whole batch has). */
static void op_done(replay_run *R, int32_t rank, size_t fs, size_t index, const dt_op *op, double issue, double end)
{
  rank_acc *a = &R->acc[rank];
  R->ops_done += R->c.fold ? (size_t)R->c.fold : 1;
  if (end > a->end)
    a->end = end;
  if (end > R->makespan)
    R->makespan = end;
  if (op->kind == DT_OP_MARK && rank == 0) {
    R->marks = dt_grow(R->marks, &R->marks_cap, R->nmarks, sizeof *R->marks);
    R->marks[R->nmarks++] = end;
  } else if (rank == 0 && R->nmarks > 0 && end > issue) {
    /* a mark completed while this op ran (issue < mark < end): the iteration it ends does not hold all of it */
    size_t lo = 0, hi = R->nmarks;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (R->marks[mid] <= issue)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < R->nmarks && R->marks[lo] < end && R->straddle++ == 0) {
      R->straddle_sid = dt_trace_rank_body(R->c.t, rank)->streams[fs - R->rank_stream0[rank]].id;
      R->straddle_idx = index;
      R->straddle_mark = R->marks[lo];
    }
  }
  if (op->kind == DT_OP_MARK && R->mark_job && R->mark_job[rank] >= 0) {
    int32_t j = R->mark_job[rank];
    R->jmarks[j] = dt_grow(R->jmarks[j], &R->jmarks_cap[j], R->njmarks[j], sizeof *R->jmarks[j]);
    R->jmarks[j][R->njmarks[j]++] = end;
  }
  if (op->kind == DT_OP_COMPUTE) {
    iv_add(&a->comp, issue, end);
    iv_add(&a->both, issue, end);
    for (int d = 0; d < R->ndims; d++)
      iv_add(&a->dboth[R->dims[d]], issue, end);
  }
  int pair = op->kind == DT_OP_SEND || op->kind == DT_OP_RECV;
  int32_t sid = R->tl ? dt_trace_rank_body(R->c.t, rank)->streams[fs - R->rank_stream0[rank]].id : 0;
  if (!pair && !dt_op_is_collective(op->kind)) {
    rp_cp_done(R->cp, rank, fs, index, op, -1, issue, end, NULL, 0);
    if (R->tl)
      dt_timeline_op(R->tl, rank, sid, index, op, -1, issue, end, NULL, NULL);
    return;
  }
  int32_t g = pair ? -1 : dt_trace_op_group(R->c.t, rank, op);
  iv_add(&a->comm, issue, end);
  iv_add(&a->both, issue, end);
  iv_add(&a->dboth[g >= 0 ? R->c.t->groups[g].dim : dt_trace_p2p_dim(R->c.t)], issue, end);
  /* every member has arrived by now (none completes before), so last_issue is final */
  rp_live *l = pair ? pair_of(R, rank, op) : rp_instance_of(&R->c, op, rank);
  if (l->last_issue > issue)
    iv_add(&a->wait, issue, l->last_issue);
  /* an instance with one running member (a folded class's, a group of one) needs no cell: that member is its late
   * one, so its predecessor is the op's own */
  rp_cp_done(R->cp, rank, fs, index, op, g, issue, end, l->n == 1 && !(l->last_issue > issue) ? NULL : &l->cp_cell,
             l->last_issue);
  rp_cp_set_hidden(R->cp, fs, hidden_by_compute(R, rank, fs));
  if (R->tl)
    dt_timeline_op(R->tl, rank, sid, index, op, g, issue, end, l->algo ? l->algo : pair ? "p2p" : NULL, l->proto);
  if (l->ndone == 0 || end > l->last_end)
    l->last_end = end;
  l->ndone++;
  if (!pair && R->args[fs].b.open) { /* it ran in a batch, which adds its collectives' time once (coll_batch_done) */
    struct batch_coll *bc = &R->args[fs].b.coll[op->kind];
    int m = R->c.fold && R->c.fold_cls[rank] != g ? R->c.fold : 1; /* as account() counts the instance */
    if (bc->n == 0 || l->last_issue > bc->arrival)
      bc->arrival = l->last_issue;
    if (bc->n == 0 || end > bc->end)
      bc->end = end;
    bc->share += (double)m / l->n;
    bc->n++;
    R->args[fs].b.ncoll++;
    l->nbatched++;
  }
  if (!l->op || (pair ? op->kind == DT_OP_SEND : rank < l->op_rank)) {
    l->op = op;
    l->op_rank = rank;
  }
  if (l->ndone == l->n) {
    account(R, l, pair);
    rp_cp_instance_done(R->cp, &l->cp_cell);
    rp_live_remove(pair ? &R->c.pairs : &R->c.instances, l);
  }
}

/* ---- coalescing: runs of GPU-local ops as one sleep (docs/replay.md, "Shortcuts") ---- */

/* Whether op (of rank's body) involves nobody but its stream: a compute, a delay, a mark, a collective on a group
 * of one, or a collective of a folded class, which its representative alone runs and waits in closed form
 * (rp_fold_plan admits a class only when every collective on it is). */
static int op_local(const replay_run *R, int32_t rank, const dt_op *op)
{
  if (op->kind == DT_OP_COMPUTE || op->kind == DT_OP_DELAY || op->kind == DT_OP_MARK)
    return 1;
  if (!dt_op_is_collective(op->kind))
    return 0;
  int32_t g = dt_trace_op_group(R->c.t, rank, op);
  return R->c.t->groups[g].nranks <= 1 || (R->c.fold && R->c.fold_cls[rank] == g);
}

/* Whether every `after=` edge of op (of stream `self` of rank) is complete already. */
static int deps_done(const replay_run *R, int32_t rank, const dt_op *op)
{
  for (uint32_t d = 0; d < op->ndeps; d++)
    if (R->stream_done[R->rank_stream0[rank] + (size_t)op->deps[d].stream] <= (size_t)op->deps[d].index)
      return 0;
  return 1;
}

/* Whether every other stream of rank has finished or waits for an op of stream fs: then nothing but fs can act
 * for the rank until fs completes an op an `after=` edge waits for (a run stops there), and what fs does is
 * decided by its own ops alone. */
static int rank_quiet(const replay_run *R, int32_t rank, size_t fs)
{
  for (size_t q = R->rank_stream0[rank]; q < R->rank_stream0[rank + 1]; q++)
    if (q != fs && R->state[q] != STREAM_DONE && R->state[q] != fs)
      return 0;
  return 1;
}

/* The `after=` targets of the ops of stream fs of rank (NULL: none). */
static const uint8_t *dep_targets(const replay_run *R, int32_t rank, size_t fs)
{
  const dt_rank *rk = &R->c.t->ranks[rank];
  int32_t owner = rk->template_rank >= 0 ? rk->template_rank : rank;
  return R->dep_target[R->rank_stream0[owner] + (fs - R->rank_stream0[rank])];
}

/* Marks every op an `after=` edge waits for (R->dep_target), per rank that owns its ops. */
static void find_dep_targets(replay_run *R)
{
  const dt_trace *t = R->c.t;
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *rk = &t->ranks[r];
    if (rk->template_rank >= 0)
      continue;
    for (size_t s = 0; s < rk->nstreams; s++)
      for (size_t i = 0; i < rk->streams[s].nops; i++) {
        const dt_op *op = &rk->streams[s].ops[i];
        for (uint32_t d = 0; d < op->ndeps; d++) {
          size_t ds = (size_t)op->deps[d].stream, di = (size_t)op->deps[d].index;
          if (ds >= rk->nstreams || di >= rk->streams[ds].nops)
            continue; /* never completes: the waiter blocks, its stream never runs ahead of it */
          uint8_t **tg = &R->dep_target[R->rank_stream0[r] + ds];
          if (!*tg)
            *tg = dt_xcalloc(rk->streams[ds].nops + 1, 1);
          (*tg)[di] = 1;
        }
      }
  }
}

/* Whether op i of stream st (flat fs) of rank, alone in its batch, starts a run of two GPU-local ops or more on a
 * quiet rank (a run of one would be the same sleep, with more checks). */
static int run_ahead(const replay_run *R, int32_t rank, size_t fs, const dt_stream *st, size_t i)
{
  const uint8_t *tgt = dep_targets(R, rank, fs);
  if (i + 1 >= st->nops || (tgt && tgt[i]))
    return 0;
  const dt_op *next = &st->ops[i + 1];
  if (next->batch >= 0 && i + 2 < st->nops && st->ops[i + 2].batch == next->batch)
    return 0;
  return op_local(R, rank, &st->ops[i]) && op_local(R, rank, next) && deps_done(R, rank, next) &&
         rank_quiet(R, rank, fs);
}

/* Runs ops i, i+1, ... of stream st (flat fs) of rank ahead of SimGrid's clock while they are GPU-local (op_local,
 * alone in their batch, their `after=` edges complete, none of them an `after=` target but the last), records each
 * with the times SimGrid would give it, then sleeps once until the last one ends. Exact: the rank is quiet
 * (rank_quiet) and stays so, no other rank takes part in these ops, and every time is the same sum of durations
 * SimGrid's clock would form (to rounding). Returns the index after the run. */
static size_t run_local(replay_run *R, stream_arg *a, const dt_stream *st, size_t i)
{
  int32_t rank = a->rank;
  size_t fs = a->flat, k = i;
  const uint8_t *tgt = dep_targets(R, rank, fs);
  double start = simgrid_get_clock(), now = start;
  ahead_clock = &now;
  for (;;) {
    const dt_op *op = &st->ops[k];
    double issue = now;
    R->stream_lo[fs] = issue;
    rp_cp_issue(R->cp, rank, fs, st, k, k + 1, issue);
    exec_op(R, rank, op);
    op_done(R, rank, fs, k, op, issue, now);
    R->stream_lo[fs] = k + 1 < st->nops ? now : INFINITY;
    rank_compact(R, rank);
    k++;
    if (k >= st->nops || (tgt && tgt[k - 1]))
      break;
    const dt_op *next = &st->ops[k];
    if ((next->batch >= 0 && k + 1 < st->nops && st->ops[k + 1].batch == next->batch) || !op_local(R, rank, next) ||
        !deps_done(R, rank, next))
      break;
  }
  ahead_clock = NULL;
  R->coalesced_runs++;
  R->coalesced_ops += k - i;
  if (now > start)
    sg_actor_sleep_for(now - start);
  R->stream_done[fs] = k;
  if (R->wait_head[fs] != NO_WAITER)
    wake_waiters(R, fs);
  return k;
}

static void stream_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  stream_arg *a = sg_actor_self_get_data();
  replay_run *R = a->run;
  int32_t rank = a->rank;
  sg_actor_daemonize(sg_actor_self());
  const dt_stream *st = &dt_trace_rank_body(R->c.t, rank)->streams[a->flat - R->rank_stream0[rank]];
  if (R->var && R->var->late[rank] > 0) /* a rank that starts late: all its streams wait (docs/whatif.md) */
    sg_actor_sleep_for(R->var->late[rank]);

  for (size_t i = 0; i < st->nops;) {
    size_t j = i + 1;
    if (st->ops[i].batch >= 0)
      while (j < st->nops && st->ops[j].batch == st->ops[i].batch)
        j++;
    for (size_t k = i; k < j; k++)
      wait_deps(R, rank, a->flat, &st->ops[k]);
    if (j == i + 1 && R->coalesce && run_ahead(R, rank, a->flat, st, i)) {
      i = run_local(R, a, st, i);
      continue;
    }
    double issue = simgrid_get_clock();
    R->stream_lo[a->flat] = issue;
    rp_cp_issue(R->cp, rank, a->flat, st, i, j, issue);
    double now;
    /* a send or recv with a batch id of its own is a batch too (its time on the send row, run_batch) */
    if (j == i + 1 && !(st->ops[i].batch >= 0 && (st->ops[i].kind == DT_OP_SEND || st->ops[i].kind == DT_OP_RECV))) {
      exec_op(R, rank, &st->ops[i]);
      now = simgrid_get_clock();
      op_done(R, rank, a->flat, i, &st->ops[i], issue, now);
    } else {
      run_batch(R, rank, a->flat, st, i, j, &a->b); /* it completes the pairs itself, as they complete */
      now = simgrid_get_clock();
      for (size_t k = i; k < j; k++)
        if (st->ops[k].kind != DT_OP_SEND && st->ops[k].kind != DT_OP_RECV)
          op_done(R, rank, a->flat, k, &st->ops[k], issue, st->ops[k].kind == DT_OP_MARK ? now : a->b.end[k - i]);
      coll_batch_done(R, &a->b);
      a->b.open = 0;
    }
    R->stream_done[a->flat] = j;
    R->stream_lo[a->flat] = j < st->nops ? now : INFINITY;
    rank_compact(R, rank);
    if (R->wait_head[a->flat] != NO_WAITER)
      wake_waiters(R, a->flat);
    i = j;
  }
  R->state[a->flat] = STREAM_DONE;
  if (--R->streams_left == 0)
    sg_sem_release(R->all_done);
}

/* The run stops (an abort, a deadlock's end): the pairs of the batches still open whose data arrived and whose p2p
 * cost ended by now completed, though their actor, waiting on others, was not woken to say so (pairs_done): they
 * count as completed, not as running. */
static void batches_settle(replay_run *R)
{
  for (size_t fs = 0; fs < R->nstreams; fs++) {
    batch_scratch *b = &R->args[fs].b;
    if (!b->open || b->npend == 0)
      continue;
    int32_t rank = R->args[fs].rank;
    const dt_stream *st = &dt_trace_rank_body(R->c.t, rank)->streams[fs - R->rank_stream0[rank]];
    pairs_done(R, rank, st, b->first, b, 0);
  }
}

/* The only non-daemon actor: ends the simulation when every stream has finished, or, if they are all
 * blocked forever, when its timeout fires. Its exit kills the daemon stream actors, so a deadlock ends the
 * run quietly instead of through SimGrid's deadlock report. */
static void watchdog_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replay_run *R = sg_actor_self_get_data();
  if (R->streams_left > 0)
    (void)sg_sem_acquire_timeout(R->all_done, WATCHDOG_TIMEOUT_S);
  if (R->streams_left > 0 && !R->abort_why) { /* a deadlock: the flows that completed while their waiters blocked */
    rp_flights_cut(&R->c, R->makespan > R->c.reached ? R->makespan : R->c.reached);
    batches_settle(R);
  }
}

/* ---- setup checks ---- */

static int check_inputs(const dt_platform *p, const dt_trace *t, const int32_t *gpu_of_rank, dt_error *err)
{
  int ngpus = dt_platform_gpu_count(p);
  if (t->nranks > ngpus)
    return dt_error_set(err, p->source ? p->source : "", 0, 0, "trace has %d ranks but platform '%s' has only %d GPUs",
                        (int)t->nranks, p->name ? p->name : "", ngpus);
  uint8_t *used = dt_xcalloc(ngpus > 0 ? (size_t)ngpus : 1, 1);
  for (int32_t r = 0; r < t->nranks; r++) {
    int32_t g = gpu_of_rank[r];
    if (g < 0 || g >= ngpus) {
      free(used);
      return dt_error_set(err, "", 0, 0, "placement puts rank %d on GPU %d, outside the platform's 0-%d", (int)r,
                          (int)g, ngpus - 1);
    }
    if (used[g]) {
      free(used);
      return dt_error_set(err, "", 0, 0, "placement puts rank %d on GPU %d, already used by another rank", (int)r,
                          (int)g);
    }
    used[g] = 1;
  }
  free(used);
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *rk = &t->ranks[r];
    if (rk->template_rank >= 0) { /* its ops are its template's, checked there */
      if (rk->template_rank >= t->nranks || t->ranks[rk->template_rank].template_rank >= 0)
        return dt_error_set(err, "", 0, 0, "rank %d runs a bad template: the trace was not validated (dt_trace_validate)",
                            (int)r);
      continue;
    }
    for (size_t s = 0; s < rk->nstreams; s++) {
      const dt_stream *st = &rk->streams[s];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        int bad = 0;
        if (dt_op_is_collective(op->kind))
          bad = op->group < 0 || (size_t)op->group >= t->ngroups || op->match < 0;
        else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
          bad = op->match < 0 || op->peer < 0 || op->peer >= t->nranks;
        for (uint32_t d = 0; d < op->ndeps && !bad; d++)
          bad = op->deps[d].stream < 0 || (size_t)op->deps[d].stream >= rk->nstreams || op->deps[d].index < 0;
        if (bad)
          return dt_error_set(err, t->files[op->file], op->line, 0,
                              "%s of rank %d is not matched: the trace was not validated (dt_trace_validate)",
                              dt_op_kind_name(op->kind), (int)r);
      }
    }
  }
  return DT_OK;
}

/* ---- statistics ---- */

static void add_note(dt_stats *s, size_t *cap, const char *fmt, ...) DT_PRINTF(3, 4);
static void add_note(dt_stats *s, size_t *cap, const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  s->notes = dt_grow(s->notes, cap, s->nnotes, sizeof *s->notes);
  s->notes[s->nnotes++] = dt_xstrdup(buf);
}

typedef struct note_sink {
  dt_stats *s;
  size_t *cap;
} note_sink;

static void note_to_stats(void *data, const char *text)
{
  note_sink *ns = data;
  add_note(ns->s, ns->cap, "%s", text);
}

static void describe_op(const dt_trace *t, int32_t rank, const dt_stream *st, size_t i, char *buf, size_t size)
{
  const dt_op *op = &st->ops[i];
  char what[256] = "";
  if (dt_op_is_collective(op->kind))
    snprintf(what, sizeof what, " group=%s bytes=%llu", t->groups[dt_trace_op_group(t, rank, op)].name,
             (unsigned long long)op->bytes);
  else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
    snprintf(what, sizeof what, " peer=%d bytes=%llu tag=%lld", (int)dt_trace_op_peer(t, rank, op),
             (unsigned long long)op->bytes, (long long)op->tag);
  char batch[40] = "";
  if (op->batch >= 0)
    snprintf(batch, sizeof batch, " batch=%lld", (long long)op->batch);
  char pos[600] = "", where[580];
  if (dt_trace_op_where(t, op, where, sizeof where)[0])
    snprintf(pos, sizeof pos, ", %s", where);
  snprintf(buf, size, "rank %d s%d op %zu (%s%s%s%s)", (int)rank, (int)st->id, i, dt_op_kind_name(op->kind), what,
           batch, pos);
}

/* The flat stream that ran stream si of rank r: its own, or its representative's when ranks are folded. */
static size_t open_stream(const replay_run *R, int32_t r, size_t si)
{
  int32_t rep = R->c.fold ? (int32_t)R->c.t->groups[R->c.fold_cls[r]].ranks[0] : r;
  return R->rank_stream0[rep] + si;
}

static dt_stats *collect_stats(replay_run *R)
{
  const dt_trace *t = R->c.t;
  dt_stats *s = dt_xcalloc(1, sizeof *s);
  size_t notes_cap = 0;
  s->nranks = t->nranks;
  s->per_rank = dt_xcalloc(t->nranks > 0 ? (size_t)t->nranks : 1, sizeof *s->per_rank);
  s->makespan_s = R->makespan;
  /* a deadlock: the last time anything moved, an op's end or a flow's (a ring's steps before it blocked) */
  s->stopped_s = R->abort_why ? R->abort_s : R->makespan > R->c.reached ? R->makespan : R->c.reached;
  /* batches that a failure or a deadlock stopped: their completed sends' time, as a batch adds at its end */
  for (size_t fs = 0; fs < R->nstreams; fs++)
    if (R->args[fs].b.open) {
      int32_t rank = R->args[fs].rank;
      batch_send_time(R, &dt_trace_rank_body(t, rank)->streams[fs - R->rank_stream0[rank]], &R->args[fs].b);
    }
  memcpy(s->by_kind, R->by_kind, sizeof s->by_kind);
  if (R->c.linkload) {
    s->links = dt_linkload_finish(R->c.linkload);
    R->c.linkload = NULL;
  }
  rp_explain_take(&R->c, s);
  s->peak_live_instances = R->c.instances.peak;
  s->peak_live_pairs = R->c.pairs.peak;

  /* ops by kind, over every rank: an owning rank's ops count once for it and once per template user */
  size_t kinds_seen[DT_OP_COUNT] = {0}, nops = 0;
  size_t *users = dt_xcalloc(t->nranks > 0 ? (size_t)t->nranks : 1, sizeof *users);
  for (int32_t r = 0; r < t->nranks; r++)
    if (t->ranks[r].template_rank >= 0)
      users[t->ranks[r].template_rank]++;
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *rk = &t->ranks[r];
    if (rk->template_rank >= 0)
      continue;
    for (size_t si = 0; si < rk->nstreams; si++)
      for (size_t i = 0; i < rk->streams[si].nops; i++) {
        kinds_seen[rk->streams[si].ops[i].kind] += 1 + users[r];
        nops += 1 + users[r];
      }
  }
  free(users);
  size_t not_done = nops - R->ops_done;
  s->ops_total = nops;
  s->ops_done = R->ops_done;

  for (int32_t r = 0; r < t->nranks; r++) {
    dt_rank_stats *rs = &s->per_rank[r];
    const rank_acc *a = &R->acc[r];
    rs->end_s = a->end;
    rs->compute_s = iv_total(&a->comp);
    rs->comm_s = iv_total(&a->comm);
    rs->exposed_comm_s = iv_total(&a->both) - rs->compute_s;
    if (rs->exposed_comm_s < 0)
      rs->exposed_comm_s = 0;
    rs->wait_s = iv_total(&a->wait);
    for (int d = 0; d < R->ndims; d++) {
      double e = iv_total(&a->dboth[R->dims[d]]) - rs->compute_s;
      rs->exposed_by_dim_s[R->dims[d]] = e > 0 ? e : 0;
    }
  }
  if (R->c.fold) /* folded ranks did what their representatives did; so did their streams */
    for (int32_t r = 0; r < t->nranks; r++) {
      int32_t rep = (int32_t)t->groups[R->c.fold_cls[r]].ranks[0];
      if (rep == r)
        continue;
      s->per_rank[r] = s->per_rank[rep];
      for (size_t si = 0; si < dt_trace_rank_body(t, r)->nstreams; si++)
        R->stream_done[R->rank_stream0[r] + si] = R->stream_done[R->rank_stream0[rep] + si];
    }
  memcpy(s->hist_kind, R->hist_kind, sizeof s->hist_kind);
  memcpy(s->hist_dim, R->hist_dim, sizeof s->hist_dim);
  s->nhist_groups = t->ngroups + 1;
  s->hist_group = R->hist_group;
  R->hist_group = NULL;
  rp_cp_finish(R->cp, s);
  R->cp = NULL;

  /* iterations: rank 0's marks; a run that a link failure or a deadlock stopped without marks completed none */
  if (R->nmarks == 0 && (R->abort_why || not_done > 0)) {
    s->niterations = 0;
    s->iterations_s = NULL;
  } else if (R->nmarks == 0) {
    s->niterations = 1;
    s->iterations_s = dt_xmalloc(sizeof *s->iterations_s);
    s->iterations_s[0] = s->makespan_s;
  } else {
    dt_sort_doubles(R->marks, R->nmarks);
    s->niterations = R->nmarks;
    s->iterations_s = dt_xmalloc(sizeof *s->iterations_s * R->nmarks);
    for (size_t i = 0; i < R->nmarks; i++)
      s->iterations_s[i] = R->marks[i] - (i > 0 ? R->marks[i - 1] : 0);
  }

  /* jobs: each one's end and its first rank's marks */
  if (R->mark_job) {
    s->njobs = (size_t)R->njobs;
    s->jobs = dt_xcalloc(s->njobs + 1, sizeof *s->jobs);
    for (int32_t r = 0; r < t->nranks; r++) {
      dt_job_stats *js = &s->jobs[R->job_of_rank[r]];
      if (s->per_rank[r].end_s > js->end_s)
        js->end_s = s->per_rank[r].end_s;
    }
    for (size_t j = 0; j < s->njobs; j++) {
      dt_job_stats *js = &s->jobs[j];
      size_t n = R->njmarks[j];
      js->niterations = n > 0 ? n : 1;
      js->iterations_s = dt_xmalloc(sizeof *js->iterations_s * js->niterations);
      if (n == 0) {
        js->iterations_s[0] = js->end_s;
        continue;
      }
      dt_sort_doubles(R->jmarks[j], n);
      for (size_t i = 0; i < n; i++)
        js->iterations_s[i] = R->jmarks[j][i] - (i > 0 ? R->jmarks[j][i - 1] : 0);
    }
  }

  /* notes: the assumptions that applied to this trace */
  if (R->straddle) {
    char at[32];
    add_note(s, &notes_cap,
             "iterations: %zu op%s of rank 0 still ran on other streams when one of its marks ended an iteration "
             "(first: s%d op %zu, across the mark at %s); an iteration is the time between marks, so such an op's "
             "time counts in two iterations", R->straddle, R->straddle == 1 ? "" : "s", (int)R->straddle_sid,
             R->straddle_idx, dt_format_time(R->straddle_mark, at, sizeof at));
  }
  size_t rings = kinds_seen[DT_OP_ALLREDUCE] + kinds_seen[DT_OP_REDUCESCATTER] + kinds_seen[DT_OP_ALLGATHER] +
                 kinds_seen[DT_OP_OTHER];
  if (R->c.fidelity == DT_FIDELITY_FLOW && rings > 0)
    add_note(s, &notes_cap,
             "replay fidelity flow: each ring collective is one aggregated flow per neighbour plus (steps-1) hop "
             "latencies (the rings' largest on a textbook platform, their mean on the NCCL model; exact when all "
             "hops are alike, see docs/replay.md)");
  if (R->c.fidelity == DT_FIDELITY_STEP && kinds_seen[DT_OP_ALLTOALL])
    add_note(s, &notes_cap, "replay fidelity step: all-to-all has one step, it ran as at flow fidelity");
  {
    note_sink ns = {s, &notes_cap};
    rp_coll_notes(&R->c, note_to_stats, &ns);
    for (int k = 0; k < DT_OP_COUNT; k++) { /* the same text again, apart, for `dtsim bench` */
      char line[700];
      if (rp_coll_fallback_note(&R->c, k, line, sizeof line)) {
        s->fallbacks = dt_xrealloc(s->fallbacks, sizeof *s->fallbacks * (s->nfallbacks + 1));
        s->fallbacks[s->nfallbacks++] = dt_xstrdup(line);
      }
    }
  }
  if (R->c.fold)
    add_note(s, &notes_cap,
             "shortcuts: ranks folded: 1 of every %d simulated, the others run the same ops on links isomorphic to "
             "theirs that nothing else shares, and copy their times (exact; --exact simulates every rank)",
             (int)R->c.fold);
  {
    uint64_t closed = 0;
    for (int k = 0; k < DT_OP_COUNT; k++)
      closed += R->c.closed_instances[k];
    if (closed > 0)
      add_note(s, &notes_cap,
               "shortcuts: %llu collective instances waited in closed form, exactly as their flows would take "
               "(nothing else could share their links; --exact simulates them as flows, docs/replay.md)",
               (unsigned long long)closed);
  }
  if (R->coalesced_ops > R->coalesced_runs)
    add_note(s, &notes_cap,
             "shortcuts: %zu GPU-local ops (computes, delays, marks, folded classes' collectives) run in %zu waits, "
             "each run ahead of SimGrid's clock and waited once (exact; --exact waits every op)",
             R->coalesced_ops, R->coalesced_runs);
  if (R->c.proto >= 0 && !R->c.p->nccl)
    add_note(s, &notes_cap, "the forced protocol has no effect: platform '%s' has no nccl: section (textbook "
                            "alpha-beta collectives, docs/replay.md)", R->c.p->name);
  if (kinds_seen[DT_OP_OTHER])
    add_note(s, &notes_cap, "%zu 'other' ops replayed as ring all-reduces of their bytes", kinds_seen[DT_OP_OTHER]);
  if (R->var) {
    char vbuf[900];
    add_note(s, &notes_cap, "%s", dt_var_describe(R->var, vbuf, sizeof vbuf));
    s->variability = 1;
    s->seed = R->var->seed;
    s->jitter_sigma = R->var->sigma;
    s->nslow = R->var->nslow;
    s->nlate = R->var->nlate;
  }
  if (R->var_unfolded)
    add_note(s, &notes_cap, "shortcuts: ranks not folded: the members of a tensor-parallel class differ in speed, "
                            "jitter or start, so every rank is simulated");

  /* deadlock: the first unfinished op of every stream (with the rest of its batch) is blocked */
  if (not_done > 0) {
    size_t cap = 0;
    for (int32_t r = 0; r < t->nranks; r++)
      for (size_t si = 0; si < dt_trace_rank_body(t, r)->nstreams; si++) {
        const dt_stream *st = &dt_trace_rank_body(t, r)->streams[si];
        size_t i = R->stream_done[R->rank_stream0[r] + si];
        if (i >= st->nops)
          continue;
        size_t j = i + 1;
        if (st->ops[i].batch >= 0)
          while (j < st->nops && st->ops[j].batch == st->ops[i].batch)
            j++;
        /* a batch that was running: the pairs of it that completed are not listed (folded ranks ran their
         * representative's) */
        const batch_scratch *b = &R->args[open_stream(R, r, si)].b;
        int running = b->open && b->first == i;
        for (size_t k = i; k < j; k++) {
          if (running && b->done[k - i])
            continue;
          char line[1024];
          describe_op(t, r, st, k, line, sizeof line);
          s->deadlock = dt_grow(s->deadlock, &cap, s->ndeadlock, sizeof *s->deadlock);
          s->deadlock[s->ndeadlock++] = dt_xstrdup(line);
        }
      }
    char at[32];
    if (R->abort_why)
      add_note(s, &notes_cap, "aborted at %s: %zu ops were running or waiting (listed), %zu ops never completed",
               dt_format_time(R->abort_s, at, sizeof at), s->ndeadlock, not_done);
    else
      add_note(s, &notes_cap,
               "deadlock: %zu ops blocked forever (listed), %zu ops never completed (with those queued behind them)",
               s->ndeadlock, not_done);
  }
  if (R->abort_why) {
    s->aborted = R->abort_why;
    R->abort_why = NULL;
    s->aborted_s = R->abort_s;
  }
  if (R->c.faults)
    for (size_t i = 0; i < R->c.faults->n; i++) {
      char buf[512];
      add_note(s, &notes_cap, "link faults: %s", dt_fault_describe(&R->c.faults->v[i], R->c.topo, buf, sizeof buf));
    }
  if (R->c.faults && dt_faults_dynamic(R->c.faults) && !R->exact_asked)
    add_note(s, &notes_cap, "link faults: a link changes during the run, so the shortcuts are off (every exchange is "
                            "simulated as flows, as with --exact)");
  return s;
}

/* ---- driver ---- */

/* Folding stays exact under variability when every rank computes and starts as its class's representative: no
 * jitter (each rank draws its own), equal speed factors and late starts within each class. */
static int var_keeps_fold(const replay_run *R)
{
  const dt_var *v = R->var;
  if (v->sigma > 0)
    return 0;
  for (int32_t r = 0; r < R->c.t->nranks; r++) {
    int32_t rep = (int32_t)R->c.t->groups[R->c.fold_cls[r]].ranks[0];
    if (v->speed[r] != v->speed[rep] || v->late[r] != v->late[rep])
      return 0;
  }
  return 1;
}

static int cmp_member(const void *a, const void *b)
{
  const rp_member *x = a, *y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

/* dt_degrade's runtime part stops the run: the watchdog wakes, its exit kills the stream actors. */
static void on_fault_abort(void *data, double now, const char *why)
{
  replay_run *R = data;
  if (!why) { /* routes changed */
    dt_linkload_forget_routes(R->c.linkload);
    return;
  }
  if (R->abort_why)
    return;
  R->abort_why = dt_xstrdup(why);
  R->abort_s = now;
  dt_linkload_stop(R->c.linkload, now); /* what is recorded from now on counts up to now only */
  rp_flights_cut(&R->c, now);           /* the flows in flight: what each moved */
  batches_settle(R);
  sg_sem_release(R->all_done);
}

int dt_replay_run(const dt_platform *p, const dt_trace *t, const dt_replay_opts *opts, dt_stats **out, dt_error *err)
{
  dt_replay_opts defaults;
  dt_replay_opts_init(&defaults);
  if (!opts)
    opts = &defaults;
  *out = NULL;
  dt_error_clear(err);

  int rc = DT_ERR;
  replay_run R;
  memset(&R, 0, sizeof R);
  int32_t *gpu_of_rank = NULL;
  char **sg_argv = NULL;
  int sg_argc = 0;
  size_t nranks = t->nranks > 0 ? (size_t)t->nranks : 0;

  if (simgrid_started) {
    dt_error_set(err, "", 0, 0, "the replay can run once per process (SimGrid is initialised once)");
    goto cleanup;
  }
  gpu_of_rank = dt_xmalloc(sizeof *gpu_of_rank * (nranks + 1));
  for (size_t r = 0; r < nranks; r++)
    gpu_of_rank[r] = opts->placement ? opts->placement[r] : (int32_t)r;
  if (check_inputs(p, t, gpu_of_rank, err) != DT_OK)
    goto cleanup;
  if (dt_var_resolve(p, opts->variability, gpu_of_rank, t->nranks, &R.var, err) != DT_OK)
    goto cleanup;
  if (dt_topology_build(p, &R.c.topo, err) != DT_OK)
    goto cleanup;

  R.c.p = p;
  R.c.t = t;
  R.c.fidelity = opts->fidelity;
  R.c.gpu_of_rank = gpu_of_rank;
  R.c.algo = opts->algo;
  R.c.proto = opts->proto;
  R.c.exact = opts->exact;
  R.exact_asked = opts->exact;
  if (opts->faults && opts->faults->n > 0) { /* slow and failed links (dt_degrade.h): before any route is read */
    R.c.faults = opts->faults;
    if (dt_faults_apply(opts->faults, R.c.topo, err) != DT_OK)
      goto cleanup;
    if (dt_faults_partition_error(R.c.topo, t, gpu_of_rank, err) != DT_OK)
      goto cleanup;
    if (dt_faults_dynamic(opts->faults))
      R.c.exact = 1;
  }
  /* the shortcuts assume dtsim's network model (dt_sg_platform.cpp): a SimGrid network setting turns them off */
  for (int i = 0; i < opts->simgrid_argc; i++)
    if (strstr(opts->simgrid_argv[i], "network/"))
      R.c.exact = 1;
  R.on_instance = opts->on_instance;
  R.on_instance_data = opts->on_instance_data;

  /* flat stream numbering (a template user has its template's streams) */
  R.rank_stream0 = dt_xcalloc(nranks + 1, sizeof *R.rank_stream0);
  for (size_t r = 0; r < nranks; r++)
    R.rank_stream0[r + 1] = R.rank_stream0[r] + dt_trace_rank_body(t, (int32_t)r)->nstreams;
  R.nstreams = R.rank_stream0[nranks];
  R.stream_lo = dt_xmalloc(sizeof *R.stream_lo * (R.nstreams + 1));
  size_t active = 0;
  for (size_t r = 0; r < nranks; r++) {
    const dt_rank *body = dt_trace_rank_body(t, (int32_t)r);
    for (size_t s = 0; s < body->nstreams; s++) {
      R.stream_lo[R.rank_stream0[r] + s] = body->streams[s].nops > 0 ? 0 : INFINITY;
      if (body->streams[s].nops > 0)
        active++;
    }
  }
  R.stream_done = dt_xcalloc(R.nstreams + 1, sizeof *R.stream_done);
  R.c.stream_done = R.stream_done; /* time-separated instances look at it (rp_closed_ready) */
  R.c.rank_stream0 = R.rank_stream0;
  R.cp = rp_cp_new(t, R.nstreams, R.rank_stream0);
  if (opts->timeline && !(R.tl = dt_timeline_open(opts->timeline, t, opts->timeline_ranks, opts->ntimeline_ranks, err)))
    goto cleanup;
  R.hist_group = dt_xcalloc(t->ngroups + 1, sizeof *R.hist_group);
  {
    int used[DT_DIM_COUNT] = {0};
    for (size_t g = 0; g < t->ngroups; g++)
      used[t->groups[g].dim] = 1;
    used[dt_trace_p2p_dim(t)] = 1;
    R.dims = dt_xmalloc(sizeof *R.dims * DT_DIM_COUNT);
    for (int d = 0; d < DT_DIM_COUNT; d++)
      if (used[d])
        R.dims[R.ndims++] = (dt_dim)d;
  }
  R.acc = dt_xcalloc(nranks + 1, sizeof *R.acc);
  R.waiter = dt_xcalloc(R.nstreams + 1, sizeof *R.waiter);
  R.wait_head = dt_xmalloc(sizeof *R.wait_head * (R.nstreams + 1));
  for (size_t fs = 0; fs <= R.nstreams; fs++)
    R.wait_head[fs] = NO_WAITER;
  R.args = dt_xcalloc(R.nstreams + 1, sizeof *R.args);
  R.state = dt_xmalloc(sizeof *R.state * (R.nstreams + 1));
  for (size_t fs = 0; fs <= R.nstreams; fs++)
    R.state[fs] = STREAM_DONE; /* the streams that run are set running when their actors start */
  R.c.members = dt_xcalloc(t->ngroups + 1, sizeof *R.c.members);
  for (size_t g = 0; g < t->ngroups; g++) {
    const dt_group *gr = &t->groups[g];
    R.c.members[g] = dt_xmalloc(sizeof *R.c.members[g] * (gr->nranks + 1));
    for (size_t i = 0; i < gr->nranks; i++)
      R.c.members[g][i] = (rp_member){gr->ranks[i], (int32_t)i};
    qsort(R.c.members[g], gr->nranks, sizeof *R.c.members[g], cmp_member);
  }
  rp_coll_init(&R.c);
  if (rp_select_check(&R.c, err) != DT_OK)
    goto cleanup;
  int folded = !opts->on_instance && !opts->timeline && rp_fold_plan(&R.c) > 0;
  if (folded && R.var && !var_keeps_fold(&R)) { /* folded ranks copy their representative: they must be alike */
    R.c.fold = 0;
    folded = 0;
    R.var_unfolded = 1;
  }
  if (folded) { /* only the representatives run */
    active = 0;
    for (size_t r = 0; r < nranks; r++) {
      const dt_rank *body = dt_trace_rank_body(t, (int32_t)r);
      for (size_t st = 0; st < body->nstreams; st++) {
        if (R.c.fold_idx[r] != 0)
          R.stream_lo[R.rank_stream0[r] + st] = INFINITY;
        else if (body->streams[st].nops > 0)
          active++;
      }
    }
  }
  if (opts->explain)
    R.c.explain = rp_explain_new();
  if (opts->job_of_rank && opts->njobs > 0 && opts->njobs <= DT_LINK_MAX_JOBS) {
    R.job_of_rank = opts->job_of_rank;
    R.njobs = opts->njobs;
    R.mark_job = dt_xmalloc(sizeof *R.mark_job * (nranks + 1));
    for (size_t r = 0; r < nranks; r++)
      R.mark_job[r] = -1;
    int ngpus = dt_platform_gpu_count(p);
    R.job_of_gpu = dt_xmalloc(sizeof *R.job_of_gpu * ((size_t)ngpus + 1));
    for (int gpu = 0; gpu < ngpus; gpu++)
      R.job_of_gpu[gpu] = -1;
    int32_t firsts[DT_LINK_MAX_JOBS];
    for (int32_t j = 0; j < R.njobs; j++)
      firsts[j] = -1;
    for (size_t r = 0; r < nranks; r++) {
      int32_t j = opts->job_of_rank[r];
      if (j < 0 || j >= R.njobs) {
        dt_error_set(err, "", 0, 0, "rank %zu has job %d, outside 0-%d", r, (int)j, (int)R.njobs - 1);
        goto cleanup;
      }
      R.job_of_gpu[gpu_of_rank[r]] = j;
      if (firsts[j] < 0)
        firsts[j] = (int32_t)r;
    }
    for (int32_t j = 0; j < R.njobs; j++) /* the job's first rank records its marks, or who runs for it (folded) */
      if (firsts[j] >= 0)
        R.mark_job[R.c.fold ? t->groups[R.c.fold_cls[firsts[j]]].ranks[0] : firsts[j]] = j;
    R.jmarks = dt_xcalloc((size_t)R.njobs, sizeof *R.jmarks);
    R.njmarks = dt_xcalloc((size_t)R.njobs, sizeof *R.njmarks);
    R.jmarks_cap = dt_xcalloc((size_t)R.njobs, sizeof *R.jmarks_cap);
  }
  if (opts->links) {
    R.c.linkload = dt_linkload_new(R.c.topo, t);
    dt_linkload_set_watermark(R.c.linkload, link_watermark, &R);
    if (R.job_of_gpu)
      dt_linkload_set_jobs(R.c.linkload, R.job_of_gpu, R.njobs);
    R.c.tl = R.tl; /* the fabric's counters show the busiest links: only when links are counted */
    dt_timeline_set_topology(R.c.tl, R.c.topo);
    if (R.c.tl) /* every transfer the accounting counts, folded ranks' and flow sets' too */
      dt_linkload_set_observer(R.c.linkload, dt_timeline_observe, R.c.tl);
  }

  /* SimGrid: silenced logs, then the caller's settings */
  sg_argv = dt_xcalloc((size_t)opts->simgrid_argc + 4, sizeof *sg_argv);
  sg_argv[sg_argc++] = dt_xstrdup("dtsim");
  sg_argv[sg_argc++] = dt_xstrdup("--log=root.thres:critical");
  if (active + 1 > GUARD_SIZE_ACTORS)
    sg_argv[sg_argc++] = dt_xstrdup("--cfg=contexts/guard-size:0");
  for (int i = 0; i < opts->simgrid_argc; i++)
    sg_argv[sg_argc++] = dt_xstrdup(opts->simgrid_argv[i]);
  char **argv_copy = dt_xcalloc((size_t)sg_argc + 1, sizeof *argv_copy);
  memcpy(argv_copy, sg_argv, sizeof *argv_copy * (size_t)sg_argc);
  int argc_copy = sg_argc;
  simgrid_started = 1;
  /* may reorder argv_copy; the strings stay owned by sg_argv */
  if (dt_sg_init(&argc_copy, argv_copy, err) != DT_OK) {
    free(argv_copy);
    goto cleanup;
  }
  free(argv_copy);
  dt_phase("building the SimGrid platform of %s", p->source ? p->source : p->name ? p->name : "the platform");
  if (dt_sg_platform_build(R.c.topo, err) != DT_OK)
    goto cleanup;
  /* coalescing: off with --exact (and what implies it), and where the order of the records or log lines is seen
   * (per-instance records, the timeline, verbose logs: SimGrid has read the --log settings by now) */
  R.coalesce = !R.c.exact && !opts->on_instance && !opts->timeline &&
               !XBT_LOG_ISENABLED(dtsim_replay, xbt_log_priority_verbose) &&
               !XBT_LOG_ISENABLED(dtsim_coll, xbt_log_priority_verbose);
  if (R.coalesce) {
    R.dep_target = dt_xcalloc(R.nstreams + 1, sizeof *R.dep_target);
    find_dep_targets(&R);
  }

  R.c.host_of_rank = dt_xcalloc(nranks + 1, sizeof *R.c.host_of_rank);
  for (size_t r = 0; r < nranks; r++) {
    char name[32];
    snprintf(name, sizeof name, "gpu%d", (int)gpu_of_rank[r]);
    R.c.host_of_rank[r] = sg_host_by_name(name);
    if (!R.c.host_of_rank[r]) {
      dt_error_set(err, "", 0, 0, "the SimGrid platform has no host '%s' for rank %zu", name, r);
      goto cleanup;
    }
  }

  /* actors: one per non-empty stream, then the watchdog (and the link faults' daemons): their stacks first */
  {
    char why[1400];
    if (!actor_stacks_fit(active + 1 + (R.c.faults ? R.c.faults->n : 0), why, sizeof why)) {
      rc = dt_error_set(err, "", 0, 0, "%s", why);
      goto cleanup;
    }
  }
  R.all_done = sg_sem_init(0);
  R.streams_left = active;
  for (size_t r = 0; r < nranks; r++) {
    const dt_rank *body = dt_trace_rank_body(t, (int32_t)r);
    for (size_t s = 0; s < body->nstreams; s++) {
      size_t fs = R.rank_stream0[r] + s;
      if (body->streams[s].nops == 0 || (R.c.fold && R.c.fold_idx[r] != 0))
        continue;
      R.args[fs] = (stream_arg){.run = &R, .rank = (int32_t)r, .flat = fs};
      R.state[fs] = STREAM_RUNNING;
      char name[48];
      snprintf(name, sizeof name, "r%zu.s%d", r, (int)body->streams[s].id);
      sg_actor_t a = sg_actor_init(name, R.c.host_of_rank[r]);
      sg_actor_set_data(a, &R.args[fs]);
      sg_actor_start(a, stream_actor, 0, NULL);
    }
  }
  sg_host_t wd_host = nranks > 0 ? R.c.host_of_rank[0] : sg_host_by_name("gpu0");
  if (R.c.faults && dt_faults_start(R.c.faults, R.c.topo, t, gpu_of_rank, wd_host, on_fault_abort, &R, err) != DT_OK)
    goto cleanup;
  if (wd_host) {
    sg_actor_t wd = sg_actor_init("watchdog", wd_host);
    sg_actor_set_data(wd, &R);
    sg_actor_start(wd, watchdog_actor, 0, NULL);
  }
  dt_phase("replaying the trace");
  simgrid_run();

  *out = collect_stats(&R);
  rc = DT_OK;
  if (R.tl) {
    dt_timeline *tl = R.tl;
    R.tl = NULL;
    R.c.tl = NULL;
    dt_timeline_link_counters(tl, (*out)->links);
    const dt_stats *o = *out;
    if (o->aborted || o->ndeadlock > 0) { /* the timeline as far as the run went, saying why it stopped */
      char what[1200], at[32];
      if (o->aborted)
        snprintf(what, sizeof what, "aborted at %s: %.1000s", dt_format_time(o->aborted_s, at, sizeof at), o->aborted);
      else
        snprintf(what, sizeof what, "deadlock: %zu ops blocked forever", o->ndeadlock);
      dt_timeline_outcome(tl, o->aborted ? o->aborted_s : o->stopped_s, what, o->ndeadlock ? o->deadlock[0] : NULL);
    }
    if (dt_timeline_close(tl, err) != DT_OK) {
      dt_stats_free(*out);
      *out = NULL;
      rc = DT_ERR;
    }
  }

cleanup:
  if (R.c.faults)
    dt_faults_stop();
  free(R.abort_why);
  if (R.all_done)
    sg_sem_destroy(R.all_done);
  if (R.waiter)
    for (size_t fs = 0; fs < R.nstreams; fs++)
      if (R.waiter[fs].sem)
        sg_sem_destroy(R.waiter[fs].sem);
  if (R.c.linkload)
    dt_linkstats_free(dt_linkload_finish(R.c.linkload));
  rp_table_free(&R.c.instances);
  rp_table_free(&R.c.pairs);
  if (R.acc)
    for (size_t r = 0; r < nranks; r++) {
      iv_free(&R.acc[r].comp);
      iv_free(&R.acc[r].comm);
      iv_free(&R.acc[r].both);
      iv_free(&R.acc[r].wait);
      for (int d = 0; d < DT_DIM_COUNT; d++)
        iv_free(&R.acc[r].dboth[d]);
    }
  rp_cp_free(R.cp);
  if (R.tl)
    dt_timeline_close(R.tl, NULL);
  free(R.dims);
  free(R.hist_group);
  free(R.acc);
  free(R.marks);
  for (int32_t j = 0; R.jmarks && j < R.njobs; j++)
    free(R.jmarks[j]);
  free(R.jmarks);
  free(R.njmarks);
  free(R.jmarks_cap);
  free(R.mark_job);
  free(R.job_of_gpu);
  free(R.pair_boxes);
  for (int i = 0; i < sg_argc; i++)
    free(sg_argv[i]);
  free(sg_argv);
  if (R.c.members)
    for (size_t g = 0; g < t->ngroups; g++)
      free(R.c.members[g]);
  free(R.c.members);
  if (R.c.coll)
    rp_coll_free(&R.c);
  rp_explain_take(&R.c, NULL);
  free(R.c.host_of_rank);
  if (R.args)
    for (size_t fs = 0; fs < R.nstreams; fs++)
      scratch_free(&R.args[fs].b);
  free(R.args);
  free(R.waiter);
  free(R.wait_head);
  free(R.state);
  if (R.dep_target)
    for (size_t fs = 0; fs < R.nstreams; fs++)
      free(R.dep_target[fs]);
  free(R.dep_target);
  free(R.stream_lo);
  free(R.stream_done);
  free(R.rank_stream0);
  dt_topology_free(R.c.topo);
  free(gpu_of_rank);
  dt_var_free(R.var);
  return rc;
}
