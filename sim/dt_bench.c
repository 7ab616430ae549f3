/* nccl-tests-style benchmarks on the replay (docs/bench.md): the size conventions and busbw factors of
 * nccl-tests' doc/PERFORMANCE.md, one trace holding every size and iteration in sequence, and the time of each
 * instance from the replay's per-instance records (dt_replay_opts.on_instance). */
#include "dt_bench.h"
#include "dt_fork.h"

#include "../common/dt_util.h"
#include "../replay/dt_stats.h"
#include "dt_explain.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLOAT_BYTES 4
/* nccl-tests aligns per-rank chunks down to 16 bytes: 4 floats */
#define CHUNK_ALIGN 4
#define MAX_SIZES 100000

static const dt_bench_op bench_ops[] = {
    {"all_reduce", DT_OP_ALLREDUCE, 0, "sum", -1},     {"all_gather", DT_OP_ALLGATHER, 1, "none", -1},
    {"reduce_scatter", DT_OP_REDUCESCATTER, 1, "sum", -1}, {"broadcast", DT_OP_BROADCAST, 0, "none", 0},
    {"reduce", DT_OP_REDUCE, 0, "sum", 0},             {"alltoall", DT_OP_ALLTOALL, 1, "none", -1},
    {"sendrecv", DT_OP_SEND, 0, "none", -1},
};
#define NOPS (sizeof bench_ops / sizeof bench_ops[0])

const dt_bench_op *dt_bench_op_find(const char *name)
{
  for (size_t i = 0; i < NOPS; i++)
    if (strcmp(name, bench_ops[i].name) == 0)
      return &bench_ops[i];
  return NULL;
}

const dt_bench_op *dt_bench_ops(size_t *n)
{
  *n = NOPS;
  return bench_ops;
}

void dt_bench_opts_init(dt_bench_opts *o)
{
  memset(o, 0, sizeof *o);
  o->gpus_per_process = 1;
  o->iters = 1;
  o->fidelity = DT_FIDELITY_FLOW;
  o->algo = DT_ALGO_AUTO;
  o->proto = -1;
}

void dt_bench_size(const dt_bench_op *op, int nranks, uint64_t size, dt_bench_row *row)
{
  memset(row, 0, sizeof *row);
  uint64_t n = nranks > 0 ? (uint64_t)nranks : 1, count = size / FLOAT_BYTES;
  if (!op->chunked) {
    row->count = count;
    row->size = count * FLOAT_BYTES;
    row->bytes = row->size;
    return;
  }
  uint64_t chunk = count / n / CHUNK_ALIGN * CHUNK_ALIGN; /* elements per rank chunk */
  row->count = chunk;
  row->size = chunk * n * FLOAT_BYTES;
  /* dtsim's bytes: an all-gather's shard; a reduce-scatter's and an all-to-all's whole per-rank input */
  row->bytes = op->kind == DT_OP_ALLGATHER ? chunk * FLOAT_BYTES : row->size;
}

int dt_bench_sizes(uint64_t min, uint64_t max, uint64_t factor, uint64_t increment, uint64_t **sizes, size_t *n,
                   dt_error *err)
{
  *sizes = NULL;
  *n = 0;
  if (min > max)
    return dt_error_set(err, "", 0, 0, "minimum size %llu is larger than the maximum %llu", (unsigned long long)min,
                        (unsigned long long)max);
  if (!increment && factor < 2)
    return dt_error_set(err, "", 0, 0, "size factor must be at least 2, found %llu", (unsigned long long)factor);
  if (!increment && min == 0)
    return dt_error_set(err, "", 0, 0, "minimum size 0 never grows by a factor (use -i INCREMENT or -b >= 1)");
  size_t cap = 0, k = 0;
  uint64_t *v = NULL;
  for (uint64_t s = min; s <= max;) {
    if (k >= MAX_SIZES) {
      free(v);
      return dt_error_set(err, "", 0, 0, "more than %d sizes between %llu and %llu", MAX_SIZES,
                          (unsigned long long)min, (unsigned long long)max);
    }
    v = dt_grow(v, &cap, k, sizeof *v);
    v[k++] = s;
    uint64_t next = increment ? s + increment : s * factor;
    if (next <= s || (!increment && next / factor != s)) /* overflow */
      break;
    s = next;
  }
  *sizes = v;
  *n = k;
  return DT_OK;
}

