/* dtsim calibrate PLATFORM NCCL-TESTS-OUTPUT...: fits a platform's NCCL-model constants (bandwidth factors,
 * protocol latencies and efficiencies, the NVLS and tree algorithm costs) to the user's own nccl-tests
 * measurements, text output or its JSON (-J), and writes the calibrated platform with the rows and the fit error
 * in comments; prints the leave-one-out error. Each evaluation is one simulated nccl-tests run per input table
 * (dt_bench_run_forked). docs/bench.md "Calibrating from your own measurements" has the worked example. */
#include "cmd_calibrate.h"

#include "../common/dt_json.h"
#include "../common/dt_outfile.h"
#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "cmd_bench.h"
#include "dt_bench.h"
#include "dt_cli.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>
#include <yaml.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };
#define MAX_ROWS 4096

const char dt_cmd_calibrate_usage[] =
    "usage: dtsim calibrate PLATFORM FILE... [-o OUT] [--op OP] [--in-place] [--no-loo]\n"
    "\n"
    "Fits PLATFORM's NCCL-model constants to nccl-tests measurements: each FILE is the text output of an\n"
    "nccl-tests *_perf binary or the JSON file it writes with -J. Fitted, in log space, on the time of every\n"
    "row: model.bandwidth_factor (single-node tables), model.network_bandwidth_factor (multi-node tables),\n"
    "the latency of each protocol, LL and LL128 efficiencies, and the tree and (with NVLS) nvls algorithms'\n"
    "latency and efficiency. Prints every row before and after, the fit error and the leave-one-out error\n"
    "(each row predicted from a fit without it); writes the calibrated platform with the rows and errors in\n"
    "its first comment lines. Exit 0, or 2 for bad input.\n"
    "\n"
    "  -o, --output OUT   the calibrated platform file (default: not written)\n"
    "  --op OP           the nccl-tests op when a file does not name it (all_reduce, all_gather, ...)\n"
    "  --in-place        fit the in-place columns (default: out-of-place)\n"
    "  --no-loo          skip the leave-one-out error (one refit per row)\n"
    "  --json            print the result as one JSON object\n";

/* One measured table: one nccl-tests run. */
typedef struct table {
  char path[512];
  const dt_bench_op *op;
  int ngpus, nodes, gpus_per_process;
  size_t n;
  uint64_t size[MAX_ROWS];
  double time_s[MAX_ROWS];
  double before[MAX_ROWS], after[MAX_ROWS], loo[MAX_ROWS]; /* simulated seconds */
} table;

/* ---- reading nccl-tests output ---- */

static int op_from_program(const char *prog, const dt_bench_op **op)
{
  const char *base = strrchr(prog, '/');
  base = base ? base + 1 : prog;
  char name[64];
  snprintf(name, sizeof name, "%.63s", base);
  char *perf = strstr(name, "_perf");
  if (perf)
    *perf = '\0';
  *op = dt_bench_op_find(name);
  return *op ? 0 : -1;
}

/* Distinct host names (the nodes of the run). */
typedef struct hosts {
  char names[256][64];
  int n;
} hosts;

static void host_add(hosts *h, const char *name)
{
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->names[i], name) == 0)
      return;
  if (h->n < 256)
    snprintf(h->names[h->n++], sizeof h->names[0], "%.63s", name);
}

/* The text output: "# Collective test starting: all_reduce_perf", "# nThread 1 nGpus 8 ...", "#  Rank  0 Group  0
 * Pid 123 on host device 0 [...] NVIDIA H100", then rows "size count type redop root time algbw busbw #wrong time
 * algbw busbw #wrong" (out-of-place, then in-place). */
