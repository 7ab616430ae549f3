/* `dtsim run --plot DIR`: one gnuplot data file and script per picture, written from dt_stats with the same
 * numbers (%.17g) and definitions as the JSON report (sim/dt_report.c), then gnuplot run in DIR so that each script
 * can be run again by hand (`cd DIR && gnuplot per_rank.gp`). */
#include "dt_plot.h"

#include "../replay/dt_linkload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Ranks per_rank shows: the first ones (the bars stay readable). */
#define PLOT_MAX_RANKS 64

int dt_plot_prepare(const char *dir, dt_error *err)
{
  struct stat st;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return dt_error_set(err, dir, 0, 0, "--plot: cannot create the directory: %s", strerror(errno));
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return dt_error_set(err, dir, 0, 0, "--plot expects a directory, found a file");
  return DT_OK;
}

static FILE *open_in(const char *dir, const char *name, const char *ext, dt_error *err)
{
  size_t len = strlen(dir) + strlen(name) + strlen(ext) + 3;
  char *path = malloc(len);
  if (!path) {
    dt_error_set(err, dir, 0, 0, "out of memory");
    return NULL;
  }
  snprintf(path, len, "%s/%s.%s", dir, name, ext);
  FILE *f = fopen(path, "w");
  if (!f)
    dt_error_set(err, path, 0, 0, "--plot: cannot write: %s", strerror(errno));
  free(path);
  return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, dt_error *err)
{
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  return bad ? dt_error_set(err, dir, 0, 0, "--plot: cannot write '%s'", name) : DT_OK;
}

static void gp_header(FILE *g, const dt_report_input *in, const char *name, const char *title)
{
  fprintf(g, "# written by dtsim run --plot: %s (docs/report.md, Pictures); run it again with 'gnuplot %s.gp'\n", title,
          name);
  fprintf(g, "set terminal pngcairo size 900,500 enhanced font 'sans,10'\nset output '%s.png'\nset encoding utf8\n",
          name);
  /* two panels (multiplot): the title goes over both */
  int panels = strcmp(name, "link_classes") == 0 || strcmp(name, "histogram") == 0;
  fprintf(g, "%s \"%s, %s on %s\" noenhanced\n", panels ? "set multiplot layout 1,2 title" : "set title", title,
          in->trace_label ? in->trace_label : "trace", in->platform->name ? in->platform->name : "platform");
  fputs("set grid ytics\nset style fill solid 0.85 border -1\nset datafile separator '\\t'\n", g);
}

/* critical_path: one row per part of the split (compute, host/launch, waiting, each dimension x kind with exposed
 * communication): "part<TAB>seconds<TAB>fraction of the makespan". */
static int plot_critical(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  const dt_critical *c = s->critical;
  FILE *d = open_in(dir, "critical_path", "dat", err), *g = d ? open_in(dir, "critical_path", "gp", err) : NULL;
  if (!g) {
    if (d)
      fclose(d);
    return DT_ERR;
  }
  double T = s->makespan_s;
  fputs("# part\tseconds\tfraction of the makespan (bound.compute_s, host_s, wait_s, comm_s in the JSON)\n", d);
  if (c) {
    fprintf(d, "compute\t%.17g\t%.17g\n", c->compute_s, T > 0 ? c->compute_s / T : 0);
    fprintf(d, "host/launch\t%.17g\t%.17g\n", c->host_s, T > 0 ? c->host_s / T : 0);
    fprintf(d, "waiting\t%.17g\t%.17g\n", c->wait_s, T > 0 ? c->wait_s / T : 0);
    for (int dm = 0; dm < DT_DIM_COUNT; dm++)
      for (int k = 0; k < DT_OP_COUNT; k++)
        if (c->comm_s[dm][k] > 0)
          fprintf(d, "%s %s\t%.17g\t%.17g\n", dt_dim_name((dt_dim)dm), dt_op_kind_name((dt_op_kind)k), c->comm_s[dm][k],
                  T > 0 ? c->comm_s[dm][k] / T : 0);
  }
  gp_header(g, in, "critical_path", "the critical path's split");
  fputs("set ylabel 'share of the iteration (%)'\nset yrange [0:105]\nset boxwidth 0.6\nunset key\n"
        "set xtics rotate by -20 noenhanced\n"
        "plot 'critical_path.dat' using 0:($3*100):xtic(1) with boxes lc rgb '#4292c6', \\\n"
        "     '' using 0:($3*100):(sprintf('%.1f %%', $3*100)) with labels offset 0,0.8\n", g);
  int rc = close_checked(d, dir, "critical_path.dat", err);
  return close_checked(g, dir, "critical_path.gp", err) | rc;
}

