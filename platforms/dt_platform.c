/* The platform value once loaded: its life (free), the GPU-to-NIC rule, and the shape of the switch fabric
 * that is actually built (DESIGN.md §3). The YAML loader that fills a dt_platform is dt_platform_yaml.c;
 * the link and route table built on this shape is dt_topology.c. */
#include "dt_platform.h"

#include "../common/dt_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void dt_platform_free(dt_platform *p)
{
  if (!p)
    return;
  free(p->name);
  free(p->source);
  free(p->gpu_model);
  free(p->nvlinks);
  free(p->cost.currency);
  dt_platform_var_free(p->variability);
  free(p);
}

int dt_platform_gpu_count(const dt_platform *p)
{
  return p ? p->nodes * p->gpus_per_node : 0;
}

int dt_platform_nic_of_gpu(const dt_platform *p, int local_gpu)
{
  if (!p || p->nics_per_node <= 0 || p->gpus_per_node <= 0)
    return 0;
  /* GPU g uses NIC floor(g * per_node / gpus_per_node): with per_node dividing gpus_per_node this gives
   * each NIC gpus_per_node/per_node consecutive GPUs (8 GPUs, 2 NICs: GPUs 0-3 on NIC 0, 4-7 on NIC 1). */
  return (int)((long)local_gpu * p->nics_per_node / p->gpus_per_node);
}

static long ceil_div(long a, long b)
{
  return (a + b - 1) / b;
}

int dt_platform_fabric_shape(const dt_platform *p, dt_fabric_shape *s, dt_error *err)
{
  memset(s, 0, sizeof *s);
  if (!p || p->nodes <= 1 || p->topology == DT_NET_NONE)
    return DT_OK;
  long nics = (long)p->nodes * p->nics_per_node;
  s->nics = (int)nics;

  if (p->topology == DT_NET_DRAGONFLY) {
    long g = p->groups, a = p->routers_per_group, pr = p->nodes_per_router, h = p->global_links_per_router;
    if (g < 1 || a < 1 || pr < 1 || h < 0)
      return dt_error_set(err, NULL, 0, 0, "a dragonfly needs at least 1 group, 1 router per group and 1 node per "
                                           "router");
    if (g > 1 && a * h < g - 1)
      return dt_error_set(err, NULL, 0, 0,
                          "a dragonfly of %ld groups needs at least %ld global links per group to join every pair "
                          "of groups, it has routers_per_group x global_links_per_router = %ld x %ld = %ld",
                          g, g - 1, a, h, a * h);
    long routers = g * a;
    if (routers > 1000000)
      return dt_error_set(err, NULL, 0, 0, "a dragonfly of %ld routers is too large (at most 1000000)", routers);
    s->groups = (int)g;
    s->routers_per_group = (int)a;
    s->global_per_pair = g > 1 ? (int)(a * h / (g - 1)) : 0;
    s->leaves = (int)routers;
    s->leaves_per_rail = (int)routers;
    s->down_ports = (int)(pr * p->nics_per_node);
    s->capacity = routers * pr * p->nics_per_node;
    if ((long)p->nodes > routers * pr)
      return dt_error_set(err, NULL, 0, 0,
                          "a dragonfly of %ld groups x %ld routers x %ld nodes per router holds at most %ld nodes, "
                          "the platform has %d",
                          g, a, pr, routers * pr, p->nodes);
    return DT_OK;
  }

  if (p->topology == DT_NET_SINGLE_SWITCH) {
    s->down_ports = s->nics;
    s->leaves = 1;
    s->leaves_per_rail = 1;
    s->capacity = nics;
    return DT_OK;
  }

  /* Fat-tree: the leaf splits its radix R into k down-ports for every up-port (k:1 oversubscription). */
  long r = p->radix, k = p->oversubscription;
  if (r < 2 || k < 1)
    return dt_error_set(err, NULL, 0, 0, "fat-tree needs a radix of at least 2 and an oversubscription of at least 1");
  if (r % (k + 1) != 0)
    return dt_error_set(err, NULL, 0, 0,
                        "radix %ld with oversubscription %ld does not split into whole ports: down-ports "
                        "radix*k/(k+1) = %ld*%ld/%ld and up-ports radix/(k+1) = %ld/%ld must be integers",
                        r, k, r, k, k + 1, r, k + 1);
  if (p->levels != 2 && p->levels != 3)
    return dt_error_set(err, NULL, 0, 0, "fat-tree levels must be 2 or 3, found %d", p->levels);
  if (p->levels == 3 && r % 2 != 0)
    return dt_error_set(err, NULL, 0, 0, "a 3-level fat-tree needs an even radix, found %ld", r);
  long d = r * k / (k + 1), u = r / (k + 1);
  s->down_ports = (int)d;
  s->up_ports = (int)u;

  long rails = p->wiring == DT_WIRING_RAIL ? p->nics_per_node : 1;
  long leaves_per_rail, leaves;
  if (p->wiring == DT_WIRING_RAIL) {
    /* NIC i of every node goes to the leaves of rail i: a rail holds `nodes` NICs */
    leaves_per_rail = ceil_div(p->nodes, d);
    leaves = rails * leaves_per_rail;
  } else {
    leaves = ceil_div(nics, d);
    leaves_per_rail = leaves;
  }

  /* The largest number of leaves the upper levels can connect: a 2-level spine has R ports, one per leaf;
   * a 3-level tree has at most R pods (a core has one port per pod) of R/2 leaves. */
  long max_leaves;
  if (p->levels == 2) {
    max_leaves = r;
    s->spines = (int)u;
  } else {
    long half = r / 2;
    max_leaves = r * half;
    s->aggs_per_pod = (int)u;
    s->pods = (int)ceil_div(leaves, half);
  }
  /* With rail wiring every rail gets the same number of leaves, so a rail may use max_leaves/rails. */
  s->capacity = (max_leaves / rails) * d * rails;
  if (nics > s->capacity)
    return dt_error_set(err, NULL, 0, 0,
                        "a %d-level fat-tree of radix %ld with oversubscription %ld:1 and %s wiring holds at most "
                        "%ld NICs, the platform has %ld",
                        p->levels, r, k, p->wiring == DT_WIRING_RAIL ? "rail" : "node", s->capacity, nics);
  s->leaves = (int)leaves;
  s->leaves_per_rail = (int)leaves_per_rail;
  if (p->levels == 3)
    s->spines = s->pods > 1 ? (int)(u * (r / 2)) : 0;
  return DT_OK;
}

