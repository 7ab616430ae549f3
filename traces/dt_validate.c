/* Validation of a whole trace before replay (DESIGN.md §4): every reference resolves, collectives match by
 * issue order per group, sends pair with recvs per (src, dst, tag), batches are consecutive. One pass over
 * the ops with hash tables: traces reach millions of ops, so nothing here compares ranks pairwise. */
#include "dt_trace.h"

#include "../common/dt_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------
 * A hash map from a pair of 64-bit keys to a non-negative int64 (open addressing, linear probing). */

typedef struct pmap {
  uint64_t *ka, *kb;
  int64_t *val; /* -1: empty slot */
  size_t cap, n;
} pmap;

static uint64_t mix(uint64_t a, uint64_t b)
{
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static void pmap_init(pmap *m, size_t expect)
{
  size_t cap = 16;
  while (cap < expect * 2)
    cap *= 2;
  m->ka = dt_xmalloc(cap * sizeof *m->ka);
  m->kb = dt_xmalloc(cap * sizeof *m->kb);
  m->val = dt_xmalloc(cap * sizeof *m->val);
  for (size_t i = 0; i < cap; i++)
    m->val[i] = -1;
  m->cap = cap;
  m->n = 0;
}

static void pmap_free(pmap *m)
{
  free(m->ka);
  free(m->kb);
  free(m->val);
}

static size_t pmap_slot(const pmap *m, uint64_t a, uint64_t b)
{
  size_t i = mix(a, b) & (m->cap - 1);
  while (m->val[i] >= 0 && (m->ka[i] != a || m->kb[i] != b))
    i = (i + 1) & (m->cap - 1);
  return i;
}

static int64_t pmap_get(const pmap *m, uint64_t a, uint64_t b)
{
  return m->val[pmap_slot(m, a, b)];
}

/* Sets the value of (a, b) (inserting it when absent). v >= 0. */
static void pmap_put(pmap *m, uint64_t a, uint64_t b, int64_t v)
{
  if ((m->n + 1) * 2 > m->cap) {
    pmap old = *m;
    pmap_init(m, old.cap);
    for (size_t i = 0; i < old.cap; i++)
      if (old.val[i] >= 0)
        pmap_put(m, old.ka[i], old.kb[i], old.val[i]);
    pmap_free(&old);
  }
  size_t i = pmap_slot(m, a, b);
  if (m->val[i] < 0)
    m->n++;
  m->ka[i] = a;
  m->kb[i] = b;
  m->val[i] = v;
}

/* ---------------------------------------------------------------------------------------------------------
 * Issue order. */

void dt_trace_rank_order(const dt_trace *t, int32_t rank, dt_dep *order)
{
  const dt_rank *rk = dt_trace_rank_body(t, rank);
  size_t *cur = dt_xcalloc(rk->nstreams ? rk->nstreams : 1, sizeof *cur);
  size_t n = dt_trace_rank_op_count(t, rank);
  /* a k-way merge, not a sort: each stream's own order is kept whatever its lines say */
  for (size_t k = 0; k < n; k++) {
    size_t best = (size_t)-1;
    uint64_t best_key = 0;
    for (size_t s = 0; s < rk->nstreams; s++) {
      if (cur[s] >= rk->streams[s].nops)
        continue;
      const dt_op *op = &rk->streams[s].ops[cur[s]];
      uint64_t key = (uint64_t)op->file << 32 | op->line;
      if (best == (size_t)-1 || key < best_key) {
        best = s;
        best_key = key;
      }
    }
    order[k].stream = (int32_t)best;
    order[k].index = (int32_t)cur[best]++;
  }
  free(cur);
}

/* ---------------------------------------------------------------------------------------------------------
 * Messages. */

/* An op and where it is. */
typedef struct oref {
  dt_op *op;
  int32_t rank, stream, index; /* stream: position in the rank's streams[] */
} oref;

static const char *where(const dt_trace *t, const oref *o, char *buf, size_t size)
{
  const dt_op *op = o->op;
  const char *file = op->file < t->nfiles ? t->files[op->file] : "";
  if (op->line > 0 && file[0])
    snprintf(buf, size, "%s:%u", file, op->line);
  else if (op->line > 0)
    snprintf(buf, size, "line %u", op->line);
  else
    snprintf(buf, size, "rank %d s%d op %d", (int)o->rank, (int)dt_trace_rank_body(t, o->rank)->streams[o->stream].id,
             (int)o->index);
  return buf;
}

static int fail_at(dt_error *err, const dt_trace *t, const oref *o, const char *fmt, ...) DT_PRINTF(4, 5);

static int fail_at(dt_error *err, const dt_trace *t, const oref *o, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const dt_op *op = o->op;
  return dt_error_set(err, op->file < t->nfiles ? t->files[op->file] : "", op->line, 0, "%s", msg);
}

static const char *describe(const dt_trace *t, const dt_op *op, char *buf, size_t size)
{
  const char *k = dt_op_kind_name(op->kind);
  if (op->kind == DT_OP_BARRIER) {
    snprintf(buf, size, "barrier");
  } else if (op->kind == DT_OP_ALLTOALL && op->splits) {
    int n = snprintf(buf, size, "alltoall with splits=");
    for (uint32_t i = 0; i < op->nsplits && (size_t)n < size; i++) {
      if (i == 8) {
        snprintf(buf + n, size - (size_t)n, ",...");
        break;
      }
      n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64, i ? "," : "", op->splits[i]);
    }
  } else if (op->kind == DT_OP_BROADCAST || op->kind == DT_OP_REDUCE) {
    snprintf(buf, size, "%s of %" PRIu64 " bytes with root %d", k, op->bytes, (int)op->root);
  } else {
    snprintf(buf, size, "%s of %" PRIu64 " bytes", k, op->bytes);
  }
  (void)t;
  return buf;
}

