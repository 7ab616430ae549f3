/* Several jobs on one fabric (docs/whatif.md): `dtsim run PLATFORM --job NAME ... --job NAME ...`. Each job (a
 * trace or generator flags, with its own placement) is replayed alone in a child process, then all of them
 * together in one simulation (traces/dt_merge.h: the jobs' ranks side by side, their groups renamed per job, so
 * that the shortcuts' whole-trace analysis sees every job). The report is the together run's, with a jobs
 * section: each job's iteration time alone and together, the slowdown, and the bytes each job put on each link
 * class, alone and together, and on the link directions it shared with another job. */
#include "cmd_jobs.h"

#include "../common/dt_json.h"
#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "../platforms/dt_topology.h"
#include "../replay/dt_degrade.h"
#include "../replay/dt_linkload.h"
#include "../replay/dt_replay.h"
#include "../traces/dt_merge.h"
#include "../traces/dt_trace_io.h"
#include "dt_cli.h"
#include "dt_cmd_gen.h"
#include "dt_fork.h"
#include "dt_report.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum { EXIT_OK = 0, EXIT_PROBLEM = 1, EXIT_USAGE = 2 };

/* Iterations of a job kept in a child's result (the mean covers them all). */
#define ALONE_MAX_ITERS 64

typedef struct job {
  const char *name;
  char **paths;          /* trace files (borrowed from argv) */
  int npaths;
  dt_gen_flags gf;       /* generator flags, with gen */
  int gen;
  dt_import_opts io;
  const char *placement; /* --placement FILE */
  const char *nodes;     /* --nodes LIST */
  dt_trace *t;
  int32_t *gpu;          /* global GPU of each of its ranks */
  char *label;           /* its trace files or gen:NAME */
} job;

/* What an alone run sends back to the parent (plain data, dt_run_forked). */
typedef struct alone_result {
  double end_s;
  double iter_mean_s;
  size_t niter;
  double iters[ALONE_MAX_ITERS];
  double class_bytes[DT_LC_COUNT];
  size_t class_used[DT_LC_COUNT];
  size_t ndeadlock;
  int aborted; /* a link failure stopped the alone run (replay/dt_degrade.h) */
  double cpu_s;
} alone_result;

typedef struct alone_arg {
  const dt_platform *p;
  const job *j;
  const dt_replay_opts *ro;
} alone_arg;

/* The jobs section's data, for the report hooks. */
typedef struct jobs_report {
  const dt_platform *p;
  job *jobs;
  size_t njobs;
  const alone_result *alone;
  const dt_stats *together;
} jobs_report;

const char dt_jobs_usage[] =
    "usage: dtsim run [options] PLATFORM.yaml --job NAME [job options] (TRACE...|--gen PRESET ...) --job NAME ...\n"
    "\n"
    "Several jobs on one fabric: each --job starts a job's options, up to the next --job. A job is trace files\n"
    "(any format 'run' reads, with the import options) or --gen PRESET|WORKLOAD.yaml and generator flags, and\n"
    "its placement: --nodes LIST (its ranks fill those nodes in order, G per node, e.g. --nodes 4-7) or\n"
    "--placement FILE (lines 'rank node gpu', the job's own ranks); by default it takes the nodes after the\n"
    "previous job's. Jobs never share a GPU. Every job runs alone, then all together; the report is the together\n"
    "run's with a jobs section (iteration alone and together, slowdown, bytes per link class).\n"
    "\n"
    "  options before the first --job: --json, --fidelity flow|step, --exact, --algo A, --proto P,\n"
    "  --cfg KEY:VALUE, --top N, --no-links, --degrade, --fail, --flap (as for 'dtsim run'; --no-links\n"
    "  leaves out the link classes; the link faults apply to every run, alone and together)\n";

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim run: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help run' for usage\n");
  return EXIT_USAGE;
}

static int is_job_flag(const char *a)
{
  return strcmp(a, "--job") == 0 || strncmp(a, "--job=", 6) == 0;
}

