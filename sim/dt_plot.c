/* `dtsim run --plot DIR`: one gnuplot data file and script per picture, written from dt_stats with the same
 * numbers (%.17g) and definitions as the JSON report (sim/dt_report.c), then gnuplot run in DIR so that each script
 * can be run again by hand (`cd DIR && gnuplot per_rank.gp`). */
#include "dt_plot.h"

#include "../common/dt_outfile.h"
#include "../common/dt_util.h"
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
  if (stat(dir, &st) != 0)
    st.st_mode = 0;
  if (!S_ISDIR(st.st_mode)) /* was "found a file" for a device too */
    return dt_error_set(err, "", 0, 0, "--plot %s: is %s, not a folder: --plot writes several files (pictures, their "
                        "data and gnuplot scripts) into a folder, created when missing; give a folder's name", dir,
                        S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISFIFO(st.st_mode) ? "a pipe"
                        : S_ISREG(st.st_mode) ? "a file" : "not a folder");
  /* a file can be created in it (was: /proc passed, and the run printed its whole report before "No such file
   * or directory") */
  size_t len = strlen(dir) + 32;
  char *probe = dt_xmalloc(len);
  snprintf(probe, len, "%s/critical_path.dat", dir);
  dt_error e;
  dt_error_clear(&e);
  int rc = dt_outfile_check(probe, &e);
  int errnum = errno;
  free(probe);
  if (rc != DT_OK)
    return dt_error_set(err, dir, 0, 0, "--plot cannot create files in this directory: %s", strerror(errnum));
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
  FILE *f = dt_outfile_fopen(path, err); /* written whole or not at all */
  if (!f)
    dt_error_set(err, path, 0, 0, "--plot: cannot write: %s", strerror(errno));
  free(path);
  return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, dt_error *err)
{
  int bad = dt_outfile_fclose(f, err) != DT_OK;
  return bad ? dt_error_set(err, dir, 0, 0, "--plot: cannot write '%s'", name) : DT_OK;
}

