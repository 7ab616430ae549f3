/* The dtsim command line: a table of subcommands, option parsing with getopt_long, and one place that maps
 * results to exit codes (0 success, 1 simulation finished with a problem, 2 bad input or usage). */
#include "dt_cli.h"
#include "dt_bench.h"

#include "../common/dt_outfile.h"
#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "../replay/dt_replay.h"
#include "../traces/dt_scale.h"
#include "../traces/dt_trace_io.h"
#include "cmd_bench.h"
#include "cmd_jobs.h"
#include "cmd_platform.h"
#include "cmd_calibrate.h"
#include "cmd_sweep.h"
#include "cmd_validate.h"
#include "dt_cmd_gen.h"
#include "dt_report.h"
#include "dt_faultcmp.h"
#include "dt_simlog.h"
#include "dt_explain.h"
#include "dt_plot.h"
#include "dt_samples.h"

#include <getopt.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_PROBLEM = 1, EXIT_USAGE = 2 };

typedef struct cmd {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
  const char *usage;
} cmd;

static int cmd_run(int argc, char **argv);
static int cmd_import(int argc, char **argv);
static int cmd_scale(int argc, char **argv);
static int cmd_help(int argc, char **argv);
static int cmd_gen(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char run_usage[] =
    "usage: dtsim run [options] PLATFORM.yaml TRACE...\n"
    "       dtsim run [options] PLATFORM.yaml --gen PRESET|WORKLOAD.yaml [generator options]\n"
    "       dtsim run [options] PLATFORM.yaml --job NAME (TRACE...|--gen ...) [--nodes LIST] --job NAME ...\n"
    "\n"
    "Replays a trace on a platform and reports the iteration time and where communication goes. TRACE is a\n"
    "native .dtt (one file, per-rank files or their directory) or captures of one format, one file per rank\n"
    "or process: PyTorch profiler / Kineto .json[.gz], NCCL INFO logs, NCCL Inspector logs, DeepSpeed comms\n"
    "logs, Chakra .et files ('dtsim import --explain' lists what each importer assumes). With --gen, the\n"
    "trace is generated (as 'dtsim gen' would write it, see 'dtsim help gen') and replayed without a file.\n"
    "\n"
    "  --json                 print only the JSON report on stdout (notes also go to stderr)\n"
    "  --fidelity flow|step   collective model: one aggregated flow per neighbour (default) or every\n"
    "                         algorithm step (all-reduce, all-gather, reduce-scatter)\n"
    "  --exact                no shortcut: simulate every collective as flows, even where its closed form is\n"
    "                         exact (docs/replay.md, Shortcuts)\n"
    "  --algo A               collective algorithm: auto (default: chosen per collective from the platform's\n"
    "                         nccl: model), {algos}\n"
    "  --proto P              protocol: auto (default), LL, LL128, Simple\n"
    "  --cfg KEY:VALUE        a SimGrid setting, repeatable (e.g. contexts/factory:thread)\n"
    "  --log CAT.thres:LEVEL  a SimGrid log threshold, repeatable: CAT is dtsim or one of its modules (dtsim_replay,\n"
    "                         dtsim_coll, dtsim_critpath, dtsim_timeline, dtsim_platform), LEVEL debug, verbose,\n"
    "                         info, ... (e.g. --log dtsim_replay.thres:debug prints every instance; on stderr)\n"
    "  --explain              also explain, with this run's numbers, what each collective did (algorithm,\n"
    "                         protocol, why, alpha-beta terms, algbw/busbw) and what bounds the iteration\n"
    "  --plot DIR             also write gnuplot data and scripts (and PNGs when gnuplot is installed) of the\n"
    "                         critical path, each rank, the link classes and the message sizes into DIR\n"
    "  --top N                busiest link directions listed in the report (default 10)\n"
    "  --no-links             turn the per-link accounting off (no links section; a little faster)\n"
    "  --degrade TARGET=F     multiply the bandwidth of a link class (leaf-spine, nic-leaf, nvlink, ...) or one\n"
    "                         link ('dtsim platform show PLATFORM --links') by F in (0, 1], repeatable\n"
    "  --fail LINK@TIME       the link fails at TIME (0: from the start; routes avoid it where the fabric can),\n"
    "                         repeatable; a flow crossing it when it fails stops the run, as NCCL aborts\n"
    "  --flap LINK=P,D[,S]    the link is down for D every P from S (default 0): flows on it stall, repeatable\n"
    "                         (with any of the three, the report compares with the same run without them)\n"
    "  --timeline FILE        write a Chrome trace event timeline (open it in Perfetto or chrome://tracing)\n"
    "  --timeline-ranks LIST  ranks the timeline shows, e.g. 0-7,64 (default: all, or 0-63 above 64 ranks)\n"
    "  --placement FILE       rank-to-GPU map, lines 'rank node gpu' (default rank r on node r/G, GPU r%G)\n"
    "  --format F             input format: auto (default: sniffed from the content), native, kineto,\n"
    "                         nccl-log, nccl-inspector, deepspeed, chakra\n"
    "  --expand N             expand a single-rank capture to N ranks (default: the capture's world size);\n"
    "                         the captured world's group grows to N ranks, smaller groups tile the world\n"
    "  --rank R               rank of a capture that does not say\n"
    "  --dep-window TIME      Kineto: cross-stream happens-before window (default 5us)\n"
    "  --gaps host|keep|drop  Kineto: replay the host launch timeline (host, the default), or the GPU streams\n"
    "                         alone with their idle gaps kept as delay ops (keep) or dropped (drop)\n"
    "  --compute-gap TIME     NCCL log, DeepSpeed: compute before every communication call (default 0: the\n"
    "                         logs have no durations)\n"
    "  --world N              DeepSpeed: world size (the log is rank 0's only)\n"
    "  --group-size KIND=N    DeepSpeed: group size of op KIND (allreduce, allgather, ..., or all), repeatable\n"
    "  --slow RANKS=FACTOR    compute-speed factor of ranks (0-7, 3, 0,5,9; 0.5 = half speed), repeatable\n"
    "  --late RANKS=TIME      ranks start TIME late (e.g. 3=2ms), repeatable\n"
    "  --jitter SIGMA         per compute op a lognormal factor of mean 1 and sigma SIGMA (0 to 1)\n"
    "  --seed N               the jitter's seed (default: variability.seed, else 1); same seed, same output\n"
    "  --samples N            run N seeds (seed, seed+1, ...) and report the mean and 5-95 % interval of\n"
    "                         the iteration and of its critical-path split (needs jitter; docs/whatif.md)\n";

static const char import_usage[] =
    "usage: dtsim import [options] FILE... -o OUT\n"
    "       dtsim import --explain [options] [FILE...] [-o OUT]\n"
    "\n"
    "Converts captures (one format, one file per rank or process) to the native trace format. OUT ending\n"
    "with '/' writes one file per rank. --explain prints the format chosen, every assumption its importer\n"
    "makes and the notes of this capture (and, for NCCL Inspector, the measured times); without files it\n"
    "lists every importer and its assumptions.\n"
    "\n"
    "  -o, --output OUT       output file, directory/ for per-rank files, or - for stdout; a directory that\n"
    "                         already holds .dtt files is refused (a run of it would read them too)\n"
    "  --force                remove the .dtt files of such a directory first (other files stay)\n"
    "  --max-output SIZE      refuse to write more than SIZE (K, M, G, T = 1024; default 16G): refused before\n"
    "                         writing when 8 bytes per op pass it, else stopped (nothing kept) once passed\n"
    "  --explain              print what the import assumed (on stdout)\n"
    "  --format F, --expand N, --rank R, --dep-window TIME, --gaps host|keep|drop, --compute-gap TIME,\n"
    "  --world N, --group-size KIND=N   as for 'dtsim run'\n";

static const char scale_usage[] =
    "usage: dtsim scale [options] TRACE... --dp D --grad GROUP[,GROUP...] -o OUT\n"
    "\n"
    "Writes the trace of D data-parallel replicas from a trace or capture of fewer (one replica, or one rank\n"
    "of a data-parallel run). Ranks follow Megatron-LM's order, TP innermost, then DP, then PP: rank =\n"
    "t + TP*(j + DP*k). The gradient groups named by --grad become the new DP groups; all-gathers on them\n"
    "(ZeRO parameter shards) scale by the old/new DP degree. The mapping is checked and printed.\n"
    "\n"
    "  --dp D                 data-parallel degree wanted\n"
    "  --tp T, --pp P         the input's tensor- and pipeline-parallel degrees (default 1); its DP degree is\n"
    "                         ranks / (T*P)\n"
    "  --grad GROUPS          the input's gradient (data-parallel) groups, by name, comma-separated\n"
    "  -o, --output OUT       output file, directory/ for per-rank files, or - for stdout\n"
    "  --force                remove the .dtt files of an earlier run from -o DIR/ first (as 'dtsim import')\n"
    "  --format F, --expand N, --rank R, --dep-window TIME, --gaps host|keep|drop, ...   as for 'dtsim run'\n";

static const cmd commands[] = {
    {"run", cmd_run, "replay a trace on a platform and report iteration time and communication", run_usage},
    {"import", cmd_import, "convert captures (Kineto, NCCL logs, NCCL Inspector, DeepSpeed, Chakra) to the native format", import_usage},
    {"scale", cmd_scale, "write the trace of more data-parallel replicas from a trace or capture of fewer", scale_usage},
    {"gen", cmd_gen, "generate the trace of a GPT training iteration (Megatron-LM / DeepSpeed)", dt_gen_usage},
    {"platform", dt_cmd_platform, "check a platform file or show its links and routes", dt_cmd_platform_usage},
    {"bench", dt_cmd_bench, "simulate an nccl-tests benchmark (all_reduce, all_gather, ...) on a platform",
     dt_cmd_bench_usage},
    {"sweep", dt_cmd_sweep, "sweep platform, workload and run parameters: cached points, shards, Slurm, plots",
     dt_cmd_sweep_usage},
    {"validate", dt_cmd_validate, "compare simulated nccl-tests numbers (--e2e: training iterations) with measurements",
     dt_cmd_validate_usage},
    {"calibrate", dt_cmd_calibrate, "fit a platform's NCCL-model constants to your nccl-tests output, write it",
     dt_cmd_calibrate_usage},
    {"help", cmd_help, "show help for dtsim or a subcommand", "usage: dtsim help [COMMAND]\n"},
    {"version", cmd_version, "print the version", "usage: dtsim version\n"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_error(const dt_error *err)
{
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(err, buf, sizeof buf));
}

/* The SimGrid settings `run --cfg` accepts (docs/replay.md "SimGrid settings"), with their value ranges: others
 * crashed, hung or aborted inside SimGrid (maxmin/precision:-1, contexts/stack-size:0, network/model:foo,
 * contexts/factory:nope, surf/precision:-1), and dtsim sets the network model itself. */
static const struct {
  const char *key;
  const char *choices; /* space-separated values; NULL: a number in [lo, hi] */
  double lo, hi;
  int integer;
  const char *unit; /* what the number counts, for messages */
} cfg_keys[] = {
    {"contexts/factory", "thread raw ucontext boost", 0, 0, 0, NULL},
    {"contexts/stack-size", NULL, 64, 1048576, 1, "KiB"},
    {"contexts/guard-size", NULL, 0, 64, 1, "pages"},
    {"maxmin/precision", NULL, 1e-15, 1e-2, 0, NULL},
    {"surf/precision", NULL, 1e-15, 1e-2, 0, NULL},
};

/* Whether v is a plain decimal number: digits with at most one '.', at least one digit, then optionally e or E, an
 * optional sign and digits ("1e-6", "0.001", ".5", "5."); no sign in front, no space, no hex, no inf or nan. */
static int plain_decimal(const char *v)
{
  size_t digits = strspn(v, "0123456789");
  const char *p = v + digits;
  if (*p == '.') {
    size_t frac = strspn(p + 1, "0123456789");
    digits += frac;
    p += 1 + frac;
  }
  if (digits == 0)
    return 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    size_t exp = strspn(p, "0123456789");
    if (exp == 0)
      return 0;
    p += exp;
  }
  return *p == '\0';
}

/* 0 when KEY:VALUE is an accepted SimGrid setting with a value in its range, else -1 with why set. SimGrid reads an
 * integer setting with strtol in base 0 and a double with strtod (xbt/config.cpp): dtsim accepts only the spellings
 * on which both agree with what a user means, decimal digits without a leading zero for integers ("0100" is octal 64
 * to SimGrid, "0x40" hex, "1e3" and "128.0" are not integers to it) and plain decimals for doubles. */
static int check_cfg(const char *kv, char *why, size_t why_size)
{
  const char *colon = strchr(kv, ':');
  size_t klen = (size_t)(colon - kv);
  const char *val = colon + 1;
  char list[256] = "";
  for (size_t i = 0; i < sizeof cfg_keys / sizeof cfg_keys[0]; i++) {
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", cfg_keys[i].key);
    if (strlen(cfg_keys[i].key) != klen || strncmp(kv, cfg_keys[i].key, klen) != 0)
      continue;
    if (cfg_keys[i].choices) {
      size_t vlen = strlen(val);
      for (const char *c = cfg_keys[i].choices; *c;) {
        size_t n = strcspn(c, " ");
        if (n == vlen && vlen > 0 && strncmp(c, val, n) == 0)
          return 0;
        c += n + (c[n] == ' ');
      }
      snprintf(why, why_size, "--cfg %s: expected one of %s, found '%s'", cfg_keys[i].key, cfg_keys[i].choices, val);
      return -1;
    }
    int ok;
    if (cfg_keys[i].integer) {
      long long x;
      ok = dt_parse_whole(val, (long long)cfg_keys[i].lo, (long long)cfg_keys[i].hi, &x) == 0 &&
           (val[0] != '0' || val[1] == '\0');
    } else {
      errno = 0;
      double x = plain_decimal(val) ? strtod(val, NULL) : -1;
      ok = errno == 0 && x >= cfg_keys[i].lo && x <= cfg_keys[i].hi;
    }
    if (!ok) {
      if (cfg_keys[i].integer)
        snprintf(why, why_size, "--cfg %s: expected a whole number of %s from %.15g to %.15g in decimal digits "
                 "without a sign or leading zero (SimGrid reads 0100 as octal and 0x40 as hex), found '%s'",
                 cfg_keys[i].key, cfg_keys[i].unit, cfg_keys[i].lo, cfg_keys[i].hi, val);
      else
        snprintf(why, why_size, "--cfg %s: expected a plain decimal number from %.15g to %.15g (as 1e-9 or 0.0001), "
                 "found '%s'", cfg_keys[i].key, cfg_keys[i].lo, cfg_keys[i].hi, val);
      return -1;
    }
    return 0;
  }
  snprintf(why, why_size, "--cfg accepts only the SimGrid settings %s (dtsim sets the network model itself), "
           "found '%.*s'", list, (int)klen, kv);
  return -1;
}

int dt_cli_check_cfg(const char *kv, char *why, size_t why_size)
{
  if (!strchr(kv, ':')) {
    snprintf(why, why_size, "--cfg expects a SimGrid setting KEY:VALUE, found '%s'", kv);
    return -1;
  }
  return check_cfg(kv, why, why_size);
}

int dt_cli_model_option(const char *name, const char *arg, dt_fidelity *fidelity, dt_algo *algo, int *proto,
                        char *why, size_t why_size)
{
  if (strcmp(name, "fidelity") == 0) {
    if (strcmp(arg, "flow") == 0 || strcmp(arg, "step") == 0) {
      *fidelity = strcmp(arg, "step") == 0 ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW;
      return 0;
    }
    snprintf(why, why_size, "--fidelity expects flow or step, found '%s'", arg);
  } else if (strcmp(name, "algo") == 0) {
    int a = dt_algo_from_name(arg);
    if (a >= 0) {
      *algo = (dt_algo)a;
      return 0;
    }
    char names[160];
    snprintf(why, why_size, "--algo expects %s, found '%s'", dt_algo_list(names, sizeof names, 1, " or "), arg);
  } else {
    int pr = strcmp(arg, "auto") == 0 ? -1 : dt_proto_from_name(arg);
    if (pr >= 0 || strcmp(arg, "auto") == 0) {
      *proto = pr;
      return 0;
    }
    snprintf(why, why_size, "--proto expects auto, LL, LL128 or Simple, found '%s'", arg);
  }
  return -1;
}

int dt_cli_simgrid_option(int is_log, const char *arg, dt_replay_opts *ro, char *why, size_t why_size)
{
  if (!is_log && !strchr(arg, ':')) {
    snprintf(why, why_size, "--cfg expects a SimGrid setting KEY:VALUE, found '%s'", arg);
    return -1;
  }
  if ((is_log ? dt_check_log_setting(arg, why, why_size) : check_cfg(arg, why, why_size)) != 0)
    return -1;
  ro->simgrid_argv = dt_xrealloc(ro->simgrid_argv, sizeof *ro->simgrid_argv * (size_t)(ro->simgrid_argc + 1));
  size_t size = strlen(arg) + 7;
  ro->simgrid_argv[ro->simgrid_argc] = dt_xmalloc(size);
  snprintf(ro->simgrid_argv[ro->simgrid_argc], size, "--%s=%s", is_log ? "log" : "cfg", arg);
  ro->simgrid_argc++;
  return 0;
}

void dt_cli_print_usage(FILE *f, const char *text)
{
  static const char token[] = "{algos}";
  for (const char *at; (at = strstr(text, token)) != NULL; text = at + sizeof token - 1) {
    char names[160];
    fprintf(f, "%.*s%s", (int)(at - text), text, dt_algo_list(names, sizeof names, 0, ", "));
  }
  fputs(text, f);
}

int dt_cli_output_check(const char *flag, const char *path, const char *what, dt_error *err)
{
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return dt_error_set(err, "", 0, 0, "%s %s is a directory: expected the name of the file to write %s into", flag,
                        path, what);
  dt_error e;
  dt_error_clear(&e);
  errno = 0;
  if (dt_outfile_check(path, &e) == DT_OK)
    return DT_OK;
  int errnum = errno ? errno : EIO;
  /* the folder the temporary goes to: dt_outfile writes PATH.tmp.PID.N there and renames it over PATH */
  char *dir = dt_xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    strcpy(dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  int rc;
  if (stat(dir, &st) != 0)
    rc = dt_error_set(err, "", 0, 0, "%s %s: the folder '%s' does not exist (create it first)", flag, path, dir);
  else if (!S_ISDIR(st.st_mode))
    rc = dt_error_set(err, "", 0, 0, "%s %s: '%s' is not a folder", flag, path, dir);
  else
    rc = dt_error_set(err, "", 0, 0, "%s %s: cannot create a file in '%s' (%s%s): dtsim writes %s to a temporary "
                      "file next to it, '%s.tmp.*', and renames it over '%s' when complete; give a path in a folder "
                      "you can write", flag, path, dir, strerror(errnum),
                      errnum == ENOENT ? ": that file system accepts no new files" : "", what, path, path);
  free(dir);
  return rc;
}

/* The spelling of option opt for messages: "-o/--output", "--top", "-j". NULL when opt is no option of the table. */
static const char *option_label(int opt, const char *optstring, const struct option *longopts, int *takes_arg,
                                char *buf, size_t size)
{
  const char *longname = NULL;
  *takes_arg = 0;
  for (const struct option *o = longopts; o && o->name; o++)
    if (!o->flag && o->val == opt) {
      longname = o->name;
      *takes_arg = o->has_arg != no_argument;
      break;
    }
  const char *letter = opt > 0 && opt < 128 && opt != ':' && opt != '?' ? strchr(optstring, opt) : NULL;
  if (letter)
    *takes_arg |= letter[1] == ':';
  if (letter && longname)
    snprintf(buf, size, "-%c/--%s", opt, longname);
  else if (letter)
    snprintf(buf, size, "-%c", opt);
  else if (longname)
    snprintf(buf, size, "--%s", longname);
  else
    return NULL;
  return buf;
}

/* Whether name is one of the space-separated words of list. */
static int in_word_list(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *w = list; w && *w;) {
    size_t len = strcspn(w, " ");
    if (len == n && strncmp(w, name, n) == 0)
      return 1;
    w += len + (w[len] == ' ');
  }
  return 0;
}

int dt_cli_check_repeats(const char *cmdname, int argc, char **argv, const char *optstring,
                         const struct option *longopts, const char *repeatable)
{
  int *vals = dt_xcalloc((size_t)argc + 1, sizeof *vals);
  const char **firsts = dt_xcalloc((size_t)argc + 1, sizeof *firsts);
  /* on a copy of the array: getopt_long permutes it, and a permuted argv read again is not the same command line
   * (`bench OP --gpus` would become `--gpus OP`) */
  char **copy = dt_xcalloc((size_t)argc + 1, sizeof *copy);
  memcpy(copy, argv, sizeof *copy * (size_t)argc);
  size_t n = 0;
  int rc = 0, opt;
  optind = 0; /* a fresh scan (glibc: 0 re-initializes getopt); the caller's own loop sets optind again */
  while (rc == 0 && (opt = getopt_long(argc, copy, optstring, longopts, NULL)) != -1) {
    char label[96];
    int takes_arg;
    if (opt == ':' || opt == '?' || !optarg || !option_label(opt, optstring, longopts, &takes_arg, label,
                                                              sizeof label) || !takes_arg)
      continue; /* errors are the caller's loop's to report; a flag without a value may be repeated */
    const char *longname = strstr(label, "--");
    if (longname && in_word_list(repeatable, longname + 2))
      continue;
    size_t k = 0;
    while (k < n && vals[k] != opt)
      k++;
    if (k == n) {
      vals[n] = opt;
      firsts[n++] = optarg;
      continue;
    }
    fprintf(stderr, "dtsim %s: %s given twice ('%s' and '%s'): it takes one value, give it once\nrun 'dtsim help "
            "%s' for usage\n", cmdname, label, firsts[k], optarg, strchr(cmdname, ' ') ? "run" : cmdname);
    rc = -1;
  }
  optind = 0;
  free(copy);
  free(vals);
  free(firsts);
  return rc;
}

void dt_cli_name_output(dt_error *err, const char *flag, const char *path)
{
  if (!err || !path || !*path || !err->file[0] || err->line > 0)
    return;
  size_t n = strlen(path);
  int same = strcmp(err->file, path) == 0 ||
             (path[n - 1] == '/' && strlen(err->file) + 1 == n && strncmp(err->file, path, n - 1) == 0);
  int inside = !same && strncmp(err->file, path, n) == 0 && (path[n - 1] == '/' || err->file[n] == '/');
  if (!same && !inside)
    return;
  char msg[sizeof err->msg + sizeof err->file + 200];
  if (same)
    snprintf(msg, sizeof msg, "%s %s: %s", flag, path, err->msg);
  else
    snprintf(msg, sizeof msg, "%s %s: %s: %s", flag, path, err->file, err->msg);
  int keep = (int)sizeof err->msg - 1;
  snprintf(err->msg, sizeof err->msg, "%.*s", keep, msg);
  err->file[0] = '\0';
  err->col = 0;
}

static int usage_error(const char *cmdname, const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim %s: ", cmdname);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help %s' for usage\n", cmdname);
  return EXIT_USAGE;
}

