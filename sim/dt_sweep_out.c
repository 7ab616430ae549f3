/* Sweep outputs: the result cache's files, the CSV and JSON-lines tables, the sensitivity ranking and the
 * gnuplot plot. The runs' JSON is read with yajl's tree API; numbers copied into the CSV keep the run's digits. */
#include "dt_sweep.h"

#include "../common/dt_json.h"
#include "../common/dt_outfile.h"
#include "../common/dt_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

void dt_sweep_cache_path(const dt_sweep_plan *p, const dt_sweep_point *pt, const char *ext, char *buf,
                         size_t size)
{
  snprintf(buf, size, "%s/results/%s.%s", p->spec->dir, pt->hash, ext);
}

int dt_sweep_cached(const dt_sweep_plan *p, const dt_sweep_point *pt)
{
  char path[4400];
  struct stat st;
  if (pt->reason || !pt->hash[0])
    return 0;
  dt_sweep_cache_path(p, pt, "fail", path, sizeof path);
  if (stat(path, &st) == 0)
    return 1;
  dt_sweep_cache_path(p, pt, "json", path, sizeof path);
  return stat(path, &st) == 0;
}

void dt_sweep_result_load(const dt_sweep_plan *p, const dt_sweep_point *pt, dt_sweep_result *r)
{
  memset(r, 0, sizeof *r);
  if (pt->reason) {
    r->status = DT_POINT_IMPOSSIBLE;
    r->reason = dt_xstrdup(pt->reason);
    return;
  }
  char path[4400];
  dt_sweep_cache_path(p, pt, "json", path, sizeof path);
  size_t len;
  r->json = dt_sweep_read_file(path, &len);
  if (r->json)
    while (len > 0 && (r->json[len - 1] == '\n' || r->json[len - 1] == '\r'))
      r->json[--len] = '\0';
  dt_sweep_cache_path(p, pt, "fail", path, sizeof path);
  char *fail = dt_sweep_read_file(path, NULL);
  if (fail) {
    r->status = DT_POINT_FAILED;
    r->reason = dt_xstrndup(fail, strcspn(fail, "\n"));
    free(fail);
  } else if (r->json) {
    r->status = DT_POINT_OK;
  } else {
    r->status = DT_POINT_MISSING;
    r->reason = dt_xstrdup("not run yet");
  }
}

void dt_sweep_result_clear(dt_sweep_result *r)
{
  free(r->reason);
  free(r->json);
  memset(r, 0, sizeof *r);
}

static const char *status_name(dt_point_status s)
{
  static const char *const names[] = {"ok", "failed", "missing", "impossible"};
  return names[s];
}

/* ---- rows: what each point's JSON says ---- */

static const char *const kind_order[] = {"allreduce", "reducescatter", "broadcast", "reduce", "allgather",
                                         "alltoall",  "barrier",       "send",      "other"};
#define NKINDS (sizeof kind_order / sizeof kind_order[0])

typedef struct cell {
  char *col;   /* column name */
  char *value; /* text */
} cell;

typedef struct row {
  yajl_val tree;
  int has_iter;
  double iter;
  char makespan[64], iteration[64], compute[64], comm[64], exposed[64];
  char *kind_time[NKINDS];
  size_t nextra;
  cell *extra;
} row;

struct dt_sweep_table {
  size_t n;
  row *rows;
  int kind_used[NKINDS];
  size_t ncols;
  char **cols; /* extra column names, first-seen order */
};
typedef struct dt_sweep_table table;

static void fmt_g(char *buf, size_t size, double v)
{
  if (!isfinite(v))
    v = 0;
  snprintf(buf, size, "%.17g", v == 0 ? 0.0 : v);
}

static const char *raw_number(yajl_val v)
{
  return v && YAJL_IS_NUMBER(v) ? v->u.number.r : NULL;
}

