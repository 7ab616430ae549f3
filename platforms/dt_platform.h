/* The platform model: a GPU cluster as the user describes it in YAML (DESIGN.md §3, schema version 1).
 * A dt_platform is a plain value, read-only once loaded; all quantities are SI base units
 * (bytes, seconds, bytes per second, FLOP per second). */
#ifndef DT_PLATFORM_H
#define DT_PLATFORM_H

#include "../common/dt_error.h"

#include <stddef.h>

typedef enum { DT_INTRA_NVSWITCH = 0, DT_INTRA_NVLINK_MESH, DT_INTRA_PCIE } dt_intra_kind;
typedef enum { DT_NET_NONE = 0, DT_NET_SINGLE_SWITCH, DT_NET_FAT_TREE, DT_NET_DRAGONFLY } dt_net_topology;
typedef enum { DT_WIRING_NODE = 0, DT_WIRING_RAIL } dt_wiring;

/* One entry of an nvlink-mesh link table: node-local GPUs a < b joined by `count` NVLinks. */
typedef struct dt_nvlink {
  int a, b;
  int count;
} dt_nvlink;

typedef struct dt_platform {
  char *name;         /* `name`, owned */
  char *source;       /* path it was loaded from (or the name given to dt_platform_parse), owned */
  char *gpu_model;    /* `gpu.model`, owned */
  double gpu_peak;    /* `gpu.peak`, FLOP/s */
  double gpu_efficiency; /* `gpu.efficiency`, fraction of peak achieved by `flop=` compute, default 1.0 */
  int nodes;
  int gpus_per_node;
  dt_intra_kind intra_kind;
  double intra_bandwidth; /* nvswitch: bytes/s per GPU per direction; pcie: the GPU's PCIe link; mesh: unused */
  double intra_latency;   /* s, nvswitch and pcie: one-way GPU-to-GPU through the switch (the route's total
                           * between GPUs of one switch); nvlink-mesh: per NVLink hop */
  /* nvlink-mesh (DT_INTRA_NVLINK_MESH): one node's link table, the same in every node */
  double nvlink_bandwidth; /* `intra_node.link_bandwidth`: bytes/s per NVLink per direction */
  int n_nvlinks;           /* entries of `intra_node.links` */
  dt_nvlink *nvlinks;      /* owned; a < b, no pair twice, the mesh connected */
  /* pcie (DT_INTRA_PCIE): GPUs behind PCIe switches, switches joined through the CPU */
  int gpus_per_switch;     /* divides gpus_per_node; GPU g is behind switch g / gpus_per_switch */
  double cpu_bandwidth;    /* bytes/s per direction of each switch's link to the CPU root complex */
  double cpu_latency;      /* s added to a route that crosses the CPU (half on each switch's link) */
  int nics_per_node;      /* 0 when nodes == 1 and no `nics` given */
  double nic_bandwidth;   /* bytes/s per NIC per direction */
  double nic_latency;     /* s, added once per NIC traversed */
  dt_net_topology topology; /* DT_NET_NONE when nodes == 1 and no `network` given */
  int levels;             /* fat-tree: 2 or 3 */
  int radix;              /* fat-tree: ports per switch */
  int oversubscription;   /* k >= 1, default 1 */
  dt_wiring wiring;       /* default DT_WIRING_NODE */
  double link_bandwidth;  /* bytes/s per fabric cable per direction */
  double link_latency;    /* s per fabric cable */
  /* dragonfly (DT_NET_DRAGONFLY): groups of routers joined all-to-all by local links, groups joined by
   * global links; a node's NICs all attach to one router */
  int groups;                  /* G >= 1 */
  int routers_per_group;       /* a >= 1 */
  int nodes_per_router;        /* p >= 1 */
  int global_links_per_router; /* h >= 0; a*h >= G-1 */
  double local_bandwidth, local_latency;   /* per router-to-router link inside a group */
  double global_bandwidth, global_latency; /* per global link between groups */
  double bandwidth_factor; /* `model.bandwidth_factor`, default 1.0: multiplies every bandwidth */
  double latency_factor;   /* `model.latency_factor`, default 1.0: multiplies every latency */
} dt_platform;

/* Loads and validates a platform YAML file (libyaml). On success returns DT_OK and sets *out (free with
 * dt_platform_free). On failure returns DT_ERR, *out is NULL, and err holds file:line:col and a message:
 * unknown key (with the nearest known key), bare number where a unit is required, bad unit, missing
 * required key, nics.per_node not dividing gpus_per_node, radix/oversubscription split not whole,
 * a fabric too small for the NICs (saying how many NICs fit). */
int dt_platform_load(const char *path, dt_platform **out, dt_error *err);

