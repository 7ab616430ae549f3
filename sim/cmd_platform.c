/* dtsim platform check|show: loads and validates a platform file, builds its link table, and prints a summary,
 * the link classes and the fabric shape, or the hops of one route with its alpha and bottleneck bandwidth.
 * Everything printed comes from dt_platform and dt_topology, the same values the replay uses. */
#include "cmd_platform.h"
#include "../common/dt_util.h"

#include "../common/dt_units.h"
#include "../platforms/dt_platform.h"
#include "../platforms/dt_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

const char dt_cmd_platform_usage[] =
    "usage: dtsim platform check FILE\n"
    "       dtsim platform show FILE [--route A B] [--links]\n"
    "\n"
    "check   validates FILE and prints 'ok: NAME: N nodes x G GPUs, ...'; exit 0, or the error with its\n"
    "        file:line:col and exit 2\n"
    "show    prints the GPU counts, the intra-node kind, the link classes (bandwidth per direction, latency,\n"
    "        count) and the shape of the network\n"
    "  --route A B   also print the route between global GPUs A and B (0-based, node * gpus_per_node + GPU):\n"
    "                each link's name, direction, bandwidth and latency, the route's alpha (sum of the\n"
    "                latencies) and its bottleneck bandwidth\n"
    "  --links       also list every link: its name (as 'dtsim run --degrade/--fail/--flap' take it), its class\n"
    "                (as the report's links section and --degrade CLASS=F name it), bandwidth and latency\n";

static int usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "dtsim platform: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'dtsim help platform' for usage\n");
  return EXIT_USAGE;
}

static const char *fmt_bw(double bytes_per_s, char *buf, size_t size)
{
  snprintf(buf, size, "%.6g GB/s", bytes_per_s / 1e9);
  return buf;
}

/* "1 node x 8 GPUs" */
static void print_counts(const dt_platform *p)
{
  printf("%d node%s x %d GPU%s", p->nodes, p->nodes == 1 ? "" : "s", p->gpus_per_node,
         p->gpus_per_node == 1 ? "" : "s");
}

static int parse_gpu(const char *s, int gpus, int *out)
{
  long long v;
  if (dt_parse_whole(s, 0, (long long)gpus - 1, &v) != 0)
    return -1;
  *out = (int)v;
  return 0;
}

/* Link classes: links of one class (dt_link_class, named as the run report's links section and --degrade CLASS
 * name them) with the same bandwidth and latency, in first-seen order. */
typedef struct link_class {
  dt_link_class cls;
  double bandwidth, latency;
  size_t count;
  size_t first; /* index of the first link, for an example name */
} link_class;

static void print_classes(const dt_topology *t)
{
  size_t n = dt_topology_link_count(t), nc = 0, cap = 16;
  link_class *c = malloc(cap * sizeof *c);
  if (!c)
    return;
  for (size_t i = 0; i < n; i++) {
    const dt_link *l = dt_topology_link(t, i);
    dt_link_class cls = dt_topology_link_class(t, i);
    size_t k = 0;
    while (k < nc && !(c[k].cls == cls && c[k].bandwidth == l->bandwidth && c[k].latency == l->latency))
      k++;
    if (k == nc) {
      if (nc == cap) {
        link_class *g = realloc(c, 2 * cap * sizeof *c);
        if (!g)
          break;
        c = g;
        cap *= 2;
      }
      c[nc++] = (link_class){cls, l->bandwidth, l->latency, 0, i};
    }
    c[k].count++;
  }
  printf("link classes (split-duplex; bandwidth per direction, model factors applied):\n");
  for (size_t k = 0; k < nc; k++) {
    char bw[64], lat[64], name[128];
    printf("  %-16s %7zu x %14s %10s   e.g. %s\n", dt_link_class_name(c[k].cls), c[k].count,
           fmt_bw(c[k].bandwidth, bw, sizeof bw), dt_format_time(c[k].latency, lat, sizeof lat),
           dt_topology_link_name(t, c[k].first, name, sizeof name));
  }
  free(c);
}

/* "idle 70 W, busy 700 W" or "25 W" for one device kind's power figures */
static const char *power_text(const dt_power_figures *f, char *buf, size_t size)
{
  if (f->idle == f->busy)
    snprintf(buf, size, "%.6g W", f->busy);
  else
    snprintf(buf, size, "idle %.6g W, busy %.6g W", f->idle, f->busy);
  return buf;
}