/* "0-3,8": the sorted distinct nodes of a job's GPUs. */
static void nodes_label(const dt_platform *p, const job *j, char *buf, size_t size)
{
  int G = p->gpus_per_node;
  uint8_t *on = dt_xcalloc((size_t)p->nodes + 1, 1);
  for (int32_t r = 0; r < j->t->nranks; r++)
    on[j->gpu[r] / G] = 1;
  size_t len = 0;
  buf[0] = '\0';
  for (int a = 0; a < p->nodes; a++) {
    if (!on[a])
      continue;
    int b = a;
    while (b + 1 < p->nodes && on[b + 1])
      b++;
    int w = b > a ? snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", a, b)
                  : snprintf(buf + len, size - len, "%s%d", len ? "," : "", a);
    if (w < 0 || (size_t)w >= size - len) {
      if (size > 4)
        strcpy(buf + size - 4, "...");
      break;
    }
    len += (size_t)w;
    a = b;
  }
  free(on);
}

/* Parses one job's options, argv[0] = "--job" (argv[1] its name) or "--job=NAME", n words. */
static int parse_job(job *j, int n, char **argv)
{
  static const struct option job_opts[] = {{"placement", required_argument, NULL, 'p'},
                                           {"nodes", required_argument, NULL, 'n'},
                                           {"gen", required_argument, NULL, 'g'},
                                           IMPORT_LONG_OPTIONS};
  int skip = 1;
  if (strcmp(argv[0], "--job") == 0) {
    if (n < 2 || argv[1][0] == '-')
      return usage("%s", "--job expects a job name (letters, digits, '_', '-', '.')");
    j->name = argv[1];
    skip = 2;
  } else {
    j->name = argv[0] + 6;
  }
  size_t len = strlen(j->name);
  int ok = len > 0 && len <= 32;
  for (size_t i = 0; i < len && ok; i++)
    ok = isalnum((unsigned char)j->name[i]) || strchr("_-.", j->name[i]);
  if (!ok)
    return usage("--job expects a name of 1 to 32 letters, digits, '_', '-' or '.', found '%s'", j->name);

  size_t nj = sizeof job_opts / sizeof job_opts[0], ngen = 0;
  while (dt_gen_long_options[ngen].name)
    ngen++;
  struct option *longopts = dt_xmalloc(sizeof *longopts * (nj + ngen + 1));
  memcpy(longopts, job_opts, sizeof job_opts);
  memcpy(longopts + nj, dt_gen_long_options, sizeof *longopts * (ngen + 1));
  /* getopt on a copy: "run" as argv[0], the job's words, NULL (getopt_long permutes it) */
  int sub_argc = n - skip + 1;
  char **sub = dt_xcalloc((size_t)sub_argc + 1, sizeof *sub);
  sub[0] = (char *)"run";
  for (int i = skip; i < n; i++)
    sub[i - skip + 1] = argv[i];
  dt_import_opts_init(&j->io);
  int rc = EXIT_OK, opt;
  char what[64];
  snprintf(what, sizeof what, "run --job %s", j->name);
  if (dt_cli_check_repeats(what, sub_argc, sub, ":", longopts, RUN_REPEATABLE) != 0) {
    free(sub);
    free(longopts);
    return EXIT_USAGE;
  }
  optind = 1;
  while ((opt = getopt_long(sub_argc, sub, ":", longopts, NULL)) != -1) {
    int handled = dt_cli_import_option(opt, what, &j->io);
    if (!handled) {
      handled = dt_gen_flags_take(&j->gf, opt, optarg, what);
      if (handled > 0)
        j->gen = 1;
    }
    if (handled < 0) {
      rc = EXIT_USAGE;
      break;
    }
    if (handled)
      continue;
    if (opt == 'p' || opt == 'n') {
      if (j->placement || j->nodes) {
        fprintf(stderr, "dtsim run: job '%s': give one --placement or one --nodes\n", j->name);
        rc = EXIT_USAGE;
        break;
      }
      if (!*optarg) {
        fprintf(stderr, "dtsim run: job '%s': %s expects %s, found ''\nrun 'dtsim help run' for usage\n", j->name,
                opt == 'p' ? "--placement" : "--nodes", opt == 'p' ? "a file name (lines 'rank node gpu')"
                                                                   : "node numbers and ranges like 0-3,8");
        rc = EXIT_USAGE;
        break;
      }
      *(opt == 'p' ? &j->placement : &j->nodes) = optarg;
    } else if (opt == 'g') {
      j->gen = 1;
      if (dt_gen_flags_source(&j->gf, "--gen", optarg, what) < 0) {
        rc = EXIT_USAGE;
        break;
      }
    } else {
      fprintf(stderr, "dtsim run: job '%s': %s '%s'\nrun 'dtsim help run' for usage\n", j->name,
              opt == ':' ? "option requires an argument:" : "unknown job option", sub[optind - 1]);
      rc = EXIT_USAGE;
      break;
    }
  }
  if (rc == EXIT_OK) {
    j->npaths = sub_argc - optind;
    j->paths = dt_xcalloc((size_t)j->npaths + 1, sizeof *j->paths);
    for (int i = 0; i < j->npaths; i++)
      j->paths[i] = sub[optind + i];
    if (j->gen && !j->gf.source)
      rc = usage("job '%s': generator options need --gen PRESET or --workload FILE", j->name);
    else if (j->gen && j->npaths > 0)
      rc = usage("job '%s': give trace files or --gen, not both", j->name);
    else if (!j->gen && j->npaths == 0)
      rc = usage("job '%s' has no ranks: give its trace files or --gen PRESET", j->name);
  }
  free(sub);
  free(longopts);
  return rc;
}