static int read_text(const char *path, const char *text, table *t, int in_place, dt_error *err)
{
  hosts h = {.n = 0};
  int nthreads = 1, ngpus = 1, ranks = 0;
  size_t line = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    line++;
    p = e ? e + 1 : p + len;
    char *s = buf;
    while (*s == ' ' || *s == '\t')
      s++;
    if (!*s || *s == '\r')
      continue;
    if (*s == '#') {
      char prog[256], host[128];
      int r, g, pid, dev;
      if (sscanf(s, "# Collective test starting: %255s", prog) == 1 && !t->op && op_from_program(prog, &t->op) != 0)
        return dt_error_set(err, path, (long)line, 0, "unknown nccl-tests program '%s'", prog);
      sscanf(s, "# nThread %d nGpus %d", &nthreads, &ngpus);
      if (sscanf(s, "# Rank %d Group %d Pid %d on %127s device %d", &r, &g, &pid, host, &dev) == 5) {
        ranks++;
        host_add(&h, host);
      }
      continue;
    }
    char sz[32], cnt[32], type[32], redop[32], root[32], c1[32], c2[32], c3[32], c4[32], c5[32], c6[32], c7[32],
        c8[32];
    int n = sscanf(s, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s", sz, cnt, type, redop, root,
                   c1, c2, c3, c4, c5, c6, c7, c8);
    long long size, count;
    if (n < 9)
      return dt_error_set(err, path, (long)line, 0,
                          "expected an nccl-tests row (size count type redop root time algbw busbw #wrong ...), found "
                          "'%.60s'",
                          s);
    /* digits alone (dt_parse_whole): '%llu' took '-8' as 2^64 - 8 */
    if (dt_parse_whole(sz, 0, (long long)DT_BYTES_MAX, &size) != 0 || dt_parse_whole(cnt, 0, LLONG_MAX, &count) != 0)
      return dt_error_set(err, path, (long)line, 0, "expected a size in bytes from 0 to 2^53 and a count (whole "
                          "numbers) at the start of the row, found '%s %s'", sz, cnt);
    const char *tv = in_place ? c5 : c1;
    if (in_place && n < 13)
      return dt_error_set(err, path, (long)line, 0, "--in-place: the row has no in-place columns");
    char *end;
    double us = strtod(tv, &end);
    if (*end || !(us > 0))
      return dt_error_set(err, path, (long)line, 0, "expected a time in us above zero, found '%s'", tv);
    if (t->n >= MAX_ROWS)
      return dt_error_set(err, path, (long)line, 0, "more than %d rows", MAX_ROWS);
    t->size[t->n] = (uint64_t)size;
    t->time_s[t->n] = us * 1e-6;
    t->n++;
  }
  t->gpus_per_process = nthreads * ngpus;
  t->ngpus = ranks > 0 ? ranks : t->gpus_per_process;
  t->nodes = h.n > 0 ? h.n : 1;
  return DT_OK;
}

/* The -J file (nccl-tests src/util.cu, JSON_FILE_VERSION 2): args[0] the program, config.nthreads, config.ngpus,
 * config.devices[] (one per process: hostname), results[] {size, out_of_place: {time}, in_place: {time}}. */
