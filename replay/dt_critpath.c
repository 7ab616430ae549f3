/* The critical path, built forward: reference-counted nodes from a pool, one per completed op, each pointing at its
 * critical predecessor (or, for a collective or send/recv, at the instance's cell, which points at the late
 * member's predecessor once that member completes). rp_cp_finish walks back from the last-ending op. */
#include "dt_critpath.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_critpath, dtsim, "critical path: its length and split once the replay ends");

struct rp_cp_node {
  rp_cp_node *prev;  /* critical predecessor (a cell: the late member's predecessor), or NULL */
  rp_cp_node *cell;  /* a collective's or pair's instance cell, or NULL */
  uint32_t refs;
  int32_t rank, stream;
  uint32_t op;
  uint8_t kind, dim;
  int32_t group;
  double t0, t1;     /* the part on the path */
  double hidden;     /* of it, the time the rank computed on other streams (communication ops) */
};

#define POOL_CHUNK 4096

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
  rp_cp_node **last;  /* per flat stream: its last completed op's node */
  rp_cp_node **pred;  /* per flat stream: the predecessor of the ops it runs now */
  rp_cp_node **just;  /* per flat stream: the node rp_cp_done made last (borrowed) */
  double *run_since;  /* per flat stream: issue of the compute it runs now, or -1 */
  double *inflight;   /* per flat stream: issue of the ops it runs now, INFINITY between ops */
  rp_cp_node *best;   /* the node that ends last so far */
  rp_cp_node *free_list;
  rp_cp_node **chunks;
  size_t nchunks, chunks_cap;
  dt_dim p2p_dim;
  rp_cp_node **stack; /* unref's work list */
  size_t stack_cap;
};

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

static rp_cp_node *node_new(rp_cp *cp)
{
  if (!cp->free_list) {
    rp_cp_node *chunk = dt_xmalloc(sizeof *chunk * POOL_CHUNK);
    cp->chunks = dt_grow(cp->chunks, &cp->chunks_cap, cp->nchunks, sizeof *cp->chunks);
    cp->chunks[cp->nchunks++] = chunk;
    for (size_t k = 0; k < POOL_CHUNK; k++) {
      chunk[k].prev = cp->free_list;
      cp->free_list = &chunk[k];
    }
  }
  rp_cp_node *n = cp->free_list;
  cp->free_list = n->prev;
  memset(n, 0, sizeof *n);
  n->refs = 1;
  return n;
}

static rp_cp_node *ref(rp_cp_node *n)
{
  if (n)
    n->refs++;
  return n;
}

/* Drops one reference; frees the nodes that nobody references any more (iteratively: chains are long). */
static void unref(rp_cp *cp, rp_cp_node *n)
{
  size_t sp = 0;
  while (n) {
    if (--n->refs == 0) {
      rp_cp_node *a = n->prev, *b = n->cell;
      n->prev = cp->free_list;
      cp->free_list = n;
      if (b) {
        cp->stack = dt_grow(cp->stack, &cp->stack_cap, sp, sizeof *cp->stack);
        cp->stack[sp++] = b;
      }
      n = a;
    } else {
      n = NULL;
    }
    if (!n && sp > 0)
      n = cp->stack[--sp];
  }
}