/* A whole-number option (dt_parse_whole: digits alone, no sign) in [lo, hi]; what names it ("a rank count").
 * Returns 0 with *out set, or prints the usage error with the range and returns -1. */
static int count_option(const char *cmdname, const char *flag, const char *what, const char *arg, long long lo,
                        long long hi, long long *out)
{
  if (dt_parse_whole(arg, lo, hi, out) == 0)
    return 0;
  fprintf(stderr, "dtsim %s: %s expects %s from %lld to %lld (a whole number), found '%s'\nrun 'dtsim help %s' for "
          "usage\n", cmdname, flag, what, lo, hi, arg, cmdname);
  return -1;
}

int dt_cli_bad_option(const char *cmdname, int opt, char **argv, const struct option *longopts)
{
  const char *word = optind > 0 ? argv[optind - 1] : "";
  char msg[1024];
  if (opt == ':')
    snprintf(msg, sizeof msg, "option '%s' requires an argument", word);
  else
    snprintf(msg, sizeof msg, "unknown option '%s'", word);
  if (opt != ':' && longopts && strncmp(word, "--", 2) == 0 && word[2]) {
    size_t len = strcspn(word + 2, "=");
    const char *names[256];
    size_t n = 0, nprefix = 0, noarg = SIZE_MAX;
    char prefixed[512] = "";
    for (const struct option *o = longopts; o->name && n < 256; o++) {
      names[n++] = o->name;
      if (strncmp(o->name, word + 2, len) == 0) {
        if (strlen(o->name) == len && o->has_arg == no_argument)
          noarg = n - 1;
        size_t used = strlen(prefixed);
        snprintf(prefixed + used, sizeof prefixed - used, "%s--%s", nprefix++ ? ", " : "", o->name);
      }
    }
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(len < 255 ? len : 255), word + 2);
    if (noarg != SIZE_MAX && word[2 + len] == '=') /* --json=1 */
      snprintf(msg, sizeof msg, "option '--%s' takes no value, found '%s'", names[noarg], word);
    else if (nprefix > 1) /* getopt_long's abbreviation matched several */
      snprintf(msg, sizeof msg, "option '%s' is ambiguous: it could be %s", word, prefixed);
    else {
      const char *near = dt_nearest_word(name, names, n);
      if (near)
        snprintf(msg, sizeof msg, "unknown option '%s' (did you mean '--%s'?)", word, near);
    }
  }
  fprintf(stderr, "dtsim %s: %s\nrun 'dtsim help %s' for usage\n", cmdname, msg,
          strchr(cmdname, ' ') ? "run" : cmdname);
  return EXIT_USAGE;
}