/* Loads (or generates) job j's trace and places its ranks; *next_node is the first node no previous job used. */
static int load_job(const dt_platform *p, job *j, int *next_node, dt_error *err)
{
  if (j->gen) {
    dt_gen_config gc;
    if (dt_gen_flags_config(&j->gf, &gc, err) != DT_OK)
      return dt_error_prefix(err, "job '%s': ", j->name);
    if (dt_gen_validate(&gc, dt_platform_gpu_count(p), err) != DT_OK || dt_gen_build(&gc, 0, &j->t, err) != DT_OK) {
      dt_gen_flags_context(&j->gf, err); /* a check of keys together names the flags given (was: none) */
      return dt_error_prefix(err, "job '%s': ", j->name);
    }
    if (dt_trace_validate(j->t, err) != DT_OK)
      return dt_error_prefix(err, "job '%s': ", j->name);
    size_t len = strlen(gc.name) + 8;
    j->label = dt_xmalloc(len);
    snprintf(j->label, len, "gen:%s", gc.name);
  } else {
    if (dt_trace_load((const char *const *)j->paths, (size_t)j->npaths, &j->io, &j->t, err) != DT_OK)
      return dt_error_prefix(err, "job '%s': ", j->name);
    size_t len = 1;
    for (int i = 0; i < j->npaths; i++)
      len += strlen(j->paths[i]) + 1;
    j->label = dt_xmalloc(len);
    j->label[0] = '\0';
    for (int i = 0; i < j->npaths; i++)
      strcat(strcat(j->label, i ? " " : ""), j->paths[i]);
  }
  int32_t n = j->t->nranks;
  if (n < 1 || dt_trace_op_count(j->t) == 0)
    return dt_error_set(err, "", 0, 0, "job '%s' has no ranks with ops to run (%s)", j->name, j->label);
  int G = p->gpus_per_node;
  int ngpus = dt_platform_gpu_count(p);
  if (j->placement) {
    size_t nlisted;
    if (dt_placement_load_listed(j->placement, p, n, &j->gpu, &nlisted, err) != DT_OK) {
      dt_cli_name_output(err, "--placement", j->placement); /* an unreadable file names the option */
      return dt_error_prefix(err, "job '%s': ", j->name);
    }
    if (nlisted < (size_t)n)
      fprintf(stderr, "dtsim: note: job '%s': --placement %s places %zu of its %d ranks; the other %zu keep the "
              "default placement (rank r on node r/%d, GPU r%%%d)\n", j->name, j->placement, nlisted, (int)n,
              (size_t)n - nlisted, G, G);
  } else {
    int32_t *nodes = NULL;
    size_t nn = 0;
    if (j->nodes) {
      if (dt_parse_rank_list(j->nodes, p->nodes, &nodes, &nn) != 0) {
        char why[256];
        return dt_error_set(err, "", 0, 0, "job '%s': --nodes expects node numbers and ranges like 0-3,8 within "
                            "the platform's nodes 0-%d, found '%s': %s", j->name, p->nodes - 1, j->nodes,
                            dt_cli_rank_list_why(j->nodes, p->nodes, why, sizeof why));
      }
    } else {
      for (int a = *next_node; a < p->nodes; a++) {
        nodes = dt_grow(nodes, &nn, (size_t)(a - *next_node), sizeof *nodes);
        nodes[a - *next_node] = a;
      }
      nn = p->nodes > *next_node ? (size_t)(p->nodes - *next_node) : 0;
    }
    if ((int64_t)nn * G < n) {
      free(nodes);
      if (j->nodes)
        return dt_error_set(err, "", 0, 0, "job '%s' has %d ranks but --nodes %s gives %lld GPU%s (%d per node)",
                            j->name, (int)n, j->nodes, (long long)nn * G, nn * G == 1 ? "" : "s", G);
      return dt_error_set(err, "", 0, 0, "job '%s' has %d ranks but only %lld GPUs are left after the previous "
                          "jobs' nodes (from node %d): give it --nodes or --placement", j->name, (int)n,
                          (long long)nn * G, *next_node);
    }
    j->gpu = dt_xmalloc(sizeof *j->gpu * (size_t)n);
    for (int32_t r = 0; r < n; r++)
      j->gpu[r] = nodes[r / G] * G + r % G;
    size_t used = ((size_t)n + (size_t)G - 1) / (size_t)G;
    if (j->nodes && used < nn) /* more nodes than its ranks fill: the rest stay idle, which is allowed, not silent */
      fprintf(stderr, "dtsim: note: job '%s': its %d rank%s fill %zu of the %zu nodes of --nodes %s (%d GPU%s per "
              "node); the other %zu stay idle\n", j->name, (int)n, n == 1 ? "" : "s", used, nn, j->nodes, G,
              G == 1 ? "" : "s", nn - used);
    free(nodes);
  }
  for (int32_t r = 0; r < n; r++)
    if (j->gpu[r] < 0 || j->gpu[r] >= ngpus)
      return dt_error_set(err, "", 0, 0, "job '%s': rank %d is placed on GPU %d, outside the platform's %d GPUs",
                          j->name, (int)r, (int)j->gpu[r], ngpus);
  for (int32_t r = 0; r < n; r++)
    if (j->gpu[r] / G + 1 > *next_node)
      *next_node = j->gpu[r] / G + 1;
  return DT_OK;
}

