/* The replay (DESIGN.md §6-§7): one SimGrid actor per (rank, stream) runs the stream's ops in order, waits on
 * `after=` edges, sends and receives through one mailbox per matched pair, runs collectives through
 * dt_collectives.c, and records per-op issue and completion times from which the statistics are computed.
 * docs/replay.md describes the model. */
#include "dt_replay.h"

#include "../common/dt_util.h"
#include "dt_replay_internal.h"
#include "dt_sg_platform.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above this many actors SimGrid's guard pages run out (DESIGN.md §6). */
#define GUARD_SIZE_ACTORS 30000
/* The watchdog gives up waiting for the streams at this simulated date: only reached when every stream is
 * blocked forever (a deadlock), since then no other event is left. */
#define WATCHDOG_TIMEOUT_S 1e15

/* Per rank: where `after=` waiters sleep until another stream of the rank completes an op. */
typedef struct rank_sync {
  sg_mutex_t mutex;
  sg_cond_t cond;
  int waiters;
} rank_sync;

typedef struct stream_arg {
  struct replay_run *run;
  int32_t rank;
  size_t flat; /* flat stream index */
} stream_arg;

typedef struct helper_arg {
  struct replay_run *run;
  int32_t rank;
  const dt_op *op;
  sg_sem_t done;
} helper_arg;

typedef struct replay_run {
  rp_ctx c;
  size_t nstreams;      /* over all ranks */
  size_t *rank_stream0; /* nranks+1: first flat stream index of each rank */
  size_t *stream_op0;   /* nstreams+1: first global op index of each flat stream */
  size_t *stream_done;  /* per flat stream: ops completed (a prefix, ops complete in order) */
  double *issue;        /* per global op: issue time, < 0 until issued */
  double *end;          /* per global op: completion time */
  uint8_t *done;        /* per global op */
  rank_sync *rsync;     /* nranks */
  stream_arg *args;     /* nstreams */
  size_t streams_left;
  sg_sem_t all_done;
} replay_run;

static char payload_token;
static int simgrid_started;

void dt_replay_opts_init(dt_replay_opts *o)
{
  memset(o, 0, sizeof *o);
  o->fidelity = DT_FIDELITY_FLOW;
}

/* ---- actors ---- */

static sg_mailbox_t pair_mailbox(int64_t pair)
{
  char name[32];
  snprintf(name, sizeof name, "p%lld", (long long)pair);
  return sg_mailbox_by_name(name);
}

static double compute_seconds(const dt_platform *p, const dt_op *op)
{
  if (op->dur > 0)
    return op->dur;
  double rate = p->gpu_peak * p->gpu_efficiency;
  return op->flop > 0 && rate > 0 ? op->flop / rate : 0;
}

