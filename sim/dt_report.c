/* Text and JSON reports of one replay. JSON is generated with yajl so that quoting and escaping are a
 * well-kept library's job; numbers are formatted here so that output is byte-identical across runs. */
#include "dt_report.h"
#include "dt_explain.h"
#include "dt_faultcmp.h"
#include "dt_samples.h"

#include "dt_confidence.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../replay/dt_energy.h"
#include "../replay/dt_linkload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../common/dt_json.h"

#include <yajl/yajl_gen.h>

size_t dt_report_note_count(const dt_report_input *in)
{
  return in->trace->nmeta + in->trace->nnotes + (in->trace->captured_step_s > 0) + in->stats->nnotes;
}

/* 1 when the run stopped before every op completed: a deadlock, or a link failure that NCCL would abort on */
static int run_incomplete(const dt_stats *s)
{
  return s->aborted || s->ndeadlock > 0;
}

/* 1 when the run has neither a makespan nor an iteration to give a validated band for: it stopped before every op
 * completed and without completing an iteration (its makespan_s is only the end of the last op that completed) */
static int no_run_time(const dt_stats *s)
{
  return run_incomplete(s) && s->niterations == 0;
}

/* mean of the simulated iterations, s */
static double mean_iteration(const dt_stats *s)
{
  double sum = 0;
  for (size_t i = 0; i < s->niterations; i++)
    sum += s->iterations_s[i];
  return s->niterations ? sum / (double)s->niterations : 0;
}

const char *dt_report_note(const dt_report_input *in, size_t i, char *buf, size_t size)
{
  const dt_trace *t = in->trace;
  if (i < t->nmeta) { /* provenance: `meta note=` lines are notes an importer wrote with the file */
    if (strcmp(t->meta_keys[i], "note") == 0)
      snprintf(buf, size, "%s", t->meta_values[i]);
    else
      snprintf(buf, size, "meta %s=%s", t->meta_keys[i], t->meta_values[i]);
    return buf;
  }
  i -= t->nmeta;
  if (i < t->nnotes)
    return t->notes[i];
  i -= t->nnotes;
  if (t->captured_step_s > 0) {
    if (i == 0) {
      double sim = mean_iteration(in->stats);
      snprintf(buf, size, "captured step time %.9g s, simulated iteration %.9g s (%+.1f %%)", t->captured_step_s, sim,
               100.0 * (sim - t->captured_step_s) / t->captured_step_s);
      return buf;
    }
    i--;
  }
  return in->stats->notes[i];
}

static int reported_kind(dt_op_kind k)
{
  return dt_op_is_collective(k) || k == DT_OP_SEND;
}

/* ---- JSON ---- */

/* v with two decimals when that fits width characters, else in engineering notation (4 digits), so that a
 * huge value never pushes the columns after it. */
static const char *fit_fixed(double v, int width, char *buf, size_t size)
{
  if (snprintf(buf, size, "%.2f", v) > width)
    snprintf(buf, size, "%.4g", v);
  return buf;
}

/* A count in at most width characters (engineering notation above). */
static const char *fit_count(uint64_t n, int width, char *buf, size_t size)
{
  if (snprintf(buf, size, "%llu", (unsigned long long)n) > width)
    snprintf(buf, size, "%.3e", (double)n);
  return buf;
}

static void json_str(yajl_gen g, const char *s)
{
  dt_json_string(g, s); /* valid UTF-8 whatever the capture holds */
}

static void json_double(yajl_gen g, double v)
{
  char buf[64];
  if (!isfinite(v))
    v = 0;
  if (v == 0)
    v = 0; /* no negative zero */
  snprintf(buf, sizeof buf, "%.17g", v);
  yajl_gen_number(g, buf, strlen(buf));
}

static void json_uint(yajl_gen g, uint64_t v)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  yajl_gen_number(g, buf, strlen(buf));
}

static void json_key_double(yajl_gen g, const char *k, double v)
{
  json_str(g, k);
  json_double(g, v);
}

/* {"DP": bytes, ...} for the dimensions with bytes ("none": unlabelled groups) */
static void json_dims(yajl_gen g, const double *by_dim)
{
  yajl_gen_map_open(g);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (by_dim[d] > 0)
      json_key_double(g, d == DT_DIM_NONE ? "none" : dt_dim_name((dt_dim)d), by_dim[d]);
  yajl_gen_map_close(g);
}

static void json_kinds(yajl_gen g, const double *by_kind)
{
  yajl_gen_map_open(g);
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (by_kind[k] > 0)
      json_key_double(g, dt_op_kind_name((dt_op_kind)k), by_kind[k]);
  yajl_gen_map_close(g);
}

static const char *group_label(const dt_trace *t, int32_t g)
{
  return g >= 0 && (size_t)g < t->ngroups ? t->groups[g].name : "(send/recv)";
}