static int read_json(const char *path, const char *text, table *t, int in_place, dt_error *err)
{
  char why[512];
  size_t deep;
  if (dt_json_depth_scan(text, strlen(text), &deep) != 0) /* yajl's tree recurses once per level */
    return dt_json_depth_error(err, path, deep);
  yajl_val root = yajl_tree_parse(text, why, sizeof why);
  if (!root) {
    /* yajl's tree parser gives no position: a parser without callbacks over the same text stops where it fails */
    size_t len = strlen(text), at = len;
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    if (yajl_parse(h, (const unsigned char *)text, len) != yajl_status_ok)
      at = yajl_get_bytes_consumed(h);
    else if (yajl_complete_parse(h) != yajl_status_ok)
      at = len;
    yajl_free(h);
    why[strcspn(why, "\n")] = '\0';
    return dt_error_set(err, path, 0, 0, "not valid JSON at byte %zu%s: %s", at,
                        at >= len ? " (the end: the file is truncated)" : "", why);
  }
  int rc = DT_ERR;
  const char *args_path[] = {"args", NULL}, *cfg_path[] = {"config", NULL}, *res_path[] = {"results", NULL};
  yajl_val args = yajl_tree_get(root, args_path, yajl_t_array);
  yajl_val cfg = yajl_tree_get(root, cfg_path, yajl_t_object);
  yajl_val res = yajl_tree_get(root, res_path, yajl_t_array);
  if (!cfg || !res) {
    dt_error_set(err, path, 0, 0, "expected the nccl-tests -J keys 'config' and 'results'");
    goto done;
  }
  if (!t->op && args && YAJL_GET_ARRAY(args)->len > 0 && YAJL_IS_STRING(YAJL_GET_ARRAY(args)->values[0]) &&
      op_from_program(YAJL_GET_STRING(YAJL_GET_ARRAY(args)->values[0]), &t->op) != 0) {
    dt_error_set(err, path, 0, 0, "unknown nccl-tests program '%s' in 'args'",
                 YAJL_GET_STRING(YAJL_GET_ARRAY(args)->values[0]));
    goto done;
  }
  const char *nt_path[] = {"nthreads", NULL}, *ng_path[] = {"ngpus", NULL}, *dev_path[] = {"devices", NULL};
  yajl_val nt = yajl_tree_get(cfg, nt_path, yajl_t_number), ng = yajl_tree_get(cfg, ng_path, yajl_t_number);
  yajl_val devs = yajl_tree_get(cfg, dev_path, yajl_t_array);
  int per = (nt && YAJL_IS_INTEGER(nt) ? (int)YAJL_GET_INTEGER(nt) : 1) *
            (ng && YAJL_IS_INTEGER(ng) ? (int)YAJL_GET_INTEGER(ng) : 1);
  hosts h = {.n = 0};
  size_t nprocs = devs ? YAJL_GET_ARRAY(devs)->len : 1;
  for (size_t i = 0; devs && i < nprocs; i++) {
    const char *hp[] = {"hostname", NULL};
    yajl_val hn = yajl_tree_get(YAJL_GET_ARRAY(devs)->values[i], hp, yajl_t_string);
    if (hn)
      host_add(&h, YAJL_GET_STRING(hn));
  }
  t->gpus_per_process = per > 0 ? per : 1;
  t->ngpus = (int)(nprocs > 0 ? nprocs : 1) * t->gpus_per_process;
  t->nodes = h.n > 0 ? h.n : 1;
  for (size_t i = 0; i < YAJL_GET_ARRAY(res)->len; i++) {
    yajl_val r = YAJL_GET_ARRAY(res)->values[i];
    const char *sp[] = {"size", NULL};
    const char *tp[] = {in_place ? "in_place" : "out_of_place", "time", NULL};
    yajl_val sz = yajl_tree_get(r, sp, yajl_t_number), tm = yajl_tree_get(r, tp, yajl_t_number);
    if (!sz || !YAJL_IS_INTEGER(sz) || YAJL_GET_INTEGER(sz) < 0 || !tm || !(YAJL_GET_DOUBLE(tm) > 0)) {
      dt_error_set(err, path, 0, 0, "results[%zu]: expected a size and a positive %s.time (us)", i,
                   in_place ? "in_place" : "out_of_place");
      goto done;
    }
    if (t->n >= MAX_ROWS) {
      dt_error_set(err, path, 0, 0, "more than %d results", MAX_ROWS);
      goto done;
    }
    t->size[t->n] = (uint64_t)YAJL_GET_INTEGER(sz);
    t->time_s[t->n] = YAJL_GET_DOUBLE(tm) * 1e-6;
    t->n++;
  }
  rc = DT_OK;
done:
  yajl_tree_free(root);
  return rc;
}

static int read_table(const char *path, const char *op_name, int in_place, table *t, dt_error *err)
{
  memset(t, 0, sizeof *t);
  snprintf(t->path, sizeof t->path, "%s", path);
  if (op_name && !(t->op = dt_bench_op_find(op_name)))
    return dt_error_set(err, "", 0, 0, "--op: unknown nccl-tests op '%s'", op_name);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return dt_error_set(err, path, 0, 0, "is a directory, not an nccl-tests output file (give the files in it)");
  dt_phase("reading the nccl-tests output %s", path);
  char *text;
  size_t n;
  if (dt_read_config(path, "nccl-tests output", &text, &n, err) != DT_OK)
    return DT_ERR;
  const char *nul = memchr(text, '\0', n);
  if (nul) {
    size_t at = (size_t)(nul - text);
    free(text);
    return dt_error_set(err, path, 0, 0, "a NUL byte at byte %zu: not the text or JSON output of nccl-tests", at);
  }
  text[n] = '\0';
  const char *s = text;
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
    s++;
  int rc = *s == '{' ? read_json(path, text, t, in_place, err) : read_text(path, text, t, in_place, err);
  free(text);
  if (rc != DT_OK)
    return rc;
  if (!t->op)
    return dt_error_set(err, path, 0, 0, "the file does not name its nccl-tests op: give --op");
  if (t->n == 0)
    return dt_error_set(err, path, 0, 0, "no result rows");
  if (t->ngpus % t->nodes)
    return dt_error_set(err, path, 0, 0, "%d ranks on %d hosts: not the same number on every host", t->ngpus, t->nodes);
  return DT_OK;
}

/* ---- the parameters ---- */

typedef struct param {
  const char *key; /* the platform key it writes */
  double *v;       /* the field in the platform being fitted */
  double hi;       /* upper bound (efficiencies 1) */
  int time;        /* a latency: written with a unit */
} param;