static void add_extra(table *t, row *rw, const char *col, yajl_val v)
{
  const char *text;
  if (YAJL_IS_STRING(v))
    text = YAJL_GET_STRING(v);
  else if (YAJL_IS_NUMBER(v))
    text = v->u.number.r;
  else if (YAJL_IS_TRUE(v))
    text = "true";
  else if (YAJL_IS_FALSE(v))
    text = "false";
  else
    return;
  size_t c;
  for (c = 0; c < t->ncols; c++)
    if (strcmp(t->cols[c], col) == 0)
      break;
  if (c == t->ncols) {
    t->cols = dt_xrealloc(t->cols, sizeof *t->cols * (t->ncols + 1));
    t->cols[t->ncols++] = dt_xstrdup(col);
  }
  rw->extra = dt_xrealloc(rw->extra, sizeof *rw->extra * (rw->nextra + 1));
  rw->extra[rw->nextra].col = dt_xstrdup(col);
  rw->extra[rw->nextra++].value = dt_xstrdup(text);
}

static int known_top(const char *k)
{
  static const char *const known[] = {"schema", "makespan_s", "ranks", "iterations_s", "per_rank",
                                      "by_kind", "notes", "deadlock"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(k, known[i]) == 0)
      return 1;
  return 0;
}

/* Scalars at the top level or inside objects up to two levels down, named by their dotted path: this is
 * where the bottleneck report's fields (bound, busiest link class, exposed communication per dimension) go. */
static void take_extras(table *t, row *rw, const char *prefix, yajl_val obj, int depth)
{
  for (size_t i = 0; i < obj->u.object.len; i++) {
    const char *k = obj->u.object.keys[i];
    yajl_val v = obj->u.object.values[i];
    if (depth == 0 && known_top(k))
      continue;
    char col[512];
    snprintf(col, sizeof col, "%s%s%s", prefix, *prefix ? "." : "", k);
    if (YAJL_IS_OBJECT(v)) {
      if (depth < 2)
        take_extras(t, rw, col, v, depth + 1);
    } else {
      add_extra(t, rw, col, v);
    }
  }
}

static void fill_row(table *t, row *rw, const char *json)
{
  char errbuf[256];
  size_t deep;
  if (dt_json_depth_scan(json, strlen(json), &deep) != 0) /* not a report dtsim wrote: left blank, as unparsable */
    return;
  rw->tree = yajl_tree_parse(json, errbuf, sizeof errbuf);
  if (!rw->tree || !YAJL_IS_OBJECT(rw->tree))
    return;
  const char *mk[] = {"makespan_s", NULL};
  const char *ms = raw_number(yajl_tree_get(rw->tree, mk, yajl_t_number));
  snprintf(rw->makespan, sizeof rw->makespan, "%s", ms ? ms : "");
  const char *it[] = {"iterations_s", NULL};
  yajl_val iters = yajl_tree_get(rw->tree, it, yajl_t_array);
  if (iters && iters->u.array.len > 0) {
    double sum = 0;
    for (size_t i = 0; i < iters->u.array.len; i++)
      sum += YAJL_IS_NUMBER(iters->u.array.values[i]) ? YAJL_GET_DOUBLE(iters->u.array.values[i]) : 0;
    rw->iter = sum / (double)iters->u.array.len;
    rw->has_iter = 1;
    if (iters->u.array.len == 1 && raw_number(iters->u.array.values[0]))
      snprintf(rw->iteration, sizeof rw->iteration, "%s", raw_number(iters->u.array.values[0]));
    else
      fmt_g(rw->iteration, sizeof rw->iteration, rw->iter);
  }
  const char *pr[] = {"per_rank", NULL};
  yajl_val ranks = yajl_tree_get(rw->tree, pr, yajl_t_array);
  if (ranks && ranks->u.array.len > 0) {
    const char *names[3] = {"compute_s", "comm_s", "exposed_comm_s"};
    char *outs[3] = {rw->compute, rw->comm, rw->exposed};
    for (int k = 0; k < 3; k++) {
      double sum = 0;
      for (size_t i = 0; i < ranks->u.array.len; i++) {
        const char *path[] = {names[k], NULL};
        yajl_val v = yajl_tree_get(ranks->u.array.values[i], path, yajl_t_number);
        sum += v ? YAJL_GET_DOUBLE(v) : 0;
      }
      fmt_g(outs[k], 64, sum / (double)ranks->u.array.len);
    }
  }
  const char *bk[] = {"by_kind", NULL};
  yajl_val kinds = yajl_tree_get(rw->tree, bk, yajl_t_object);
  for (size_t i = 0; kinds && i < kinds->u.object.len; i++) {
    size_t k;
    for (k = 0; k < NKINDS; k++)
      if (strcmp(kind_order[k], kinds->u.object.keys[i]) == 0)
        break;
    if (k == NKINDS)
      continue;
    const char *tp[] = {"time_s", NULL};
    const char *v = raw_number(yajl_tree_get(kinds->u.object.values[i], tp, yajl_t_number));
    if (v) {
      rw->kind_time[k] = dt_xstrdup(v);
      t->kind_used[k] = 1;
    }
  }
  take_extras(t, rw, "", rw->tree, 0);
}

