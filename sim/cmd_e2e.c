/* dtsim validate --e2e: whole training iterations against published ones (validation/references/
 * e2e_iterations.csv). Each row becomes a generated workload (its model preset and parallel configuration) on a
 * platform that describes its cluster; each source is calibrated once, on its smallest row, by the one plain
 * multiplier gpu.efficiency, and the other rows are predicted with it. One child process per simulation (SimGrid
 * runs once per process). docs/validation.md describes the rows, the mapping and the results. */
#include "cmd_e2e.h"
#include "dt_fork.h"
#include "cmd_validate.h"
#include "dt_cli.h"

#include "../common/dt_json.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "../replay/dt_replay.h"
#include "../traces/dt_gen.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };
#define DEFAULT_BOUND 0.10 /* issue 13: within 10 % on whole iterations */

const char dt_cmd_e2e_usage[] =
    "usage: dtsim validate --e2e [--references DIR] [--platforms DIR] [--max-gpus N] [--source NAME]...\n"
    "                            [--bound X] [--plain] [--uncalibrated] [--jobs N] [--json]\n"
    "\n"
    "Runs the rows of e2e_iterations.csv (published iteration times of real training runs) as generated\n"
    "workloads on the platforms of their clusters: calibrates gpu.efficiency once per source on its smallest\n"
    "row, predicts the others (one simulation each), and prints per row the measured and simulated seconds per\n"
    "iteration with the relative error after calibration (and before, at efficiency 1, for the calibration row\n"
    "or with --uncalibrated), the CPU seconds and peak memory its simulations took, and per source the median\n"
    "error of its predicted rows against the bound. Exit 0 when it ran (the errors are findings), 2 for bad\n"
    "input.\n"
    "\n"
    "  --references DIR   directory of e2e_iterations.csv (default validation/references)\n"
    "  --platforms DIR    the cluster platform files (default validation/platforms)\n"
    "  --max-gpus N       skip rows of more than N GPUs (listed as skipped)\n"
    "  --bound X          the bound on each source's median error (default 0.10)\n"
    "  --plain            ignore the platforms' gpu.compute sections: every FLOP at gpu.peak x efficiency\n"
    "  --uncalibrated     also simulate every predicted row at efficiency 1 (twice the simulations)\n"
    "  --source NAME      run only this source's rows (repeatable) and the calibration rows they need (a\n"
    "                     single-row source predicted from another's efficiency needs that one's); the\n"
    "                     other rows are listed as skipped\n"
    "  --jobs N           run up to N rows at once, each in its own processes (default 1; a predicted row\n"
    "                     waits for its calibration row)\n"
    "  --json             one JSON object: {rows: [{source, model, gpus, measured_s, train_only_s,\n"
    "                     uncalibrated_s, uncalibrated_error, simulated_s, rel_error, iter_error, role,\n"
    "                     efficiency, simulations, cpu_s, peak_rss_mib}...], sources: [{source, efficiency,\n"
    "                     median_error, predicted, pass}...]}; train_only_s is the CSV's optional column (the\n"
    "                     training step alone when iter_s includes more, as MLPerf's evaluations), else null.\n"
    "                     A row with train_only_s is scored against it (rel_error, uncalibrated_error, the\n"
    "                     calibration, the median): dtsim simulates training steps only; iter_error is the\n"
    "                     error against measured_s (iter_s) for every row\n";

/* How a source's rows map onto dtsim (docs/validation.md gives the reasons). */
typedef struct source_spec {
  const char *source;
  const char *platform;
  const char *recompute;
  int flash, sp, embed_as_layers;
  int overlap;      /* TP communication overlap (with SP) and p2p overlap (pp > 1), as the runs set them */
  int param_gather; /* the distributed optimizer's parameter all-gather under the next forward (dp > 1): 0 not
                       overlapped, 1 prefetched one bucket ahead (Megatron / NeMo), 2 one model chunk ahead */
  const char *vocab; /* the run's vocabulary size when it is not its preset's (NULL: the preset's) */
} source_spec;

/* The configuration keys each value comes from are cited in validation/references/e2e_iterations.csv's header. */
static const source_spec sources[] = {
    /* NeMo 24.07 performance summary: Transformer Engine FP8, flash attention, distributed optimizer, SP with TP;
     * ub_tp_comm_overlap, overlap_p2p_comm and optim.overlap_param_sync true in its launcher configurations */
    {"nemo-24.07", "dgx-h100-superpod.yaml", "none", 1, 1, 0, 1, 1, NULL},
    /* BLOOM: Megatron-DeepSpeed (no flash attention, no SP), activation checkpointing, DeepSpeed's pipeline
     * partition that counts the embeddings as layers (70 layers on 12 stages); DeepSpeed's pipeline engine
     * blocks on its p2p and its ZeRO-1 (bf16 optimizer) gathers the parameters after the step: no overlap */
    {"bigscience-tr11", "jean-zay-a100.yaml", "full", 0, 0, 1, 0, 0, NULL},
    /* MLPerf v3.1 GPT-3 on Eos: NeMo, FP8, SP, TP_COMM_OVERLAP=True in its configuration, overlap_p2p_comm and
     * overlap_param_sync true (custom.yaml, conf/optim/distributed_fused_adam.yaml) */
    {"mlperf-v3.1-eos", "eos-like.yaml", "none", 1, 1, 0, 1, 1, NULL},
    /* MegaScale: Megatron-LM based, flash attention, SP, TP and PP communication overlapped and the data-parallel
     * all-gather of each model chunk prefetched while the previous one runs, the first at the iteration's start
     * (its section 3.2); a 64K vocabulary, not GPT-3's 50,257 (its evaluation setup, the CSV's header) */
    {"megascale-nsdi24", "megascale-a100.yaml", "none", 1, 1, 0, 1, 2, "64000"},
};
#define NSOURCES (sizeof sources / sizeof sources[0])