static void json_links(yajl_gen g, const dt_report_input *in)
{
  const dt_linkstats *L = in->stats->links;
  double ms = dt_stats_link_span(in->stats); /* the makespan, or the time a run that stopped reached */
  json_str(g, "links");
  yajl_gen_map_open(g);
  json_str(g, "transfers");
  json_uint(g, L->transfers);
  json_str(g, "classes");
  yajl_gen_array_open(g);
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *C = &L->classes[c];
    if (C->links == 0)
      continue;
    yajl_gen_map_open(g);
    json_str(g, "class");
    json_str(g, dt_link_class_name((dt_link_class)c));
    json_str(g, "links");
    json_uint(g, C->links);
    json_str(g, "used");
    json_uint(g, C->used);
    json_key_double(g, "bytes", C->bytes);
    json_key_double(g, "busy_mean", C->used && ms > 0 ? C->busy_sum_s / (double)C->used / ms : 0);
    json_key_double(g, "busy_max", ms > 0 ? C->busy_max_s / ms : 0);
    json_str(g, "peak_flows");
    json_uint(g, C->peak_flows);
    json_str(g, "by_dim");
    json_dims(g, C->by_dim);
    json_str(g, "by_kind");
    json_kinds(g, C->by_kind);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  json_str(g, "top");
  yajl_gen_array_open(g);
  for (size_t k = 0; k < L->nlinks && k < in->top_links; k++) {
    const dt_link_load *l = &L->links[k];
    yajl_gen_map_open(g);
    json_str(g, "name");
    json_str(g, l->name);
    json_str(g, "class");
    json_str(g, dt_link_class_name(l->cls));
    json_key_double(g, "bandwidth_Bps", l->bandwidth);
    json_key_double(g, "bytes", l->bytes);
    json_key_double(g, "busy_s", l->busy_s);
    json_key_double(g, "busy", ms > 0 ? l->busy_s / ms : 0);
    json_str(g, "peak_flows");
    json_uint(g, l->peak_flows);
    json_str(g, "transfers");
    json_uint(g, l->transfers);
    json_str(g, "by_dim");
    json_dims(g, l->by_dim);
    json_str(g, "by_kind");
    json_kinds(g, l->by_kind);
    json_str(g, "groups");
    yajl_gen_array_open(g);
    for (size_t q = 0; q < l->ngroups && q < 8; q++) {
      yajl_gen_map_open(g);
      json_str(g, "group");
      json_str(g, group_label(in->trace, l->groups[q].group));
      json_key_double(g, "bytes", l->groups[q].bytes);
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
}

/* ---- energy and cost (replay/dt_energy.h) ---- */

static void json_bool(yajl_gen g, const char *k, int v)
{
  json_str(g, k);
  yajl_gen_bool(g, v);
}

static void json_key_uint(yajl_gen g, const char *k, uint64_t v)
{
  json_str(g, k);
  json_uint(g, v);
}

/* 1 when the run stopped before an iteration completed: its energy and cost are those of the partial run (its
 * totals up to the last op that completed), not of an iteration */
static int partial_run(const dt_stats *s)
{
  return run_incomplete(s) && s->niterations == 0;
}

static void json_energy(yajl_gen g, const dt_report_input *in)
{
  dt_energy e;
  dt_energy_compute(in->platform, in->trace, in->stats, &e);
  int partial = partial_run(in->stats);
  if (e.present) {
    json_str(g, "energy");
    yajl_gen_map_open(g);
    json_key_double(g, "per_iteration_J", e.iteration_J);
    if (partial)
      json_bool(g, "partial_run", 1);
    if (e.tokens > 0 && !partial) {
      json_key_double(g, "per_token_J", e.token_J);
      json_key_double(g, "tokens_per_iteration", e.tokens);
    }
    json_key_double(g, "mean_power_W", e.mean_power_W);
    json_key_double(g, "run_J", e.run_J);
    json_key_double(g, "gpu_compute_J", e.gpu_compute_J);
    if (e.gpu_comm)
      json_key_double(g, "gpu_comm_J", e.gpu_comm_J);
    json_key_double(g, "gpu_idle_J", e.gpu_idle_J);
    if (e.nic_figures)
      json_key_double(g, "nic_J", e.nic_static_J + e.nic_load_J);
    if (e.switch_figures)
      json_key_double(g, "switch_J", e.switch_static_J + e.switch_load_J);
    json_key_double(g, "gpu_busy_s", e.gpu_busy_s);
    json_key_double(g, "gpu_comm_s", e.gpu_comm_s);
    json_key_uint(g, "gpus", (uint64_t)e.gpus);
    json_key_uint(g, "gpus_without_rank", (uint64_t)e.gpus_without_rank);
    json_key_uint(g, "nics", (uint64_t)e.nics);
    json_key_uint(g, "switches", (uint64_t)e.switches);
    json_bool(g, "load_terms", e.load_terms);
    json_str(g, "terms");
    yajl_gen_map_open(g);
    if (e.nic_figures) {
      json_key_double(g, "nic_static_J", e.nic_static_J);
      json_key_double(g, "nic_load_J", e.nic_load_J);
    }
    if (e.switch_figures) {
      json_key_double(g, "switch_static_J", e.switch_static_J);
      json_key_double(g, "switch_load_J", e.switch_load_J);
    }
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
  }
  dt_cost c;
  dt_energy_cost(in->platform, in->trace, in->stats, &e, &c);
  if (c.present) {
    json_str(g, "cost");
    yajl_gen_map_open(g);
    json_str(g, "currency");
    json_str(g, c.currency);
    json_key_double(g, "per_iteration", c.iteration);
    if (partial)
      json_bool(g, "partial_run", 1);
    if (c.million_tokens > 0 && !partial)
      json_key_double(g, "per_million_tokens", c.million_tokens);
    json_key_double(g, "gpu", c.gpu);
    json_key_double(g, "nic", c.nic);
    json_key_double(g, "switch", c.sw);
    json_key_double(g, "energy", c.energy);
    yajl_gen_map_close(g);
  }
}

static double share(double part, double total)
{
  return total > 0 ? 100.0 * part / total : 0;
}

/* One line each (docs/report.md): the energy of a mean iteration and its split, the cost and its split. */
static void text_energy(FILE *f, const dt_report_input *in)
{
  dt_energy e;
  char b1[64];
  dt_energy_compute(in->platform, in->trace, in->stats, &e);
  int partial = partial_run(in->stats);
  char what[96] = "per iteration";
  if (partial) { /* no iteration completed: the totals of the run up to its last completed op */
    char at[32];
    snprintf(what, sizeof what, "for the partial run (to %s; no iteration completed)",
             dt_format_time(in->stats->makespan_s, at, sizeof at));
  }
  if (e.present) {
    fprintf(f, "energy             %s %s, mean %.4g kW: GPU compute %.0f %%",
            dt_format_energy(e.iteration_J, b1, sizeof b1), what, e.mean_power_W / 1e3,
            share(e.gpu_compute_J, e.iteration_J));
    if (e.gpu_comm)
      fprintf(f, ", GPU comm %.0f %%", share(e.gpu_comm_J, e.iteration_J));
    fprintf(f, ", GPU idle %.0f %%", share(e.gpu_idle_J, e.iteration_J));
    if (e.nic_figures)
      fprintf(f, ", %ld NIC%s %.0f %%", e.nics, e.nics == 1 ? "" : "s",
              share(e.nic_static_J + e.nic_load_J, e.iteration_J));
    if (e.switch_figures)
      fprintf(f, ", %ld switch%s %.0f %%", e.switches, e.switches == 1 ? "" : "es",
              share(e.switch_static_J + e.switch_load_J, e.iteration_J));
    if (e.tokens > 0 && !partial)
      fprintf(f, "; %.4g J/token", e.token_J);
    if (!e.load_terms)
      fprintf(f, " (no load terms: --no-links)");
    fprintf(f, "\n");
  }
  dt_cost c;
  dt_energy_cost(in->platform, in->trace, in->stats, &e, &c);
  if (c.present) {
    fprintf(f, "cost               %.4g %s %s (GPUs %.3g, NICs %.3g, switches %.3g, energy %.3g)",
            c.iteration, c.currency, what, c.gpu, c.nic, c.sw, c.energy);
    if (c.million_tokens > 0 && !partial)
      fprintf(f, "; %.4g %s per million tokens", c.million_tokens, c.currency);
    fprintf(f, "\n");
  }
}

/* ---- the bound: the largest part of the critical path ---- */

typedef struct bound_item {
  int what;       /* 0 compute, 1 host, 2 wait, 3 communication */
  dt_dim dim;
  dt_op_kind kind;
  double s;
} bound_item;

static bound_item the_bound(const dt_critical *c)
{
  bound_item b = {0, DT_DIM_NONE, DT_OP_COMPUTE, c->compute_s};
  if (c->host_s > b.s)
    b = (bound_item){1, DT_DIM_NONE, DT_OP_DELAY, c->host_s};
  if (c->wait_s > b.s)
    b = (bound_item){2, DT_DIM_NONE, DT_OP_MARK, c->wait_s};
  for (int d = 0; d < DT_DIM_COUNT; d++)
    for (int k = 0; k < DT_OP_COUNT; k++)
      if (c->comm_s[d][k] > b.s)
        b = (bound_item){3, (dt_dim)d, (dt_op_kind)k, c->comm_s[d][k]};
  return b;
}

/* The link that carried the most of dimension dim's bytes relative to its bandwidth (its bytes of dim / bandwidth:
 * the time it needed at full rate), or NULL. */
static const dt_link_load *bottleneck_link(const dt_linkstats *L, dt_dim dim)
{
  const dt_link_load *best = NULL;
  double bt = 0;
  for (size_t k = 0; L && k < L->nlinks; k++) {
    const dt_link_load *l = &L->links[k];
    double t = l->bandwidth > 0 ? l->by_dim[dim] / l->bandwidth : 0;
    if (t > bt) {
      bt = t;
      best = l;
    }
  }
  return best;
}

static const char *kind_phrase(dt_op_kind k)
{
  return k == DT_OP_SEND ? "send/recv" : dt_op_kind_name(k);
}

/* One sentence naming what bounds the iteration (docs/report.md). */
static void bound_sentence(const dt_report_input *in, char *buf, size_t size)
{
  const dt_stats *s = in->stats;
  const dt_critical *c = s->critical;
  if ((!c || !(s->makespan_s > 0)) && run_incomplete(s)) {
    char at[32];
    snprintf(buf, size, "no op completed before the run stopped (%s at %s)", s->aborted ? "aborted" : "deadlock",
             dt_format_time(s->stopped_s, at, sizeof at));
    return;
  }
  if (!c || !(s->makespan_s > 0)) {
    snprintf(buf, size, "nothing ran: the makespan is 0");
    return;
  }
  bound_item b = the_bound(c);
  double pct = 100.0 * b.s / s->makespan_s;
  if (b.what == 0)
    snprintf(buf, size, "compute: %.1f %% of the iteration is compute on the critical path", pct);
  else if (b.what == 1)
    snprintf(buf, size, "host/launch time: %.1f %% of the iteration is delay ops on the critical path", pct);
  else if (b.what == 2)
    snprintf(buf, size, "waiting: %.1f %% of the iteration the critical path waits with no op running", pct);
  else {
    char dim[16] = "";
    if (b.dim != DT_DIM_NONE)
      snprintf(dim, sizeof dim, "%s ", dt_dim_name(b.dim));
    const dt_link_load *l = bottleneck_link(s->links, b.dim);
    if (l)
      snprintf(buf, size, "comm on the path %s%s over the %s tier: %.1f %% of the iteration (busiest %s, busy %.0f %%)",
               dim, kind_phrase(b.kind), dt_link_class_name(l->cls), pct, l->name,
               100.0 * l->busy_s / dt_stats_link_span(s));
    else
      snprintf(buf, size, "comm on the path %s%s: %.1f %% of the iteration", dim, kind_phrase(b.kind), pct);
  }
  size_t len = strlen(buf);
  if (run_incomplete(s) && len < size) /* the critical path of what completed, not of a whole iteration */
    snprintf(buf + len, size - len, " (of the ops that completed: the run stopped, %s)",
             s->aborted ? "aborted" : "deadlock");
}

/* When host/launch time bounds the iteration, one line saying why (docs/report.md): a capture replayed with its host
 * launch timeline (Kineto) is bound by the host thread that issued the kernels; another trace by its delay ops. NULL
 * for other bounds. Static text. */
static const char *bound_why(const dt_report_input *in)
{
  const dt_critical *c = in->stats->critical;
  if (!c || !(in->stats->makespan_s > 0) || the_bound(c).what != 1)
    return NULL;
  const dt_trace *t = in->trace;
  for (size_t i = 0; t && i < t->nnotes; i++)
    if (strncmp(t->notes[i], "kineto: host launch timeline", 28) == 0)
      return "the capture's host (CPU) thread issues work slower than the GPUs run it: the GPUs wait for each kernel "
             "launch, so faster GPUs or links would not help (--gaps drop: the GPU streams alone)";
  return "the trace's delay ops (host or launch time between GPU work) are on the path: the GPUs wait for them, so "
         "faster GPUs or links would not shorten this iteration";
}

static const char *dim_key(dt_dim d)
{
  return d == DT_DIM_NONE ? "none" : dt_dim_name(d);
}

static void json_bound(yajl_gen g, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  const dt_critical *c = s->critical;
  char sentence[512];
  bound_sentence(in, sentence, sizeof sentence);
  json_str(g, "bound");
  yajl_gen_map_open(g);
  json_str(g, "sentence");
  json_str(g, sentence);
  bound_item b = c ? the_bound(c) : (bound_item){0, DT_DIM_NONE, DT_OP_COMPUTE, 0};
  static const char *const what[4] = {"compute", "host", "wait", "comm"};
  json_str(g, "what");
  json_str(g, what[b.what]);
  const char *why = bound_why(in);
  if (why) {
    json_str(g, "why");
    json_str(g, why);
  }
  if (b.what == 3) {
    json_str(g, "dim");
    json_str(g, dim_key(b.dim));
    json_str(g, "kind");
    json_str(g, dt_op_kind_name(b.kind));
    const dt_link_load *l = bottleneck_link(s->links, b.dim);
    if (l) {
      json_str(g, "link_class");
      json_str(g, dt_link_class_name(l->cls));
      json_str(g, "link");
      json_str(g, l->name);
      double span = dt_stats_link_span(s);
      json_key_double(g, "link_busy", span > 0 ? l->busy_s / span : 0);
    }
  }
  json_key_double(g, "fraction", s->makespan_s > 0 ? b.s / s->makespan_s : 0);
  json_key_double(g, "compute_s", c ? c->compute_s : 0);
  json_key_double(g, "host_s", c ? c->host_s : 0);
  json_key_double(g, "wait_s", c ? c->wait_s : 0);
  json_str(g, "comm_s");
  yajl_gen_map_open(g);
  for (int d = 0; c && d < DT_DIM_COUNT; d++) {
    double sum = 0;
    for (int k = 0; k < DT_OP_COUNT; k++)
      sum += c->comm_s[d][k];
    if (!(sum > 0))
      continue;
    json_str(g, dim_key((dt_dim)d));
    yajl_gen_map_open(g);
    for (int k = 0; k < DT_OP_COUNT; k++)
      if (c->comm_s[d][k] > 0)
        json_key_double(g, dt_op_kind_name((dt_op_kind)k), c->comm_s[d][k]);
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

/* "variability": what the run varied (docs/report.md) */
static void json_variability(yajl_gen g, const dt_stats *s)
{
  json_str(g, "variability");
  yajl_gen_map_open(g);
  json_str(g, "seed");
  json_uint(g, s->seed);
  json_str(g, "jitter");
  yajl_gen_map_open(g);
  json_str(g, "distribution");
  json_str(g, "lognormal");
  json_key_double(g, "sigma", s->jitter_sigma);
  yajl_gen_map_close(g);
  json_str(g, "slow_ranks");
  json_uint(g, (uint64_t)s->nslow);
  json_str(g, "late_ranks");
  json_uint(g, (uint64_t)s->nlate);
  yajl_gen_map_close(g);
}

static void json_stat(yajl_gen g, const char *key, const dt_sample_stat *st)
{
  json_str(g, key);
  yajl_gen_map_open(g);
  json_key_double(g, "mean", st->mean);
  json_key_double(g, "p5", st->p5);
  json_key_double(g, "p95", st->p95);
  yajl_gen_map_close(g);
}

/* "samples": --samples' summaries over seeds (docs/report.md) */
static void json_samples(yajl_gen g, const dt_samples *sm)
{
  json_str(g, "samples");
  yajl_gen_map_open(g);
  json_str(g, "n");
  json_uint(g, sm->n);
  json_str(g, "seeds");
  yajl_gen_array_open(g);
  json_uint(g, sm->seed0);
  json_uint(g, sm->seed0 + (sm->n ? sm->n - 1 : 0));
  yajl_gen_array_close(g);
  json_stat(g, "iteration_s", &sm->iteration_s);
  json_stat(g, "makespan_s", &sm->makespan_s);
  json_str(g, "critical_path");
  yajl_gen_map_open(g);
  json_stat(g, "compute_s", &sm->compute_s);
  json_stat(g, "host_s", &sm->host_s);
  json_stat(g, "wait_s", &sm->wait_s);
  json_str(g, "comm_s");
  yajl_gen_map_open(g);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (sm->has_dim[d])
      json_stat(g, dim_key((dt_dim)d), &sm->comm_s[d]);
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
  json_str(g, "iteration_samples_s");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < sm->n; i++)
    if (sm->points[i].stopped != DT_SAMPLE_OK)
      yajl_gen_null(g); /* this seed's run stopped early */
    else
      json_double(g, sm->points[i].iteration_s);
  yajl_gen_array_close(g);
  if (sm->ncompleted < sm->n) {
    json_key_uint(g, "completed", sm->ncompleted);
    json_key_uint(g, "aborted", sm->naborted);
    json_key_uint(g, "deadlocked", sm->ndeadlocked);
  }
  yajl_gen_map_close(g);
}

static void json_critical(yajl_gen g, const dt_report_input *in)
{
  const dt_critical *c = in->stats->critical;
  json_str(g, "critical_path");
  yajl_gen_map_open(g);
  json_str(g, "ops");
  json_uint(g, c->nops);
  json_str(g, "ranks");
  json_uint(g, c->nranks_on_path);
  json_str(g, "segments");
  yajl_gen_array_open(g);
  for (size_t k = 0; k < c->nsegs; k++) {
    const dt_cp_segment *x = &c->segs[k];
    yajl_gen_map_open(g);
    json_str(g, "rank");
    json_uint(g, (uint64_t)x->rank);
    json_str(g, "stream");
    json_uint(g, (uint64_t)x->stream);
    json_str(g, "op");
    json_uint(g, x->op);
    json_str(g, "kind");
    json_str(g, dt_op_kind_name(x->kind));
    if (x->group >= 0) {
      json_str(g, "group");
      json_str(g, in->trace->groups[x->group].name);
    }
    json_str(g, "dim");
    json_str(g, dim_key(x->dim));
    json_key_double(g, "start_s", x->start_s);
    json_key_double(g, "end_s", x->end_s);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
}

/* per dimension: mean and max over ranks of exposed_by_dim_s, and the rank of the max */
/* A rank of the trace that has no op (a native trace's rank without a section, or an empty one): it is listed per
 * rank, but its zeros would only dilute a mean over the ranks (docs/trace-format.md). */
static int rank_idle(const dt_trace *t, int32_t r)
{
  return t && r < t->nranks && dt_trace_rank_op_count(t, r) == 0;
}

static int32_t idle_ranks(const dt_trace *t)
{
  int32_t n = 0;
  for (int32_t r = 0; t && r < t->nranks; r++)
    n += rank_idle(t, r);
  return n;
}

/* Mean and max over the ranks that have ops (rank_idle). */
static void exposed_dim_summary(const dt_trace *t, const dt_stats *s, dt_dim d, double *mean, double *max,
                                int32_t *argmax)
{
  double sum = 0;
  int32_t n = 0;
  *max = 0;
  *argmax = -1;
  for (int32_t r = 0; r < s->nranks; r++) {
    if (rank_idle(t, r))
      continue;
    n++;
    double e = s->per_rank[r].exposed_by_dim_s[d];
    sum += e;
    if (*argmax < 0 || e > *max) {
      *max = e;
      *argmax = r;
    }
  }
  *mean = n > 0 ? sum / (double)n : 0;
}

/* dimensions with communication: those with a histogram entry */
static int dim_has_comm(const dt_stats *s, dt_dim d)
{
  for (int b = 0; b < DT_HIST_BUCKETS; b++)
    if (s->hist_dim[d].count[b])
      return 1;
  return 0;
}

static void json_exposed(yajl_gen g, const dt_trace *t, const dt_stats *s)
{
  json_str(g, "exposed_by_dim");
  yajl_gen_map_open(g);
  for (int d = 0; d < DT_DIM_COUNT; d++) {
    if (!dim_has_comm(s, (dt_dim)d))
      continue;
    double mean, max;
    int32_t arg;
    exposed_dim_summary(t, s, (dt_dim)d, &mean, &max, &arg);
    json_str(g, dim_key((dt_dim)d));
    yajl_gen_map_open(g);
    json_key_double(g, "mean_s", mean);
    json_key_double(g, "max_s", max);
    json_str(g, "max_rank");
    json_uint(g, (uint64_t)(arg < 0 ? 0 : arg));
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
}

/* [lo, hi) of a histogram bucket in bytes (bucket 0: [0, 1)) */
static void bucket_range(int b, double *lo, double *hi)
{
  *lo = b == 0 ? 0 : ldexp(1, b - 1);
  *hi = ldexp(1, b);
}

static void json_hist1(yajl_gen g, const dt_hist *h)
{
  yajl_gen_array_open(g);
  for (int b = 0; b < DT_HIST_BUCKETS; b++) {
    if (!h->count[b])
      continue;
    double lo, hi;
    bucket_range(b, &lo, &hi);
    yajl_gen_map_open(g);
    json_key_double(g, "min_bytes", lo);
    json_key_double(g, "below_bytes", hi);
    json_str(g, "count");
    json_uint(g, h->count[b]);
    json_key_double(g, "bytes", h->bytes[b]);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

static int hist_empty(const dt_hist *h)
{
  for (int b = 0; b < DT_HIST_BUCKETS; b++)
    if (h->count[b])
      return 0;
  return 1;
}

static void json_histogram(yajl_gen g, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  json_str(g, "histogram");
  yajl_gen_map_open(g);
  json_str(g, "by_kind");
  yajl_gen_map_open(g);
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (!hist_empty(&s->hist_kind[k])) {
      json_str(g, dt_op_kind_name((dt_op_kind)k));
      json_hist1(g, &s->hist_kind[k]);
    }
  yajl_gen_map_close(g);
  json_str(g, "by_dim");
  yajl_gen_map_open(g);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (!hist_empty(&s->hist_dim[d])) {
      json_str(g, dim_key((dt_dim)d));
      json_hist1(g, &s->hist_dim[d]);
    }
  yajl_gen_map_close(g);
  json_str(g, "by_group");
  yajl_gen_map_open(g);
  for (size_t q = 0; q < s->nhist_groups; q++)
    if (!hist_empty(&s->hist_group[q])) {
      json_str(g, q < in->trace->ngroups ? in->trace->groups[q].name : "(send/recv)");
      json_hist1(g, &s->hist_group[q]);
    }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

/* ---- validated error (dt_confidence.h, docs/report.md) ---- */

/* The model's parameter count from the generator's `meta params=`, or -1 when the trace has none. */
static double trace_params(const dt_trace *t)
{
  for (size_t i = 0; i < t->nmeta; i++)
    if (strcmp(t->meta_keys[i], "params") == 0) {
      char *end;
      double v = strtod(t->meta_values[i], &end);
      if (end != t->meta_values[i] && *end == '\0' && v >= 0)
        return v;
    }
  return -1;
}

/* A communication kind the collective validation covers. */
static int validated_collective(dt_op_kind k)
{
  return k == DT_OP_ALLREDUCE || k == DT_OP_ALLGATHER || k == DT_OP_REDUCESCATTER || k == DT_OP_BROADCAST ||
         k == DT_OP_REDUCE || k == DT_OP_ALLTOALL;
}

/* Mean nccl-tests size (S_nccl, bytes) of a kind's instances: algbw x time / count. */
static double mean_size(const dt_kind_stats *ks)
{
  return ks->count ? round(dt_kind_algbw(ks) * ks->time_s / (double)ks->count) : 0;
}

/* The measured values a simulated T stands for when its error is within +-e: [T/(1+e), T/(1-e)] (e capped at
 * 0.95). */
static void interval(double T, double e, double *lo, double *hi)
{
  if (e > 0.95)
    e = 0.95;
  *lo = T / (1 + e);
  *hi = T / (1 - e);
}

static void json_conf(yajl_gen g, const dt_conf_class *k, double T, const char *value_key, double value)
{
  double lo, hi;
  interval(T, k->err, &lo, &hi);
  yajl_gen_map_open(g);
  json_str(g, "band");
  json_str(g, k->band);
  if (value >= 0)
    json_key_double(g, value_key, value);
  json_key_uint(g, "rows", (uint64_t)k->rows);
  json_key_double(g, "median_abs_error", k->err);
  json_key_double(g, "time_s", T);
  json_key_double(g, "low_s", lo);
  json_key_double(g, "high_s", hi);
  yajl_gen_map_close(g);
}

static void json_validated(yajl_gen g, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  double params = trace_params(in->trace);
  const dt_conf_class *it = dt_confidence_class("iteration", params);
  json_str(g, "validated_error");
  yajl_gen_map_open(g);
  if (it && !no_run_time(s)) {
    json_str(g, "iteration");
    json_conf(g, it, s->niterations ? mean_iteration(s) : s->makespan_s, "params", params);
  }
  json_str(g, "by_kind");
  yajl_gen_map_open(g);
  for (int k = 0; k < DT_OP_COUNT; k++) {
    const dt_kind_stats *ks = &s->by_kind[k];
    if (!validated_collective((dt_op_kind)k) || ks->count == 0)
      continue;
    const dt_conf_class *c = dt_confidence_class("collective", mean_size(ks));
    if (!c)
      continue;
    json_str(g, dt_op_kind_name((dt_op_kind)k));
    json_conf(g, c, ks->time_s / (double)ks->count, "mean_size_bytes", mean_size(ks));
  }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

static void text_validated(FILE *f, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  char b1[64], b2[64], b3[64];
  double params = trace_params(in->trace);
  const dt_conf_class *it = dt_confidence_class("iteration", params);
  fprintf(f, "\nvalidated error (median |error| of the nearest validated class; docs/validation.md)\n");
  if (it && no_run_time(s)) {
    fprintf(f, "  %-16s none: the run did not finish (%s at %s) and no iteration completed, so there is no time to "
            "give a band for\n", "makespan", s->aborted ? "aborted" : "deadlock",
            dt_format_time(s->stopped_s, b1, sizeof b1));
  } else if (it) {
    double T = s->niterations ? mean_iteration(s) : s->makespan_s, lo, hi;
    interval(T, it->err, &lo, &hi);
    fprintf(f, "  %-16s +-%.1f %% (iterations, model size %s%s, %d row%s): %s, measured likely in [%s, %s]\n",
            s->niterations ? "iteration" : "makespan", 100 * it->err, params < 0 ? "unknown: " : "", it->band,
            it->rows, it->rows == 1 ? "" : "s",
            dt_format_time(T, b1, sizeof b1), dt_format_time(lo, b2, sizeof b2), dt_format_time(hi, b3, sizeof b3));
  }
  for (int k = 0; k < DT_OP_COUNT; k++) {
    const dt_kind_stats *ks = &s->by_kind[k];
    if (!validated_collective((dt_op_kind)k) || ks->count == 0)
      continue;
    const dt_conf_class *c = dt_confidence_class("collective", mean_size(ks));
    if (!c)
      continue;
    double T = ks->time_s / (double)ks->count, lo, hi;
    interval(T, c->err, &lo, &hi);
    fprintf(f, "  %-16s +-%.1f %% (collectives, size %s, %d rows): mean %s, measured likely in [%s, %s]\n",
            dt_op_kind_name((dt_op_kind)k), 100 * c->err, c->band, c->rows, dt_format_time(T, b1, sizeof b1),
            dt_format_time(lo, b2, sizeof b2), dt_format_time(hi, b3, sizeof b3));
  }
}

int dt_report_json(FILE *f, const dt_report_input *in, dt_error *err)
{
  const dt_stats *s = in->stats;
  yajl_gen g = yajl_gen_alloc(NULL);
  if (!g)
    return dt_error_set(err, NULL, 0, 0, "cannot allocate the JSON generator");
  yajl_gen_config(g, yajl_gen_validate_utf8, 0);
  yajl_gen_map_open(g);
  json_str(g, "schema");
  json_uint(g, 1);
  json_bound(g, in);
  json_str(g, "platform");
  json_str(g, in->platform->name ? in->platform->name : "");
  json_str(g, "fidelity");
  json_str(g, in->fidelity);
  if (in->trace->captured_step_s > 0)
    json_key_double(g, "captured_step_s", in->trace->captured_step_s);
  json_key_double(g, "makespan_s", s->makespan_s);
  if (run_incomplete(s)) { /* the run stopped early: when, and what completed (docs/report.md) */
    json_key_double(g, "stopped_s", s->stopped_s);
    json_str(g, "ops");
    yajl_gen_map_open(g);
    json_key_uint(g, "total", (uint64_t)s->ops_total);
    json_key_uint(g, "completed", (uint64_t)s->ops_done);
    yajl_gen_map_close(g);
  }
  json_str(g, "ranks");
  json_uint(g, (uint64_t)s->nranks);
  if (idle_ranks(in->trace) > 0) { /* ranks without ops: listed in per_rank, left out of exposed_by_dim */
    json_str(g, "idle_ranks");
    json_uint(g, (uint64_t)idle_ranks(in->trace));
  }
  json_str(g, "iterations_s");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < s->niterations; i++)
    json_double(g, s->iterations_s[i]);
  yajl_gen_array_close(g);
  json_str(g, "per_rank");
  yajl_gen_array_open(g);
  for (int32_t r = 0; r < s->nranks; r++) {
    const dt_rank_stats *rs = &s->per_rank[r];
    yajl_gen_map_open(g);
    json_str(g, "rank");
    json_uint(g, (uint64_t)r);
    json_key_double(g, "compute_s", rs->compute_s);
    json_key_double(g, "comm_s", rs->comm_s);
    json_key_double(g, "exposed_comm_s", rs->exposed_comm_s);
    json_key_double(g, "wait_s", rs->wait_s);
    json_str(g, "exposed_by_dim_s");
    yajl_gen_map_open(g);
    for (int d = 0; d < DT_DIM_COUNT; d++)
      if (dim_has_comm(s, (dt_dim)d))
        json_key_double(g, dim_key((dt_dim)d), rs->exposed_by_dim_s[d]);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  json_str(g, "by_kind");
  yajl_gen_map_open(g);
  for (int k = 0; k < DT_OP_COUNT; k++) {
    const dt_kind_stats *ks = &s->by_kind[k];
    if (!reported_kind((dt_op_kind)k) || ks->count == 0)
      continue;
    json_str(g, dt_op_kind_name((dt_op_kind)k));
    yajl_gen_map_open(g);
    json_str(g, "count");
    json_uint(g, ks->count);
    json_str(g, "bytes");
    json_uint(g, ks->bytes);
    json_key_double(g, "time_s", ks->time_s);
    json_key_double(g, "algbw_GBps", dt_kind_algbw(ks) / 1e9);
    json_key_double(g, "busbw_GBps", dt_kind_busbw(ks) / 1e9);
    if (in->trace->measured_n[k] > 0) { /* what the capture measured, beside the simulated mean */
      json_str(g, "measured_count");
      json_uint(g, in->trace->measured_n[k]);
      json_key_double(g, "measured_mean_s", in->trace->measured_s[k] / (double)in->trace->measured_n[k]);
      json_key_double(g, "simulated_mean_s", ks->time_s / (double)ks->count);
    }
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
  if (s->variability)
    json_variability(g, s);
  if (in->samples)
    json_samples(g, in->samples);
  json_exposed(g, in->trace, s);
  json_validated(g, in);
  json_energy(g, in);
  if (s->critical)
    json_critical(g, in);
  json_histogram(g, in);
  dt_explain_json(g, in); /* --explain only */
  if (s->links)
    json_links(g, in);
  if (in->json_extra)
    in->json_extra(g, in->extra);
  if (in->faults)
    dt_faultcmp_json(g, in->faults);
  json_str(g, "notes");
  yajl_gen_array_open(g);
  char note[4096];
  for (size_t i = 0; i < dt_report_note_count(in); i++)
    json_str(g, dt_report_note(in, i, note, sizeof note));
  yajl_gen_array_close(g);
  if (s->aborted) { /* a link failure stopped the run (replay/dt_degrade.h): not a deadlock */
    json_str(g, "aborted");
    yajl_gen_map_open(g);
    json_key_double(g, "time_s", s->aborted_s);
    json_str(g, "reason");
    json_str(g, s->aborted);
    json_str(g, "unfinished");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < s->ndeadlock; i++)
      json_str(g, s->deadlock[i]);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
  } else if (s->ndeadlock > 0) {
    json_str(g, "deadlock");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < s->ndeadlock; i++)
      json_str(g, s->deadlock[i]);
    yajl_gen_array_close(g);
  }
  yajl_gen_map_close(g);
  const unsigned char *buf;
  size_t len;
  int rc = DT_OK;
  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
    rc = dt_error_set(err, NULL, 0, 0, "the JSON generator failed");
  else if (fwrite(buf, 1, len, f) != len || fputc('\n', f) == EOF)
    rc = dt_error_set(err, NULL, 0, 0, "cannot write the JSON report%s: %s", f == stdout ? " to standard output" : "",
                      strerror(errno ? errno : EIO));
  yajl_gen_free(g);
  return rc;
}

/* ---- text ---- */

/* min, median, max of one per-rank field, selected by byte offset in dt_rank_stats */
static void field_summary(const dt_stats *s, size_t offset, double out[3])
{
  double *v = dt_xmalloc((size_t)s->nranks * sizeof *v);
  for (int32_t r = 0; r < s->nranks; r++)
    v[r] = *(const double *)((const char *)&s->per_rank[r] + offset);
  dt_sort_doubles(v, (size_t)s->nranks);
  out[0] = v[0];
  out[1] = dt_median_sorted(v, (size_t)s->nranks);
  out[2] = v[s->nranks - 1];
  free(v);
}

static const dt_stats *sort_stats; /* qsort has no context argument; set only inside dt_report_text */
static int cmp_rank_end_desc(const void *a, const void *b)
{
  double x = sort_stats->per_rank[*(const int32_t *)a].end_s, y = sort_stats->per_rank[*(const int32_t *)b].end_s;
  if (x != y)
    return (x < y) - (x > y);
  return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

/* "DP 62 %, TP 38 %": the shares of total held by the labels with bytes, largest first, at most 3 */
static void shares(char *buf, size_t size, const double *v, int n, const char *(*name)(int), double total)
{
  buf[0] = '\0';
  if (!(total > 0))
    return;
  int used[DT_OP_COUNT + DT_DIM_COUNT] = {0};
  size_t len = 0;
  for (int shown = 0; shown < 3; shown++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!used[i] && v[i] > 0 && (best < 0 || v[i] > v[best]))
        best = i;
    if (best < 0)
      break;
    used[best] = 1;
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s %.0f %%", shown ? ", " : "", name(best),
                            100.0 * v[best] / total);
    if (len >= size)
      break;
  }
}

static const char *dim_label(int d)
{
  return dt_dim_name((dt_dim)d);
}

static const char *kind_label(int k)
{
  return dt_op_kind_name((dt_op_kind)k);
}

static void text_links(FILE *f, const dt_report_input *in)
{
  const dt_linkstats *L = in->stats->links;
  double ms = dt_stats_link_span(in->stats); /* the makespan, or the time a run that stopped reached */
  char b1[64], sh[256], sk[256];
  fprintf(f, "\nlinks by class     dirs   used   bytes          busy mean  busy max  peak flows  by dimension\n");
  int any = 0;
  for (int c = 0; c < DT_LC_COUNT; c++) {
    const dt_class_load *C = &L->classes[c];
    if (C->used == 0)
      continue;
    any = 1;
    shares(sh, sizeof sh, C->by_dim, DT_DIM_COUNT, dim_label, C->bytes);
    fprintf(f, "  %-16s %-6zu %-6zu %-14s %7.1f %%  %6.1f %%  %-11u %s\n", dt_link_class_name((dt_link_class)c),
            C->links, C->used, dt_format_bytes(C->bytes, b1, sizeof b1),
            ms > 0 ? 100.0 * C->busy_sum_s / (double)C->used / ms : 0, ms > 0 ? 100.0 * C->busy_max_s / ms : 0,
            C->peak_flows, sh);
  }
  if (!any) {
    fprintf(f, "  (no bytes crossed a link)\n");
    return;
  }
  fprintf(f, "busiest links      class          bytes          busy      peak  by dimension; by op kind; top groups\n");
  for (size_t k = 0; k < L->nlinks && k < in->top_links; k++) {
    const dt_link_load *l = &L->links[k];
    shares(sh, sizeof sh, l->by_dim, DT_DIM_COUNT, dim_label, l->bytes);
    shares(sk, sizeof sk, l->by_kind, DT_OP_COUNT, kind_label, l->bytes);
    fprintf(f, "  %-16s %-14s %-14s %5.1f %%   %-5u %s; %s;", l->name, dt_link_class_name(l->cls),
            dt_format_bytes(l->bytes, b1, sizeof b1), ms > 0 ? 100.0 * l->busy_s / ms : 0, l->peak_flows, sh, sk);
    for (size_t q = 0; q < l->ngroups && q < 2; q++)
      fprintf(f, " %s %.0f %%", group_label(in->trace, l->groups[q].group), 100.0 * l->groups[q].bytes / l->bytes);
    if (l->ngroups > 2)
      fprintf(f, " (+%zu)", l->ngroups - 2);
    fprintf(f, "\n");
  }
  if (run_incomplete(in->stats)) { /* busy over the time the run reached, and what counts (docs/report.md) */
    char at[32];
    fprintf(f, "  busy = share of the %s the run reached (it stopped) with at least one transfer on the link\n"
               "  direction; every transfer counts what it moved until then, also those the stop cut; bytes are\n"
               "  payload, counted by dtsim from each transfer's route\n", dt_format_time(ms, at, sizeof at));
    return;
  }
  fprintf(f, "  busy = share of the makespan with at least one transfer on the link direction; bytes are payload,\n"
             "  counted by dtsim from each transfer's route\n");
}

static void text_bound(FILE *f, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  const dt_critical *c = s->critical;
  char sentence[512];
  bound_sentence(in, sentence, sizeof sentence);
  fprintf(f, "\nbound              %s\n", sentence);
  if (!c || !(s->makespan_s > 0))
    return;
  const char *why = bound_why(in);
  if (why)
    fprintf(f, "why                %s\n", why);
  double ms = s->makespan_s;
  /* "comm on the path", not "exposed comm": the per-rank table's exposed comm is another measure (a rank's
   * communication not covered by its own compute), and the same words beside two numbers confused */
  fprintf(f, "critical path      compute %.1f %%, host/launch %.1f %%, waiting %.1f %%, comm on the path",
          100 * c->compute_s / ms, 100 * c->host_s / ms, 100 * c->wait_s / ms);
  int any = 0;
  for (int d = 0; d < DT_DIM_COUNT; d++)
    for (int k = 0; k < DT_OP_COUNT; k++)
      if (c->comm_s[d][k] > 0) {
        fprintf(f, "%s %s%s%s %.1f %%", any ? "," : "", d != DT_DIM_NONE ? dt_dim_name((dt_dim)d) : "",
                d != DT_DIM_NONE ? " " : "", kind_phrase((dt_op_kind)k), 100 * c->comm_s[d][k] / ms);
        any = 1;
      }
  if (!any)
    fprintf(f, " 0 %%");
  fprintf(f, "\n");
}

static void text_stat(FILE *f, const char *label, const dt_sample_stat *st)
{
  char a[64], b[64], c[64];
  fprintf(f, "  %-16s %-12s [%s, %s]\n", label, dt_format_time(st->mean, a, sizeof a), dt_format_time(st->p5, b, sizeof b),
          dt_format_time(st->p95, c, sizeof c));
}

/* --samples: mean and 5-95 % interval over the seeds (docs/whatif.md) */
static void text_samples(FILE *f, const dt_samples *sm)
{
  fprintf(f, "\nsamples            %zu seeds %llu-%llu, jitter lognormal sigma %g: mean [5 %%, 95 %%]", sm->n,
          (unsigned long long)sm->seed0, (unsigned long long)(sm->seed0 + (sm->n ? sm->n - 1 : 0)), sm->sigma);
  if (sm->ncompleted < sm->n) { /* the summaries are over the seeds that completed: say which did not */
    fprintf(f, " over the %zu seed%s that completed (", sm->ncompleted, sm->ncompleted == 1 ? "" : "s");
    const char *sep = "";
    for (int st = DT_SAMPLE_ABORTED; st <= DT_SAMPLE_DEADLOCK; st++) {
      size_t k = st == DT_SAMPLE_ABORTED ? sm->naborted : sm->ndeadlocked, shown = 0;
      if (k == 0)
        continue;
      fprintf(f, "%s%zu %s: seed%s", sep, k, st == DT_SAMPLE_ABORTED ? "aborted" : "deadlocked", k == 1 ? "" : "s");
      for (size_t i = 0; i < sm->n && shown < 8; i++)
        if (sm->points[i].stopped == st)
          fprintf(f, "%s %llu", shown++ ? "," : "", (unsigned long long)(sm->seed0 + i));
      if (k > shown)
        fprintf(f, ", ...");
      sep = "; ";
    }
    fprintf(f, ")");
    if (sm->ncompleted == 0) {
      fprintf(f, ": no seed completed, nothing to summarise\n");
      return;
    }
  }
  fprintf(f, "\n");
  text_stat(f, "iteration", &sm->iteration_s);
  text_stat(f, "makespan", &sm->makespan_s);
  text_stat(f, "cp compute", &sm->compute_s);
  if (sm->host_s.p95 > 0)
    text_stat(f, "cp host/launch", &sm->host_s);
  text_stat(f, "cp waiting", &sm->wait_s);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (sm->has_dim[d]) {
      char label[32];
      snprintf(label, sizeof label, "cp comm%s%s", d == DT_DIM_NONE ? "" : " ", d == DT_DIM_NONE ? "" : dt_dim_name((dt_dim)d));
      text_stat(f, label, &sm->comm_s[d]);
    }
}

static void text_critical(FILE *f, const dt_report_input *in)
{
  const dt_critical *c = in->stats->critical;
  if (!c || c->nsegs == 0)
    return;
  char b1[64], b2[64];
  fprintf(f, "\ncritical path      %zu ops on %zu rank%s, the chain of ops that ends at the makespan (runs of one rank)\n",
          c->nops, c->nranks_on_path, c->nranks_on_path == 1 ? "" : "s");
  /* runs: consecutive segments of one rank and stream */
  size_t nruns = 0;
  for (size_t k = 0; k < c->nsegs; k++)
    if (k == 0 || c->segs[k].rank != c->segs[k - 1].rank || c->segs[k].stream != c->segs[k - 1].stream)
      nruns++;
  size_t run = 0, first = 0;
  for (size_t k = 0; k < c->nsegs; k++) {
    int last = k + 1 == c->nsegs || c->segs[k + 1].rank != c->segs[k].rank || c->segs[k + 1].stream != c->segs[k].stream;
    if (!last)
      continue;
    if (run < 4 || run + 8 >= nruns) {
      const dt_cp_segment *a = &c->segs[first], *b = &c->segs[k];
      size_t nk[DT_OP_COUNT] = {0};
      for (size_t q = first; q <= k; q++)
        nk[c->segs[q].kind]++;
      fprintf(f, "  rank %-5d s%-3d ops %u-%u  %s -> %s ", (int)a->rank, (int)a->stream, a->op, b->op,
              dt_format_time(a->start_s, b1, sizeof b1), dt_format_time(b->end_s, b2, sizeof b2));
      int sep = 0;
      for (int q = 0; q < DT_OP_COUNT; q++)
        if (nk[q]) {
          fprintf(f, "%s%s x%zu", sep ? ", " : "", dt_op_kind_name((dt_op_kind)q), nk[q]);
          sep = 1;
        }
      fprintf(f, "\n");
    } else if (run == 4) {
      fprintf(f, "  ... %zu more runs ...\n", nruns - 12);
    }
    run++;
    first = k + 1;
  }
  if (c->nsegs < c->nops)
    fprintf(f, "  (the last %zu ops are listed: runs before them are not kept)\n", c->nsegs);
}

static void text_exposed(FILE *f, const dt_trace *t, const dt_stats *s)
{
  char b1[64], b2[64];
  int any = 0;
  for (int d = 0; d < DT_DIM_COUNT; d++) {
    if (!dim_has_comm(s, (dt_dim)d))
      continue;
    if (!any) {
      int32_t idle = idle_ranks(t);
      fprintf(f, "\nexposed comm by dimension (per rank: its communication not covered by its compute)");
      if (idle > 0)
        fprintf(f, ", over the %d ranks with ops (%d idle left out)", (int)(s->nranks - idle), (int)idle);
      fprintf(f, "\n");
    }
    any = 1;
    double mean, max;
    int32_t arg;
    exposed_dim_summary(t, s, (dt_dim)d, &mean, &max, &arg);
    fprintf(f, "  %-16s mean %-12s max %-12s (rank %d)\n", d == DT_DIM_NONE ? "unlabelled" : dt_dim_name((dt_dim)d),
            dt_format_time(mean, b1, sizeof b1), dt_format_time(max, b2, sizeof b2), (int)arg);
  }
}

/* histogram rows: the instances per size range, with the share of the row's bytes in brackets */
static const int hist_edges[] = {0, 11, 17, 21, 25, 29, DT_HIST_BUCKETS}; /* <1K, 1K-64K, 64K-1M, 1M-16M, 16M-256M, >=256M */

static void text_hist_row(FILE *f, const char *label, const dt_hist *h)
{
  double total = 0;
  for (int b = 0; b < DT_HIST_BUCKETS; b++)
    total += h->bytes[b];
  fprintf(f, "  %-16s", label);
  for (int r = 0; r + 1 < (int)(sizeof hist_edges / sizeof hist_edges[0]); r++) {
    uint64_t n = 0;
    double by = 0;
    for (int b = hist_edges[r]; b < hist_edges[r + 1]; b++) {
      n += h->count[b];
      by += h->bytes[b];
    }
    char cell[48];
    if (n)
      snprintf(cell, sizeof cell, "%llu (%.0f%%)", (unsigned long long)n, total > 0 ? 100 * by / total : 0);
    else
      snprintf(cell, sizeof cell, "-");
    fprintf(f, " %-14s", cell);
  }
  fprintf(f, "\n");
}

static void text_histogram(FILE *f, const dt_stats *s)
{
  int any = 0;
  for (int k = 0; k < DT_OP_COUNT; k++)
    any |= !hist_empty(&s->hist_kind[k]);
  if (!any)
    return;
  fprintf(f, "\nmessage sizes      instances by per-rank bytes (share of the row's bytes)\n"
             "                   <1 KiB         1-64 KiB       64 KiB-1 MiB   1-16 MiB       16-256 MiB     >=256 MiB\n");
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (!hist_empty(&s->hist_kind[k]))
      text_hist_row(f, kind_phrase((dt_op_kind)k), &s->hist_kind[k]);
  for (int d = 0; d < DT_DIM_COUNT; d++)
    if (!hist_empty(&s->hist_dim[d]))
      text_hist_row(f, d == DT_DIM_NONE ? "unlabelled" : dt_dim_name((dt_dim)d), &s->hist_dim[d]);
}

void dt_report_text(FILE *f, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  const dt_platform *p = in->platform;
  char b1[64], b2[64], b3[64], b4[64];
  fprintf(f, "dtsim %s: %s on %s (%d node%s x %d %s)\n", DTSIM_VERSION, in->trace_label, p->name, p->nodes,
          p->nodes == 1 ? "" : "s", p->gpus_per_node, p->gpu_model);
  int32_t idle = idle_ranks(in->trace);
  if (idle > 0) /* a native trace's ranks without a section run nothing: said, not silently averaged */
    fprintf(f, "ranks %d (%d idle: no ops in the trace), fidelity %s\n\n", (int)s->nranks, (int)idle, in->fidelity);
  else
    fprintf(f, "ranks %d, fidelity %s\n\n", (int)s->nranks, in->fidelity);
  if (run_incomplete(s)) { /* no makespan: the time the run reached, and what completed (JSON: stopped_s, ops) */
    fprintf(f, "makespan           none (the run did not finish): it %s %s, %s; ",
            s->aborted ? "stopped at" : "reached", dt_format_time(s->stopped_s, b2, sizeof b2),
            s->aborted ? "aborted" : "deadlocked");
    if (s->ops_done > 0)
      fprintf(f, "%zu of %zu ops completed, the last at %s\n", s->ops_done, s->ops_total,
              dt_format_time(s->makespan_s, b1, sizeof b1));
    else
      fprintf(f, "none of its %zu ops completed\n", s->ops_total);
  } else
    fprintf(f, "makespan           %s\n", dt_format_time(s->makespan_s, b1, sizeof b1));
  if (s->niterations > 0) {
    double sim = mean_iteration(s);
    fprintf(f, "iterations         %zu, mean %s", s->niterations, dt_format_time(sim, b1, sizeof b1));
    if (s->niterations <= 8) {
      fprintf(f, " (");
      for (size_t i = 0; i < s->niterations; i++)
        fprintf(f, "%s%s", i ? ", " : "", dt_format_time(s->iterations_s[i], b1, sizeof b1));
      fprintf(f, ")");
    }
    fprintf(f, "\n");
    if (in->trace->captured_step_s > 0) {
      fprintf(f, "captured step      %s   simulated %s   (%+.1f %%)\n",
              dt_format_time(in->trace->captured_step_s, b1, sizeof b1), dt_format_time(sim, b2, sizeof b2),
              100.0 * (sim - in->trace->captured_step_s) / in->trace->captured_step_s);
    }
  }

  text_energy(f, in);
  text_bound(f, in);
  if (in->samples)
    text_samples(f, in->samples);

  fprintf(f, "\nper rank           compute      comm         exposed comm wait\n");
  if (s->nranks <= 16) {
    for (int32_t r = 0; r < s->nranks; r++) {
      const dt_rank_stats *rs = &s->per_rank[r];
      fprintf(f, "  rank %-11d %-12s %-12s %-12s %s\n", (int)r, dt_format_time(rs->compute_s, b1, sizeof b1),
              dt_format_time(rs->comm_s, b2, sizeof b2), dt_format_time(rs->exposed_comm_s, b3, sizeof b3),
              dt_format_time(rs->wait_s, b4, sizeof b4));
    }
  } else if (s->nranks > 0) {
    double c[3], m[3], e[3], w[3];
    field_summary(s, offsetof(dt_rank_stats, compute_s), c);
    field_summary(s, offsetof(dt_rank_stats, comm_s), m);
    field_summary(s, offsetof(dt_rank_stats, exposed_comm_s), e);
    field_summary(s, offsetof(dt_rank_stats, wait_s), w);
    static const char *label[3] = {"min", "median", "max"};
    for (int i = 0; i < 3; i++)
      fprintf(f, "  %-16s %-12s %-12s %-12s %s\n", label[i], dt_format_time(c[i], b1, sizeof b1),
              dt_format_time(m[i], b2, sizeof b2), dt_format_time(e[i], b3, sizeof b3),
              dt_format_time(w[i], b4, sizeof b4));
    int32_t *order = dt_xmalloc((size_t)s->nranks * sizeof *order);
    for (int32_t r = 0; r < s->nranks; r++)
      order[r] = r;
    sort_stats = s;
    qsort(order, (size_t)s->nranks, sizeof *order, cmp_rank_end_desc);
    sort_stats = NULL;
    fprintf(f, "  slowest ranks (last op end):");
    for (int32_t i = 0; i < s->nranks && i < 5; i++)
      fprintf(f, "%s rank %d at %s", i ? "," : "", (int)order[i],
              dt_format_time(s->per_rank[order[i]].end_s, b1, sizeof b1));
    fprintf(f, "\n");
    free(order);
  }

  fprintf(f, "\nby op kind         count      bytes          time         algbw GB/s  busbw GB/s\n");
  int any = 0;
  for (int k = 0; k < DT_OP_COUNT; k++) {
    const dt_kind_stats *ks = &s->by_kind[k];
    if (!reported_kind((dt_op_kind)k) || ks->count == 0)
      continue;
    any = 1;
    char cnt[32], alg[32], bus[32];
    fprintf(f, "  %-16s %-10s %-14s %-12s %-11s %s\n", dt_op_kind_name((dt_op_kind)k),
            fit_count(ks->count, 10, cnt, sizeof cnt), dt_format_bytes((double)ks->bytes, b1, sizeof b1),
            dt_format_time(ks->time_s, b2, sizeof b2), fit_fixed(dt_kind_algbw(ks) / 1e9, 11, alg, sizeof alg),
            fit_fixed(dt_kind_busbw(ks) / 1e9, 11, bus, sizeof bus));
  }
  if (!any)
    fprintf(f, "  (no communication)\n");
  fprintf(f, "  algbw = size / time, size = bytes (n x bytes for allgather, whose bytes are the per-rank shard);\n"
             "  busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, reducescatter, alltoall), 1 (broadcast,\n"
             "  reduce, send): nccl-tests conventions, GB/s = 1e9 bytes/s\n");
  const dt_trace *t = in->trace;
  int measured = 0;
  for (int k = 0; k < DT_OP_COUNT; k++)
    measured |= t->measured_n[k] > 0;
  if (measured) {
    fprintf(f, "\nmeasured vs simulated, mean per call (measured: %s)\n",
            t->measured_what ? t->measured_what : "the capture's times");
    fprintf(f, "  kind             measured calls  measured     simulated    (simulated / measured)\n");
    for (int k = 0; k < DT_OP_COUNT; k++) {
      if (!t->measured_n[k])
        continue;
      const dt_kind_stats *ks = &s->by_kind[k];
      double m = t->measured_s[k] / (double)t->measured_n[k];
      double sim = ks->count ? ks->time_s / (double)ks->count : 0;
      fprintf(f, "  %-16s %-15llu %-12s %-12s", dt_op_kind_name((dt_op_kind)k), (unsigned long long)t->measured_n[k],
              dt_format_time(m, b1, sizeof b1), ks->count ? dt_format_time(sim, b2, sizeof b2) : "-");
      if (ks->count && m > 0)
        fprintf(f, " x%.3g", sim / m);
      fprintf(f, "\n");
    }
  }

  text_validated(f, in);
  text_exposed(f, in->trace, s);
  text_critical(f, in);
  text_histogram(f, s);
  if (s->links)
    text_links(f, in);
  if (in->text_extra)
    in->text_extra(f, in->extra);
  if (in->faults)
    dt_faultcmp_text(f, in->faults);

  size_t nn = dt_report_note_count(in);
  if (nn > 0) {
    fprintf(f, "\nnotes\n");
    char note[4096];
    for (size_t i = 0; i < nn; i++)
      fprintf(f, "  - %s\n", dt_report_note(in, i, note, sizeof note));
  }
  if (s->aborted) {
    char b[64];
    fprintf(f, "\naborted at %s: %s\n", dt_format_time(s->aborted_s, b, sizeof b), s->aborted);
    for (size_t i = 0; i < s->ndeadlock && i < 50; i++)
      fprintf(f, "  %s\n", s->deadlock[i]);
    if (s->ndeadlock > 50)
      fprintf(f, "  ... and %zu more\n", s->ndeadlock - 50);
  } else if (s->ndeadlock > 0) {
    fprintf(f, "\ndeadlock: %zu op%s blocked forever\n", s->ndeadlock, s->ndeadlock == 1 ? "" : "s");
    for (size_t i = 0; i < s->ndeadlock && i < 50; i++)
      fprintf(f, "  %s\n", s->deadlock[i]);
    if (s->ndeadlock > 50)
      fprintf(f, "  ... and %zu more\n", s->ndeadlock - 50);
  }
}
