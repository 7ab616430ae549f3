/* Per-link accounting: transfers mapped onto their routes' links, per link direction bytes, labels, busy time
 * and peak concurrency, computed by sweeping the transfers' intervals once they are below a watermark.
 * Memory behaviour is most of its cost (a 1,024-GPU run records 5 M transfers over 13 M link crossings, a few
 * instructions each): per crossing it touches one cache line of the direction, and the intervals go to one log
 * written and read in order. */
#include "dt_linkload.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first fold happens when this many intervals wait; the limit doubles when a fold frees too little. */
#define FIRST_FOLD_LIMIT 65536

/* One link direction: what a fold's pass over the log updates for every crossing of it, in one cache line (the
 * pass touches nothing else while the direction stays in its run). A direction's transfers come in runs of one
 * group and kind (a ring's steps, a layer's all-reduces): the run's sums of its group's, dimension's and kind's
 * bytes are kept here, loaded from the table and ll_cold when the run opens and written back when it closes, so
 * that each sum is the same sequence of additions as adding to it every time. While every byte count applied is a
 * whole number and their sum stays below 2^52 (dt_linkload.lazy) the sums are exact, in any order: a run then only
 * notes the direction's bytes when it opens and adds the difference to the three sums when it closes. The fold's
 * state of the direction (acc, last_e, n) is here too; what changes once per fold or per run is in ll_cold. */
typedef struct ll_dir {
  double bytes;
  double run_group, run_dim, run_kind; /* bytes of the open run's group slot, dimension and kind so far (lazy:
                                          run_group is the direction's bytes when the run opened) */
  double acc;          /* fold: the busy time before the fold plus the in-order terms so far */
  double last_e;       /* fold: the end of its previous interval in the log; NaN once one started before it ended */
  uint64_t tag;        /* the open run: run_tag(group, kind), 0 none */
  uint32_t transfers;  /* crossings, modulo 2^32 (the wraps are in ll_cold) */
  uint32_t n;          /* fold: its intervals in the log (N_COUNT), 0 not met yet in this fold; N_BEFORE: the first
                          started before the watermark (in order, the first starts first) */
} ll_dir;
_Static_assert(sizeof(ll_dir) == 64, "a link direction's hot record is one cache line");

#define TAG_OPEN 1u
#define N_BEFORE (UINT32_C(1) << 31)
#define N_COUNT (N_BEFORE - 1)

/* What identifies a run: group (-1: pairs) and kind; never 0. */
static inline uint64_t run_tag(int32_t group, dt_op_kind kind)
{
  return (uint64_t)(uint32_t)(group + 1) << 32 | (uint64_t)kind << 8 | TAG_OPEN;
}

/* A direction's results that change once per fold or per run: busy time and peak (final below the watermark), the
 * crossings' wraps of 2^32, and the bytes by dimension and op kind (written when a run closes). */
typedef struct ll_cold {
  double busy;         /* length of the union of its intervals before the last fold's watermark */
  uint32_t peak;
  uint32_t wraps;      /* transfers = wraps * 2^32 + ll_dir.transfers */
  double by_dim[DT_DIM_COUNT];
  double by_kind[DT_OP_COUNT];
} ll_cold;

/* The log of transfers not applied yet, in the order recorded, as uint32 words: per record a start and an end (two
 * doubles), the bytes (a double), the group (int32), the op kind with REC_ flags, then either a count of link
 * crossings and that many directions the record's transfers crossed, each busy over [start, end), or (REC_SET) the
 * flow set's directions: all of them, or (REC_PART) a count and the offset of the first. Transfers recorded one
 * after the other with the same interval, bytes, group and kind share a record; a flow set's transfers (a folded
 * ring's members, dt_linkload_add_set) take one record of 8 words whatever their number. The bytes go to the
 * directions' records when the log is folded (in the log's order: the same sums as adding them at once), so that
 * recording a transfer writes the log's tail only; the per-direction records are then touched in one tight pass.
 * A record stays, applied, while its interval may still overlap a later one. Routes are resolved when a transfer
 * or a flow set is recorded (a route that changes later, a link failing during the run, does not move it). */
#define REC_HEAD 9
#define REC_APPLIED 0x100u /* its bytes are in the directions' records */
#define REC_TIMED 0x200u   /* it lasts (start < end): its interval counts for busy time and concurrency */
#define REC_SET 0x400u     /* its directions are flow set r[7] >> REC_SET_SHIFT's */
#define REC_PART 0x800u    /* a set's: r[8] of them from offset r[9] (else all of them, and no r[8]) */
#define REC_SET_SHIFT 12
#define REC_MAX_SETS (UINT32_C(1) << (32 - REC_SET_SHIFT)) /* the sets a record can name */
#define REC_WORDS(r) ((r)[7] & REC_SET ? ((r)[7] & REC_PART ? (size_t)10 : (size_t)8) : REC_HEAD + (size_t)(r)[8])

/* A flow set (dt_linkload_set_new): transfers between fixed GPUs recorded together, their routes resolved once. */
typedef struct ll_set {
  uint64_t key;     /* the caller's */
  uint32_t gen;     /* the route generation it was resolved in (dt_linkload_forget_routes starts a new one) */
  int32_t twin;     /* the twin standing for its directions (ll_twin), -1 none */
  int claimed;      /* its directions are marked OWN_MANY (its records may be logged as directions) */
  uint32_t nflows;  /* flows with a route */
  uint32_t ndirs;   /* their directions: first[nflows] */
  uint32_t *first;  /* [nflows + 1] offset of each flow's first direction in dirs */
  uint32_t *dirs;   /* [first[nflows]] the flows' directions, flow by flow */
  int32_t *src;     /* [nflows] each flow's source GPU (jobs, the observer) */
  int32_t *dst;     /* [nflows] each flow's destination GPU (the observer) */
} ll_set;

/* Twins: the directions of a flow set that nothing but the sets of the same directions crossed (a tensor-parallel
 * group's NVLink ports, crossed by its rings' closed forms thousands of times) see the same records in the same
 * order, so their every figure is the same: one stand-in direction (vdir, past the real ones in every
 * per-direction array) takes the records' work, and its figures are copied to each of them when anything else is
 * about to cross one (twin_dissolve) or at the end. A set has a twin when its directions are distinct and none of
 * them was crossed before (a new twin), or when they are all of one twin's (shared); a direction crossed by any
 * other record is OWN_MANY from then on. Each figure is then computed by the same operations as for each of the
 * directions, once instead of once per direction: identical to the bit. */
typedef struct ll_twin {
  uint32_t vdir;    /* its stand-in direction: ndirs + its index */
  uint32_t n;       /* its directions */
  uint32_t *dirs;   /* [n] ascending, owned */
  int alive;        /* it stands for them (else they are on their own, for good) */
  uint32_t ngroups; /* the groups of the stand-in's entries in the group table (run_close) */
  int32_t *groups;  /* [ngroups], owned */
} ll_twin;

#define OWN_MANY UINT32_MAX /* owner[]: crossed by a record that is not a twin's */

/* (direction, group) -> bytes, open addressing; key = (direction index + 1) * 2^32 + (group + 1), 0 = empty. */
typedef struct ll_gslot {
  uint64_t key;
  double bytes;
} ll_gslot;

/* Routes looked up before, for the same GPU pair's next transfer, as directions (2 link + dir). Most routes are
 * short (2 hops inside a node, 4 or 6 over a two-level fat-tree) and a GPU sends to few peers (its ring
 * neighbours, its pipeline peers): a set of RWAYS routes of up to RSHORT hops per source GPU, newest first (a miss
 * pushes out the oldest), on two cache lines (a ring's members are consecutive GPUs: consecutive sets). Longer routes go to a
 * direct-mapped cache by GPU pair; routes of more than ROUTE_CACHED_HOPS hops are looked up every time (none of
 * the shipped fabrics has one). */
