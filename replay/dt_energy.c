/* Energy and cost per iteration: closed forms over the replay's busy times and per-link bytes (dt_energy.h). */
#include "dt_energy.h"

#include "../common/dt_util.h"
#include "../platforms/dt_topology.h"
#include "dt_linkload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Devices the platform describes: every GPU, every NIC (nodes x per_node whenever `nics` is given: one node's NICs
 * draw power even when no route uses them), and the switches of the fabric dtsim builds. */
typedef struct devices {
  long gpus, nics, switches;
  int ports; /* per switch */
} devices;

static devices count_devices(const dt_platform *p)
{
  devices d = {(long)dt_platform_gpu_count(p), (long)p->nodes * p->nics_per_node, 0, 0};
  dt_fabric_shape sh;
  dt_error err;
  dt_error_clear(&err);
  if (p->nodes <= 1 || p->topology == DT_NET_NONE || dt_platform_fabric_shape(p, &sh, &err) != DT_OK)
    return d;
  switch (p->topology) {
  case DT_NET_SINGLE_SWITCH:
    d.switches = 1;
    d.ports = sh.down_ports;
    break;
  case DT_NET_FAT_TREE:
    d.switches = (long)sh.leaves + (long)sh.pods * sh.aggs_per_pod + sh.spines;
    d.ports = p->radix;
    break;
  case DT_NET_DRAGONFLY:
    d.switches = sh.leaves;
    d.ports = sh.down_ports + (p->routers_per_group - 1) + p->global_links_per_router;
    break;
  case DT_NET_NONE:
    break;
  }
  return d;
}

/* Switch ends of one direction of a link of class c: a NIC cable enters or leaves one switch, a cable between
 * switches leaves one and enters another; links inside a node touch none. */
static int switch_ends(dt_link_class c)
{
  switch (c) {
  case DT_LC_NIC_LEAF:
  case DT_LC_NIC_SWITCH:
  case DT_LC_NIC_ROUTER:
    return 1;
  case DT_LC_LEAF_SPINE:
  case DT_LC_LEAF_AGG:
  case DT_LC_AGG_CORE:
  case DT_LC_DF_LOCAL:
  case DT_LC_DF_GLOBAL:
    return 2;
  default:
    return 0;
  }
}

static double mean_iteration(const dt_stats *s)
{
  double sum = 0;
  for (size_t i = 0; i < s->niterations; i++)
    sum += s->iterations_s[i];
  return s->niterations ? sum / (double)s->niterations : s->makespan_s;
}

/* A positive number at the start of text, up to the first character that is not one ("1536 ..." reads 1536). */
static double read_count(const char *text)
{
  if (!text || !(*text >= '0' && *text <= '9'))
    return 0;
  errno = 0;
  char *end;
  double v = strtod(text, &end);
  if (errno || !isfinite(v) || v <= 0)
    return 0;
  return v;
}

/* The value of key=N inside a `meta parallel=` line ("tp=2 ... global_batch=1536 ... seq=2048 ..."). */
static double word_value(const char *line, const char *key)
{
  size_t n = strlen(key);
  for (const char *q = line; (q = strstr(q, key)) != NULL; q += n)
    if ((q == line || q[-1] == ' ') && q[n] == '=')
      return read_count(q + n + 1);
  return 0;
}

double dt_energy_tokens(const dt_trace *t)
{
  for (size_t i = 0; i < t->nmeta; i++)
    if (strcmp(t->meta_keys[i], "tokens_per_iteration") == 0) {
      long long n; /* the spelling the native reader checks (traces/dt_native.c), 0 for any other */
      return dt_parse_whole(t->meta_values[i], 1, DT_TOKENS_PER_ITERATION_MAX, &n) == 0 ? (double)n : 0;
    }
  for (size_t i = 0; i < t->nmeta; i++)
    if (strcmp(t->meta_keys[i], "parallel") == 0) {
      double b = word_value(t->meta_values[i], "global_batch"), seq = word_value(t->meta_values[i], "seq");
      return b * seq;
    }
  return 0;
}

