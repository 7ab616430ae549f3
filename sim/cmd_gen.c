/* `dtsim gen`: writes the trace of a GPT training iteration (or its volume summary) from a preset or workload
 * file and flags; the flag table and the configuration builder are shared with `dtsim run --gen`. */
#include "dt_cmd_gen.h"

#include "dt_bench.h"
#include "dt_cli.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../traces/dt_trace_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

/* One row per flag: its long name, whether it takes an argument, the dt_gen_set key (NULL: handled
 * specially) and the value set by argument-less flags. */
typedef struct flag_row {
  const char *flag;
  int has_arg;
  const char *key;
  const char *fixed;
} flag_row;

/* The rows, once: flag_rows and dt_gen_long_options are both generated from this list (a table read inside
 * another's initializer is not a constant expression in ISO C, which clang enforces). */
#define FLAG_ROWS(X) \
  X(workload, "workload", 1, NULL, NULL) \
  X(set, "set", 1, NULL, NULL) \
  X(tp, "tp", 1, "tp", NULL) \
  X(pp, "pp", 1, "pp", NULL) \
  X(dp, "dp", 1, "dp", NULL) \
  X(zero, "zero", 1, "zero", NULL) \
  X(sp, "sp", 0, "sp", "true") \
  X(recompute, "recompute", 1, "recompute", NULL) \
  X(schedule, "schedule", 1, "schedule", NULL) \
  X(virtual_stages, "virtual-stages", 1, "virtual_stages", NULL) \
  X(microbatch, "microbatch", 1, "microbatch", NULL) \
  X(global_batch, "global-batch", 1, "global_batch", NULL) \
  X(seq, "seq", 1, "seq", NULL) \
  X(bucket, "bucket", 1, "bucket", NULL) \
  X(no_dp_overlap, "no-dp-overlap", 0, "dp_overlap", "false") \
  X(experts, "experts", 1, "experts", NULL) \
  X(top_k, "top-k", 1, "top_k", NULL) \
  X(ep, "ep", 1, "ep", NULL) \
  X(dtype, "dtype", 1, "dtype", NULL) \
  X(layers, "layers", 1, "layers", NULL) \
  X(hidden, "hidden", 1, "hidden", NULL) \
  X(heads, "heads", 1, "heads", NULL) \
  X(kv_heads, "kv-heads", 1, "kv_heads", NULL) \
  X(ffn, "ffn", 1, "ffn", NULL) \
  X(vocab, "vocab", 1, "vocab", NULL) \
  X(cp, "cp", 1, "cp", NULL) \
  X(tp_overlap, "tp-overlap", 0, "tp_overlap", "true") \
  X(p2p_overlap, "p2p-overlap", 0, "p2p_overlap", "true") \
  X(overlap_param_gather, "overlap-param-gather", 0, "overlap_param_gather", "true") \
  X(param_gather_prefetch, "param-gather-prefetch", 1, "param_gather_prefetch", NULL)

#define FLAG_ENUM(id, flag, arg, key, fixed) FLAG_##id,
enum { FLAG_ROWS(FLAG_ENUM) FLAG_COUNT };
#define FLAG_ROW(id, flag, arg, key, fixed) {flag, arg, key, fixed},
static const flag_row flag_rows[] = {FLAG_ROWS(FLAG_ROW)};
#define NFLAGS (sizeof flag_rows / sizeof flag_rows[0])

#define FLAG_OPTION(id, flag, arg, key, fixed) {flag, (arg) ? required_argument : no_argument, NULL, DT_GEN_OPT_BASE + FLAG_##id},
const struct option dt_gen_long_options[] = {FLAG_ROWS(FLAG_OPTION){NULL, 0, NULL, 0}};
_Static_assert(FLAG_COUNT == 30, "dt_gen_long_options lists every flag row");

