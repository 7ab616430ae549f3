/* The platform as a table of split-duplex links and O(1) routes between GPUs (DESIGN.md §3, docs/platform.md).
 * Nothing here is stored per pair of GPUs of the cluster: a route is recomputed from the GPU indices, the NIC
 * of each GPU, the leaf (or dragonfly router) of each NIC and the destination-mod-k uplink rule, so 8,192+ GPUs
 * cost a few arrays. The one per-pair table is the nvlink-mesh next hop, per pair of GPUs of one node. */
#include "dt_topology.h"

#include "../common/dt_util.h"

#include <stdio.h>
#include <stdlib.h>

struct dt_topology {
  const dt_platform *p; /* borrowed: must outlive the topology */
  dt_fabric_shape shape;
  int gpus;             /* nodes * gpus_per_node */
  int nics;             /* NICs that carry traffic: 0 with a single node */
  int half_radix;       /* 3 levels: leaves per pod and aggregation up-ports (R/2) */
  int *leaf_of_nic;     /* [nics] (dragonfly: the router) */
  int *mesh_next;       /* nvlink-mesh [g*g]: next GPU from a towards b on the chosen fewest-hop path */
  int *mesh_link;       /* nvlink-mesh [g*g]: index in p->nvlinks of the link a-b, -1 when not adjacent */
  int switches;         /* pcie: PCIe switches per node */
  /* Link index ranges, in table order (dt_topology.h): GPU ports, NICs, then cables. */
  size_t off_nic;       /* first NIC link */
  size_t off_nic_cable; /* first NIC-to-leaf (or NIC-to-switch) cable, one per NIC */
  size_t off_up1;       /* first leaf-spine (2 levels) or leaf-agg (3 levels) cable: leaf * up + j;
                         * dragonfly: local links, group * a(a-1)/2 + pair(i, j) */
  size_t n_up1;
  size_t off_up2;       /* first agg-core cable (3 levels, more than one pod): (pod * u + j) * R/2 + m;
                         * dragonfly: global links, pair(g, t) * m + r */
  size_t n_up2;
  size_t off_intra;     /* first nvlink-mesh link (node * n_nvlinks + i) or pcie CPU link (node * switches + s) */
  size_t n_intra;
  size_t count;
  dt_link *links;
  uint8_t *down;        /* [count] 1: the link is failed (dt_topology_set_down), NULL until one is */
  size_t ndown;         /* links marked down: routes look for detours only when > 0 */
};

static void set_link(dt_link *l, dt_link_kind kind, double bandwidth, double latency)
{
  l->kind = kind;
  l->bandwidth = bandwidth;
  l->latency = latency;
}

/* The nvlink-mesh next-hop table: from a towards b, the lowest-numbered neighbour of a that is one hop closer
 * to b. Repeated, this gives the fewest-hop path whose sequence of GPUs is lexicographically smallest, so
 * routes are deterministic (docs/platform.md). */
static int build_mesh(dt_topology *t, dt_error *err)
{
  const dt_platform *p = t->p;
  size_t g = (size_t)p->gpus_per_node;
  int *dist = dt_platform_mesh_distances(p);
  t->mesh_link = dt_xmalloc(g * g * sizeof *t->mesh_link);
  t->mesh_next = dt_xmalloc(g * g * sizeof *t->mesh_next);
  for (size_t i = 0; i < g * g; i++)
    t->mesh_link[i] = t->mesh_next[i] = -1;
  for (int i = 0; i < p->n_nvlinks; i++) {
    size_t a = (size_t)p->nvlinks[i].a, b = (size_t)p->nvlinks[i].b;
    if (a >= g || b >= g || a == b) {
      free(dist);
      return dt_error_set(err, "", 0, 0, "nvlink-mesh link %d names GPUs %zu and %zu of %zu", i, a, b, g);
    }
    t->mesh_link[a * g + b] = t->mesh_link[b * g + a] = i;
  }
  for (size_t a = 0; a < g; a++)
    for (size_t b = 0; b < g; b++) {
      int d = dist[a * g + b];
      if (d < 0 || d > DT_ROUTE_MAX_HOPS) {
        free(dist);
        return dt_error_set(err, "", 0, 0, "the NVLink mesh has no route of at most %d hops from GPU %zu to GPU %zu",
                            DT_ROUTE_MAX_HOPS, a, b);
      }
      if (a == b)
        continue;
      for (size_t n = 0; n < g; n++)
        if (t->mesh_link[a * g + n] >= 0 && dist[n * g + b] == d - 1) {
          t->mesh_next[a * g + b] = (int)n;
          break;
        }
    }
  free(dist);
  return DT_OK;
}