typedef enum { ROLE_CAL = 0, ROLE_PRED, ROLE_XPRED, ROLE_SKIP } row_role;
static const char *const role_names[] = {"calibration", "predicted", "predicted from another source", "skipped"};

typedef struct e2e_row {
  char source[48], model[32], gpu[32], dtype[8];
  long gpus, gbs, mbs, seq, tp, pp, cp, vp, dp;
  double measured;
  double train_only;  /* the reference's training time alone (seconds per step) when its measurement includes
                         more (MLPerf: the evaluations), NAN when it is the training time */
  int derived;
  size_t line;
  const source_spec *spec;
  row_role role;
  double uncal, sim, eff; /* simulated seconds at efficiency 1 (NAN when not run), after calibration, the
                             efficiency used */
  size_t cal;             /* a predicted row's calibration row (its source's, or another's) */
  int selected;           /* its source was named by --source */
  int nsim;               /* simulations the row ran */
  double cpu_s;           /* CPU seconds: its generation (in this process) and its simulations (each child's) */
  long rss_kb;            /* the largest peak resident set among them (KiB) */
} e2e_row;

/* ---- CSV ---- */

static char *trim(char *s)
{
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
    s[--n] = '\0';
  return s;
}

static const char *const columns[] = {"source", "model", "gpus", "gpu", "dtype", "gbs",    "mbs",    "seq",
                                      "tp",     "pp",    "cp",   "vp",  "dp",    "iter_s", "derived"};
#define NCOLS (sizeof columns / sizeof columns[0])

/* Optional columns: train_only_s, the training step alone when iter_s includes more (docs/validation.md). */
static const char *const opt_columns[] = {"train_only_s"};
#define NOPT (sizeof opt_columns / sizeof opt_columns[0])

/* A whole number from a field; empty gives dflt. */
static int field_long(const char *v, long dflt, long *out)
{
  if (!*v) {
    *out = dflt;
    return 0;
  }
  long long x;
  if (dt_parse_whole(v, 1, 100000000, &x) != 0)
    return -1;
  *out = (long)x;
  return 0;
}

static int read_rows(const char *path, e2e_row **out, size_t *nout, dt_error *err)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
  char line[4096];
  size_t ln = 0, n = 0, cap = 0;
  int idx[NCOLS], oidx[NOPT] = {-1}, have_header = 0;
  e2e_row *rows = NULL;
  while (fgets(line, sizeof line, f)) {
    ln++;
    char *s = trim(line);
    if (!*s || *s == '#')
      continue;
    char *fields[64];
    size_t nf = 0;
    for (char *p = s;;) {
      char *c = strchr(p, ',');
      if (c)
        *c = '\0';
      if (nf < 64)
        fields[nf++] = trim(p);
      if (!c)
        break;
      p = c + 1;
    }
    if (!have_header) {
      for (size_t k = 0; k < NCOLS; k++) {
        idx[k] = -1;
        for (size_t j = 0; j < nf; j++)
          if (strcmp(fields[j], columns[k]) == 0)
            idx[k] = (int)j;
        if (idx[k] < 0) {
          fclose(f);
          free(rows);
          return dt_error_set(err, path, (long)ln, 0, "missing column '%s' in the header", columns[k]);
        }
      }
      for (size_t k = 0; k < NOPT; k++) {
        oidx[k] = -1;
        for (size_t j = 0; j < nf; j++)
          if (strcmp(fields[j], opt_columns[k]) == 0)
            oidx[k] = (int)j;
      }
      have_header = 1;
      continue;
    }
    rows = dt_grow(rows, &cap, n, sizeof *rows);
    e2e_row *r = &rows[n];
    memset(r, 0, sizeof *r);
    r->line = ln;
    const char *v[NCOLS];
    for (size_t k = 0; k < NCOLS; k++) {
      if ((size_t)idx[k] >= nf) {
        fclose(f);
        free(rows);
        return dt_error_set(err, path, (long)ln, 0, "expected %zu fields, found %zu", NCOLS, nf);
      }
      v[k] = fields[idx[k]];
    }
    snprintf(r->source, sizeof r->source, "%s", v[0]);
    snprintf(r->model, sizeof r->model, "%s", v[1]);
    snprintf(r->gpu, sizeof r->gpu, "%s", v[3]);
    snprintf(r->dtype, sizeof r->dtype, "%s", v[4]);
    long *dst[] = {&r->gpus, &r->gbs, &r->mbs, &r->seq, &r->tp, &r->pp, &r->cp, &r->vp, &r->dp};
    const int col[] = {2, 5, 6, 7, 8, 9, 10, 11, 12};
    for (size_t k = 0; k < 9; k++)
      if (field_long(v[col[k]], 1, dst[k]) != 0) {
        fclose(f);
        free(rows);
        return dt_error_set(err, path, (long)ln, 0, "column '%s': expected a whole number from 1 to 100000000, found '%s'",
                            columns[col[k]], v[col[k]]);
      }
    char *end;
    r->measured = strtod(v[13], &end);
    if (*end || !(r->measured > 0)) {
      fclose(f);
      free(rows);
      return dt_error_set(err, path, (long)ln, 0, "column 'iter_s': expected seconds above zero, found '%s'", v[13]);
    }
    r->derived = strcmp(v[14], "D") == 0;
    r->train_only = NAN;
    if (oidx[0] >= 0 && (size_t)oidx[0] < nf && *fields[oidx[0]]) {
      r->train_only = strtod(fields[oidx[0]], &end);
      if (*end || !(r->train_only > 0)) {
        fclose(f);
        free(rows);
        return dt_error_set(err, path, (long)ln, 0,
                            "column 'train_only_s': expected seconds above zero or nothing, found '%s'",
                            fields[oidx[0]]);
      }
    }
    r->spec = NULL;
    for (size_t k = 0; k < NSOURCES; k++)
      if (strcmp(sources[k].source, r->source) == 0)
        r->spec = &sources[k];
    if (!r->spec) {
      fclose(f);
      free(rows);
      return dt_error_set(err, path, (long)ln, 0,
                          "unknown source '%s' (dtsim knows nemo-24.07, bigscience-tr11, "
                          "mlperf-v3.1-eos, megascale-nsdi24)",
                          v[0]);
    }
    n++;
  }
  fclose(f);
  if (!have_header) {
    free(rows);
    return dt_error_set(err, path, 0, 0, "no header line");
  }
  *out = rows;
  *nout = n;
  return DT_OK;
}