int dt_cli_import_option(int opt, const char *cmdname, dt_import_opts *io)
{
  char why[256];
  switch (opt) {
  case 'F':
    if (strcmp(optarg, "auto") != 0 && !dt_importer_find(optarg)) {
      char names[512];
      size_t used = 0;
      for (size_t i = 0; i < dt_importer_count(); i++)
        used += (size_t)snprintf(names + used, sizeof names - used, ", %s", dt_importer_at(i)->name);
      fprintf(stderr, "dtsim %s: unknown format '%s' (expected auto%s)\nrun 'dtsim help %s' for usage\n", cmdname,
              optarg, names, cmdname);
      return -1;
    }
    io->format = optarg;
    return 1;
  case 'c':
    if (dt_parse_time(optarg, &io->compute_gap_s, why, sizeof why) != 0) {
      usage_error(cmdname, "--compute-gap: %s", why);
      return -1;
    }
    return 1;
  case 'w': {
    long long v;
    if (count_option(cmdname, "--world", "a rank count", optarg, 1, DT_TRACE_MAX_RANKS, &v) != 0)
      return -1;
    io->world = (int32_t)v;
    return 1;
  }
  case 'z': {
    const char *eq = strchr(optarg, '=');
    long long v = 0;
    if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof io->group_sizes[0].kind ||
        dt_parse_whole(eq + 1, 1, DT_TRACE_MAX_RANKS, &v) != 0) {
      char msg[160];
      snprintf(msg, sizeof msg, "--group-size expects KIND=N with N from 1 to %d (e.g. allgather=8), found '%%s'",
               DT_TRACE_MAX_RANKS);
      usage_error(cmdname, msg, optarg);
      return -1;
    }
    if (io->ngroup_sizes == DT_IMPORT_MAX_GROUP_SIZES) {
      usage_error(cmdname, "too many --group-size flags (at most 16), at '%s'", optarg);
      return -1;
    }
    size_t k = io->ngroup_sizes++;
    memcpy(io->group_sizes[k].kind, optarg, (size_t)(eq - optarg));
    io->group_sizes[k].kind[eq - optarg] = '\0';
    io->group_sizes[k].n = (int32_t)v;
    return 1;
  }
  case 'E': {
    long long v;
    if (count_option(cmdname, "--expand", "a rank count", optarg, 1, 100000000, &v) != 0)
      return -1;
    io->expand = (int32_t)v;
    return 1;
  }
  case 'R': {
    long long v;
    if (count_option(cmdname, "--rank", "a rank number", optarg, 0, 100000000, &v) != 0)
      return -1;
    io->rank = (int32_t)v;
    return 1;
  }
  case 'W':
    if (dt_parse_time(optarg, &io->dep_window_s, why, sizeof why) != 0) {
      usage_error(cmdname, "--dep-window: %s", why);
      return -1;
    }
    return 1;
  case 'G':
    if (strcmp(optarg, "host") == 0)
      io->host_timeline = 1, io->keep_gaps = 1;
    else if (strcmp(optarg, "keep") == 0)
      io->host_timeline = 0, io->keep_gaps = 1;
    else if (strcmp(optarg, "drop") == 0)
      io->host_timeline = 0, io->keep_gaps = 0;
    else {
      usage_error(cmdname, "--gaps expects host, keep or drop, found '%s'", optarg);
      return -1;
    }
    return 1;
  default:
    return 0;
  }
}