static void gp_header(FILE *g, const dt_report_input *in, const char *name, const char *title)
{
  fprintf(g, "# written by dtsim run --plot: %s (docs/report.md, Pictures); run it again with 'gnuplot %s.gp'\n", title,
          name);
  /* dtsim renders into a temporary name and renames it (dtsim_output, given with -e); by hand, NAME.png */
  fprintf(g, "set terminal pngcairo size 900,500 enhanced font 'sans,10'\nif (!exists(\"dtsim_output\")) "
             "dtsim_output = '%s.png'\nset output dtsim_output\nset encoding utf8\n", name);
  /* two panels (multiplot): the title goes over both */
  int panels = strcmp(name, "link_classes") == 0 || strcmp(name, "histogram") == 0 ||
               strcmp(name, "fabric_heatmap") == 0;
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
      dt_outfile_fdiscard(d);
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
      dt_outfile_fdiscard(d);
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
  double ms = dt_stats_link_span(s); /* the makespan, or the time a run that stopped reached */
  FILE *d = open_in(dir, "link_classes", "dat", err), *g = d ? open_in(dir, "link_classes", "gp", err) : NULL;
  if (!g) {
    if (d)
      dt_outfile_fdiscard(d);
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

/* ---- the fabric: leaf x spine heatmap and per-tier utilisation ---- */

/* Utilisation of one link direction over the run: payload bytes / (bandwidth x makespan), the mean share of its
 * capacity it carried (1: it carried bytes at full rate for the whole run). */
static double util_of(const dt_link_load *l, double makespan)
{
  return l->bandwidth > 0 && makespan > 0 ? l->bytes / (l->bandwidth * makespan) : 0;
}

/* The leaf uplink tier a heatmap shows: on a 2-level fat-tree the leaf-spine cables ("cable:leafL-spineS"), on
 * a 3-level one the leaf-aggregation cables ("cable:leafL-aggA", column A mod u: the leaf's uplink to the A-th
 * aggregation switch of its pod). Returns 0 and a reason in why when the platform has no such tier. */
static int heatmap_tier(const dt_report_input *in, dt_fabric_shape *sh, dt_link_class *cls, const char **why)
{
  const dt_platform *p = in->platform;
  if (!in->stats->links) {
    *why = "the per-link accounting is off (--no-links)";
    return 0;
  }
  if (p->topology != DT_NET_FAT_TREE) {
    *why = p->topology == DT_NET_NONE ? "the platform is one node, with no fabric"
           : p->topology == DT_NET_SINGLE_SWITCH ? "the platform's fabric is a single switch, not a fat-tree"
                                                 : "the platform's fabric is a dragonfly, not a fat-tree";
    return 0;
  }
  if (dt_platform_fabric_shape(p, sh, NULL) != DT_OK || sh->leaves <= 0 || sh->up_ports <= 0) {
    *why = "the fat-tree has no leaf uplinks";
    return 0;
  }
  *cls = p->levels == 3 ? DT_LC_LEAF_AGG : DT_LC_LEAF_SPINE;
  return 1;
}

/* fabric_heatmap: one row per (leaf, uplink) cable of the leaf uplink tier, every cable of the platform (0 when
 * unused): "leaf<TAB>spine<TAB>up_util<TAB>down_util<TAB>up_busy<TAB>down_busy<TAB>up_bytes<TAB>down_bytes", up =
 * leaf to spine, util = bytes / (bandwidth x makespan), busy = busy_s / makespan (links.top[] in the JSON, by
 * the cable's name). Blank lines between leaves. */
static int plot_heatmap(const char *dir, const dt_report_input *in, const dt_fabric_shape *sh, dt_link_class cls,
                        dt_error *err)
{
  const dt_stats *s = in->stats;
  const dt_linkstats *L = s->links;
  int rows = sh->leaves, cols = sh->up_ports, three = cls == DT_LC_LEAF_AGG;
  double ms = dt_stats_link_span(s); /* the makespan, or the time a run that stopped reached */
  /* cell (leaf, col, dir): 0 util, 1 busy, 2 bytes */
  double *cell = dt_xcalloc((size_t)rows * (size_t)cols * 6, sizeof *cell);
  for (size_t i = 0; i < L->nlinks; i++) {
    const dt_link_load *l = &L->links[i];
    int leaf, up, n = 0;
    char d[8];
    if (l->cls != cls)
      continue;
    if (three)
      n = sscanf(l->name, "cable:leaf%d-agg%d %7s", &leaf, &up, d);
    else
      n = sscanf(l->name, "cable:leaf%d-spine%d %7s", &leaf, &up, d);
    if (n != 3)
      continue;
    if (three && sh->aggs_per_pod > 0)
      up %= sh->aggs_per_pod;
    if (leaf < 0 || leaf >= rows || up < 0 || up >= cols)
      continue;
    double *c = &cell[((size_t)leaf * (size_t)cols + (size_t)up) * 6 + (strcmp(d, "down") == 0 ? 3 : 0)];
    c[0] = util_of(l, ms);
    c[1] = ms > 0 ? l->busy_s / ms : 0;
    c[2] = l->bytes;
  }
  FILE *d = open_in(dir, "fabric_heatmap", "dat", err), *g = d ? open_in(dir, "fabric_heatmap", "gp", err) : NULL;
  if (!g) {
    if (d)
      dt_outfile_fdiscard(d);
    free(cell);
    return DT_ERR;
  }
  fprintf(d, "# leaf\t%s\tup_util\tdown_util\tup_busy\tdown_busy\tup_bytes\tdown_bytes (links.top[] in the JSON: "
             "util = bytes / (bandwidth_Bps x makespan_s), busy = busy_s / makespan_s; up = leaf to %s)\n",
          three ? "agg" : "spine", three ? "aggregation switch" : "spine");
  for (int r = 0; r < rows; r++) {
    for (int k = 0; k < cols; k++) {
      const double *c = &cell[((size_t)r * (size_t)cols + (size_t)k) * 6];
      fprintf(d, "%d\t%d\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n", r, k, c[0], c[3], c[1], c[4], c[2], c[5]);
    }
    fputc('\n', d);
  }
  free(cell);
  const char *col = three ? "aggregation switch of the leaf's pod" : "spine";
  gp_header(g, in, "fabric_heatmap",
            three ? "leaf x aggregation utilisation, bytes / (bandwidth x makespan)"
                  : "leaf x spine utilisation, bytes / (bandwidth x makespan)");
  fprintf(g, "set view map\nunset grid\nset palette defined (0 '#f7fbff', 0.25 '#c6dbef', 0.5 '#6baed6', 0.75 "
             "'#2171b5', 1 '#08306b')\nset cbrange [0:100]\nset cblabel 'utilisation (%%)'\n"
             "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset xlabel \"%s\"\nset ylabel 'leaf'\n",
          cols - 1, rows - 1, col);
  if (cols <= 32)
    fputs("set xtics 1\n", g);
  if (rows <= 32)
    fputs("set ytics 1\n", g);
  int labels = rows <= 16 && cols <= 16;
  for (int pass = 0; pass < 2; pass++) {
    int c = 3 + pass;
    fprintf(g, "set title '%s'\nplot 'fabric_heatmap.dat' using 2:1:($%d*100) with image notitle",
            pass ? (three ? "down (aggregation to leaf)" : "down (spine to leaf)")
                 : (three ? "up (leaf to aggregation)" : "up (leaf to spine)"),
            c);
    if (labels)
      fprintf(g, ", \\\n     '' using 2:1:($%d == 0 ? '0' : sprintf($%d < 0.1 ? '%%.1f' : '%%.0f', $%d*100)):($%d > 0.55 ? "
                 "0xffffff : 0) with labels tc rgb variable notitle", c, c, c, c);
    fputc('\n', g);
  }
  fputs("unset multiplot\n", g);
  int rc = close_checked(d, dir, "fabric_heatmap.dat", err);
  return close_checked(g, dir, "fabric_heatmap.gp", err) | rc;
}

/* tiers: per link class of the platform, over every link direction of the class (unused ones count 0):
 * "class<TAB>links<TAB>used<TAB>busy_all<TAB>busy_max<TAB>util_min<TAB>util_p25<TAB>util_median<TAB>util_p75
 * <TAB>util_max<TAB>util_mean", busy_all = busy_sum / (links x makespan) (= busy_mean x used / links of
 * links.classes[]), util = bytes / (bandwidth x makespan) per direction (links.top[]). */
static int plot_tiers(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  const dt_linkstats *L = s->links;
  double ms = dt_stats_link_span(s); /* the makespan, or the time a run that stopped reached */
  FILE *d = open_in(dir, "tiers", "dat", err), *g = d ? open_in(dir, "tiers", "gp", err) : NULL;
  if (!g) {
    if (d)
      dt_outfile_fdiscard(d);
    return DT_ERR;
  }
  fputs("# class\tlinks\tused\tbusy_all\tbusy_max\tutil_min\tutil_p25\tutil_median\tutil_p75\tutil_max\tutil_mean "
        "(over every link direction of the class, unused ones 0: busy_all = links.classes[].busy_mean x used / links, "
        "util = bytes / (bandwidth_Bps x makespan_s) of links.top[])\n", d);
  int rows = 0;
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *C = &L->classes[c];
    if (C->links == 0)
      continue;
    double *u = dt_xcalloc(C->links, sizeof *u), sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < L->nlinks && k < C->links; i++)
      if (L->links[i].cls == (dt_link_class)c) {
        u[k] = util_of(&L->links[i], ms);
        sum += u[k++];
      }
    dt_sort_doubles(u, C->links); /* the unused directions are the leading zeros */
    fprintf(d, "%s\t%zu\t%zu\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n",
            dt_link_class_name((dt_link_class)c), C->links, C->used,
            ms > 0 ? C->busy_sum_s / ((double)C->links * ms) : 0, ms > 0 ? C->busy_max_s / ms : 0, u[0],
            dt_quantile_sorted(u, C->links, 0.25), dt_quantile_sorted(u, C->links, 0.5),
            dt_quantile_sorted(u, C->links, 0.75), u[C->links - 1],
            sum / (double)C->links);
    free(u);
    rows++;
  }
  gp_header(g, in, "tiers", "per-tier utilisation over every link direction of the tier");
  fprintf(g, "set ylabel '%% of the makespan / of the capacity'\nset yrange [0:105]\nset xrange [-0.6:%d.6]\n"
             "set boxwidth 0.35\nset xtics rotate by -30 noenhanced\nset key top right\n"
             "plot 'tiers.dat' using ($0-0.2):($7*100):($6*100):($10*100):($9*100):xtic(sprintf('%%s (%%d/%%d used)', strcol(1), $3, $2)) "
             "with candlesticks "
             "whiskerbars lc rgb '#2171b5' title 'utilisation = bytes / (bandwidth x makespan): quartiles, min-max', "
             "\\\n     '' using ($0-0.2):($8*100):($8*100):($8*100):($8*100) with candlesticks lc rgb '#08306b' "
             "lw 2 notitle, \\\n"
             "     '' using ($0+0.2):($4*100) with boxes lc rgb '#fdae6b' title 'busy: mean over the directions', \\\n"
             "     '' using ($0+0.2):($5*100) with points pt 7 lc rgb '#d94801' title 'busy: the busiest direction'\n",
          rows > 0 ? rows - 1 : 0);
  int rc = close_checked(d, dir, "tiers.dat", err);
  return close_checked(g, dir, "tiers.gp", err) | rc;
}

