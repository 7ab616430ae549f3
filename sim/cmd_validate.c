/* dtsim validate: reads the reference CSVs (nccl-tests measurements by others, validation/references/README.md),
 * runs the matching benchmarks on the matching shipped platforms (one child process per benchmark: SimGrid runs
 * once per process), and prints measured against simulated with the relative error per row and the median error
 * per table for rows of at least 1 MiB and rows below. docs/bench.md describes the tables and the calibration. */
#include "cmd_validate.h"

#include "../common/dt_json.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "cmd_bench.h"
#include "cmd_e2e.h"
#include "dt_bench.h"
#include "dt_cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

#define MIB (1024.0 * 1024.0)
/* the "Done when" targets of the median errors (issue 3), printed beside each table */
#define TARGET_GE_1MIB 0.10
#define TARGET_LT_1MIB 0.25

const char dt_cmd_validate_usage[] =
    "usage: dtsim validate [--references DIR] [--platforms DIR] [--json]\n"
    "       dtsim validate --e2e [options]   (whole training iterations; 'dtsim validate --e2e --help')\n"
    "\n"
    "Runs the nccl-tests benchmarks of the reference measurements on the matching shipped platforms and prints,\n"
    "per table, each row's measured and simulated value (time in us, or busbw in GB/s) with the relative error\n"
    "(simulated - measured) / measured, and the median absolute error over rows of at least 1 MiB and below.\n"
    "Exit 0 when it ran (the errors are findings), 2 for a missing or malformed CSV or platform.\n"
    "\n"
    "  --references DIR   the reference CSVs (default validation/references)\n"
    "  --platforms DIR    the shipped platform files (default platforms)\n"
    "  --json             print one JSON object: {\"tables\": [{name, csv, column, platform, rows: [{config, op,\n"
    "                     size_bytes, metric, measured, simulated, rel_error}...], median_error_ge_1MiB,\n"
    "                     median_error_lt_1MiB, rows_ge_1MiB, rows_lt_1MiB}...], simulations, sizes, cpu_s,\n"
    "                     wall_s}\n"
    "Every row is simulated (one forked benchmark per platform, configuration and op); the last line (JSON:\n"
    "simulations, sizes, cpu_s, wall_s) says how many and what they cost.\n";

/* How a reference CSV maps onto benchmarks. A `sweep` file has a size_bytes column and one column per measured
 * series (a time in us); each series is a table. A `matrix` file has configuration, metric, size_bytes and one
 * column per op; the whole file is one table. */
typedef enum { SHAPE_SWEEP, SHAPE_MATRIX } table_shape;

typedef struct table_spec {
  const char *csv;       /* file in the references directory */
  table_shape shape;
  const char *columns;   /* sweep: the measured series, space separated */
  const char *op;        /* sweep: the nccl-tests op */
  const char *config;    /* sweep: NODESxGPUS */
  const char *platform;  /* file in the platforms directory */
  int gpus_per_process;  /* nccl-tests -g of the measurement (validation/references/README.md) */
} table_spec;