#define RSETS 16384
#define RWAYS 4
#define RSHORT 6
typedef struct ll_rshort {
  int32_t src1, dst;    /* source GPU + 1, 0: empty (calloc'ed: untouched sets cost no memory) */
  uint32_t dir[RSHORT]; /* UINT32_MAX after the last hop */
} ll_rshort;
_Static_assert(sizeof(ll_rshort) * RWAYS == 128, "a set of short routes is two cache lines");

#define ROUTE_CACHE 8192
#define ROUTE_CACHED_HOPS 13
typedef struct ll_route {
  int32_t src1, dst; /* source GPU + 1, 0: empty */
  int32_t nh;
  uint32_t dir[ROUTE_CACHED_HOPS];
} ll_route;
_Static_assert(sizeof(ll_route) == 64, "a route cache entry is one cache line");

struct dt_linkload {
  const dt_topology *topo;
  const dt_trace *t;
  size_t ndirs;         /* 2 per link */
  ll_dir *dirs;         /* [ndirs], in dirs_mem */
  void *dirs_mem;
  ll_cold *cold;        /* [ndirs] */
  dt_dim p2p_dim;
  ll_gslot *gslots;
  size_t gcap, gn;
  uint32_t *log;        /* intervals not folded yet (REC_WORDS), the leftovers of the last fold first */
  size_t log_n, log_cap; /* words */
  size_t last_rec;      /* where the last record starts, SIZE_MAX: none to extend */
  size_t pending, limit; /* pending: link crossings of the log's lasting records (what the fold limit counts) */
  size_t zhops;         /* link crossings of the log's records without a duration */
  uint32_t *touched;    /* fold_all: the directions met in the log, [ndirs] */
  size_t *offset;       /* fold_all: [ndirs] where an out-of-order direction's intervals go in sorted */
  double *sorted;       /* fold_all: those directions' starts, then their ends */
  size_t sorted_cap;
  double folded;        /* watermark of the last fold */
  int lazy;             /* every byte count applied so far was whole and lazy_sum <= LAZY_MAX: runs' sums lazy */
  double lazy_sum;      /* the bytes applied times their crossings, while lazy */
  double (*watermark)(void *);
  void *wm_data;
  uint64_t transfers;
  size_t radix[8][256]; /* sort_times' digit counts (only the rows of the bytes the keys differ in are used) */
  uint32_t *keep;       /* fold_log: the records it keeps, before they go back to the log's start */
  size_t keep_cap;
  ll_set *sets;         /* [nsets] flow sets, every one ever resolved (the log's records may name old ones) */
  uint32_t *owner;      /* [ndirs] 0: no record crossed it yet, OWN_MANY, else twin index + 1 (only its sets') */
  ll_twin *twins;       /* [ntwins], every one ever made */
  size_t ntwins, twins_cap;
  size_t dirs_cap;      /* real and stand-in directions the per-direction arrays (dirs, cold, touched, offset) hold */
  uint64_t shared;      /* records logged on a twin (dt_linkload_shared) */
  size_t nsets, sets_cap;
  struct ll_setslot {
    uint64_t key;
    uint32_t set1;      /* set index + 1, 0 empty (the newest set of the key) */
  } *set_tab;           /* [set_tab_cap] open addressing by key */
  size_t set_tab_cap;
  uint32_t route_gen;
  ll_rshort (*rsets)[RWAYS]; /* [RSETS] by source GPU, in routes_mem */
  ll_route *routes;     /* [ROUTE_CACHE], direct-mapped by GPU pair, in routes_mem */
  void *routes_mem;
  void (*observer)(void *, int32_t, int32_t, double, double, double); /* dt_linkload_set_observer, or NULL */
  void *obs_data;
  double stop;          /* dt_linkload_stop: the time the run stopped, INFINITY while it runs */
  double last_end;      /* the latest end of a transfer counted, 0 before any */
  const int32_t *job_of_gpu; /* dt_linkload_set_jobs, NULL without */
  int32_t njobs;
  double *jbytes;       /* per direction, per job: bytes (ndirs x njobs), NULL without jobs */
};

dt_linkload *dt_linkload_new(const dt_topology *topo, const dt_trace *t)
{
  dt_linkload *ll = dt_xcalloc(1, sizeof *ll);
  ll->topo = topo;
  ll->t = t;
  ll->ndirs = 2 * dt_topology_link_count(topo);
  ll->dirs_cap = ll->ndirs + 1;
  ll->dirs_mem = dt_xcalloc(1, sizeof *ll->dirs * ll->dirs_cap + 64); /* records on cache lines */
  ll->dirs = (ll_dir *)(((uintptr_t)ll->dirs_mem + 63) & ~(uintptr_t)63);
  ll->cold = dt_xcalloc(ll->dirs_cap, sizeof *ll->cold);
  ll->owner = dt_xcalloc(ll->ndirs + 1, sizeof *ll->owner);
  ll->p2p_dim = dt_trace_p2p_dim(t);
  ll->gcap = 1024;
  ll->gslots = dt_xcalloc(ll->gcap, sizeof *ll->gslots);
  ll->limit = FIRST_FOLD_LIMIT;
  ll->lazy = 1;
  ll->folded = -INFINITY;
  ll->stop = INFINITY;
  ll->last_rec = SIZE_MAX;
  ll->touched = dt_xmalloc(sizeof *ll->touched * ll->dirs_cap);
  ll->offset = dt_xmalloc(sizeof *ll->offset * ll->dirs_cap);
  /* on cache lines; pages of sets no GPU uses are never touched */
  ll->routes_mem = dt_xcalloc(1, sizeof *ll->rsets * RSETS + sizeof *ll->routes * ROUTE_CACHE + 64);
  ll->rsets = (ll_rshort(*)[RWAYS])(((uintptr_t)ll->routes_mem + 63) & ~(uintptr_t)63);
  ll->routes = (ll_route *)(ll->rsets + RSETS);
  return ll;
}

void dt_linkload_set_watermark(dt_linkload *ll, double (*fn)(void *data), void *data)
{
  ll->watermark = fn;
  ll->wm_data = data;
}

void dt_linkload_set_observer(dt_linkload *ll,
                              void (*fn)(void *data, int32_t src_gpu, int32_t dst_gpu, double bytes, double start_s,
                                         double end_s),
                              void *data)
{
  ll->observer = fn;
  ll->obs_data = data;
}

static void twin_dissolve(dt_linkload *ll, uint32_t t);

void dt_linkload_set_jobs(dt_linkload *ll, const int32_t *job_of_gpu, int32_t njobs)
{
  for (size_t t = 0; t < ll->ntwins; t++) /* a twin's bytes per job would be its directions' own: none with jobs */
    if (ll->twins[t].alive)
      twin_dissolve(ll, (uint32_t)t);
  if (njobs > DT_LINK_MAX_JOBS)
    njobs = DT_LINK_MAX_JOBS;
  free(ll->jbytes);
  ll->jbytes = NULL;
  ll->job_of_gpu = njobs > 0 ? job_of_gpu : NULL;
  ll->njobs = njobs > 0 ? njobs : 0;
  if (ll->job_of_gpu)
    ll->jbytes = dt_xcalloc(ll->ndirs * (size_t)njobs + 1, sizeof *ll->jbytes);
}

/* The slot of key in the group table: its own, or the empty one where it would go. */
static size_t gfind(const dt_linkload *ll, uint64_t key)
{
  size_t h = dt_mix64(key) & (ll->gcap - 1);
  while (ll->gslots[h].key && ll->gslots[h].key != key)
    h = (h + 1) & (ll->gcap - 1);
  return h;
}