static double cpu_seconds(int who)
{
  struct rusage u;
  if (getrusage(who, &u) != 0)
    return 0;
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec * 1e-6;
}

static double mean(const double *v, size_t n)
{
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += v[i];
  return n ? s / (double)n : 0;
}

/* The child of one alone run: the job's trace on its own GPUs, as the only job. */
static int alone_child(void *arg, void *out, dt_error *err)
{
  const alone_arg *a = arg;
  alone_result *res = out;
  memset(res, 0, sizeof *res);
  dt_replay_opts ro = *a->ro;
  int32_t n = a->j->t->nranks;
  int32_t *zero = dt_xcalloc((size_t)n + 1, sizeof *zero);
  ro.placement = a->j->gpu;
  ro.job_of_rank = zero;
  ro.njobs = 1;
  dt_stats *s = NULL;
  int rc = dt_replay_run(a->p, a->j->t, &ro, &s, err);
  free(zero);
  if (rc != DT_OK)
    return rc;
  const dt_job_stats *js = &s->jobs[0];
  res->end_s = js->end_s;
  res->iter_mean_s = mean(js->iterations_s, js->niterations);
  res->niter = js->niterations;
  for (size_t i = 0; i < js->niterations && i < ALONE_MAX_ITERS; i++)
    res->iters[i] = js->iterations_s[i];
  if (s->links)
    for (int c = 0; c < DT_LC_COUNT; c++) {
      res->class_bytes[c] = s->links->classes[c].by_job[0];
      res->class_used[c] = s->links->classes[c].used;
    }
  res->ndeadlock = s->ndeadlock;
  res->aborted = s->aborted != NULL;
  dt_stats_free(s);
  res->cpu_s = cpu_seconds(RUSAGE_SELF);
  return DT_OK;
}

static double slowdown(double alone, double together)
{
  return alone > 0 ? together / alone : 1;
}

/* Non-zero when job k did not finish alone or together (a deadlock, or a link failure stopped the run): its
 * slowdown has no meaning. */
static int job_stopped(const jobs_report *J, size_t k)
{
  return J->alone[k].ndeadlock > 0 || J->alone[k].aborted || J->together->aborted || J->together->ndeadlock > 0;
}