/* Same as dt_platform_load on an in-memory YAML text of len bytes; source_name is used in errors. */
int dt_platform_parse(const char *text, size_t len, const char *source_name, dt_platform **out, dt_error *err);

/* Frees a platform; NULL is a no-op. */
void dt_platform_free(dt_platform *p);

/* Total GPUs: nodes * gpus_per_node. */
int dt_platform_gpu_count(const dt_platform *p);

/* NIC (node-local index) used by node-local GPU g: floor(g * nics_per_node / gpus_per_node) (DESIGN.md §3).
 * Returns 0 when the platform has no NICs. */
int dt_platform_nic_of_gpu(const dt_platform *p, int local_gpu);

/* Shape of the switch fabric that is actually built (only the switches needed, DESIGN.md §3).
 * For a fat-tree with radix R and oversubscription k: leaf down-ports d = R*k/(k+1), up-ports u = R/(k+1).
 * 2 levels: leaves = ceil(NICs/d) (wiring node) or rails * ceil(nodes/d) with rails = nics_per_node
 *   (wiring rail; leaves are numbered rail-major), spines = u; fits while leaves <= R.
 * 3 levels (k-ary fat-tree, oversubscription at the leaf only): pods of R/2 leaves and u aggregation
 *   switches; each aggregation switch has R/2 up-ports to cores; u*R/2 cores; at most R pods; capacity
 *   R * R/2 * d NICs. Leaves are assigned to pods in order.
 * single-switch: one switch with R = NICs ports (any number fits).
 * dragonfly: G groups of a routers (all built), p nodes per router (node m on router m / p, all its NICs on
 *   it), every pair of groups joined by m = floor(a*h / (G-1)) parallel global links; fits while
 *   nodes <= G*a*p; needs a*h >= G-1. The fields hold: leaves = routers G*a, down_ports = p*nics_per_node,
 *   groups, routers_per_group, global_per_pair = m (0 with one group). */
typedef struct dt_fabric_shape {
  int nics;           /* nodes * nics_per_node */
  int down_ports;     /* d (single-switch: nics) */
  int up_ports;       /* u (single-switch: 0) */
  int leaves;         /* leaf switches built (single-switch: 1) */
  int leaves_per_rail;/* wiring rail: ceil(nodes/d); wiring node: leaves */
  int spines;         /* 2 levels: u; 3 levels: cores u*R/2 (only when more than one pod is used, else 0) */
  int pods;           /* 3 levels: ceil(leaves/(R/2)); otherwise 0 */
  int aggs_per_pod;   /* 3 levels: u; otherwise 0 */
  long capacity;      /* most NICs this radix/levels/oversubscription can hold */
  int groups;           /* dragonfly: G; otherwise 0 */
  int routers_per_group;/* dragonfly: a; otherwise 0 */
  int global_per_pair;  /* dragonfly: parallel global links between two groups; otherwise 0 */
} dt_fabric_shape;

/* Computes the fabric shape. Returns DT_OK, or DT_ERR with a message (no position) when the split is not
 * whole or the NICs do not fit ("… holds at most N NICs, the platform has M"). Nodes == 1: all zeros, DT_OK. */
int dt_platform_fabric_shape(const dt_platform *p, dt_fabric_shape *shape, dt_error *err);

/* Leaf switch of a NIC given by its global index (node * nics_per_node + local nic), per the wiring rule:
 * node wiring: nic / d; rail wiring: rail * leaves_per_rail + node / d; dragonfly: the router
 * (group * a + router in group) of the NIC's node, node / p. */
int dt_platform_leaf_of_nic(const dt_platform *p, const dt_fabric_shape *shape, int global_nic);

/* nvlink-mesh: fewest NVLink hops between every pair of node-local GPUs, by breadth-first search over
 * p->nvlinks (entries may name GPUs out of range: they are skipped). Returns a malloc'ed gpus_per_node^2
 * array, dist[a * gpus_per_node + b], -1 where b cannot be reached from a; the caller frees it. */
int *dt_platform_mesh_distances(const dt_platform *p);

/* Number of PCIe switches per node (pcie kind: gpus_per_node / gpus_per_switch; otherwise 0). */
int dt_platform_pcie_switches(const dt_platform *p);

/* pcie kind: the switch NIC `local_nic` hangs off, the switch of the first GPU it serves,
 * (local_nic * gpus_per_node / nics_per_node) / gpus_per_switch. */
int dt_platform_pcie_switch_of_nic(const dt_platform *p, int local_nic);

/* Names of the kinds as written in YAML ("nvswitch", "fat-tree", ...). */
const char *dt_platform_intra_kind_name(dt_intra_kind kind);
const char *dt_platform_topology_name(dt_net_topology topology);

#endif