void rp_cp_issue(rp_cp *cp, int32_t rank, size_t fs, const dt_stream *st, size_t i, size_t j, double issue)
{
  rp_cp_node *best = cp->last[fs];
  for (size_t k = i; k < j; k++)
    for (uint32_t d = 0; d < st->ops[k].ndeps; d++) {
      rp_cp_node *c = cp->last[cp->rank_stream0[rank] + (size_t)st->ops[k].deps[d].stream];
      if (c && !later(c->t1, issue) && (!best || later(c->t1, best->t1)))
        best = c;
    }
  unref(cp, cp->pred[fs]);
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

void rp_cp_last_span(const rp_cp *cp, size_t fs, double *t0, double *t1)
{
  *t0 = cp->just[fs] ? cp->just[fs]->t0 : 0;
  *t1 = cp->just[fs] ? cp->just[fs]->t1 : 0;
}

void rp_cp_set_hidden(rp_cp *cp, size_t fs, double hidden_s)
{
  if (cp->just[fs])
    cp->just[fs]->hidden = hidden_s;
}

int rp_cp_running_compute(const rp_cp *cp, size_t fs, double *since)
{
  *since = cp->run_since[fs];
  return cp->run_since[fs] >= 0;
}

void rp_cp_done(rp_cp *cp, int32_t rank, size_t fs, size_t index, const dt_op *op, int32_t g, double issue, double end,
                rp_cp_node **cell, double last_issue)
{
  rp_cp_node *n = node_new(cp);
  n->rank = rank;
  n->stream = dt_trace_rank_body(cp->t, rank)->streams[fs - cp->rank_stream0[rank]].id;
  n->op = (uint32_t)index;
  n->kind = (uint8_t)op->kind;
  n->group = g;
  n->dim = (uint8_t)(g >= 0 && (size_t)g < cp->t->ngroups ? cp->t->groups[g].dim
                     : op->kind == DT_OP_SEND || op->kind == DT_OP_RECV ? cp->p2p_dim
                                                                        : DT_DIM_NONE);
  n->t0 = issue;
  n->t1 = end;
  if (cell) {
    if (!*cell) {
      *cell = node_new(cp); /* the instance's reference */
      (*cell)->rank = INT32_MAX;
    }
    n->cell = ref(*cell);
    if (last_issue > issue)
      n->t0 = last_issue < end ? last_issue : end;
    /* a member that arrived last (the lowest rank among those that did): its predecessor is the instance's */
    if (!later(last_issue, issue) && rank < (*cell)->rank) {
      unref(cp, (*cell)->prev);
      (*cell)->prev = ref(cp->pred[fs]);
      (*cell)->rank = rank;
    }
  } else {
    n->prev = ref(cp->pred[fs]);
  }
  if (!cp->best || later(end, cp->best->t1) || (!later(cp->best->t1, end) && rank < cp->best->rank)) {
    unref(cp, cp->best);
    cp->best = ref(n);
  }
  cp->just[fs] = n;
  cp->inflight[fs] = INFINITY; /* a batch's ops complete together: its transfers are all recorded by now */
  if (op->kind == DT_OP_COMPUTE)
    cp->run_since[fs] = -1;
  /* the stream's last op is the one that ends last: ops of a batch complete in any order */
  if (!cp->last[fs] || end >= cp->last[fs]->t1) {
    unref(cp, cp->last[fs]);
    cp->last[fs] = n; /* takes the creation reference */
  } else {
    cp->just[fs] = NULL; /* freed below: within a batch, only the op that ends last stays on the path */
    unref(cp, n);
  }
}

void rp_cp_instance_done(rp_cp *cp, rp_cp_node **cell)
{
  unref(cp, *cell);
  *cell = NULL;
}

static rp_cp_node *prev_of(const rp_cp_node *n)
{
  return n->cell ? n->cell->prev : n->prev;
}

void rp_cp_finish(rp_cp *cp, dt_stats *s)
{
  if (cp->best) {
    dt_critical *c = dt_xcalloc(1, sizeof *c);
    size_t n = 0;
    for (const rp_cp_node *x = cp->best; x; x = prev_of(x))
      n++;
    c->nops = n;
    c->nsegs = n < DT_CP_MAX_SEGMENTS ? n : DT_CP_MAX_SEGMENTS;
    c->segs = dt_xmalloc(sizeof *c->segs * (c->nsegs + 1));
    uint8_t *seen = dt_xcalloc(cp->t->nranks > 0 ? (size_t)cp->t->nranks : 1, 1);
    size_t k = n;
    for (const rp_cp_node *x = cp->best; x; x = prev_of(x)) {
      k--;
      const rp_cp_node *p = prev_of(x);
      double t0 = x->t0, before = p ? p->t1 : 0;
      if (t0 > before)
        c->wait_s += t0 - before;
      double len = x->t1 - t0;
      if (x->kind == DT_OP_COMPUTE)
        c->compute_s += len;
      else if (x->kind == DT_OP_DELAY)
        c->host_s += len;
      else if (x->kind != DT_OP_MARK) {
        double h = x->hidden < len ? x->hidden : len;
        c->compute_s += h;
        c->comm_s[x->dim][x->kind == DT_OP_RECV ? DT_OP_SEND : x->kind] += len - h;
      }
      if (!seen[x->rank]) {
        seen[x->rank] = 1;
        c->nranks_on_path++;
      }
      if (k >= n - c->nsegs) /* segs keeps the path's last nsegs ops, in time order */
        c->segs[k - (n - c->nsegs)] = (dt_cp_segment){x->rank, x->stream, x->op, (dt_op_kind)x->kind, x->group,
                                                      (dt_dim)x->dim, t0, x->t1};
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
  for (size_t k = 0; k < cp->nchunks; k++)
    free(cp->chunks[k]);
  free(cp->chunks);
  free(cp->last);
  free(cp->pred);
  free(cp->just);
  free(cp->run_since);
  free(cp->inflight);
  free(cp->stack);
  free(cp);
}
