/* dtsim bench OP: parses nccl-tests-like options, runs the benchmark through dt_bench and prints nccl-tests'
 * columns (or a JSON array). docs/bench.md has the conventions. */
#include "cmd_bench.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "dt_bench.h"
#include "dt_cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

const char dt_cmd_bench_usage[] =
    "usage: dtsim bench OP --platform FILE [--gpus N] [-b MIN -e MAX -f FACTOR | -i INCREMENT] [options]\n"
    "\n"
    "Simulates an nccl-tests benchmark (OP_perf) and prints its table: size (B), count (elements), type, redop,\n"
    "root, time (us), algbw and busbw (GB/s = 1e9 bytes/s) with nccl-tests' meanings, and the algorithm that ran.\n"
    "OP: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv. The size is nccl-tests'\n"
    "(the gathered buffer for all_gather, the whole input for reduce_scatter and alltoall).\n"
    "\n"
    "  --platform FILE        platform YAML (required)\n"
    "  --gpus N               ranks, on the first N GPUs of the platform (default: all of them)\n"
    "  --gpus-per-node K      put the ranks on the first K GPUs of consecutive nodes instead\n"
    "  -b, --minbytes SIZE    smallest size (default 32M); K, M, G, T are powers of 1024\n"
    "  -e, --maxbytes SIZE    largest size (default 32M)\n"
    "  -f, --stepfactor F     multiply the size by F (default 2)\n"
    "  -i, --stepbytes INC    add INC to the size instead\n"
    "  -n, --iters N          timed iterations per size, averaged (default 1: the simulation is deterministic)\n"
    "  -w, --warmup_iters N   untimed iterations before them (default 0)\n"
    "  -g, --ngpus G          GPUs driven by one process (nccl-tests -g, default 1): its instances take\n"
    "                         (G-1) x the launch time longer (docs/bench.md)\n"
    "  --launch TIME          host time to launch one more GPU's kernels from one thread (default 2.6us)\n"
    "  --algo A               force an algorithm: {algos}\n"
    "                         (default auto: chosen per size as NCCL's tuner does, docs/replay.md)\n"
    "  --proto P              force a protocol: LL, LL128, Simple (default auto)\n"
    "  --fidelity flow|step   collective model (default flow)\n"
    "  --exact                no shortcut: simulate every collective as flows, even where its closed form is\n"
    "                         exact (docs/replay.md, Shortcuts)\n"
    "  --explain              teaching mode: per size the choice and why, the alpha-beta closed form with its\n"
    "                         numbers, the NCCL model's terms, the simulated time and why they differ (after the\n"
    "                         table, as '#' lines; with --json an \"explain\" array per size, docs/bench.md)\n"
    "  --json                 print a JSON array of {size_bytes, time_us, algbw_GBps, busbw_GBps, algo}\n";

static int usage(const char *fmt, ...) DT_PRINTF(1, 2);
static int usage(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "dtsim bench: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nrun 'dtsim help bench' for usage\n");
  return EXIT_USAGE;
}

/* A whole number (dt_parse_whole: digits alone) in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
  long long v;
  if (dt_parse_whole(s, lo, hi, &v) != 0)
    return -1;
  *out = (int)v;
  return 0;
}

/* --json --explain: one object per explained shape of the size (docs/bench.md); strings are ours (no escaping). */
static void print_json_explain(const dt_bench_row *r)
{
  printf(", \"explain\": [");
  for (int k = 0; k < r->nx; k++) {
    const dt_explain_numbers *x = &r->x[k];
    printf("%s{\"choice\": \"%s\", \"formula\": \"%s\", \"model\": \"%s\", \"alpha_s\": %.17g, "
           "\"bandwidth_Bps\": %.17g, \"alphabeta_latency_s\": %.17g, \"alphabeta_bandwidth_s\": %.17g, "
           "\"alphabeta_s\": %.17g, \"estimate_s\": %.17g, \"estimate_latency_s\": %.17g, \"fixed_s\": %.17g, "
           "\"efficiency\": %.17g, \"simulated_s\": %.17g, \"algbw_GBps\": %.17g, \"busbw_GBps\": %.17g, "
           "\"deviation\": %.17g}",
           k ? ", " : "", x->choice, x->formula, x->nccl ? "nccl" : "textbook", x->alpha_s, x->bw_Bps,
           x->ab_latency_s, x->ab_bandwidth_s, x->ab_latency_s + x->ab_bandwidth_s, x->estimate_s,
           x->estimate_latency_s, x->fixed_s, x->efficiency, x->mean_s, x->algbw_GBps, x->busbw_GBps, x->deviation);
  }
  printf("]");
}