dt_sweep_table *dt_sweep_table_make(const dt_sweep_plan *p, const dt_sweep_result *r)
{
  table *t = dt_xcalloc(1, sizeof *t);
  t->n = p->npoints;
  t->rows = dt_xcalloc(t->n, sizeof *t->rows);
  for (size_t i = 0; i < t->n; i++)
    if (r[i].json)
      fill_row(t, &t->rows[i], r[i].json);
  return t;
}

void dt_sweep_table_free(dt_sweep_table *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->n; i++) {
    row *rw = &t->rows[i];
    if (rw->tree)
      yajl_tree_free(rw->tree);
    for (size_t k = 0; k < NKINDS; k++)
      free(rw->kind_time[k]);
    for (size_t e = 0; e < rw->nextra; e++) {
      free(rw->extra[e].col);
      free(rw->extra[e].value);
    }
    free(rw->extra);
  }
  for (size_t c = 0; c < t->ncols; c++)
    free(t->cols[c]);
  free(t->cols);
  free(t->rows);
  free(t);
}

/* ---- CSV ---- */

static void csv_field(FILE *f, const char *s, int first)
{
  if (!first)
    fputc(',', f);
  if (!s)
    return;
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
}

int dt_sweep_write_csv(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                       dt_error *err)
{
  const dt_sweep_spec *s = p->spec;
  csv_field(f, "point", 1);
  csv_field(f, "status", 0);
  for (size_t a = 0; a < s->naxes; a++)
    csv_field(f, s->axes[a].key, 0);
  const char *fixed[] = {"makespan_s", "iteration_s", "compute_s", "comm_s", "exposed_comm_s"};
  for (size_t k = 0; k < 5; k++)
    csv_field(f, fixed[k], 0);
  char name[128];
  for (size_t k = 0; k < NKINDS; k++)
    if (t->kind_used[k]) {
      snprintf(name, sizeof name, "%s_time_s", kind_order[k]);
      csv_field(f, name, 0);
    }
  for (size_t c = 0; c < t->ncols; c++)
    csv_field(f, t->cols[c], 0);
  csv_field(f, "reason", 0);
  csv_field(f, "hash", 0);
  fputc('\n', f);
  for (size_t i = 0; i < p->npoints; i++) {
    const dt_sweep_point *pt = &p->points[i];
    row *rw = &t->rows[i];
    char idx[32];
    snprintf(idx, sizeof idx, "%zu", pt->index);
    csv_field(f, idx, 1);
    csv_field(f, status_name(r[i].status), 0);
    for (size_t a = 0; a < s->naxes; a++)
      csv_field(f, s->axes[a].labels[pt->choice[a]], 0);
    const char *vals[] = {rw->makespan, rw->iteration, rw->compute, rw->comm, rw->exposed};
    for (size_t k = 0; k < 5; k++)
      csv_field(f, vals[k], 0);
    for (size_t k = 0; k < NKINDS; k++)
      if (t->kind_used[k])
        csv_field(f, rw->kind_time[k] ? rw->kind_time[k] : (rw->tree ? "0" : ""), 0);
    for (size_t c = 0; c < t->ncols; c++) {
      const char *v = NULL;
      for (size_t e = 0; e < rw->nextra; e++)
        if (strcmp(rw->extra[e].col, t->cols[c]) == 0)
          v = rw->extra[e].value;
      csv_field(f, v, 0);
    }
    csv_field(f, r[i].reason, 0);
    csv_field(f, pt->hash, 0);
    fputc('\n', f);
  }
  if (fflush(f) != 0 || ferror(f))
    return dt_error_set(err, NULL, 0, 0, "cannot write the CSV table: %s", strerror(errno));
  return DT_OK;
}

/* ---- JSON lines ---- */