/* ---- one simulation ---- */

static int config_of(const e2e_row *r, dt_gen_config *c, dt_error *err)
{
  dt_gen_config_init(c);
  if (dt_gen_preset(r->model, c, err) != DT_OK)
    return DT_ERR;
  if (r->spec->vocab && dt_gen_set(c, "vocab", r->spec->vocab, err) != DT_OK)
    return DT_ERR;
  char buf[64];
  const struct {
    const char *key;
    long v;
  } nums[] = {{"global_batch", r->gbs},
              {"microbatch", r->mbs},
              {"seq", r->seq},
              {"tp", r->tp},
              {"pp", r->pp},
              {"cp", r->cp},
              {"dp", r->dp}};
  for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
    snprintf(buf, sizeof buf, "%ld", nums[k].v);
    if (dt_gen_set(c, nums[k].key, buf, err) != DT_OK)
      return DT_ERR;
  }
  if (dt_gen_set(c, "dtype", r->dtype, err) != DT_OK || dt_gen_set(c, "zero", "1", err) != DT_OK ||
      dt_gen_set(c, "recompute", r->spec->recompute, err) != DT_OK ||
      dt_gen_set(c, "flash_attention", r->spec->flash ? "true" : "false", err) != DT_OK ||
      dt_gen_set(c, "sp", r->spec->sp && r->tp > 1 ? "true" : "false", err) != DT_OK)
    return DT_ERR;
  if (r->spec->embed_as_layers && c->layers % r->pp && dt_gen_set(c, "embed_as_layers", "true", err) != DT_OK)
    return DT_ERR;
  if (r->spec->overlap && r->spec->sp && r->tp > 1 && dt_gen_set(c, "tp_overlap", "true", err) != DT_OK)
    return DT_ERR;
  if (r->spec->overlap && r->pp > 1 && dt_gen_set(c, "p2p_overlap", "true", err) != DT_OK)
    return DT_ERR;
  if (r->spec->param_gather && r->dp > 1 &&
      (dt_gen_set(c, "overlap_param_gather", "true", err) != DT_OK ||
       dt_gen_set(c, "param_gather_prefetch", r->spec->param_gather == 2 ? "chunk" : "bucket", err) != DT_OK))
    return DT_ERR;
  if (r->vp > 1) {
    snprintf(buf, sizeof buf, "%ld", r->vp);
    if (dt_gen_set(c, "schedule", "interleaved", err) != DT_OK || dt_gen_set(c, "virtual_stages", buf, err) != DT_OK)
      return DT_ERR;
  }
  return DT_OK;
}

/* What one simulation gives back from its child process. */
typedef struct sim_result {
  double secs;       /* the iteration's simulated seconds */
  double cp_compute; /* compute on the critical path (seconds; NAN without one): the part that scales with
                        1/efficiency, calibrate's first step */
  double cpu_s;      /* the child's CPU seconds (user + system): the replay (the row's trace is generated once,
                        in the parent) */
  long rss_kb;       /* the child's peak resident set (KiB, getrusage's ru_maxrss) */
} sim_result;

/* This process's CPU seconds so far (user + system). */
static double cpu_seconds(void)
{
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0)
    return 0;
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

/* A row made ready to simulate: its platform and generated trace, built once in the parent and shared with every
 * simulation of the row (each child process gets a copy-on-write image of both). */
typedef struct row_ctx {
  dt_platform *p;
  dt_trace *t;
} row_ctx;

static void row_free(row_ctx *x)
{
  dt_trace_free(x->t);
  dt_platform_free(x->p);
  x->t = NULL;
  x->p = NULL;
}

/* Loads row r's platform file path (without its gpu.compute section when plain) and generates, validates its
 * trace into *x (row_free frees it). DT_ERR with err set for a platform or configuration that cannot run. */
