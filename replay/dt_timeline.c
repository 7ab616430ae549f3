/* Chrome trace event timeline, streamed through yajl to a file. Times are microseconds (the format's unit). */
#include "dt_timeline.h"

#include "../common/dt_json.h"
#include "../common/dt_outfile.h"
#include "../common/dt_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/log.h>
#include <yajl/yajl_gen.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_timeline, dtsim, "timeline: the Chrome trace event file written");

_Static_assert(DT_TIMELINE_COUNTER_LINKS <= 8, "a route's shown directions are one byte of flags");

struct dt_timeline {
  dt_outfile *out; /* written to a temporary name, renamed when closed */
  FILE *f;
  char *path;
  const dt_trace *t;
  uint8_t *want;      /* per rank */
  uint8_t *named;     /* per rank: process and thread names written */
  yajl_gen g;
  int failed;
  struct tl_xfer {
    uint32_t route;    /* in routes */
    double bytes, t0, t1;
  } *xf;               /* transfers for the fabric's counters */
  size_t nxf, xf_cap;
  uint64_t xf_dropped;
  const dt_topology *topo; /* routes the transfers when they are recorded (dt_timeline_set_topology) */
  /* the routes the transfers took, each once: route r's directions (2 link + dir) are dirs[off[r] .. off[r + 1]) */
  uint32_t *dirs, *off;
  size_t ndirs, dirs_cap, nroutes, off_cap;
  uint32_t *rhash;     /* open addressing by content: route + 1, 0 empty */
  size_t rhash_cap;
};

static void flush(dt_timeline *tl)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf(tl->g, &buf, &len);
  if (len && fwrite(buf, 1, len, tl->f) != len)
    tl->failed = 1;
  yajl_gen_clear(tl->g);
}