/* Index of the unordered pair i < j among the n(n-1)/2 pairs of n items, row by row. */
static size_t pair_index(size_t i, size_t j, size_t n)
{
  return i * (2 * n - i - 1) / 2 + (j - i - 1);
}

int dt_topology_build(const dt_platform *p, dt_topology **out, dt_error *err)
{
  *out = NULL;
  if (p == NULL || p->nodes < 1 || p->gpus_per_node < 1)
    return dt_error_set(err, "", 0, 0, "platform has no GPUs");
  if ((long long)p->nodes * p->gpus_per_node > DT_TOPOLOGY_MAX_GPUS)
    return dt_error_set(err, p->source ? p->source : "", 0, 0, "platform has %lld GPUs (%d nodes x %d): more than "
                        "the %d dtsim builds", (long long)p->nodes * p->gpus_per_node, p->nodes, p->gpus_per_node,
                        DT_TOPOLOGY_MAX_GPUS);
  dt_phase("building the topology of platform %s", p->source ? p->source : p->name ? p->name : "");

  dt_topology *t = dt_xcalloc(1, sizeof *t);
  t->p = p;
  t->gpus = p->nodes * p->gpus_per_node;
  if (p->nodes > 1) {
    if (p->nics_per_node < 1 || p->gpus_per_node % p->nics_per_node != 0) {
      dt_topology_free(t);
      return dt_error_set(err, "", 0, 0, "'nics.per_node' (%d) must divide 'gpus_per_node' (%d)", p->nics_per_node,
                          p->gpus_per_node);
    }
    if (p->topology != DT_NET_SINGLE_SWITCH && p->topology != DT_NET_FAT_TREE && p->topology != DT_NET_DRAGONFLY) {
      dt_topology_free(t);
      return dt_error_set(err, "", 0, 0, "platform with %d nodes has no 'network.topology'", p->nodes);
    }
    if (p->topology == DT_NET_FAT_TREE && p->levels != 2 && p->levels != 3) {
      dt_topology_free(t);
      return dt_error_set(err, "", 0, 0, "'network.levels' must be 2 or 3, found %d", p->levels);
    }
    if (dt_platform_fabric_shape(p, &t->shape, err) != DT_OK) {
      dt_topology_free(t);
      return DT_ERR;
    }
    t->nics = p->nodes * p->nics_per_node;
  }
  t->half_radix = p->radix / 2;
  if (p->intra_kind == DT_INTRA_PCIE) {
    t->switches = dt_platform_pcie_switches(p);
    if (t->switches < 1 || p->gpus_per_node % p->gpus_per_switch != 0) {
      dt_topology_free(t);
      return dt_error_set(err, "", 0, 0, "'intra_node.gpus_per_switch' (%d) must divide 'gpus_per_node' (%d)",
                          p->gpus_per_switch, p->gpus_per_node);
    }
  }
  if (p->intra_kind == DT_INTRA_NVLINK_MESH && build_mesh(t, err) != DT_OK) {
    dt_topology_free(t);
    return DT_ERR;
  }

  t->off_nic = (size_t)t->gpus;
  t->off_nic_cable = t->off_nic + (size_t)t->nics;
  t->off_up1 = t->off_nic_cable + (size_t)t->nics;
  if (t->nics > 0 && p->topology == DT_NET_DRAGONFLY) {
    size_t g = (size_t)t->shape.groups, a = (size_t)t->shape.routers_per_group;
    t->n_up1 = g * (a * (a - 1) / 2);
    t->n_up2 = g * (g - 1) / 2 * (size_t)t->shape.global_per_pair;
  }
  if (t->nics > 0 && p->topology == DT_NET_FAT_TREE) {
    if (p->levels == 2) {
      t->n_up1 = (size_t)t->shape.leaves * (size_t)t->shape.spines;
    } else {
      t->n_up1 = (size_t)t->shape.leaves * (size_t)t->shape.aggs_per_pod;
      if (t->shape.pods > 1)
        t->n_up2 = (size_t)t->shape.pods * (size_t)t->shape.aggs_per_pod * (size_t)t->half_radix;
    }
  }
  t->off_up2 = t->off_up1 + t->n_up1;
  t->off_intra = t->off_up2 + t->n_up2;
  if (p->intra_kind == DT_INTRA_NVLINK_MESH)
    t->n_intra = (size_t)p->nodes * (size_t)p->n_nvlinks;
  else if (p->intra_kind == DT_INTRA_PCIE && t->switches > 1)
    t->n_intra = (size_t)p->nodes * (size_t)t->switches;
  t->count = t->off_intra + t->n_intra;
  if (t->count > DT_TOPOLOGY_MAX_LINKS) {
    size_t n = t->count;
    dt_topology_free(t);
    return dt_error_set(err, p->source ? p->source : "", 0, 0, "platform would have %zu links: more than the %d dtsim "
                        "builds (the network: %s)", n, DT_TOPOLOGY_MAX_LINKS,
                        p->topology == DT_NET_DRAGONFLY ? "a dragonfly has groups x a(a-1)/2 local links and "
                        "G(G-1)/2 x global_per_pair global ones" : "fewer nodes or a smaller radix");
  }

  t->leaf_of_nic = dt_xcalloc(t->nics > 0 ? (size_t)t->nics : 1, sizeof *t->leaf_of_nic);
  for (int n = 0; n < t->nics; n++)
    t->leaf_of_nic[n] = p->topology != DT_NET_SINGLE_SWITCH ? dt_platform_leaf_of_nic(p, &t->shape, n) : 0;

  /* The model factors are applied once here, so every consumer (SimGrid links, replay alpha terms) sees the
   * calibrated values. The intra-node latency is the route's total: half on each GPU port. */
  double bf = p->bandwidth_factor, lf = p->latency_factor;
  double nf = p->network_bandwidth_factor > 0 ? p->network_bandwidth_factor : bf; /* NICs and fabric */
  t->links = dt_xcalloc(t->count > 0 ? t->count : 1, sizeof *t->links);
  /* A mesh GPU's own port carries only its loopback: its bandwidth is the GPU's total NVLink bandwidth. */
  double *port_bw = dt_xcalloc((size_t)p->gpus_per_node, sizeof *port_bw);
  for (int g = 0; g < p->gpus_per_node; g++)
    port_bw[g] = p->intra_bandwidth;
  if (p->intra_kind == DT_INTRA_NVLINK_MESH) {
    for (int g = 0; g < p->gpus_per_node; g++)
      port_bw[g] = 0;
    for (int i = 0; i < p->n_nvlinks; i++) {
      port_bw[p->nvlinks[i].a] += p->nvlinks[i].count * p->nvlink_bandwidth;
      port_bw[p->nvlinks[i].b] += p->nvlinks[i].count * p->nvlink_bandwidth;
    }
  }
  for (size_t i = 0; i < (size_t)t->gpus; i++)
    set_link(&t->links[i], DT_LINK_GPU, port_bw[i % (size_t)p->gpus_per_node] * bf, p->intra_latency / 2 * lf);
  free(port_bw);
  for (size_t i = t->off_nic; i < t->off_nic_cable; i++)
    set_link(&t->links[i], DT_LINK_NIC, p->nic_bandwidth * nf, p->nic_latency * lf);
  for (size_t i = t->off_nic_cable; i < t->off_up1; i++)
    set_link(&t->links[i], DT_LINK_CABLE, p->link_bandwidth * nf, p->link_latency * lf);
  for (size_t i = t->off_up1; i < t->off_intra; i++) {
    if (p->topology == DT_NET_DRAGONFLY && i < t->off_up2)
      set_link(&t->links[i], DT_LINK_LOCAL, p->local_bandwidth * nf, p->local_latency * lf);
    else if (p->topology == DT_NET_DRAGONFLY)
      set_link(&t->links[i], DT_LINK_GLOBAL, p->global_bandwidth * nf, p->global_latency * lf);
    else
      set_link(&t->links[i], DT_LINK_CABLE, p->link_bandwidth * nf, p->link_latency * lf);
  }
  for (size_t i = t->off_intra; i < t->count; i++) {
    size_t k = (i - t->off_intra);
    if (p->intra_kind == DT_INTRA_NVLINK_MESH)
      set_link(&t->links[i], DT_LINK_NVLINK, p->nvlinks[k % (size_t)p->n_nvlinks].count * p->nvlink_bandwidth * bf,
               p->intra_latency * lf);
    else
      set_link(&t->links[i], DT_LINK_CPU, p->cpu_bandwidth * bf, p->cpu_latency / 2 * lf);
  }

  *out = t;
  return DT_OK;
}