/* getopt values of the variability options (docs/whatif.md), clear of the letters, DT_GEN_OPT_BASE and OPT_DEGRADE */
enum { OPT_SLOW = 2200, OPT_LATE, OPT_JITTER, OPT_SEED, OPT_SAMPLES };

/* --slow, --late, --jitter, --seed, --samples. Returns 1 if handled, 0 if not, -1 on error (reported). */
static int var_option(int opt, dt_var_opts *vo, size_t *samples)
{
  char why[512];
  int rc = 0;
  switch (opt) {
  case OPT_SLOW:
  case OPT_LATE:
    rc = dt_var_opts_add(vo, optarg, opt == OPT_LATE, why, sizeof why);
    break;
  case OPT_JITTER:
    rc = dt_var_opts_sigma(vo, optarg, why, sizeof why);
    break;
  case OPT_SEED:
    rc = dt_var_opts_seed(vo, optarg, why, sizeof why);
    break;
  case OPT_SAMPLES: {
    long long v;
    if (dt_parse_whole(optarg, 1, DT_SAMPLES_MAX, &v) != 0) { /* digits alone, as every whole number */
      snprintf(why, sizeof why, "--samples expects a count of seeds from 1 to %d, found '%s'", DT_SAMPLES_MAX, optarg);
      rc = -1;
    } else
      *samples = (size_t)v;
    break;
  }
  default:
    return 0;
  }
  if (rc != 0) {
    usage_error("run", "%s", why);
    return -1;
  }
  return 1;
}

/* Ranks a --timeline shows when --timeline-ranks does not say. */
#define TIMELINE_DEFAULT_RANKS 64

/* Joins the trace paths into one label for the report header. */
static char *trace_label(char **paths, int n)
{
  size_t len = 1;
  for (int i = 0; i < n; i++)
    len += strlen(paths[i]) + 2;
  char *s = dt_xmalloc(len + 32);
  s[0] = '\0';
  int shown = n > 3 ? 2 : n;
  for (int i = 0; i < shown; i++) {
    if (i)
      strcat(s, ", ");
    strcat(s, paths[i]);
  }
  if (shown < n)
    sprintf(s + strlen(s), " and %d more files", n - shown);
  return s;
}

/* Whether path looks like a platform file: a .yaml / .yml name, or 'dtsim_platform:' in its first 4 KiB. */
static int looks_like_platform(const char *path)
{
  size_t n = strlen(path);
  if ((n > 5 && strcmp(path + n - 5, ".yaml") == 0) || (n > 4 && strcmp(path + n - 4, ".yml") == 0))
    return 1;
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  char head[4097];
  size_t got = fread(head, 1, sizeof head - 1, f);
  fclose(f);
  head[got] = '\0';
  return strstr(head, "dtsim_platform:") != NULL;
}

/* `dtsim run TRACE PLATFORM` or `dtsim run TRACE TRACE`: the platform did not load; when its argument is a trace
 * (sniffed as dt_trace_load would), says so, and that the arguments look swapped when a later one looks like a
 * platform (was: a YAML error about the trace's first line). Returns 1 when it said so. */
static int said_swapped(char **args, int nargs)
{
  const dt_importer *imp = NULL;
  dt_error e;
  dt_error_clear(&e);
  if (nargs < 1 || dt_trace_sniff(args[0], &imp, &e) != DT_OK || !imp)
    return 0;
  for (int i = 1; i < nargs; i++)
    if (looks_like_platform(args[i])) {
      fprintf(stderr, "dtsim run: arguments swapped? '%s' is a trace (format %s) and '%s' a platform; usage: dtsim run "
              "[options] PLATFORM TRACE...\nrun 'dtsim help run' for usage\n", args[0], imp->name, args[i]);
      return 1;
    }
  /* no platform among them (dtsim run tr.dtt tr.dtt): was "expected a mapping of platform keys" about line 1 */
  fprintf(stderr, "dtsim run: '%s' looks like a trace (format %s), not a platform: the first file of 'dtsim run' must "
          "be a platform YAML (as platforms/dgx-a100.yaml); usage: dtsim run [options] PLATFORM.yaml TRACE...\nrun "
          "'dtsim help run' for usage\n", args[0], imp->name);
  return 1;
}

int dt_cli_run_option(int opt, const char *arg, dt_run_shared *sh)
{
  char why[512];
  switch (opt) {
  case 'j':
    sh->json = 1;
    return 1;
  case 'L':
    sh->ro->links = 0;
    return 1;
  case 'X':
    sh->ro->exact = 1;
    return 1;
  case 'T': {
    long long v;
    if (count_option("run", "--top", "a count of links", arg, 0, 1000000, &v) != 0)
      return -1;
    sh->top_links = (size_t)v;
    return 1;
  }
  case 'f':
  case 'a': /* collective algorithm, docs/replay.md */
  case 'P':
    if (dt_cli_model_option(opt == 'f' ? "fidelity" : opt == 'a' ? "algo" : "proto", arg, &sh->ro->fidelity,
                            &sh->ro->algo, &sh->ro->proto, why, 160) != 0) /* 160: as run and jobs cut it */
      break;
    return 1;
  case 'C': /* handed to SimGrid as --cfg=KEY:VALUE (e.g. contexts/factory:thread under a sanitizer) */
    if (dt_cli_simgrid_option(0, arg, sh->ro, why, sizeof why) != 0)
      break;
    return 1;
  case DT_OPT_DEGRADE:
  case DT_OPT_FAIL:
  case DT_OPT_FLAP:
    if (dt_faults_parse(sh->faults, opt == DT_OPT_DEGRADE ? DT_FAULT_DEGRADE : opt == DT_OPT_FAIL ? DT_FAULT_FAIL
                        : DT_FAULT_FLAP, arg, why, sizeof why) != 0)
      break;
    return 1;
  default:
    return 0;
  }
  usage_error("run", "%s", why);
  return -1;
}