int dt_bench_parse_size(const char *text, uint64_t *out, char *why, size_t why_size)
{
  const char *s = text;
  if (!isdigit((unsigned char)*s)) {
    snprintf(why, why_size, "expected a size such as '8', '512K' or '8G', found '%s'", text);
    return -1;
  }
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  uint64_t mul = 1;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    mul = 1ull << 10;
    end++;
    break;
  case 'M':
    mul = 1ull << 20;
    end++;
    break;
  case 'G':
    mul = 1ull << 30;
    end++;
    break;
  case 'T':
    mul = 1ull << 40;
    end++;
    break;
  default:
    break;
  }
  if (toupper((unsigned char)*end) == 'B')
    end++;
  if (*end || errno == ERANGE || (mul > 1 && v > UINT64_MAX / mul)) {
    snprintf(why, why_size, "expected a size such as '8', '512K' or '8G' (K, M, G, T are powers of 1024), found '%s'",
             text);
    return -1;
  }
  *out = (uint64_t)v * mul;
  return 0;
}

/* ---- the trace ---- */

int dt_bench_trace(const dt_bench_opts *o, dt_trace **out, dt_error *err)
{
  *out = NULL;
  int n = o->ngpus;
  const dt_bench_op *op = o->op;
  if (n < 1 || (op->kind == DT_OP_SEND && n < 2))
    return dt_error_set(err, "", 0, 0, "%s needs at least %d GPUs, found %d", op->name, op->kind == DT_OP_SEND ? 2 : 1,
                        n);
  if (o->iters < 1 || o->warmup < 0)
    return dt_error_set(err, "", 0, 0, "iterations must be at least 1 and warm-up iterations at least 0");
  dt_trace *t = dt_trace_new(n);
  int32_t *ranks = dt_xmalloc(sizeof *ranks * (size_t)n);
  for (int r = 0; r < n; r++)
    ranks[r] = r;
  int rc = DT_OK;
  if (op->kind != DT_OP_SEND)
    rc = dt_trace_add_group(t, "world", ranks, (size_t)n, 0, 0, err) < 0 ? DT_ERR : DT_OK;
  free(ranks);
  int64_t step = 0;
  for (size_t i = 0; rc == DT_OK && i < o->nsizes; i++) {
    dt_bench_row row;
    dt_bench_size(op, n, o->sizes[i], &row);
    for (int it = 0; it < o->warmup + o->iters; it++, step++) {
      if (op->kind == DT_OP_SEND) { /* nccl-tests sendrecv: to rank+1, from rank-1, as one group call */
        dt_op *s = dt_trace_append(t, 0, 0);
        s->kind = DT_OP_SEND;
        s->peer = 1 % n;
        s->bytes = row.bytes;
        s->batch = step;
        dt_op *r = dt_trace_append(t, 0, 0);
        r->kind = DT_OP_RECV;
        r->peer = n - 1;
        r->bytes = row.bytes;
        r->batch = step;
      } else {
        dt_op *c = dt_trace_append(t, 0, 0);
        c->kind = op->kind;
        c->group = 0;
        c->root = 0;
        c->bytes = row.bytes;
      }
    }
  }
  for (int r = 1; rc == DT_OK && r < n; r++)
    rc = dt_trace_set_template(t, r, 0, NULL, err);
  if (rc == DT_OK)
    rc = dt_trace_validate(t, err);
  if (rc != DT_OK) {
    dt_trace_free(t);
    return DT_ERR;
  }
  *out = t;
  return DT_OK;
}

/* ---- records ---- */

/* Per step (one size, one iteration): the latest arrival and completion over its instances (one collective
 * instance, or the n send/recv pairs of a sendrecv step). */
typedef struct step_rec {
  double arrival, end;
  const char *algo, *proto;
  int seen;
} step_rec;