/* What differs between two collectives of one instance, or NULL when they match. All-to-allv splits are each
 * sender's own row of the traffic matrix and legitimately differ between members: only the form must agree. */
static const char *coll_diff(const dt_op *a, const dt_op *b)
{
  if (a->kind != b->kind)
    return "the ops differ";
  if (a->kind == DT_OP_ALLTOALL && (a->splits != NULL) != (b->splits != NULL))
    return "the splits differ (one gives splits=, the other bytes=)";
  if (a->kind == DT_OP_ALLTOALL && a->splits)
    return a->nsplits != b->nsplits ? "the splits differ in length" : NULL;
  if (a->bytes != b->bytes)
    return "the sizes differ";
  if ((a->kind == DT_OP_BROADCAST || a->kind == DT_OP_REDUCE) && a->root != b->root)
    return "the roots differ";
  return NULL;
}

static const char *ordinal(int64_t n, char *buf, size_t size)
{
  const char *suf = "th";
  if (n % 100 < 11 || n % 100 > 13)
    suf = n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  snprintf(buf, size, "%" PRId64 "%s", n, suf);
  return buf;
}

/* ---------------------------------------------------------------------------------------------------------
 * Matching state. */

typedef struct ivec { /* the instances of one group, in issue order */
  oref *v;
  size_t n, cap;
  int64_t *ids;
  size_t idcap;
} ivec;

typedef struct p2p { /* the sends and recvs of one (src, dst, tag) */
  int32_t src, dst;
  int64_t tag;
  oref *sends, *recvs;
  size_t ns, nr, scap, rcap;
} p2p;

typedef struct vstate {
  dt_trace *t;
  dt_error *err;
  pmap member;          /* (group, rank) -> flat member index */
  size_t *member_base;  /* per group: index of its first member in the flat arrays */
  int64_t *issued;      /* per member: collectives issued so far on the group */
  int32_t *first_stream; /* per member: stream position of its first collective on the group, -1 none */
  size_t *multi;        /* per group: ranks that use it from more than one stream */
  oref *multi_ex;       /* per group: the first such op */
  int32_t *multi_s0;    /* per group: the other stream of that example */
  ivec *inst;
  int64_t ninst;
  pmap p2pmap; /* (src << 32 | dst, tag) -> index in pairs */
  p2p *pairs;
  size_t npairs_keys, pairs_cap;
  pmap batches; /* (global stream number, batch id) -> op index in the stream of the batch's first op */
} vstate;