static int row_prepare(e2e_row *r, const char *path, int plain, row_ctx *x, dt_error *err)
{
  dt_gen_config c;
  double t0 = cpu_seconds();
  x->p = NULL;
  x->t = NULL;
  int rc = DT_ERR;
  if (dt_platform_load(path, &x->p, err) != DT_OK)
    goto done;
  if (plain)
    x->p->compute.present = 0;
  if (config_of(r, &c, err) != DT_OK || dt_gen_validate(&c, dt_platform_gpu_count(x->p), err) != DT_OK ||
      dt_gen_build(&c, 0, &x->t, err) != DT_OK || dt_trace_validate(x->t, err) != DT_OK) {
    row_free(x);
    goto done;
  }
  rc = DT_OK;
done:
  r->cpu_s += cpu_seconds() - t0;
  return rc;
}

/* Replays the row's trace with gpu.efficiency = eff into *out, in this process (SimGrid once per process: call
 * through simulate). The run keeps the exact shortcuts (docs/replay.md) and turns the per-link accounting off:
 * the row needs its iteration time and critical path only. */
static int simulate_here(const row_ctx *x, double eff, sim_result *out, dt_error *err)
{
  dt_stats *s = NULL;
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  o.links = 0;
  x->p->gpu_efficiency = eff; /* the child's copy */
  int rc = DT_ERR;
  if (dt_replay_run(x->p, x->t, &o, &s, err) != DT_OK)
    goto done;
  if (s->ndeadlock > 0) {
    dt_error_set(err, "", 0, 0, "the simulation deadlocked (first: %s)", s->deadlock[0]);
    goto done;
  }
  out->secs = s->niterations > 0 ? s->iterations_s[0] : s->makespan_s;
  out->cp_compute = s->critical ? s->critical->compute_s : NAN;
  rc = DT_OK;
done:
  dt_stats_free(s);
  struct rusage ru;
  out->cpu_s = cpu_seconds();
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    out->rss_kb = ru.ru_maxrss;
  return rc;
}

/* simulate_here's arguments, for dt_run_forked. */
typedef struct {
  const row_ctx *x;
  double eff;
} e2e_job;

static int simulate_child(void *arg, void *out, dt_error *err)
{
  const e2e_job *j = arg;
  return simulate_here(j->x, j->eff, out, err);
}

/* Row r's resources: simulations run, CPU seconds summed over them, the largest peak resident set. */
static void account(e2e_row *r, const sim_result *res)
{
  r->nsim++;
  r->cpu_s += res->cpu_s;
  if (res->rss_kb > r->rss_kb)
    r->rss_kb = res->rss_kb;
}

/* simulate_here in a child process; the row's resources are accounted. */
static int simulate(e2e_row *r, const row_ctx *x, double eff, sim_result *res, dt_error *err)
{
  e2e_job j = {x, eff};
  memset(res, 0, sizeof *res);
  if (dt_run_forked(simulate_child, &j, res, sizeof *res, "the simulation process", err) != DT_OK)
    return DT_ERR;
  account(r, res);
  return DT_OK;
}

/* What row r's simulation is scored against (seconds per step): the training step alone when the CSV gives it
 * (train_only_s: the measurement includes more, as MLPerf's amortised evaluations, and dtsim simulates training
 * steps only), else the measured iteration (iter_s). docs/validation.md. */
static double reference_s(const e2e_row *r)
{
  return isfinite(r->train_only) ? r->train_only : r->measured;
}

/* ---- calibration ---- */

#define CAL_TOL 5e-4 /* calibration stops within this fraction of the reference */
#define CAL_RUNS 4   /* at most this many simulations after the uncalibrated one */

/* The efficiency that makes row r's simulated iteration its reference one (reference_s). In u = 1/efficiency the
 * iteration is close to T(u) = a + b u: the compute on the critical path scales with u, the exposed communication
 * does not. The uncalibrated run (u = 1, *un) gives b as its critical path's compute and a = T - b, so the first
 * step is u = 1 + (reference - T) / b (the whole iteration scaled, u = reference / T, when there is no compute on
 * the path); secant steps follow until the run is within CAL_TOL (the path may change as u moves). *sim gets the
 * last run's seconds. */
static int calibrate(e2e_row *r, const row_ctx *x, const sim_result *un, double *eff, double *sim, dt_error *err)
{
  double want = reference_s(r);
  double u1 = 1, t1 = un->secs, u2;
  if (isfinite(un->cp_compute) && un->cp_compute > 1e-3 * un->secs)
    u2 = 1 + (want - un->secs) / un->cp_compute;
  else
    u2 = want / un->secs;
  if (!(u2 > 0))
    u2 = want / un->secs;
  sim_result res;
  if (simulate(r, x, 1 / u2, &res, err) != DT_OK)
    return DT_ERR;
  double t2 = res.secs;
  for (int it = 1; it < CAL_RUNS && fabs(t2 - want) > CAL_TOL * want && t2 != t1; it++) {
    double u3 = u2 + (want - t2) * (u2 - u1) / (t2 - t1);
    if (!(u3 > 0))
      u3 = u2 * want / t2;
    u1 = u2;
    t1 = t2;
    u2 = u3;
    if (simulate(r, x, 1 / u2, &res, err) != DT_OK)
      return DT_ERR;
    t2 = res.secs;
  }
  *eff = 1 / u2;
  *sim = t2;
  return DT_OK;
}

/* ---- rows, up to --jobs at once ---- */

/* Runs row r in this process, its simulations in child processes: a calibration row from efficiency 1 to its
 * calibrated efficiency, a predicted row at r->eff (and at 1 with uncal). Fills r's results and resources. */