static void key(yajl_gen g, const char *k)
{
  yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void num(yajl_gen g, double v)
{
  char b[64];
  snprintf(b, sizeof b, "%.17g", isfinite(v) ? v : 0);
  yajl_gen_number(g, b, strlen(b));
}

static void inum(yajl_gen g, long long v)
{
  char b[32];
  snprintf(b, sizeof b, "%lld", v);
  yajl_gen_number(g, b, strlen(b));
}

dt_timeline *dt_timeline_open(const char *path, const dt_trace *t, const int32_t *ranks, size_t nranks_sel,
                              dt_error *err)
{
  dt_outfile *out = dt_outfile_open(path, err);
  if (!out) {
    dt_error_set(err, path, 0, 0, "cannot create the timeline file: %s", strerror(errno));
    return NULL;
  }
  dt_timeline *tl = dt_xcalloc(1, sizeof *tl);
  tl->out = out;
  tl->f = dt_outfile_stream(out);
  tl->path = dt_xstrdup(path);
  tl->t = t;
  size_t n = t->nranks > 0 ? (size_t)t->nranks : 1;
  tl->want = dt_xcalloc(n, 1);
  tl->named = dt_xcalloc(n, 1);
  for (size_t i = 0; i < (ranks ? nranks_sel : (size_t)t->nranks); i++) {
    int32_t r = ranks ? ranks[i] : (int32_t)i;
    if (r >= 0 && r < t->nranks)
      tl->want[r] = 1;
  }
  tl->g = yajl_gen_alloc(NULL);
  yajl_gen_map_open(tl->g);
  key(tl->g, "displayTimeUnit");
  dt_json_string(tl->g, "ns");
  key(tl->g, "otherData");
  yajl_gen_map_open(tl->g);
  key(tl->g, "generator");
  dt_json_string(tl->g, "dtsim " DTSIM_VERSION);
  key(tl->g, "time_unit");
  dt_json_string(tl->g, "ts and dur in microseconds of simulated time");
  yajl_gen_map_close(tl->g);
  key(tl->g, "traceEvents");
  yajl_gen_array_open(tl->g);
  return tl;
}

int dt_timeline_wants(const dt_timeline *tl, int32_t rank)
{
  return tl && rank >= 0 && rank < tl->t->nranks && tl->want[rank];
}

/* metadata event: process or thread name */
static void meta(dt_timeline *tl, const char *what, int32_t pid, int32_t tid, const char *name)
{
  yajl_gen g = tl->g;
  yajl_gen_map_open(g);
  key(g, "ph");
  dt_json_string(g, "M");
  key(g, "name");
  dt_json_string(g, what);
  key(g, "pid");
  inum(g, pid);
  key(g, "tid");
  inum(g, tid);
  key(g, "args");
  yajl_gen_map_open(g);
  key(g, "name");
  dt_json_string(g, name);
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

void dt_timeline_op(dt_timeline *tl, int32_t rank, int32_t stream, size_t index, const dt_op *op, int32_t g_,
                    double issue, double end, const char *algo, const char *proto)
{
  if (!dt_timeline_wants(tl, rank))
    return;
  yajl_gen g = tl->g;
  char name[64];
  if (!tl->named[rank]) {
    tl->named[rank] = 1;
    snprintf(name, sizeof name, "rank %d", (int)rank);
    meta(tl, "process_name", rank, 0, name);
    const dt_rank *body = dt_trace_rank_body(tl->t, rank);
    for (size_t s = 0; s < body->nstreams; s++) {
      snprintf(name, sizeof name, "s%d", (int)body->streams[s].id);
      meta(tl, "thread_name", rank, body->streams[s].id, name);
    }
  }
  const dt_trace *t = tl->t;
  yajl_gen_map_open(g);
  key(g, "ph");
  dt_json_string(g, "X");
  key(g, "name");
  dt_json_string(g, op->name && op->kind == DT_OP_COMPUTE ? op->name : dt_op_kind_name(op->kind));
  key(g, "cat");
  dt_json_string(g, op->kind == DT_OP_COMPUTE ? "compute" : op->kind == DT_OP_DELAY ? "host"
                    : op->kind == DT_OP_MARK ? "mark" : "comm");
  key(g, "pid");
  inum(g, rank);
  key(g, "tid");
  inum(g, stream);
  key(g, "ts");
  num(g, issue * 1e6);
  key(g, "dur");
  num(g, (end - issue) * 1e6);
  key(g, "args");
  yajl_gen_map_open(g);
  key(g, "op");
  dt_json_string(g, dt_op_kind_name(op->kind));
  key(g, "index");
  inum(g, (long long)index);
  if (op->kind != DT_OP_COMPUTE && op->kind != DT_OP_DELAY && op->kind != DT_OP_MARK) {
    key(g, "bytes");
    inum(g, (long long)op->bytes);
    dt_dim d = g_ >= 0 ? t->groups[g_].dim : dt_trace_p2p_dim(t);
    key(g, "dim");
    dt_json_string(g, d == DT_DIM_NONE ? "none" : dt_dim_name(d));
  }
  if (g_ >= 0) {
    key(g, "group");
    dt_json_string(g, t->groups[g_].name);
  }
  if (op->kind == DT_OP_SEND || op->kind == DT_OP_RECV) {
    key(g, "peer");
    inum(g, dt_trace_op_peer(t, rank, op));
  }
  if (algo) {
    key(g, "algorithm");
    dt_json_string(g, algo);
  }
  if (proto) {
    key(g, "protocol");
    dt_json_string(g, proto);
  }
  if (op->name && op->kind != DT_OP_COMPUTE) {
    key(g, "name");
    dt_json_string(g, op->name);
  }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
  flush(tl);
}

void dt_timeline_set_topology(dt_timeline *tl, const dt_topology *topo)
{
  if (tl)
    tl->topo = topo;
}

static uint64_t route_hash(const uint32_t *d, int n)
{
  uint64_t h = (uint64_t)n;
  for (int k = 0; k < n; k++)
    h = dt_mix64(h ^ d[k]);
  return h;
}

/* The index of the route d[0..n) among those kept, added if new. */
static uint32_t route_id(dt_timeline *tl, const uint32_t *d, int n)
{
  if ((tl->nroutes + 1) * 2 > tl->rhash_cap) { /* grow and rehash */
    free(tl->rhash);
    tl->rhash_cap = tl->rhash_cap ? 2 * tl->rhash_cap : 1024;
    tl->rhash = dt_xcalloc(tl->rhash_cap, sizeof *tl->rhash);
    for (uint32_t r = 0; r < tl->nroutes; r++) {
      size_t h = route_hash(&tl->dirs[tl->off[r]], (int)(tl->off[r + 1] - tl->off[r])) & (tl->rhash_cap - 1);
      while (tl->rhash[h])
        h = (h + 1) & (tl->rhash_cap - 1);
      tl->rhash[h] = r + 1;
    }
  }
  size_t h = route_hash(d, n) & (tl->rhash_cap - 1);
  for (; tl->rhash[h]; h = (h + 1) & (tl->rhash_cap - 1)) {
    uint32_t r = tl->rhash[h] - 1;
    if (tl->off[r + 1] - tl->off[r] == (uint32_t)n && memcmp(&tl->dirs[tl->off[r]], d, sizeof *d * (size_t)n) == 0)
      return r;
  }
  tl->dirs = dt_grow(tl->dirs, &tl->dirs_cap, tl->ndirs + (size_t)n, sizeof *tl->dirs);
  memcpy(&tl->dirs[tl->ndirs], d, sizeof *d * (size_t)n);
  tl->ndirs += (size_t)n;
  tl->off = dt_grow(tl->off, &tl->off_cap, tl->nroutes + 2, sizeof *tl->off);
  tl->off[tl->nroutes + 1] = (uint32_t)tl->ndirs;
  tl->rhash[h] = (uint32_t)++tl->nroutes;
  return (uint32_t)(tl->nroutes - 1);
}

void dt_timeline_transfer(dt_timeline *tl, int32_t src_gpu, int32_t dst_gpu, double bytes, double start, double end)
{
  if (!tl || !tl->topo || !(end > start) || !(bytes > 0))
    return;
  if (tl->nxf == DT_TIMELINE_MAX_TRANSFERS) {
    tl->xf_dropped++;
    return;
  }
  /* the route as it is now: a link that fails later moves the transfers after it, not this one */
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  uint32_t d[DT_ROUTE_MAX_HOPS];
  int nh = dt_topology_route(tl->topo, src_gpu, dst_gpu, hops, NULL, NULL);
  if (nh < 0)
    return;
  for (int h = 0; h < nh; h++)
    d[h] = 2 * hops[h].link + hops[h].dir;
  if (!tl->off)
    tl->off = dt_xcalloc(tl->off_cap = 1024, sizeof *tl->off); /* off[0] = 0 */
  uint32_t r = route_id(tl, d, nh);
  tl->xf = dt_grow(tl->xf, &tl->xf_cap, tl->nxf, sizeof *tl->xf);
  tl->xf[tl->nxf++] = (struct tl_xfer){r, bytes, start, end};
}

void dt_timeline_observe(void *tl, int32_t src_gpu, int32_t dst_gpu, double bytes, double start, double end)
{
  dt_timeline_transfer(tl, src_gpu, dst_gpu, bytes, start, end);
}

/* A change of one counter: at time t, flows and rate (bytes/s) change by df and dr. */
typedef struct tl_delta {
  double t, dr;
  int df;
} tl_delta;

static int cmp_delta(const void *a, const void *b)
{
  const tl_delta *x = a, *y = b;
  return (x->t > y->t) - (x->t < y->t);
}

void dt_timeline_link_counters(dt_timeline *tl, const dt_linkstats *ls)
{
  if (!tl || !ls || ls->nlinks == 0)
    return;
  size_t nl = ls->nlinks < DT_TIMELINE_COUNTER_LINKS ? ls->nlinks : DT_TIMELINE_COUNTER_LINKS;
  tl_delta *d[DT_TIMELINE_COUNTER_LINKS] = {NULL};
  size_t nd[DT_TIMELINE_COUNTER_LINKS] = {0}, cap[DT_TIMELINE_COUNTER_LINKS] = {0};
  /* per route, the shown directions it crosses (bit k: ls->links[k]) */
  uint8_t *shown = dt_xcalloc(tl->nroutes + 1, 1);
  for (size_t r = 0; r < tl->nroutes; r++)
    for (uint32_t h = tl->off[r]; h < tl->off[r + 1]; h++)
      for (size_t k = 0; k < nl; k++)
        if (tl->dirs[h] == 2 * ls->links[k].link + ls->links[k].dir)
          shown[r] |= (uint8_t)(1u << k);
  for (size_t i = 0; i < tl->nxf; i++) {
    const struct tl_xfer *x = &tl->xf[i];
    double rate = x->bytes / (x->t1 - x->t0);
    for (size_t k = 0; k < nl; k++)
      if (shown[x->route] >> k & 1) {
        d[k] = dt_grow(d[k], &cap[k], nd[k] + 1, sizeof *d[k]);
        d[k][nd[k]++] = (tl_delta){x->t0, rate, 1};
        d[k][nd[k]++] = (tl_delta){x->t1, -rate, -1};
      }
  }
  free(shown);
  int32_t pid = tl->t->nranks;
  char name[96];
  snprintf(name, sizeof name, "fabric (busiest links)%s", tl->xf_dropped ? ", first 2097152 transfers" : "");
  meta(tl, "process_name", pid, 0, name);
  yajl_gen g = tl->g;
  for (size_t k = 0; k < nl; k++) {
    qsort(d[k], nd[k], sizeof *d[k], cmp_delta);
    long flows = 0;
    double r = 0;
    for (size_t j = 0; j < nd[k];) {
      double t = d[k][j].t;
      for (; j < nd[k] && d[k][j].t == t; j++) { /* every change at this instant, then one sample */
        flows += d[k][j].df;
        r += d[k][j].dr;
      }
      if (flows == 0)
        r = 0; /* no rounding residue once the link is idle */
      yajl_gen_map_open(g);
      key(g, "ph");
      dt_json_string(g, "C");
      key(g, "name");
      dt_json_string(g, ls->links[k].name);
      key(g, "pid");
      inum(g, pid);
      key(g, "ts");
      num(g, t * 1e6);
      key(g, "args");
      yajl_gen_map_open(g);
      key(g, "flows");
      inum(g, flows);
      key(g, "GBps");
      num(g, r / 1e9);
      yajl_gen_map_close(g);
      yajl_gen_map_close(g);
      flush(tl);
    }
    free(d[k]);
  }
  XBT_VERB("fabric counters: %zu link directions from %zu transfers", nl, tl->nxf);
}

void dt_timeline_outcome(dt_timeline *tl, double t_s, const char *what, const char *first)
{
  if (!tl)
    return;
  yajl_gen g = tl->g;
  yajl_gen_map_open(g);
  key(g, "ph");
  dt_json_string(g, "i");
  key(g, "s");
  dt_json_string(g, "g");
  key(g, "cat");
  dt_json_string(g, "outcome");
  key(g, "name");
  dt_json_string(g, what);
  key(g, "pid");
  inum(g, 0);
  key(g, "tid");
  inum(g, 0);
  key(g, "ts");
  num(g, t_s * 1e6);
  if (first) {
    key(g, "args");
    yajl_gen_map_open(g);
    key(g, "first_blocked");
    dt_json_string(g, first);
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
  flush(tl);
}

int dt_timeline_close(dt_timeline *tl, dt_error *err)
{
  if (!tl)
    return DT_OK;
  yajl_gen_array_close(tl->g);
  yajl_gen_map_close(tl->g);
  flush(tl);
  int rc = DT_OK;
  if (fputc('\n', tl->f) == EOF)
    tl->failed = 1;
  if (tl->failed) {
    int e = errno;
    dt_outfile_discard(tl->out);
    rc = dt_error_set(err, tl->path, 0, 0, "cannot write the timeline file: %s", strerror(e));
  } else if ((rc = dt_outfile_commit(tl->out, err)) == DT_OK)
    XBT_VERB("wrote the timeline %s", tl->path);
  yajl_gen_free(tl->g);
  free(tl->want);
  free(tl->named);
  free(tl->xf);
  free(tl->dirs);
  free(tl->off);
  free(tl->rhash);
  free(tl->path);
  free(tl);
  return rc;
}