/* per_rank: "rank<TAB>compute_s<TAB>exposed_comm_s<TAB>rest_s", rest = makespan - compute - exposed (neither
 * computing nor exposed communication: idle, host time, the end of the run), for the first PLOT_MAX_RANKS ranks. */
static int plot_per_rank(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  FILE *d = open_in(dir, "per_rank", "dat", err), *g = d ? open_in(dir, "per_rank", "gp", err) : NULL;
  if (!g) {
    if (d)
      fclose(d);
    return DT_ERR;
  }
  fputs("# rank\tcompute_s\texposed_comm_s\trest_s (per_rank[] in the JSON; rest = makespan - compute - exposed)\n", d);
  int32_t n = s->nranks < PLOT_MAX_RANKS ? s->nranks : PLOT_MAX_RANKS;
  for (int32_t r = 0; r < n; r++) {
    const dt_rank_stats *x = &s->per_rank[r];
    double rest = s->makespan_s - x->compute_s - x->exposed_comm_s;
    fprintf(d, "%d\t%.17g\t%.17g\t%.17g\n", (int)r, x->compute_s, x->exposed_comm_s, rest > 0 ? rest : 0);
  }
  gp_header(g, in, "per_rank", n < s->nranks ? "each rank's iteration (the first 64 ranks)" : "each rank's iteration");
  fputs("set ylabel 'seconds'\nset xlabel 'rank'\nset style data histograms\nset style histogram rowstacked\n"
        "set boxwidth 0.8\nset key outside right top\nset yrange [0:*]\n", g);
  fprintf(g, "plot 'per_rank.dat' using 2:xtic(int($0) %% %d == 0 ? stringcolumn(1) : '') title", n > 32 ? 8 : n > 16 ? 4 : 1);
  fputs(" 'compute' lc rgb "
        "'#4292c6', \\\n     '' using 3 title 'exposed communication' lc rgb '#ef3b2c', \\\n"
        "     '' using 4 title 'rest (idle, host, done)' lc rgb '#d9d9d9'\n", g);
  int rc = close_checked(d, dir, "per_rank.dat", err);
  return close_checked(g, dir, "per_rank.gp", err) | rc;
}

/* link_classes: "class<TAB>links<TAB>used<TAB>bytes<TAB>busy_mean<TAB>busy_max" per class with link directions in
 * the platform (links.classes[] in the JSON). */
static int plot_links(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  const dt_linkstats *L = s->links;
  double ms = s->makespan_s;
  FILE *d = open_in(dir, "link_classes", "dat", err), *g = d ? open_in(dir, "link_classes", "gp", err) : NULL;
  if (!g) {
    if (d)
      fclose(d);
    return DT_ERR;
  }
  fputs("# class\tlinks\tused\tbytes\tbusy_mean\tbusy_max (links.classes[] in the JSON)\n", d);
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *C = &L->classes[c];
    if (C->links == 0)
      continue;
    fprintf(d, "%s\t%zu\t%zu\t%.17g\t%.17g\t%.17g\n", dt_link_class_name((dt_link_class)c), C->links, C->used,
            C->bytes, C->used && ms > 0 ? C->busy_sum_s / (double)C->used / ms : 0, ms > 0 ? C->busy_max_s / ms : 0);
  }
  gp_header(g, in, "link_classes", "link classes: busy share of the run and bytes carried");
  fputs("set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
        "set xtics rotate by -30 noenhanced\nset key top right\n"
        "set ylabel 'busy (% of the makespan)'\nset yrange [0:105]\n"
        "plot 'link_classes.dat' using ($5*100):xtic(1) title 'mean' lc rgb '#4292c6', '' using ($6*100) title 'max' "
        "lc rgb '#08306b'\n"
        "set ylabel 'GiB carried'\nset yrange [0:*]\nunset key\n"
        "plot 'link_classes.dat' using ($4/1073741824):xtic(1) lc rgb '#41ab5d'\nunset multiplot\n", g);
  int rc = close_checked(d, dir, "link_classes.dat", err);
  return close_checked(g, dir, "link_classes.gp", err) | rc;
}

/* histogram: one row per power-of-two size range from the smallest to the largest used, "min_bytes<TAB>label" then
 * per op kind with instances "count<TAB>bytes" (histogram.by_kind in the JSON). */