static int cmd_run(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) /* several jobs on one fabric: sim/cmd_jobs.c */
    if (strcmp(argv[i], "--job") == 0 || strncmp(argv[i], "--job=", 6) == 0)
      return dt_cmd_jobs(argc, argv);
  static const struct option run_opts[] = {RUN_SHARED_LONG_OPTIONS,
                                           {"placement", required_argument, NULL, 'p'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"gen", required_argument, NULL, 'g'},
                                           {"log", required_argument, NULL, 'l'},
                                           {"explain", no_argument, NULL, 'x'},
                                           {"plot", required_argument, NULL, 'O'},
                                           {"timeline", required_argument, NULL, 'Y'},
                                           {"timeline-ranks", required_argument, NULL, 'K'},
                                           {"slow", required_argument, NULL, OPT_SLOW},
                                           {"late", required_argument, NULL, OPT_LATE},
                                           {"jitter", required_argument, NULL, OPT_JITTER},
                                           {"seed", required_argument, NULL, OPT_SEED},
                                           {"samples", required_argument, NULL, OPT_SAMPLES},
                                           IMPORT_LONG_OPTIONS};
  size_t nrun = sizeof run_opts / sizeof run_opts[0], ngen = 0;
  while (dt_gen_long_options[ngen].name)
    ngen++;
  struct option *longopts = dt_xmalloc(sizeof *longopts * (nrun + ngen + 1));
  memcpy(longopts, run_opts, sizeof run_opts);
  memcpy(longopts + nrun, dt_gen_long_options, sizeof *longopts * (ngen + 1));
  dt_gen_flags gf;
  memset(&gf, 0, sizeof gf);
  int gen = 0;
  const char *tl_ranks_arg = NULL; /* --timeline-ranks, parsed once the trace's rank count is known */
  int32_t *tl_ranks = NULL;
  const char *placement_path = NULL;
  const char *plot_dir = NULL; /* --plot DIR */
  dt_import_opts io;
  dt_import_opts_init(&io);
  dt_replay_opts ro;
  dt_replay_opts_init(&ro);
  dt_faults faults;     /* --degrade, --fail, --flap */
  dt_faults_init(&faults);
  dt_run_shared sh = {.ro = &ro, .faults = &faults, .json = 0, .top_links = 10};
  dt_fault_cmp fcmp;
  memset(&fcmp, 0, sizeof fcmp);
  dt_var_opts vo;        /* --slow, --late, --jitter, --seed */
  memset(&vo, 0, sizeof vo);
  size_t nsamples = 0;
  dt_samples *samples = NULL;
  int opt;
  int rc = EXIT_USAGE;
  if (dt_cli_check_repeats("run", argc, argv, ":h", longopts, RUN_REPEATABLE) != 0)
    goto done_usage;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    int handled = dt_cli_run_option(opt, optarg, &sh);
    if (!handled)
      handled = var_option(opt, &vo, &nsamples);
    if (!handled)
      handled = dt_cli_import_option(opt, "run", &io);
    if (!handled) {
      handled = dt_gen_flags_take(&gf, opt, optarg, "run");
      if (handled > 0)
        gen = 1;
    }
    if (handled < 0)
      goto done_usage;
    if (handled)
      continue;
    switch (opt) {
    case 'g':
      gen = 1;
      if (dt_gen_flags_source(&gf, "--gen", optarg, "run") < 0)
        goto done_usage;
      break;
    case 'x':
      ro.explain = 1;
      break;
    case 'O':
      if (!*optarg) {
        usage_error("run", "%s", "--plot expects a directory name (created if missing), found ''");
        goto done_usage;
      }
      plot_dir = optarg;
      break;
    case 'Y':
      if (!*optarg) {
        usage_error("run", "%s", "--timeline expects a file name, found ''");
        goto done_usage;
      }
      if (strcmp(optarg, "-") == 0) { /* was the timeline, then the report, on one stdout: neither readable */
        usage_error("run", "%s", "--timeline - : the report goes to standard output; give the timeline a file name");
        goto done_usage;
      }
      ro.timeline = optarg;
      break;
    case 'K': { /* the form now, the range once the trace's rank count is known */
      int32_t *v = NULL;
      size_t nv = 0;
      if (dt_parse_rank_list(optarg, INT32_MAX, &v, &nv) != 0) {
        char why[256];
        fprintf(stderr, "dtsim run: --timeline-ranks expects ranks and ranges separated by commas, like 0-7,16, "
                "found '%s': %s\nrun 'dtsim help run' for usage\n", optarg,
                dt_cli_rank_list_why(optarg, INT32_MAX, why, sizeof why));
        goto done_usage;
      }
      free(v);
      tl_ranks_arg = optarg;
      break;
    }
    case 'p':
      if (!*optarg) {
        usage_error("run", "%s", "--placement expects a file name (lines 'rank node gpu'), found ''");
        goto done_usage;
      }
      placement_path = optarg;
      break;
    case 'l': { /* handed to SimGrid as --log=CAT.thres:LEVEL (docs/replay.md, Logs) */
      char why[512];
      if (dt_cli_simgrid_option(1, optarg, &ro, why, sizeof why) != 0) {
        usage_error("run", "%s", why);
        goto done_usage;
      }
      break;
    }
    case 'h':
      dt_cli_print_usage(stdout, run_usage);
      rc = EXIT_OK;
      goto done_usage;
    default:
      dt_cli_bad_option("run", opt, argv, longopts);
      goto done_usage;
    }
  }
  if (gen && !gf.source) {
    usage_error("run", "%s", "generator options need --gen PRESET or --workload FILE");
    goto done_usage;
  }
  if (tl_ranks_arg && !ro.timeline) { /* was silently ignored */
    usage_error("run", "%s", "--timeline-ranks selects the ranks of a timeline: give --timeline FILE too");
    goto done_usage;
  }
  if (gen && argc - optind > 1) { /* the stray word named (was: the form alone) */
    usage_error("run", "expected a platform file and no trace file with --gen, found another argument '%s'",
                argv[optind + 1]);
    goto done_usage;
  }
  if (gen ? argc - optind != 1 : argc - optind < 2) {
    usage_error("run", "%s",
                gen ? "expected a platform file (and no trace file with --gen)"
                    : "expected a platform file and at least one trace file");
    goto done_usage;
  }

  dt_error err;
  dt_error_clear(&err);
  dt_platform *p = NULL;
  dt_trace *t = NULL;
  dt_stats *s = NULL;
  int32_t *placement = NULL;
  char *label = NULL;
  /* outputs checked before the run (was: the whole report, then "No such file or directory") */
  if ((plot_dir && dt_plot_prepare(plot_dir, &err) != DT_OK) ||
      (ro.timeline && dt_cli_output_check("--timeline", ro.timeline, "the timeline", &err) != DT_OK))
    goto fail;
  if (dt_platform_load(argv[optind], &p, &err) != DT_OK) {
    if (said_swapped(&argv[optind], argc - optind)) {
      rc = EXIT_USAGE;
      goto cleanup;
    }
    goto fail;
  }
  if (gen) {
    dt_gen_config gc;
    if (dt_gen_flags_config(&gf, &gc, &err) != DT_OK)
      goto fail;
    if (dt_gen_validate(&gc, dt_platform_gpu_count(p), &err) != DT_OK || dt_gen_build(&gc, 0, &t, &err) != DT_OK) {
      dt_gen_flags_context(&gf, &err); /* a check of keys together names the flags given (was: none) */
      goto fail;
    }
    if (dt_trace_validate(t, &err) != DT_OK)
      goto fail;
    size_t len = strlen(gc.name) + 8;
    label = dt_xmalloc(len);
    snprintf(label, len, "gen:%s", gc.name);
  } else if (dt_trace_load((const char *const *)&argv[optind + 1], (size_t)(argc - optind - 1), &io, &t, &err) !=
             DT_OK) {
    goto fail;
  }
  if (placement_path) {
    size_t nlisted;
    if (dt_placement_load_listed(placement_path, p, t->nranks, &placement, &nlisted, &err) != DT_OK) {
      dt_cli_name_output(&err, "--placement", placement_path); /* an unreadable file names the option */
      goto fail;
    }
    if (nlisted < (size_t)t->nranks) /* allowed (docs/whatif.md), but never silently */
      fprintf(stderr, "dtsim: note: --placement %s places %zu of the trace's %d ranks; the other %zu keep the "
              "default placement (rank r on node r/%d, GPU r%%%d)\n", placement_path, nlisted, (int)t->nranks,
              (size_t)t->nranks - nlisted, p->gpus_per_node, p->gpus_per_node);
    ro.placement = placement;
  }
  if (ro.timeline) {
    size_t n = 0;
    if (tl_ranks_arg) {
      if (dt_parse_rank_list(tl_ranks_arg, t->nranks, &tl_ranks, &n) != 0) {
        char why[256];
        fprintf(stderr, "dtsim run: --timeline-ranks expects ranks and ranges separated by commas, like 0-7,16, "
                "within the trace's ranks 0-%d, found '%s': %s\nrun 'dtsim help run' for usage\n",
                (int)t->nranks - 1, tl_ranks_arg, dt_cli_rank_list_why(tl_ranks_arg, t->nranks, why, sizeof why));
        rc = EXIT_USAGE;
        goto cleanup;
      }
    } else if (t->nranks > TIMELINE_DEFAULT_RANKS) {
      n = TIMELINE_DEFAULT_RANKS;
      tl_ranks = dt_xmalloc(sizeof *tl_ranks * n);
      for (size_t i = 0; i < n; i++)
        tl_ranks[i] = (int32_t)i;
      fprintf(stderr, "dtsim: note: --timeline shows ranks 0-%d of %d (--timeline-ranks picks others)\n",
              TIMELINE_DEFAULT_RANKS - 1, (int)t->nranks);
    }
    ro.timeline_ranks = tl_ranks;
    ro.ntimeline_ranks = n;
  }
  ro.variability = &vo;
  if (nsamples > 0) { /* jitter to sample, and the first seed fixed so that the fault baseline runs it too */
    if (!dt_var_has_jitter(&vo, p)) {
      usage_error("run", "%s", "--samples needs jitter to sample: give --jitter SIGMA or a variability.jitter "
                               "section in the platform");
      rc = EXIT_USAGE;
      goto cleanup;
    }
    uint64_t seed0 = vo.has_seed ? vo.seed : p->variability && p->variability->has_seed ? p->variability->seed : 1;
    vo.has_seed = 1;
    vo.seed = seed0;
  }
  if (faults.n > 0) { /* the names are checked first, then the same run without the faults, in a child */
    if (dt_faults_check(&faults, p, t, ro.placement, &err) != DT_OK)
      goto fail;
    dt_faultcmp_init(&fcmp, t, &faults, &ro);
    if (dt_faultcmp_baseline(&fcmp, p, &ro, &err) != DT_OK)
      goto fail;
    ro.faults = &faults;
  }
  /* the other seeds in child processes, before this process's SimGrid starts */
  if (nsamples > 0 && dt_samples_run(p, t, &ro, nsamples, vo.seed, &samples, &err) != DT_OK)
    goto fail;
  if (dt_replay_run(p, t, &ro, &s, &err) != DT_OK)
    goto fail;
  if (faults.n > 0)
    dt_faultcmp_finish(&fcmp, s);
  if (samples)
    dt_samples_finish(samples, s);

  if (!label)
    label = trace_label(&argv[optind + 1], argc - optind - 1);
  dt_report_input in = {.platform = p, .trace = t, .stats = s, .trace_label = label,
                        .fidelity = ro.fidelity == DT_FIDELITY_STEP ? "step" : "flow", .top_links = sh.top_links,
                        .faults = faults.n > 0 ? &fcmp : NULL,
                        .samples = samples};
  dt_phase("writing the report");
  if (sh.json) {
    char note[4096];
    for (size_t i = 0; i < dt_report_note_count(&in); i++)
      fprintf(stderr, "dtsim: note: %s\n", dt_report_note(&in, i, note, sizeof note));
    if (dt_report_json(stdout, &in, &err) != DT_OK)
      goto fail;
  } else {
    dt_report_text(stdout, &in);
    if (ro.explain)
      dt_explain_text(stdout, &in);
  }
  if (plot_dir) {
    int rendered;
    if (dt_plot_write(plot_dir, &in, &rendered, &err) != DT_OK)
      goto fail;
    if (rendered < 0)
      fprintf(stderr, "dtsim: note: --plot %s: no chart had anything to draw\n", plot_dir);
    else if (rendered)
      fprintf(stderr, "dtsim: wrote %d pictures (.png) with their data (.dat) and gnuplot scripts (.gp) in %s\n",
              rendered, plot_dir);
    else
      fprintf(stderr, "dtsim: note: gnuplot is not installed: the data (.dat) and scripts (.gp) are in %s\n",
              plot_dir);
  }
  if (s->aborted) {
    char at[32];
    fprintf(stderr, "dtsim: aborted at %s: %s\n", dt_format_time(s->aborted_s, at, sizeof at), s->aborted);
    rc = EXIT_PROBLEM;
  } else if (s->ndeadlock > 0) {
    fprintf(stderr, "dtsim: deadlock: %zu op%s blocked forever (first: %s)\n", s->ndeadlock,
            s->ndeadlock == 1 ? "" : "s", s->deadlock[0]);
    rc = EXIT_PROBLEM;
  } else {
    rc = EXIT_OK;
  }
  if (samples && samples->ncompleted < samples->n) { /* reported over the others; a seed that stopped is exit 1 */
    fprintf(stderr, "dtsim: samples: %zu of %zu seeds stopped early (%zu aborted, %zu deadlocked): the summary is "
            "over the %zu that completed\n", samples->n - samples->ncompleted, samples->n, samples->naborted,
            samples->ndeadlocked, samples->ncompleted);
    rc = EXIT_PROBLEM;
  }
  goto cleanup;