static void jobs_text(FILE *f, const void *data)
{
  const jobs_report *J = data;
  char b1[32], b2[32], b3[64];
  fprintf(f, "\njobs: %zu on one fabric, each alone in its own simulation, then together\n", J->njobs);
  fprintf(f, "  job              ranks   nodes        alone        together     slowdown\n");
  for (size_t k = 0; k < J->njobs; k++) {
    const job *j = &J->jobs[k];
    const dt_job_stats *js = &J->together->jobs[k];
    double tog = mean(js->iterations_s, js->niterations);
    nodes_label(J->p, j, b3, sizeof b3);
    if (job_stopped(J, k))
      fprintf(f, "  %-16s %-7d %-12s %-12s %-12s %s\n", j->name, (int)j->t->nranks, b3,
              dt_format_time(J->alone[k].iter_mean_s, b1, sizeof b1), dt_format_time(tog, b2, sizeof b2),
              "- (a run stopped)");
    else
      fprintf(f, "  %-16s %-7d %-12s %-12s %-12s x%.4f\n", j->name, (int)j->t->nranks, b3,
              dt_format_time(J->alone[k].iter_mean_s, b1, sizeof b1), dt_format_time(tog, b2, sizeof b2),
              slowdown(J->alone[k].iter_mean_s, tog));
  }
  fprintf(f, "  iteration: the mean of the job's iterations (its first rank's marks), its makespan without marks;\n"
             "  slowdown = together / alone\n");
  const dt_linkstats *L = J->together->links;
  if (!L)
    return;
  fprintf(f, "\ninterference by link class: bytes each job put on it (together; alone when it differs), and on the\n"
             "link directions another job used too\n");
  fprintf(f, "  class            directions used  shared   job              bytes        on shared\n");
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *C = &L->classes[c];
    if (!(C->bytes > 0))
      continue;
    int first = 1;
    for (size_t k = 0; k < J->njobs; k++) {
      if (!(C->by_job[k] > 0) && !(J->alone[k].class_bytes[c] > 0))
        continue;
      char used[32], shared[32];
      snprintf(used, sizeof used, "%zu/%zu", C->used, C->links);
      snprintf(shared, sizeof shared, "%zu", C->shared);
      fprintf(f, "  %-16s %-16s %-8s %-16s %-12s %s", first ? dt_link_class_name((dt_link_class)c) : "",
              first ? used : "", first ? shared : "", J->jobs[k].name, dt_format_bytes(C->by_job[k], b1, sizeof b1),
              dt_format_bytes(C->shared_by_job[k], b2, sizeof b2));
      if (J->alone[k].class_bytes[c] != C->by_job[k])
        fprintf(f, "  (alone %s)", dt_format_bytes(J->alone[k].class_bytes[c], b1, sizeof b1));
      fprintf(f, "\n");
      first = 0;
    }
  }
}

static void jdouble(yajl_gen g, double v)
{
  char buf[64];
  if (!(v == v) || v - v != 0 || v == 0)
    v = 0; /* no NaN, infinity or negative zero */
  snprintf(buf, sizeof buf, "%.17g", v);
  yajl_gen_number(g, buf, strlen(buf));
}

static void jkey_double(yajl_gen g, const char *k, double v)
{
  dt_json_string(g, k);
  jdouble(g, v);
}

static void jkey_uint(yajl_gen g, const char *k, unsigned long long v)
{
  dt_json_string(g, k);
  yajl_gen_integer(g, (long long)v);
}

static void jarray(yajl_gen g, const char *k, const double *v, size_t n)
{
  dt_json_string(g, k);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++)
    jdouble(g, v[i]);
  yajl_gen_array_close(g);
}