const char dt_gen_flags_help[] =
    "  PRESET                 neox-19m, neox-125m, neox-1.3b, neox-13b, gpt3-175b, gpt3-5b, gpt3-20b,\n"
    "                         llama2-7b, llama2-70b, llama3-8b, llama3-70b, bloom-176b\n"
    "  --workload FILE        workload YAML (dtsim_workload: 1; docs/generator.md) instead of a preset\n"
    "  --tp N --pp N --dp N   tensor, pipeline and data parallel sizes (world = tp x cp x pp x dp)\n"
    "  --cp N                 context parallelism: the sequence split over N ranks (Megatron / NeMo)\n"
    "  --tp-overlap           TP all-gathers / reduce-scatters overlap their GEMMs (userbuffers; needs --sp)\n"
    "  --p2p-overlap          pipeline sends do not hold the compute stream (overlap_p2p_comm); with the\n"
    "                         interleaved schedule the receives are posted early, as Megatron posts them\n"
    "  --overlap-param-gather ZeRO-1's parameter all-gathers run under the next forward (needs --zero 1)\n"
    "  --param-gather-prefetch bucket|chunk   one bucket ahead (Megatron, default) or one model chunk ahead\n"
    "                         (MegaScale)\n"
    "  --zero K               ZeRO stage 0-3 (1: Megatron's distributed optimizer)\n"
    "  --sp                   sequence parallelism (turned off, with a note, when tp is 1, as Megatron does)\n"
    "  --recompute MODE       activation recomputation: none (default), full, selective\n"
    "  --schedule S           pipeline schedule: 1f1b (default) or interleaved (with --virtual-stages V)\n"
    "  --microbatch B         micro-batch size;  --global-batch G   sequences per iteration\n"
    "  --seq S                sequence length;   --dtype bf16|fp16|fp8|fp32 (fp8: FP8 GEMMs, bf16 elsewhere)\n"
    "  --bucket SIZE          DP gradient bucket in bytes: 25M, 512K, 1G (K, M, G, T are powers of 1024, as in\n"
    "                         'dtsim bench'), 80MB (powers of 1000), 64MiB; default Megatron's max(40M, 1M x dp)\n"
    "                         elements; 0 or any size below one layer's gradients: one bucket per layer\n"
    "  --no-dp-overlap        issue DP gradient reduction after the whole backward\n"
    "  --experts E --top-k K --ep N   mixture of experts: experts per layer, experts per token, expert parallel\n"
    "  --layers, --hidden, --heads, --kv-heads, --ffn, --vocab N   model shape\n"
    "  --set KEY=VALUE        any workload key (docs/generator.md), e.g. --set tied_embeddings=false\n";

const char dt_gen_usage[] =
    "usage: dtsim gen PRESET|--workload FILE [options] (-o OUT | --summary)\n"
    "\n"
    "Generates the trace of one training iteration of a GPT model as Megatron-LM / DeepSpeed would run it\n"
    "(tensor, pipeline, data parallelism, ZeRO, MoE), or prints its communication volumes.\n"
    "\n"
    "  -o, --output OUT       output file, directory/ for per-rank files, or - for stdout; a directory that\n"
    "                         already holds .dtt files is refused (a run of it would read them too)\n"
    "  --force                remove the .dtt files of such a directory first (other files stay)\n"
    "  --max-output SIZE      refuse to write more than SIZE (K, M, G, T = 1024; default 16G): refused before\n"
    "                         writing when 8 bytes per op pass it, else stopped (nothing kept) once passed\n"
    "  --summary              print bytes per GPU and in total by scheme and op kind, the seed study's\n"
    "                         closed forms and the message-size histogram\n";