void dt_topology_free(dt_topology *t)
{
  if (t == NULL)
    return;
  free(t->leaf_of_nic);
  free(t->mesh_next);
  free(t->mesh_link);
  free(t->links);
  free(t->down);
  free(t);
}

size_t dt_topology_link_count(const dt_topology *t)
{
  return t->count;
}

const dt_link *dt_topology_link(const dt_topology *t, size_t index)
{
  return index < t->count ? &t->links[index] : NULL;
}

dt_link_class dt_topology_link_class(const dt_topology *t, size_t index)
{
  const dt_platform *p = t->p;
  if (index >= t->count)
    return DT_LC_COUNT;
  if (index < t->off_nic)
    return p->intra_kind == DT_INTRA_NVSWITCH ? DT_LC_NVSWITCH_PORT
           : p->intra_kind == DT_INTRA_PCIE   ? DT_LC_PCIE
                                              : DT_LC_GPU_PORT;
  if (index < t->off_nic_cable)
    return DT_LC_GPU_NIC;
  if (index < t->off_up1)
    return p->topology == DT_NET_SINGLE_SWITCH ? DT_LC_NIC_SWITCH
           : p->topology == DT_NET_DRAGONFLY   ? DT_LC_NIC_ROUTER
                                               : DT_LC_NIC_LEAF;
  if (index < t->off_up2)
    return p->topology == DT_NET_DRAGONFLY ? DT_LC_DF_LOCAL : p->levels == 3 ? DT_LC_LEAF_AGG : DT_LC_LEAF_SPINE;
  if (index < t->off_intra)
    return p->topology == DT_NET_DRAGONFLY ? DT_LC_DF_GLOBAL : DT_LC_AGG_CORE;
  return p->intra_kind == DT_INTRA_NVLINK_MESH ? DT_LC_NVLINK : DT_LC_PCIE_CPU;
}