int dt_sweep_write_jsonl(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                         dt_error *err)
{
  const dt_sweep_spec *s = p->spec;
  yajl_gen g = yajl_gen_alloc(NULL);
  if (!g)
    return dt_error_set(err, NULL, 0, 0, "cannot allocate the JSON generator");
  yajl_gen_config(g, yajl_gen_validate_utf8, 0);
  for (size_t i = 0; i < p->npoints; i++) {
    const dt_sweep_point *pt = &p->points[i];
    yajl_gen_map_open(g);
    dt_json_string(g, "point");
    yajl_gen_integer(g, (long long)pt->index);
    dt_json_string(g, "status");
    dt_json_string(g, status_name(r[i].status));
    dt_json_string(g, "params");
    yajl_gen_map_open(g);
    for (size_t a = 0; a < s->naxes; a++) {
      dt_json_string(g, s->axes[a].key);
      dt_json_string(g, s->axes[a].labels[pt->choice[a]]);
    }
    yajl_gen_map_close(g);
    if (pt->hash[0]) {
      dt_json_string(g, "hash");
      dt_json_string(g, pt->hash);
    }
    if (r[i].reason) {
      dt_json_string(g, "reason");
      dt_json_string(g, r[i].reason);
    }
    if (t->rows[i].has_iter) {
      dt_json_string(g, "iteration_s");
      yajl_gen_number(g, t->rows[i].iteration, strlen(t->rows[i].iteration));
    }
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    /* the map is still open: the run's JSON goes in verbatim as "result" */
    fwrite(buf, 1, len, f);
    if (r[i].json && t->rows[i].tree)
      fprintf(f, ",\"result\":%s", r[i].json);
    fputs("}\n", f);
    yajl_gen_free(g);
    g = yajl_gen_alloc(NULL);
    yajl_gen_config(g, yajl_gen_validate_utf8, 0);
  }
  yajl_gen_free(g);
  if (fflush(f) != 0 || ferror(f))
    return dt_error_set(err, NULL, 0, 0, "cannot write the JSON lines: %s", strerror(errno));
  return DT_OK;
}

/* ---- sensitivity ranking ---- */

typedef struct rank_entry {
  size_t axis;
  double spread, lo, hi;
  size_t lo_v, hi_v;
  int valid;
} rank_entry;

static int cmp_rank(const void *a, const void *b)
{
  const rank_entry *x = a, *y = b;
  if (x->valid != y->valid)
    return y->valid - x->valid;
  if (x->spread != y->spread)
    return x->spread < y->spread ? 1 : -1;
  return x->axis < y->axis ? -1 : x->axis > y->axis;
}

void dt_sweep_print_ranking(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t)
{
  const dt_sweep_spec *s = p->spec;
  size_t nok = 0;
  double total = 0;
  for (size_t i = 0; i < p->npoints; i++)
    if (r[i].status == DT_POINT_OK && t->rows[i].has_iter) {
      nok++;
      total += t->rows[i].iter;
    }
  rank_entry *e = dt_xcalloc(s->naxes ? s->naxes : 1, sizeof *e);
  size_t ne = 0;
  for (size_t a = 0; a < s->naxes; a++) {
    if (s->axes[a].nvalues < 2)
      continue;
    size_t nv = s->axes[a].nvalues;
    double *sum = dt_xcalloc(nv, sizeof *sum);
    size_t *cnt = dt_xcalloc(nv, sizeof *cnt);
    for (size_t i = 0; i < p->npoints; i++)
      if (r[i].status == DT_POINT_OK && t->rows[i].has_iter) {
        sum[p->points[i].choice[a]] += t->rows[i].iter;
        cnt[p->points[i].choice[a]]++;
      }
    rank_entry *x = &e[ne++];
    x->axis = a;
    for (size_t v = 0; v < nv; v++) {
      if (!cnt[v])
        continue;
      double m = sum[v] / (double)cnt[v];
      if (!x->valid || m < x->lo) {
        x->lo = m;
        x->lo_v = v;
      }
      if (!x->valid || m > x->hi) {
        x->hi = m;
        x->hi_v = v;
      }
      x->valid = 1;
    }
    x->spread = x->valid ? x->hi - x->lo : 0;
    free(sum);
    free(cnt);
  }
  qsort(e, ne, sizeof *e, cmp_rank);
  fprintf(f, "sensitivity of the iteration time (spread of its mean over each axis's values, %zu successful "
             "point%s):\n", nok, nok == 1 ? "" : "s");
  if (ne == 0)
    fprintf(f, "  no axis has two or more values\n");
  else
    fprintf(f, "%4s  %-28s %14s %8s  %-26s %-26s\n", "rank", "axis", "spread_s", "of mean", "lowest mean at",
            "highest mean at");
  double mean = nok ? total / (double)nok : 0;
  for (size_t i = 0; i < ne; i++) {
    const dt_sweep_axis *ax = &s->axes[e[i].axis];
    if (!e[i].valid) {
      fprintf(f, "%4zu  %-28s %14s %8s  (no successful point)\n", i + 1, ax->key, "-", "-");
      continue;
    }
    char lo[128], hi[128], pct[32];
    snprintf(lo, sizeof lo, "%s (%.6g s)", ax->labels[e[i].lo_v], e[i].lo);
    snprintf(hi, sizeof hi, "%s (%.6g s)", ax->labels[e[i].hi_v], e[i].hi);
    snprintf(pct, sizeof pct, "%.1f %%", mean > 0 ? 100.0 * e[i].spread / mean : 0.0);
    fprintf(f, "%4zu  %-28s %14.6g %8s  %-26s %-26s\n", i + 1, ax->key, e[i].spread, pct,
            e[i].spread > 0 ? lo : "-", e[i].spread > 0 ? hi : "-");
  }
  free(e);
}

