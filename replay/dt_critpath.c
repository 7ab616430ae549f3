/* The critical path, built forward. Completed ops are records on *runs*: a run holds consecutive ops of one stream,
 * each the critical predecessor of the next (the common case: a stream's ops one after the other), and points at
 * the predecessor of its first op (a record of another run), or at the instance's *cell* when that op is a
 * collective or a send/recv (the cell points at the late member's predecessor once that member completes). Runs
 * and cells are reference counted as wholes, so a run of ops is released with one touch of its header instead of
 * one per op (those touches came long after the ops, cold: a cache miss each, 21 % of the CPU at 2,048 GPUs).
 * rp_cp_finish walks back from the op that ends last. */
#include "dt_critpath.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_critpath, dtsim, "critical path: its length and split once the replay ends");

/* One completed op: its index in its stream (the rest -- kind, group, dimension -- is read from the trace when the
 * path is walked) and its part on the path. */
typedef struct cp_rec {
  double t0, t1;   /* the part on the path */
  double hidden;   /* of it, the time the rank computed on other streams (communication ops) */
  uint32_t op;
} cp_rec;

/* A run (cap > 0) or an instance's cell (cap 0). */
struct rp_cp_node {
  rp_cp_node *prev;   /* run: the run holding its first record's predecessor (NULL: none), or its cell (via_cell);
                         cell: the run holding the late member's predecessor, or NULL */
  uint32_t prev_pos;  /* the predecessor's record in prev (not for via_cell) */
  uint32_t refs;      /* references into any of its records (a cell: to it) */
  int32_t rank;       /* run: its stream's rank; cell: the late member's (INT32_MAX until one completed) */
  uint32_t fs;        /* run: its flat stream */
  uint32_t n, cap;    /* records */
  uint8_t via_cell;
  cp_rec *rec;
};

/* A reference to record pos of run s (s NULL: none). */
typedef struct cp_ref {
  rp_cp_node *s;
  uint32_t pos;
} cp_ref;

#define POOL_CHUNK 4096
/* Records per run at most: a run is released as a whole, so one that something references early keeps its later
 * records too; runs stay short (a new one continues a full one). */
#define RUN_MAX 16

/* Times this close count as equal when choosing among predecessors, late members and the last op: the lowest rank
 * (or the op's own stream) wins, so that the path does not depend on rounding (a closed-form wait against the same
 * exchange simulated as flows). */
static int later(double a, double b)
{
  return a > b + 1e-12 + 1e-9 * fabs(b);
}

struct rp_cp {
  const dt_trace *t;
  const size_t *rank_stream0;
  size_t nstreams;
  cp_ref *last;       /* per flat stream: its last completed op */
  cp_ref *pred;       /* per flat stream: the predecessor of the ops it runs now */
  cp_ref *just;       /* per flat stream: the op rp_cp_done recorded last (borrowed; none if it was dropped) */
  double *run_since;  /* per flat stream: issue of the compute it runs now, or -1 */
  double *inflight;   /* per flat stream: issue of the ops it runs now, INFINITY between ops */
  cp_ref best;        /* the op that ends last so far */
  rp_cp_node *free_list;
  rp_cp_node **chunks;
  size_t nchunks, chunks_cap;
  dt_dim p2p_dim;
};

static const cp_ref NO_REF = {NULL, 0};

rp_cp *rp_cp_new(const dt_trace *t, size_t nstreams, const size_t *rank_stream0)
{
  rp_cp *cp = dt_xcalloc(1, sizeof *cp);
  cp->t = t;
  cp->nstreams = nstreams;
  cp->rank_stream0 = rank_stream0;
  cp->last = dt_xcalloc(nstreams + 1, sizeof *cp->last);
  cp->pred = dt_xcalloc(nstreams + 1, sizeof *cp->pred);
  cp->just = dt_xcalloc(nstreams + 1, sizeof *cp->just);
  cp->run_since = dt_xmalloc(sizeof *cp->run_since * (nstreams + 1));
  cp->inflight = dt_xmalloc(sizeof *cp->inflight * (nstreams + 1));
  for (size_t k = 0; k <= nstreams; k++) {
    cp->run_since[k] = -1;
    cp->inflight[k] = INFINITY;
  }
  cp->p2p_dim = dt_trace_p2p_dim(t);
  return cp;
}

/* A new run or cell (cap 0) with one reference, its creator's. */
static rp_cp_node *node_new(rp_cp *cp, uint32_t cap)
{
  if (!cp->free_list) {
    rp_cp_node *chunk = dt_xmalloc(sizeof *chunk * POOL_CHUNK);
    cp->chunks = dt_grow(cp->chunks, &cp->chunks_cap, cp->nchunks, sizeof *cp->chunks);
    cp->chunks[cp->nchunks++] = chunk;
    for (size_t k = 0; k < POOL_CHUNK; k++) {
      chunk[k].prev = cp->free_list;
      chunk[k].rec = NULL;
      cp->free_list = &chunk[k];
    }
  }
  rp_cp_node *n = cp->free_list;
  cp->free_list = n->prev;
  *n = (rp_cp_node){.refs = 1, .cap = cap, .rec = cap ? dt_xmalloc(sizeof *n->rec * cap) : NULL};
  return n;
}