static size_t params_of(dt_platform *p, int single, int multi, param *out)
{
  size_t n = 0;
  if (single)
    out[n++] = (param){"model.bandwidth_factor", &p->bandwidth_factor, HUGE_VAL, 0};
  if (multi) {
    if (p->network_bandwidth_factor <= 0)
      p->network_bandwidth_factor = p->bandwidth_factor;
    out[n++] = (param){"model.network_bandwidth_factor", &p->network_bandwidth_factor, HUGE_VAL, 0};
  }
  static const char *const proto_key[DT_PROTO_COUNT][2] = {
      {"nccl.protocols.LL.latency", "nccl.protocols.LL.efficiency"},
      {"nccl.protocols.LL128.latency", "nccl.protocols.LL128.efficiency"},
      {"nccl.protocols.Simple.latency", NULL}};
  for (int i = 0; i < DT_PROTO_COUNT; i++) {
    out[n++] = (param){proto_key[i][0], &p->protocols[i].latency, HUGE_VAL, 1};
    if (proto_key[i][1])
      out[n++] = (param){proto_key[i][1], &p->protocols[i].efficiency, 1.0, 0};
  }
  out[n++] = (param){"nccl.algorithms.tree.latency", &p->algorithms[DT_ALGO_TREE].latency, HUGE_VAL, 1};
  if (p->nvls) {
    if (p->algorithms[DT_ALGO_NVLS].efficiency <= 0)
      p->algorithms[DT_ALGO_NVLS].efficiency = 1;
    out[n++] = (param){"nccl.algorithms.nvls.latency", &p->algorithms[DT_ALGO_NVLS].latency, HUGE_VAL, 1};
    out[n++] = (param){"nccl.algorithms.nvls.efficiency", &p->algorithms[DT_ALGO_NVLS].efficiency, 1.0, 0};
  }
  return n;
}

/* ---- evaluation ---- */

/* Simulates every table on p into sim (one array per table, rows in order). */
static int simulate(const dt_platform *p, table *t, size_t nt, double **sim, dt_error *err)
{
  for (size_t k = 0; k < nt; k++) {
    dt_bench_opts o;
    dt_bench_opts_init(&o);
    o.op = t[k].op;
    o.ngpus = t[k].ngpus;
    o.gpus_per_node = t[k].nodes > 1 ? t[k].ngpus / t[k].nodes : 0;
    o.gpus_per_process = t[k].gpus_per_process;
    o.launch_s = DT_BENCH_DEFAULT_LAUNCH_S;
    o.sizes = t[k].size;
    o.nsizes = t[k].n;
    dt_bench_row *rows = NULL;
    if (dt_bench_run_forked(p, &o, &rows, err) != DT_OK) {
      dt_error_prefix(err, "%s (%s on %d GPUs): ", t[k].path, t[k].op->name, t[k].ngpus);
      return DT_ERR;
    }
    for (size_t i = 0; i < t[k].n; i++)
      sim[k][i] = rows[i].time_s;
    free(rows);
  }
  return DT_OK;
}

/* Sum of squared log errors over all rows but (skip_t, skip_i). */
static double objective(const table *t, size_t nt, double **sim, size_t skip_t, size_t skip_i)
{
  double s = 0;
  for (size_t k = 0; k < nt; k++)
    for (size_t i = 0; i < t[k].n; i++) {
      if (k == skip_t && i == skip_i)
        continue;
      double d = log(sim[k][i] / t[k].time_s[i]);
      s += d * d;
    }
  return s;
}

typedef struct fitter {
  dt_platform *p;
  table *t;
  size_t nt;
  param *prm;
  size_t np;
  double **sim; /* scratch */
  size_t evals;
} fitter;

/* Coordinate descent in log space: each parameter multiplied by e^(+-step) while that lowers the objective, for
 * each step of steps; returns the objective (sim holds its simulation). */