int dt_gen_flags_take(dt_gen_flags *f, int opt, const char *arg, const char *cmdname)
{
  if (opt < DT_GEN_OPT_BASE || opt >= DT_GEN_OPT_BASE + (int)NFLAGS)
    return 0;
  const flag_row *row = &flag_rows[opt - DT_GEN_OPT_BASE];
  const char *key = row->key, *value = row->fixed ? row->fixed : arg;
  char *k = NULL;
  if (strcmp(row->flag, "workload") == 0)
    return dt_gen_flags_source(f, "--workload", arg, cmdname);
  if (strcmp(row->flag, "set") == 0) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
      fprintf(stderr, "dtsim %s: --set expects KEY=VALUE, found '%s'\nrun 'dtsim help %s' for usage\n", cmdname, arg,
              cmdname);
      return -1;
    }
    k = dt_xstrndup(arg, (size_t)(eq - arg));
    value = eq + 1;
  }
  /* a key set twice (--tp 2 --set tp=4, --set seq=1024 --set seq=2048) is refused as an option given twice is
   * (docs/cli.md); a flag without a value repeated (--sp --sp) sets the same value and is taken once */
  for (size_t i = 0; i < f->n; i++) {
    const char *a = f->keys[i], *b = k ? k : key;
    while (*a && *b && (*a == *b || (strchr("-_", *a) && strchr("-_", *b))))
      a++, b++;
    if (*a || *b)
      continue;
    if (row->fixed && strcmp(f->values[i], value) == 0)
      return 1;
    fprintf(stderr, "dtsim %s: the generator key '%s' is given twice ('%s' and '%s'): it takes one value, give it "
            "once\nrun 'dtsim help %s' for usage\n", cmdname, f->keys[i], f->values[i], value,
            strchr(cmdname, ' ') ? "run" : cmdname);
    free(k);
    return -1;
  }
  f->keys = dt_grow(f->keys, &f->cap, f->n, sizeof *f->keys);
  size_t cap = f->cap;
  f->values = dt_xrealloc(f->values, cap * sizeof *f->values);
  f->flags = dt_xrealloc(f->flags, cap * sizeof *f->flags);
  f->flags[f->n] = row->flag;
  f->keys[f->n] = k ? k : dt_xstrdup(key);
  f->values[f->n] = dt_xstrdup(value);
  f->n++;
  return 1;
}

int dt_gen_flags_source(dt_gen_flags *f, const char *flag, const char *arg, const char *cmdname)
{
  /* one workload: a second one (--gen a --workload b, PRESET and --workload) is refused as an option given twice
   * is (docs/cli.md, "Options given twice") */
  if (f->source) {
    fprintf(stderr,
            "dtsim %s: %s '%s' and %s '%s' both name the workload: give one preset or workload file\nrun "
            "'dtsim help %s' for usage\n",
            cmdname, f->source_flag, f->source, flag, arg, cmdname);
    return -1;
  }
  f->source = arg;
  f->source_flag = flag;
  return 1;
}