fail:
  dt_cli_name_output(&err, "--timeline", ro.timeline); /* a write error at the end names its option */
  dt_cli_name_output(&err, "--plot", plot_dir);
  print_error(&err);
  rc = EXIT_USAGE;
cleanup:
  dt_samples_free(samples);
  free(label);
  free(placement);
  free(tl_ranks);
  dt_stats_free(s);
  dt_trace_free(t);
  dt_platform_free(p);
done_usage:
  dt_faultcmp_free(&fcmp);
  dt_faults_clear(&faults);
  dt_var_opts_free(&vo);
  for (int i = 0; i < ro.simgrid_argc; i++) /* --cfg and --log settings handed to SimGrid, owned here */
    free(ro.simgrid_argv[i]);
  free(ro.simgrid_argv);
  dt_gen_flags_free(&gf);
  free(longopts);
  return rc;
}

/* Prints an importer's fixed assumptions, one "  - " line each. */
static void print_assumptions(FILE *f, const dt_importer *imp)
{
  const char *a = imp->assumptions;
  while (*a) {
    size_t n = strcspn(a, "\n");
    fprintf(f, "  - %.*s\n", (int)n, a);
    a += n + (a[n] == '\n');
  }
}

/* `dtsim import --explain`: the chosen format, its assumptions, the capture's notes. */
static void explain(FILE *f, const dt_trace *t, const dt_import_opts *io, size_t nfiles)
{
  const dt_importer *imp = dt_importer_find(t->format ? t->format : "native");
  fprintf(f, "format: %s, %s (%s), %zu file%s\n", imp->name, imp->label,
          io->format && strcmp(io->format, "auto") ? "forced with --format" : "sniffed from the content", nfiles,
          nfiles == 1 ? "" : "s");
  fprintf(f, "trace: %d ranks, %zu ops, %lld collective instances, %lld send/recv pairs\n", (int)t->nranks,
          dt_trace_op_count(t), (long long)t->ninstances, (long long)t->npairs);
  fprintf(f, "assumptions of the %s importer:\n", imp->name);
  print_assumptions(f, imp);
  int measured = 0;
  for (int k = 0; k < DT_OP_COUNT; k++)
    measured |= t->measured_n[k] > 0;
  if (measured) {
    fprintf(f, "measured in the capture (%s; reported beside the simulated times by 'dtsim run', never used as "
               "cost):\n", t->measured_what ? t->measured_what : "its own times");
    for (int k = 0; k < DT_OP_COUNT; k++)
      if (t->measured_n[k])
        fprintf(f, "  %-14s %8llu calls, mean %.6g s\n", dt_op_kind_name((dt_op_kind)k),
                (unsigned long long)t->measured_n[k], t->measured_s[k] / (double)t->measured_n[k]);
  }
  fprintf(f, "notes for this capture:\n");
  for (size_t i = 0; i < t->nmeta; i++)
    fprintf(f, "  - meta %s=%s\n", t->meta_keys[i], t->meta_values[i]);
  for (size_t i = 0; i < t->nnotes; i++)
    fprintf(f, "  - %s\n", t->notes[i]);
}

const char *dt_cli_rank_list_why(const char *s, long limit, char *why, size_t size)
{
  snprintf(why, size, "expected whole numbers and ranges FIRST-LAST separated by commas, like 0-7,16");
  for (const char *p = s; *p;) {
    size_t n = strcspn(p, ",");
    char item[64];
    snprintf(item, sizeof item, "%.*s", (int)(n < 63 ? n : 63), p);
    char *dash = strchr(item, '-');
    long long a, b = -1;
    if (dash)
      *dash = '\0';
    int ok = dt_parse_whole(item, 0, INT64_MAX, &a) == 0 && (!dash || dt_parse_whole(dash + 1, 0, INT64_MAX, &b) == 0);
    if (dash)
      *dash = '-';
    if (!ok)
      return why;
    if (dash && b < a) {
      snprintf(why, size, "'%s' is a reversed range: write the first number first (%lld-%lld)", item, b, a);
      return why;
    }
    if ((dash ? b : a) >= limit) {
      snprintf(why, size, "'%s' is past the last one, %ld", item, limit - 1);
      return why;
    }
    p += n + (p[n] == ',');
  }
  return why;
}