const char *dt_link_class_name(dt_link_class c)
{
  static const char *const names[DT_LC_COUNT] = {
      "nvswitch-port", "pcie", "gpu-port", "nvlink", "pcie-cpu", "gpu-nic", "nic-leaf", "nic-switch",
      "nic-router", "leaf-spine", "leaf-agg", "agg-core", "dragonfly-local", "dragonfly-global"};
  return (unsigned)c < DT_LC_COUNT ? names[c] : "?";
}

const char *dt_topology_link_name(const dt_topology *t, size_t index, char *buf, size_t size)
{
  const dt_platform *p = t->p;
  if (size == 0)
    return buf;
  if (index < t->off_nic) {
    snprintf(buf, size, "gpu%zu", index);
  } else if (index < t->off_nic_cable) {
    size_t n = index - t->off_nic;
    snprintf(buf, size, "nic%zu.%zu", n / (size_t)p->nics_per_node, n % (size_t)p->nics_per_node);
  } else if (index < t->off_up1) {
    size_t n = index - t->off_nic_cable;
    if (p->topology == DT_NET_SINGLE_SWITCH)
      snprintf(buf, size, "cable:nic%zu-switch", n);
    else if (p->topology == DT_NET_DRAGONFLY)
      snprintf(buf, size, "cable:nic%zu-router%d", n, t->leaf_of_nic[n]);
    else
      snprintf(buf, size, "cable:nic%zu-leaf%d", n, t->leaf_of_nic[n]);
  } else if (index < t->off_intra && p->topology == DT_NET_DRAGONFLY) {
    /* local links: routers i < j of group g; global links: groups g < h, parallel link r */
    int local = index < t->off_up2;
    size_t k = local ? index - t->off_up1 : (index - t->off_up2) / (size_t)t->shape.global_per_pair;
    size_t n = local ? (size_t)t->shape.routers_per_group : (size_t)t->shape.groups;
    size_t per = n * (n - 1) / 2, grp = local ? k / per : 0, q = local ? k % per : k, i = 0;
    while (q >= n - 1 - i) {
      q -= n - 1 - i;
      i++;
    }
    size_t j = i + 1 + q;
    if (local)
      snprintf(buf, size, "cable:router%zu-router%zu", grp * n + i, grp * n + j);
    else
      snprintf(buf, size, "cable:group%zu-group%zu.%zu", i, j, (index - t->off_up2) % (size_t)t->shape.global_per_pair);
  } else if (index >= t->off_intra && index < t->count) {
    size_t k = index - t->off_intra;
    if (p->intra_kind == DT_INTRA_NVLINK_MESH) {
      const dt_nvlink *l = &p->nvlinks[k % (size_t)p->n_nvlinks];
      snprintf(buf, size, "nvlink%zu.%d-%d", k / (size_t)p->n_nvlinks, l->a, l->b);
    } else {
      snprintf(buf, size, "cpulink%zu.%zu", k / (size_t)t->switches, k % (size_t)t->switches);
    }
  } else if (index < t->off_up2) {
    size_t i = index - t->off_up1;
    if (p->levels == 2) {
      size_t s = (size_t)t->shape.spines;
      snprintf(buf, size, "cable:leaf%zu-spine%zu", i / s, i % s);
    } else {
      /* aggregation switches are numbered pod * u + j */
      size_t u = (size_t)t->shape.aggs_per_pod, leaf = i / u, j = i % u;
      size_t pod = leaf / (size_t)t->half_radix;
      snprintf(buf, size, "cable:leaf%zu-agg%zu", leaf, pod * u + j);
    }
  } else if (index < t->off_intra) {
    /* core j*R/2 + m is wired to aggregation switch j of every pod (k-ary fat-tree) */
    size_t i = index - t->off_up2, h = (size_t)t->half_radix;
    size_t agg = i / h, m = i % h, j = agg % (size_t)t->shape.aggs_per_pod;
    snprintf(buf, size, "cable:agg%zu-core%zu", agg, j * h + m);
  } else {
    snprintf(buf, size, "?%zu", index);
  }
  return buf;
}