/* histogram: one row per power-of-two size range from the smallest to the largest used, "min_bytes<TAB>label" then
 * per op kind with instances "count<TAB>bytes" (histogram.by_kind in the JSON). */
static int plot_histogram(const char *dir, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  FILE *d = open_in(dir, "histogram", "dat", err), *g = d ? open_in(dir, "histogram", "gp", err) : NULL;
  if (!g) {
    if (d)
      dt_outfile_fdiscard(d);
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

/* Runs gnuplot on NAME.gp in dir, the picture going to a temporary name renamed to NAME.png once gnuplot
 * succeeded (dt_outfile: an interrupted or failed run leaves neither half a picture nor the temporary). Returns
 * 1 rendered, 0 gnuplot missing, -1 it failed (err set). */
static int render(const char *dir, const char *name, dt_error *err)
{
  char script[256], png[256], expr[512];
  snprintf(script, sizeof script, "%s.gp", name);
  size_t len = strlen(dir) + strlen(name) + 8;
  char *path = dt_xmalloc(len);
  snprintf(path, len, "%s/%s.png", dir, name);
  dt_outfile *pic = dt_outfile_open(path, err);
  free(path);
  if (!pic)
    return -1;
  const char *target = dt_outfile_target(pic), *base = strrchr(target, '/');
  snprintf(png, sizeof png, "%s", base ? base + 1 : target); /* NAME.png.tmp.PID.N: our own characters */
  snprintf(expr, sizeof expr, "dtsim_output='%s'", png);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir) != 0)
      _exit(126);
    execlp("gnuplot", "gnuplot", "-e", expr, script, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) {
    dt_outfile_discard(pic);
    dt_error_set(err, dir, 0, 0, "--plot: cannot start gnuplot: %s", strerror(errno));
    return -1;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    dt_outfile_discard(pic);
    return 0;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    dt_outfile_discard(pic);
    dt_error_set(err, dir, 0, 0, "--plot: gnuplot failed on '%s' (exit %d)", script, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return -1;
  }
  return dt_outfile_commit(pic, err) == DT_OK ? 1 : -1;
}

int dt_plot_write(const char *dir, const dt_report_input *in, int *rendered, dt_error *err)
{
  *rendered = 0;
  const char *names[6];
  size_t n = 0;
  dt_fabric_shape sh;
  dt_link_class cls = DT_LC_LEAF_SPINE;
  const char *why = NULL;
  int heat = heatmap_tier(in, &sh, &cls, &why);
  const dt_stats *s = in->stats;
  const dt_linkstats *L = s->links;
  /* A chart with nothing to draw is skipped with a note, not handed to gnuplot, which refuses an empty plot (a
   * compute-only trace has no message sizes and no link bytes; a deadlocked or aborted run may have no critical
   * path or a zero makespan): the run's own outcome (exit 0 or 1) stands. */
  int timed = s->makespan_s > 0;
  const char *untimed = s->aborted || s->ndeadlock ? "the run did not complete (no makespan)" : "the run took no time";
  int path = timed && s->critical;
  double carried = 0;
  for (int c = 0; L && c < DT_LC_COUNT; c++)
    carried += L->classes[c].bytes;
  int links = L && timed && carried > 0;
  int sizes = 0;
  for (int k = 0; k < DT_OP_COUNT && !sizes; k++)
    for (int b = 0; b < DT_HIST_BUCKETS && !sizes; b++)
      sizes = s->hist_kind[k].count[b] != 0;
  if (heat && !links) {
    heat = 0;
    why = "no link carried bytes";
  }
  if ((path && plot_critical(dir, in, err) != DT_OK) || (timed && plot_per_rank(dir, in, err) != DT_OK) ||
      (links && (plot_links(dir, in, err) != DT_OK || plot_tiers(dir, in, err) != DT_OK)) ||
      (heat && plot_heatmap(dir, in, &sh, cls, err) != DT_OK) || (sizes && plot_histogram(dir, in, err) != DT_OK))
    return DT_ERR;
  if (path)
    names[n++] = "critical_path";
  else
    fprintf(stderr, "dtsim: note: --plot: no critical_path chart: %s\n",
            timed ? "the run has no critical path (it did not complete)" : untimed);
  if (timed)
    names[n++] = "per_rank";
  else
    fprintf(stderr, "dtsim: note: --plot: no per_rank chart: %s\n", untimed);
  if (links) {
    names[n++] = "link_classes";
    names[n++] = "tiers";
  } else if (L)
    fprintf(stderr, "dtsim: note: --plot: no link_classes and tiers charts: no link carried bytes\n");
  if (heat)
    names[n++] = "fabric_heatmap";
  else
    fprintf(stderr, "dtsim: note: --plot: no leaf x spine heatmap (fabric_heatmap): %s\n", why);
  if (sizes)
    names[n++] = "histogram";
  else
    fprintf(stderr, "dtsim: note: --plot: no histogram chart: no message completed\n");
  if (n == 0) {
    *rendered = -1; /* nothing to draw: the notes above say why */
    return DT_OK;
  }
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