static int check_deps(vstate *vs, const oref *o)
{
  const dt_rank *rk = dt_trace_rank_body(vs->t, o->rank);
  char w[600];
  for (uint32_t d = 0; d < o->op->ndeps; d++) {
    dt_dep dep = o->op->deps[d];
    if (dep.stream < 0 || (size_t)dep.stream >= rk->nstreams)
      return fail_at(vs->err, vs->t, o, "after= waits for stream position %d, but rank %d has %zu streams (at %s)",
                     (int)dep.stream, (int)o->rank, rk->nstreams, where(vs->t, o, w, sizeof w));
    const dt_stream *st = &rk->streams[dep.stream];
    if (dep.index < 0 || (size_t)dep.index >= st->nops)
      return fail_at(vs->err, vs->t, o, "after=s%d:%d waits for an op that does not exist: stream s%d of rank %d has %zu ops",
                     (int)st->id, (int)dep.index, (int)st->id, (int)o->rank, st->nops);
    if (dep.stream == o->stream && dep.index >= o->index)
      return fail_at(vs->err, vs->t, o,
                     "after=s%d:%d waits for an op that comes later on its own stream (this op is s%d:%d): it would never run",
                     (int)st->id, (int)dep.index, (int)st->id, (int)o->index);
  }
  return DT_OK;
}

static int collective(vstate *vs, const oref *o)
{
  dt_trace *t = vs->t;
  dt_op *op = o->op;
  char w1[600], w2[600], d1[256], d2[256], ord[32];
  if (op->group < 0 || (size_t)op->group >= t->ngroups)
    return fail_at(vs->err, t, o, "%s refers to group index %d, which does not exist (the trace has %zu groups)",
                   dt_op_kind_name(op->kind), (int)op->group, t->ngroups);
  const dt_group *g = &t->groups[op->group];
  int64_t m = pmap_get(&vs->member, (uint64_t)op->group, (uint64_t)o->rank);
  if (m < 0)
    return fail_at(vs->err, t, o, "rank %d issues %s on group '%s' but is not one of its ranks", (int)o->rank,
                   describe(t, op, d1, sizeof d1), g->name);
  if (vs->first_stream[m] < 0) {
    vs->first_stream[m] = o->stream;
  } else if (vs->first_stream[m] != o->stream && vs->first_stream[m] != INT32_MAX) {
    if (vs->multi[op->group]++ == 0) {
      vs->multi_ex[op->group] = *o;
      vs->multi_s0[op->group] = vs->first_stream[m];
    }
    vs->first_stream[m] = INT32_MAX; /* counted once per rank */
  }
  int64_t k = vs->issued[m]++;
  ivec *iv = &vs->inst[op->group];
  if ((size_t)k == iv->n) {
    iv->v = dt_grow(iv->v, &iv->cap, iv->n, sizeof *iv->v);
    iv->ids = dt_grow(iv->ids, &iv->idcap, iv->n, sizeof *iv->ids);
    iv->v[iv->n] = *o;
    iv->ids[iv->n] = vs->ninst++;
    iv->n++;
  } else {
    const oref *ref = &iv->v[k];
    const char *diff = coll_diff(ref->op, op);
    if (diff)
      return fail_at(vs->err, t, o,
                     "%s on group '%s' at rank %d (%s) does not match %s at rank %d (%s): both are the %s collective "
                     "each rank issues on '%s', and %s",
                     describe(t, op, d1, sizeof d1), g->name, (int)o->rank, where(t, o, w1, sizeof w1),
                     describe(t, ref->op, d2, sizeof d2), (int)ref->rank, where(t, ref, w2, sizeof w2),
                     ordinal(k + 1, ord, sizeof ord), g->name, diff);
  }
  op->match = iv->ids[k];
  return DT_OK;
}

static void p2p_add(vstate *vs, const oref *o, int32_t src, int32_t dst, int send)
{
  uint64_t a = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
  int64_t i = pmap_get(&vs->p2pmap, a, (uint64_t)o->op->tag);
  if (i < 0) {
    vs->pairs = dt_grow(vs->pairs, &vs->pairs_cap, vs->npairs_keys, sizeof *vs->pairs);
    i = (int64_t)vs->npairs_keys++;
    p2p *p = &vs->pairs[i];
    p->src = src;
    p->dst = dst;
    p->tag = o->op->tag;
    pmap_put(&vs->p2pmap, a, (uint64_t)o->op->tag, i);
  }
  p2p *p = &vs->pairs[i];
  if (send) {
    p->sends = dt_grow(p->sends, &p->scap, p->ns, sizeof *p->sends);
    p->sends[p->ns++] = *o;
  } else {
    p->recvs = dt_grow(p->recvs, &p->rcap, p->nr, sizeof *p->recvs);
    p->recvs[p->nr++] = *o;
  }
}