/* Sets key's bytes in the group table (inserting it, growing the table at half full). */
static void gput(dt_linkload *ll, uint64_t key, double bytes)
{
  if ((ll->gn + 1) * 2 > ll->gcap) {
    size_t ocap = ll->gcap;
    ll_gslot *old = ll->gslots;
    ll->gcap *= 2;
    ll->gslots = dt_xcalloc(ll->gcap, sizeof *ll->gslots);
    for (size_t i = 0; i < ocap; i++)
      if (old[i].key)
        ll->gslots[gfind(ll, old[i].key)] = old[i];
    free(old);
  }
  size_t h = gfind(ll, key);
  if (!ll->gslots[h].key) {
    ll->gslots[h].key = key;
    ll->gn++;
  }
  ll->gslots[h].bytes = bytes;
}

static uint64_t gkey(size_t dir, int32_t group)
{
  return (uint64_t)(dir + 1) << 32 | (uint32_t)(group + 1);
}

/* The dimension that labels group's bytes (the trace's point-to-point dimension for pairs). */
static dt_dim dim_of(const dt_linkload *ll, int32_t group)
{
  return group >= 0 && (size_t)group < ll->t->ngroups ? ll->t->groups[group].dim : ll->p2p_dim;
}

/* Closes direction di's open run: its sums go back to the group table and the labels (lazy: the bytes it took are
 * added to them, exactly, as every number involved is a whole number below 2^53). */
static void run_close(dt_linkload *ll, size_t di)
{
  ll_dir *d = &ll->dirs[di];
  if (!(d->tag & TAG_OPEN))
    return;
  int32_t group = (int32_t)(uint32_t)(d->tag >> 32) - 1;
  dt_dim dim = dim_of(ll, group);
  unsigned kind = (d->tag >> 8) & 0xffu;
  if (di >= ll->ndirs) { /* a twin's stand-in: the groups it has entries of, for twin_dissolve */
    ll_twin *T = &ll->twins[di - ll->ndirs];
    uint32_t k = 0;
    while (k < T->ngroups && T->groups[k] != group)
      k++;
    if (k == T->ngroups) {
      T->groups = dt_xrealloc(T->groups, sizeof *T->groups * (T->ngroups + 1));
      T->groups[T->ngroups++] = group;
    }
  }
  if (ll->lazy) {
    double took = d->bytes - d->run_group;
    size_t h = gfind(ll, gkey(di, group));
    gput(ll, gkey(di, group), (ll->gslots[h].key ? ll->gslots[h].bytes : 0) + took);
    ll->cold[di].by_dim[dim] += took;
    ll->cold[di].by_kind[kind] += took;
  } else {
    gput(ll, gkey(di, group), d->run_group);
    ll->cold[di].by_dim[dim] = d->run_dim;
    ll->cold[di].by_kind[kind] = d->run_kind;
  }
  d->tag = 0;
}

/* Opens a run of group and kind on direction di, loading its sums (lazy: noting its bytes). */
static void run_open(dt_linkload *ll, size_t di, int32_t group, dt_op_kind kind)
{
  run_close(ll, di);
  ll_dir *d = &ll->dirs[di];
  if (ll->lazy) {
    d->run_group = d->bytes;
  } else {
    size_t h = gfind(ll, gkey(di, group));
    d->run_group = ll->gslots[h].key ? ll->gslots[h].bytes : 0;
    d->run_dim = ll->cold[di].by_dim[dim_of(ll, group)];
    d->run_kind = ll->cold[di].by_kind[kind];
  }
  d->tag = run_tag(group, kind);
}

/* Hands twin t's directions their figures, which are its stand-in's (the same records crossed each of them in the
 * same order), and leaves them on their own from now on: the log's records of its sets name their directions
 * again. Between folds only (no direction is in a fold's state). */
static void twin_dissolve(dt_linkload *ll, uint32_t t)
{
  ll_twin *T = &ll->twins[t];
  size_t v = T->vdir;
  double *gb = dt_xmalloc(sizeof *gb * (T->ngroups + 1));
  for (uint32_t k = 0; k < T->ngroups; k++) {
    size_t h = gfind(ll, gkey(v, T->groups[k]));
    gb[k] = ll->gslots[h].key ? ll->gslots[h].bytes : 0;
  }
  for (uint32_t i = 0; i < T->n; i++) {
    uint32_t d = T->dirs[i];
    ll->dirs[d] = ll->dirs[v];
    ll->cold[d] = ll->cold[v];
    ll->owner[d] = OWN_MANY;
    for (uint32_t k = 0; k < T->ngroups; k++)
      gput(ll, gkey(d, T->groups[k]), gb[k]);
  }
  free(gb);
  ll->dirs[v].tag = 0; /* it stands for nothing now: no run to close */
  T->alive = 0;
}

/* Direction d is about to be crossed by a record that is not a twin's. */
static inline void own_many(dt_linkload *ll, uint32_t d)
{
  uint32_t o = ll->owner[d];
  if (o == OWN_MANY)
    return;
  if (o)
    twin_dissolve(ll, o - 1);
  ll->owner[d] = OWN_MANY;
}