static int plot_histogram(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  FILE *d = open_in(dir, "histogram", "dat", err), *g = d ? open_in(dir, "histogram", "gp", err) : NULL;
  if (!g) {
    if (d)
      fclose(d);
    return DT_ERR;
  }
  int kinds[DT_OP_COUNT], nk = 0, lo = DT_HIST_BUCKETS, hi = -1;
  for (int k = 0; k < DT_OP_COUNT; k++) {
    int used = 0;
    for (int b = 0; b < DT_HIST_BUCKETS; b++)
      if (s->hist_kind[k].count[b]) {
        used = 1;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
      }
    if (used)
      kinds[nk++] = k;
  }
  fputs("# min_bytes\tlabel", d);
  for (int i = 0; i < nk; i++)
    fprintf(d, "\t%s count\t%s bytes", dt_op_kind_name((dt_op_kind)kinds[i]), dt_op_kind_name((dt_op_kind)kinds[i]));
  fputs(" (histogram.by_kind in the JSON; a row holds [min_bytes, 2 x min_bytes), 0 bytes alone)\n", d);
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  for (int b = lo; b <= hi; b++) {
    double min = b == 0 ? 0 : ldexp(1, b - 1);
    int u = b == 0 ? 0 : (b - 1) / 10;
    fprintf(d, "%.17g\t%.0f %s", min, b == 0 ? 0 : ldexp(1, (b - 1) - 10 * u), units[u]);
    for (int i = 0; i < nk; i++)
      fprintf(d, "\t%llu\t%.17g", (unsigned long long)s->hist_kind[kinds[i]].count[b], s->hist_kind[kinds[i]].bytes[b]);
    fputc('\n', d);
  }
  gp_header(g, in, "histogram", "message sizes per op kind");
  fputs("set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\n"
        "set xtics rotate by -45 noenhanced\nset key top left noenhanced\nset xlabel 'per-rank size from'\n"
        "set ylabel 'instances'\nset logscale y\nset yrange [0.8:*]\n", g);
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      fputs("unset logscale y\nset yrange [0:*]\nset ylabel 'GiB (instances x per-rank bytes)'\n", g);
    fputs("plot ", g);
    for (int i = 0; i < nk; i++)
      fprintf(g, "%s'histogram.dat' using %s%d%s%s title '%s'", i ? ", \\\n     " : "", pass ? "($" : "",
              3 + 2 * i + pass, pass ? "/1073741824)" : "", i ? "" : ":xtic(2)", dt_op_kind_name((dt_op_kind)kinds[i]));
    if (nk == 0)
      fputs("NaN notitle", g);
    fputc('\n', g);
  }
  fputs("unset multiplot\n", g);
  int rc = close_checked(d, dir, "histogram.dat", err);
  return close_checked(g, dir, "histogram.gp", err) | rc;
}

/* Runs gnuplot on NAME.gp in dir. Returns 1 rendered, 0 gnuplot missing, -1 it failed (err set). */
static int render(const char *dir, const char *name, dt_error *err)
{
  char script[256];
  snprintf(script, sizeof script, "%s.gp", name);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir) != 0)
      _exit(126);
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) {
    dt_error_set(err, dir, 0, 0, "--plot: cannot start gnuplot: %s", strerror(errno));
    return -1;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
    return 0;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    dt_error_set(err, dir, 0, 0, "--plot: gnuplot failed on '%s' (exit %d)", script, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return -1;
  }
  return 1;
}

int dt_plot_write(const char *dir, const dt_report_input *in, int *rendered, dt_error *err)
{
  *rendered = 0;
  const char *names[4];
  size_t n = 0;
  if (plot_critical(dir, in, err) != DT_OK || plot_per_rank(dir, in, err) != DT_OK ||
      (in->stats->links && plot_links(dir, in, err) != DT_OK) || plot_histogram(dir, in, err) != DT_OK)
    return DT_ERR;
  names[n++] = "critical_path";
  names[n++] = "per_rank";
  if (in->stats->links)
    names[n++] = "link_classes";
  names[n++] = "histogram";
  for (size_t i = 0; i < n; i++) {
    int r = render(dir, names[i], err);
    if (r < 0)
      return DT_ERR;
    if (r == 0)
      return DT_OK; /* no gnuplot: the scripts stay */
    (*rendered)++;
  }
  return DT_OK;
}