static int row_task(e2e_row *r, const char *platform_dir, int plain, int uncal, dt_error *err)
{
  char ppath[1024];
  snprintf(ppath, sizeof ppath, "%s/%s", platform_dir, r->spec->platform);
  row_ctx x;
  sim_result res;
  if (row_prepare(r, ppath, plain, &x, err) != DT_OK)
    return DT_ERR;
  int ok = 1;
  if (r->role == ROLE_CAL) {
    ok = simulate(r, &x, 1.0, &res, err) == DT_OK;
    if (ok) {
      r->uncal = res.secs;
      ok = calibrate(r, &x, &res, &r->eff, &r->sim, err) == DT_OK;
    }
  } else {
    if (uncal || r->eff == 1) {
      ok = simulate(r, &x, 1.0, &res, err) == DT_OK;
      r->uncal = r->sim = res.secs;
    }
    if (ok && r->eff != 1) {
      ok = simulate(r, &x, r->eff, &res, err) == DT_OK;
      r->sim = res.secs;
    }
  }
  row_free(&x);
  return ok ? DT_OK : DT_ERR;
}

/* A row's worker process and what it sends back through its pipe. */
typedef struct worker {
  pid_t pid;
  int fd;
  size_t row;
} worker;

typedef struct row_reply {
  int status;
  e2e_row row;
  dt_error err;
} row_reply;

static void progress(const e2e_row *r);

/* Starts row i's task in a worker process (w filled). */
static int spawn(e2e_row *rows, size_t i, const char *platform_dir, int plain, int uncal, worker *w, dt_error *err)
{
  int fds[2];
  if (pipe(fds) != 0)
    return dt_error_set(err, "", 0, 0, "cannot create a pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return dt_error_set(err, "", 0, 0, "cannot fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    row_reply *rep = dt_xmalloc(sizeof *rep);
    memset(rep, 0, sizeof *rep);
    dt_error_clear(&rep->err);
    rep->status = row_task(&rows[i], platform_dir, plain, uncal, &rep->err);
    rep->row = rows[i];
    const char *p = (const char *)rep;
    size_t len = sizeof *rep;
    while (len > 0) {
      ssize_t k = write(fds[1], p, len);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        _exit(1);
      p += k;
      len -= (size_t)k;
    }
    _exit(0);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->row = i;
  return DT_OK;
}

/* Reads worker w's reply into its row after the worker exited with status ws; closes its pipe. */
static int collect(e2e_row *rows, worker *w, int ws, dt_error *err)
{
  row_reply *rep = dt_xmalloc(sizeof *rep);
  char *p = (char *)rep;
  size_t len = sizeof *rep;
  while (len > 0) {
    ssize_t k = read(w->fd, p, len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    p += k;
    len -= (size_t)k;
  }
  close(w->fd);
  int rc;
  if (len > 0 || !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
    rc = dt_error_set(err, "", 0, 0, "the process of its row ended abnormally (line %zu)", rows[w->row].line);
  else if (rep->status != DT_OK) {
    *err = rep->err;
    rc = DT_ERR;
  } else {
    rows[w->row] = rep->row;
    rc = DT_OK;
  }
  free(rep);
  return rc;
}

/* Runs every row that is not skipped, up to jobs at once, each in a worker process: calibration rows first, a
 * predicted row once its calibration row is done (with its efficiency). A failing row stops the launches; the
 * rows running finish, and the first error is returned with its row's file line and name. */
static int run_rows(const char *csv, e2e_row *rows, size_t n, const char *platform_dir, int plain, int uncal,
                    long jobs, dt_error *err)
{
  enum { PENDING = 0, RUNNING, DONE };
  int *state = dt_xmalloc(sizeof *state * (n + 1));
  worker *ws = dt_xmalloc(sizeof *ws * (size_t)jobs);
  size_t nrun = 0;
  int rc = DT_OK;
  for (size_t i = 0; i < n; i++)
    state[i] = rows[i].role == ROLE_SKIP ? DONE : PENDING;
  for (;;) {
    /* launch: calibration rows first (file order: they unblock the others), then the predicted rows whose
     * calibration is done, most GPUs first (the longest first keeps the jobs busy to the end) */
    while (rc == DT_OK && nrun < (size_t)jobs) {
      size_t best = n;
      for (size_t i = 0; i < n; i++) {
        const e2e_row *r = &rows[i];
        if (state[i] != PENDING || (r->role != ROLE_CAL && state[r->cal] != DONE))
          continue;
        if (best == n || (r->role == ROLE_CAL && rows[best].role != ROLE_CAL) ||
            (r->role != ROLE_CAL && rows[best].role != ROLE_CAL && r->gpus > rows[best].gpus))
          best = i;
      }
      if (best == n)
        break;
      if (rows[best].role != ROLE_CAL)
        rows[best].eff = rows[rows[best].cal].eff;
      if (spawn(rows, best, platform_dir, plain, uncal, &ws[nrun], err) != DT_OK) {
        rc = DT_ERR;
        break;
      }
      state[best] = RUNNING;
      nrun++;
    }
    if (nrun == 0)
      break;
    int st = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
      ;
    size_t k = 0;
    while (k < nrun && ws[k].pid != pid)
      k++;
    if (pid < 0 || k == nrun) { /* no worker left to wait for: cannot happen while nrun > 0 */
      if (rc == DT_OK)
        rc = dt_error_set(err, "", 0, 0, "lost track of the row processes: %s", strerror(errno));
      break;
    }
    size_t i = ws[k].row;
    dt_error e;
    dt_error_clear(&e);
    if (collect(rows, &ws[k], st, &e) != DT_OK) {
      if (rc == DT_OK) {
        *err = e;
        dt_error_prefix(err, "%s:%zu (%s %s on %ld GPUs%s): ", csv, rows[i].line, rows[i].source, rows[i].model,
                        rows[i].gpus, rows[i].role == ROLE_CAL ? ", calibrating" : "");
      }
      rc = DT_ERR;
    } else
      progress(&rows[i]);
    state[i] = DONE;
    ws[k] = ws[--nrun];
  }
  free(ws);
  free(state);
  return rc;
}

/* ---- report ---- */

static double rel(double sim, double meas)
{
  return (sim - meas) / meas;
}

typedef struct source_result {
  const char *source;
  const e2e_row *cal; /* the row its efficiency was fitted on (maybe another source's) */
  double eff;
  double median; /* median |error| of its predicted rows, NAN without any */
  size_t npred;
  size_t nrun; /* rows simulated (not skipped by --max-gpus) */
  size_t nrows;
  int pass;
} source_result;

static void results(const e2e_row *rows, size_t n, double bound, source_result *res, size_t *nres)
{
  *nres = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < *nres && strcmp(res[k].source, rows[i].source) != 0)
      k++;
    if (k == *nres) {
      memset(&res[k], 0, sizeof res[k]);
      res[k].source = rows[i].source;
      res[k].median = NAN;
      res[k].eff = NAN;
      (*nres)++;
    }
  }
  double *errs = dt_xmalloc(sizeof *errs * (n + 1));
  for (size_t k = 0; k < *nres; k++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(rows[i].source, res[k].source) != 0)
        continue;
      if (rows[i].role == ROLE_PRED || rows[i].role == ROLE_XPRED)
        errs[m++] = fabs(rel(rows[i].sim, reference_s(&rows[i])));
      res[k].nrows++;
      if (rows[i].role != ROLE_SKIP) {
        res[k].eff = rows[i].eff;
        res[k].nrun++;
      }
    }
    res[k].npred = m;
    if (m > 0) {
      dt_sort_doubles(errs, m);
      res[k].median = dt_median_sorted(errs, m);
    }
    res[k].pass = m == 0 || res[k].median <= bound;
  }
  free(errs);
}