static void add_hop(dt_hop *hops, int *n, size_t link, int dir)
{
  hops[*n].link = (uint32_t)link;
  hops[*n].dir = (uint8_t)dir;
  (*n)++;
}

/* Local hop between routers x and y (global indices) of one group; nothing when x == y. */
static void local_hop(const dt_topology *t, size_t x, size_t y, dt_hop *hops, int *n)
{
  if (x == y)
    return;
  size_t a = (size_t)t->shape.routers_per_group, g = x / a, i = x % a, j = y % a;
  size_t lo = i < j ? i : j, hi = i < j ? j : i;
  add_hop(hops, n, t->off_up1 + g * (a * (a - 1) / 2) + pair_index(lo, hi, a), i < j ? 0 : 1);
}

/* Router holding global link r between group g and group h (g != h), in group g: in the palm-tree
 * arrangement, group g's global port q = r*(G-1) + ((h - g - 1) mod G) sits on router q / global_links_per_router
 * of the group. */
static size_t gateway(const dt_topology *t, size_t g, size_t h, size_t r)
{
  size_t G = (size_t)t->shape.groups, a = (size_t)t->shape.routers_per_group;
  size_t q = r * (G - 1) + (h + G - g - 1) % G;
  return g * a + q / (size_t)t->p->global_links_per_router;
}

static size_t pick_up(const uint8_t *ok, size_t n, size_t key, size_t first); /* the detours, below */

