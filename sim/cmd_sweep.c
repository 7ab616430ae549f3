/* `dtsim sweep [run|collect|plan]`: plans a sweep, runs the points that are not cached in a pool of worker
 * processes (each a `dtsim run --json` of this binary: SimGrid runs once per process), by shard, or prints
 * the commands for GNU parallel / xargs or a Slurm submission script; then writes the tables, the plot and
 * the sensitivity ranking. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cmd_sweep.h"

#include "../common/dt_outfile.h"
#include "../common/dt_util.h"
#include "dt_cli.h"
#include "dt_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_PROBLEM = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

const char dt_cmd_sweep_usage[] =
    "usage: dtsim sweep [run] [options] [SPEC.yaml]      run the points that are not cached yet\n"
    "       dtsim sweep collect [options] [SPEC.yaml]    tables, plot and ranking from the cache\n"
    "       dtsim sweep plan [options] [SPEC.yaml]       list the points (and why some cannot run)\n"
    "\n"
    "Sweeps a base platform's keys (nics.bandwidth, network.oversubscription, nccl.channels, ...), generator\n"
    "keys (tp, pp, dp, zero, microbatch, seq, ...) and run options (algo, proto, fidelity, placement) over a\n"
    "grid, a seeded random sample or a Latin hypercube (docs/sweep.md). Each point is one 'dtsim run --json';\n"
    "its result is cached in the sweep folder under a SHA-256 of everything it depends on, so a rerun or a\n"
    "preempted shard runs only what is missing.\n"
    "\n"
    "spec:\n"
    "  --set KEY=VALUE        a spec key (platform, dir, workload.gen, workload.tp, run.algo, sample.method,\n"
    "                         sample.points, sample.seed, axes.NAME=V1,V2,...), over the SPEC file's value\n"
    "  --axis NAME=V1,V2,...  an axis (same as --set axes.NAME=...)\n"
    "  --dir DIR              the sweep folder (default SPEC's name with .sweep, beside it)\n"
    "running:\n"
    "  -j, --jobs N           worker processes (default: the CPUs this process may use)\n"
    "  --shard I/N            run only points I, I+N, I+2N, ... (a Slurm array task, a machine of N)\n"
    "  --point I              run only point I (repeatable; what --emit-commands prints)\n"
    "  --emit-commands        print one command per point still to run, for GNU parallel or xargs -P\n"
    "  --emit slurm           print a script that submits a Slurm job array of shards and a dependent\n"
    "                         collect job; --shards N (default: points, at most 100), --cpus-per-task N\n"
    "                         (default 1), --sbatch-args 'ARGS' (e.g. '--partition=cpu --time=1:00:00')\n"
    "  -q, --quiet            no progress line\n"
    "outputs (run and collect):\n"
    "  -o FILE                FILE.csv (one row per point), FILE.jsonl (JSON lines), '-' CSV on stdout,\n"
    "                         a device or pipe CSV written in place; repeatable, each output once\n"
    "  --plot FILE.svg|png    iteration time against the first axis, a line per value of the second\n"
    "                         (gnuplot); --plot-x AXIS, --plot-by AXIS, --heatmap, --plot-where AXIS=VALUE\n"
    "                         (only those points; repeatable; other axes are averaged)\n"
    "  --from DIR             collect: first take results another sweep folder holds (shards that ran\n"
    "                         elsewhere); repeatable\n";

typedef struct opts {
  int verb; /* 0 run, 1 collect, 2 plan */
  const char *spec;
  size_t nsets;
  char **sets;      /* owned copies */
  size_t nspec_args;
  char **spec_args; /* the words that reproduce the spec for emitted commands, owned */
  long jobs;
  long shard_i, shard_n;
  size_t npoints_only;
  long *points_only;
  int emit_commands, emit_slurm, quiet, heatmap;
  long shards, cpus;
  const char *sbatch_args;
  size_t nouts;
  const char **outs;
  const char *plot, *plot_x, *plot_by;
  size_t nwhere;
  const char **where;
  size_t nfrom;
  const char **from;
} opts;

static void add_word(char ***arr, size_t *n, const char *w)
{
  *arr = dt_xrealloc(*arr, sizeof **arr * (*n + 1));
  (*arr)[(*n)++] = dt_xstrdup(w);
}

static void opts_free(opts *o)
{
  for (size_t i = 0; i < o->nsets; i++)
    free(o->sets[i]);
  free(o->sets);
  for (size_t i = 0; i < o->nspec_args; i++)
    free(o->spec_args[i]);
  free(o->spec_args);
  free(o->points_only);
  free(o->outs);
  free(o->from);
  free(o->where);
}

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim sweep: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help sweep' for usage\n");
  return EXIT_USAGE;
}

/* usage() with two words in fmt. */
static int usage2(const char *fmt, const char *a, const char *b)
{
  fprintf(stderr, "dtsim sweep: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\nrun 'dtsim help sweep' for usage\n");
  return EXIT_USAGE;
}

/* The file path names, as its folder's real path and its own name (the caller frees); NULL when the folder is
 * missing. */