/* Set S's records are about to be logged as its directions (it has no live twin): marks them, once. */
static void set_claim(dt_linkload *ll, ll_set *S)
{
  for (uint32_t k = 0; k < S->ndirs; k++)
    own_many(ll, S->dirs[k]);
  S->claimed = 1;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The twin for a new set of nd directions dirs (-1 none): a new one when they are distinct and no record crossed
 * any, a live one when they are all its directions. */
static int32_t twin_for(dt_linkload *ll, const uint32_t *dirs, uint32_t nd)
{
  if (ll->jbytes || nd < 2 || ll->nsets >= REC_MAX_SETS || ll->ntwins >= INT32_MAX - 1)
    return -1;
  uint32_t *u = dt_xmalloc(sizeof *u * nd);
  memcpy(u, dirs, sizeof *u * nd);
  qsort(u, nd, sizeof *u, cmp_u32);
  uint32_t o = ll->owner[u[0]];
  int ok = o != OWN_MANY && (!o || ll->twins[o - 1].n == nd);
  for (uint32_t k = 1; k < nd && ok; k++)
    ok = u[k] != u[k - 1] && ll->owner[u[k]] == o;
  if (!ok) {
    free(u);
    return -1;
  }
  if (o) { /* distinct, all of twin o - 1's, as many: the same directions */
    free(u);
    return (int32_t)(o - 1);
  }
  if (ll->ndirs + ll->ntwins + 1 >= ll->dirs_cap) { /* room for one more stand-in */
    size_t cap = 2 * ll->dirs_cap;
    void *mem = dt_xcalloc(1, sizeof *ll->dirs * cap + 64);
    ll_dir *nd_ = (ll_dir *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    memcpy(nd_, ll->dirs, sizeof *ll->dirs * ll->dirs_cap);
    free(ll->dirs_mem);
    ll->dirs_mem = mem;
    ll->dirs = nd_;
    ll->cold = dt_xrealloc(ll->cold, sizeof *ll->cold * cap);
    memset(ll->cold + ll->dirs_cap, 0, sizeof *ll->cold * (cap - ll->dirs_cap));
    ll->touched = dt_xrealloc(ll->touched, sizeof *ll->touched * cap);
    ll->offset = dt_xrealloc(ll->offset, sizeof *ll->offset * cap);
    ll->dirs_cap = cap;
  }
  if (ll->ntwins == ll->twins_cap) {
    ll->twins_cap = ll->twins_cap ? 2 * ll->twins_cap : 64;
    ll->twins = dt_xrealloc(ll->twins, sizeof *ll->twins * ll->twins_cap);
  }
  uint32_t t = (uint32_t)ll->ntwins++;
  ll->twins[t] = (ll_twin){(uint32_t)(ll->ndirs + t), nd, u, 1, 0, NULL};
  for (uint32_t k = 0; k < nd; k++)
    ll->owner[u[k]] = t + 1;
  return (int32_t)t;
}

/* Lazy sums hold while each addend is a whole number and every sum stays at most 2^53; the sum of all bytes
 * applied times their crossings bounds each direction's sums (LAZY_MAX = 2^52 leaves room for its own
 * rounding). */
#define LAZY_MAX 4503599627370496.0

/* Before a record of `bytes` over nh crossings is applied: leaves the lazy sums, for good, when the record would
 * break them, closing every open run (exact until now) so that the runs opened from now on add as they go. */
static void lazy_check(dt_linkload *ll, double bytes, uint32_t nh)
{
  ll->lazy_sum += bytes * nh;
  if (bytes <= LAZY_MAX && (double)(int64_t)bytes == bytes && ll->lazy_sum <= LAZY_MAX)
    return;
  for (size_t k = 0; k < ll->ndirs + ll->ntwins; k++)
    run_close(ll, k);
  ll->lazy = 0;
}

/* The key of a double whose unsigned order is the doubles' order (negative: every bit flipped; else the sign
 * bit set). */
static uint64_t order_key(double v)
{
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* Sorts a[0..n) ascending, tmp[n] scratch: nothing when already in order (the usual case: transfers are recorded
 * in time order), insertion below 32, else a least-significant-digit radix sort over the keys' 8 bytes that
 * skips the bytes every key shares (qsort's calls through a comparator were most of the accounting's cost). */
static void sort_times(dt_linkload *ll, double *a, double *tmp, size_t n)
{
  size_t i = 1;
  while (i < n && a[i - 1] <= a[i])
    i++;
  if (i >= n)
    return;
  if (n < 32) {
    for (; i < n; i++) {
      double v = a[i];
      size_t j = i;
      for (; j > 0 && a[j - 1] > v; j--)
        a[j] = a[j - 1];
      a[j] = v;
    }
    return;
  }
  size_t (*count)[256] = ll->radix;
  uint64_t u0 = order_key(a[0]), diff = 0; /* the bytes in which some key differs from the first */
  for (size_t k = 1; k < n; k++)
    diff |= order_key(a[k]) ^ u0;
  int digit[8], nd = 0;
  for (int b = 0; b < 8; b++)
    if ((diff >> (8 * b)) & 0xff) {
      digit[nd++] = b;
      memset(count[b], 0, sizeof count[b]);
    }
  for (size_t k = 0; k < n; k++) {
    uint64_t u = order_key(a[k]);
    for (int q = 0; q < nd; q++)
      count[digit[q]][(u >> (8 * digit[q])) & 0xff]++;
  }
  double *src = a, *dst = tmp;
  for (int q = 0; q < nd; q++) {
    int b = digit[q];
    size_t *c = count[b], sum = 0;
    for (int d = 0; d < 256; d++) {
      size_t x = c[d];
      c[d] = sum;
      sum += x;
    }
    for (size_t k = 0; k < n; k++)
      dst[c[(order_key(src[k]) >> (8 * b)) & 0xff]++] = src[k];
    double *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, sizeof *a * n);
}

/* The sort path of a fold: direction d's n starts S and ends E (any order), swept up to w: busy time and peak
 * concurrency before w are final (no later transfer starts before w). tmp: n doubles. */
static void sweep_dir(dt_linkload *ll, ll_cold *d, double *S, double *E, double *tmp, size_t n, double w)
{
  sort_times(ll, S, tmp, n);
  sort_times(ll, E, tmp, n);
  size_t i = 0, j = 0;
  uint32_t cnt = 0;
  double cur = 0;
  for (;;) {
    int start_ok = i < n && S[i] < w, end_ok = j < n && E[j] < w;
    if (!start_ok && !end_ok)
      break;
    if (end_ok && (!start_ok || E[j] <= S[i])) { /* half-open: an end before a start at the same time */
      if (--cnt == 0)
        d->busy += E[j] - cur;
      j++;
    } else {
      if (cnt++ == 0)
        cur = S[i];
      if (cnt > d->peak)
        d->peak = cnt;
      i++;
    }
  }
  if (cnt > 0)
    d->busy += w - cur;
}

static void rec_get(const uint32_t *r, double *s, double *e)
{
  memcpy(s, r, sizeof *s);
  memcpy(e, r + 2, sizeof *e);
}

/* The directions a fold applies a record to, *nh of them: those its transfers crossed, *real of them, or a twin's
 * stand-in for all of them. */
static const uint32_t *rec_dirs(const dt_linkload *ll, const uint32_t *r, uint32_t *nh, uint32_t *real)
{
  if (!(r[7] & REC_SET)) {
    *nh = *real = r[8];
    return r + REC_HEAD;
  }
  const ll_set *S = &ll->sets[r[7] >> REC_SET_SHIFT];
  if (r[7] & REC_PART) { /* never a live twin's (twin_split) */
    *nh = *real = r[8];
    return S->dirs + r[9];
  }
  *real = S->ndirs;
  if (S->twin >= 0 && ll->twins[S->twin].alive) {
    *nh = 1;
    return &ll->twins[S->twin].vdir;
  }
  *nh = S->ndirs;
  return S->dirs;
}

/* One record's crossings in a fold's pass: each of the nh directions takes the record's bytes (take: it was not
 * applied yet; tag = run_tag(group, kind)) and its interval [s, e) (interval), add = min(e, w) - s of it before
 * the watermark (before: s < w); take 2: lazily (ll->lazy), the run's sums at its close. The three flags are
 * constants where it is called: one loop per case, each crossing one cache line (ll_dir). */
static inline __attribute__((always_inline)) void fold_dirs(dt_linkload *ll, const uint32_t *dirs, uint32_t nh,
                                                            int take, int interval, int before, double bytes,
                                                            uint64_t tag, int32_t group, dt_op_kind kind, double s,
                                                            double e, double add, size_t *ntouched)
{
  ll_dir *D = ll->dirs;
  for (uint32_t h = 0; h < nh; h++) {
    uint32_t di = dirs[h];
    ll_dir *d = &D[di];
    if (take) {
      if (d->tag != tag) /* before the bytes: a lazy run's close takes the bytes since it opened */
        run_open(ll, di, group, kind);
      d->bytes += bytes;
      if (!++d->transfers)
        ll->cold[di].wraps++;
      if (take == 1) {
        d->run_group += bytes;
        d->run_dim += bytes;
        d->run_kind += bytes;
      }
    }
    if (interval) {
      if (!d->n) { /* first met in this fold */
        ll->touched[(*ntouched)++] = di;
        d->acc = ll->cold[di].busy;
        d->last_e = -INFINITY;
        d->n = before ? N_BEFORE : 0;
      }
      d->n++;
      d->last_e = s >= d->last_e ? e : NAN; /* NaN stays: no later start is >= it */
      if (before)
        d->acc += add;
    }
  }
}

/* A record not applied yet: its bytes (take 1 or 2, a constant where it is called) and, when timed, its interval. */
static inline __attribute__((always_inline)) void fold_take(dt_linkload *ll, const uint32_t *dirs, uint32_t nh,
                                                            int take, int timed, double bytes, int32_t group,
                                                            dt_op_kind kind, double s, double e, double w,
                                                            double add, size_t *ntouched)
{
  uint64_t tag = run_tag(group, kind);
  if (!timed)
    fold_dirs(ll, dirs, nh, take, 0, 0, bytes, tag, group, kind, s, e, add, ntouched);
  else if (s < w) /* bytes and interval in one pass over the directions */
    fold_dirs(ll, dirs, nh, take, 1, 1, bytes, tag, group, kind, s, e, add, ntouched);
  else
    fold_dirs(ll, dirs, nh, take, 1, 0, bytes, tag, group, kind, s, e, add, ntouched);
}

/* Applies the log's bytes and folds its intervals up to w (intervals 0: applies only, keeps every interval). Every
 * direction's busy time and peak before w become final (no later transfer starts before w) and what is active at
 * w stays in the log, clipped to start at w. One pass over the log applies the bytes and sums each direction's
 * intervals as they come: the usual case is a direction whose intervals were recorded in order, each after the one
 * before ended (a GPU port's ring steps), whose union is their sum and at most one is active at once; the records
 * still active are copied aside as it goes. Only when some direction's intervals were not in order does a second
 * pass gather them, to be swept sorted (sweep_dir). */
static void fold_log(dt_linkload *ll, double w, int intervals)
{
  size_t ntouched = 0, q = 0, kept = 0, kn = 0;
  for (size_t p = 0; p < ll->log_n;) {
    uint32_t *r = &ll->log[p];
    uint32_t nh, real, flags = r[7];
    size_t words = REC_WORDS(r);
    const uint32_t *dirs = rec_dirs(ll, r, &nh, &real);
    double s, e;
    rec_get(r, &s, &e);
    int timed = intervals && (flags & REC_TIMED);
    double add = (e < w ? e : w) - s;
    if (!(flags & REC_APPLIED)) {
      double bytes;
      memcpy(&bytes, r + 4, sizeof bytes);
      int32_t group = (int32_t)r[6];
      dt_op_kind kind = (dt_op_kind)(flags & 0xffu);
      if (ll->lazy)
        lazy_check(ll, bytes, real);
      if (ll->lazy)
        fold_take(ll, dirs, nh, 2, timed, bytes, group, kind, s, e, w, add, &ntouched);
      else
        fold_take(ll, dirs, nh, 1, timed, bytes, group, kind, s, e, w, add, &ntouched);
    } else if (timed) {
      if (s < w)
        fold_dirs(ll, dirs, nh, 0, 1, 1, 0, 0, 0, DT_OP_OTHER, s, e, add, &ntouched);
      else
        fold_dirs(ll, dirs, nh, 0, 1, 0, 0, 0, 0, DT_OP_OTHER, s, e, add, &ntouched);
    }
    if ((flags & REC_TIMED) && (!intervals || e > w)) { /* still active: kept, applied */
      uint32_t *to;
      if (!intervals) { /* nothing to gather: compacted in place */
        to = &ll->log[q];
        q += words;
      } else {
        if (kn + words > ll->keep_cap) {
          ll->keep_cap = 2 * (kn + words) + 1024;
          ll->keep = dt_xrealloc(ll->keep, sizeof *ll->keep * ll->keep_cap);
        }
        to = &ll->keep[kn];
        kn += words;
      }
      memmove(to, r, sizeof *r * words);
      if (intervals && s < w)
        memcpy(to, &w, sizeof w);
      to[7] |= REC_APPLIED;
      kept += real;
    }
    p += words;
  }
  size_t total = 0, most = 0;
  for (size_t k = 0; k < ntouched; k++) {
    ll_dir *f = &ll->dirs[ll->touched[k]];
    ll_cold *d = &ll->cold[ll->touched[k]];
    if (f->last_e == f->last_e) { /* in order: the union is the sum */
      d->busy = f->acc;
      if ((f->n & N_BEFORE) && d->peak < 1)
        d->peak = 1;
      f->n = 0;
    } else {
      ll->offset[ll->touched[k]] = total;
      total += f->n & N_COUNT;
      if ((f->n & N_COUNT) > most)
        most = f->n & N_COUNT;
    }
  }
  if (total > 0) { /* gathers the out-of-order directions' intervals from the log as it was */
    if (ll->sorted_cap < 2 * total + most) {
      ll->sorted_cap = 2 * total + most;
      free(ll->sorted);
      ll->sorted = dt_xmalloc(sizeof *ll->sorted * ll->sorted_cap);
    }
    for (size_t p = 0; p < ll->log_n;) {
      const uint32_t *r = &ll->log[p];
      if (r[7] & REC_TIMED) {
        double s, e;
        rec_get(r, &s, &e);
        uint32_t nh, real;
        const uint32_t *dirs = rec_dirs(ll, r, &nh, &real);
        for (uint32_t h = 0; h < nh; h++)
          if (ll->dirs[dirs[h]].n) {
            size_t o = ll->offset[dirs[h]]++;
            ll->sorted[o] = s;
            ll->sorted[total + o] = e;
          }
      }
      p += REC_WORDS(r);
    }
    for (size_t k = 0; k < ntouched; k++) {
      ll_dir *f = &ll->dirs[ll->touched[k]];
      if (!f->n)
        continue;
      size_t from = ll->offset[ll->touched[k]] - (f->n & N_COUNT);
      sweep_dir(ll, &ll->cold[ll->touched[k]], ll->sorted + from, ll->sorted + total + from,
                ll->sorted + 2 * total, f->n & N_COUNT, w);
      f->n = 0;
    }
  }
  if (intervals) {
    if (kn > 0)
      memcpy(ll->log, ll->keep, sizeof *ll->log * kn);
    q = kn;
  }
  ll->log_n = q;
  ll->last_rec = SIZE_MAX;
  ll->pending = kept;
  ll->zhops = 0;
  if (intervals)
    ll->folded = w;
}

static void fold_all(dt_linkload *ll, double w)
{
  if (w > ll->folded)
    fold_log(ll, w, 1);
}

/* Room for `words` more words at the log's tail. */
static void log_reserve(dt_linkload *ll, size_t words)
{
  if (ll->log_n + words > ll->log_cap) {
    ll->log_cap = ll->log_cap ? 2 * ll->log_cap : 1 << 16;
    if (ll->log_cap < ll->log_n + words)
      ll->log_cap = ll->log_n + words;
    ll->log = dt_xrealloc(ll->log, sizeof *ll->log * ll->log_cap);
  }
}

/* After a transfer was logged: folds when the log holds more than the limit (then the limit doubles if the fold
 * freed less than half of it). */
static void fold_if_full(dt_linkload *ll)
{
  if (ll->zhops > ll->limit) /* transfers without a duration: apply them, nothing to fold */
    fold_log(ll, -INFINITY, 0);
  if (ll->pending > ll->limit) {
    if (ll->watermark)
      fold_all(ll, ll->watermark(ll->wm_data));
    if (ll->pending > ll->limit / 2)
      ll->limit *= 2;
  }
}

void dt_linkload_forget_routes(dt_linkload *ll)
{
  if (!ll)
    return;
  memset(ll->rsets, 0, sizeof *ll->rsets * RSETS);
  memset(ll->routes, 0, sizeof *ll->routes * ROUTE_CACHE);
  ll->route_gen++; /* the flow sets are resolved again when next used */
}

/* The route from GPU src to dst: its hop count (-1 when there is none), *dirs its directions (in the caches, or in
 * buf: DT_ROUTE_MAX_HOPS), valid until the next lookup. */
static int route_of(dt_linkload *ll, int32_t src, int32_t dst, uint32_t *buf, const uint32_t **dirs)
{
  ll_rshort *set = ll->rsets[(uint32_t)src & (RSETS - 1)];
  for (int w = 0; w < RWAYS; w++)
    if (set[w].src1 == src + 1 && set[w].dst == dst) { /* a hit stays where it is (a GPU alternates between peers) */
      int nh = 0;
      while (nh < RSHORT && set[w].dir[nh] != UINT32_MAX)
        nh++;
      *dirs = set[w].dir;
      return nh;
    }
  ll_route *rt = &ll->routes[dt_mix64((uint64_t)src << 32 | (uint32_t)dst) & (ROUTE_CACHE - 1)];
  if (rt->src1 == src + 1 && rt->dst == dst) {
    *dirs = rt->dir;
    return rt->nh;
  }
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  int nh = dt_topology_route(ll->topo, src, dst, hops, NULL, NULL);
  if (nh < 0)
    return -1;
  if (nh <= RSHORT) {
    memmove(&set[1], &set[0], sizeof *set * (RWAYS - 1));
    set[0].src1 = src + 1;
    set[0].dst = dst;
    for (int h = 0; h < RSHORT; h++)
      set[0].dir[h] = h < nh ? 2 * hops[h].link + hops[h].dir : UINT32_MAX;
    *dirs = set[0].dir;
  } else {
    uint32_t *to = nh <= ROUTE_CACHED_HOPS ? rt->dir : buf;
    for (int h = 0; h < nh; h++)
      to[h] = 2 * hops[h].link + hops[h].dir;
    if (nh <= ROUTE_CACHED_HOPS) {
      rt->src1 = src + 1;
      rt->dst = dst;
      rt->nh = nh;
    }
    *dirs = to;
  }
  return nh;
}

void dt_linkload_stop(dt_linkload *ll, double t_s)
{
  if (ll && t_s < ll->stop)
    ll->stop = t_s;
}

/* The one rule for a run that stopped (dt_linkload_stop): a transfer counts the part of it before the stop, its
 * interval [start, min(end, stop)) and its bytes in proportion (its mean rate over its interval); one that starts
 * at or after the stop counts nothing (returns 0). Every interval then ends by the stop, so no direction is busy
 * longer than the run. A run that completes has no stop: nothing changes, to the bit. */
static int cut_at_stop(dt_linkload *ll, double *bytes, double start_s, double *end_s)
{
  if (*end_s > ll->stop) {
    if (!(start_s < ll->stop))
      return 0;
    *bytes *= (ll->stop - start_s) / (*end_s - start_s);
    *end_s = ll->stop;
    if (!(*bytes > 0))
      return 0;
  }
  if (*end_s > ll->last_end)
    ll->last_end = *end_s;
  return 1;
}

void dt_linkload_add(dt_linkload *ll, int32_t src_gpu, int32_t dst_gpu, double bytes, double start_s, double end_s,
                     dt_op_kind kind, int32_t group)
{
  if (!ll || !(bytes > 0) || src_gpu < 0 || dst_gpu < 0 || !cut_at_stop(ll, &bytes, start_s, &end_s))
    return;
  uint32_t buf[DT_ROUTE_MAX_HOPS];
  const uint32_t *route;
  int nh = route_of(ll, src_gpu, dst_gpu, buf, &route);
  if (nh < 0)
    return;
  if (ll->observer)
    ll->observer(ll->obs_data, src_gpu, dst_gpu, bytes, start_s, end_s);
  if (start_s < ll->folded)
    start_s = ll->folded;
  if (end_s < start_s)
    end_s = start_s;
  if ((unsigned)kind >= DT_OP_COUNT)
    kind = DT_OP_OTHER;
  ll->transfers++;
  for (int h = 0; h < nh; h++)
    if (ll->owner[route[h]] != OWN_MANY)
      own_many(ll, route[h]);
  uint32_t flags = (uint32_t)kind | (end_s > start_s ? REC_TIMED : 0);
  log_reserve(ll, REC_HEAD + (size_t)nh);
  uint32_t *r = ll->last_rec != SIZE_MAX ? &ll->log[ll->last_rec] : NULL;
  double rs = 0, re = 0, rb = 0;
  if (r) {
    rec_get(r, &rs, &re);
    memcpy(&rb, r + 4, sizeof rb);
  }
  if (r && rs == start_s && re == end_s && rb == bytes && (int32_t)r[6] == group && r[7] == flags) {
    memcpy(&ll->log[ll->log_n], route, sizeof *route * (size_t)nh); /* the record is the log's last: extend it */
    r[8] += (uint32_t)nh;
    ll->log_n += (size_t)nh;
  } else {
    ll->last_rec = ll->log_n;
    r = &ll->log[ll->log_n];
    memcpy(r, &start_s, sizeof start_s);
    memcpy(r + 2, &end_s, sizeof end_s);
    memcpy(r + 4, &bytes, sizeof bytes);
    r[6] = (uint32_t)group;
    r[7] = flags;
    r[8] = (uint32_t)nh;
    memcpy(r + REC_HEAD, route, sizeof *route * (size_t)nh);
    ll->log_n += REC_HEAD + (size_t)nh;
  }
  if (flags & REC_TIMED)
    ll->pending += (size_t)nh;
  else
    ll->zhops += (size_t)nh;
  int32_t job = ll->jbytes ? ll->job_of_gpu[src_gpu] : -1;
  if (job >= 0 && job < ll->njobs)
    for (int h = 0; h < nh; h++)
      ll->jbytes[route[h] * (size_t)ll->njobs + (size_t)job] += bytes;
  fold_if_full(ll);
}

/* The set of key, or of a free slot for it, in the flow sets' table. */
static size_t set_slot(const dt_linkload *ll, uint64_t key)
{
  size_t h = dt_mix64(key) & (ll->set_tab_cap - 1);
  while (ll->set_tab[h].set1 && ll->set_tab[h].key != key)
    h = (h + 1) & (ll->set_tab_cap - 1);
  return h;
}

int32_t dt_linkload_set_find(const dt_linkload *ll, uint64_t key)
{
  if (!ll || !ll->set_tab_cap)
    return -1;
  uint32_t i = ll->set_tab[set_slot(ll, key)].set1;
  if (!i || ll->sets[i - 1].gen != ll->route_gen)
    return -1;
  return (int32_t)(i - 1);
}

int32_t dt_linkload_set_new(dt_linkload *ll, uint64_t key, size_t nflows, const int32_t *src_gpu,
                            const int32_t *dst_gpu)
{
  if (!ll || ll->nsets >= INT32_MAX)
    return -1;
  if (ll->nsets == ll->sets_cap) {
    ll->sets_cap = ll->sets_cap ? 2 * ll->sets_cap : 64;
    ll->sets = dt_xrealloc(ll->sets, sizeof *ll->sets * ll->sets_cap);
  }
  if ((ll->nsets + 1) * 2 > ll->set_tab_cap) { /* at most half full */
    size_t ocap = ll->set_tab_cap;
    struct ll_setslot *old = ll->set_tab;
    ll->set_tab_cap = ocap ? 2 * ocap : 128;
    ll->set_tab = dt_xcalloc(ll->set_tab_cap, sizeof *ll->set_tab);
    for (size_t h = 0; h < ocap; h++)
      if (old[h].set1)
        ll->set_tab[set_slot(ll, old[h].key)] = old[h];
    free(old);
  }
  ll_set *S = &ll->sets[ll->nsets];
  S->key = key;
  S->gen = ll->route_gen;
  S->nflows = 0;
  S->first = dt_xmalloc(sizeof *S->first * (nflows + 1));
  S->src = dt_xmalloc(sizeof *S->src * (nflows + 1));
  S->dst = dt_xmalloc(sizeof *S->dst * (nflows + 1));
  size_t cap = 4 * nflows + 4, nd = 0;
  S->dirs = dt_xmalloc(sizeof *S->dirs * cap);
  for (size_t f = 0; f < nflows; f++) {
    uint32_t buf[DT_ROUTE_MAX_HOPS];
    const uint32_t *route;
    int nh = src_gpu[f] < 0 || dst_gpu[f] < 0 ? -1 : route_of(ll, src_gpu[f], dst_gpu[f], buf, &route);
    if (nh < 0) /* no route: as dt_linkload_add, nothing recorded */
      continue;
    if (nd + (size_t)nh > cap) {
      cap = 2 * (nd + (size_t)nh);
      S->dirs = dt_xrealloc(S->dirs, sizeof *S->dirs * cap);
    }
    memcpy(S->dirs + nd, route, sizeof *route * (size_t)nh);
    S->first[S->nflows] = (uint32_t)nd;
    S->src[S->nflows] = src_gpu[f];
    S->dst[S->nflows++] = dst_gpu[f];
    nd += (size_t)nh;
  }
  S->first[S->nflows] = (uint32_t)nd;
  S->ndirs = (uint32_t)nd;
  S->claimed = 0;
  S->twin = twin_for(ll, S->dirs, S->ndirs);
  ll->set_tab[set_slot(ll, key)] = (struct ll_setslot){key, (uint32_t)(ll->nsets + 1)}; /* the newest of the key */
  return (int32_t)ll->nsets++;
}

/* Appends the 8-word record of one flow set's transfer [s, e) of bytes (a whole set in one record, REC_SET) and
 * counts its flows as transfers; the caller counts its crossings. */
static inline void log_set_record(dt_linkload *ll, const ll_set *S, int32_t set, double s, double e, double bytes,
                                  int32_t group, uint32_t flags)
{
  log_reserve(ll, 8);
  uint32_t *r = &ll->log[ll->log_n];
  memcpy(r, &s, sizeof s);
  memcpy(r + 2, &e, sizeof e);
  memcpy(r + 4, &bytes, sizeof bytes);
  r[6] = (uint32_t)group;
  r[7] = flags | REC_SET | (uint32_t)set << REC_SET_SHIFT;
  ll->log_n += 8;
  ll->last_rec = SIZE_MAX;
  ll->transfers += S->nflows;
}

/* A record of set S (its twin alive) that the flows added one by one would fold inside of: logged whole, with the
 * folds (their watermark, the counts and the limit) those flows would make, one after the flow that passes the
 * limit, as the loop of dt_linkload_add_set makes them. The same figures, as long as no fold moves its start
 * (the flows after a fold would start at its watermark): then 0, nothing done. Its directions get the record's
 * bytes at the first fold instead of some at the next, in the same order among their records (nothing is logged in
 * between), and its interval, starting at or after that fold's watermark, counts in the later folds only, where
 * the flows' would. */
static int twin_split(dt_linkload *ll, const ll_set *S, int32_t set, double bytes, double start_s, double end_s,
                      dt_op_kind kind, int32_t group)
{
  double w = ll->watermark ? ll->watermark(ll->wm_data) : -INFINITY;
  if (w > ll->folded && start_s < w)
    return 0;
  double s = start_s < ll->folded ? ll->folded : start_s, e = end_s < s ? s : end_s;
  int timed = e > s;
  uint32_t flags = (uint32_t)kind | (timed ? REC_TIMED : 0);
  log_set_record(ll, S, set, s, e, bytes, group, flags);
  ll->shared++;
  size_t *count = timed ? &ll->pending : &ll->zhops;
  uint32_t rest = S->ndirs; /* crossings of the flows after the current one: in the log, not counted yet */
  for (uint32_t f0 = 0; f0 < S->nflows;) {
    uint32_t f1 = S->nflows;
    if (*count + (S->ndirs - S->first[f0]) > ll->limit) {
      f1 = f0 + 1;
      while (*count + (S->first[f1] - S->first[f0]) <= ll->limit)
        f1++;
    }
    uint32_t nh = S->first[f1] - S->first[f0];
    *count += nh;
    rest -= nh;
    /* fold_if_full: a fold keeps the record (timed, it ends after the watermark), counting all of its crossings */
    if (ll->zhops > ll->limit) {
      fold_log(ll, -INFINITY, 0);
      if (timed)
        ll->pending -= rest;
    }
    if (ll->pending > ll->limit) {
      if (ll->watermark && w > ll->folded) {
        fold_log(ll, w, 1);
        if (timed)
          ll->pending -= rest;
      }
      if (ll->pending > ll->limit / 2)
        ll->limit *= 2;
    }
    f0 = f1;
  }
  return 1;
}

uint64_t dt_linkload_shared(const dt_linkload *ll)
{
  return ll ? ll->shared : 0;
}

void dt_linkload_add_set(dt_linkload *ll, int32_t set, double bytes, double start_s, double end_s,
                         dt_op_kind kind, int32_t group)
{
  if (!ll || !(bytes > 0) || set < 0 || (size_t)set >= ll->nsets || !cut_at_stop(ll, &bytes, start_s, &end_s))
    return;
  ll_set *S = &ll->sets[set];
  if (ll->observer)
    for (uint32_t f = 0; f < S->nflows; f++)
      ll->observer(ll->obs_data, S->src[f], S->dst[f], bytes, start_s, end_s);
  if ((unsigned)kind >= DT_OP_COUNT)
    kind = DT_OP_OTHER;
  int twin = S->twin >= 0 && ll->twins[S->twin].alive;
  if (!twin && !S->claimed)
    set_claim(ll, S);
  double s = start_s < ll->folded ? ll->folded : start_s, e = end_s < s ? s : end_s;
  uint32_t flags = (uint32_t)kind | (e > s ? REC_TIMED : 0);
  size_t *count = flags & REC_TIMED ? &ll->pending : &ll->zhops;
  if (twin && *count + S->ndirs > ll->limit) {
    if (twin_split(ll, S, set, bytes, start_s, end_s, kind, group))
      return;
    twin_dissolve(ll, (uint32_t)S->twin); /* its start would move: as the flows would go, on their own */
    twin = 0;
  }
  if (S->nflows > 0 && (uint32_t)set < REC_MAX_SETS && !ll->jbytes && *count + S->ndirs <= ll->limit) {
    /* the usual case, as the loop below would do it: the whole set in one record, no fold */
    log_set_record(ll, S, set, s, e, bytes, group, flags);
    ll->shared += (uint64_t)twin;
    *count += S->ndirs;
    return;
  }
  /* the same records, counts and folds as S->nflows calls of dt_linkload_add in flow order: the flows up to the
     one after which that would fold go in one record, then the fold, then the rest */
  for (uint32_t f0 = 0; f0 < S->nflows;) {
    double s = start_s < ll->folded ? ll->folded : start_s, e = end_s < s ? s : end_s;
    uint32_t flags = (uint32_t)kind | (e > s ? REC_TIMED : 0);
    size_t *count = flags & REC_TIMED ? &ll->pending : &ll->zhops;
    uint32_t f1 = S->nflows;
    if (*count + (f0 ? S->ndirs - S->first[f0] : S->ndirs) > ll->limit) { /* it folds after flow f1 - 1 */
      f1 = f0 + 1;
      while (*count + (S->first[f1] - S->first[f0]) <= ll->limit)
        f1++;
    }
    int whole = f0 == 0 && f1 == S->nflows;
    uint32_t nh = whole ? S->ndirs : S->first[f1] - S->first[f0];
    int named = (uint32_t)set < REC_MAX_SETS;
    log_reserve(ll, named ? 10 : REC_HEAD + (size_t)nh);
    uint32_t *r = &ll->log[ll->log_n];
    memcpy(r, &s, sizeof s);
    memcpy(r + 2, &e, sizeof e);
    memcpy(r + 4, &bytes, sizeof bytes);
    r[6] = (uint32_t)group;
    if (!named) { /* past what a record can name: the directions themselves, as dt_linkload_add logs them */
      r[7] = flags;
      r[8] = nh;
      memcpy(r + REC_HEAD, S->dirs + S->first[f0], sizeof *r * nh);
    } else if (whole) {
      r[7] = flags | REC_SET | (uint32_t)set << REC_SET_SHIFT;
    } else {
      r[7] = flags | REC_SET | REC_PART | (uint32_t)set << REC_SET_SHIFT;
      r[8] = nh;
      r[9] = S->first[f0];
    }
    ll->log_n += REC_WORDS(r);
    ll->last_rec = SIZE_MAX; /* a set's record is not extended */
    ll->transfers += f1 - f0;
    *count += nh;
    if (ll->jbytes)
      for (uint32_t f = f0; f < f1; f++) {
        int32_t job = ll->job_of_gpu[S->src[f]];
        if (job >= 0 && job < ll->njobs)
          for (uint32_t h = S->first[f]; h < S->first[f + 1]; h++)
            ll->jbytes[S->dirs[h] * (size_t)ll->njobs + (size_t)job] += bytes;
      }
    fold_if_full(ll);
    f0 = f1;
  }
}

static int cmp_link(const void *a, const void *b)
{
  const dt_link_load *x = a, *y = b;
  if (x->busy_s != y->busy_s)
    return (x->busy_s < y->busy_s) - (x->busy_s > y->busy_s);
  double tx = x->bandwidth > 0 ? x->bytes / x->bandwidth : 0, ty = y->bandwidth > 0 ? y->bytes / y->bandwidth : 0;
  if (tx != ty) /* the time its bytes need at full rate: a slower link with the same traffic first */
    return (tx < ty) - (tx > ty);
  if (x->link != y->link)
    return (x->link > y->link) - (x->link < y->link);
  return (x->dir > y->dir) - (x->dir < y->dir);
}

static int cmp_group(const void *a, const void *b)
{
  const dt_group_bytes *x = a, *y = b;
  if (x->bytes != y->bytes)
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
  return (x->group > y->group) - (x->group < y->group);
}

dt_linkstats *dt_linkload_finish(dt_linkload *ll)
{
  dt_linkstats *s = dt_xcalloc(1, sizeof *s);
  fold_log(ll, INFINITY, 1);
  for (size_t t = 0; t < ll->ntwins; t++) /* the twins' figures to their directions */
    if (ll->twins[t].alive)
      twin_dissolve(ll, (uint32_t)t);
  for (size_t k = 0; k < ll->ndirs; k++) /* the open runs */
    run_close(ll, k);
  s->transfers = ll->transfers;
  s->end_s = ll->last_end;
  size_t used = 0;
  size_t *index = dt_xmalloc(sizeof *index * (ll->ndirs + 1)); /* direction -> position in s->links */
  for (size_t k = 0; k < ll->ndirs; k++) {
    dt_link_class c = dt_topology_link_class(ll->topo, k / 2);
    if (c < DT_LC_COUNT)
      s->classes[c].links++;
    index[k] = SIZE_MAX;
    if (ll->dirs[k].bytes > 0)
      index[k] = used++;
  }
  s->nlinks = used;
  s->links = dt_xcalloc(used + 1, sizeof *s->links);
  for (size_t k = 0; k < ll->ndirs; k++) {
    if (index[k] == SIZE_MAX)
      continue;
    const ll_dir *d = &ll->dirs[k];
    const ll_cold *c = &ll->cold[k];
    dt_link_load *L = &s->links[index[k]];
    char name[128];
    L->link = (uint32_t)(k / 2);
    L->dir = (uint8_t)(k % 2);
    L->cls = dt_topology_link_class(ll->topo, k / 2);
    dt_topology_link_name(ll->topo, k / 2, name, sizeof name - 8);
    strcat(name, L->dir ? " down" : " up");
    L->name = dt_xstrdup(name);
    L->bandwidth = dt_topology_link(ll->topo, k / 2)->bandwidth;
    L->bytes = d->bytes;
    L->busy_s = c->busy;
    L->peak_flows = c->peak;
    L->transfers = (uint64_t)c->wraps << 32 | d->transfers;
    memcpy(L->by_dim, c->by_dim, sizeof L->by_dim);
    memcpy(L->by_kind, c->by_kind, sizeof L->by_kind);
    dt_class_load *C = &s->classes[L->cls];
    C->used++;
    C->bytes += L->bytes;
    C->busy_sum_s += L->busy_s;
    if (L->busy_s > C->busy_max_s)
      C->busy_max_s = L->busy_s;
    if (L->peak_flows > C->peak_flows)
      C->peak_flows = L->peak_flows;
    C->transfers += L->transfers;
    for (int i = 0; i < DT_DIM_COUNT; i++)
      C->by_dim[i] += L->by_dim[i];
    for (int i = 0; i < DT_OP_COUNT; i++)
      C->by_kind[i] += L->by_kind[i];
    if (ll->jbytes) {
      const double *jb = &ll->jbytes[k * (size_t)ll->njobs];
      int users = 0;
      for (int32_t j = 0; j < ll->njobs; j++) {
        C->by_job[j] += jb[j];
        users += jb[j] > 0;
      }
      if (users >= 2) {
        C->shared++;
        for (int32_t j = 0; j < ll->njobs; j++)
          C->shared_by_job[j] += jb[j];
      }
    }
  }
  s->njobs = ll->njobs;
  /* groups: count per direction, then fill */
  for (size_t h = 0; h < ll->gcap; h++) /* (the stand-ins' entries were copied to their directions) */
    if (ll->gslots[h].key && (ll->gslots[h].key >> 32) <= ll->ndirs)
      s->links[index[(ll->gslots[h].key >> 32) - 1]].ngroups++;
  for (size_t k = 0; k < used; k++)
    s->links[k].groups = dt_xmalloc(sizeof *s->links[k].groups * (s->links[k].ngroups + 1));
  size_t *fill = dt_xcalloc(used + 1, sizeof *fill);
  for (size_t h = 0; h < ll->gcap; h++)
    if (ll->gslots[h].key && (ll->gslots[h].key >> 32) <= ll->ndirs) {
      size_t li = index[(ll->gslots[h].key >> 32) - 1];
      s->links[li].groups[fill[li]++] =
          (dt_group_bytes){(int32_t)(uint32_t)(ll->gslots[h].key & 0xffffffffu) - 1, ll->gslots[h].bytes};
    }
  free(fill);
  for (size_t k = 0; k < used; k++)
    qsort(s->links[k].groups, s->links[k].ngroups, sizeof *s->links[k].groups, cmp_group);
  qsort(s->links, used, sizeof *s->links, cmp_link);
  free(index);
  free(ll->log);
  free(ll->touched);
  free(ll->offset);
  free(ll->sorted);
  free(ll->dirs_mem);
  free(ll->cold);
  free(ll->gslots);
  free(ll->jbytes);
  free(ll->routes_mem);
  free(ll->keep);
  for (size_t k = 0; k < ll->nsets; k++) {
    free(ll->sets[k].first);
    free(ll->sets[k].dirs);
    free(ll->sets[k].src);
    free(ll->sets[k].dst);
  }
  free(ll->sets);
  free(ll->set_tab);
  for (size_t t = 0; t < ll->ntwins; t++) {
    free(ll->twins[t].dirs);
    free(ll->twins[t].groups);
  }
  free(ll->twins);
  free(ll->owner);
  free(ll);
  return s;
}

void dt_linkstats_free(dt_linkstats *s)
{
  if (!s)
    return;
  for (size_t k = 0; k < s->nlinks; k++) {
    free(s->links[k].name);
    free(s->links[k].groups);
  }
  free(s->links);
  free(s);
}