/* Performs one op's effect for `rank` (no bookkeeping). */
static void exec_op(replay_run *R, int32_t rank, const dt_op *op)
{
  switch (op->kind) {
  case DT_OP_COMPUTE: {
    double d = compute_seconds(R->c.p, op);
    if (d > 0)
      sg_actor_sleep_for(d);
    break;
  }
  case DT_OP_DELAY:
    if (op->dur > 0)
      sg_actor_sleep_for(op->dur);
    break;
  case DT_OP_MARK:
    break;
  case DT_OP_SEND:
    sg_mailbox_put(pair_mailbox(op->match), &payload_token, (long)op->bytes);
    break;
  case DT_OP_RECV:
    (void)sg_mailbox_get(pair_mailbox(op->match));
    break;
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
  sg_actor_daemonize(sg_actor_self());
  exec_op(h->run, h->rank, h->op);
  sg_sem_release(h->done);
}

/* Ops [i, j) of a stream form one batch (ncclGroupStart/End): sends and receives are posted together as
 * asynchronous comms, any other op runs in a helper actor on the same host; the batch completes when all
 * have. Arrays live on the actor's stack so that a deadlocked (killed) actor leaks nothing. */
static void run_batch(replay_run *R, int32_t rank, const dt_stream *st, size_t i, size_t j)
{
  size_t n = j - i;
  sg_comm_t comms[n];
  helper_arg helpers[n];
  void *got[n];
  size_t nc = 0, nh = 0;
  sg_sem_t hsem = NULL;
  for (size_t k = i; k < j; k++) {
    const dt_op *op = &st->ops[k];
    if (op->kind == DT_OP_SEND) {
      comms[nc++] = sg_mailbox_put_async(pair_mailbox(op->match), &payload_token, (long)op->bytes);
    } else if (op->kind == DT_OP_RECV) {
      comms[nc] = sg_mailbox_get_async(pair_mailbox(op->match), &got[nc]);
      nc++;
    } else if (op->kind != DT_OP_MARK) {
      if (!hsem)
        hsem = sg_sem_init(0);
      helper_arg *h = &helpers[nh++];
      h->run = R;
      h->rank = rank;
      h->op = op;
      h->done = hsem;
      char name[64];
      snprintf(name, sizeof name, "r%d.s%d.op%zu", (int)rank, (int)st->id, k);
      sg_actor_t a = sg_actor_init(name, R->c.host_of_rank[rank]);
      sg_actor_set_data(a, h);
      sg_actor_start(a, helper_actor, 0, NULL);
    }
  }
  if (nc > 0)
    sg_comm_wait_all(comms, nc);
  for (size_t k = 0; k < nh; k++)
    sg_sem_acquire(hsem);
  if (hsem)
    sg_sem_destroy(hsem);
}

/* Blocks until every `after=` edge of op is complete. */
static void wait_deps(replay_run *R, int32_t rank, const dt_op *op)
{
  for (uint32_t d = 0; d < op->ndeps; d++) {
    size_t fs = R->rank_stream0[rank] + (size_t)op->deps[d].stream;
    size_t need = (size_t)op->deps[d].index;
    if (R->stream_done[fs] > need)
      continue;
    rank_sync *rs = &R->rsync[rank];
    if (!rs->mutex) {
      rs->mutex = sg_mutex_init();
      rs->cond = sg_cond_init();
    }
    rs->waiters++;
    sg_mutex_lock(rs->mutex);
    while (R->stream_done[fs] <= need)
      sg_cond_wait(rs->cond, rs->mutex);
    sg_mutex_unlock(rs->mutex);
    rs->waiters--;
  }
}

static void stream_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  stream_arg *a = sg_actor_self_get_data();
  replay_run *R = a->run;
  int32_t rank = a->rank;
  sg_actor_daemonize(sg_actor_self());
  const dt_stream *st = &R->c.t->ranks[rank].streams[a->flat - R->rank_stream0[rank]];
  size_t base = R->stream_op0[a->flat];

  for (size_t i = 0; i < st->nops;) {
    size_t j = i + 1;
    if (st->ops[i].batch >= 0)
      while (j < st->nops && st->ops[j].batch == st->ops[i].batch)
        j++;
    for (size_t k = i; k < j; k++)
      wait_deps(R, rank, &st->ops[k]);
    double now = simgrid_get_clock();
    for (size_t k = i; k < j; k++)
      R->issue[base + k] = now;
    if (j == i + 1)
      exec_op(R, rank, &st->ops[i]);
    else
      run_batch(R, rank, st, i, j);
    now = simgrid_get_clock();
    for (size_t k = i; k < j; k++) {
      R->end[base + k] = now;
      R->done[base + k] = 1;
    }
    R->stream_done[a->flat] = j;
    rank_sync *rs = &R->rsync[rank];
    if (rs->waiters > 0) {
      sg_mutex_lock(rs->mutex);
      sg_cond_notify_all(rs->cond);
      sg_mutex_unlock(rs->mutex);
    }
    i = j;
  }
  if (--R->streams_left == 0)
    sg_sem_release(R->all_done);
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
  for (int32_t r = 0; r < t->nranks; r++)
    for (size_t s = 0; s < t->ranks[r].nstreams; s++) {
      const dt_stream *st = &t->ranks[r].streams[s];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        int bad = 0;
        if (dt_op_is_collective(op->kind))
          bad = op->group < 0 || (size_t)op->group >= t->ngroups || op->match < 0 || op->match >= t->ninstances;
        else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
          bad = op->match < 0 || op->match >= t->npairs;
        for (uint32_t d = 0; d < op->ndeps && !bad; d++)
          bad = op->deps[d].stream < 0 || (size_t)op->deps[d].stream >= t->ranks[r].nstreams || op->deps[d].index < 0;
        if (bad)
          return dt_error_set(err, t->files[op->file], op->line, 0,
                              "%s of rank %d is not matched: the trace was not validated (dt_trace_validate)",
                              dt_op_kind_name(op->kind), (int)r);
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

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Per instance (collective) or pair (send/recv): latest issue, latest completion, members done. */
typedef struct inst_acc {
  double last_issue, last_end;
  uint32_t ndone;
  const dt_op *op;
} inst_acc;

static void describe_op(const dt_trace *t, int32_t rank, const dt_stream *st, size_t i, char *buf, size_t size)
{
  const dt_op *op = &st->ops[i];
  char what[256] = "";
  if (dt_op_is_collective(op->kind))
    snprintf(what, sizeof what, " group=%s bytes=%llu", t->groups[op->group].name, (unsigned long long)op->bytes);
  else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
    snprintf(what, sizeof what, " peer=%d bytes=%llu tag=%lld", (int)op->peer, (unsigned long long)op->bytes,
             (long long)op->tag);
  char batch[40] = "";
  if (op->batch >= 0)
    snprintf(batch, sizeof batch, " batch=%lld", (long long)op->batch);
  char pos[600] = "";
  const char *file = op->file < t->nfiles ? t->files[op->file] : "";
  if (op->line > 0)
    snprintf(pos, sizeof pos, ", %s:%u", file[0] ? file : "line", op->line);
  snprintf(buf, size, "rank %d s%d op %zu (%s%s%s%s)", (int)rank, (int)st->id, i, dt_op_kind_name(op->kind), what,
           batch, pos);
}

static dt_stats *collect_stats(replay_run *R)
{
  const dt_trace *t = R->c.t;
  dt_stats *s = dt_xcalloc(1, sizeof *s);
  size_t notes_cap = 0;
  s->nranks = t->nranks;
  s->per_rank = dt_xcalloc(t->nranks > 0 ? (size_t)t->nranks : 1, sizeof *s->per_rank);

  inst_acc *inst = dt_xcalloc(t->ninstances > 0 ? (size_t)t->ninstances : 1, sizeof *inst);
  inst_acc *pair = dt_xcalloc(t->npairs > 0 ? (size_t)t->npairs : 1, sizeof *pair);
  size_t kinds_seen[DT_OP_COUNT] = {0};
  size_t max_rank_ops = 0, not_done = 0;

  /* pass 1: instance and pair arrival / completion */
  for (int32_t r = 0; r < t->nranks; r++) {
    size_t rank_ops = 0;
    for (size_t si = 0; si < t->ranks[r].nstreams; si++) {
      const dt_stream *st = &t->ranks[r].streams[si];
      size_t base = R->stream_op0[R->rank_stream0[r] + si];
      rank_ops += st->nops;
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        size_t g = base + i;
        kinds_seen[op->kind]++;
        if (!R->done[g]) {
          not_done++;
          continue;
        }
        if (R->end[g] > s->makespan_s)
          s->makespan_s = R->end[g];
        inst_acc *a = NULL;
        if (dt_op_is_collective(op->kind))
          a = &inst[op->match];
        else if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV)
          a = &pair[op->match];
        if (!a)
          continue;
        if (a->ndone == 0 || R->issue[g] > a->last_issue)
          a->last_issue = R->issue[g];
        if (a->ndone == 0 || R->end[g] > a->last_end)
          a->last_end = R->end[g];
        a->ndone++;
        if (!a->op || op->kind == DT_OP_SEND)
          a->op = op;
      }
    }
    if (rank_ops > max_rank_ops)
      max_rank_ops = rank_ops;
  }

  /* pass 2: per rank unions */
  double(*comp)[2] = dt_xmalloc(sizeof *comp * (max_rank_ops + 1));
  double(*comm)[2] = dt_xmalloc(sizeof *comm * (max_rank_ops + 1));
  double(*both)[2] = dt_xmalloc(sizeof *both * (2 * max_rank_ops + 1));
  double(*wait)[2] = dt_xmalloc(sizeof *wait * (max_rank_ops + 1));
  for (int32_t r = 0; r < t->nranks; r++) {
    size_t nk = 0, nc = 0, nw = 0;
    dt_rank_stats *rs = &s->per_rank[r];
    for (size_t si = 0; si < t->ranks[r].nstreams; si++) {
      const dt_stream *st = &t->ranks[r].streams[si];
      size_t base = R->stream_op0[R->rank_stream0[r] + si];
      for (size_t i = 0; i < st->nops; i++) {
        const dt_op *op = &st->ops[i];
        size_t g = base + i;
        if (!R->done[g])
          continue;
        if (R->end[g] > rs->end_s)
          rs->end_s = R->end[g];
        if (op->kind == DT_OP_COMPUTE) {
          comp[nk][0] = R->issue[g];
          comp[nk++][1] = R->end[g];
        } else if (dt_op_is_collective(op->kind) || op->kind == DT_OP_SEND || op->kind == DT_OP_RECV) {
          comm[nc][0] = R->issue[g];
          comm[nc++][1] = R->end[g];
          const inst_acc *a = dt_op_is_collective(op->kind) ? &inst[op->match] : &pair[op->match];
          if (a->last_issue > R->issue[g]) {
            wait[nw][0] = R->issue[g];
            wait[nw++][1] = a->last_issue;
          }
        }
      }
    }
    memcpy(both, comp, sizeof *comp * nk);
    memcpy(both + nk, comm, sizeof *comm * nc);
    rs->compute_s = dt_interval_union(comp, nk);
    rs->comm_s = dt_interval_union(comm, nc);
    rs->exposed_comm_s = dt_interval_union(both, nk + nc) - rs->compute_s;
    if (rs->exposed_comm_s < 0)
      rs->exposed_comm_s = 0;
    rs->wait_s = dt_interval_union(wait, nw);
  }
  free(comp);
  free(comm);
  free(both);
  free(wait);

  /* per kind, over complete instances and pairs */
  for (int64_t k = 0; k < t->ninstances; k++) {
    const inst_acc *a = &inst[k];
    if (!a->op)
      continue;
    size_t n = t->groups[a->op->group].nranks;
    if (a->ndone < n)
      continue;
    dt_kind_stats *ks = &s->by_kind[a->op->kind];
    uint64_t bytes = a->op->kind == DT_OP_ALLTOALL ? rp_alltoall_bytes(a->op) : a->op->bytes;
    if (a->op->kind == DT_OP_BARRIER)
      bytes = 0;
    double snccl = a->op->kind == DT_OP_ALLGATHER ? (double)n * (double)bytes : (double)bytes;
    ks->count++;
    ks->bytes += bytes;
    ks->time_s += a->last_end - a->last_issue;
    ks->nccl_bytes += snccl;
    ks->bus_bytes += snccl * dt_busbw_factor(a->op->kind, n);
  }
  for (int64_t k = 0; k < t->npairs; k++) {
    const inst_acc *a = &pair[k];
    if (!a->op || a->ndone < 2)
      continue;
    dt_kind_stats *ks = &s->by_kind[DT_OP_SEND];
    ks->count++;
    ks->bytes += a->op->bytes;
    ks->time_s += a->last_end - a->last_issue;
    ks->nccl_bytes += (double)a->op->bytes;
    ks->bus_bytes += (double)a->op->bytes * dt_busbw_factor(DT_OP_SEND, 2);
  }
  free(inst);
  free(pair);

  /* iterations: rank 0's marks */
  size_t nmarks = 0;
  double *marks = NULL;
  if (t->nranks > 0) {
    size_t cap = 0;
    for (size_t si = 0; si < t->ranks[0].nstreams; si++) {
      const dt_stream *st = &t->ranks[0].streams[si];
      size_t base = R->stream_op0[R->rank_stream0[0] + si];
      for (size_t i = 0; i < st->nops; i++)
        if (st->ops[i].kind == DT_OP_MARK && R->done[base + i]) {
          marks = dt_grow(marks, &cap, nmarks, sizeof *marks);
          marks[nmarks++] = R->end[base + i];
        }
    }
  }
  if (nmarks == 0) {
    s->niterations = 1;
    s->iterations_s = dt_xmalloc(sizeof *s->iterations_s);
    s->iterations_s[0] = s->makespan_s;
  } else {
    qsort(marks, nmarks, sizeof *marks, cmp_double);
    s->niterations = nmarks;
    s->iterations_s = dt_xmalloc(sizeof *s->iterations_s * nmarks);
    for (size_t i = 0; i < nmarks; i++)
      s->iterations_s[i] = marks[i] - (i > 0 ? marks[i - 1] : 0);
  }
  free(marks);

  /* notes: the assumptions that applied to this trace */
  size_t rings = kinds_seen[DT_OP_ALLREDUCE] + kinds_seen[DT_OP_REDUCESCATTER] + kinds_seen[DT_OP_ALLGATHER] +
                 kinds_seen[DT_OP_OTHER];
  if (R->c.fidelity == DT_FIDELITY_FLOW && rings > 0)
    add_note(s, &notes_cap,
             "replay fidelity flow: each ring collective is one aggregated flow per neighbour plus (steps-1) "
             "times the ring's largest hop latency (exact when all hops are alike, see docs/replay.md)");
  if (R->c.fidelity == DT_FIDELITY_STEP &&
      kinds_seen[DT_OP_BROADCAST] + kinds_seen[DT_OP_REDUCE] + kinds_seen[DT_OP_ALLTOALL] + kinds_seen[DT_OP_BARRIER])
    add_note(s, &notes_cap,
             "replay fidelity step applies to ring all-reduce, all-gather and reduce-scatter; broadcast, reduce, "
             "all-to-all and barrier ran at flow fidelity");
  if (kinds_seen[DT_OP_ALLTOALL])
    add_note(s, &notes_cap, "alltoall: one direct flow per member pair (flows are not aggregated per node pair)");
  if (kinds_seen[DT_OP_OTHER])
    add_note(s, &notes_cap, "%zu 'other' ops replayed as ring all-reduces of their bytes", kinds_seen[DT_OP_OTHER]);

  /* deadlock: the first unfinished op of every stream (with the rest of its batch) is blocked */
  if (not_done > 0) {
    size_t cap = 0;
    for (int32_t r = 0; r < t->nranks; r++)
      for (size_t si = 0; si < t->ranks[r].nstreams; si++) {
        const dt_stream *st = &t->ranks[r].streams[si];
        size_t i = R->stream_done[R->rank_stream0[r] + si];
        if (i >= st->nops)
          continue;
        size_t j = i + 1;
        if (st->ops[i].batch >= 0)
          while (j < st->nops && st->ops[j].batch == st->ops[i].batch)
            j++;
        for (size_t k = i; k < j; k++) {
          char line[1024];
          describe_op(t, r, st, k, line, sizeof line);
          s->deadlock = dt_grow(s->deadlock, &cap, s->ndeadlock, sizeof *s->deadlock);
          s->deadlock[s->ndeadlock++] = dt_xstrdup(line);
        }
      }
    add_note(s, &notes_cap,
             "deadlock: %zu ops blocked forever (listed), %zu ops never completed (with those queued behind them)",
             s->ndeadlock, not_done);
  }
  return s;
}