/* Minimal dragonfly route between NICs a and b (the cables to their routers are added by the caller): same
 * router: nothing; same group: one local hop; other group: local hop to the source group's gateway, the
 * global link, local hop from the destination group's gateway. Of the m parallel global links between two
 * groups, link (b mod m) is taken (destination-mod-k, as the fat-tree uplinks). */
static void dragonfly_route(const dt_topology *t, int a, int b, dt_hop *hops, int *n)
{
  size_t A = (size_t)t->shape.routers_per_group;
  size_t ra = (size_t)t->leaf_of_nic[a], rb = (size_t)t->leaf_of_nic[b];
  size_t ga = ra / A, gb = rb / A;
  if (ga == gb) {
    local_hop(t, ra, rb, hops, n);
    return;
  }
  size_t m = (size_t)t->shape.global_per_pair, r = (size_t)b % m;
  size_t lo = ga < gb ? ga : gb, hi = ga < gb ? gb : ga;
  size_t first = t->off_up2 + pair_index(lo, hi, (size_t)t->shape.groups) * m;
  if (t->ndown > 0 && t->down[first + r]) { /* the (b mod k)-th of the k parallel global links still up */
    uint8_t *ok = dt_xmalloc(m);
    for (size_t q = 0; q < m; q++)
      ok[q] = !t->down[first + q];
    r = pick_up(ok, m, (size_t)b, r);
    free(ok);
  }
  size_t xa = gateway(t, ga, gb, r), xb = gateway(t, gb, ga, r);
  local_hop(t, ra, xa, hops, n);
  add_hop(hops, n, first + r, ga < gb ? 0 : 1);
  local_hop(t, xb, rb, hops, n);
}

/* Detours around failed cables (dt_topology_set_down, docs/whatif.md): the destination-mod-k choice stays when
 * its cables are up; otherwise the choice is made again, with the same key, among the k candidates whose cables
 * are all up (the (key mod k)-th of them), as a subnet manager recomputing D-mod-k over the surviving uplinks.
 * With no candidate left the first choice is kept: the route crosses a failed link and dt_topology_route reports
 * it unreachable. */
static int is_down(const dt_topology *t, size_t link)
{
  return t->down[link];
}

static size_t pick_up(const uint8_t *ok, size_t n, size_t key, size_t first)
{
  if (ok[first])
    return first;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += ok[i];
  if (k == 0)
    return first;
  size_t want = key % k;
  for (size_t i = 0; i < n; i++)
    if (ok[i] && want-- == 0)
      return i;
  return first;
}

/* 2 levels: a spine whose cables to leaves la and lb are both up. */
static size_t detour_spine(const dt_topology *t, size_t la, size_t lb, size_t key, size_t first)
{
  size_t s = (size_t)t->shape.spines;
  uint8_t *ok = dt_xmalloc(s);
  for (size_t j = 0; j < s; j++)
    ok[j] = !is_down(t, t->off_up1 + la * s + j) && !is_down(t, t->off_up1 + lb * s + j);
  size_t r = pick_up(ok, s, key, first);
  free(ok);
  return r;
}

/* 3 levels, agg-core stage: core uplink m of aggregation switches xa and xb (global indices pod * u + j) both up. */
static size_t detour_core(const dt_topology *t, size_t xa, size_t xb, size_t key, size_t first)
{
  size_t h = (size_t)t->half_radix;
  uint8_t *ok = dt_xmalloc(h);
  for (size_t m = 0; m < h; m++)
    ok[m] = !is_down(t, t->off_up2 + xa * h + m) && !is_down(t, t->off_up2 + xb * h + m);
  size_t r = pick_up(ok, h, key, first);
  free(ok);
  return r;
}

/* 3 levels, leaf-agg stage: aggregation index j whose leaf cables are up and, across pods, that still has a core
 * whose two cables are up. */