/* ---- plot ---- */

static int find_axis(const dt_sweep_spec *s, const char *key, size_t *out)
{
  for (size_t a = 0; a < s->naxes; a++)
    if (strcmp(s->axes[a].key, key) == 0) {
      *out = a;
      return 0;
    }
  return -1;
}

static void gp_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void gp_tics(FILE *f, const char *which, const dt_sweep_axis *ax)
{
  fprintf(f, "set %s (", which);
  for (size_t v = 0; v < ax->nvalues; v++) {
    if (v)
      fputs(", ", f);
    gp_str(f, ax->labels[v]);
    fprintf(f, " %zu", v);
  }
  fputs(")\n", f);
}

/* "a (3 values), b (2 values)": the axes with two or more values, for messages ("none" when there is none). */
static void list_axes(const dt_sweep_spec *s, char *buf, size_t size)
{
  size_t used = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < s->naxes && used + 1 < size; a++)
    if (s->axes[a].nvalues > 1) {
      int w = snprintf(buf + used, size - used, "%s%s (%zu values)", used ? ", " : "", s->axes[a].key,
                       s->axes[a].nvalues);
      used = w < 0 || (size_t)w >= size - used ? size - 1 : used + (size_t)w;
    }
  if (!buf[0])
    snprintf(buf, size, "none");
}

/* The plotted axes: x (*ax) and by (*ay, SIZE_MAX for none) as given or picked (the first axes with two or more
 * values that are not pinned by --plot-where), and the pinned values (wa[k], wv[k] of where[k], when wa is not
 * NULL). Every check that needs only the spec is here, so that dt_sweep_plot_check refuses before the first point
 * what dt_sweep_plot would (was: an axis of one value was taken, and gnuplot warned "Image grid must be at least 4
 * points" on stderr). Returns DT_OK or DT_ERR with err set. */