static cp_ref ref(cp_ref r)
{
  if (r.s)
    r.s->refs++;
  return r;
}

/* Drops one reference to run or cell n; frees the ones that nobody references any more, down the chain (each has
 * one predecessor: a loop, since chains are long). */
static void unref(rp_cp *cp, rp_cp_node *n)
{
  while (n && --n->refs == 0) {
    rp_cp_node *a = n->prev;
    free(n->rec);
    n->rec = NULL;
    n->prev = cp->free_list;
    cp->free_list = n;
    n = a;
  }
}

static double t1_of(cp_ref r)
{
  return r.s->rec[r.pos].t1;
}

void rp_cp_issue(rp_cp *cp, int32_t rank, size_t fs, const dt_stream *st, size_t i, size_t j, double issue)
{
  cp_ref best = cp->last[fs];
  for (size_t k = i; k < j; k++)
    for (uint32_t d = 0; d < st->ops[k].ndeps; d++) {
      cp_ref c = cp->last[cp->rank_stream0[rank] + (size_t)st->ops[k].deps[d].stream];
      if (c.s && !later(t1_of(c), issue) && (!best.s || later(t1_of(c), t1_of(best))))
        best = c;
    }
  unref(cp, cp->pred[fs].s);
  cp->pred[fs] = ref(best);
  cp->run_since[fs] = j == i + 1 && st->ops[i].kind == DT_OP_COMPUTE ? issue : -1;
  cp->inflight[fs] = issue;
}

double rp_cp_watermark(const rp_cp *cp, double now)
{
  double w = now;
  for (size_t fs = 0; fs < cp->nstreams; fs++)
    if (cp->inflight[fs] < w)
      w = cp->inflight[fs];
  return w;
}

void rp_cp_hold(rp_cp *cp, size_t fs, double since)
{
  cp->inflight[fs] = since;
}

void rp_cp_last_span(const rp_cp *cp, size_t fs, double *t0, double *t1)
{
  const cp_ref *j = &cp->just[fs];
  *t0 = j->s ? j->s->rec[j->pos].t0 : 0;
  *t1 = j->s ? j->s->rec[j->pos].t1 : 0;
}

void rp_cp_set_hidden(rp_cp *cp, size_t fs, double hidden_s)
{
  if (cp->just[fs].s)
    cp->just[fs].s->rec[cp->just[fs].pos].hidden = hidden_s;
}

int rp_cp_running_compute(const rp_cp *cp, size_t fs, double *since)
{
  *since = cp->run_since[fs];
  return cp->run_since[fs] >= 0;
}

void rp_cp_done(rp_cp *cp, int32_t rank, size_t fs, size_t index, const dt_op *op, int32_t g, double issue, double end,
                rp_cp_node **cell, double last_issue)
{
  (void)op;
  (void)g;
  cp_rec rec = {issue, end, 0, (uint32_t)index};
  /* the stream's last op is the one that ends last: ops of a batch complete in any order */
  int keep = !cp->last[fs].s || end >= t1_of(cp->last[fs]);
  cp_ref *last = &cp->last[fs], *pred = &cp->pred[fs], r;
  if (!cell && keep && last->s && pred->s == last->s && pred->pos == last->pos && last->pos + 1 == last->s->n &&
      last->s->n < RUN_MAX) {
    /* the op follows its stream's last op, which is its predecessor: a record more on that run, which last
     * already references */
    rp_cp_node *s = last->s;
    if (s->n == s->cap) {
      s->cap = s->cap * 4 < RUN_MAX ? s->cap * 4 : RUN_MAX;
      s->rec = dt_xrealloc(s->rec, sizeof *s->rec * s->cap);
    }
    s->rec[s->n] = rec;
    r = (cp_ref){s, s->n++};
    last->pos = r.pos;
  } else {
    rp_cp_node *s = node_new(cp, 1); /* the creation reference: last's, or dropped below */
    s->rank = rank;
    s->fs = (uint32_t)fs;
    s->n = 1;
    if (cell) {
      if (!*cell) {
        *cell = node_new(cp, 0); /* the instance's reference */
        (*cell)->rank = INT32_MAX;
      }
      (*cell)->refs++;
      s->prev = *cell;
      s->via_cell = 1;
      if (last_issue > issue)
        rec.t0 = last_issue < end ? last_issue : end;
      /* a member that arrived last (the lowest rank among those that did): its predecessor is the instance's */
      if (!later(last_issue, issue) && rank < (*cell)->rank) {
        unref(cp, (*cell)->prev);
        cp_ref p = ref(*pred);
        (*cell)->prev = p.s;
        (*cell)->prev_pos = p.pos;
        (*cell)->rank = rank;
      }
    } else {
      cp_ref p = ref(*pred);
      s->prev = p.s;
      s->prev_pos = p.pos;
    }
    s->rec[0] = rec;
    r = (cp_ref){s, 0};
    if (keep) {
      unref(cp, last->s);
      *last = r;
    }
  }
  if (!cp->best.s || later(end, t1_of(cp->best)) || (!later(t1_of(cp->best), end) && rank < cp->best.s->rank)) {
    unref(cp, cp->best.s);
    cp->best = ref(r);
  }
  cp->just[fs] = keep ? r : NO_REF;
  if (!keep) /* within a batch, only the op that ends last stays on the path (or the one that ends last so far) */
    unref(cp, r.s);
  cp->inflight[fs] = INFINITY; /* a batch's ops complete together: its transfers are all recorded by now */
  if (op->kind == DT_OP_COMPUTE)
    cp->run_since[fs] = -1;
}