static void print_json(const dt_bench_row *rows, size_t n, int explain)
{
  printf("[");
  for (size_t i = 0; i < n; i++) {
    printf("%s\n  {\"size_bytes\": %llu, \"time_us\": %.17g, \"algbw_GBps\": %.17g, \"busbw_GBps\": %.17g, "
           "\"algo\": \"%s\"",
           i ? "," : "", (unsigned long long)rows[i].size, rows[i].time_s * 1e6, rows[i].algbw / 1e9,
           rows[i].busbw / 1e9, rows[i].algo);
    if (explain)
      print_json_explain(&rows[i]);
    printf("}");
  }
  printf("%s]\n", n ? "\n" : "");
}

/* --explain after the table: every line prefixed '# ', so that nccl-tests parsers still read the table. */
static void print_explain(const dt_bench_opts *o, const dt_bench_row *rows)
{
  printf("#\n# explain: what each size did (n ranks, S per-rank bytes, a route latency, B the ring's bottleneck\n"
         "# bandwidth per rank; the time column adds the host launch time, docs/bench.md)\n");
  for (size_t i = 0; i < o->nsizes; i++) {
    printf("#\n");
    const char *t = rows[i].explain;
    if (!t) {
      printf("# %llu B: nothing to explain (no collective ran on more than one rank)\n",
             (unsigned long long)rows[i].size);
      continue;
    }
    while (*t) {
      const char *e = strchr(t, '\n');
      size_t len = e ? (size_t)(e - t) : strlen(t);
      if (len)
        printf("# %.*s\n", (int)len, t);
      t += len + (e != NULL);
    }
  }
}

static void print_table(const dt_platform *p, const dt_bench_opts *o, const dt_bench_row *rows)
{
  printf("# dtsim bench %s: platform %s (%s), %d GPUs", o->op->name, p->name, p->source ? p->source : "", o->ngpus);
  if (o->gpus_per_node)
    printf(" at %d per node", o->gpus_per_node);
  printf(", %d per process, fidelity %s, iters %d, warmup %d\n", o->gpus_per_process,
         o->fidelity == DT_FIDELITY_STEP ? "step" : "flow", o->iters, o->warmup);
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s  %10s  %8s  %8s  %s\n", "size", "count", "type", "redop", "root", "time", "algbw",
         "busbw", "algo");
  printf("# %10s  %12s  %8s  %6s  %6s  %10s  %8s  %8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  double bus = 0;
  for (size_t i = 0; i < o->nsizes; i++) {
    const dt_bench_row *r = &rows[i];
    printf("  %10llu  %12llu  %8s  %6s  %6d  %10.2f  %8.2f  %8.2f  %s\n", (unsigned long long)r->size,
           (unsigned long long)r->count, "float", o->op->redop, o->op->root, r->time_s * 1e6, r->algbw / 1e9,
           r->busbw / 1e9, r->algo);
    bus += r->busbw / 1e9;
  }
  printf("# Avg bus bandwidth    : %g\n", o->nsizes ? bus / (double)o->nsizes : 0.0);
}