static void print_text(const e2e_row *rows, size_t n, const source_result *res, size_t nres, double bound, int plain)
{
  printf("end-to-end iterations (validation/references/e2e_iterations.csv), compute model: %s\n",
         plain ? "plain (gpu.peak x efficiency)" : "gpu.compute (docs/compute.md)");
  printf("%-17s %-11s %6s %-5s %10s %10s %8s %10s %8s %6s %8s %8s  %s\n", "source", "model", "gpus", "dtype",
         "measured", "eff=1", "error", "simulated", "error", "eff", "CPU s", "MiB", "role");
  for (size_t i = 0; i < n; i++) {
    const e2e_row *r = &rows[i];
    if (r->role == ROLE_SKIP) {
      printf("%-17s %-11s %6ld %-5s %9.2fs %10s %8s %10s %8s %6s %8s %8s  %s\n", r->source, r->model, r->gpus,
             r->dtype, reference_s(r), "-", "-", "-", "-", "-", "-", "-", role_names[r->role]);
      continue;
    }
    char un[16] = "-", une[16] = "-";
    if (isfinite(r->uncal)) {
      snprintf(un, sizeof un, "%.2fs", r->uncal);
      snprintf(une, sizeof une, "%+.1f%%", 100 * rel(r->uncal, reference_s(r)));
    }
    printf("%-17s %-11s %6ld %-5s %9.2fs %10s %8s %9.2fs %+7.1f%% %6.3f %8.1f %8.0f  %s\n", r->source, r->model,
           r->gpus, r->dtype, reference_s(r), un, une, r->sim, 100 * rel(r->sim, reference_s(r)), r->eff, r->cpu_s,
           (double)r->rss_kb / 1024, role_names[r->role]);
  }
  printf("  measured: the training step alone where the reference gives it (the row is scored against it, below);\n"
         "  eff=1: the uncalibrated run (--uncalibrated runs it for the predicted rows too); CPU s: summed over the\n"
         "  row's simulations (each a child process: generation and replay); MiB: their largest peak resident set\n");
  for (size_t i = 0; i < n; i++) {
    const e2e_row *r = &rows[i];
    if (!isfinite(r->train_only))
      continue;
    printf("  %s %s %ld GPUs: scored against the training step alone, %.3f s; the measured %.3f s per step "
           "includes more (docs/validation.md)",
           r->source, r->model, r->gpus, r->train_only, r->measured);
    if (r->role != ROLE_SKIP)
      printf(": simulated %.3f s is %+.1f %% off the training and %+.1f %% off the whole step", r->sim,
             100 * rel(r->sim, r->train_only), 100 * rel(r->sim, r->measured));
    printf("\n");
  }
  printf("\nper source: median |error| of the predicted rows (bound %.0f %%)\n", 100 * bound);
  for (size_t k = 0; k < nres; k++) {
    if (res[k].nrun == 0)
      printf("  %-17s not run: its %zu row%s %s above --max-gpus or not among --source\n", res[k].source,
             res[k].nrows, res[k].nrows == 1 ? "" : "s", res[k].nrows == 1 ? "is" : "are");
    else if (res[k].npred == 0)
      printf("  %-17s no predicted row (its one row calibrates)\n", res[k].source);
    else
      printf("  %-17s %5.1f %% over %zu row%s, efficiency %.3f: %s\n", res[k].source, 100 * res[k].median, res[k].npred,
             res[k].npred == 1 ? "" : "s", res[k].eff, res[k].pass ? "within the bound" : "OUTSIDE THE BOUND");
  }
}