static char *canonical_output(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir = slash ? dt_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : dt_xstrdup(".");
  char *real = realpath(dir, NULL);
  free(dir);
  if (!real)
    return NULL;
  const char *name = slash ? slash + 1 : path;
  char *out = dt_xmalloc(strlen(real) + strlen(name) + 2);
  sprintf(out, "%s/%s", real, name);
  free(real);
  return out;
}

/* Whether two -o paths name the same output: the same word, one file under two names (a.csv, ./a.csv, a link). */
static int same_output(const char *a, const char *b)
{
  if (strcmp(a, b) == 0)
    return 1;
  if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
    return 0;
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ca = canonical_output(a), *cb = canonical_output(b);
  int same = ca && cb && strcmp(ca, cb) == 0;
  free(ca);
  free(cb);
  return same;
}

static long usable_cpus(void)
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : 1;
}

static int parse_opts(int argc, char **argv, opts *o)
{
  enum { O_SET = 1000, O_AXIS, O_DIR, O_SHARD, O_POINT, O_EMITC, O_EMIT, O_SHARDS, O_CPUS, O_SBATCH, O_PLOT,
         O_PLOTX, O_PLOTBY, O_HEAT, O_FROM, O_WHERE };
  static const struct option longopts[] = {
      {"set", required_argument, NULL, O_SET},          {"axis", required_argument, NULL, O_AXIS},
      {"dir", required_argument, NULL, O_DIR},          {"jobs", required_argument, NULL, 'j'},
      {"shard", required_argument, NULL, O_SHARD},      {"point", required_argument, NULL, O_POINT},
      {"emit-commands", no_argument, NULL, O_EMITC},    {"emit", required_argument, NULL, O_EMIT},
      {"shards", required_argument, NULL, O_SHARDS},    {"cpus-per-task", required_argument, NULL, O_CPUS},
      {"sbatch-args", required_argument, NULL, O_SBATCH}, {"quiet", no_argument, NULL, 'q'},
      {"output", required_argument, NULL, 'o'},         {"plot", required_argument, NULL, O_PLOT},
      {"plot-x", required_argument, NULL, O_PLOTX},     {"plot-by", required_argument, NULL, O_PLOTBY},
      {"heatmap", no_argument, NULL, O_HEAT},           {"from", required_argument, NULL, O_FROM},
      {"plot-where", required_argument, NULL, O_WHERE},
      {"help", no_argument, NULL, 'h'},                 {NULL, 0, NULL, 0}};
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "run") == 0)
    first = 2;
  else if (argc > 1 && strcmp(argv[1], "collect") == 0)
    o->verb = 1, first = 2;
  else if (argc > 1 && strcmp(argv[1], "plan") == 0)
    o->verb = 2, first = 2;
  argc -= first - 1;
  argv += first - 1;
  if (dt_cli_check_repeats("sweep", argc, argv, ":j:qo:h", longopts, "set axis point output plot-where from") != 0)
    return EXIT_USAGE;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, ":j:qo:h", longopts, NULL)) != -1) {
    char buf[4200];
    switch (opt) {
    case O_SET:
    case O_AXIS:
    case O_DIR:
      if (opt == O_SET)
        snprintf(buf, sizeof buf, "%s", optarg);
      else
        snprintf(buf, sizeof buf, "%s%s", opt == O_AXIS ? "axes." : "dir=", optarg);
      for (size_t k = 0; k < o->nsets; k++) { /* one value per key, as one per option (docs/cli.md) */
        size_t klen = strcspn(o->sets[k], "=");
        if (klen == strcspn(buf, "=") && strncmp(o->sets[k], buf, klen) == 0 && buf[klen] == '=') {
          fprintf(stderr, "dtsim sweep: the spec key '%.*s' is given twice ('%s' and '%s'): it takes one value, "
                  "give it once\nrun 'dtsim help sweep' for usage\n", (int)klen, buf, o->sets[k] + klen + 1,
                  buf + klen + 1);
          return EXIT_USAGE;
        }
      }
      add_word(&o->sets, &o->nsets, buf);
      add_word(&o->spec_args, &o->nspec_args, "--set");
      add_word(&o->spec_args, &o->nspec_args, buf);
      break;
    case 'j':
      if (dt_sweep_parse_count(optarg, 1, 4096, &o->jobs) < 0)
        return usage("--jobs expects a number of workers from 1 to 4096, found '%s'", optarg);
      break;
    case O_SHARD: {
      const char *slash = strchr(optarg, '/');
      char i[32];
      snprintf(i, sizeof i, "%.*s", slash ? (int)(slash - optarg) : 0, optarg);
      if (!slash || dt_sweep_parse_count(i, 0, 1000000, &o->shard_i) < 0 ||
          dt_sweep_parse_count(slash + 1, 1, 1000000, &o->shard_n) < 0 || o->shard_i >= o->shard_n)
        return usage("--shard expects I/N, whole numbers with N from 1 to 1000000 and 0 <= I < N (as 3/10), found "
                     "'%s'", optarg);
      break;
    }
    case O_POINT: {
      long v;
      if (dt_sweep_parse_count(optarg, 0, 100000000, &v) < 0)
        return usage("--point expects a point number from 0 to 100000000, found '%s'", optarg);
      o->points_only = dt_xrealloc(o->points_only, sizeof *o->points_only * (o->npoints_only + 1));
      o->points_only[o->npoints_only++] = v;
      break;
    }
    case O_EMITC:
      o->emit_commands = 1;
      break;
    case O_EMIT:
      if (strcmp(optarg, "slurm") != 0)
        return usage("--emit expects 'slurm' (for GNU parallel or xargs use --emit-commands), found '%s'", optarg);
      o->emit_slurm = 1;
      break;
    case O_SHARDS:
      if (dt_sweep_parse_count(optarg, 1, 1000000, &o->shards) < 0)
        return usage("--shards expects a number of array tasks from 1 to 1000000, found '%s'", optarg);
      break;
    case O_CPUS:
      if (dt_sweep_parse_count(optarg, 1, 4096, &o->cpus) < 0)
        return usage("--cpus-per-task expects a number of CPUs from 1 to 4096, found '%s'", optarg);
      break;
    case O_SBATCH:
      o->sbatch_args = optarg;
      break;
    case 'q':
      o->quiet = 1;
      break;
    case 'o': {
      const char *ext = strrchr(optarg, '.');
      struct stat st; /* a device or a pipe is written in place, as every output (docs/cli.md): CSV, as '-' */
      int special = stat(optarg, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
      if (strcmp(optarg, "-") != 0 && !special && (!ext || (strcmp(ext, ".csv") != 0 && strcmp(ext, ".jsonl") != 0)))
        return usage("-o expects FILE.csv, FILE.jsonl, '-' (CSV on stdout) or a device or pipe (CSV, or JSON lines "
                     "when its name ends in .jsonl), found '%s'", optarg);
      for (size_t k = 0; k < o->nouts; k++) /* one table per target: -o - -o - printed the CSV twice */
        if (same_output(o->outs[k], optarg))
          return usage2("-o %s given twice%s: each output is written once, give it once", optarg,
                        strcmp(o->outs[k], optarg) == 0 ? "" : " (under another name)");
      o->outs = dt_xrealloc(o->outs, sizeof *o->outs * (o->nouts + 1));
      o->outs[o->nouts++] = optarg;
      break;
    }
    case O_PLOT:
      o->plot = optarg;
      break;
    case O_PLOTX:
      o->plot_x = optarg;
      break;
    case O_PLOTBY:
      o->plot_by = optarg;
      break;
    case O_HEAT:
      o->heatmap = 1;
      break;
    case O_WHERE:
      o->where = dt_xrealloc(o->where, sizeof *o->where * (o->nwhere + 1));
      o->where[o->nwhere++] = optarg;
      break;
    case O_FROM:
      o->from = dt_xrealloc(o->from, sizeof *o->from * (o->nfrom + 1));
      o->from[o->nfrom++] = optarg;
      break;
    case 'h':
      fputs(dt_cmd_sweep_usage, stdout);
      return -1;
    default:
      return dt_cli_bad_option("sweep", opt, argv, longopts);
    }
  }
  if (argc - optind > 1 && first == 1 && access(argv[optind], F_OK) != 0)
    return usage("unknown verb '%s': expected run, collect or plan, then a spec file", argv[optind]);
  if (argc - optind > 1)
    return usage("expected one spec file, found another argument '%s'", argv[optind + 1]);
  if (argc - optind == 1) {
    o->spec = argv[optind];
    char **old = o->spec_args;
    size_t n = o->nspec_args;
    o->spec_args = NULL;
    o->nspec_args = 0;
    add_word(&o->spec_args, &o->nspec_args, o->spec);
    for (size_t i = 0; i < n; i++) {
      add_word(&o->spec_args, &o->nspec_args, old[i]);
      free(old[i]);
    }
    free(old);
  }
  if (!o->spec && o->nsets == 0)
    return usage("%s", "expected a spec file or --set flags");
  if (o->emit_commands && o->emit_slurm)
    return usage("%s", "give one of --emit-commands and --emit slurm");
  if (o->verb != 0 && (o->emit_commands || o->emit_slurm || o->shard_n || o->npoints_only))
    return usage("%s", "--emit, --shard and --point belong to 'dtsim sweep run'");
  if (o->nfrom && o->verb != 1)
    return usage("%s", "--from belongs to 'dtsim sweep collect'");
  if ((o->plot_x || o->plot_by || o->heatmap || o->nwhere) && !o->plot)
    return usage("%s", "--plot-x, --plot-by, --plot-where and --heatmap need --plot FILE");
  if (o->shard_n && o->npoints_only)
    return usage("%s", "give one of --shard and --point");
  return 0;
}