/* ---- driver ---- */

static int cmp_member(const void *a, const void *b)
{
  const rp_member *x = a, *y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
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
  if (dt_topology_build(p, &R.c.topo, err) != DT_OK)
    goto cleanup;

  R.c.p = p;
  R.c.t = t;
  R.c.fidelity = opts->fidelity;
  R.c.gpu_of_rank = gpu_of_rank;

  /* flat stream and op numbering */
  R.rank_stream0 = dt_xcalloc(nranks + 1, sizeof *R.rank_stream0);
  for (size_t r = 0; r < nranks; r++)
    R.rank_stream0[r + 1] = R.rank_stream0[r] + t->ranks[r].nstreams;
  R.nstreams = R.rank_stream0[nranks];
  R.stream_op0 = dt_xcalloc(R.nstreams + 1, sizeof *R.stream_op0);
  size_t active = 0;
  for (size_t r = 0; r < nranks; r++)
    for (size_t s = 0; s < t->ranks[r].nstreams; s++) {
      size_t fs = R.rank_stream0[r] + s;
      R.stream_op0[fs + 1] = R.stream_op0[fs] + t->ranks[r].streams[s].nops;
      if (t->ranks[r].streams[s].nops > 0)
        active++;
    }
  size_t nops = R.stream_op0[R.nstreams];
  R.stream_done = dt_xcalloc(R.nstreams + 1, sizeof *R.stream_done);
  R.issue = dt_xmalloc(sizeof *R.issue * (nops + 1));
  R.end = dt_xcalloc(nops + 1, sizeof *R.end);
  R.done = dt_xcalloc(nops + 1, 1);
  for (size_t i = 0; i < nops; i++)
    R.issue[i] = -1;
  R.rsync = dt_xcalloc(nranks + 1, sizeof *R.rsync);
  R.args = dt_xcalloc(R.nstreams + 1, sizeof *R.args);
  R.c.instances = dt_xcalloc(t->ninstances > 0 ? (size_t)t->ninstances : 1, sizeof *R.c.instances);
  R.c.members = dt_xcalloc(t->ngroups + 1, sizeof *R.c.members);
  R.c.ring_alpha = dt_xmalloc(sizeof *R.c.ring_alpha * (t->ngroups + 1));
  for (size_t g = 0; g < t->ngroups; g++) {
    const dt_group *gr = &t->groups[g];
    R.c.members[g] = dt_xmalloc(sizeof *R.c.members[g] * (gr->nranks + 1));
    for (size_t i = 0; i < gr->nranks; i++)
      R.c.members[g][i] = (rp_member){gr->ranks[i], (int32_t)i};
    qsort(R.c.members[g], gr->nranks, sizeof *R.c.members[g], cmp_member);
    R.c.ring_alpha[g] = -1;
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
  simgrid_init(&argc_copy, argv_copy); /* may reorder argv_copy; the strings stay owned by sg_argv */
  free(argv_copy);
  if (dt_sg_platform_build(R.c.topo, err) != DT_OK)
    goto cleanup;

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

  /* actors: one per non-empty stream, then the watchdog */
  R.all_done = sg_sem_init(0);
  R.streams_left = active;
  for (size_t r = 0; r < nranks; r++)
    for (size_t s = 0; s < t->ranks[r].nstreams; s++) {
      size_t fs = R.rank_stream0[r] + s;
      if (t->ranks[r].streams[s].nops == 0)
        continue;
      R.args[fs] = (stream_arg){&R, (int32_t)r, fs};
      char name[48];
      snprintf(name, sizeof name, "r%zu.s%d", r, (int)t->ranks[r].streams[s].id);
      sg_actor_t a = sg_actor_init(name, R.c.host_of_rank[r]);
      sg_actor_set_data(a, &R.args[fs]);
      sg_actor_start(a, stream_actor, 0, NULL);
    }
  sg_host_t wd_host = nranks > 0 ? R.c.host_of_rank[0] : sg_host_by_name("gpu0");
  if (wd_host) {
    sg_actor_t wd = sg_actor_init("watchdog", wd_host);
    sg_actor_set_data(wd, &R);
    sg_actor_start(wd, watchdog_actor, 0, NULL);
  }
  simgrid_run();

  *out = collect_stats(&R);
  rc = DT_OK;

cleanup:
  if (R.all_done)
    sg_sem_destroy(R.all_done);
  if (R.rsync)
    for (size_t r = 0; r < nranks; r++) {
      if (R.rsync[r].mutex)
        sg_mutex_destroy(R.rsync[r].mutex);
      if (R.rsync[r].cond)
        sg_cond_destroy(R.rsync[r].cond);
    }
  if (R.c.instances)
    for (int64_t k = 0; k < t->ninstances; k++)
      if (R.c.instances[k].sem)
        sg_sem_destroy(R.c.instances[k].sem);
  for (int i = 0; i < sg_argc; i++)
    free(sg_argv[i]);
  free(sg_argv);
  if (R.c.members)
    for (size_t g = 0; g < t->ngroups; g++)
      free(R.c.members[g]);
  free(R.c.members);
  free(R.c.ring_alpha);
  free(R.c.instances);
  free(R.c.host_of_rank);
  free(R.args);
  free(R.rsync);
  free(R.done);
  free(R.end);
  free(R.issue);
  free(R.stream_done);
  free(R.stream_op0);
  free(R.rank_stream0);
  dt_topology_free(R.c.topo);
  free(gpu_of_rank);
  return rc;
}