static size_t detour_agg(const dt_topology *t, size_t la, size_t lb, size_t key, size_t first)
{
  size_t u = (size_t)t->shape.aggs_per_pod, h = (size_t)t->half_radix, pa = la / h, pb = lb / h;
  uint8_t *ok = dt_xmalloc(u);
  for (size_t j = 0; j < u; j++) {
    ok[j] = !is_down(t, t->off_up1 + la * u + j) && !is_down(t, t->off_up1 + lb * u + j);
    if (ok[j] && pa != pb) {
      int core = 0;
      for (size_t m = 0; m < h && !core; m++)
        core = !is_down(t, t->off_up2 + (pa * u + j) * h + m) && !is_down(t, t->off_up2 + (pb * u + j) * h + m);
      ok[j] = (uint8_t)core;
    }
  }
  size_t r = pick_up(ok, u, key, first);
  free(ok);
  return r;
}

/* The fabric part of an inter-node route, from NIC a's cable up to NIC b's cable down.
 * Going up, every level picks its uplink from the destination NIC b (destination-mod-k, DESIGN.md §3):
 * the leaf takes uplink b mod u; in a 3-level tree the aggregation switch takes (b / u) mod (R/2), the
 * next digit of b (Zahavi's D-mod-k), so that b mod u and the core choice are not correlated and every
 * core carries traffic. Going down, the path is the only one that reaches b from the chosen top switch. */
static void fabric_route(const dt_topology *t, int a, int b, dt_hop *hops, int *n)
{
  const dt_platform *p = t->p;
  /* The destination's index in the fabric's port order: NICs take leaf down-ports node by node (wiring
   * node: the global NIC index) or rail by rail (wiring rail: rail * nodes + node). With rail wiring the
   * global index node * nics_per_node + rail would put every destination of a rail on the same few
   * uplinks (all multiples of nics_per_node), which no rail-optimized fabric does. */
  size_t key = (size_t)b;
  if (p->wiring == DT_WIRING_RAIL)
    key = (size_t)(b % p->nics_per_node) * (size_t)p->nodes + (size_t)(b / p->nics_per_node);
  add_hop(hops, n, t->off_nic_cable + (size_t)a, 0);
  if (p->topology == DT_NET_DRAGONFLY)
    dragonfly_route(t, a, b, hops, n);
  if (p->topology == DT_NET_FAT_TREE) {
    int la = t->leaf_of_nic[a], lb = t->leaf_of_nic[b];
    if (la != lb) {
      if (p->levels == 2) {
        size_t s = (size_t)t->shape.spines, spine = key % s;
        if (t->ndown > 0)
          spine = detour_spine(t, (size_t)la, (size_t)lb, key, spine);
        add_hop(hops, n, t->off_up1 + (size_t)la * s + spine, 0);
        add_hop(hops, n, t->off_up1 + (size_t)lb * s + spine, 1);
      } else {
        size_t u = (size_t)t->shape.aggs_per_pod, j = key % u, h = (size_t)t->half_radix;
        size_t pa = (size_t)la / h, pb = (size_t)lb / h;
        if (t->ndown > 0)
          j = detour_agg(t, (size_t)la, (size_t)lb, key, j);
        add_hop(hops, n, t->off_up1 + (size_t)la * u + j, 0);
        if (pa != pb) {
          size_t m = (key / u) % h;
          if (t->ndown > 0)
            m = detour_core(t, pa * u + j, pb * u + j, key / u, m);
          add_hop(hops, n, t->off_up2 + (pa * u + j) * h + m, 0);
          add_hop(hops, n, t->off_up2 + (pb * u + j) * h + m, 1);
        }
        add_hop(hops, n, t->off_up1 + (size_t)lb * u + j, 1);
      }
    }
  }
  add_hop(hops, n, t->off_nic_cable + (size_t)b, 1);
}

/* pcie: the switch of a node-local GPU (0 for the other kinds). */
static int switch_of_gpu(const dt_topology *t, int local_gpu)
{
  return t->p->intra_kind == DT_INTRA_PCIE ? local_gpu / t->p->gpus_per_switch : 0;
}

/* pcie: from switch sa to switch sb of one node through the CPU (nothing when they are the same). */
static void pcie_cross(const dt_topology *t, int node, int sa, int sb, dt_hop *hops, int *n)
{
  if (sa == sb)
    return;
  size_t base = t->off_intra + (size_t)node * (size_t)t->switches;
  add_hop(hops, n, base + (size_t)sa, 0);
  add_hop(hops, n, base + (size_t)sb, 1);
}