/* ---- shell words ---- */

static void sh_quote(FILE *f, const char *w)
{
  int plain = *w != '\0';
  for (const char *p = w; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+%@", *p))
      plain = 0;
  if (plain) {
    fputs(w, f);
    return;
  }
  fputc('\'', f);
  for (const char *p = w; *p; p++) {
    if (*p == '\'')
      fputs("'\\''", f);
    else
      fputc(*p, f);
  }
  fputc('\'', f);
}

/* Writes words to a string, quoted for sh (the caller frees). */
static char *sh_join(const char *const *words, size_t n)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  for (size_t i = 0; i < n; i++) {
    if (i)
      fputc(' ', f);
    sh_quote(f, words[i]);
  }
  fclose(f);
  return buf;
}

/* ---- the worker pool ---- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
  interrupted = sig;
}

typedef struct slot {
  pid_t pid;
  size_t point;
  char out_tmp[4500], err_tmp[4500];
} slot;

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *fmt_dur(double s, char *buf, size_t size)
{
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

/* The run's own words for what went wrong: its last "dtsim: error:" or "dtsim: deadlock:" line. */
static char *reason_from_log(const char *log, int code)
{
  const char *best = NULL;
  size_t best_len = 0;
  for (const char *p = log; p && *p;) {
    size_t n = strcspn(p, "\n");
    if ((n > 14 && strncmp(p, "dtsim: error: ", 14) == 0) || (n > 16 && strncmp(p, "dtsim: deadlock:", 16) == 0)) {
      best = p + 7;
      best_len = n - 7;
    }
    p += n + (p[n] == '\n');
  }
  char buf[2048];
  if (best)
    snprintf(buf, sizeof buf, "%.*s", (int)(best_len < 2000 ? best_len : 2000), best);
  else
    snprintf(buf, sizeof buf, "exit %d", code);
  return dt_xstrdup(buf);
}