static void jobs_json(void *gen, const void *data)
{
  yajl_gen g = gen;
  const jobs_report *J = data;
  const dt_linkstats *L = J->together->links;
  char buf[8192]; /* a node list: every other node of 1,024 fits */
  dt_json_string(g, "jobs");
  yajl_gen_array_open(g);
  for (size_t k = 0; k < J->njobs; k++) {
    const job *j = &J->jobs[k];
    const dt_job_stats *js = &J->together->jobs[k];
    const alone_result *a = &J->alone[k];
    double tog = mean(js->iterations_s, js->niterations);
    yajl_gen_map_open(g);
    dt_json_string(g, "name");
    dt_json_string(g, j->name);
    dt_json_string(g, "trace");
    dt_json_string(g, j->label);
    jkey_uint(g, "ranks", (unsigned long long)j->t->nranks);
    nodes_label(J->p, j, buf, sizeof buf);
    dt_json_string(g, "nodes");
    dt_json_string(g, buf);
    jkey_double(g, "alone_s", a->iter_mean_s);
    jkey_double(g, "together_s", tog);
    if (job_stopped(J, k)) { /* a run that stopped has no slowdown */
      dt_json_string(g, "slowdown");
      yajl_gen_null(g);
    } else {
      jkey_double(g, "slowdown", slowdown(a->iter_mean_s, tog));
    }
    jkey_double(g, "alone_makespan_s", a->end_s);
    jkey_double(g, "together_makespan_s", js->end_s);
    jarray(g, "alone_iterations_s", a->iters, a->niter < ALONE_MAX_ITERS ? a->niter : ALONE_MAX_ITERS);
    jarray(g, "together_iterations_s", js->iterations_s, js->niterations);
    if (L) {
      dt_json_string(g, "link_classes");
      yajl_gen_map_open(g);
      for (int c = 0; c < DT_LC_COUNT; c++) {
        if (!(L->classes[c].by_job[k] > 0) && !(a->class_bytes[c] > 0))
          continue;
        dt_json_string(g, dt_link_class_name((dt_link_class)c));
        yajl_gen_map_open(g);
        jkey_double(g, "bytes", L->classes[c].by_job[k]);
        jkey_double(g, "alone_bytes", a->class_bytes[c]);
        jkey_double(g, "shared_bytes", L->classes[c].shared_by_job[k]);
        yajl_gen_map_close(g);
      }
      yajl_gen_map_close(g);
    }
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  if (L) {
    dt_json_string(g, "jobs_link_classes");
    yajl_gen_map_open(g);
    for (int c = 0; c < DT_LC_COUNT; c++) {
      const dt_class_load *C = &L->classes[c];
      if (!(C->bytes > 0))
        continue;
      dt_json_string(g, dt_link_class_name((dt_link_class)c));
      yajl_gen_map_open(g);
      jkey_uint(g, "directions", C->links);
      jkey_uint(g, "used", C->used);
      jkey_uint(g, "shared", C->shared);
      dt_json_string(g, "shared_by");
      yajl_gen_array_open(g);
      for (size_t k = 0; k < J->njobs; k++)
        if (C->shared_by_job[k] > 0)
          dt_json_string(g, J->jobs[k].name);
      yajl_gen_array_close(g);
      yajl_gen_map_close(g);
    }
    yajl_gen_map_close(g);
  }
}

int dt_cmd_jobs(int argc, char **argv)
{
  static const struct option run_opts[] = {RUN_SHARED_LONG_OPTIONS, /* as dtsim run's, dt_cli_run_option */
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  int first_job = 1;
  while (first_job < argc && !is_job_flag(argv[first_job]))
    first_job++;
  dt_replay_opts ro;
  dt_replay_opts_init(&ro);
  int rc = EXIT_USAGE, opt;
  job jobs[DT_MERGE_MAX_JOBS];
  size_t njobs = 0;
  memset(jobs, 0, sizeof jobs);
  alone_result *alone = NULL;
  dt_platform *p = NULL;
  dt_trace *merged = NULL;
  dt_stats *s = NULL;
  int32_t *placement = NULL, *job_of_rank = NULL;
  char *label = NULL;
  int32_t first[DT_MERGE_MAX_JOBS + 1]; /* each job's first rank in the together run */
  dt_faults faults; /* --degrade, --fail, --flap: the same fabric for every run, alone and together */
  dt_faults_init(&faults);
  dt_run_shared sh = {.ro = &ro, .faults = &faults, .json = 0, .top_links = 10};
  dt_error err;
  dt_error_clear(&err);

  /* the run options and the platform, before the first --job */
  if (dt_cli_check_repeats("run", first_job, argv, ":h", run_opts, RUN_REPEATABLE) != 0)
    goto done;
  optind = 1;
  while ((opt = getopt_long(first_job, argv, ":h", run_opts, NULL)) != -1) {
    int handled = dt_cli_run_option(opt, optarg, &sh);
    if (handled < 0)
      goto done;
    if (handled)
      continue;
    switch (opt) {
    case 'h':
      fputs(dt_jobs_usage, stdout);
      rc = EXIT_OK;
      goto done;
    default:
      if (opt == ':')
        usage("option '%s' requires an argument", argv[optind - 1]);
      else
        usage("'%s' is not a run option for several jobs (trace and generator options go after their --job)",
              argv[optind - 1]);
      goto done;
    }
  }
  if (first_job - optind != 1) {
    usage("%s", first_job - optind < 1 ? "expected a platform file before the first --job"
                                       : "expected one platform file before the first --job (traces go after their --job)");
    goto done;
  }
  const char *platform_path = argv[optind];

  /* the jobs, one segment each */
  for (int i = first_job; i < argc;) {
    int e = i + 1;
    if (strcmp(argv[i], "--job") == 0 && e < argc)
      e++; /* its name */
    while (e < argc && !is_job_flag(argv[e]))
      e++;
    if (njobs == DT_MERGE_MAX_JOBS) {
      usage("too many jobs: at most %s", "16");
      goto done;
    }
    if (parse_job(&jobs[njobs++], e - i, argv + i) != EXIT_OK)
      goto done;
    for (size_t k = 0; k + 1 < njobs; k++)
      if (strcmp(jobs[k].name, jobs[njobs - 1].name) == 0) {
        usage("two jobs are named '%s': give each its own name", jobs[k].name);
        goto done;
      }
    i = e;
  }

  if (dt_platform_load(platform_path, &p, &err) != DT_OK)
    goto fail;
  int next_node = 0;
  for (size_t k = 0; k < njobs; k++)
    if (load_job(p, &jobs[k], &next_node, &err) != DT_OK)
      goto fail;
  /* no GPU runs ranks of two jobs */
  {
    int ngpus = dt_platform_gpu_count(p), G = p->gpus_per_node;
    int32_t *owner = dt_xmalloc(sizeof *owner * (size_t)ngpus), *orank = dt_xmalloc(sizeof *orank * (size_t)ngpus);
    for (int g = 0; g < ngpus; g++)
      owner[g] = -1;
    int bad = 0;
    for (size_t k = 0; k < njobs && !bad; k++)
      for (int32_t r = 0; r < jobs[k].t->nranks && !bad; r++) {
        int32_t gpu = jobs[k].gpu[r];
        if (owner[gpu] >= 0 && (size_t)owner[gpu] != k) {
          dt_error_set(&err, "", 0, 0, "jobs '%s' and '%s' both use GPU %d of node %d (global GPU %d): rank %d of "
                       "'%s' and rank %d of '%s'; jobs never share a GPU", jobs[owner[gpu]].name, jobs[k].name,
                       (int)gpu % G, (int)gpu / G, (int)gpu, (int)orank[gpu], jobs[owner[gpu]].name, (int)r,
                       jobs[k].name);
          bad = 1;
        }
        owner[gpu] = (int32_t)k;
        orank[gpu] = r;
      }
    free(owner);
    free(orank);
    if (bad)
      goto fail;
  }

  /* all together, here */
  {
    dt_trace *ts[DT_MERGE_MAX_JOBS];
    const char *names[DT_MERGE_MAX_JOBS];
    for (size_t k = 0; k < njobs; k++) {
      ts[k] = jobs[k].t;
      names[k] = jobs[k].name;
    }
    if (dt_trace_merge(ts, names, njobs, first, &merged, &err) != DT_OK)
      goto fail;
    placement = dt_xmalloc(sizeof *placement * ((size_t)merged->nranks + 1));
    job_of_rank = dt_xmalloc(sizeof *job_of_rank * ((size_t)merged->nranks + 1));
    size_t len = 16;
    for (size_t k = 0; k < njobs; k++) {
      for (int32_t r = 0; r < jobs[k].t->nranks; r++) {
        placement[first[k] + r] = jobs[k].gpu[r];
        job_of_rank[first[k] + r] = (int32_t)k;
      }
      len += strlen(jobs[k].name) + strlen(jobs[k].label) + 8;
    }
    ro.placement = placement;
    ro.job_of_rank = job_of_rank;
    ro.njobs = (int32_t)njobs;
    label = dt_xmalloc(len);
    strcpy(label, "jobs ");
    for (size_t k = 0; k < njobs; k++)
      sprintf(label + strlen(label), "%s%s (%s)", k ? ", " : "", jobs[k].name, jobs[k].label);
  }
  if (faults.n > 0) { /* the links' names, and no pair of any job cut off, checked once on all the jobs */
    if (dt_faults_check(&faults, p, merged, placement, &err) != DT_OK) {
      char ranges[512] = "";
      for (size_t k = 0, len = 0; k < njobs && len < sizeof ranges; k++) /* what the merged rank numbers mean */
        len += (size_t)snprintf(ranges + len, sizeof ranges - len, "%s'%s' %d-%d", k ? ", " : "", jobs[k].name,
                                (int)first[k], (int)first[k + 1] - 1);
      dt_error_prefix(&err, "the jobs together (ranks %s): ", ranges);
      goto fail;
    }
    ro.faults = &faults;
  }
  /* each job alone, in a child */
  alone = dt_xcalloc(njobs, sizeof *alone);
  for (size_t k = 0; k < njobs; k++) {
    alone_arg a = {p, &jobs[k], &ro}; /* the child sets its own placement and job */
    char what[64];
    snprintf(what, sizeof what, "the alone run of job '%s'", jobs[k].name);
    if (dt_run_forked(alone_child, &a, &alone[k], sizeof alone[k], what, &err) != DT_OK) {
      dt_error_prefix(&err, "job '%s' alone: ", jobs[k].name);
      goto fail;
    }
  }

  double cpu0 = cpu_seconds(RUSAGE_SELF);
  if (dt_replay_run(p, merged, &ro, &s, &err) != DT_OK)
    goto fail;
  double cpu_together = cpu_seconds(RUSAGE_SELF) - cpu0, cpu_alone = 0;
  for (size_t k = 0; k < njobs; k++)
    cpu_alone += alone[k].cpu_s;

  jobs_report J = {p, jobs, njobs, alone, s};
  dt_report_input in = {.platform = p, .trace = merged, .stats = s, .trace_label = label,
                        .fidelity = ro.fidelity == DT_FIDELITY_STEP ? "step" : "flow", .top_links = sh.top_links,
                        .text_extra = jobs_text, .json_extra = jobs_json, .extra = &J};
  if (sh.json) {
    char note[4096];
    for (size_t i = 0; i < dt_report_note_count(&in); i++)
      fprintf(stderr, "dtsim: note: %s\n", dt_report_note(&in, i, note, sizeof note));
    if (dt_report_json(stdout, &in, &err) != DT_OK)
      goto fail;
  } else {
    dt_report_text(stdout, &in);
  }
  fprintf(stderr, "dtsim: note: jobs: the together run took %.3f CPU s, the %zu alone runs %.3f CPU s (x%.2f)\n",
          cpu_together, njobs, cpu_alone, cpu_alone > 0 ? cpu_together / cpu_alone : 0);
  rc = EXIT_OK;
  if (s->aborted) {
    char at[32];
    fprintf(stderr, "dtsim: aborted at %s when the jobs ran together: %s\n",
            dt_format_time(s->aborted_s, at, sizeof at), s->aborted);
    rc = EXIT_PROBLEM;
  } else if (s->ndeadlock > 0) {
    fprintf(stderr, "dtsim: deadlock: %zu op%s blocked forever when the jobs ran together (first: %s)\n",
            s->ndeadlock, s->ndeadlock == 1 ? "" : "s", s->deadlock[0]);
    rc = EXIT_PROBLEM;
  }
  for (size_t k = 0; k < njobs; k++)
    if (alone[k].aborted) {
      fprintf(stderr, "dtsim: aborted: job '%s' stopped by a link failure when it ran alone\n", jobs[k].name);
      rc = EXIT_PROBLEM;
    } else if (alone[k].ndeadlock > 0) {
      fprintf(stderr, "dtsim: deadlock: %zu op%s of job '%s' blocked forever when it ran alone\n", alone[k].ndeadlock,
              alone[k].ndeadlock == 1 ? "" : "s", jobs[k].name);
      rc = EXIT_PROBLEM;
    }
  goto done;
fail: {
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
  rc = EXIT_USAGE;
}
done:
  dt_stats_free(s);
  dt_trace_free(merged);
  free(placement);
  free(job_of_rank);
  free(label);
  free(alone);
  for (size_t k = 0; k < njobs; k++) {
    dt_trace_free(jobs[k].t);
    free(jobs[k].gpu);
    free(jobs[k].paths);
    free(jobs[k].label);
    dt_gen_flags_free(&jobs[k].gf);
  }
  for (int i = 0; i < ro.simgrid_argc; i++) /* --cfg settings handed to SimGrid, owned here */
    free(ro.simgrid_argv[i]);
  free(ro.simgrid_argv);
  dt_faults_clear(&faults);
  dt_platform_free(p);
  return rc;
}
