/* Chrome trace event timeline, streamed through yajl to a file. Times are microseconds (the format's unit). */
#include "dt_timeline.h"

#include "../common/dt_json.h"
#include "../common/dt_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/log.h>
#include <yajl/yajl_gen.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_timeline, dtsim, "timeline: the Chrome trace event file written");

struct dt_timeline {
  FILE *f;
  char *path;
  const dt_trace *t;
  uint8_t *want;      /* per rank */
  uint8_t *named;     /* per rank: process and thread names written */
  yajl_gen g;
  int failed;
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
  FILE *f = fopen(path, "w");
  if (!f) {
    dt_error_set(err, path, 0, 0, "cannot create the timeline file: %s", strerror(errno));
    return NULL;
  }
  dt_timeline *tl = dt_xcalloc(1, sizeof *tl);
  tl->f = f;
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
  if (fclose(tl->f) != 0)
    tl->failed = 1;
  if (tl->failed)
    rc = dt_error_set(err, tl->path, 0, 0, "cannot write the timeline file: %s", strerror(errno));
  else
    XBT_VERB("wrote the timeline %s", tl->path);
  yajl_gen_free(tl->g);
  free(tl->want);
  free(tl->named);
  free(tl->path);
  free(tl);
  return rc;
}