static int spawn(const dt_sweep_plan *P, size_t i, slot *s)
{
  const dt_sweep_point *pt = &P->points[i];
  char base[4400];
  dt_sweep_cache_path(P, pt, "json", base, sizeof base);
  snprintf(s->out_tmp, sizeof s->out_tmp, "%s.tmp.%ld", base, (long)getpid());
  dt_sweep_cache_path(P, pt, "log", base, sizeof base);
  snprintf(s->err_tmp, sizeof s->err_tmp, "%s.tmp.%ld", base, (long)getpid());
  char **argv = dt_xmalloc(sizeof *argv * (pt->argc + 2));
  argv[0] = (char *)P->exe;
  for (size_t k = 0; k < pt->argc; k++)
    argv[k + 1] = pt->argv[k];
  argv[pt->argc + 1] = NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(s->out_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    int err = open(s->err_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
      _exit(126);
    close(out);
    close(err);
    execv(P->exe, argv);
    fprintf(stderr, "dtsim: error: cannot run '%s': %s\n", P->exe, strerror(errno));
    _exit(127);
  }
  free(argv);
  if (pid < 0)
    return -1;
  s->pid = pid;
  s->point = i;
  return 0;
}

typedef struct tally {
  size_t done, failed, running, total;
} tally;

/* Records a finished child: exit 0 caches the JSON; 1 (deadlock) and 2 (bad input) are deterministic, so the
 * reason is cached too (.fail); a signal or another code caches nothing (the next run tries again). */
static void finish(const dt_sweep_plan *P, slot *s, int st, tally *t, int quiet_errors)
{
  const dt_sweep_point *pt = &P->points[s->point];
  char json[4400], log[4400], fail[4400];
  dt_sweep_cache_path(P, pt, "json", json, sizeof json);
  dt_sweep_cache_path(P, pt, "log", log, sizeof log);
  dt_sweep_cache_path(P, pt, "fail", fail, sizeof fail);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  char *text = dt_sweep_read_file(s->err_tmp, NULL);
  rename(s->err_tmp, log);
  char label[1024];
  dt_sweep_point_label(P, pt, label, sizeof label);
  if (code == 0) {
    rename(s->out_tmp, json);
  } else if (code == 1 || code == 2) {
    char *reason = reason_from_log(text, code);
    char *body = dt_xmalloc(strlen(reason) + (text ? strlen(text) : 0) + 2);
    sprintf(body, "%s\n%s", reason, text ? text : "");
    dt_outfile_write(fail, body, strlen(body), NULL); /* a cache entry: without it the point runs again */
    if (code == 1)
      rename(s->out_tmp, json);
    else
      remove(s->out_tmp);
    if (!quiet_errors)
      fprintf(stderr, "\rdtsim sweep: point %zu (%s) failed: %s\033[K\n", pt->index, label, reason);
    free(body);
    free(reason);
    t->failed++;
  } else {
    remove(s->out_tmp);
    if (!interrupted || !WIFSIGNALED(st)) {
      fprintf(stderr, "\rdtsim sweep: point %zu (%s) %s %d, not cached (see %s)\033[K\n", pt->index, label,
              WIFSIGNALED(st) ? "killed by signal" : "ended with exit code",
              WIFSIGNALED(st) ? WTERMSIG(st) : code, log);
      t->failed++;
    }
  }
  free(text);
  s->pid = 0;
}

static void progress(const tally *t, double start, int show)
{
  if (!show)
    return;
  char e[32], l[32];
  double el = now_s() - start;
  fprintf(stderr, "\rdtsim sweep: %zu/%zu done, %zu running, %zu failed, %s elapsed", t->done, t->total, t->running,
          t->failed, fmt_dur(el, e, sizeof e));
  if (t->done > 0 && t->done < t->total)
    fprintf(stderr, ", about %s left", fmt_dur(el / (double)t->done * (double)(t->total - t->done), l, sizeof l));
  fputs("\033[K", stderr);
}

/* Runs points todo[0..n) with up to jobs workers. Returns the number that failed, or -1 when interrupted. */
static long run_pool(const dt_sweep_plan *P, const size_t *todo, size_t n, long jobs, int show)
{
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  interrupted = 0;
  slot *slots = dt_xcalloc((size_t)jobs, sizeof *slots);
  tally t = {0, 0, 0, n};
  size_t next = 0;
  double start = now_s(), last = 0;
  int killed = 0;
  while (next < n || t.running > 0) {
    while (!interrupted && t.running < (size_t)jobs && next < n) {
      size_t k;
      for (k = 0; k < (size_t)jobs && slots[k].pid; k++)
        ;
      if (spawn(P, todo[next], &slots[k]) < 0) {
        fprintf(stderr, "dtsim: error: cannot start a worker: %s\n", strerror(errno));
        interrupted = SIGTERM;
        break;
      }
      next++;
      t.running++;
      progress(&t, start, show);
    }
    if (interrupted && !killed) {
      for (size_t k = 0; k < (size_t)jobs; k++)
        if (slots[k].pid)
          kill(slots[k].pid, SIGTERM);
      killed = 1;
    }
    if (t.running == 0)
      break;
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      struct timespec ts = {0, 50 * 1000 * 1000};
      nanosleep(&ts, NULL);
      if (now_s() - last > 0.5) {
        progress(&t, start, show);
        last = now_s();
      }
      continue;
    }
    if (pid < 0)
      break;
    for (size_t k = 0; k < (size_t)jobs; k++)
      if (slots[k].pid == pid) {
        finish(P, &slots[k], st, &t, 0);
        t.running--;
        t.done++;
        break;
      }
    progress(&t, start, show);
  }
  if (show)
    fputc('\n', stderr);
  free(slots);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (interrupted)
    return -1;
  return (long)t.failed;
}