static int plot_axes(const char *out, const char *x, const char *by, int heatmap, const char *const *where,
                     size_t nwhere, const dt_sweep_spec *s, size_t *ax, size_t *ay, size_t *wa, size_t *wv,
                     dt_error *err)
{
  char axes[1024];
  list_axes(s, axes, sizeof axes);
  const char *ext = strrchr(out, '.');
  struct stat st;
  if (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) /* was: "expected a file name ending" */
    return dt_error_set(err, NULL, 0, 0, "--plot '%s' is a device or a pipe: the plot is three files, the picture and "
                        "its data and gnuplot script beside it ('%s.dat', '%s.gp'); give a file name ending in .svg "
                        "or .png", out, out, out);
  if (!ext || (strcmp(ext, ".svg") != 0 && strcmp(ext, ".png") != 0))
    return dt_error_set(err, NULL, 0, 0, "--plot '%s': expected a file name ending in .svg or .png", out);
  *ax = *ay = SIZE_MAX;
  const char *names[2] = {x, by}, *flags[2] = {"--plot-x", "--plot-by"};
  size_t *slots[2] = {ax, ay};
  for (int i = 0; i < 2; i++) {
    if (!names[i])
      continue;
    if (find_axis(s, names[i], slots[i]) < 0)
      return dt_error_set(err, NULL, 0, 0, "%s '%s' is not an axis of the sweep; its axes with two or more values: "
                          "%s", flags[i], names[i], axes);
    const dt_sweep_axis *a = &s->axes[*slots[i]];
    if (a->nvalues < 2 && (i == 0 || heatmap))
      return dt_error_set(err, NULL, 0, 0, "%s '%s' has one value ('%s'): %s needs two or more along it; the "
                          "sweep's axes with two or more values: %s", flags[i], names[i], a->labels[0],
                          heatmap ? "a heatmap" : "a plot", axes);
  }
  if (x && by && *ax == *ay)
    return dt_error_set(err, NULL, 0, 0, "--plot-x and --plot-by name the same axis '%s'", x);
  for (size_t k = 0; k < nwhere; k++) {
    const char *eq = strchr(where[k], '=');
    char key[512];
    snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - where[k]) : 0, where[k]);
    size_t a, v = 0;
    int found = eq && find_axis(s, key, &a) == 0;
    for (; found && v < s->axes[a].nvalues; v++)
      if (strcmp(s->axes[a].labels[v], eq + 1) == 0)
        break;
    if (!found || v == s->axes[a].nvalues || a == *ax || a == *ay)
      return dt_error_set(err, NULL, 0, 0, "--plot-where '%s': expected AXIS=VALUE with a value of an axis that "
                                           "is not plotted", where[k]);
    if (wa) {
      wa[k] = a;
      wv[k] = v;
    }
  }
  for (size_t a = 0; a < s->naxes; a++) {
    int pinned = 0;
    for (size_t k = 0; k < nwhere; k++) {
      const char *eq = strchr(where[k], '=');
      pinned |= strlen(s->axes[a].key) == (size_t)(eq - where[k]) &&
                strncmp(s->axes[a].key, where[k], (size_t)(eq - where[k])) == 0;
    }
    if (s->axes[a].nvalues < 2 || a == *ax || a == *ay || pinned)
      continue;
    if (*ax == SIZE_MAX)
      *ax = a;
    else if (*ay == SIZE_MAX && !by)
      *ay = a;
  }
  if (*ax == SIZE_MAX)
    return dt_error_set(err, NULL, 0, 0, "--plot needs an axis with two or more values that is not pinned by "
                        "--plot-where; the sweep's: %s", axes);
  if (heatmap && *ay == SIZE_MAX)
    return dt_error_set(err, NULL, 0, 0, "--heatmap needs a second axis with two or more values (--plot-by); the "
                        "sweep's: %s", axes);
  return DT_OK;
}

int dt_sweep_plot_check(const char *out, const char *x, const char *by, int heatmap, const char *const *where,
                        size_t nwhere, const dt_sweep_spec *s, dt_error *err)
{
  size_t ax, ay;
  return plot_axes(out, x, by, heatmap, where, nwhere, s, &ax, &ay, NULL, NULL, err);
}