/* The power and cost figures (docs/platform.md "Power and cost"), when given. */
static void print_power(const dt_platform *p)
{
  char a[96], b[96], c[96];
  if (p->gpu_power.present)
    printf("  power     GPU %s; NIC %s; switch %s\n", power_text(&p->gpu_power, a, sizeof a),
           p->nic_power.present ? power_text(&p->nic_power, b, sizeof b) : "not given",
           p->switch_power.present ? power_text(&p->switch_power, c, sizeof c) : "not given");
  if (p->cost.present)
    printf("  cost      %s per GPU-hour %.6g, per NIC-hour %.6g, per switch-hour %.6g, per kWh %.6g\n",
           p->cost.currency, p->cost.gpu_hour, p->cost.nic_hour, p->cost.switch_hour, p->cost.energy_kwh);
}

static void print_show(const dt_platform *p, const dt_topology *t)
{
  char a[64], b[64];
  printf("platform %s (%s)\n", p->name, p->source);
  printf("  gpus      ");
  print_counts(p);
  printf(" = %d GPUs, %s, peak %.6g TFLOPS x efficiency %.6g\n", dt_platform_gpu_count(p), p->gpu_model,
         p->gpu_peak / 1e12, p->gpu_efficiency);
  printf("  intra     %s: ", dt_platform_intra_kind_name(p->intra_kind));
  if (p->intra_kind == DT_INTRA_NVSWITCH) {
    printf("%s per GPU, %s GPU to GPU\n", fmt_bw(p->intra_bandwidth, a, sizeof a),
           dt_format_time(p->intra_latency, b, sizeof b));
  } else if (p->intra_kind == DT_INTRA_NVLINK_MESH) {
    int total = 0, hops = 0;
    for (int i = 0; i < p->n_nvlinks; i++)
      total += p->nvlinks[i].count;
    int *d = dt_platform_mesh_distances(p);
    for (int i = 0; i < p->gpus_per_node * p->gpus_per_node; i++)
      if (d[i] > hops)
        hops = d[i];
    free(d);
    printf("%d GPU pairs joined by %d NVLinks of %s each, %s per hop, at most %d hop%s\n", p->n_nvlinks, total,
           fmt_bw(p->nvlink_bandwidth, a, sizeof a), dt_format_time(p->intra_latency, b, sizeof b), hops,
           hops == 1 ? "" : "s");
  } else {
    int sw = dt_platform_pcie_switches(p);
    printf("%d switch%s of %d GPUs, %s per GPU link, %s GPU to GPU", sw, sw == 1 ? "" : "es", p->gpus_per_switch,
           fmt_bw(p->intra_bandwidth, a, sizeof a), dt_format_time(p->intra_latency, b, sizeof b));
    if (sw > 1)
      printf("; CPU links %s, +%s across switches", fmt_bw(p->cpu_bandwidth, a, sizeof a),
             dt_format_time(p->cpu_latency, b, sizeof b));
    printf("\n");
  }
  if (p->nics_per_node > 0)
    printf("  nics      %d per node, %s, %s\n", p->nics_per_node, fmt_bw(p->nic_bandwidth, a, sizeof a),
           dt_format_time(p->nic_latency, b, sizeof b));
  const dt_fabric_shape *s = dt_topology_shape(t);
  printf("  network   %s", dt_platform_topology_name(p->topology));
  if (p->topology == DT_NET_SINGLE_SWITCH)
    printf(": one switch, %d NICs\n", s->nics);
  else if (p->topology == DT_NET_FAT_TREE)
    printf(": %d levels, radix %d, %d:1, %s wiring; %d NICs, %d leaves (%d down, %d up ports), %d %s\n", p->levels,
           p->radix, p->oversubscription, p->wiring == DT_WIRING_RAIL ? "rail" : "node", s->nics, s->leaves,
           s->down_ports, s->up_ports, s->spines, p->levels == 2 ? "spines" : "cores");
  else if (p->topology == DT_NET_DRAGONFLY)
    printf(": %d groups x %d routers x %d nodes per router, %d global links per router; %d routers, %d parallel "
           "global links per pair of groups, room for %ld NICs\n",
           s->groups, s->routers_per_group, p->nodes_per_router, p->global_links_per_router, s->leaves,
           s->global_per_pair, s->capacity);
  else
    printf(" (one node)\n");
  if (p->topology == DT_NET_FAT_TREE && p->levels == 3)
    printf("            %d pods of %d aggregation switches\n", s->pods, s->aggs_per_pod);
  if (p->bandwidth_factor != 1.0 || p->latency_factor != 1.0)
    printf("  model     bandwidth x %.6g, latency x %.6g\n", p->bandwidth_factor, p->latency_factor);
  print_power(p);
  printf("  links     %zu\n", dt_topology_link_count(t));
  print_classes(t);
}