/* ---- outputs ---- */

static int copy_file(const char *from, const char *to)
{
  size_t len;
  char *data = dt_sweep_read_file(from, &len);
  if (!data)
    return -1;
  int rc = dt_outfile_write(to, data, len, NULL);
  free(data);
  return rc == DT_OK ? 0 : -1;
}

static int write_outputs(const opts *o, const dt_sweep_plan *P, const dt_sweep_result *r)
{
  dt_error err;
  dt_error_clear(&err);
  dt_sweep_table *t = dt_sweep_table_make(P, r);
  int to_stdout = 0, rc = DT_OK;
  for (size_t i = 0; i < o->nouts && rc == DT_OK; i++) {
    const char *out = o->outs[i];
    int jsonl = strlen(out) > 6 && strcmp(out + strlen(out) - 6, ".jsonl") == 0;
    FILE *f = dt_outfile_fopen(out, &err); /* stdout for "-"; a file appears whole or not at all */
    to_stdout |= f == stdout;
    if (!f) {
      fprintf(stderr, "dtsim: error: -o %s: cannot write: %s\n", out, strerror(errno));
      dt_sweep_table_free(t);
      return EXIT_USAGE;
    }
    rc = jsonl ? dt_sweep_write_jsonl(f, P, r, t, &err) : dt_sweep_write_csv(f, P, r, t, &err);
    if (rc != DT_OK) {
      dt_outfile_fdiscard(f);
      dt_error_prefix(&err, "-o %s: ", out);
    } else if (dt_outfile_fclose(f, &err) != DT_OK)
      rc = dt_error_set(&err, NULL, 0, 0, "-o %s: cannot write%s: %s", out, strcmp(out, "-") == 0 ? " to standard "
                        "output" : "", strerror(errno ? errno : EIO));
  }
  if (rc == DT_OK && o->plot)
    if ((rc = dt_sweep_plot(o->plot, o->plot_x, o->plot_by, o->heatmap, o->where, o->nwhere, P, r, t, &err)) != DT_OK)
      dt_error_prefix(&err, "--plot %s: ", o->plot);
  if (rc == DT_OK)
    dt_sweep_print_ranking(to_stdout ? stderr : stdout, P, r, t);
  dt_sweep_table_free(t);
  if (rc != DT_OK) {
    fprintf(stderr, "dtsim: error: %s\n", err.msg);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* ---- the verbs ---- */

typedef struct filter {
  const opts *o;
} filter;

static int wanted(size_t index, void *arg)
{
  const opts *o = ((filter *)arg)->o;
  if (o->npoints_only) {
    for (size_t i = 0; i < o->npoints_only; i++)
      if ((size_t)o->points_only[i] == index)
        return 1;
    return 0;
  }
  return 1;
}

static int in_selection(const opts *o, size_t index)
{
  if (o->shard_n)
    return (long)(index % (size_t)o->shard_n) == o->shard_i;
  filter fl = {o};
  return wanted(index, &fl);
}

static void print_impossible(const opts *o, const dt_sweep_plan *P)
{
  for (size_t i = 0; i < P->npoints; i++) {
    const dt_sweep_point *pt = &P->points[i];
    if (!pt->reason || !in_selection(o, i))
      continue;
    char label[1024];
    fprintf(stderr, "dtsim sweep: point %zu (%s) cannot run: %s\n", i, dt_sweep_point_label(P, pt, label, sizeof label),
            pt->reason);
  }
}

static int emit_slurm(const opts *o, const dt_sweep_plan *P, size_t ntodo)
{
  size_t runnable = P->npoints - P->nimpossible;
  long shards = o->shards ? o->shards : (long)(runnable < 100 ? (runnable ? runnable : 1) : 100);
  if (shards > (long)(runnable ? runnable : 1)) { /* a shard without a point would be an empty array task */
    fprintf(stderr, "dtsim: note: --shards %ld capped to %zu, the number of points that can run\n", shards,
            runnable ? runnable : 1);
    shards = (long)(runnable ? runnable : 1);
  }
  long cpus = o->cpus ? o->cpus : 1;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) {
    fprintf(stderr, "dtsim: error: cannot read the current folder: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  /* the array task: dtsim sweep run --shard $SLURM_ARRAY_TASK_ID/N, expanded when the task runs */
  char **w = NULL;
  size_t nw = 0;
  add_word(&w, &nw, P->exe);
  add_word(&w, &nw, "sweep");
  add_word(&w, &nw, "run");
  add_word(&w, &nw, "--quiet");
  for (size_t i = 0; i < o->nspec_args; i++)
    add_word(&w, &nw, o->spec_args[i]);
  char *task = sh_join((const char *const *)w, nw);
  for (size_t i = 0; i < nw; i++)
    free(w[i]);
  free(w);
  w = NULL;
  nw = 0;
  add_word(&w, &nw, P->exe);
  add_word(&w, &nw, "sweep");
  add_word(&w, &nw, "collect");
  for (size_t i = 0; i < o->nspec_args; i++)
    add_word(&w, &nw, o->spec_args[i]);
  char csv[4300];
  snprintf(csv, sizeof csv, "%s/sweep.csv", P->spec->dir);
  if (o->nouts == 0) {
    add_word(&w, &nw, "-o");
    add_word(&w, &nw, csv);
  }
  for (size_t i = 0; i < o->nouts; i++) {
    add_word(&w, &nw, "-o");
    add_word(&w, &nw, o->outs[i]);
  }
  if (o->plot) {
    add_word(&w, &nw, "--plot");
    add_word(&w, &nw, o->plot);
  }
  if (o->plot_x) {
    add_word(&w, &nw, "--plot-x");
    add_word(&w, &nw, o->plot_x);
  }
  if (o->plot_by) {
    add_word(&w, &nw, "--plot-by");
    add_word(&w, &nw, o->plot_by);
  }
  if (o->heatmap)
    add_word(&w, &nw, "--heatmap");
  for (size_t i = 0; i < o->nwhere; i++) {
    add_word(&w, &nw, "--plot-where");
    add_word(&w, &nw, o->where[i]);
  }
  char *collect = sh_join((const char *const *)w, nw);
  for (size_t i = 0; i < nw; i++)
    free(w[i]);
  free(w);
  char logs[4200];
  snprintf(logs, sizeof logs, "%s/slurm", P->spec->dir);

  printf("#!/bin/sh\n");
  printf("# Submits the dtsim sweep %s (%zu points, %zu not cached yet) to Slurm: a job array of %ld shards,\n"
         "# each 'dtsim sweep run --shard I/%ld', and a collect job that runs when the array has ended and\n"
         "# writes the tables. Written by 'dtsim sweep --emit slurm'; run it with sh on a submit host that\n"
         "# shares this folder with the compute nodes (docs/sweep.md).\n",
         o->spec ? o->spec : "(--set flags)", P->npoints, ntodo, shards, shards);
  printf("set -eu\ncd ");
  sh_quote(stdout, cwd);
  printf("\nmkdir -p ");
  sh_quote(stdout, logs);
  printf("\narray=$(sbatch --parsable --job-name=dtsim-sweep --array=0-%ld --cpus-per-task=%ld", shards - 1, cpus);
  if (o->sbatch_args)
    printf(" %s", o->sbatch_args);
  printf(" --output=");
  snprintf(csv, sizeof csv, "%s/shard-%%a.out", logs);
  sh_quote(stdout, csv);
  /* single quotes keep $SLURM_ARRAY_TASK_ID for the task's shell */
  char wrap[16384];
  snprintf(wrap, sizeof wrap, "%s --shard \"$SLURM_ARRAY_TASK_ID/%ld\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\"", task,
           shards);
  printf(" --wrap=");
  sh_quote(stdout, wrap);
  printf(")\narray=${array%%%%;*}\n");
  printf("collect=$(sbatch --parsable --job-name=dtsim-sweep-collect --dependency=afterany:$array");
  if (o->sbatch_args)
    printf(" %s", o->sbatch_args);
  printf(" --output=");
  snprintf(csv, sizeof csv, "%s/collect.out", logs);
  sh_quote(stdout, csv);
  printf(" --wrap=");
  sh_quote(stdout, collect);
  printf(")\ncollect=${collect%%%%;*}\n");
  printf("echo \"dtsim sweep: submitted job array $array (%ld shards) and collect job $collect\"\n", shards);
  free(task);
  free(collect);
  return EXIT_OK;
}

static int emit_commands(const opts *o, const dt_sweep_plan *P, const size_t *todo, size_t n)
{
  for (size_t k = 0; k < n; k++) {
    char idx[32];
    snprintf(idx, sizeof idx, "%zu", todo[k]);
    const char *head[] = {P->exe, "sweep", "run", "--quiet", "--point", idx};
    char *a = sh_join(head, 6);
    char *b = sh_join((const char *const *)o->spec_args, o->nspec_args);
    printf("%s %s\n", a, b);
    free(a);
    free(b);
  }
  return EXIT_OK;
}

int dt_cmd_sweep(int argc, char **argv)
{
  opts o;
  memset(&o, 0, sizeof o);
  int prc = parse_opts(argc, argv, &o);
  if (prc != 0) {
    opts_free(&o);
    return prc < 0 ? EXIT_OK : prc;
  }
  dt_error err;
  dt_error_clear(&err);
  dt_sweep_spec *spec = NULL;
  dt_sweep_plan *P = NULL;
  dt_sweep_result *res = NULL;
  size_t *todo = NULL;
  int rc = EXIT_USAGE;
  char buf[2048];
  /* the outputs, before the points run (was: every point ran, then 'cannot write'); plan writes none */
  for (size_t i = 0; o.verb != 2 && i < o.nouts; i++)
    if (dt_cli_output_check("-o", o.outs[i], "the table", &err) != DT_OK)
      goto fail;
  if (o.verb != 2 && o.plot && dt_cli_output_check("--plot", o.plot, "the plot", &err) != DT_OK)
    goto fail;
  if (dt_sweep_spec_load(o.spec, (const char *const *)o.sets, o.nsets, &spec, &err) != DT_OK)
    goto fail;
  /* the plot options, before the first point runs (was: every point ran, then 'not an axis') */
  if (o.verb != 2 && o.plot && dt_sweep_plot_check(o.plot, o.plot_x, o.plot_by, o.heatmap, o.where, o.nwhere, spec, &err) != DT_OK)
    goto fail;
  filter fl = {&o};
  if (dt_sweep_plan_make(spec, o.npoints_only ? wanted : NULL, &fl, &P, &err) != DT_OK)
    goto fail;
  for (size_t i = 0; i < o.npoints_only; i++)
    if ((size_t)o.points_only[i] >= P->npoints) {
      fprintf(stderr, "dtsim: error: --point %ld: the sweep has points 0 to %zu\n", o.points_only[i],
              P->npoints - 1);
      goto done;
    }
  if (P->note[0])
    fprintf(stderr, "dtsim: note: %s\n", P->note);
  if (!o.npoints_only && dt_sweep_manifest_write(P, &err) != DT_OK)
    goto fail;
  if (o.verb == 2) { /* plan */
    for (size_t i = 0; i < P->npoints; i++) {
      char label[1024];
      const dt_sweep_point *pt = &P->points[i];
      printf("%zu\t%s\t%s%s%s\n", i, pt->reason ? "impossible" : dt_sweep_cached(P, pt) ? "cached" : "to run",
             dt_sweep_point_label(P, pt, label, sizeof label), pt->reason ? "\t" : "", pt->reason ? pt->reason : "");
    }
    rc = P->nimpossible == P->npoints ? EXIT_USAGE : EXIT_OK;
    if (rc != EXIT_OK) /* every exit 2 says why on stderr (was: the list on stdout alone) */
      fprintf(stderr, "dtsim: error: none of the %zu points can run (the list on stdout says why, point by point)\n",
              P->npoints);
    goto done;
  }
  if (P->npoints > 0 && P->nimpossible == P->npoints && !o.npoints_only) {
    print_impossible(&o, P);
    fprintf(stderr, "dtsim: error: none of the %zu points can run\n", P->npoints);
    goto done;
  }
  if (o.verb == 1) { /* collect: import other folders' results, then report */
    size_t imported = 0;
    for (size_t d = 0; d < o.nfrom; d++)
      for (size_t i = 0; i < P->npoints; i++) {
        const dt_sweep_point *pt = &P->points[i];
        if (pt->reason || dt_sweep_cached(P, pt))
          continue;
        const char *exts[] = {"log", "fail", "json"};
        int got = 0;
        for (int e = 0; e < 3; e++) {
          char from[4400], to[4400];
          snprintf(from, sizeof from, "%s/results/%s.%s", o.from[d], pt->hash, exts[e]);
          dt_sweep_cache_path(P, pt, exts[e], to, sizeof to);
          if (access(from, R_OK) == 0 && copy_file(from, to) == 0)
            got |= e > 0;
        }
        imported += got;
      }
    if (o.nfrom)
      fprintf(stderr, "dtsim sweep: took %zu result%s from %zu folder%s\n", imported, imported == 1 ? "" : "s",
              o.nfrom, o.nfrom == 1 ? "" : "s");
  } else {
    print_impossible(&o, P);
  }

  /* what is still to run */
  todo = dt_xmalloc(sizeof *todo * (P->npoints ? P->npoints : 1));
  size_t ntodo = 0, nsel = 0, ncached = 0, nimpossible = 0; /* of this selection (shard, --point): not the grid */
  for (size_t i = 0; i < P->npoints; i++) {
    if (in_selection(&o, i) && P->points[i].reason)
      nimpossible++;
    if (!in_selection(&o, i) || P->points[i].reason)
      continue;
    nsel++;
    if (dt_sweep_cached(P, &P->points[i]))
      ncached++;
    else
      todo[ntodo++] = i;
  }
  if (o.emit_commands) {
    rc = emit_commands(&o, P, todo, ntodo);
    goto done;
  }
  if (o.emit_slurm) {
    rc = emit_slurm(&o, P, ntodo);
    goto done;
  }
  if (o.verb == 0) {
    long jobs = o.jobs ? o.jobs : usable_cpus();
    if (!o.quiet)
      fprintf(stderr, "dtsim sweep: %zu point%s%s: %zu cached, %zu to run on %ld worker%s, %zu cannot run; folder %s\n",
              nsel, nsel == 1 ? "" : "s", o.shard_n ? " in this shard" : "", ncached, ntodo, jobs,
              jobs == 1 ? "" : "s", nimpossible, spec->dir);
    long failed = run_pool(P, todo, ntodo, jobs, !o.quiet && isatty(2));
    if (failed < 0) {
      size_t now = 0;
      for (size_t k = 0; k < ntodo; k++)
        now += dt_sweep_cached(P, &P->points[todo[k]]);
      fprintf(stderr, "dtsim sweep: interrupted: %zu of the %zu points finished and are cached; run the same "
                      "command again to run the other %zu\n", now, ntodo, ntodo - now);
      rc = EXIT_INTERRUPTED;
      goto done;
    }
  }
  /* report: every point's result from the cache */
  res = dt_xcalloc(P->npoints ? P->npoints : 1, sizeof *res);
  size_t nmissing = 0, nfailed = 0;
  for (size_t i = 0; i < P->npoints; i++) {
    if (!P->points[i].hash[0] && !P->points[i].reason) { /* not planned (--point) */
      res[i].status = DT_POINT_MISSING;
      res[i].reason = dt_xstrdup("not planned in this run");
      continue;
    }
    dt_sweep_result_load(P, &P->points[i], &res[i]);
    if (!in_selection(&o, i))
      continue;
    nmissing += res[i].status == DT_POINT_MISSING;
    nfailed += res[i].status == DT_POINT_FAILED;
  }
  int partial = o.shard_n || o.npoints_only;
  if (o.nouts || o.plot || (!partial && o.verb == 0) || o.verb == 1) {
    if (partial && !o.nouts && !o.plot) {
      rc = EXIT_OK;
    } else {
      rc = write_outputs(&o, P, res);
      if (rc != EXIT_OK)
        goto done;
    }
  }
  if (nmissing) {
    size_t shown = 0;
    fprintf(stderr, "dtsim sweep: %zu point%s not run yet:", nmissing, nmissing == 1 ? " is" : "s are");
    for (size_t i = 0; i < P->npoints && shown < 10; i++)
      if (in_selection(&o, i) && res[i].status == DT_POINT_MISSING)
        fprintf(stderr, " %zu", i), shown++;
    fprintf(stderr, "%s\n", nmissing > shown ? " ..." : "");
  }
  if (!o.quiet || nfailed)
    fprintf(stderr, "dtsim sweep: %zu ok, %zu failed, %zu cannot run%s%s\n", nsel - nfailed - nmissing, nfailed,
            nimpossible, o.shard_n ? " in this shard" : "", nmissing ? ", some not run yet" : "");
  rc = nfailed || nmissing ? EXIT_PROBLEM : EXIT_OK;
  goto done;
fail:
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
  rc = EXIT_USAGE;
done:
  if (res)
    for (size_t i = 0; i < P->npoints; i++)
      dt_sweep_result_clear(&res[i]);
  free(res);
  free(todo);
  dt_sweep_plan_free(P);
  dt_sweep_spec_free(spec);
  opts_free(&o);
  return rc;
}
