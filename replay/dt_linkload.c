/* Per-link accounting: transfers mapped onto their routes' links, per link direction bytes, labels, busy time
 * and peak concurrency, computed by sweeping the transfers' intervals once they are below a watermark. */
#include "dt_linkload.h"

#include "../common/dt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first fold happens when this many intervals wait; the limit doubles when a fold frees too little. */
#define FIRST_FOLD_LIMIT 65536

typedef struct ll_dir {
  double bytes, busy;
  uint32_t peak;
  uint64_t transfers;
  double by_dim[DT_DIM_COUNT];
  double by_kind[DT_OP_COUNT];
  double (*iv)[2]; /* intervals not folded yet, [start, end) */
  size_t n, cap;
  uint64_t last_key; /* the (direction, group) slot this direction added to last, valid while gen is the table's */
  size_t last_slot, last_gen;
} ll_dir;

/* (direction, group) -> bytes, open addressing; key = (direction index + 1) * 2^32 + (group + 1), 0 = empty. */
typedef struct ll_gslot {
  uint64_t key;
  double bytes;
} ll_gslot;

/* A route looked up before: its directions (2 link + dir), for the same GPU pair's next transfer. */
#define ROUTE_CACHE 4096
typedef struct ll_route {
  int32_t src, dst; /* src -1: empty */
  int nh;
  uint32_t dir[DT_ROUTE_MAX_HOPS];
} ll_route;

struct dt_linkload {
  const dt_topology *topo;
  const dt_trace *t;
  size_t ndirs;         /* 2 per link */
  ll_dir *dirs;
  dt_dim p2p_dim;
  ll_gslot *gslots;
  size_t gcap, gn;
  size_t ggen;          /* + 1 at every rehash of gslots: the directions' last slots are stale */
  size_t pending, limit;
  double folded;        /* watermark of the last fold */
  double (*watermark)(void *);
  void *wm_data;
  uint64_t transfers;
  double *scratch;      /* sweep buffers */
  size_t scratch_cap;
  size_t radix[8][256]; /* sort_times' digit counts */
  ll_route *routes;     /* [ROUTE_CACHE], direct-mapped by GPU pair */
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
  ll->dirs = dt_xcalloc(ll->ndirs + 1, sizeof *ll->dirs);
  ll->p2p_dim = dt_trace_p2p_dim(t);
  ll->gcap = 1024;
  ll->gslots = dt_xcalloc(ll->gcap, sizeof *ll->gslots);
  ll->limit = FIRST_FOLD_LIMIT;
  ll->folded = -INFINITY;
  ll->routes = dt_xmalloc(sizeof *ll->routes * ROUTE_CACHE);
  for (size_t k = 0; k < ROUTE_CACHE; k++)
    ll->routes[k] = (ll_route){-1, -1, 0, {0}};
  return ll;
}

void dt_linkload_set_watermark(dt_linkload *ll, double (*fn)(void *data), void *data)
{
  ll->watermark = fn;
  ll->wm_data = data;
}

void dt_linkload_set_jobs(dt_linkload *ll, const int32_t *job_of_gpu, int32_t njobs)
{
  if (njobs > DT_LINK_MAX_JOBS)
    njobs = DT_LINK_MAX_JOBS;
  free(ll->jbytes);
  ll->jbytes = NULL;
  ll->job_of_gpu = njobs > 0 ? job_of_gpu : NULL;
  ll->njobs = njobs > 0 ? njobs : 0;
  if (ll->job_of_gpu)
    ll->jbytes = dt_xcalloc(ll->ndirs * (size_t)njobs + 1, sizeof *ll->jbytes);
}