static const table_spec specs[] = {
    /* SuperBench ran all_reduce_perf with one process driving 8 GPUs (-g 8) */
    {"a100_8gpu_allreduce.csv", SHAPE_SWEEP, "ndv4_time_us ndmv4_time_us", "all_reduce", "1x8", "dgx-a100.yaml", 8},
    /* dgxc-benchmarking: one process per GPU (-g 1), out-of-place and in-place */
    {"h100_8gpu_allreduce.csv", SHAPE_SWEEP, "oop_time_us ip_time_us", "all_reduce", "1x8", "dgx-h100.yaml", 1},
    /* mscclpp's NDm A100 v4 numbers: mpirun, one process per GPU */
    {"a100_multinode.csv", SHAPE_MATRIX, NULL, NULL, NULL, "azure-ndmv4.yaml", 1},
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* matrix columns to nccl-tests op names */
static const struct {
  const char *column, *op;
} matrix_ops[] = {{"allgather", "all_gather"}, {"allreduce", "all_reduce"}, {"alltoall", "alltoall"}};

typedef enum { METRIC_TIME, METRIC_BUSBW } metric;
static const char *const metric_names[] = {"time_us", "busbw_GBps"};

/* One compared value. */
typedef struct point {
  char config[16];
  const dt_bench_op *op;
  uint64_t size;
  metric m;
  double measured, simulated;
  size_t line;
} point;

typedef struct table {
  char name[400];
  char column[256];
  const table_spec *spec;
  point *pts;
  size_t n, cap;
} table;

/* What the run cost: every benchmark is simulated, one forked SimGrid process each (nothing is read from stored
 * results); CPU seconds are the children's user + system time, which getrusage counts once they are waited for. */
typedef struct run_cost {
  size_t simulations, sizes;
  double cpu_s, wall_s;
} run_cost;

static double children_cpu_s(void)
{
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
    return 0;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

/* ---- CSV ---- */

typedef struct csv_row {
  size_t line;
  size_t nf;
  char **f;
} csv_row;

typedef struct csv {
  char *path;
  size_t nhead;
  char **head;
  csv_row *rows;
  size_t n, cap;
} csv;

static void csv_free(csv *c)
{
  for (size_t i = 0; i < c->nhead; i++)
    free(c->head[i]);
  free(c->head);
  for (size_t r = 0; r < c->n; r++) {
    for (size_t i = 0; i < c->rows[r].nf; i++)
      free(c->rows[r].f[i]);
    free(c->rows[r].f);
  }
  free(c->rows);
  free(c->path);
  memset(c, 0, sizeof *c);
}

static char *trim(char *s)
{
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
    s[--n] = '\0';
  return s;
}

static size_t split(char *line, char ***out)
{
  size_t n = 0, cap = 0;
  char **v = NULL;
  for (char *s = line;;) {
    char *comma = strchr(s, ',');
    if (comma)
      *comma = '\0';
    v = dt_grow(v, &cap, n, sizeof *v);
    v[n++] = dt_xstrdup(trim(s));
    if (!comma)
      break;
    s = comma + 1;
  }
  *out = v;
  return n;
}

/* Reads a CSV: '#' lines are comments (the source lines), the first other line the header. */
static int csv_read(const char *path, csv *c, dt_error *err)
{
  memset(c, 0, sizeof *c);
  FILE *f = fopen(path, "r");
  if (!f)
    return dt_error_set(err, path, 0, 0, "cannot read the reference table: %s", strerror(errno));
  c->path = dt_xstrdup(path);
  char buf[4096];
  size_t line = 0;
  while (fgets(buf, sizeof buf, f)) {
    line++;
    char *s = trim(buf);
    if (!*s || *s == '#')
      continue;
    if (!c->head) {
      c->nhead = split(s, &c->head);
      continue;
    }
    c->rows = dt_grow(c->rows, &c->cap, c->n, sizeof *c->rows);
    csv_row *r = &c->rows[c->n++];
    r->line = line;
    r->nf = split(s, &r->f);
    if (r->nf != c->nhead) {
      fclose(f);
      return dt_error_set(err, path, (long)line, 0, "row has %zu fields but the header has %zu", r->nf, c->nhead);
    }
  }
  fclose(f);
  if (!c->head)
    return dt_error_set(err, path, 0, 0, "no header line (only comments or nothing)");
  return DT_OK;
}

static int csv_col(const csv *c, const char *name, dt_error *err)
{
  for (size_t i = 0; i < c->nhead; i++)
    if (strcmp(c->head[i], name) == 0)
      return (int)i;
  return dt_error_set(err, c->path, 0, 0, "no column '%s' in the header", name), -1;
}

static int num(const csv *c, const csv_row *r, int col, double *out, dt_error *err)
{
  char *end;
  errno = 0;
  double v = strtod(r->f[col], &end);
  if (!r->f[col][0] || *end || errno == ERANGE || !isfinite(v) || v < 0)
    return dt_error_set(err, c->path, (long)r->line, 0, "column '%s': expected a non-negative number, found '%s'",
                        c->head[col], r->f[col]);
  *out = v;
  return DT_OK;
}

static int size_of(const csv *c, const csv_row *r, int col, uint64_t *out, dt_error *err)
{
  double v;
  if (num(c, r, col, &v, err) != DT_OK)
    return DT_ERR;
  if (v < 1 || v != floor(v) || v > 1e18)
    return dt_error_set(err, c->path, (long)r->line, 0, "size_bytes: expected a whole number of bytes, found '%s'",
                        r->f[col]);
  *out = (uint64_t)v;
  return DT_OK;
}

/* "2x8" -> nodes 2, GPUs per node 8 */
static int parse_config(const char *s, int *nodes, int *per_node)
{
  const char *x = strchr(s, 'x');
  char first[32];
  long long a, b;
  if (!x || (size_t)(x - s) >= sizeof first)
    return -1;
  snprintf(first, sizeof first, "%.*s", (int)(x - s), s);
  if (dt_parse_whole(first, 1, 100000, &a) != 0 || dt_parse_whole(x + 1, 1, 1024, &b) != 0)
    return -1;
  *nodes = (int)a;
  *per_node = (int)b;
  return 0;
}

static void add_point(table *t, const point *p)
{
  t->pts = dt_grow(t->pts, &t->cap, t->n, sizeof *t->pts);
  t->pts[t->n++] = *p;
}

/* The tables of one spec (appended to *tables). */
static int load_spec(const char *dir, const table_spec *s, table **tables, size_t *nt, size_t *cap, dt_error *err)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, s->csv);
  csv c;
  if (csv_read(path, &c, err) != DT_OK) {
    csv_free(&c);
    return DT_ERR;
  }
  int rc = DT_ERR;
  char stem[128];
  snprintf(stem, sizeof stem, "%s", s->csv);
  char *dot = strrchr(stem, '.');
  if (dot)
    *dot = '\0';
  int size_col = csv_col(&c, "size_bytes", err);
  if (size_col < 0)
    goto done;
  if (s->shape == SHAPE_SWEEP) {
    char cols[256];
    snprintf(cols, sizeof cols, "%s", s->columns);
    for (char *save = NULL, *name = strtok_r(cols, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
      int col = csv_col(&c, name, err);
      if (col < 0)
        goto done;
      *tables = dt_grow(*tables, cap, *nt, sizeof **tables);
      table *t = &(*tables)[(*nt)++];
      memset(t, 0, sizeof *t);
      snprintf(t->name, sizeof t->name, "%s/%s", stem, name);
      snprintf(t->column, sizeof t->column, "%s", name);
      t->spec = s;
      for (size_t r = 0; r < c.n; r++) {
        point p;
        memset(&p, 0, sizeof p);
        snprintf(p.config, sizeof p.config, "%s", s->config);
        p.op = dt_bench_op_find(s->op);
        p.m = METRIC_TIME;
        p.line = c.rows[r].line;
        if (size_of(&c, &c.rows[r], size_col, &p.size, err) != DT_OK || num(&c, &c.rows[r], col, &p.measured, err))
          goto done;
        add_point(t, &p);
      }
    }
  } else {
    int cfg_col = csv_col(&c, "configuration", err), met_col = cfg_col >= 0 ? csv_col(&c, "metric", err) : -1;
    if (cfg_col < 0 || met_col < 0)
      goto done;
    *tables = dt_grow(*tables, cap, *nt, sizeof **tables);
    table *t = &(*tables)[(*nt)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", stem);
    snprintf(t->column, sizeof t->column, "all");
    t->spec = s;
    for (size_t r = 0; r < c.n; r++) {
      const csv_row *row = &c.rows[r];
      int nodes, per_node;
      if (parse_config(row->f[cfg_col], &nodes, &per_node) != 0) {
        dt_error_set(err, c.path, (long)row->line, 0, "configuration: expected NODESxGPUS such as '2x8', found '%s'",
                     row->f[cfg_col]);
        goto done;
      }
      metric m;
      if (strcmp(row->f[met_col], "latency_us") == 0)
        m = METRIC_TIME;
      else if (strcmp(row->f[met_col], "busbw_GBps") == 0)
        m = METRIC_BUSBW;
      else {
        dt_error_set(err, c.path, (long)row->line, 0, "metric: expected latency_us or busbw_GBps, found '%s'",
                     row->f[met_col]);
        goto done;
      }
      for (size_t k = 0; k < sizeof matrix_ops / sizeof matrix_ops[0]; k++) {
        int col = csv_col(&c, matrix_ops[k].column, err);
        if (col < 0)
          goto done;
        point p;
        memset(&p, 0, sizeof p);
        snprintf(p.config, sizeof p.config, "%s", row->f[cfg_col]);
        p.op = dt_bench_op_find(matrix_ops[k].op);
        p.m = m;
        p.line = row->line;
        if (size_of(&c, row, size_col, &p.size, err) != DT_OK || num(&c, row, col, &p.measured, err) != DT_OK)
          goto done;
        add_point(t, &p);
      }
    }
  }
  rc = DT_OK;
done:
  csv_free(&c);
  return rc;
}

/* ---- running ---- */

/* One benchmark: a platform, a configuration, an op and the sizes its points need. */
typedef struct job {
  const table_spec *spec;
  char config[16];
  const dt_bench_op *op;
  uint64_t *sizes;
  size_t nsizes, cap;
  dt_bench_row *rows;
} job;

static job *find_job(job **jobs, size_t *nj, size_t *cap, const table_spec *s, const point *p)
{
  for (size_t i = 0; i < *nj; i++) {
    job *j = &(*jobs)[i];
    if (strcmp(j->spec->platform, s->platform) == 0 && j->spec->gpus_per_process == s->gpus_per_process &&
        strcmp(j->config, p->config) == 0 && j->op == p->op)
      return j;
  }
  *jobs = dt_grow(*jobs, cap, *nj, sizeof **jobs);
  job *j = &(*jobs)[(*nj)++];
  memset(j, 0, sizeof *j);
  j->spec = s;
  snprintf(j->config, sizeof j->config, "%s", p->config);
  j->op = p->op;
  return j;
}

static size_t job_size_index(job *j, uint64_t size, int add)
{
  for (size_t i = 0; i < j->nsizes; i++)
    if (j->sizes[i] == size)
      return i;
  if (!add)
    return (size_t)-1;
  j->sizes = dt_grow(j->sizes, &j->cap, j->nsizes, sizeof *j->sizes);
  j->sizes[j->nsizes] = size;
  return j->nsizes++;
}

static int run_job(const char *platform_dir, job *j, dt_error *err)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", platform_dir, j->spec->platform);
  dt_platform *p = NULL;
  if (dt_platform_load(path, &p, err) != DT_OK)
    return DT_ERR;
  int nodes = 1, per_node = 1;
  parse_config(j->config, &nodes, &per_node);
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.op = j->op;
  o.ngpus = nodes * per_node;
  o.gpus_per_node = per_node;
  o.gpus_per_process = j->spec->gpus_per_process;
  o.launch_s = DT_BENCH_DEFAULT_LAUNCH_S;
  o.sizes = j->sizes;
  o.nsizes = j->nsizes;
  int rc = dt_bench_run_forked(p, &o, &j->rows, err);
  if (rc != DT_OK)
    dt_error_prefix(err, "%s %s on %s: ", j->op->name, j->config, path);
  dt_platform_free(p);
  return rc;
}

/* ---- report ---- */

static double rel_error(const point *p)
{
  return p->measured > 0 ? (p->simulated - p->measured) / p->measured : 0;
}

/* Median of |error| over the points with size >= 1 MiB (big) or below; NAN when there are none. */
static double median_error(const table *t, int big, size_t *count)
{
  double *v = dt_xmalloc(sizeof *v * (t->n + 1));
  size_t k = 0;
  for (size_t i = 0; i < t->n; i++)
    if (((double)t->pts[i].size >= MIB) == big)
      v[k++] = fabs(rel_error(&t->pts[i]));
  *count = k;
  dt_sort_doubles(v, k);
  double m = dt_median_sorted(v, k);
  free(v);
  return m;
}

static void print_median(const char *what, double m, size_t n, double target)
{
  if (n == 0)
    printf("  median |error| %-8s: no rows\n", what);
  else
    printf("  median |error| %-8s: %5.1f %% over %zu rows (target <= %.0f %%: %s)\n", what, m * 100, n, target * 100,
           m <= target ? "met" : "missed");
}

static void print_text(const char *platform_dir, const table *tables, size_t nt, const run_cost *cost)
{
  for (size_t ti = 0; ti < nt; ti++) {
    const table *t = &tables[ti];
    printf("== %s: %s/%s, %d GPU%s per process\n", t->name, platform_dir, t->spec->platform,
           t->spec->gpus_per_process, t->spec->gpus_per_process == 1 ? "" : "s");
    printf("  %-6s  %-14s  %12s  %-10s  %10s  %10s  %8s\n", "config", "op", "size_bytes", "metric", "measured",
           "simulated", "error");
    for (size_t i = 0; i < t->n; i++) {
      const point *p = &t->pts[i];
      printf("  %-6s  %-14s  %12llu  %-10s  %10.2f  %10.2f  %+7.1f%%\n", p->config, p->op->name,
             (unsigned long long)p->size, metric_names[p->m], p->measured, p->simulated, rel_error(p) * 100);
    }
    size_t nb, ns;
    double mb = median_error(t, 1, &nb), ms = median_error(t, 0, &ns);
    print_median(">= 1 MiB", mb, nb, TARGET_GE_1MIB);
    print_median("< 1 MiB", ms, ns, TARGET_LT_1MIB);
    printf("\n");
  }
  printf("summary (median |error|, rows >= 1 MiB / < 1 MiB):\n");
  for (size_t ti = 0; ti < nt; ti++) {
    size_t nb, ns;
    double mb = median_error(&tables[ti], 1, &nb), ms = median_error(&tables[ti], 0, &ns);
    printf("  %-36s  %6.1f %%  %6.1f %%\n", tables[ti].name, nb ? mb * 100 : 0.0, ns ? ms * 100 : 0.0);
  }
  printf("simulated: %zu benchmarks (one forked simulation each), %zu sizes, %.2f CPU s, %.2f s wall\n",
         cost->simulations, cost->sizes, cost->cpu_s, cost->wall_s);
}

static void json_num(yajl_gen g, double v)
{
  if (!isfinite(v)) {
    yajl_gen_null(g);
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", v);
  yajl_gen_number(g, buf, strlen(buf));
}

static void json_key(yajl_gen g, const char *k)
{
  yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void json_kstr(yajl_gen g, const char *k, const char *v)
{
  json_key(g, k);
  dt_json_string(g, v);
}

static void json_kint(yajl_gen g, const char *k, long long v)
{
  json_key(g, k);
  yajl_gen_integer(g, v);
}

/* The --json object, through yajl so that every string is quoted and escaped (a quote in a path broke the
 * printf version). */
static void print_json(const char *platform_dir, const table *tables, size_t nt, const run_cost *cost)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  yajl_gen_map_open(g);
  json_key(g, "tables");
  yajl_gen_array_open(g);
  for (size_t ti = 0; ti < nt; ti++) {
    const table *t = &tables[ti];
    char platform[1024];
    snprintf(platform, sizeof platform, "%s/%s", platform_dir, t->spec->platform);
    yajl_gen_map_open(g);
    json_kstr(g, "name", t->name);
    json_kstr(g, "csv", t->spec->csv);
    json_kstr(g, "column", t->column);
    json_kstr(g, "platform", platform);
    json_kint(g, "gpus_per_process", t->spec->gpus_per_process);
    json_key(g, "rows");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < t->n; i++) {
      const point *p = &t->pts[i];
      yajl_gen_map_open(g);
      json_kstr(g, "config", p->config);
      json_kstr(g, "op", p->op->name);
      json_kint(g, "size_bytes", (long long)p->size);
      json_kstr(g, "metric", metric_names[p->m]);
      json_key(g, "measured");
      json_num(g, p->measured);
      json_key(g, "simulated");
      json_num(g, p->simulated);
      json_key(g, "rel_error");
      json_num(g, rel_error(p));
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    size_t nb, ns;
    double mb = median_error(t, 1, &nb), ms = median_error(t, 0, &ns);
    json_key(g, "median_error_ge_1MiB");
    json_num(g, mb);
    json_key(g, "median_error_lt_1MiB");
    json_num(g, ms);
    json_kint(g, "rows_ge_1MiB", (long long)nb);
    json_kint(g, "rows_lt_1MiB", (long long)ns);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  json_kint(g, "simulations", (long long)cost->simulations);
  json_kint(g, "sizes", (long long)cost->sizes);
  json_key(g, "cpu_s");
  json_num(g, cost->cpu_s);
  json_key(g, "wall_s");
  json_num(g, cost->wall_s);
  yajl_gen_map_close(g);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf(g, &buf, &len);
  fwrite(buf, 1, len, stdout);
  putchar('\n');
  yajl_gen_free(g);
}

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim validate: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help validate' for usage\n");
  return EXIT_USAGE;
}

int dt_cmd_validate_dirs(const char *cmd, const char *refs, int refs_given, const char *platforms,
                         int platforms_given)
{
  const char *dirs[2] = {refs, platforms}, *flags[2] = {"--references", "--platforms"};
  const char *what[2] = {"the reference measurements", "the platform files"};
  const int given[2] = {refs_given, platforms_given};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    int e = stat(dirs[i], &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
    if (!e)
      continue;
    if (given[i]) {
      fprintf(stderr, "dtsim %s: %s %s: cannot read it as the folder of %s: %s\nrun 'dtsim help validate' for "
              "usage\n", cmd, flags[i], dirs[i], what[i], strerror(e));
      return EXIT_USAGE;
    }
    /* the default, relative to the current folder: dtsim does not guess where a clone is (an installed or
     * copied binary has no source tree beside it), it says what to give */
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
      snprintf(cwd, sizeof cwd, "?");
    fprintf(stderr, "dtsim %s: %s are read from '%s' by default, relative to the current folder, and %s has none "
            "(%s): run from the root of the dtsim repository, or give %s DIR (the repository's %s)%s%s%s\nrun 'dtsim "
            "help validate' for usage\n", cmd, what[i], dirs[i], cwd, strerror(e), flags[i], dirs[i],
            i == 0 && !platforms_given ? " and --platforms DIR (its " : "", i == 0 && !platforms_given ? platforms : "",
            i == 0 && !platforms_given ? ")" : "");
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

int dt_cmd_validate(int argc, char **argv)
{
  enum { O_REFS = 1000, O_PLATFORMS, O_JSON };
  static const struct option longopts[] = {{"references", required_argument, NULL, O_REFS},
                                           {"platforms", required_argument, NULL, O_PLATFORMS},
                                           {"json", no_argument, NULL, O_JSON},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--e2e") == 0)
      return dt_cmd_validate_e2e(argc, argv);
  const char *refs = "validation/references", *platform_dir = "platforms";
  int json = 0, opt, refs_given = 0, platforms_given = 0;
  if (dt_cli_check_repeats("validate", argc, argv, ":h", longopts, "") != 0)
    return 2;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (opt) {
    case O_REFS:
      refs = optarg;
      refs_given = 1;
      break;
    case O_PLATFORMS:
      platform_dir = optarg;
      platforms_given = 1;
      break;
    case O_JSON:
      json = 1;
      break;
    case 'h':
      fputs(dt_cmd_validate_usage, stdout);
      return EXIT_OK;
    case ':':
      return usage("option '%s' requires an argument", argv[optind - 1]);
    default:
      return dt_cli_bad_option("validate", opt, argv, longopts); /* the nearest option, an ambiguous abbreviation */
    }
  }
  if (optind < argc)
    return usage("unexpected argument '%s'", argv[optind]);
  if (dt_cmd_validate_dirs("validate", refs, refs_given, platform_dir, platforms_given) != EXIT_OK)
    return EXIT_USAGE;

  int rc = EXIT_USAGE;
  dt_error err;
  dt_error_clear(&err);
  table *tables = NULL;
  size_t nt = 0, tcap = 0, nj = 0, jcap = 0;
  job *jobs = NULL;
  for (size_t s = 0; s < NSPECS; s++)
    if (load_spec(refs, &specs[s], &tables, &nt, &tcap, &err) != DT_OK)
      goto fail;
  /* one benchmark per (platform, -g, configuration, op) with the union of its sizes */
  for (size_t ti = 0; ti < nt; ti++)
    for (size_t i = 0; i < tables[ti].n; i++) {
      job *j = find_job(&jobs, &nj, &jcap, tables[ti].spec, &tables[ti].pts[i]);
      job_size_index(j, tables[ti].pts[i].size, 1);
    }
  run_cost cost = {nj, 0, children_cpu_s(), dt_wall_now()};
  for (size_t k = 0; k < nj; k++) {
    if (run_job(platform_dir, &jobs[k], &err) != DT_OK)
      goto fail;
    cost.sizes += jobs[k].nsizes;
  }
  cost.cpu_s = children_cpu_s() - cost.cpu_s;
  cost.wall_s = dt_wall_now() - cost.wall_s;
  for (size_t ti = 0; ti < nt; ti++)
    for (size_t i = 0; i < tables[ti].n; i++) {
      point *p = &tables[ti].pts[i];
      job *j = find_job(&jobs, &nj, &jcap, tables[ti].spec, p);
      const dt_bench_row *row = &j->rows[job_size_index(j, p->size, 0)];
      p->simulated = p->m == METRIC_TIME ? row->time_s * 1e6 : row->busbw / 1e9;
    }
  if (json)
    print_json(platform_dir, tables, nt, &cost);
  else
    print_text(platform_dir, tables, nt, &cost);
  rc = EXIT_OK;
  goto cleanup;
fail:;
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
cleanup:
  for (size_t k = 0; k < nj; k++) {
    free(jobs[k].sizes);
    free(jobs[k].rows);
  }
  free(jobs);
  for (size_t ti = 0; ti < nt; ti++)
    free(tables[ti].pts);
  free(tables);
  return rc;
}