int dt_platform_leaf_of_nic(const dt_platform *p, const dt_fabric_shape *s, int global_nic)
{
  if (!p || !s || global_nic < 0 || global_nic >= s->nics || s->down_ports <= 0)
    return -1;
  if (p->topology == DT_NET_SINGLE_SWITCH)
    return 0;
  if (p->topology == DT_NET_DRAGONFLY)
    return global_nic / p->nics_per_node / p->nodes_per_router;
  if (p->wiring == DT_WIRING_RAIL) {
    int rail = global_nic % p->nics_per_node;
    int node = global_nic / p->nics_per_node;
    return rail * s->leaves_per_rail + node / s->down_ports;
  }
  return global_nic / s->down_ports;
}

int *dt_platform_mesh_distances(const dt_platform *p)
{
  int g = p->gpus_per_node;
  size_t gg = (size_t)g * (size_t)g;
  int *dist = dt_xmalloc(gg * sizeof *dist);
  for (size_t i = 0; i < gg; i++)
    dist[i] = -1;
  /* adjacency as a g x g matrix: the mesh is a node's GPUs, a few dozen at most in practice */
  unsigned char *adj = dt_xcalloc(gg, 1);
  for (int i = 0; i < p->n_nvlinks; i++) {
    int a = p->nvlinks[i].a, b = p->nvlinks[i].b;
    if (a < 0 || b < 0 || a >= g || b >= g || a == b)
      continue;
    adj[(size_t)a * g + b] = adj[(size_t)b * g + a] = 1;
  }
  int *queue = dt_xmalloc((size_t)g * sizeof *queue);
  for (int src = 0; src < g; src++) {
    int *d = dist + (size_t)src * g;
    int head = 0, tail = 0;
    d[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
      int u = queue[head++];
      for (int v = 0; v < g; v++)
        if (adj[(size_t)u * g + v] && d[v] < 0) {
          d[v] = d[u] + 1;
          queue[tail++] = v;
        }
    }
  }
  free(queue);
  free(adj);
  return dist;
}

int dt_platform_pcie_switches(const dt_platform *p)
{
  if (!p || p->intra_kind != DT_INTRA_PCIE || p->gpus_per_switch <= 0)
    return 0;
  return p->gpus_per_node / p->gpus_per_switch;
}

int dt_platform_pcie_switch_of_nic(const dt_platform *p, int local_nic)
{
  if (!p || p->intra_kind != DT_INTRA_PCIE || p->gpus_per_switch <= 0 || p->nics_per_node <= 0)
    return 0;
  return (int)((long)local_nic * p->gpus_per_node / p->nics_per_node / p->gpus_per_switch);
}