int dt_cmd_bench(int argc, char **argv)
{
  enum { O_PLATFORM = 1000, O_GPUS, O_PER_NODE, O_LAUNCH, O_ALGO, O_PROTO, O_FIDELITY, O_JSON, O_EXACT, O_EXPLAIN };
  static const struct option longopts[] = {{"platform", required_argument, NULL, O_PLATFORM},
                                           {"gpus", required_argument, NULL, O_GPUS},
                                           {"gpus-per-node", required_argument, NULL, O_PER_NODE},
                                           {"minbytes", required_argument, NULL, 'b'},
                                           {"maxbytes", required_argument, NULL, 'e'},
                                           {"stepfactor", required_argument, NULL, 'f'},
                                           {"stepbytes", required_argument, NULL, 'i'},
                                           {"iters", required_argument, NULL, 'n'},
                                           {"warmup_iters", required_argument, NULL, 'w'},
                                           {"ngpus", required_argument, NULL, 'g'},
                                           {"launch", required_argument, NULL, O_LAUNCH},
                                           {"algo", required_argument, NULL, O_ALGO},
                                           {"proto", required_argument, NULL, O_PROTO},
                                           {"fidelity", required_argument, NULL, O_FIDELITY},
                                           {"json", no_argument, NULL, O_JSON},
                                           {"exact", no_argument, NULL, O_EXACT},
                                           {"explain", no_argument, NULL, O_EXPLAIN},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *platform_path = NULL;
  uint64_t minb = 32ull << 20, maxb = 32ull << 20, factor = 2, inc = 0;
  const char *minb_text = NULL, *maxb_text = NULL; /* as given, for messages; NULL: the default 32M */
  int json = 0, factor_given = 0;
  dt_bench_opts o;
  dt_bench_opts_init(&o);
  o.launch_s = DT_BENCH_DEFAULT_LAUNCH_S;
  o.ngpus = -1;
  char why[256];
  int opt;
  if (dt_cli_check_repeats("bench", argc, argv, ":b:e:f:i:n:w:g:h", longopts, "") != 0)
    return 2;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":b:e:f:i:n:w:g:h", longopts, NULL)) != -1) {
    switch (opt) {
    case O_PLATFORM:
      platform_path = optarg;
      break;
    case O_GPUS:
      if (parse_int(optarg, 1, 1 << 20, &o.ngpus) != 0)
        return usage("--gpus expects a GPU count from 1 to 1048576, found '%s'", optarg);
      break;
    case O_PER_NODE:
      if (parse_int(optarg, 1, 1 << 20, &o.gpus_per_node) != 0)
        return usage("--gpus-per-node expects a GPU count from 1 to 1048576, found '%s'", optarg);
      break;
    case 'b':
    case 'e':
    case 'i': {
      uint64_t v;
      if (dt_bench_parse_size(optarg, &v, why, sizeof why) != 0) {
        fprintf(stderr, "dtsim bench: -%c: %s\nrun 'dtsim help bench' for usage\n", opt, why);
        return EXIT_USAGE;
      }
      if (opt == 'b') {
        minb = v;
        minb_text = optarg;
      } else if (opt == 'e') {
        maxb = v;
        maxb_text = optarg;
      }
      else if (v == 0)
        return usage("-i expects a positive increment, found '%s'", optarg);
      else
        inc = v;
      break;
    }
    case 'f': {
      int f;
      if (parse_int(optarg, 2, 1 << 30, &f) != 0)
        return usage("-f expects a whole factor from 2 to 1073741824, found '%s'", optarg);
      factor = (uint64_t)f;
      factor_given = 1;
      break;
    }
    case 'n':
      if (parse_int(optarg, 1, 1000000, &o.iters) != 0)
        return usage("-n expects an iteration count from 1 to 1000000, found '%s'", optarg);
      break;
    case 'w':
      if (parse_int(optarg, 0, 1000000, &o.warmup) != 0)
        return usage("-w expects a warm-up iteration count from 0 to 1000000, found '%s'", optarg);
      break;
    case 'g':
      if (parse_int(optarg, 1, 1 << 20, &o.gpus_per_process) != 0)
        return usage("-g expects a GPU count per process from 1 to 1048576, found '%s'", optarg);
      break;
    case O_LAUNCH:
      if (dt_parse_time(optarg, &o.launch_s, why, sizeof why) != 0) {
        fprintf(stderr, "dtsim bench: --launch: %s\nrun 'dtsim help bench' for usage\n", why);
        return EXIT_USAGE;
      }
      break;
    case O_ALGO: /* docs/replay.md: as `run --algo`, an error from NCCL 2.24 on, else a fallback with a note */
    case O_PROTO:
    case O_FIDELITY: {
      char why[160];
      if (dt_cli_model_option(opt == O_ALGO ? "algo" : opt == O_PROTO ? "proto" : "fidelity", optarg, &o.fidelity,
                              &o.algo, &o.proto, why, sizeof why) != 0)
        return usage("%s", why);
      break;
    }
    case O_EXACT:
      o.exact = 1;
      break;
    case O_JSON:
      json = 1;
      break;
    case O_EXPLAIN:
      o.explain = 1;
      break;
    case 'h':
      dt_cli_print_usage(stdout, dt_cmd_bench_usage);
      return EXIT_OK;
    case ':':
      return usage("option '%s' requires an argument", argv[optind - 1]);
    default:
      return dt_cli_bad_option("bench", opt, argv, longopts); /* the nearest option, an ambiguous abbreviation */
    }
  }
  if (argc - optind < 1)
    return usage("%s", "expected an op (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, "
                       "sendrecv)");
  if (argc - optind > 1) {
    /* `dtsim bench PLATFORM OP`: the platform given as a word instead of --platform */
    const char *file = NULL, *op = NULL;
    for (int i = optind; i < argc; i++) {
      struct stat st;
      if (!file && stat(argv[i], &st) == 0 && S_ISREG(st.st_mode))
        file = argv[i];
      else if (!op && dt_bench_op_find(argv[i]))
        op = argv[i];
    }
    if (file && !platform_path)
      return usage("expected one op, found %d words: give the platform with --platform, as 'dtsim bench %s "
                   "--platform %s'", argc - optind, op ? op : "OP", file);
    return usage("expected one op (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv), "
                 "found %d words: '%s', '%s'%s", argc - optind, argv[optind], argv[optind + 1],
                 argc - optind > 2 ? ", ..." : "");
  }
  if (!inc && minb > maxb)
    return usage("-b %s (%s%llu bytes) is larger than -e %s (%s%llu bytes): the sizes run from -b up to -e",
                 minb_text ? minb_text : "32M", minb_text ? "" : "the default, ", (unsigned long long)minb,
                 maxb_text ? maxb_text : "32M", maxb_text ? "" : "the default, ", (unsigned long long)maxb);
  o.op = dt_bench_op_find(argv[optind]);
  if (!o.op) {
    size_t nops;
    const dt_bench_op *ops = dt_bench_ops(&nops);
    const char *names[16];
    for (size_t i = 0; i < nops && i < 16; i++)
      names[i] = ops[i].name;
    const char *near = dt_nearest_word(argv[optind], names, nops);
    fprintf(stderr, "dtsim bench: unknown op '%s'", argv[optind]);
    if (near)
      fprintf(stderr, " (did you mean '%s'?)", near);
    fprintf(stderr, "\nrun 'dtsim help bench' for usage\n");
    return EXIT_USAGE;
  }
  if (!platform_path)
    return usage("%s", "expected --platform FILE");
  if (inc && factor_given)
    return usage("%s", "-f and -i exclude each other");

  int rc = EXIT_USAGE;
  dt_error err;
  dt_error_clear(&err);
  dt_platform *p = NULL;
  uint64_t *sizes = NULL;
  dt_bench_row *rows = NULL;
  char **notes = NULL;
  size_t nnotes = 0;
  if (dt_platform_load(platform_path, &p, &err) != DT_OK)
    goto fail;
  if (o.ngpus < 0)
    o.ngpus = dt_platform_gpu_count(p);
  if (dt_bench_sizes(minb, maxb, factor, inc, &sizes, &o.nsizes, &err) != DT_OK)
    goto fail;
  o.sizes = sizes;
  if (dt_bench_run_notes(p, &o, &rows, &notes, &nnotes, &err) != DT_OK)
    goto fail;
  for (size_t i = 0; i < nnotes; i++) /* a forced --algo that fell back, as `dtsim run` says it (stdout stays the table) */
    fprintf(stderr, "dtsim: note: %s\n", notes[i]);
  if (json)
    print_json(rows, o.nsizes, o.explain);
  else {
    print_table(p, &o, rows);
    if (o.explain)
      print_explain(&o, rows);
  }
  rc = EXIT_OK;
  goto cleanup;
fail:;
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
cleanup:
  for (size_t i = 0; rows && i < o.nsizes; i++)
    free(rows[i].explain);
  free(rows);
  for (size_t i = 0; i < nnotes; i++)
    free(notes[i]);
  free(notes);
  free(sizes);
  dt_platform_free(p);
  return rc;
}