typedef struct collect {
  step_rec *steps;
  size_t nsteps;
} collect;

static void on_instance(const dt_instance_record *rec, void *data)
{
  collect *c = data;
  if (rec->seq < 0 || (size_t)rec->seq >= c->nsteps)
    return;
  step_rec *s = &c->steps[rec->seq];
  if (!s->seen || rec->arrival_last_s > s->arrival)
    s->arrival = rec->arrival_last_s;
  if (!s->seen || rec->end_s > s->end)
    s->end = rec->end_s;
  if (!s->seen) {
    s->algo = rec->algo;
    s->proto = rec->proto;
  }
  s->seen = 1;
}

static int placement(const dt_platform *p, const dt_bench_opts *o, int32_t **out, dt_error *err)
{
  int total = dt_platform_gpu_count(p), G = p->gpus_per_node, K = o->gpus_per_node;
  *out = NULL;
  if (K == 0) {
    if (o->ngpus > total)
      return dt_error_set(err, p->source ? p->source : "", 0, 0, "%d GPUs requested but platform '%s' has only %d",
                          o->ngpus, p->name, total);
    return DT_OK;
  }
  if (K > G)
    return dt_error_set(err, p->source ? p->source : "", 0, 0,
                        "%d GPUs per node requested but platform '%s' has %d per node", K, p->name, G);
  int nodes = (o->ngpus + K - 1) / K;
  if (nodes > p->nodes)
    return dt_error_set(err, p->source ? p->source : "", 0, 0,
                        "%d GPUs at %d per node need %d nodes but platform '%s' has only %d", o->ngpus, K, nodes,
                        p->name, p->nodes);
  int32_t *g = dt_xmalloc(sizeof *g * (size_t)o->ngpus);
  for (int r = 0; r < o->ngpus; r++)
    g[r] = (r / K) * G + r % K;
  *out = g;
  return DT_OK;
}

/* --explain: each size's explanation, from the replay's explain rows of that size (the benchmark's one group:
 * one collective shape per size and choice; sendrecv: one row per route shape of its pairs), written as `dtsim run
 * --explain` writes them. Warm-up instances count in the rows' instance counts (their times are the same). */
static void explain_rows(const dt_platform *p, const dt_trace *t, const dt_stats *st, const dt_bench_opts *o,
                         dt_bench_row *v)
{
  dt_report_input in;
  memset(&in, 0, sizeof in);
  in.platform = p;
  in.trace = t;
  in.stats = st;
  dt_explain_shape *sh;
  size_t nsh;
  dt_explain_shapes(st, &sh, &nsh);
  for (size_t i = 0; i < o->nsizes; i++) {
    dt_bench_row *row = &v[i];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
      continue;
    for (size_t k = 0; k < nsh; k++)
      if (sh[k].row->bytes == row->bytes && sh[k].row->kind == o->op->kind) {
        dt_explain_shape_text(f, &in, &sh[k]);
        if (row->nx < 4)
          dt_explain_numbers_of(&in, &sh[k], &row->x[row->nx++]);
      }
    for (size_t k = 0; o->op->kind == DT_OP_SEND && k < st->nexplain_p2p; k++)
      if (st->explain_p2p[k].bytes == row->bytes) {
        dt_explain_p2p_text(f, &in, &st->explain_p2p[k]);
        if (row->nx < 4)
          dt_explain_p2p_numbers(&in, &st->explain_p2p[k], &row->x[row->nx++]);
      }
    fclose(f);
    if (len)
      row->explain = buf;
    else
      free(buf);
  }
  free(sh);
}

int dt_bench_run(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, dt_error *err)
{
  return dt_bench_run_notes(p, o, rows, NULL, NULL, err);
}