int dt_sweep_plot(const char *out, const char *x, const char *by, int heatmap, const char *const *where,
                  size_t nwhere, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                  dt_error *err)
{
  const dt_sweep_spec *s = p->spec;
  size_t ax, ay;
  size_t *wa = dt_xcalloc(nwhere + 1, sizeof *wa), *wv = dt_xcalloc(nwhere + 1, sizeof *wv);
  if (plot_axes(out, x, by, heatmap, where, nwhere, s, &ax, &ay, wa, wv, err) != DT_OK) {
    free(wa);
    free(wv);
    return DT_ERR;
  }
  const char *ext = strrchr(out, '.');
  int svg = strcmp(ext, ".svg") == 0; /* else .png */
  char fixed[1024] = "";
  for (size_t k = 0; k < nwhere; k++) {
    size_t used = strlen(fixed);
    snprintf(fixed + used, sizeof fixed - used, "%s%s", used ? ", " : "", where[k]);
  }
  size_t nx = s->axes[ax].nvalues, ny = ay == SIZE_MAX ? 1 : s->axes[ay].nvalues;
  double *sum = dt_xcalloc(nx * ny, sizeof *sum);
  size_t *cnt = dt_xcalloc(nx * ny, sizeof *cnt);
  int averaged = 0;
  for (size_t a = 0; a < s->naxes; a++) {
    int pinned = 0;
    for (size_t k = 0; k < nwhere; k++)
      pinned |= wa[k] == a;
    averaged |= a != ax && a != ay && s->axes[a].nvalues > 1 && !pinned;
  }
  for (size_t i = 0; i < p->npoints; i++) {
    int keep = 1;
    for (size_t k = 0; k < nwhere; k++)
      keep &= p->points[i].choice[wa[k]] == wv[k];
    if (keep && r[i].status == DT_POINT_OK && t->rows[i].has_iter) {
      size_t cx = p->points[i].choice[ax], cy = ay == SIZE_MAX ? 0 : p->points[i].choice[ay];
      sum[cx * ny + cy] += t->rows[i].iter;
      cnt[cx * ny + cy]++;
    }
  }
  free(wa);
  free(wv);
  size_t plotted = 0;
  for (size_t c = 0; c < nx * ny; c++)
    plotted += cnt[c];
  if (plotted == 0) { /* was gnuplot's "Skipping data file with no valid points", then its exit 1 */
    free(sum);
    free(cnt);
    return dt_error_set(err, NULL, 0, 0, "no point to draw: none of the %s has a successful result (the summary "
                        "below says which are not run yet or failed)", nwhere ? "points that --plot-where selects" : "sweep's points");
  }
  size_t n = strlen(out) + 8;
  char *dat = dt_xmalloc(n), *gp = dt_xmalloc(n);
  snprintf(dat, n, "%s.dat", out);
  snprintf(gp, n, "%s.gp", out);
  int rc = DT_OK;
  /* both written whole or not at all (dt_outfile.h) */
  FILE *d = dt_outfile_fopen(dat, err);
  FILE *g = d ? dt_outfile_fopen(gp, err) : NULL;
  if (!d || !g) {
    rc = dt_error_set(err, NULL, 0, 0, "cannot write '%s': %s", d ? gp : dat, strerror(errno));
    dt_outfile_fdiscard(d);
    goto done;
  }
  /* data: one block per value of the second axis (gnuplot's `index`), rows "x-index mean" */
  for (size_t cy = 0; cy < ny; cy++) {
    fprintf(d, "# %s = %s\n", ay == SIZE_MAX ? "all" : s->axes[ay].key, ay == SIZE_MAX ? "" : s->axes[ay].labels[cy]);
    for (size_t cx = 0; cx < nx; cx++) {
      if (cnt[cx * ny + cy])
        fprintf(d, "%zu %zu %.17g\n", cx, cy, sum[cx * ny + cy] / (double)cnt[cx * ny + cy]);
      else if (heatmap)
        fprintf(d, "%zu %zu NaN\n", cx, cy);
    }
    fputs(heatmap ? "\n" : "\n\n", d);
  }
  fprintf(g, "# written by dtsim sweep --plot: the mean iteration time of the sweep in %s\n", s->dir);
  if (svg)
    fprintf(g, "set terminal svg size 800,500 dynamic enhanced font 'sans,12'\n");
  else
    fprintf(g, "set terminal pngcairo size 800,500 enhanced font 'sans,11'\n");
  /* dtsim renders into a temporary name and renames it (dtsim_output, given with -e); by hand, the picture */
  fputs("if (!exists(\"dtsim_output\")) dtsim_output = ", g);
  gp_str(g, out);
  fputs("\nset output dtsim_output\nset encoding utf8\nset key outside right top\nset grid\n", g);
  fputs("set xlabel ", g);
  gp_str(g, s->axes[ax].key);
  fputc('\n', g);
  gp_tics(g, "xtics", &s->axes[ax]);
  fputs("set title ", g);
  char title[1200];
  snprintf(title, sizeof title, "iteration time%s%s%s%s", *fixed ? ", " : "", fixed,
           averaged ? (*fixed ? "; " : " ") : "", averaged ? "(mean over the other axes)" : "");
  gp_str(g, title);
  fputc('\n', g);
  if (heatmap) {
    fputs("set ylabel ", g);
    gp_str(g, s->axes[ay].key);
    fputc('\n', g);
    gp_tics(g, "ytics", &s->axes[ay]);
    fprintf(g, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\nset cblabel \"iteration time (s)\"\n"
               "set palette defined (0 \"#f7fbff\", 1 \"#4292c6\")\nunset key\nunset grid\n", nx - 1, ny - 1);
    fputs("plot ", g);
    gp_str(g, dat);
    fputs(" using 1:2:3 with image, '' using 1:2:(sprintf(\"%.4g\", $3)) with labels\n", g);
  } else {
    fprintf(g, "set ylabel \"iteration time (s)\"\nset xrange [-0.25:%zu.25]\nset yrange [0:*]\n", nx - 1);
    fputs("plot ", g);
    for (size_t cy = 0; cy < ny; cy++) {
      if (cy)
        fputs(", \\\n     ", g);
      gp_str(g, dat);
      fprintf(g, " index %zu using 1:3 with linespoints lw 2 pt 7 title ", cy);
      char title[512];
      snprintf(title, sizeof title, "%s=%s", ay == SIZE_MAX ? "" : s->axes[ay].key,
               ay == SIZE_MAX ? "" : s->axes[ay].labels[cy]);
      gp_str(g, ay == SIZE_MAX ? "iteration time" : title);
    }
    fputc('\n', g);
  }
  int bad = dt_outfile_fclose(d, err) != DT_OK;
  bad |= dt_outfile_fclose(g, err) != DT_OK;
  if (bad) {
    rc = dt_error_set(err, NULL, 0, 0, "cannot write '%s' or '%s': %s", dat, gp, strerror(errno ? errno : EIO));
    goto done;
  }
  /* the picture through a temporary name, renamed once gnuplot succeeded (dt_outfile.h) */
  dt_outfile *pic = dt_outfile_open(out, err);
  if (!pic) {
    rc = DT_ERR;
    goto done;
  }
  const char *target = dt_outfile_target(pic);
  size_t elen = strlen(target) * 2 + 32;
  char *expr = dt_xmalloc(elen), *e = expr;
  e += sprintf(e, "dtsim_output=\""); /* a gnuplot string: \ and " escaped, as gp_str does */
  for (const char *c = target; *c; c++) {
    if (*c == '"' || *c == '\\')
      *e++ = '\\';
    *e++ = *c;
  }
  strcpy(e, "\"");
  /* gnuplot's stderr goes to a scratch file, then to ours as dtsim's notes (or into the error): its raw
   * warnings ("line 19: warning: ...") read as dtsim's own output */
  FILE *gerr = tmpfile();
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (gerr)
      dup2(fileno(gerr), 2);
    execlp("gnuplot", "gnuplot", "-e", expr, gp, (char *)NULL);
    fprintf(stderr, "cannot run gnuplot: %s (install gnuplot-nox; scripts/deps.sh does)\n", strerror(errno));
    _exit(127);
  }
  free(expr);
  int st = 0;
  char first[512] = "";
  int waited = pid >= 0 && waitpid(pid, &st, 0) >= 0, failed = !waited || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  if (gerr) {
    rewind(gerr);
    char line[512];
    for (int shown = 0; fgets(line, sizeof line, gerr);) {
      line[strcspn(line, "\n")] = '\0';
      if (!line[strspn(line, " \t")])
        continue;
      if (!first[0])
        snprintf(first, sizeof first, "%s", line);
      if (!failed && shown++ < 10)
        fprintf(stderr, "dtsim: note: --plot %s: gnuplot: %s\n", out, line);
    }
    fclose(gerr);
  }
  if (!waited)
    rc = dt_error_set(err, NULL, 0, 0, "cannot start gnuplot: %s", strerror(errno));
  else if (failed)
    rc = dt_error_set(err, NULL, 0, 0, "gnuplot failed on '%s' (exit %d)%s%s", gp,
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1, first[0] ? ": " : "", first);
  if (rc == DT_OK)
    rc = dt_outfile_commit(pic, err);
  else
    dt_outfile_discard(pic);
done:
  free(sum);
  free(cnt);
  free(dat);
  free(gp);
  return rc;
}