static int point_to_point(vstate *vs, const oref *o)
{
  dt_op *op = o->op;
  const char *k = dt_op_kind_name(op->kind);
  if (op->peer < 0 || op->peer >= vs->t->nranks)
    return fail_at(vs->err, vs->t, o, "%s peer %d is out of range: the trace has %d ranks (0-%d)", k, (int)op->peer,
                   (int)vs->t->nranks, (int)vs->t->nranks - 1);
  if (op->peer == o->rank)
    return fail_at(vs->err, vs->t, o, "%s peer %d is the rank itself", k, (int)op->peer);
  if (op->kind == DT_OP_SEND)
    p2p_add(vs, o, o->rank, op->peer, 1);
  else
    p2p_add(vs, o, op->peer, o->rank, 0);
  return DT_OK;
}

/* Ops with the same batch id on one stream must be consecutive: the batch is posted as one group call. */
static int check_batches(vstate *vs, int32_t r, uint64_t *global_stream)
{
  const dt_rank *rk = &vs->t->ranks[r];
  char w1[600], w2[600];
  for (size_t s = 0; s < rk->nstreams; s++, (*global_stream)++) {
    const dt_stream *st = &rk->streams[s];
    int64_t prev = -1;
    for (size_t i = 0; i < st->nops; i++) {
      int64_t b = st->ops[i].batch;
      if (b >= 0 && b != prev) {
        int64_t first = pmap_get(&vs->batches, *global_stream, (uint64_t)b);
        if (first >= 0) {
          oref here = {&st->ops[i], r, (int32_t)s, (int32_t)i};
          oref start = {&st->ops[first], r, (int32_t)s, (int32_t)first};
          return fail_at(vs->err, vs->t, &here,
                         "batch %" PRId64 " on stream s%d of rank %d is not consecutive: it starts at %s and resumes "
                         "at %s after other ops",
                         b, (int)st->id, (int)r, where(vs->t, &start, w1, sizeof w1), where(vs->t, &here, w2, sizeof w2));
        }
        pmap_put(&vs->batches, *global_stream, (uint64_t)b, (int64_t)i);
      }
      prev = b;
    }
  }
  return DT_OK;
}

/* after= edges and stream order together must leave no cycle (a cycle would hang the rank): Kahn's algorithm
 * over the rank's ops, O(ops + edges). Runs after check_deps has checked every edge's range. */
static int check_cycles(vstate *vs, int32_t r)
{
  const dt_rank *rk = &vs->t->ranks[r];
  size_t n = 0, nedges = 0;
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++, n++)
      nedges += rk->streams[s].ops[i].ndeps;
  if (nedges == 0)
    return DT_OK;
  size_t *off = dt_xmalloc((rk->nstreams + 1) * sizeof *off);
  size_t *indeg = dt_xcalloc(n, sizeof *indeg);
  size_t *start = dt_xcalloc(n + 1, sizeof *start); /* waiters of op u: adj[start[u] .. start[u+1]) */
  size_t *adj = dt_xmalloc(nedges * sizeof *adj);
  size_t *queue = dt_xmalloc(n * sizeof *queue);
  off[0] = 0;
  for (size_t s = 0; s < rk->nstreams; s++)
    off[s + 1] = off[s] + rk->streams[s].nops;
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      const dt_op *op = &rk->streams[s].ops[i];
      indeg[off[s] + i] = (i > 0) + op->ndeps;
      for (uint32_t d = 0; d < op->ndeps; d++)
        start[off[op->deps[d].stream] + (size_t)op->deps[d].index + 1]++;
    }
  for (size_t u = 0; u < n; u++)
    start[u + 1] += start[u];
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      const dt_op *op = &rk->streams[s].ops[i];
      for (uint32_t d = 0; d < op->ndeps; d++)
        adj[start[off[op->deps[d].stream] + (size_t)op->deps[d].index]++] = off[s] + i;
    }
  for (size_t u = n; u > 0; u--) /* the fill above advanced each start by its count: shift back */
    start[u] = start[u - 1];
  start[0] = 0;
  size_t head = 0, tail = 0;
  for (size_t s = 0; s < rk->nstreams; s++)
    if (rk->streams[s].nops && indeg[off[s]] == 0)
      queue[tail++] = off[s];
  while (head < tail) {
    size_t u = queue[head++];
    size_t s = 0;
    while (off[s + 1] <= u)
      s++;
    if (u + 1 < off[s + 1] && --indeg[u + 1] == 0)
      queue[tail++] = u + 1;
    for (size_t e = start[u]; e < start[u + 1]; e++)
      if (--indeg[adj[e]] == 0)
        queue[tail++] = adj[e];
  }
  int rc = DT_OK;
  if (tail < n) {
    /* report the first op, in stream order, that waits on an edge of the cycle */
    for (size_t s = 0; s < rk->nstreams && rc == DT_OK; s++)
      for (size_t i = 0; i < rk->streams[s].nops; i++) {
        dt_op *op = &rk->streams[s].ops[i];
        if (indeg[off[s] + i] == 0 || op->ndeps == 0)
          continue;
        oref o = {op, r, (int32_t)s, (int32_t)i};
        char w[600];
        rc = fail_at(vs->err, vs->t, &o,
                     "after= edges of rank %d form a cycle: op s%d:%zu (%s) waits on it and can never start", 
                     (int)r, (int)rk->streams[s].id, i, where(vs->t, &o, w, sizeof w));
        break;
      }
  }
  free(off);
  free(indeg);
  free(start);
  free(adj);
  free(queue);
  return rc;
}