int dt_bench_run_notes(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, char ***notes,
                       size_t *nnotes, dt_error *err)
{
  *rows = NULL;
  if (notes) {
    *notes = NULL;
    *nnotes = 0;
  }
  int rc = DT_ERR;
  dt_trace *t = NULL;
  dt_stats *st = NULL;
  int32_t *place = NULL;
  collect c = {NULL, 0};
  if (o->gpus_per_process < 1)
    return dt_error_set(err, "", 0, 0, "GPUs per process must be at least 1, found %d", o->gpus_per_process);
  if (placement(p, o, &place, err) != DT_OK || dt_bench_trace(o, &t, err) != DT_OK)
    goto cleanup;
  size_t per_size = (size_t)(o->warmup + o->iters);
  c.nsteps = o->nsizes * per_size;
  c.steps = dt_xcalloc(c.nsteps + 1, sizeof *c.steps);
  dt_replay_opts ro;
  dt_replay_opts_init(&ro);
  ro.fidelity = o->fidelity;
  ro.exact = o->exact;
  ro.links = 0; /* nothing of the per-link accounting is printed: it would only cost time */
  ro.placement = place;
  ro.algo = o->algo;
  ro.proto = o->proto;
  ro.on_instance = on_instance;
  ro.on_instance_data = &c;
  ro.explain = o->explain;
  if (dt_replay_run(p, t, &ro, &st, err) != DT_OK)
    goto cleanup;
  if (st->ndeadlock > 0) {
    dt_error_set(err, "", 0, 0, "the benchmark deadlocked (%s)", st->deadlock[0]);
    goto cleanup;
  }
  dt_bench_row *v = dt_xcalloc(o->nsizes + 1, sizeof *v);
  double launch = (double)(o->gpus_per_process - 1) * o->launch_s;
  for (size_t i = 0; i < o->nsizes; i++) {
    dt_bench_row *row = &v[i];
    dt_bench_size(o->op, o->ngpus, o->sizes[i], row);
    double sum = 0;
    const step_rec *first = &c.steps[i * per_size + (size_t)o->warmup];
    for (int it = 0; it < o->iters; it++)
      sum += first[it].end - first[it].arrival;
    row->time_s = sum / o->iters + launch;
    if (row->time_s > 0) {
      row->algbw = (double)row->size / row->time_s;
      row->busbw = row->algbw * dt_busbw_factor(o->op->kind, (size_t)o->ngpus);
    }
    const char *algo = first->algo ? first->algo : (o->ngpus == 1 ? "none" : "ring");
    if (first->proto)
      snprintf(row->algo, sizeof row->algo, "%s/%s", algo, first->proto);
    else
      snprintf(row->algo, sizeof row->algo, "%s", algo);
  }
  if (o->explain)
    explain_rows(p, t, st, o, v);
  if (notes && st->nfallbacks) { /* taken over from the statistics, freed below */
    *notes = st->fallbacks;
    *nnotes = st->nfallbacks;
    st->fallbacks = NULL;
    st->nfallbacks = 0;
  }
  *rows = v;
  rc = DT_OK;
cleanup:
  free(c.steps);
  free(place);
  dt_stats_free(st);
  dt_trace_free(t);
  return rc;
}

/* ---- one benchmark per child process ---- */

/* dt_bench_run in the child: its rows copied into the parent's buffer (o->nsizes rows). */
typedef struct {
  const dt_platform *p;
  const dt_bench_opts *o;
} bench_job;

static int bench_child(void *arg, void *out, dt_error *err)
{
  const bench_job *j = arg;
  dt_bench_row *v = NULL;
  int rc = dt_bench_run(j->p, j->o, &v, err);
  for (size_t i = 0; rc == DT_OK && i < j->o->nsizes; i++) { /* text stays in the child: pointers do not cross */
    free(v[i].explain);
    v[i].explain = NULL;
  }
  if (rc == DT_OK)
    memcpy(out, v, sizeof *v * j->o->nsizes);
  free(v);
  return rc;
}

int dt_bench_run_forked(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, dt_error *err)
{
  bench_job j = {p, o};
  dt_bench_row *v = dt_xcalloc(o->nsizes + 1, sizeof *v);
  int rc = dt_run_forked(bench_child, &j, v, sizeof *v * o->nsizes, "the benchmark process", err);
  if (rc == DT_OK)
    *rows = v;
  else {
    *rows = NULL;
    free(v);
  }
  return rc;
}