const char *dt_platform_intra_kind_name(dt_intra_kind kind)
{
  static const char *const names[] = {[DT_INTRA_NVSWITCH] = "nvswitch", [DT_INTRA_NVLINK_MESH] = "nvlink-mesh",
                                      [DT_INTRA_PCIE] = "pcie"};
  return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

const char *dt_platform_topology_name(dt_net_topology topology)
{
  static const char *const names[] = {[DT_NET_NONE] = "none", [DT_NET_SINGLE_SWITCH] = "single-switch",
                                      [DT_NET_FAT_TREE] = "fat-tree", [DT_NET_DRAGONFLY] = "dragonfly"};
  return (unsigned)topology < sizeof names / sizeof names[0] ? names[topology] : "?";
}

/* Defaults of the NCCL model, from NCCL 2.19-2.23 src/graph/tuning.cc (its cost model; the values are read
 * there, not fitted): base latency per protocol is the ring's baseLat (LL 6.6 us, LL128 14 us, Simple 8.4 us);
 * per-step latencies are hwLat for rings over NVLink (LL .6, LL128 1.9, Simple 3.4 us) and over the network
 * (LL 2.7, LL128 4.0, Simple 14 us); protocol efficiencies are the bus-bandwidth ratios the tuner applies to a
 * ring: LL 1/4, LL128 0.92 (120/128 bytes of data per line, less overhead), Simple 1. Per algorithm: the tree
 * is derated by .92 as NCCL derates it; NVLS and NVLS-tree pay the 25 us NVLink latency NCCL gives them (less
 * the Simple base latency already counted); CollNet pays ~15 us of in-network round trip. docs/platform.md. */
void dt_platform_nccl_defaults(dt_platform *p)
{
  p->channels = 0;
  p->pxn = 1;
  p->overlap_tax = 0;
  static const dt_proto_model protos[DT_PROTO_COUNT] = {
      [DT_PROTO_LL] = {6.6e-6, 0.6e-6, 2.7e-6, 0.25, 5.0e-6},
      [DT_PROTO_LL128] = {14.0e-6, 1.9e-6, 4.0e-6, 0.92, 8.5e-6},
      [DT_PROTO_SIMPLE] = {8.4e-6, 3.4e-6, 14.0e-6, 1.0, 14.0e-6},
  };
  memcpy(p->protocols, protos, sizeof protos);
  for (int a = 0; a < DT_ALGO_COUNT; a++)
    p->algorithms[a] = (dt_algo_model){0, 1.0};
  p->algorithms[DT_ALGO_TREE].efficiency = 0.92;
  p->algorithms[DT_ALGO_NVLS].latency = 16.6e-6;
  p->algorithms[DT_ALGO_NVLS_TREE].latency = 16.6e-6;
  p->algorithms[DT_ALGO_COLLNET].latency = 15e-6;
  /* PAT: its own base latency (replaces the protocol's) and the 0.75 bandwidth derating of NCCL 2.30's tuner */
  p->algorithms[DT_ALGO_PAT].latency = 8.0e-6;
  p->algorithms[DT_ALGO_PAT].efficiency = 0.75;
  p->nccl_version = DT_NCCL_VERSION_DEFAULT;
}

int dt_nccl_version_parse(const char *text)
{
  int v[3] = {0, 0, 0}, n = 0;
  const char *s = text;
  if (!s)
    return -1;
  while (n < 3) {
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9')) /* no leading zero: "2.023" */
      return -1;
    long x = 0;
    while (*s >= '0' && *s <= '9' && x < 1000)
      x = x * 10 + (*s++ - '0');
    if (x > 99)
      return -1;
    v[n++] = (int)x;
    if (*s != '.')
      break;
    s++;
  }
  if (*s == '-') { /* a package revision: "2.17.1-1" */
    s++;
    if (*s < '0' || *s > '9')
      return -1;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  if (*s || n < 2 || v[0] != 2)
    return -1;
  return v[0] * 10000 + v[1] * 100 + v[2];
}

int dt_platform_channels(const dt_platform *p)
{
  if (!p || !p->nccl)
    return 1;
  if (p->channels > 0)
    return p->channels;
  return p->nics_per_node > 1 ? p->nics_per_node : 1;
}

static const char *const proto_names[DT_PROTO_COUNT] = {"LL", "LL128", "Simple"};
static const char *const algo_names[DT_ALGO_COUNT] = {"auto", "ring",   "tree",  "nvls",  "nvls-tree",
                                                      "hier", "collnet", "chain", "direct", "pat"};

const char *dt_proto_name(dt_proto proto)
{
  return proto >= 0 && proto < DT_PROTO_COUNT ? proto_names[proto] : "?";
}

int dt_proto_from_name(const char *name)
{
  for (int i = 0; name && i < DT_PROTO_COUNT; i++)
    if (strcasecmp(name, proto_names[i]) == 0)
      return i;
  return -1;
}

const char *dt_algo_name(dt_algo algo)
{
  return algo >= 0 && algo < DT_ALGO_COUNT ? algo_names[algo] : "?";
}

int dt_algo_from_name(const char *name)
{
  for (int i = 0; name && i < DT_ALGO_COUNT; i++)
    if (strcasecmp(name, algo_names[i]) == 0)
      return i;
  return -1;
}

const char *dt_algo_list(char *buf, size_t size, int with_auto, const char *last_sep)
{
  size_t len = 0;
  if (size == 0)
    return buf;
  buf[0] = '\0';
  for (int i = with_auto ? 0 : 1; i < DT_ALGO_COUNT && len < size; i++) {
    const char *sep = i == (with_auto ? 0 : 1) ? "" : i + 1 == DT_ALGO_COUNT ? last_sep : ", ";
    int w = snprintf(buf + len, size - len, "%s%s", sep, algo_names[i]);
    len = w < 0 ? size : len + (size_t)w;
  }
  return buf;
}
