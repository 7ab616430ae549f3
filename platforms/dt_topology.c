/* The platform as a table of split-duplex links and O(1) routes between GPUs (DESIGN.md §3).
 * Nothing here is stored per pair: a route is recomputed from the GPU indices, the NIC of each GPU, the
 * leaf of each NIC and the destination-mod-k uplink rule, so 8,192+ GPUs cost a few arrays. */
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
  int *leaf_of_nic;     /* [nics] */
  /* Link index ranges, in table order (dt_topology.h): GPU ports, NICs, then cables. */
  size_t off_nic;       /* first NIC link */
  size_t off_nic_cable; /* first NIC-to-leaf (or NIC-to-switch) cable, one per NIC */
  size_t off_up1;       /* first leaf-spine (2 levels) or leaf-agg (3 levels) cable: leaf * up + j */
  size_t n_up1;
  size_t off_up2;       /* first agg-core cable (3 levels, more than one pod): (pod * u + j) * R/2 + m */
  size_t n_up2;
  size_t count;
  dt_link *links;
};

static void set_link(dt_link *l, dt_link_kind kind, double bandwidth, double latency)
{
  l->kind = kind;
  l->bandwidth = bandwidth;
  l->latency = latency;
}

int dt_topology_build(const dt_platform *p, dt_topology **out, dt_error *err)
{
  *out = NULL;
  if (p == NULL || p->nodes < 1 || p->gpus_per_node < 1)
    return dt_error_set(err, "", 0, 0, "platform has no GPUs");

  dt_topology *t = dt_xcalloc(1, sizeof *t);
  t->p = p;
  t->gpus = p->nodes * p->gpus_per_node;
  if (p->nodes > 1) {
    if (p->nics_per_node < 1 || p->gpus_per_node % p->nics_per_node != 0) {
      dt_topology_free(t);
      return dt_error_set(err, "", 0, 0, "'nics.per_node' (%d) must divide 'gpus_per_node' (%d)", p->nics_per_node,
                          p->gpus_per_node);
    }
    if (p->topology != DT_NET_SINGLE_SWITCH && p->topology != DT_NET_FAT_TREE) {
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

  t->off_nic = (size_t)t->gpus;
  t->off_nic_cable = t->off_nic + (size_t)t->nics;
  t->off_up1 = t->off_nic_cable + (size_t)t->nics;
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
  t->count = t->off_up2 + t->n_up2;

  t->leaf_of_nic = dt_xcalloc(t->nics > 0 ? (size_t)t->nics : 1, sizeof *t->leaf_of_nic);
  for (int n = 0; n < t->nics; n++)
    t->leaf_of_nic[n] = p->topology == DT_NET_FAT_TREE ? dt_platform_leaf_of_nic(p, &t->shape, n) : 0;

  /* The model factors are applied once here, so every consumer (SimGrid links, replay alpha terms) sees the
   * calibrated values. The intra-node latency is the route's total: half on each GPU port. */
  double bf = p->bandwidth_factor, lf = p->latency_factor;
  t->links = dt_xcalloc(t->count > 0 ? t->count : 1, sizeof *t->links);
  for (size_t i = 0; i < (size_t)t->gpus; i++)
    set_link(&t->links[i], DT_LINK_GPU, p->intra_bandwidth * bf, p->intra_latency / 2 * lf);
  for (size_t i = t->off_nic; i < t->off_nic_cable; i++)
    set_link(&t->links[i], DT_LINK_NIC, p->nic_bandwidth * bf, p->nic_latency * lf);
  for (size_t i = t->off_nic_cable; i < t->count; i++)
    set_link(&t->links[i], DT_LINK_CABLE, p->link_bandwidth * bf, p->link_latency * lf);

  *out = t;
  return DT_OK;
}

void dt_topology_free(dt_topology *t)
{
  if (t == NULL)
    return;
  free(t->leaf_of_nic);
  free(t->links);
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
    else
      snprintf(buf, size, "cable:nic%zu-leaf%d", n, t->leaf_of_nic[n]);
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
  } else if (index < t->count) {
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
  if (p->topology == DT_NET_FAT_TREE) {
    int la = t->leaf_of_nic[a], lb = t->leaf_of_nic[b];
    if (la != lb) {
      if (p->levels == 2) {
        size_t s = (size_t)t->shape.spines, spine = key % s;
        add_hop(hops, n, t->off_up1 + (size_t)la * s + spine, 0);
        add_hop(hops, n, t->off_up1 + (size_t)lb * s + spine, 1);
      } else {
        size_t u = (size_t)t->shape.aggs_per_pod, j = key % u, h = (size_t)t->half_radix;
        size_t pa = (size_t)la / h, pb = (size_t)lb / h;
        add_hop(hops, n, t->off_up1 + (size_t)la * u + j, 0);
        if (pa != pb) {
          size_t m = (key / u) % h;
          add_hop(hops, n, t->off_up2 + (pa * u + j) * h + m, 0);
          add_hop(hops, n, t->off_up2 + (pb * u + j) * h + m, 1);
        }
        add_hop(hops, n, t->off_up1 + (size_t)lb * u + j, 1);
      }
    }
  }
  add_hop(hops, n, t->off_nic_cable + (size_t)b, 1);
}

int dt_topology_route(const dt_topology *t, int src, int dst, dt_hop *hops, double *latency, double *bandwidth)
{
  if (src < 0 || dst < 0 || src >= t->gpus || dst >= t->gpus)
    return -1;
  const dt_platform *p = t->p;
  int g = p->gpus_per_node, n = 0;
  int src_node = src / g, dst_node = dst / g;
  if (src_node == dst_node) {
    /* NVLink only; src == dst gives the loopback through the GPU's own port */
    add_hop(hops, &n, (size_t)src, 0);
    add_hop(hops, &n, (size_t)dst, 1);
  } else {
    int a = src_node * p->nics_per_node + dt_platform_nic_of_gpu(p, src % g);
    int b = dst_node * p->nics_per_node + dt_platform_nic_of_gpu(p, dst % g);
    add_hop(hops, &n, t->off_nic + (size_t)a, 0);
    fabric_route(t, a, b, hops, &n);
    add_hop(hops, &n, t->off_nic + (size_t)b, 1);
  }
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

const dt_platform *dt_topology_platform(const dt_topology *t)
{
  return t->p;
}

const dt_fabric_shape *dt_topology_shape(const dt_topology *t)
{
  return &t->shape;
}