/* After every rank is read: each member must have issued every instance of its groups. */
static int check_instances(vstate *vs)
{
  dt_trace *t = vs->t;
  char w[600], d[256], ord[32];
  for (size_t g = 0; g < t->ngroups; g++) {
    const dt_group *gr = &t->groups[g];
    const ivec *iv = &vs->inst[g];
    for (size_t i = 0; i < gr->nranks; i++) {
      int64_t got = vs->issued[vs->member_base[g] + i];
      if ((size_t)got == iv->n)
        continue;
      const oref *ref = &iv->v[got];
      return fail_at(vs->err, t, ref,
                     "%s on group '%s' at rank %d (%s) has no match on rank %d: rank %d issues %zu collectives on '%s' "
                     "but rank %d issues only %" PRId64 ", so the %s is missing",
                     describe(t, ref->op, d, sizeof d), gr->name, (int)ref->rank, where(t, ref, w, sizeof w),
                     (int)gr->ranks[i], (int)ref->rank, iv->n, gr->name, (int)gr->ranks[i], got,
                     ordinal(got + 1, ord, sizeof ord));
    }
  }
  return DT_OK;
}

static int pair_p2p(vstate *vs)
{
  dt_trace *t = vs->t;
  char w1[600], w2[600], tag[48];
  int64_t id = 0;
  for (size_t i = 0; i < vs->npairs_keys; i++) {
    const p2p *p = &vs->pairs[i];
    size_t n = p->ns < p->nr ? p->ns : p->nr;
    tag[0] = '\0';
    if (p->tag != 0)
      snprintf(tag, sizeof tag, " with tag %" PRId64, p->tag);
    for (size_t k = 0; k < n; k++) {
      const oref *s = &p->sends[k], *r = &p->recvs[k];
      if (s->op->bytes != r->op->bytes)
        return fail_at(vs->err, t, s,
                       "send of %" PRIu64 " bytes from rank %d to rank %d%s (%s) pairs with a recv of %" PRIu64
                       " bytes on rank %d (%s): the sizes differ",
                       s->op->bytes, (int)p->src, (int)p->dst, tag, where(t, s, w1, sizeof w1), r->op->bytes,
                       (int)p->dst, where(t, r, w2, sizeof w2));
      s->op->match = id;
      r->op->match = id;
      id++;
    }
    if (p->ns > n) {
      const oref *s = &p->sends[n];
      return fail_at(vs->err, t, s,
                     "send of %" PRIu64 " bytes to rank %d%s has no matching recv (rank %d posts %zu sends to rank %d%s, "
                     "rank %d posts %zu recvs from rank %d)",
                     s->op->bytes, (int)p->dst, tag, (int)p->src, p->ns, (int)p->dst, tag, (int)p->dst, p->nr,
                     (int)p->src);
    }
    if (p->nr > n) {
      const oref *r = &p->recvs[n];
      return fail_at(vs->err, t, r,
                     "recv of %" PRIu64 " bytes from rank %d%s has no matching send (rank %d posts %zu recvs from rank "
                     "%d%s, rank %d posts %zu sends to rank %d)",
                     r->op->bytes, (int)p->src, tag, (int)p->dst, p->nr, (int)p->src, tag, (int)p->src, p->ns,
                     (int)p->dst);
    }
  }
  t->npairs = id;
  return DT_OK;
}

static void add_note_once(dt_trace *t, const char *note)
{
  for (size_t i = 0; i < t->nnotes; i++)
    if (strcmp(t->notes[i], note) == 0)
      return;
  dt_trace_add_note(t, "%s", note);
}