static void gadd(dt_linkload *ll, ll_dir *d, uint64_t key, double bytes)
{
  /* a direction's transfers come in runs of one group (a ring's steps, a layer's all-reduces) */
  if (d->last_key == key && d->last_gen == ll->ggen) {
    ll->gslots[d->last_slot].bytes += bytes;
    return;
  }
  if ((ll->gn + 1) * 2 > ll->gcap) {
    ll->ggen++;
    size_t ocap = ll->gcap;
    ll_gslot *old = ll->gslots;
    ll->gcap *= 2;
    ll->gslots = dt_xcalloc(ll->gcap, sizeof *ll->gslots);
    for (size_t i = 0; i < ocap; i++)
      if (old[i].key) {
        size_t h = dt_mix64(old[i].key) & (ll->gcap - 1);
        while (ll->gslots[h].key)
          h = (h + 1) & (ll->gcap - 1);
        ll->gslots[h] = old[i];
      }
    free(old);
  }
  size_t h = dt_mix64(key) & (ll->gcap - 1);
  while (ll->gslots[h].key && ll->gslots[h].key != key)
    h = (h + 1) & (ll->gcap - 1);
  if (!ll->gslots[h].key) {
    ll->gslots[h].key = key;
    ll->gn++;
  }
  ll->gslots[h].bytes += bytes;
  d->last_key = key;
  d->last_slot = h;
  d->last_gen = ll->ggen;
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
  memset(ll->radix, 0, sizeof ll->radix);
  for (size_t k = 0; k < n; k++) {
    uint64_t u = order_key(a[k]);
    for (int b = 0; b < 8; b++)
      count[b][(u >> (8 * b)) & 0xff]++;
  }
  double *src = a, *dst = tmp;
  for (int b = 0; b < 8; b++) {
    size_t *c = count[b], sum = 0;
    if (c[(order_key(a[0]) >> (8 * b)) & 0xff] == n) /* every key has this byte */
      continue;
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

/* Sweeps one direction's intervals up to w: busy time and peak concurrency before w are final (no later
 * transfer starts before w); what is active at w stays, clipped to start at w. */
static void fold_dir(dt_linkload *ll, ll_dir *d, double w)
{
  size_t n = d->n;
  if (n == 0)
    return;
  /* the usual case: intervals recorded in order, each after the one before ended (a GPU port's ring steps):
   * their union is their sum and at most one is active at once */
  size_t k = 1;
  while (k < n && d->iv[k][0] >= d->iv[k - 1][1])
    k++;
  if (k == n) {
    size_t m = 0;
    for (k = 0; k < n; k++) {
      double s0 = d->iv[k][0], e0 = d->iv[k][1];
      if (s0 < w) {
        d->busy += (e0 < w ? e0 : w) - s0;
        if (d->peak < 1)
          d->peak = 1;
      }
      if (e0 > w) {
        d->iv[m][0] = s0 > w ? s0 : w;
        d->iv[m][1] = e0;
        m++;
      }
    }
    ll->pending -= n - m;
    d->n = m;
    return;
  }
  if (ll->scratch_cap < 3 * n) {
    ll->scratch_cap = 3 * n;
    free(ll->scratch);
    ll->scratch = dt_xmalloc(sizeof *ll->scratch * ll->scratch_cap);
  }
  double *S = ll->scratch, *E = ll->scratch + n;
  for (size_t k = 0; k < n; k++) {
    S[k] = d->iv[k][0];
    E[k] = d->iv[k][1];
  }
  sort_times(ll, S, ll->scratch + 2 * n, n);
  sort_times(ll, E, ll->scratch + 2 * n, n);
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
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    if (d->iv[k][1] > w) {
      d->iv[m][0] = d->iv[k][0] > w ? d->iv[k][0] : w;
      d->iv[m][1] = d->iv[k][1];
      m++;
    }
  ll->pending -= n - m;
  d->n = m;
}

static void fold_all(dt_linkload *ll, double w)
{
  if (!(w > ll->folded))
    return;
  for (size_t k = 0; k < ll->ndirs; k++)
    fold_dir(ll, &ll->dirs[k], w);
  ll->folded = w;
}

void dt_linkload_forget_routes(dt_linkload *ll)
{
  if (!ll)
    return;
  for (size_t k = 0; k < ROUTE_CACHE; k++)
    ll->routes[k] = (ll_route){-1, -1, 0, {0}};
}

void dt_linkload_add(dt_linkload *ll, int32_t src_gpu, int32_t dst_gpu, double bytes, double start_s, double end_s,
                     dt_op_kind kind, int32_t group)
{
  if (!ll || !(bytes > 0) || src_gpu < 0 || dst_gpu < 0)
    return;
  ll_route *rt = &ll->routes[dt_mix64((uint64_t)src_gpu << 32 | (uint32_t)dst_gpu) & (ROUTE_CACHE - 1)];
  if (rt->src != src_gpu || rt->dst != dst_gpu) {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    int nh = dt_topology_route(ll->topo, src_gpu, dst_gpu, hops, NULL, NULL);
    if (nh < 0)
      return;
    rt->src = src_gpu;
    rt->dst = dst_gpu;
    rt->nh = nh;
    for (int h = 0; h < nh; h++)
      rt->dir[h] = 2 * hops[h].link + hops[h].dir;
  }
  int nh = rt->nh;
  if (start_s < ll->folded)
    start_s = ll->folded;
  if (end_s < start_s)
    end_s = start_s;
  if ((unsigned)kind >= DT_OP_COUNT)
    kind = DT_OP_OTHER;
  dt_dim dim = group >= 0 && (size_t)group < ll->t->ngroups ? ll->t->groups[group].dim : ll->p2p_dim;
  ll->transfers++;
  int32_t job = ll->jbytes ? ll->job_of_gpu[src_gpu] : -1;
  if (job >= ll->njobs)
    job = -1;
  for (int h = 0; h < nh; h++) {
    size_t di = rt->dir[h];
    ll_dir *d = &ll->dirs[di];
    d->bytes += bytes;
    d->transfers++;
    d->by_dim[dim] += bytes;
    d->by_kind[kind] += bytes;
    gadd(ll, d, (uint64_t)(di + 1) << 32 | (uint32_t)(group + 1), bytes);
    if (job >= 0)
      ll->jbytes[di * (size_t)ll->njobs + (size_t)job] += bytes;
    if (end_s > start_s) {
      if (d->n == d->cap)
        d->iv = dt_grow(d->iv, &d->cap, d->n, sizeof *d->iv);
      d->iv[d->n][0] = start_s;
      d->iv[d->n][1] = end_s;
      d->n++;
      ll->pending++;
    }
  }
  if (ll->pending > ll->limit) {
    if (ll->watermark)
      fold_all(ll, ll->watermark(ll->wm_data));
    if (ll->pending > ll->limit / 2)
      ll->limit *= 2;
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
  fold_all(ll, INFINITY);
  s->transfers = ll->transfers;
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
    L->busy_s = d->busy;
    L->peak_flows = d->peak;
    L->transfers = d->transfers;
    memcpy(L->by_dim, d->by_dim, sizeof L->by_dim);
    memcpy(L->by_kind, d->by_kind, sizeof L->by_kind);
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
  for (size_t h = 0; h < ll->gcap; h++)
    if (ll->gslots[h].key)
      s->links[index[(ll->gslots[h].key >> 32) - 1]].ngroups++;
  for (size_t k = 0; k < used; k++)
    s->links[k].groups = dt_xmalloc(sizeof *s->links[k].groups * (s->links[k].ngroups + 1));
  size_t *fill = dt_xcalloc(used + 1, sizeof *fill);
  for (size_t h = 0; h < ll->gcap; h++)
    if (ll->gslots[h].key) {
      size_t li = index[(ll->gslots[h].key >> 32) - 1];
      s->links[li].groups[fill[li]++] =
          (dt_group_bytes){(int32_t)(uint32_t)(ll->gslots[h].key & 0xffffffffu) - 1, ll->gslots[h].bytes};
    }
  free(fill);
  for (size_t k = 0; k < used; k++)
    qsort(s->links[k].groups, s->links[k].ngroups, sizeof *s->links[k].groups, cmp_group);
  qsort(s->links, used, sizeof *s->links, cmp_link);
  free(index);
  for (size_t k = 0; k < ll->ndirs; k++)
    free(ll->dirs[k].iv);
  free(ll->dirs);
  free(ll->gslots);
  free(ll->jbytes);
  free(ll->scratch);
  free(ll->routes);
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