static int is_yaml_path(const char *s)
{
  size_t n = strlen(s);
  return (n > 5 && strcmp(s + n - 5, ".yaml") == 0) || (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

void dt_gen_flags_context(const dt_gen_flags *f, dt_error *err)
{
  if (!err || f->n == 0 || !f->flags || err->line > 0)
    return;
  char given[512] = "";
  size_t used = 0;
  for (size_t i = 0; i < f->n && used < sizeof given; i++) {
    int takes_value = 1;
    for (size_t k = 0; k < NFLAGS; k++)
      if (strcmp(flag_rows[k].flag, f->flags[i]) == 0)
        takes_value = flag_rows[k].has_arg;
    if (strcmp(f->flags[i], "set") == 0)
      used += (size_t)snprintf(given + used, sizeof given - used, "%s--set %s=%s", used ? " " : "", f->keys[i],
                               f->values[i]);
    else
      used += (size_t)snprintf(given + used, sizeof given - used, "%s--%s%s%s", used ? " " : "", f->flags[i],
                               takes_value ? " " : "", takes_value ? f->values[i] : "");
  }
  char msg[sizeof err->msg + sizeof given + 64];
  snprintf(msg, sizeof msg, "%s (given on the command line: %s)", err->msg, given);
  snprintf(err->msg, sizeof err->msg, "%.*s", (int)sizeof err->msg - 1, msg);
}

int dt_gen_flags_config(const dt_gen_flags *f, dt_gen_config *c, dt_error *err)
{
  dt_gen_config_init(c);
  if (!f->source)
    return dt_error_set(err, "", 0, 0, "expected a preset or --workload FILE");
  int is_preset = 0;
  for (size_t i = 0; i < dt_gen_preset_count(); i++)
    is_preset |= strcmp(f->source, dt_gen_preset_name(i)) == 0;
  struct stat sb;
  int from_file = (f->source_flag && strcmp(f->source_flag, "--workload") == 0) || is_yaml_path(f->source) ||
                  (!is_preset && stat(f->source, &sb) == 0);
  if (from_file) {
    if (dt_gen_load_yaml(f->source, c, err) != DT_OK)
      return DT_ERR;
  } else if (dt_gen_preset(f->source, c, err) != DT_OK) {
    return DT_ERR;
  }
  for (size_t i = 0; i < f->n; i++)
    if (dt_gen_set(c, f->keys[i], f->values[i], err) != DT_OK) {
      /* the flag as given (was: "'tp' expects a whole number ..." without the option) */
      if (f->flags && strcmp(f->flags[i], "set") == 0)
        dt_error_prefix(err, "--set %s=%s: ", f->keys[i], f->values[i]);
      else if (f->flags)
        dt_error_prefix(err, "--%s: ", f->flags[i]);
      return DT_ERR;
    }
  char note[1024];
  if (dt_gen_resolve(c, note, sizeof note))
    for (char *line = note, *nl; line; line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      fprintf(stderr, "dtsim: note: %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
    }
  return DT_OK;
}

void dt_gen_flags_free(dt_gen_flags *f)
{
  for (size_t i = 0; i < f->n; i++) {
    free(f->keys[i]);
    free(f->values[i]);
  }
  free(f->keys);
  free(f->values);
  free(f->flags);
  memset(f, 0, sizeof *f);
}

/* ---- summary ---- */

static const char *fmt_bytes(double b, char *buf, size_t size)
{
  return dt_format_bytes(b, buf, size);
}

int dt_gen_print_summary(FILE *out, const dt_gen_config *c, const dt_trace *t, dt_error *err)
{
  dt_gen_volume v;
  if (dt_gen_volume_compute(c, t, &v, err) != DT_OK)
    return DT_ERR;
  char a[32], b[32];
  fprintf(out, "model %s: L %d, h %d, heads %d (kv %d), ffn %d%s, vocab %d, seq %d, dtype %s\n", c->name, c->layers,
          c->hidden, c->heads, c->kv_heads > 0 ? c->kv_heads : c->heads, c->ffn, c->swiglu ? " SwiGLU" : "", c->vocab,
          c->seq, c->dtype);
  fprintf(out, "parallel: tp %d x pp %d x dp %d = %lld GPUs, ZeRO %d%s, recompute %s, %s schedule", c->tp, c->pp, c->dp,
          (long long)dt_gen_world(c), c->zero, c->sp && c->tp > 1 ? ", sequence parallel" : "",
          c->recompute == DT_RECOMPUTE_FULL        ? "full"
          : c->recompute == DT_RECOMPUTE_SELECTIVE ? "selective"
                                                   : "none",
          c->schedule == DT_SCHEDULE_INTERLEAVED ? "interleaved" : "1F1B");
  if (c->schedule == DT_SCHEDULE_INTERLEAVED)
    fprintf(out, " (%d virtual stages)", c->virtual_stages);
  if (c->experts > 0)
    fprintf(out, ", MoE %d experts top-%d ep %d", c->experts, c->top_k, c->ep);
  fprintf(out, "\nbatch: micro-batch %d, global %lld, %lld micro-batches per pipeline\n\n", c->microbatch,
          (long long)c->global_batch, (long long)dt_gen_microbatches(c));

  fprintf(out, "per GPU and iteration (bytes = sum of op bytes=, wire = bytes a GPU sends with ring algorithms)\n");
  fprintf(out, "%-10s %-6s %12s %14s %14s\n", "scheme", "stage", "ops", "bytes", "wire");
  for (int sc = 0; sc < DT_SCHEME_COUNT; sc++) {
    if (v.total_ops[sc] == 0)
      continue;
    for (int32_t s = 0; s < v.stages; s++) {
      if (v.stages > 8 && s > 1 && s < v.stages - 1) {
        if (s == 2)
          fprintf(out, "%-10s %-6s\n", "", "...");
        continue;
      }
      fprintf(out, "%-10s %-6d %12.0f %14s %14s\n", dt_gen_scheme_name((dt_gen_scheme)sc), s, v.stage_ops[sc][s],
              fmt_bytes(v.stage_bytes[sc][s], a, sizeof a), fmt_bytes(v.stage_wire[sc][s], b, sizeof b));
    }
  }
  fprintf(out, "\ntotal over %lld GPUs\n%-10s %14s %14s %14s\n", (long long)dt_gen_world(c), "scheme", "ops", "bytes",
          "wire");
  for (int sc = 0; sc < DT_SCHEME_COUNT; sc++)
    if (v.total_ops[sc] > 0)
      fprintf(out, "%-10s %14.0f %14s %14s\n", dt_gen_scheme_name((dt_gen_scheme)sc), v.total_ops[sc],
              fmt_bytes(v.total_bytes[sc], a, sizeof a), fmt_bytes(v.total_wire[sc], b, sizeof b));
  fprintf(out, "\nby op kind, over all GPUs (a send/recv pair counted once)\n%-14s %14s %14s\n", "op", "count", "bytes");
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (v.kind_ops[k] > 0)
      fprintf(out, "%-14s %14.0f %14s\n", dt_op_kind_name((dt_op_kind)k), v.kind_ops[k],
              fmt_bytes(v.kind_bytes[k], a, sizeof a));

  double dp_wire = v.stage_wire[DT_SCHEME_DP][0] + v.stage_wire[DT_SCHEME_ZERO][0];
  int sp = c->sp && c->tp > 1, moe = c->experts > 0;
  fprintf(out, "\nclosed forms (seed study, HOTI 2024), per GPU of stage 0 unless said\n");
  fprintf(out, "  %-33s %14s   largest TP op in the trace %s\n", "TP message b*s*h*e",
          fmt_bytes(v.cf_tp_msg, a, sizeof a), fmt_bytes((double)v.max_msg[DT_SCHEME_TP], b, sizeof b));
  fprintf(out, "  %-33s %14s   largest PP op in the trace %s\n", sp ? "PP message b*s*h*e/t" : "PP message b*s*h*e",
          fmt_bytes(v.cf_pp_msg, a, sizeof a), fmt_bytes((double)v.max_msg[DT_SCHEME_PP], b, sizeof b));
  if (!moe) {
    fprintf(out, "  %-33s %14s   (%lld parameters per GPU)\n", "gradients m = params*e",
            fmt_bytes(v.cf_dp_m, a, sizeof a), (long long)dt_gen_stage_params(c, 0));
  } else {
    fprintf(out, "  %-33s %14s   (%lld dense parameters per GPU: attention, norms, router, embeddings)\n",
            "dense gradients m = params*e", fmt_bytes(v.cf_dp_m, a, sizeof a), (long long)dt_gen_stage_params(c, 0));
    fprintf(out, "  %-33s %14s   (%lld expert parameters per GPU: %d experts x %d layers)\n",
            "expert gradients mx = params*e", fmt_bytes(v.cf_expert_m, a, sizeof a),
            (long long)dt_gen_stage_expert_params(c, 0), c->experts / c->ep, c->layers / c->pp);
  }
  if (c->dp > 1) {
    const char *dp_label = c->zero == 3   ? "ZeRO-3 ~1.5 x 2m x micro-batches"
                           : c->zero == 2 ? "ZeRO-2 m x (micro-batches + 1)"
                           : c->zero == 1 ? "ZeRO-1 RS m + AG m = 2m"
                                          : "DP all-reduce 2m";
    fprintf(out, "  %-33s %14s   on the %d GPUs of the DP group\n", dp_label, fmt_bytes(v.cf_dp_volume, a, sizeof a),
            c->dp);
    if (moe && v.expert_dp > 1)
      fprintf(out, "  %-33s %14s   on the dp/ep = %d GPUs of the expert-data-parallel group\n", "expert all-reduce 2mx",
              fmt_bytes(v.cf_expert_volume, a, sizeof a), v.expert_dp);
    else if (moe)
      fprintf(out, "  %-33s %14s   (dp/ep = 1: no expert-data-parallel group)\n", "expert all-reduce",
              fmt_bytes(0, a, sizeof a));
    if (moe)
      fprintf(out,
              "  %-33s %14s   = DP closed form x (dp-1)/dp + expert x (n-1)/n, n = dp/ep; trace wire (DP + "
              "ZeRO + expert) %s\n",
              "sent per GPU with rings", fmt_bytes(v.cf_dp_ring, a, sizeof a), fmt_bytes(dp_wire, b, sizeof b));
    else
      fprintf(out, "  %-33s %14s   = closed form above x (dp-1)/dp; trace wire (DP + ZeRO) %s\n",
              "sent per GPU with rings", fmt_bytes(v.cf_dp_ring, a, sizeof a), fmt_bytes(dp_wire, b, sizeof b));
  }
  fprintf(out, "\nmessage sizes (ops over all GPUs, power-of-two buckets)\n");
  for (int k = 0; k < DT_GEN_HIST; k++) {
    if (v.hist[k] == 0)
      continue;
    if (k == 0)
      fprintf(out, "  %-24s %14.0f\n", "0 B", v.hist[k]);
    else {
      char lo[32], hi[32], label[80];
      snprintf(label, sizeof label, "[%s, %s)", fmt_bytes(ldexp(1, k - 1), lo, sizeof lo),
               fmt_bytes(ldexp(1, k), hi, sizeof hi));
      fprintf(out, "  %-24s %14.0f\n", label, v.hist[k]);
    }
  }
  dt_gen_volume_free(&v);
  return DT_OK;
}

/* ---- dtsim gen ---- */

int dt_cmd_gen(int argc, char **argv)
{
  struct option longopts[NFLAGS + 6];
  size_t n = 0;
  uint64_t max_output = DT_MAX_OUTPUT_DEFAULT;
  longopts[n++] = (struct option){"output", required_argument, NULL, 'o'};
  longopts[n++] = (struct option){"max-output", required_argument, NULL, 'M'};
  longopts[n++] = (struct option){"summary", no_argument, NULL, 'S'};
  longopts[n++] = (struct option){"force", no_argument, NULL, 'f'};
  longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
  for (size_t i = 0; i <= NFLAGS; i++)
    longopts[n++] = dt_gen_long_options[i];
  const char *out = NULL;
  int summary = 0, force = 0;
  dt_gen_flags gf;
  memset(&gf, 0, sizeof gf);
  int opt, rc = EXIT_USAGE;
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  if (dt_cli_check_repeats("gen", argc, argv, ":o:h", longopts, "set") != 0)
    goto cleanup;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int handled = dt_gen_flags_take(&gf, opt, optarg, "gen");
    if (handled < 0)
      goto cleanup;
    if (handled)
      continue;
    switch (opt) {
    case 'o':
      out = optarg;
      break;
    case 'S':
      summary = 1;
      break;
    case 'f':
      force = 1;
      break;
    case 'M':
      if (dt_cli_max_output("gen", optarg, &max_output) != 0)
        goto cleanup;
      break;
    case 'h':
      fputs(dt_gen_usage, stdout);
      fputs(dt_gen_flags_help, stdout);
      rc = EXIT_OK;
      goto cleanup;
    default:
      dt_cli_bad_option("gen", opt, argv, longopts);
      goto cleanup;
    }
  }
  if (optind < argc) {
    if (argc - optind > 1) {
      fprintf(stderr, "dtsim gen: unexpected argument '%s'\nrun 'dtsim help gen' for usage\n", argv[optind + 1]);
      goto cleanup;
    }
    if (dt_gen_flags_source(&gf, "PRESET", argv[optind], "gen") < 0)
      goto cleanup;
  }
  if (summary && out && strcmp(out, "-") == 0) {
    fprintf(stderr, "dtsim gen: --summary and -o - both write to standard output\nrun 'dtsim help gen' for usage\n");
    goto cleanup;
  }
  /* the model first: 'gen nosuchmodel' said "expected -o OUT" before naming the unknown preset */
  dt_gen_config c;
  if (gf.source && dt_gen_flags_config(&gf, &c, &err) != DT_OK)
    goto fail;
  if (!gf.source) { /* was "expected -o OUT or --summary" before the model itself */
    fprintf(stderr, "dtsim gen: expected a PRESET (neox-19m, gpt3-175b, llama3-8b, ...: 'dtsim help gen' lists "
            "them) or --workload FILE\nrun 'dtsim help gen' for usage\n");
    goto cleanup;
  }
  if (!out && !summary) {
    fprintf(stderr, "dtsim gen: expected -o OUT or --summary\nrun 'dtsim help gen' for usage\n");
    goto cleanup;
  }
  /* the output before the trace is built, as import does: a file that can be written, no directory named
   * without its '/', a DIR/ without the .dtt files of an earlier run (or --force, which removes them once the
   * new trace is built and fits --max-output) */
  size_t olen = out ? strlen(out) : 0;
  struct stat ost;
  if (out && olen > 0 && out[olen - 1] != '/' && stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)) {
    fprintf(stderr, "dtsim gen: -o %s is a directory: give a file name ('%s/trace.dtt'), or '%s/' with the slash "
            "to write one file per rank into it\nrun 'dtsim help gen' for usage\n", out, out, out);
    goto cleanup;
  }
  if (out && ((olen > 0 && out[olen - 1] != '/' && dt_cli_output_check("-o", out, "the trace", &err) != DT_OK) ||
              dt_cli_out_dir("gen", out, force, 0, &err) != DT_OK))
    goto fail;
  if (dt_gen_build(&c, 0, &t, &err) != DT_OK) {
    dt_gen_flags_context(&gf, &err); /* a check of keys together names the flags given (was: none) */
    goto fail;
  }
  if (out) {
    if (dt_check_output_size(t, out, max_output, "gen", &err) != DT_OK ||
        (force && dt_cli_out_dir("gen", out, force, 1, &err) != DT_OK) ||
        dt_write_output(t, out, max_output, "gen", &err) != DT_OK)
      goto fail;
    if (strcmp(out, "-") != 0)
      fprintf(stderr, "dtsim: wrote %s: %d ranks, %zu ops\n", out, (int)t->nranks, dt_trace_op_count(t));
  }
  if (summary && dt_gen_print_summary(stdout, &c, t, &err) != DT_OK)
    goto fail;
  rc = EXIT_OK;
  goto cleanup;
fail: {
  dt_cli_name_output(&err, "-o", out);
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
  rc = EXIT_USAGE;
}
cleanup:
  dt_trace_free(t);
  dt_gen_flags_free(&gf);
  return rc;
}
