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

/* Key of the next op of stream s in a rank's merge: (file, line), ties by stream position. */
static int heap_less(const uint64_t *key, const uint32_t *h, size_t i, size_t j)
{
  return key[h[i]] < key[h[j]] || (key[h[i]] == key[h[j]] && h[i] < h[j]);
}

static void heap_down(const uint64_t *key, uint32_t *h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && heap_less(key, h, l, m))
      m = l;
    if (r < n && heap_less(key, h, r, m))
      m = r;
    if (m == i)
      return;
    uint32_t x = h[i];
    h[i] = h[m];
    h[m] = x;
    i = m;
  }
}

void dt_trace_rank_order(const dt_trace *t, int32_t rank, dt_dep *order)
{
  const dt_rank *rk = dt_trace_rank_body(t, rank);
  size_t ns = rk->nstreams;
  size_t *cur = dt_xcalloc(ns ? ns : 1, sizeof *cur);
  uint64_t *key = dt_xmalloc((ns ? ns : 1) * sizeof *key);
  uint32_t *heap = dt_xmalloc((ns ? ns : 1) * sizeof *heap);
  size_t nh = 0;
  /* a k-way merge, not a sort: each stream's own order is kept whatever its lines say; a binary heap of the
   * streams' next ops makes it O(ops log streams) (a scan of every stream per op was O(ops x streams)) */
  for (size_t s = 0; s < ns; s++)
    if (rk->streams[s].nops) {
      const dt_op *op = &rk->streams[s].ops[0];
      key[s] = (uint64_t)op->file << 32 | op->line;
      heap[nh++] = (uint32_t)s;
    }
  for (size_t i = nh / 2; i-- > 0;)
    heap_down(key, heap, nh, i);
  for (size_t k = 0; nh > 0; k++) {
    size_t best = heap[0];
    order[k].stream = (int32_t)best;
    order[k].index = (int32_t)cur[best]++;
    if (cur[best] < rk->streams[best].nops) {
      const dt_op *op = &rk->streams[best].ops[cur[best]];
      key[best] = (uint64_t)op->file << 32 | op->line;
    } else
      heap[0] = heap[--nh];
    heap_down(key, heap, nh, 0);
  }
  free(heap);
  free(key);
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
  if (!dt_trace_op_where(t, op, buf, size)[0])
    snprintf(buf, size, "rank %d s%d op %d", (int)o->rank, (int)dt_trace_rank_body(t, o->rank)->streams[o->stream].id,
             (int)o->index);
  return buf;
}

static int fail_at(dt_error *err, const dt_trace *t, const oref *o, const char *fmt, ...) DT_PRINTF(4, 5);