/* A --max-output SIZE that would hold about `bytes`: the next whole K, M, G or T above 1.25 x bytes ("2M"). */
static void suggest_size(double bytes, char *buf, size_t size)
{
  static const char units[] = "KMGT";
  double want = bytes * 1.25;
  int u = 0;
  double scale = 1024;
  while (u < 3 && want / scale >= 1024)
    u++, scale *= 1024;
  snprintf(buf, size, "%.0f%c", ceil(want / scale) > 0 ? ceil(want / scale) : 1, units[u]);
}

int dt_cli_max_output(const char *cmdname, const char *arg, uint64_t *out)
{
  char why[256];
  if (dt_bench_parse_size(arg, out, why, sizeof why) == 0)
    return 0;
  /* well formed but past 64 bits (was the same words as a malformed size, without the maximum) */
  size_t digits = strspn(arg, "0123456789"), unit = arg[digits] && strchr("KMGTkmgt", arg[digits]) ? 1 : 0;
  int too_big = digits > 0 && (!arg[digits + unit] || (strchr("Bb", arg[digits + unit]) && !arg[digits + unit + 1]));
  fprintf(stderr, "dtsim %s: --max-output expects a size in bytes from 0 to 18446744073709551615 (2^64-1, 16777215T at "
          "most in T): digits with an optional K, M, G or T (powers of 1024), such as 512K or 64G, found '%s'%s\nrun "
          "'dtsim help %s' for usage\n", cmdname, arg, too_big ? ", which is more" : "", cmdname);
  return -1;
}

int dt_check_output_size(const dt_trace *t, const char *out, uint64_t max_output, const char *cmd, dt_error *err)
{
  uint64_t bound = dt_trace_native_size_bound(t);
  if (bound <= max_output)
    return DT_OK;
  char b1[32], b2[32];
  return dt_error_set(err, out, 0, 0, "refused before writing: the trace's %zu ops (%d rank%s) take 8 bytes or more "
                      "each, at least %" PRIu64 " bytes (%s), more than --max-output %" PRIu64 " bytes (%s); to write "
                      "it, raise the limit ('%s --max-output SIZE', K, M, G, T = 1024)", dt_trace_op_count(t),
                      (int)t->nranks, t->nranks == 1 ? "" : "s", bound, dt_format_bytes((double)bound, b1, sizeof b1),
                      max_output, dt_format_bytes((double)max_output, b2, sizeof b2), cmd);
}

int dt_write_output(const dt_trace *t, const char *out, uint64_t max_output, const char *cmd, dt_error *err)
{
  if (dt_check_output_size(t, out, max_output, cmd, err) != DT_OK)
    return DT_ERR;
  dt_write_limit lim = {.max_bytes = max_output};
  if (dt_trace_write_native_limit(t, out, &lim, err) == DT_OK)
    return DT_OK;
  if (!lim.stopped)
    return DT_ERR;
  /* the whole size from the bytes per op measured on the ops written (one estimate, not the 8-bytes-per-op
   * lower bound of the pre-check beside it, which read as a second, contradicting size) */
  double per_op = lim.ops_written ? (double)lim.written / (double)lim.ops_written : 8;
  double about = per_op * (double)lim.ops_total;
  struct stat st;
  int in_place = strcmp(out, "-") == 0 || (stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
  char b1[32], b2[32], b3[32], sugg[32];
  suggest_size(about, sugg, sizeof sugg);
  return dt_error_set(err, out, 0, 0, "stopped after writing %" PRIu64 " bytes (%s), %zu of the trace's %zu ops, "
                      "past --max-output %" PRIu64 " bytes (%s); at the %.1f bytes per op written so far the whole "
                      "trace would take about %s; %s; to write it, raise the limit ('%s --max-output %s')%s",
                      lim.written, dt_format_bytes((double)lim.written, b1, sizeof b1), lim.ops_written,
                      lim.ops_total, max_output, dt_format_bytes((double)max_output, b2, sizeof b2), per_op,
                      dt_format_bytes(about, b3, sizeof b3),
                      strcmp(out, "-") == 0 ? "standard output has the part written"
                      : in_place            ? "the part written went to it (a pipe or device cannot take it back)"
                                            : "nothing was kept",
                      cmd, sugg, t->nranks > 1 ? " or write fewer ranks" : "");
}

/* Whether name is a native trace file as a directory read takes them (dt_native.c: "*.dtt"). */
static int is_dtt_name(const char *name)
{
  size_t l = strlen(name);
  return l >= 5 && strcmp(name + l - 4, ".dtt") == 0;
}

int dt_cli_out_dir(const char *cmd, const char *out, int force, int clear, dt_error *err)
{
  size_t len = strlen(out);
  if (len == 0 || out[len - 1] != '/')
    return DT_OK;
  DIR *d = opendir(out);
  if (!d) /* missing: created by the writer; anything else it reports itself */
    return DT_OK;
  size_t n = 0, removed = 0;
  char first[256] = "";
  int rc = DT_OK;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!is_dtt_name(e->d_name))
      continue;
    if (!n++ || strcmp(e->d_name, first) < 0) /* the first by name, whatever readdir's order */
      snprintf(first, sizeof first, "%s", e->d_name);
    if (!clear)
      continue;
    size_t plen = len + strlen(e->d_name) + 1;
    char *path = dt_xmalloc(plen);
    snprintf(path, plen, "%s%s", out, e->d_name);
    struct stat st;
    int e = 0;
    if (lstat(path, &st) != 0)
      e = errno;
    else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      e = EISDIR; /* a folder or a device named *.dtt: not a file dtsim wrote */
    else if (unlink(path) != 0)
      e = errno;
    else
      removed++;
    if (e && rc == DT_OK)
      rc = dt_error_set(err, path, 0, 0, "--force: cannot remove this trace file of an earlier run: %s",
                        strerror(e));
    free(path);
  }
  closedir(d);
  if (rc != DT_OK)
    return rc;
  if (n > 0 && !force)
    return dt_error_set(err, "", 0, 0, "-o %s already holds %zu .dtt file%s ('%s'%s): a run of the directory reads "
                        "every .dtt in it, so this trace would be mixed with %s; give a new or empty directory, or "
                        "'dtsim %s --force' to remove the .dtt files in it first (other files stay)", out, n,
                        n == 1 ? "" : "s", first, n > 1 ? ", ..." : "", n == 1 ? "it" : "them", cmd);
  if (clear && removed)
    fprintf(stderr, "dtsim: note: --force: removed %zu .dtt file%s of an earlier run from %s\n", removed,
            removed == 1 ? "" : "s", out);
  return DT_OK;
}

static int cmd_import(int argc, char **argv)
{
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"explain", no_argument, NULL, 'x'},
                                           {"max-output", required_argument, NULL, 'M'},
                                           {"force", no_argument, NULL, 'f'},
                                           IMPORT_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  const char *out = NULL;
  int do_explain = 0, force = 0;
  uint64_t max_output = DT_MAX_OUTPUT_DEFAULT;
  dt_import_opts io;
  dt_import_opts_init(&io);
  int opt;
  if (dt_cli_check_repeats("import", argc, argv, ":o:h", longopts, "group-size") != 0)
    return EXIT_USAGE;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int handled = dt_cli_import_option(opt, "import", &io);
    if (handled < 0)
      return EXIT_USAGE;
    if (handled)
      continue;
    switch (opt) {
    case 'o':
      out = optarg;
      break;
    case 'x':
      do_explain = 1;
      break;
    case 'f':
      force = 1;
      break;
    case 'M':
      if (dt_cli_max_output("import", optarg, &max_output) != 0)
        return EXIT_USAGE;
      break;
    case 'h':
      fputs(import_usage, stdout);
      return EXIT_OK;
    default:
      return dt_cli_bad_option("import", opt, argv, longopts);
    }
  }
  if (do_explain && argc - optind < 1) {
    for (size_t i = 0; i < dt_importer_count(); i++) {
      const dt_importer *imp = dt_importer_at(i);
      printf("%s%s: %s\n", i ? "\n" : "", imp->name, imp->label);
      print_assumptions(stdout, imp);
    }
    return EXIT_OK;
  }
  if (!out && !do_explain)
    return usage_error("import", "%s", "expected -o OUT (or --explain)");
  if (argc - optind < 1)
    return usage_error("import", "%s", "expected at least one input file");
  if (do_explain && out && strcmp(out, "-") == 0)
    return usage_error("import", "%s", "--explain prints on stdout: write the trace to a file, not '-'");
  dt_error err;
  dt_error_clear(&err);
  dt_trace *t = NULL;
  int rc = EXIT_OK;
  size_t nfiles = (size_t)(argc - optind);
  struct stat ost;
  size_t olen = out ? strlen(out) : 0;
  if (out && olen > 0 && out[olen - 1] != '/' && stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)) {
    char msg[3400];
    snprintf(msg, sizeof msg, "-o %.1000s is a directory: give a file name ('%.1000s/trace.dtt'), or '%.1000s/' with "
             "the slash to write one file per rank into it", out, out, out);
    return usage_error("import", "%s", msg);
  }
  /* before the import: the file can be written, a directory holds no .dtt of an earlier run (or --force); those
   * are removed only once the new trace is read and fits --max-output */
  if ((out && olen > 0 && out[olen - 1] != '/' && dt_cli_output_check("-o", out, "the trace", &err) != DT_OK) ||
      (out && dt_cli_out_dir("import", out, force, 0, &err) != DT_OK) ||
      dt_trace_load((const char *const *)&argv[optind], nfiles, &io, &t, &err) != DT_OK ||
      (out && dt_check_output_size(t, out, max_output, "import", &err) != DT_OK) ||
      (out && force && dt_cli_out_dir("import", out, force, 1, &err) != DT_OK) ||
      (out && dt_write_output(t, out, max_output, "import", &err) != DT_OK)) {
    dt_cli_name_output(&err, "-o", out);
    print_error(&err);
    rc = EXIT_USAGE;
  } else {
    if (do_explain)
      explain(stdout, t, &io, nfiles);
    else
      for (size_t i = 0; i < t->nnotes; i++)
        fprintf(stderr, "dtsim: note: %s\n", t->notes[i]);
    if (out && strcmp(out, "-") != 0)
      fprintf(stderr, "dtsim: wrote %s: %d ranks, %zu ops, %lld collective instances, %lld send/recv pairs\n", out,
              (int)t->nranks, dt_trace_op_count(t), (long long)t->ninstances, (long long)t->npairs);
  }
  dt_trace_free(t);
  return rc;
}