static void vstate_free(vstate *vs)
{
  pmap_free(&vs->member);
  pmap_free(&vs->p2pmap);
  pmap_free(&vs->batches);
  free(vs->member_base);
  free(vs->issued);
  free(vs->first_stream);
  free(vs->multi);
  free(vs->multi_ex);
  free(vs->multi_s0);
  if (vs->inst)
    for (size_t g = 0; g < vs->t->ngroups; g++) {
      free(vs->inst[g].v);
      free(vs->inst[g].ids);
    }
  free(vs->inst);
  for (size_t i = 0; i < vs->npairs_keys; i++) {
    free(vs->pairs[i].sends);
    free(vs->pairs[i].recvs);
  }
  free(vs->pairs);
}

int dt_trace_validate(dt_trace *t, dt_error *err)
{
  vstate vs;
  memset(&vs, 0, sizeof vs);
  vs.t = t;
  vs.err = err;
  int rc = DT_OK;
  dt_dep *order = NULL;
  size_t ocap = 0;
  size_t nmembers = 0;
  for (size_t g = 0; g < t->ngroups; g++)
    nmembers += t->groups[g].nranks;
  pmap_init(&vs.member, nmembers);
  pmap_init(&vs.p2pmap, 64);
  pmap_init(&vs.batches, 64);
  vs.member_base = dt_xcalloc(t->ngroups + 1, sizeof *vs.member_base);
  vs.issued = dt_xcalloc(nmembers + 1, sizeof *vs.issued);
  vs.first_stream = dt_xmalloc((nmembers + 1) * sizeof *vs.first_stream);
  vs.multi = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi);
  vs.multi_ex = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi_ex);
  vs.multi_s0 = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi_s0);
  vs.inst = dt_xcalloc(t->ngroups + 1, sizeof *vs.inst);
  for (size_t g = 0, base = 0; g < t->ngroups; g++) {
    vs.member_base[g] = base;
    for (size_t i = 0; i < t->groups[g].nranks; i++) {
      vs.first_stream[base + i] = -1;
      pmap_put(&vs.member, g, (uint64_t)t->groups[g].ranks[i], (int64_t)(base + i));
    }
    base += t->groups[g].nranks;
  }

  uint64_t global_stream = 0;
  for (int32_t r = 0; r < t->nranks && rc == DT_OK; r++) {
    size_t n = dt_trace_rank_op_count(t, r);
    if (n == 0)
      continue;
    order = dt_grow(order, &ocap, n, sizeof *order);
    dt_trace_rank_order(t, r, order);
    for (size_t i = 0; i < n && rc == DT_OK; i++) {
      dt_stream *st = &((dt_rank *)dt_trace_rank_body(t, r))->streams[order[i].stream];
      oref o = {&st->ops[order[i].index], r, order[i].stream, order[i].index};
      o.op->match = -1;
      rc = check_deps(&vs, &o);
      if (rc == DT_OK && dt_op_is_collective(o.op->kind))
        rc = collective(&vs, &o);
      else if (rc == DT_OK && (o.op->kind == DT_OP_SEND || o.op->kind == DT_OP_RECV))
        rc = point_to_point(&vs, &o);
    }
    if (rc == DT_OK)
      rc = check_cycles(&vs, r);
    if (rc == DT_OK)
      rc = check_batches(&vs, r, &global_stream);
  }
  if (rc == DT_OK)
    rc = check_instances(&vs);
  if (rc == DT_OK)
    rc = pair_p2p(&vs);
  if (rc == DT_OK) {
    t->ninstances = vs.ninst;
    for (size_t g = 0; g < t->ngroups; g++) {
      if (!vs.multi[g])
        continue;
      const oref *ex = &vs.multi_ex[g];
      const dt_rank *rk = &t->ranks[ex->rank];
      char note[1024];
      snprintf(note, sizeof note,
               "warning: group '%s' is used from two streams of one rank (rank %d: s%d and s%d; %zu rank%s in all): "
               "its collectives are matched in line order across the streams",
               t->groups[g].name, (int)ex->rank, (int)rk->streams[vs.multi_s0[g]].id, (int)rk->streams[ex->stream].id,
               vs.multi[g], vs.multi[g] == 1 ? "" : "s");
      add_note_once(t, note);
    }
  }
  free(order);
  vstate_free(&vs);
  return rc;
}