void dt_energy_compute(const dt_platform *p, const dt_trace *t, const dt_stats *s, dt_energy *e)
{
  memset(e, 0, sizeof *e);
  if (!p->gpu_power.present) /* a run stopped early is charged to its last completed op (the report says so) */
    return;
  devices d = count_devices(p);
  double T = s->makespan_s > 0 && isfinite(s->makespan_s) ? s->makespan_s : 0;
  e->present = 1;
  e->nic_figures = p->nic_power.present;
  e->switch_figures = p->switch_power.present && d.switches > 0;
  e->gpus = d.gpus;
  e->gpus_without_rank = d.gpus > s->nranks ? d.gpus - s->nranks : 0;
  e->nics = p->nic_power.present ? d.nics : 0;
  e->switches = d.switches;
  e->switch_ports = d.ports;
  e->makespan_s = T;
  e->iteration_s = T > 0 ? mean_iteration(s) : 0;
  e->tokens = dt_energy_tokens(t);

  double busy = 0, comm = 0;
  for (int32_t r = 0; r < s->nranks; r++) {
    double c = fmin(s->per_rank[r].compute_s, T);
    busy += c;
    comm += fmin(fmax(s->per_rank[r].exposed_comm_s, 0), T - c);
  }
  e->gpu_busy_s = busy;
  e->gpu_comm = p->gpu_power.comm_given;
  e->gpu_comm_s = comm;
  if (!e->gpu_comm)
    comm = 0; /* that time is idle */
  double run_gpu_compute = p->gpu_power.busy * busy;
  double run_gpu_comm = p->gpu_power.comm * comm;
  double run_gpu_idle = p->gpu_power.idle * fmax((double)d.gpus * T - busy - comm, 0);

  /* load terms: time at full rate of the NIC directions and of the switch port directions */
  double nic_full_s = 0, port_full_s = 0;
  int need_links = (e->nic_figures && p->nic_power.busy > p->nic_power.idle) ||
                   (e->switch_figures && p->switch_power.busy > p->switch_power.idle);
  e->load_terms = !need_links || s->links != NULL;
  for (size_t k = 0; s->links && k < s->links->nlinks; k++) {
    const dt_link_load *l = &s->links->links[k];
    double full = l->bandwidth > 0 ? fmin(l->bytes / l->bandwidth, T) : 0;
    if (l->cls == DT_LC_GPU_NIC)
      nic_full_s += full;
    port_full_s += switch_ends(l->cls) * full;
  }
  double run_nic_static = 0, run_nic_load = 0, run_sw_static = 0, run_sw_load = 0;
  if (e->nic_figures) {
    run_nic_static = (double)e->nics * p->nic_power.idle * T;
    run_nic_load = (p->nic_power.busy - p->nic_power.idle) * nic_full_s / 2;
  }
  if (e->switch_figures) {
    run_sw_static = (double)d.switches * p->switch_power.idle * T;
    if (d.ports > 0)
      run_sw_load = (p->switch_power.busy - p->switch_power.idle) * port_full_s / (2.0 * d.ports);
  }
  e->run_J =
      run_gpu_compute + run_gpu_comm + run_gpu_idle + run_nic_static + run_nic_load + run_sw_static + run_sw_load;
  e->mean_power_W = T > 0 ? e->run_J / T : 0;
  double scale = T > 0 ? e->iteration_s / T : 0; /* 1 without marks */
  e->iteration_J = e->run_J * scale;
  e->gpu_compute_J = run_gpu_compute * scale;
  e->gpu_comm_J = run_gpu_comm * scale;
  e->gpu_idle_J = run_gpu_idle * scale;
  e->nic_static_J = run_nic_static * scale;
  e->nic_load_J = run_nic_load * scale;
  e->switch_static_J = run_sw_static * scale;
  e->switch_load_J = run_sw_load * scale;
  e->token_J = e->tokens > 0 ? e->iteration_J / e->tokens : 0;
}

void dt_energy_cost(const dt_platform *p, const dt_trace *t, const dt_stats *s, const dt_energy *e, dt_cost *c)
{
  memset(c, 0, sizeof *c);
  if (!p->cost.present)
    return;
  devices d = count_devices(p);
  double T = s->makespan_s > 0 && isfinite(s->makespan_s) ? s->makespan_s : 0;
  double hours = T > 0 ? mean_iteration(s) / 3600.0 : 0;
  c->present = 1;
  c->currency = p->cost.currency;
  c->gpu = hours * (double)d.gpus * p->cost.gpu_hour;
  c->nic = hours * (double)d.nics * p->cost.nic_hour;
  c->sw = hours * (double)d.switches * p->cost.switch_hour;
  c->energy = e && e->present ? e->iteration_J / 3.6e6 * p->cost.energy_kwh : 0;
  c->iteration = c->gpu + c->nic + c->sw + c->energy;
  double tokens = dt_energy_tokens(t);
  c->million_tokens = tokens > 0 ? c->iteration / tokens * 1e6 : 0;
}