static void print_route(const dt_topology *t, int src, int dst)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double lat = 0, bw = 0;
  int n = dt_topology_route(t, src, dst, hops, &lat, &bw);
  const dt_platform *p = dt_topology_platform(t);
  int g = p->gpus_per_node;
  printf("route gpu%d (node %d, GPU %d) -> gpu%d (node %d, GPU %d): %d hop%s\n", src, src / g, src % g, dst, dst / g,
         dst % g, n, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    const dt_link *l = dt_topology_link(t, hops[i].link);
    char name[128], bw_s[64], lat_s[64];
    printf("  %2d  %-28s %-4s %14s %10s\n", i + 1, dt_topology_link_name(t, hops[i].link, name, sizeof name),
           hops[i].dir ? "down" : "up", fmt_bw(l->bandwidth, bw_s, sizeof bw_s),
           dt_format_time(l->latency, lat_s, sizeof lat_s));
  }
  printf("  alpha %.6g us, bottleneck %.6g GB/s\n", lat * 1e6, bw / 1e9);
}

/* Every link, one a line: name, class, bandwidth, latency. */
static void print_links(const dt_topology *t)
{
  char name[128], a[64];
  size_t n = dt_topology_link_count(t);
  printf("links (%zu; name, class, bandwidth per direction, latency):\n", n);
  for (size_t i = 0; i < n; i++) {
    const dt_link *l = dt_topology_link(t, i);
    printf("  %-28s %-16s %14s %10.6g us\n", dt_topology_link_name(t, i, name, sizeof name),
           dt_link_class_name(dt_topology_link_class(t, i)), fmt_bw(l->bandwidth, a, sizeof a), l->latency * 1e6);
  }
}

int dt_cmd_platform(int argc, char **argv)
{
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(dt_cmd_platform_usage, stdout);
    return EXIT_OK;
  }
  if (argc < 2)
    return usage("%s", "expected 'check FILE' or 'show FILE'");
  int show = strcmp(argv[1], "show") == 0;
  if (!show && strcmp(argv[1], "check") != 0)
    return usage("unknown action '%s' (expected check or show)", argv[1]);
  const char *file = NULL, *ra = NULL, *rb = NULL;
  int links = 0;
  for (int i = 2; i < argc; i++) {
    if (show && strcmp(argv[i], "--links") == 0) {
      links = 1;
    } else if (show && strcmp(argv[i], "--route") == 0) {
      if (i + 2 >= argc)
        return usage("%s", "--route expects two GPU indices A B");
      ra = argv[++i];
      rb = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return usage("unknown option '%s'", argv[i]);
    } else if (file) {
      return usage("unexpected argument '%s' (one platform file)", argv[i]);
    } else {
      file = argv[i];
    }
  }
  if (!file)
    return usage("%s", "expected a platform file");

  int rc = EXIT_USAGE;
  dt_error err;
  dt_error_clear(&err);
  dt_platform *p = NULL;
  dt_topology *t = NULL;
  if (dt_platform_load(file, &p, &err) != DT_OK || dt_topology_build(p, &t, &err) != DT_OK) {
    char buf[2048];
    if (!err.file[0])
      snprintf(err.file, sizeof err.file, "%s", file);
    fprintf(stderr, "dtsim: error: %s\n", dt_error_format(&err, buf, sizeof buf));
    goto cleanup;
  }
  int src = 0, dst = 0, gpus = dt_platform_gpu_count(p);
  if (ra && (parse_gpu(ra, gpus, &src) != 0 || parse_gpu(rb, gpus, &dst) != 0)) {
    fprintf(stderr, "dtsim platform: --route expects GPU indices from 0 to %d, found '%s' '%s'\n", gpus - 1, ra, rb);
    goto cleanup;
  }
  if (show) {
    print_show(p, t);
    if (ra)
      print_route(t, src, dst);
    if (links)
      print_links(t);
  } else {
    printf("ok: %s: ", p->name);
    print_counts(p);
    printf(", %s", dt_platform_intra_kind_name(p->intra_kind));
    if (p->nodes > 1 || p->topology != DT_NET_NONE)
      printf(", %d NIC%s per node, %s network", p->nics_per_node, p->nics_per_node == 1 ? "" : "s",
             dt_platform_topology_name(p->topology));
    printf(", %zu links\n", dt_topology_link_count(t));
  }
  rc = EXIT_OK;
cleanup:
  dt_topology_free(t);
  dt_platform_free(p);
  return rc;
}