static int fail_at(dt_error *err, const dt_trace *t, const oref *o, const char *fmt, ...)
{
  const dt_op *op = o->op;
  const char *file = op->file < t->nfiles ? t->files[op->file] : "";
  va_list ap;
  va_start(ap, fmt);
  if (op->event > 0) { /* an imported event: its position is not a line */
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    dt_error_set(err, file, 0, 0, "traceEvents[%u]: %s", op->event - 1, msg);
  } else
    dt_error_vset(err, file, op->line, 0, fmt, ap);
  va_end(ap);
  return DT_ERR;
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
 * Matching state. Pass A walks each rank that owns ops once, in issue order: it checks the ops themselves,
 * numbers them (op->match, a per-rank sequence) and sums them up per group and per (peer offset, tag,
 * direction) as a count and a hash of the sequence of signatures. Pass B walks every rank, owners and
 * template users alike, through its body's summaries, mapped to its own groups and peers, and compares the
 * summaries of a group's members and of a channel's two ends. Memory is O(owning ranks' ops + group
 * members + channels), never ranks x ops; only on a mismatch are the two ranks involved streamed again to
 * name the first pair of ops that differ. */

typedef struct csum { /* a body's collectives on one of its groups (group in the body's own numbering) */
  int32_t group;
  int32_t s0, s1;     /* the stream it is first used from, and another one (-1 when none) */
  int64_t count;
  uint64_t hash;      /* of the sequence of signatures (coll_sig) */
  oref first;         /* its first op */
} csum;

typedef struct psum { /* a body's sends (or recvs) on one (peer offset, tag) */
  int32_t off;        /* (peer - rank) mod nranks */
  int32_t send;
  int64_t tag;
  int64_t count;
  uint64_t hash;      /* of the sequence of sizes */
  oref first;
} psum;

typedef struct chan { /* one (src, dst, tag) across the trace */
  int32_t src, dst;
  int64_t tag;
  int64_t ns, nr;
  uint64_t hs, hr;
} chan;

#define HASH_SEED 0x2545F4914F6CDD1Dull

typedef struct vstate {
  dt_trace *t;
  dt_error *err;
  /* pass A */
  size_t *csum0, *psum0; /* nranks+1: each rank's first summary entry (template users own none) */
  csum *cs;
  size_t ncs, cscap;
  psum *ps;
  size_t nps, pscap;
  pmap local;           /* the current rank's summaries: (0, group) or (1 + (off << 1 | send), tag) -> entry */
  pmap batches;         /* (global stream number, batch id) -> op index in the stream of the batch's first op */
  /* pass B */
  pmap member;          /* (group, rank) -> flat member index */
  size_t *member_base;  /* per group: index of its first member in the flat arrays */
  int64_t *mcount;      /* per member: collectives it issues on the group */
  uint64_t *mhash;
  int32_t *msrc;        /* per member: the body's group that feeds it, -1 none */
  int64_t *ref;         /* per group: flat index of the reference member (the longest sequence so far), -1 */
  size_t *multi;        /* per group: ranks that use it from more than one stream */
  oref *multi_ex;       /* per group: the first such rank's first op */
  int32_t *multi_s0, *multi_s1;
  pmap chanmap;         /* (src << 32 | dst, tag) -> index in chans */
  chan *chans;          /* in order of first appearance */
  size_t nchans, chancap;
} vstate;

static void pmap_clear(pmap *m)
{
  if (m->n == 0)
    return;
  for (size_t i = 0; i < m->cap; i++)
    m->val[i] = -1;
  m->n = 0;
}

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

/* What must agree between the members of one instance (coll_diff), as one number. */
static uint64_t coll_sig(const dt_op *op)
{
  int splits = op->kind == DT_OP_ALLTOALL && op->splits;
  uint64_t sig = mix((uint64_t)op->kind << 1 | (uint64_t)splits, splits ? op->nsplits : op->bytes);
  if (op->kind == DT_OP_BROADCAST || op->kind == DT_OP_REDUCE)
    sig = mix(sig, (uint64_t)(uint32_t)op->root);
  return sig;
}

/* Pass A, a collective of an owning rank: its group exists; numbered and summed up per group. */
static int collective(vstate *vs, const oref *o)
{
  dt_trace *t = vs->t;
  dt_op *op = o->op;
  if (op->group < 0 || (size_t)op->group >= t->ngroups)
    return fail_at(vs->err, t, o, "%s refers to group index %d, which does not exist (the trace has %zu groups)",
                   dt_op_kind_name(op->kind), (int)op->group, t->ngroups);
  if (op->splits && op->nsplits != t->groups[op->group].nranks)
    return fail_at(vs->err, t, o, "%s splits= lists %u sizes but group '%s' has %zu ranks: one size per member",
                   dt_op_kind_name(op->kind), op->nsplits, t->groups[op->group].name, t->groups[op->group].nranks);
  int64_t e = pmap_get(&vs->local, 0, (uint64_t)op->group);
  if (e < 0) {
    vs->cs = dt_grow(vs->cs, &vs->cscap, vs->ncs, sizeof *vs->cs);
    e = (int64_t)vs->ncs++;
    vs->cs[e] = (csum){op->group, o->stream, -1, 0, HASH_SEED, *o};
    pmap_put(&vs->local, 0, (uint64_t)op->group, e);
  }
  csum *c = &vs->cs[e];
  if (o->stream != c->s0 && c->s1 < 0)
    c->s1 = o->stream;
  op->match = c->count++;
  c->hash = mix(c->hash, coll_sig(op));
  return DT_OK;
}

/* Pass A, a send or recv of an owning rank: its peer exists; numbered and summed up per (offset, tag). */
static int point_to_point(vstate *vs, const oref *o)
{
  dt_op *op = o->op;
  const char *k = dt_op_kind_name(op->kind);
  int32_t n = vs->t->nranks;
  if (op->peer < 0 || op->peer >= n)
    return fail_at(vs->err, vs->t, o, "%s peer %d is out of range: the trace has %d ranks (0-%d)", k, (int)op->peer,
                   (int)n, (int)n - 1);
  if (op->peer == o->rank)
    return fail_at(vs->err, vs->t, o, "%s peer %d is the rank itself", k, (int)op->peer);
  int32_t off = (int32_t)(((int64_t)op->peer - o->rank + n) % n);
  int32_t send = op->kind == DT_OP_SEND;
  uint64_t a = 1 + ((uint64_t)off << 1 | (uint64_t)send);
  int64_t e = pmap_get(&vs->local, a, (uint64_t)op->tag);
  if (e < 0) {
    vs->ps = dt_grow(vs->ps, &vs->pscap, vs->nps, sizeof *vs->ps);
    e = (int64_t)vs->nps++;
    vs->ps[e] = (psum){off, send, op->tag, 0, HASH_SEED, *o};
    pmap_put(&vs->local, a, (uint64_t)op->tag, e);
  }
  psum *p = &vs->ps[e];
  op->match = p->count++;
  p->hash = mix(p->hash, op->bytes);
  return DT_OK;
}

/* Error paths only: rank's collectives on (its own) group g in issue order, or its sends (recvs) to (from)
 * peer with tag. Streams the rank once; *out is malloc'ed. */
static size_t rank_ops_where(const dt_trace *t, int32_t rank, int coll, int32_t g, dt_op_kind kind, int32_t peer,
                             int64_t tag, oref **out)
{
  const dt_rank *body = dt_trace_rank_body(t, rank);
  size_t n = dt_trace_rank_op_count(t, rank), m = 0, cap = 0;
  dt_dep *order = dt_xmalloc((n + 1) * sizeof *order);
  dt_trace_rank_order(t, rank, order);
  *out = NULL;
  for (size_t i = 0; i < n; i++) {
    dt_op *op = &body->streams[order[i].stream].ops[order[i].index];
    int hit = coll ? dt_op_is_collective(op->kind) && dt_trace_op_group(t, rank, op) == g
                   : op->kind == kind && op->tag == tag && dt_trace_op_peer(t, rank, op) == peer;
    if (!hit)
      continue;
    *out = dt_grow(*out, &cap, m, sizeof **out);
    (*out)[m++] = (oref){op, rank, order[i].stream, order[i].index};
  }
  free(order);
  return m;
}

/* Two members' summaries on group g differ: finds their first pair of ops that differ and fails there (at
 * rank b's op). Returns DT_OK when one sequence is a prefix of the other (a count problem, reported once every
 * rank is seen). */
static int locate_coll(vstate *vs, int32_t g, int32_t ra, int32_t rb)
{
  dt_trace *t = vs->t;
  oref *A, *B;
  size_t na = rank_ops_where(t, ra, 1, g, DT_OP_COMPUTE, -1, 0, &A);
  size_t nb = rank_ops_where(t, rb, 1, g, DT_OP_COMPUTE, -1, 0, &B);
  int rc = DT_OK;
  char w1[600], w2[600], d1[256], d2[256], ord[32];
  for (size_t k = 0; k < na && k < nb && rc == DT_OK; k++) {
    const char *diff = coll_diff(A[k].op, B[k].op);
    if (diff)
      rc = fail_at(vs->err, t, &B[k],
                   "%s on group '%s' at rank %d (%s) does not match %s at rank %d (%s): both are the %s collective "
                   "each rank issues on '%s', and %s",
                   describe(t, B[k].op, d1, sizeof d1), t->groups[g].name, (int)rb, where(t, &B[k], w1, sizeof w1),
                   describe(t, A[k].op, d2, sizeof d2), (int)ra, where(t, &A[k], w2, sizeof w2),
                   ordinal((int64_t)k + 1, ord, sizeof ord), t->groups[g].name, diff);
  }
  free(A);
  free(B);
  return rc;
}

/* Pass B, one rank: its body's summaries as this rank sees them. */
static int merge_rank(vstate *vs, int32_t r)
{
  dt_trace *t = vs->t;
  const dt_rank *own = &t->ranks[r];
  int32_t b = r;
  if (own->template_rank >= 0) {
    b = own->template_rank;
    if (t->ranks[b].template_rank >= 0)
      return dt_error_set(vs->err, "", 0, 0,
                          "rank %d runs the template of rank %d, which runs the template of rank %d itself: templates "
                          "do not chain",
                          (int)r, (int)b, (int)t->ranks[b].template_rank);
    for (size_t s = 0; s < own->nstreams; s++)
      if (own->streams[s].nops > 0)
        return dt_error_set(vs->err, "", 0, 0, "rank %d runs the template of rank %d but also has ops of its own",
                            (int)r, (int)b);
  }
  char d[256];
  for (size_t e = vs->csum0[b]; e < vs->csum0[b + 1]; e++) {
    const csum *c = &vs->cs[e];
    oref o = c->first;
    o.rank = r;
    int32_t g = dt_trace_op_group(t, r, o.op);
    if (g < 0 || (size_t)g >= t->ngroups)
      return fail_at(vs->err, t, &o,
                     "rank %d runs the template of rank %d, but its group map sends group '%s' to group index %d, "
                     "which does not exist",
                     (int)r, (int)b, t->groups[c->group].name, (int)g);
    const dt_group *gr = &t->groups[g];
    int64_t m = pmap_get(&vs->member, (uint64_t)g, (uint64_t)r);
    if (m < 0)
      return fail_at(vs->err, t, &o, "rank %d issues %s on group '%s' but is not one of its ranks", (int)r,
                     describe(t, o.op, d, sizeof d), gr->name);
    if (vs->msrc[m] >= 0)
      return fail_at(vs->err, t, &o,
                     "the group map of rank %d sends groups '%s' and '%s' of its template (rank %d) both to group "
                     "'%s': their collectives would not match by issue order",
                     (int)r, t->groups[vs->msrc[m]].name, t->groups[c->group].name, (int)b, gr->name);
    vs->msrc[m] = c->group;
    vs->mcount[m] = c->count;
    vs->mhash[m] = c->hash;
  }
  /* then compare, once the map is known to be sound */
  for (size_t e = vs->csum0[b]; e < vs->csum0[b + 1]; e++) {
    const csum *c = &vs->cs[e];
    oref o = c->first;
    o.rank = r;
    int32_t g = dt_trace_op_group(t, r, o.op);
    const dt_group *gr = &t->groups[g];
    int64_t m = pmap_get(&vs->member, (uint64_t)g, (uint64_t)r);
    if (c->s1 >= 0 && vs->multi[g]++ == 0) {
      vs->multi_ex[g] = o;
      vs->multi_s0[g] = c->s0;
      vs->multi_s1[g] = c->s1;
    }
    int64_t ref = vs->ref[g];
    if (ref < 0) {
      vs->ref[g] = m;
      continue;
    }
    if (vs->mcount[ref] == c->count && vs->mhash[ref] == c->hash)
      continue;
    int32_t rr = gr->ranks[(size_t)ref - vs->member_base[g]];
    if (locate_coll(vs, g, rr, r) != DT_OK)
      return DT_ERR;
    if (c->count > vs->mcount[ref])
      vs->ref[g] = m;
  }
  int32_t n = t->nranks;
  for (size_t e = vs->psum0[b]; e < vs->psum0[b + 1]; e++) {
    const psum *p = &vs->ps[e];
    int32_t other = (int32_t)(((int64_t)r + p->off) % n);
    int32_t src = p->send ? r : other, dst = p->send ? other : r;
    uint64_t a = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    int64_t i = pmap_get(&vs->chanmap, a, (uint64_t)p->tag);
    if (i < 0) {
      vs->chans = dt_grow(vs->chans, &vs->chancap, vs->nchans, sizeof *vs->chans);
      i = (int64_t)vs->nchans++;
      vs->chans[i] = (chan){src, dst, p->tag, 0, 0, HASH_SEED, HASH_SEED};
      pmap_put(&vs->chanmap, a, (uint64_t)p->tag, i);
    }
    chan *ch = &vs->chans[i];
    if (p->send) {
      ch->ns = p->count;
      ch->hs = p->hash;
    } else {
      ch->nr = p->count;
      ch->hr = p->hash;
    }
  }
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

/* After every rank is merged: each member must have issued every instance of its groups. */
static int check_instances(vstate *vs)
{
  dt_trace *t = vs->t;
  char w[600], d[256], ord[32];
  int64_t total = 0;
  for (size_t g = 0; g < t->ngroups; g++) {
    const dt_group *gr = &t->groups[g];
    int64_t ref = vs->ref[g];
    if (ref < 0)
      continue;
    int64_t want = vs->mcount[ref];
    total += want;
    for (size_t i = 0; i < gr->nranks; i++) {
      int64_t got = vs->mcount[vs->member_base[g] + i];
      if (got == want)
        continue;
      int32_t rr = gr->ranks[(size_t)ref - vs->member_base[g]];
      oref *A;
      size_t na = rank_ops_where(t, rr, 1, (int32_t)g, DT_OP_COMPUTE, -1, 0, &A);
      int rc = DT_ERR;
      if ((size_t)got < na) /* always: the reference holds the longest sequence */
        rc = fail_at(vs->err, t, &A[got],
                     "%s on group '%s' at rank %d (%s) has no match on rank %d: rank %d issues %" PRId64
                     " collectives on '%s' but rank %d issues only %" PRId64 ", so the %s is missing",
                     describe(t, A[got].op, d, sizeof d), gr->name, (int)rr, where(t, &A[got], w, sizeof w),
                     (int)gr->ranks[i], (int)rr, want, gr->name, (int)gr->ranks[i], got,
                     ordinal(got + 1, ord, sizeof ord));
      free(A);
      return rc;
    }
  }
  t->ninstances = total;
  return DT_OK;
}

/* Sends and recvs of one (src, dst, tag) pair in order with equal sizes. */
static int check_channels(vstate *vs)
{
  dt_trace *t = vs->t;
  char w1[600], w2[600], tag[48];
  int64_t total = 0;
  for (size_t i = 0; i < vs->nchans; i++) {
    const chan *p = &vs->chans[i];
    if (p->ns == p->nr && p->hs == p->hr) {
      total += p->ns;
      continue;
    }
    oref *S, *R;
    size_t ns = rank_ops_where(t, p->src, 0, -1, DT_OP_SEND, p->dst, p->tag, &S);
    size_t nr = rank_ops_where(t, p->dst, 0, -1, DT_OP_RECV, p->src, p->tag, &R);
    size_t n = ns < nr ? ns : nr, k = 0;
    tag[0] = '\0';
    if (p->tag != 0)
      snprintf(tag, sizeof tag, " with tag %" PRId64, p->tag);
    while (k < n && S[k].op->bytes == R[k].op->bytes)
      k++;
    if (k < n)
      fail_at(vs->err, t, &S[k],
              "send of %" PRIu64 " bytes from rank %d to rank %d%s (%s) pairs with a recv of %" PRIu64
              " bytes on rank %d (%s): the sizes differ",
              S[k].op->bytes, (int)p->src, (int)p->dst, tag, where(t, &S[k], w1, sizeof w1), R[k].op->bytes,
              (int)p->dst, where(t, &R[k], w2, sizeof w2));
    else if (ns > n)
      fail_at(vs->err, t, &S[n],
              "send of %" PRIu64 " bytes to rank %d%s has no matching recv (rank %d posts %zu sends to rank %d%s, "
              "rank %d posts %zu recvs from rank %d)",
              S[n].op->bytes, (int)p->dst, tag, (int)p->src, ns, (int)p->dst, tag, (int)p->dst, nr, (int)p->src);
    else
      fail_at(vs->err, t, &R[n],
              "recv of %" PRIu64 " bytes from rank %d%s has no matching send (rank %d posts %zu recvs from rank "
              "%d%s, rank %d posts %zu sends to rank %d)",
              R[n].op->bytes, (int)p->src, tag, (int)p->dst, nr, (int)p->src, tag, (int)p->src, ns, (int)p->dst);
    free(S);
    free(R);
    return DT_ERR;
  }
  t->npairs = total;
  return DT_OK;
}

static void add_note_once(dt_trace *t, const char *note)
{
  if (!dt_trace_has_note(t, note))
    dt_trace_add_note(t, "%s", note);
}

static void vstate_free(vstate *vs)
{
  pmap_free(&vs->local);
  pmap_free(&vs->batches);
  pmap_free(&vs->member);
  pmap_free(&vs->chanmap);
  free(vs->csum0);
  free(vs->psum0);
  free(vs->cs);
  free(vs->ps);
  free(vs->member_base);
  free(vs->mcount);
  free(vs->mhash);
  free(vs->msrc);
  free(vs->ref);
  free(vs->multi);
  free(vs->multi_ex);
  free(vs->multi_s0);
  free(vs->multi_s1);
  free(vs->chans);
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
  size_t nranks = t->nranks > 0 ? (size_t)t->nranks : 0;
  pmap_init(&vs.local, 16);
  pmap_init(&vs.batches, 64);
  pmap_init(&vs.chanmap, 64);
  vs.csum0 = dt_xcalloc(nranks + 1, sizeof *vs.csum0);
  vs.psum0 = dt_xcalloc(nranks + 1, sizeof *vs.psum0);

  /* pass A: the ranks that own ops */
  uint64_t global_stream = 0;
  for (int32_t r = 0; r < t->nranks && rc == DT_OK; r++) {
    const dt_rank *rk = &t->ranks[r];
    size_t n = 0;
    if (rk->template_rank < 0)
      for (size_t s = 0; s < rk->nstreams; s++)
        n += rk->streams[s].nops;
    if (n > 0) {
      order = dt_grow(order, &ocap, n, sizeof *order);
      dt_trace_rank_order(t, r, order);
      pmap_clear(&vs.local);
      for (size_t i = 0; i < n && rc == DT_OK; i++) {
        dt_stream *st = &rk->streams[order[i].stream];
        oref o = {&st->ops[order[i].index], r, order[i].stream, order[i].index};
        o.op->match = -1;
        /* the readers refuse more; an importer's product of counts is checked here once for every format */
        if (o.op->bytes > DT_TRACE_MAX_BYTES) {
          rc = fail_at(err, t, &o, "%s of rank %d moves %" PRIu64 " bytes, more than the %" PRIu64 " (2^53) one op "
                       "may move", dt_op_kind_name(o.op->kind), (int)r, o.op->bytes, DT_TRACE_MAX_BYTES);
          break;
        }
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
    vs.csum0[r + 1] = vs.ncs;
    vs.psum0[r + 1] = vs.nps;
  }
  free(order);

  /* pass B: every rank, through its body */
  if (rc == DT_OK) {
    size_t nmembers = 0;
    for (size_t g = 0; g < t->ngroups; g++)
      nmembers += t->groups[g].nranks;
    pmap_init(&vs.member, nmembers);
    vs.member_base = dt_xcalloc(t->ngroups + 1, sizeof *vs.member_base);
    vs.mcount = dt_xcalloc(nmembers + 1, sizeof *vs.mcount);
    vs.mhash = dt_xcalloc(nmembers + 1, sizeof *vs.mhash);
    vs.msrc = dt_xmalloc((nmembers + 1) * sizeof *vs.msrc);
    vs.ref = dt_xmalloc((t->ngroups + 1) * sizeof *vs.ref);
    vs.multi = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi);
    vs.multi_ex = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi_ex);
    vs.multi_s0 = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi_s0);
    vs.multi_s1 = dt_xcalloc(t->ngroups + 1, sizeof *vs.multi_s1);
    for (size_t g = 0, base = 0; g < t->ngroups; g++) {
      vs.member_base[g] = base;
      vs.ref[g] = -1;
      for (size_t i = 0; i < t->groups[g].nranks; i++) {
        vs.msrc[base + i] = -1;
        pmap_put(&vs.member, g, (uint64_t)t->groups[g].ranks[i], (int64_t)(base + i));
      }
      base += t->groups[g].nranks;
    }
    for (int32_t r = 0; r < t->nranks && rc == DT_OK; r++)
      rc = merge_rank(&vs, r);
  }
  if (rc == DT_OK)
    rc = check_instances(&vs);
  if (rc == DT_OK)
    rc = check_channels(&vs);
  if (rc == DT_OK) {
    for (size_t g = 0; g < t->ngroups; g++) {
      if (!vs.multi[g])
        continue;
      const oref *ex = &vs.multi_ex[g];
      const dt_rank *rk = dt_trace_rank_body(t, ex->rank);
      char note[1024];
      snprintf(note, sizeof note,
               "warning: group '%s' is used from two streams of one rank (rank %d: s%d and s%d; %zu rank%s in all): "
               "its collectives are matched in line order across the streams",
               t->groups[g].name, (int)ex->rank, (int)rk->streams[vs.multi_s0[g]].id,
               (int)rk->streams[vs.multi_s1[g]].id, vs.multi[g], vs.multi[g] == 1 ? "" : "s");
      add_note_once(t, note);
    }
  }
  vstate_free(&vs);
  return rc;
}