static int fit(fitter *F, const double *steps, size_t nsteps, size_t skip_t, size_t skip_i, double *best, dt_error *err)
{
  if (simulate(F->p, F->t, F->nt, F->sim, err) != DT_OK)
    return DT_ERR;
  F->evals++;
  *best = objective(F->t, F->nt, F->sim, skip_t, skip_i);
  for (size_t si = 0; si < nsteps; si++) {
    for (int sweep = 0; sweep < 3; sweep++) {
      int moved = 0;
      for (size_t j = 0; j < F->np; j++) {
        double old = *F->prm[j].v;
        if (!(old > 0))
          continue;
        for (int dir = -1; dir <= 1; dir += 2) {
          double v = old * exp(dir * steps[si]);
          if (v > F->prm[j].hi)
            v = F->prm[j].hi;
          if (v == old)
            continue;
          *F->prm[j].v = v;
          if (simulate(F->p, F->t, F->nt, F->sim, err) != DT_OK)
            return DT_ERR;
          F->evals++;
          double o = objective(F->t, F->nt, F->sim, skip_t, skip_i);
          if (o < *best * (1 - 1e-9)) {
            *best = o;
            old = v;
            moved = 1;
            break;
          }
          *F->prm[j].v = old;
        }
      }
      if (!moved)
        break;
    }
  }
  return simulate(F->p, F->t, F->nt, F->sim, err); /* leave sim at the best point */
}

/* ---- output ---- */

/* Median |sim/meas - 1| over the rows of all tables (sim_of: 0 before, 1 after, 2 leave-one-out). */
static double median_error(const table *t, size_t nt, int which)
{
  size_t n = 0;
  for (size_t k = 0; k < nt; k++)
    n += t[k].n;
  double *e = dt_xmalloc(sizeof *e * (n + 1));
  n = 0;
  for (size_t k = 0; k < nt; k++)
    for (size_t i = 0; i < t[k].n; i++) {
      double s = which == 0 ? t[k].before[i] : which == 1 ? t[k].after[i] : t[k].loo[i];
      e[n++] = fabs(s / t[k].time_s[i] - 1);
    }
  dt_sort_doubles(e, n);
  double m = dt_median_sorted(e, n);
  free(e);
  return m;
}

static void format_value(const param *pr, double v, char *buf, size_t size)
{
  if (pr->time)
    snprintf(buf, size, "%.4gus", v * 1e6);
  else
    snprintf(buf, size, "%.4g", v);
}

/* Sets dotted key to value in YAML document d, creating mappings on the way. */
static int doc_set(yaml_document_t *d, const char *key, const char *value)
{
  int map = 1;
  char path[128];
  snprintf(path, sizeof path, "%s", key);
  for (char *seg = path, *next; seg; seg = next) {
    next = strchr(seg, '.');
    if (next)
      *next++ = '\0';
    yaml_node_t *m = yaml_document_get_node(d, map);
    if (!m || m->type != YAML_MAPPING_NODE)
      return -1;
    int found = 0;
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(d, pr->key);
      if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, seg) == 0) {
        found = pr->value;
        if (!next) {
          int v = yaml_document_add_scalar(d, NULL, (yaml_char_t *)value, (int)strlen(value), YAML_PLAIN_SCALAR_STYLE);
          /* adding may move the node table: find the pair again */
          m = yaml_document_get_node(d, map);
          for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
            yaml_node_t *kk = yaml_document_get_node(d, q->key);
            if (kk->type == YAML_SCALAR_NODE && strcmp((const char *)kk->data.scalar.value, seg) == 0)
              q->value = v;
          }
          return 0;
        }
        break;
      }
    }
    if (!next) {
      int k = yaml_document_add_scalar(d, NULL, (yaml_char_t *)seg, (int)strlen(seg), YAML_PLAIN_SCALAR_STYLE);
      int v = yaml_document_add_scalar(d, NULL, (yaml_char_t *)value, (int)strlen(value), YAML_PLAIN_SCALAR_STYLE);
      yaml_document_append_mapping_pair(d, map, k, v);
      return 0;
    }
    if (!found) {
      int k = yaml_document_add_scalar(d, NULL, (yaml_char_t *)seg, (int)strlen(seg), YAML_PLAIN_SCALAR_STYLE);
      found = yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
      yaml_document_append_mapping_pair(d, map, k, found);
    }
    map = found;
  }
  return 0;
}

static int write_file(void *data, unsigned char *buffer, size_t size)
{
  return fwrite(buffer, 1, size, (FILE *)data) == size;
}