static int parse_degree(const char *cmdname, const char *what, const char *arg, int32_t *out)
{
  long long v;
  if (count_option(cmdname, what, "a degree", arg, 1, DT_TRACE_MAX_RANKS, &v) != 0)
    return -1;
  *out = (int32_t)v;
  return 0;
}

static int cmd_scale(int argc, char **argv)
{
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"dp", required_argument, NULL, 'D'},
                                           {"tp", required_argument, NULL, 'T'},
                                           {"pp", required_argument, NULL, 'P'},
                                           {"grad", required_argument, NULL, 'g'},
                                           {"force", no_argument, NULL, 'f'},
                                           IMPORT_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  const char *out = NULL, *grad = NULL;
  int force = 0;
  dt_scale_opts so = {1, 1, 0, NULL, 0};
  dt_import_opts io;
  dt_import_opts_init(&io);
  int opt;
  if (dt_cli_check_repeats("scale", argc, argv, ":o:h", longopts, "group-size") != 0)
    return EXIT_USAGE;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int handled = dt_cli_import_option(opt, "scale", &io);
    if (handled < 0)
      return EXIT_USAGE;
    if (handled)
      continue;
    switch (opt) {
    case 'o':
      out = optarg;
      break;
    case 'D':
      if (parse_degree("scale", "--dp", optarg, &so.dp) != 0)
        return EXIT_USAGE;
      break;
    case 'T':
      if (parse_degree("scale", "--tp", optarg, &so.tp) != 0)
        return EXIT_USAGE;
      break;
    case 'P':
      if (parse_degree("scale", "--pp", optarg, &so.pp) != 0)
        return EXIT_USAGE;
      break;
    case 'g':
      grad = optarg;
      break;
    case 'f':
      force = 1;
      break;
    case 'h':
      fputs(scale_usage, stdout);
      return EXIT_OK;
    default:
      return dt_cli_bad_option("scale", opt, argv, longopts);
    }
  }
  if (!out)
    return usage_error("scale", "%s", "expected -o OUT");
  if (so.dp < 1)
    return usage_error("scale", "%s", "expected --dp D, the data-parallel degree wanted");
  if (!grad || !*grad)
    return usage_error("scale", "%s", "expected --grad GROUP[,GROUP...]: the gradient groups of the input");
  if (argc - optind < 1)
    return usage_error("scale", "%s", "expected at least one input file");
  char *list = dt_xstrdup(grad);
  const char **names = NULL;
  size_t cap = 0;
  for (char *p = strtok(list, ","); p; p = strtok(NULL, ",")) {
    names = dt_grow(names, &cap, so.ngrad, sizeof *names);
    names[so.ngrad++] = p;
  }
  so.grad = names;
  dt_error err;
  dt_error_clear(&err);
  dt_trace *t = NULL, *scaled = NULL;
  int rc = EXIT_OK;
  if (dt_cli_out_dir("scale", out, force, 0, &err) != DT_OK ||
      dt_trace_load((const char *const *)&argv[optind], (size_t)(argc - optind), &io, &t, &err) != DT_OK ||
      dt_trace_scale(t, &so, &scaled, strcmp(out, "-") == 0 ? stderr : stdout, &err) != DT_OK ||
      dt_trace_validate(scaled, &err) != DT_OK || (force && dt_cli_out_dir("scale", out, force, 1, &err) != DT_OK) ||
      dt_trace_write_native(scaled, out, &err) != DT_OK) {
    dt_cli_name_output(&err, "-o", out);
    print_error(&err);
    rc = EXIT_USAGE;
  } else if (strcmp(out, "-") != 0)
    fprintf(stderr, "dtsim: wrote %s: %d ranks, %zu ops, %lld collective instances, %lld send/recv pairs\n", out,
            (int)scaled->nranks, dt_trace_op_count(scaled), (long long)scaled->ninstances,
            (long long)scaled->npairs);
  dt_trace_free(scaled);
  dt_trace_free(t);
  free(names);
  free(list);
  return rc;
}

static int cmd_gen(int argc, char **argv)
{
  return dt_cmd_gen(argc, argv);
}

static void print_overview(FILE *f)
{
  fprintf(f, "dtsim %s: replays distributed-training communication traces on simulated GPU clusters (SimGrid)\n\n",
          DTSIM_VERSION);
  fprintf(f, "usage: dtsim COMMAND [options] [args]\n\ncommands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nexample: dtsim run platforms/dgx-a100.yaml traces/samples/allreduce_bcast_2ranks_rank0.json.gz\n"
             "run 'dtsim help COMMAND' for a command's options\n");
}

static int cmd_help(int argc, char **argv)
{
  if (argc > 2) /* was: the words after the first ignored */
    return usage_error("help", "expected at most one command name, found another argument '%s'", argv[2]);
  if (argc < 2) {
    print_overview(stdout);
    return EXIT_OK;
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      dt_cli_print_usage(stdout, commands[i].usage);
      if (commands[i].fn == cmd_gen || commands[i].fn == cmd_run)
        fputs(commands[i].fn == cmd_gen ? dt_gen_flags_help : "\ngenerator options (with --gen):\n", stdout);
      if (commands[i].fn == cmd_run) {
        fputs(dt_gen_flags_help, stdout);
        fputs("\nseveral jobs on one fabric (docs/whatif.md):\n", stdout);
        fputs(dt_jobs_usage, stdout);
      }
      return EXIT_OK;
    }
  fprintf(stderr, "dtsim: no command '%s'; run 'dtsim help' for the list\n", argv[1]);
  return EXIT_USAGE;
}

static int cmd_version(int argc, char **argv)
{
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs("usage: dtsim version\n", stdout);
    return EXIT_OK;
  }
  if (argc > 1) /* was: 'dtsim version extra' printed the version */
    return usage_error("version", "takes no argument, found '%s'", argv[1]);
  printf("dtsim %s\n", DTSIM_VERSION);
  return EXIT_OK;
}

int dt_cli_main(int argc, char **argv)
{
  if (argc < 2) {
    print_overview(stderr);
    return EXIT_USAGE;
  }
  opterr = 0; /* subcommands report bad options themselves (bad_option) */
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
    name = "version";
  else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    name = "help";
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(name, commands[i].name) != 0)
      continue;
    dt_phase("starting 'dtsim %s'", name); /* until a stage names itself (out-of-memory message) */
    int rc = commands[i].fn(argc - 1, argv + 1);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
      if (rc != EXIT_USAGE) /* exit 2 said what went wrong already (as "cannot write the JSON report") */
        fprintf(stderr, "dtsim: error: cannot write to standard output: %s\n", strerror(errno ? errno : EIO));
      return EXIT_USAGE;
    }
    return rc;
  }
  const char *names[NCOMMANDS];
  for (size_t i = 0; i < NCOMMANDS; i++)
    names[i] = commands[i].name;
  const char *near = dt_nearest_word(name, names, NCOMMANDS);
  if (near)
    fprintf(stderr, "dtsim: unknown command '%s' (did you mean '%s'?)\n", name, near);
  else
    fprintf(stderr, "dtsim: unknown command '%s'; run 'dtsim help' for the list\n", name);
  return EXIT_USAGE;
}