int dt_topology_route(const dt_topology *t, int src, int dst, dt_hop *hops, double *latency, double *bandwidth)
{
  if (src < 0 || dst < 0 || src >= t->gpus || dst >= t->gpus)
    return -1;
  const dt_platform *p = t->p;
  int g = p->gpus_per_node, n = 0;
  int src_node = src / g, dst_node = dst / g;
  if (src_node == dst_node && p->intra_kind == DT_INTRA_NVLINK_MESH && src != dst) {
    /* NVLink hops along the next-hop table; a link a < b is crossed UP from a to b, DOWN from b to a */
    size_t gg = (size_t)g, node_links = t->off_intra + (size_t)src_node * (size_t)p->n_nvlinks;
    int cur = src % g, end = dst % g;
    while (cur != end && n < DT_ROUTE_MAX_HOPS) {
      int next = t->mesh_next[(size_t)cur * gg + (size_t)end];
      add_hop(hops, &n, node_links + (size_t)t->mesh_link[(size_t)cur * gg + (size_t)next], cur < next ? 0 : 1);
      cur = next;
    }
  } else if (src_node == dst_node) {
    /* one switch: src == dst gives the loopback through the GPU's own port; pcie across switches goes up the
     * source switch's CPU link and down the destination's */
    add_hop(hops, &n, (size_t)src, 0);
    pcie_cross(t, src_node, switch_of_gpu(t, src % g), switch_of_gpu(t, dst % g), hops, &n);
    add_hop(hops, &n, (size_t)dst, 1);
  } else {
    int la = dt_platform_nic_of_gpu(p, src % g), lb = dt_platform_nic_of_gpu(p, dst % g);
    int a = src_node * p->nics_per_node + la;
    int b = dst_node * p->nics_per_node + lb;
    if (p->intra_kind == DT_INTRA_PCIE) {
      /* the GPU reaches its NIC through its PCIe switch (and the CPU when the NIC hangs off another one) */
      add_hop(hops, &n, (size_t)src, 0);
      pcie_cross(t, src_node, switch_of_gpu(t, src % g), dt_platform_pcie_switch_of_nic(p, la), hops, &n);
    }
    add_hop(hops, &n, t->off_nic + (size_t)a, 0);
    fabric_route(t, a, b, hops, &n);
    add_hop(hops, &n, t->off_nic + (size_t)b, 1);
    if (p->intra_kind == DT_INTRA_PCIE) {
      pcie_cross(t, dst_node, dt_platform_pcie_switch_of_nic(p, lb), switch_of_gpu(t, dst % g), hops, &n);
      add_hop(hops, &n, (size_t)dst, 1);
    }
  }
  if (t->ndown > 0)
    for (int i = 0; i < n; i++)
      if (t->down[hops[i].link])
        return DT_ROUTE_UNREACHABLE;
  double lat = 0, bw = 0;
  for (int i = 0; i < n; i++) {
    const dt_link *l = &t->links[hops[i].link];
    lat += l->latency;
    if (i == 0 || l->bandwidth < bw)
      bw = l->bandwidth;
  }
  if (latency)
    *latency = lat;
  if (bandwidth)
    *bandwidth = bw;
  return n;
}

void dt_topology_scale_bandwidth(dt_topology *t, size_t index, double factor)
{
  if (index < t->count && factor > 0)
    t->links[index].bandwidth *= factor;
}

void dt_topology_set_down(dt_topology *t, size_t index, int down)
{
  if (index >= t->count)
    return;
  if (!t->down)
    t->down = dt_xcalloc(t->count, 1);
  uint8_t v = down != 0;
  if (t->down[index] != v)
    t->ndown = v ? t->ndown + 1 : t->ndown - 1;
  t->down[index] = v;
}

int dt_topology_is_down(const dt_topology *t, size_t index)
{
  return t->down && index < t->count && t->down[index];
}

const dt_platform *dt_topology_platform(const dt_topology *t)
{
  return t->p;
}

const dt_fabric_shape *dt_topology_shape(const dt_topology *t)
{
  return &t->shape;
}