/* The calibrated platform: the comment lines, then the original document with the fitted keys set. */
static int write_platform(const char *out, const char *src, const char *name, const param *prm, size_t np,
                          const table *t, size_t nt, double fit_err, double loo_err, dt_error *err)
{
  FILE *in = fopen(src, "rb");
  if (!in)
    return dt_error_set(err, src, 0, 0, "cannot open: %s", strerror(errno));
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, in);
  int ok = yaml_parser_load(&parser, &doc);
  yaml_parser_delete(&parser);
  fclose(in);
  if (!ok)
    return dt_error_set(err, src, 0, 0, "cannot read it back as YAML");
  char buf[64];
  for (size_t j = 0; j < np; j++) {
    format_value(&prm[j], *prm[j].v, buf, sizeof buf);
    doc_set(&doc, prm[j].key, buf);
  }
  char nm[160];
  snprintf(nm, sizeof nm, "%s-calibrated", name);
  doc_set(&doc, "name", nm);
  FILE *f = dt_outfile_fopen(out, err); /* written whole or not at all */
  if (!f) {
    yaml_document_delete(&doc);
    return dt_error_set(err, out, 0, 0, "cannot write: %s", strerror(errno));
  }
  fprintf(f, "# Calibrated by dtsim calibrate from %s on these nccl-tests rows (time in us, measured / simulated):\n",
          src);
  for (size_t k = 0; k < nt; k++) {
    fprintf(f, "# %s: %s on %d GPUs (%d node%s, %d per process)\n", t[k].path, t[k].op->name, t[k].ngpus, t[k].nodes,
            t[k].nodes == 1 ? "" : "s", t[k].gpus_per_process);
    for (size_t i = 0; i < t[k].n; i++)
      fprintf(f, "#   %12llu B  %10.2f  %10.2f  %+6.1f %%\n", (unsigned long long)t[k].size[i], t[k].time_s[i] * 1e6,
              t[k].after[i] * 1e6, 100 * (t[k].after[i] / t[k].time_s[i] - 1));
  }
  fprintf(f, "# fit error (median |error| over the rows): %.2f %%", 100 * fit_err);
  if (isfinite(loo_err))
    fprintf(f, "; leave-one-out (each row predicted from a fit without it): %.2f %%", 100 * loo_err);
  fprintf(f, "\n# fitted:\n");
  for (size_t j = 0; j < np; j++) {
    format_value(&prm[j], *prm[j].v, buf, sizeof buf);
    fprintf(f, "#   %s %s\n", prm[j].key, buf);
  }
  yaml_emitter_t em;
  yaml_emitter_initialize(&em);
  yaml_emitter_set_output(&em, write_file, f);
  yaml_emitter_set_width(&em, 120);
  ok = yaml_emitter_open(&em) && yaml_emitter_dump(&em, &doc) && yaml_emitter_close(&em) && yaml_emitter_flush(&em);
  yaml_emitter_delete(&em);
  if (!ok) {
    dt_outfile_fdiscard(f);
    return dt_error_set(err, out, 0, 0, "cannot write the calibrated platform");
  }
  if (dt_outfile_fclose(f, err) != DT_OK)
    return dt_error_set(err, out, 0, 0, "cannot write the calibrated platform: %s", strerror(errno));
  return DT_OK;
}

/* `dtsim calibrate NCCL_TESTS_OUTPUT PLATFORM`: the first file did not load as a platform; when it reads as an
 * nccl-tests output, says so, and that the arguments look swapped when a later one loads as a platform (was: a YAML
 * error about the table's first row). Returns 1 when it said so. */
static int said_swapped(char **args, int nargs, const char *op, int in_place)
{
  table *probe = dt_xcalloc(1, sizeof *probe);
  dt_error e;
  dt_error_clear(&e);
  int is_table = read_table(args[0], op, in_place, probe, &e) == DT_OK;
  free(probe);
  if (!is_table)
    return 0;
  for (int i = 1; i < nargs; i++) {
    dt_platform *q = NULL;
    if (dt_platform_load(args[i], &q, &e) == DT_OK) {
      dt_platform_free(q);
      fprintf(stderr, "dtsim calibrate: arguments swapped? '%s' is an nccl-tests output and '%s' a platform; usage: "
              "dtsim calibrate [options] PLATFORM NCCL_TESTS_OUTPUT...\nrun 'dtsim help calibrate' for usage\n",
              args[0], args[i]);
      return 1;
    }
  }
  fprintf(stderr, "dtsim calibrate: '%s' is an nccl-tests output, not a platform: the first file of 'dtsim calibrate' "
          "must be the platform YAML to fit (as platforms/dgx-h100.yaml); usage: dtsim calibrate [options] PLATFORM "
          "NCCL_TESTS_OUTPUT...\nrun 'dtsim help calibrate' for usage\n", args[0]);
  return 1;
}

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim calibrate: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help calibrate' for usage\n");
  return EXIT_USAGE;
}