static void json_num(yajl_gen g, const char *key, double v)
{
  yajl_gen_string(g, (const unsigned char *)key, strlen(key));
  if (!isfinite(v)) {
    yajl_gen_null(g);
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, "%.6g", v);
  yajl_gen_number(g, buf, strlen(buf));
}

static void json_str(yajl_gen g, const char *key, const char *v)
{
  yajl_gen_string(g, (const unsigned char *)key, strlen(key));
  dt_json_string(g, v);
}

static void json_int(yajl_gen g, const char *key, long long v)
{
  yajl_gen_string(g, (const unsigned char *)key, strlen(key));
  yajl_gen_integer(g, v);
}

/* The --json object, through yajl (common/dt_json.h) so that every string from the CSV is quoted, escaped and
 * valid UTF-8 whatever the file holds. */
static void print_json(const e2e_row *rows, size_t n, const source_result *res, size_t nres, double bound, int plain)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  yajl_gen_map_open(g);
  json_str(g, "compute_model", plain ? "plain" : "gpu.compute");
  json_num(g, "bound", bound);
  yajl_gen_string(g, (const unsigned char *)"rows", 4);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++) {
    const e2e_row *r = &rows[i];
    int skip = r->role == ROLE_SKIP;
    yajl_gen_map_open(g);
    json_str(g, "source", r->source);
    json_str(g, "model", r->model);
    json_int(g, "gpus", r->gpus);
    json_str(g, "dtype", r->dtype);
    json_num(g, "measured_s", r->measured);
    json_num(g, "train_only_s", r->train_only);
    json_num(g, "uncalibrated_s", r->uncal);
    json_num(g, "uncalibrated_error", rel(r->uncal, reference_s(r)));
    json_num(g, "simulated_s", skip ? NAN : r->sim);
    json_num(g, "rel_error", skip ? NAN : rel(r->sim, reference_s(r)));
    json_num(g, "iter_error", skip ? NAN : rel(r->sim, r->measured));
    json_num(g, "efficiency", skip ? NAN : r->eff);
    json_str(g, "role", role_names[r->role]);
    json_int(g, "simulations", r->nsim);
    json_num(g, "cpu_s", skip ? NAN : r->cpu_s);
    json_num(g, "peak_rss_mib", skip ? NAN : (double)r->rss_kb / 1024);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_string(g, (const unsigned char *)"sources", 7);
  yajl_gen_array_open(g);
  for (size_t k = 0; k < nres; k++) {
    yajl_gen_map_open(g);
    json_str(g, "source", res[k].source);
    json_num(g, "efficiency", res[k].eff);
    json_num(g, "median_error", res[k].median);
    json_int(g, "predicted", (long long)res[k].npred);
    yajl_gen_string(g, (const unsigned char *)"pass", 4);
    yajl_gen_bool(g, res[k].pass);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf(g, &buf, &len);
  fwrite(buf, 1, len, stdout);
  putchar('\n');
  yajl_gen_free(g);
}

/* ---- command ---- */

/* One line on stderr when row r is done (not with --json): its result and what it cost. */
static void progress(const e2e_row *r)
{
  fprintf(stderr, "dtsim: %s %s %ld GPUs: %.3f s at efficiency %.3f (%s %.3f s; %d run%s, %.1f CPU s, %.0f MiB "
          "peak)\n",
          r->source, r->model, r->gpus, r->sim, r->eff, isfinite(r->train_only) ? "training alone" : "measured",
          reference_s(r), r->nsim, r->nsim == 1 ? "" : "s", r->cpu_s,
          (double)r->rss_kb / 1024);
}

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim validate --e2e: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help validate' for usage\n");
  return EXIT_USAGE;
}

/* Index of the calibration row for source rows: the fewest GPUs, the first in file order among equals. */
static size_t smallest(const e2e_row *rows, size_t n, const char *source, int *found)
{
  size_t best = 0;
  *found = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].source, source) == 0 && rows[i].role != ROLE_SKIP &&
        (!*found || rows[i].gpus < rows[best].gpus)) {
      best = i;
      *found = 1;
    }
  return best;
}