void rp_cp_instance_done(rp_cp *cp, rp_cp_node **cell)
{
  unref(cp, *cell);
  *cell = NULL;
}

/* The critical predecessor of record r. */
static cp_ref prev_of(cp_ref r)
{
  if (r.pos > 0)
    return (cp_ref){r.s, r.pos - 1};
  const rp_cp_node *p = r.s->via_cell ? r.s->prev : r.s;
  return (cp_ref){p->prev, p->prev_pos};
}

void rp_cp_finish(rp_cp *cp, dt_stats *s)
{
  if (cp->best.s) {
    const dt_trace *t = cp->t;
    dt_critical *c = dt_xcalloc(1, sizeof *c);
    size_t n = 0;
    for (cp_ref x = cp->best; x.s; x = prev_of(x))
      n++;
    c->nops = n;
    c->nsegs = n < DT_CP_MAX_SEGMENTS ? n : DT_CP_MAX_SEGMENTS;
    c->segs = dt_xmalloc(sizeof *c->segs * (c->nsegs + 1));
    uint8_t *seen = dt_xcalloc(t->nranks > 0 ? (size_t)t->nranks : 1, 1);
    size_t k = n;
    for (cp_ref x = cp->best; x.s; x = prev_of(x)) {
      k--;
      const cp_rec *xr = &x.s->rec[x.pos];
      cp_ref p = prev_of(x);
      int32_t rank = x.s->rank;
      const dt_stream *st = &dt_trace_rank_body(t, rank)->streams[x.s->fs - cp->rank_stream0[rank]];
      const dt_op *op = &st->ops[xr->op];
      int32_t g = dt_op_is_collective(op->kind) ? dt_trace_op_group(t, rank, op) : -1;
      dt_dim dim = g >= 0 && (size_t)g < t->ngroups                      ? t->groups[g].dim
                   : op->kind == DT_OP_SEND || op->kind == DT_OP_RECV ? cp->p2p_dim
                                                                        : DT_DIM_NONE;
      double t0 = xr->t0, before = p.s ? p.s->rec[p.pos].t1 : 0;
      if (t0 > before)
        c->wait_s += t0 - before;
      double len = xr->t1 - t0;
      if (op->kind == DT_OP_COMPUTE)
        c->compute_s += len;
      else if (op->kind == DT_OP_DELAY)
        c->host_s += len;
      else if (op->kind != DT_OP_MARK) {
        double h = xr->hidden < len ? xr->hidden : len;
        c->compute_s += h;
        c->comm_s[dim][op->kind == DT_OP_RECV ? DT_OP_SEND : op->kind] += len - h;
      }
      if (!seen[rank]) {
        seen[rank] = 1;
        c->nranks_on_path++;
      }
      if (k >= n - c->nsegs) /* segs keeps the path's last nsegs ops, in time order */
        c->segs[k - (n - c->nsegs)] = (dt_cp_segment){rank, st->id, xr->op, op->kind, g, dim, t0, xr->t1};
    }
    free(seen);
    XBT_VERB("critical path: %zu ops on %zu ranks, compute %.9g s, host %.9g s, waiting %.9g s", c->nops,
             c->nranks_on_path, c->compute_s, c->host_s, c->wait_s);
    s->critical = c;
  }
  rp_cp_free(cp);
}

void rp_cp_free(rp_cp *cp)
{
  if (!cp)
    return;
  for (size_t k = 0; k < cp->nchunks; k++) {
    for (size_t i = 0; i < POOL_CHUNK; i++)
      free(cp->chunks[k][i].rec);
    free(cp->chunks[k]);
  }
  free(cp->chunks);
  free(cp->last);
  free(cp->pred);
  free(cp->just);
  free(cp->run_since);
  free(cp->inflight);
  free(cp);
}