int dt_cmd_calibrate(int argc, char **argv)
{
  enum { O_OP = 1000, O_IP, O_NOLOO, O_JSON };
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"op", required_argument, NULL, O_OP},
                                           {"in-place", no_argument, NULL, O_IP},
                                           {"no-loo", no_argument, NULL, O_NOLOO},
                                           {"json", no_argument, NULL, O_JSON},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *out = NULL, *op = NULL;
  int in_place = 0, loo = 1, json = 0, opt;
  if (dt_cli_check_repeats("calibrate", argc, argv, ":o:h", longopts, "") != 0)
    return 2;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'o':
      out = optarg;
      break;
    case O_OP:
      if (!dt_bench_op_find(optarg)) {
        size_t nops;
        const dt_bench_op *ops = dt_bench_ops(&nops);
        char list[256] = "";
        for (size_t i = 0; i < nops; i++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ops[i].name);
        fprintf(stderr, "dtsim calibrate: --op expects an nccl-tests op (%s), found '%s'\nrun 'dtsim help calibrate' "
                "for usage\n", list, optarg);
        return EXIT_USAGE;
      }
      op = optarg;
      break;
    case O_IP:
      in_place = 1;
      break;
    case O_NOLOO:
      loo = 0;
      break;
    case O_JSON:
      json = 1;
      break;
    case 'h':
      fputs(dt_cmd_calibrate_usage, stdout);
      return EXIT_OK;
    case ':':
      return usage("option '%s' requires an argument", argv[optind - 1]);
    default:
      return dt_cli_bad_option("calibrate", opt, argv, longopts); /* the nearest option, an ambiguous abbreviation */
    }
  }
  if (argc - optind < 2)
    return usage("%s", "expected a platform file and at least one nccl-tests output file");
  if (out && strcmp(out, "-") == 0) /* was the table (or --json), then the YAML, on one stdout */
    return usage("%s", "-o -: the report goes to standard output; give the calibrated platform a file name");
  dt_error err;
  dt_error_clear(&err);
  dt_platform *p = NULL;
  size_t nt = (size_t)(argc - optind - 1);
  table *t = dt_xcalloc(nt, sizeof *t);
  double **sim = dt_xcalloc(nt, sizeof *sim);
  int rc = EXIT_USAGE;
  param prm[16];
  if (dt_platform_load(argv[optind], &p, &err) != DT_OK) {
    if (said_swapped(&argv[optind], argc - optind, op, in_place)) {
      rc = EXIT_USAGE;
      goto cleanup;
    }
    goto fail;
  }
  if (!p->nccl) {
    dt_error_set(&err, argv[optind], 0, 0,
                 "calibrate fits the NCCL model's constants: the platform has no 'nccl' section (add 'nccl: {}' for "
                 "NCCL's defaults)");
    goto fail;
  }
  int single = 0, multi = 0;
  for (size_t k = 0; k < nt; k++) {
    if (read_table(argv[optind + 1 + k], op, in_place, &t[k], &err) != DT_OK)
      goto fail;
    if (t[k].ngpus > dt_platform_gpu_count(p) || t[k].ngpus / t[k].nodes > p->gpus_per_node) {
      dt_error_set(&err, t[k].path, 0, 0, "%d GPUs on %d node%s do not fit the platform's %d nodes x %d GPUs",
                   t[k].ngpus, t[k].nodes, t[k].nodes == 1 ? "" : "s", p->nodes, p->gpus_per_node);
      goto fail;
    }
    single |= t[k].nodes == 1;
    multi |= t[k].nodes > 1;
    sim[k] = dt_xcalloc(t[k].n, sizeof *sim[k]);
  }
  size_t np = params_of(p, single, multi, prm);
  fitter F = {p, t, nt, prm, np, sim, 0};
  if (simulate(p, t, nt, sim, &err) != DT_OK)
    goto fail;
  for (size_t k = 0; k < nt; k++)
    memcpy(t[k].before, sim[k], sizeof *sim[k] * t[k].n);
  double start[16];
  for (size_t j = 0; j < np; j++)
    start[j] = *prm[j].v;
  static const double steps[] = {0.5, 0.2, 0.08, 0.03, 0.01};
  double best;
  if (fit(&F, steps, sizeof steps / sizeof steps[0], (size_t)-1, (size_t)-1, &best, &err) != DT_OK)
    goto fail;
  for (size_t k = 0; k < nt; k++)
    memcpy(t[k].after, sim[k], sizeof *sim[k] * t[k].n);
  double fitted[16];
  for (size_t j = 0; j < np; j++)
    fitted[j] = *prm[j].v;
  double loo_err = NAN;
  if (loo) {
    /* each row predicted by a refit without it, started from the full fit (its last two steps) */
    for (size_t k = 0; k < nt; k++)
      for (size_t i = 0; i < t[k].n; i++) {
        for (size_t j = 0; j < np; j++)
          *prm[j].v = fitted[j];
        double b;
        if (fit(&F, steps + 3, 2, k, i, &b, &err) != DT_OK)
          goto fail;
        t[k].loo[i] = sim[k][i];
      }
    for (size_t j = 0; j < np; j++)
      *prm[j].v = fitted[j];
    loo_err = median_error(t, nt, 2);
  }
  double before_err = median_error(t, nt, 0), fit_err = median_error(t, nt, 1);
  char b1[64], b2[64];
  if (json) {
    printf("{\"platform\": \"%s\", \"evaluations\": %zu, \"median_error_before\": %.6g, \"fit_error\": %.6g, "
           "\"loo_error\": ",
           argv[optind], F.evals, before_err, fit_err);
    if (isfinite(loo_err))
      printf("%.6g", loo_err);
    else
      printf("null");
    printf(", \"params\": {");
    for (size_t j = 0; j < np; j++)
      printf("%s\"%s\": [%.9g, %.9g]", j ? ", " : "", prm[j].key, start[j], fitted[j]);
    printf("}, \"rows\": [");
    int first = 1;
    for (size_t k = 0; k < nt; k++)
      for (size_t i = 0; i < t[k].n; i++) {
        printf("%s\n  {\"file\": \"%s\", \"op\": \"%s\", \"gpus\": %d, \"size\": %llu, \"measured_s\": %.9g, "
               "\"before_s\": %.9g, \"after_s\": %.9g, \"loo_s\": ",
               first ? "" : ",", t[k].path, t[k].op->name, t[k].ngpus, (unsigned long long)t[k].size[i], t[k].time_s[i],
               t[k].before[i], t[k].after[i]);
        if (loo)
          printf("%.9g}", t[k].loo[i]);
        else
          printf("null}");
        first = 0;
      }
    printf("\n]}\n");
  } else {
    printf("dtsim calibrate %s: %zu table%s, %zu simulated runs\n", argv[optind], nt, nt == 1 ? "" : "s", F.evals);
    for (size_t k = 0; k < nt; k++) {
      printf("\n%s: %s on %d GPUs (%d node%s, %d per process)\n", t[k].path, t[k].op->name, t[k].ngpus, t[k].nodes,
             t[k].nodes == 1 ? "" : "s", t[k].gpus_per_process);
      printf("%14s %12s %12s %8s %12s %8s %8s\n", "size (B)", "measured us", "before us", "error", "after us", "error",
             "loo");
      for (size_t i = 0; i < t[k].n; i++) {
        printf("%14llu %12.2f %12.2f %+7.1f%% %12.2f %+7.1f%%", (unsigned long long)t[k].size[i], t[k].time_s[i] * 1e6,
               t[k].before[i] * 1e6, 100 * (t[k].before[i] / t[k].time_s[i] - 1), t[k].after[i] * 1e6,
               100 * (t[k].after[i] / t[k].time_s[i] - 1));
        if (loo)
          printf(" %+7.1f%%", 100 * (t[k].loo[i] / t[k].time_s[i] - 1));
        printf("\n");
      }
    }
    printf("\nparameters (before -> after):\n");
    for (size_t j = 0; j < np; j++) {
      format_value(&prm[j], start[j], b1, sizeof b1);
      format_value(&prm[j], fitted[j], b2, sizeof b2);
      printf("  %-34s %10s -> %s\n", prm[j].key, b1, b2);
    }
    printf("\nmedian |error|: before %.2f %%, after (fit error) %.2f %%", 100 * before_err, 100 * fit_err);
    if (loo)
      printf(", leave-one-out %.2f %%", 100 * loo_err);
    printf("\n");
  }
  if (out) {
    if (write_platform(out, argv[optind], p->name, prm, np, t, nt, fit_err, loo_err, &err) != DT_OK)
      goto fail;
    if (!json)
      printf("wrote %s\n", out);
  }
  rc = EXIT_OK;
  goto cleanup;
fail:;
  dt_cli_name_output(&err, "-o", out); /* a write error names the option (docs/cli.md) */
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
cleanup:
  for (size_t k = 0; k < nt; k++)
    free(sim[k]);
  free(sim);
  free(t);
  dt_platform_free(p);
  return rc;
}