int dt_cmd_validate_e2e(int argc, char **argv)
{
  enum { O_REFS = 1000, O_PLATFORMS, O_JSON, O_MAX, O_BOUND, O_PLAIN, O_E2E, O_UNCAL, O_JOBS, O_SOURCE };
  static const struct option longopts[] = {{"references", required_argument, NULL, O_REFS},
                                           {"platforms", required_argument, NULL, O_PLATFORMS},
                                           {"json", no_argument, NULL, O_JSON},
                                           {"max-gpus", required_argument, NULL, O_MAX},
                                           {"bound", required_argument, NULL, O_BOUND},
                                           {"plain", no_argument, NULL, O_PLAIN},
                                           {"e2e", no_argument, NULL, O_E2E},
                                           {"uncalibrated", no_argument, NULL, O_UNCAL},
                                           {"jobs", required_argument, NULL, O_JOBS},
                                           {"source", required_argument, NULL, O_SOURCE},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *refs = "validation/references", *platform_dir = "validation/platforms";
  int json = 0, plain = 0, uncalibrated = 0, opt;
  long max_gpus = 0, jobs = 1;
  const char *sel[NSOURCES];
  size_t nsel = 0;
  double bound = DEFAULT_BOUND;
  char *end;
  if (dt_cli_check_repeats("validate", argc, argv, ":h", longopts, "source") != 0)
    return 2;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (opt) {
    case O_REFS:
      refs = optarg;
      break;
    case O_PLATFORMS:
      platform_dir = optarg;
      break;
    case O_JSON:
      json = 1;
      break;
    case O_PLAIN:
      plain = 1;
      break;
    case O_E2E:
      break;
    case O_UNCAL:
      uncalibrated = 1;
      break;
    case O_SOURCE:
    {
      size_t k = 0;
      while (k < NSOURCES && strcmp(sources[k].source, optarg) != 0)
        k++;
      if (k == NSOURCES)
        return usage("--source expects one of nemo-24.07, bigscience-tr11, mlperf-v3.1-eos, megascale-nsdi24, "
                     "found '%s'", optarg);
      size_t j = 0;
      while (j < nsel && sel[j] != sources[k].source)
        j++;
      if (j == nsel)
        sel[nsel++] = sources[k].source;
      break;
    }
    case O_JOBS:
    {
      long long v;
      if (dt_parse_whole(optarg, 1, 64, &v) != 0)
        return usage("--jobs expects a number of rows at once from 1 to 64, found '%s'", optarg);
      jobs = (long)v;
      break;
    }
    case O_MAX:
    {
      long long v;
      if (dt_parse_whole(optarg, 1, 100000000, &v) != 0)
        return usage("--max-gpus expects a GPU count from 1 to 100000000, found '%s'", optarg);
      max_gpus = (long)v;
      break;
    }
    case O_BOUND:
      bound = strtod(optarg, &end);
      if (*end || !(bound > 0))
        return usage("--bound expects a fraction above zero such as 0.10, found '%s'", optarg);
      break;
    case 'h':
      fputs(dt_cmd_e2e_usage, stdout);
      return EXIT_OK;
    case ':':
      return usage("option '%s' requires an argument", argv[optind - 1]);
    default:
      return dt_cli_bad_option("validate", opt, argv, longopts); /* the nearest option, an ambiguous abbreviation */
    }
  }
  if (optind < argc)
    return usage("unexpected argument '%s'", argv[optind]);
  if (dt_cmd_validate_dirs("validate --e2e", refs, strcmp(refs, "validation/references") != 0, platform_dir,
                           strcmp(platform_dir, "validation/platforms") != 0) != 0) /* docs/cli.md */
    return EXIT_USAGE;

  dt_error err;
  dt_error_clear(&err);
  char path[1024];
  snprintf(path, sizeof path, "%s/e2e_iterations.csv", refs);
  e2e_row *rows = NULL;
  size_t n = 0;
  int rc = EXIT_USAGE;
  if (read_rows(path, &rows, &n, &err) != DT_OK)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    rows[i].role = max_gpus > 0 && rows[i].gpus > max_gpus ? ROLE_SKIP : ROLE_PRED;
    rows[i].uncal = NAN;
  }
  /* roles: sources with two rows or more calibrate on their smallest row; a single-row source takes the
   * efficiency of a calibrating source with the same GPU and dtype when there is one (in file order), else its
   * row calibrates it */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      int found;
      size_t c = smallest(rows, n, rows[i].source, &found);
      if (!found || c != i || rows[i].role == ROLE_CAL)
        continue;
      size_t count = 0;
      for (size_t j = 0; j < n; j++)
        count += strcmp(rows[j].source, rows[i].source) == 0 && rows[j].role != ROLE_SKIP;
      if (pass == 0 && count < 2)
        continue;
      rows[i].role = ROLE_CAL;
      if (count < 2)
        for (size_t j = 0; j < n; j++)
          if (j != i && rows[j].role == ROLE_CAL && strcmp(rows[j].gpu, rows[i].gpu) == 0 &&
              strcmp(rows[j].dtype, rows[i].dtype) == 0 && strcmp(rows[j].source, rows[i].source) != 0) {
            rows[i].role = ROLE_XPRED;
            rows[i].cal = j;
          }
      for (size_t j = 0; j < n; j++)
        if (strcmp(rows[j].source, rows[i].source) == 0 && rows[j].role == ROLE_PRED)
          rows[j].cal = i;
    }
  /* --source: the other sources' rows are skipped, but for the calibration rows the chosen ones need */
  if (nsel > 0) {
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < nsel; k++)
        if (strcmp(rows[i].source, sel[k]) == 0)
          rows[i].selected = 1;
    for (size_t i = 0; i < n; i++) {
      if (rows[i].selected || rows[i].role == ROLE_SKIP)
        continue;
      int needed = 0;
      for (size_t j = 0; j < n; j++)
        needed |= rows[j].selected && rows[j].role != ROLE_SKIP && rows[j].role != ROLE_CAL && rows[j].cal == i;
      if (!(needed && rows[i].role == ROLE_CAL))
        rows[i].role = ROLE_SKIP;
    }
  }
  if (run_rows(path, rows, n, platform_dir, plain, uncalibrated, jobs, &err) != DT_OK)
    goto fail;
  source_result res[NSOURCES + 8];
  size_t nres = 0;
  results(rows, n, bound, res, &nres);
  if (json)
    print_json(rows, n, res, nres, bound, plain);
  else
    print_text(rows, n, res, nres, bound, plain);
  rc = EXIT_OK;
  goto cleanup;
fail:;
  char buf[2048];
  fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
cleanup:
  free(rows);
  return rc;
}
