/* The platform model: a GPU cluster as the user describes it in YAML (DESIGN.md §3, schema version 1).
 * A dt_platform is a plain value, read-only once loaded; all quantities are SI base units
 * (bytes, seconds, bytes per second, FLOP per second). */
#ifndef DT_PLATFORM_H
#define DT_PLATFORM_H

#include "../common/dt_error.h"

#include <stddef.h>

typedef enum { DT_INTRA_NVSWITCH = 0 } dt_intra_kind;
typedef enum { DT_NET_NONE = 0, DT_NET_SINGLE_SWITCH, DT_NET_FAT_TREE } dt_net_topology;
typedef enum { DT_WIRING_NODE = 0, DT_WIRING_RAIL } dt_wiring;

typedef struct dt_platform {
  char *name;         /* `name`, owned */
  char *source;       /* path it was loaded from (or the name given to dt_platform_parse), owned */
  char *gpu_model;    /* `gpu.model`, owned */
  double gpu_peak;    /* `gpu.peak`, FLOP/s */
  double gpu_efficiency; /* `gpu.efficiency`, fraction of peak achieved by `flop=` compute, default 1.0 */
  int nodes;
  int gpus_per_node;
  dt_intra_kind intra_kind;
  double intra_bandwidth; /* bytes/s per GPU per direction */
  double intra_latency;   /* s, one-way GPU-to-GPU inside a node (the route's total) */
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
 * single-switch: one switch with R = NICs ports (any number fits). */
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
} dt_fabric_shape;

/* Computes the fabric shape. Returns DT_OK, or DT_ERR with a message (no position) when the split is not
 * whole or the NICs do not fit ("… holds at most N NICs, the platform has M"). Nodes == 1: all zeros, DT_OK. */
int dt_platform_fabric_shape(const dt_platform *p, dt_fabric_shape *shape, dt_error *err);

/* Leaf switch of a NIC given by its global index (node * nics_per_node + local nic), per the wiring rule:
 * node wiring: nic / d; rail wiring: rail * leaves_per_rail + node / d. */
int dt_platform_leaf_of_nic(const dt_platform *p, const dt_fabric_shape *shape, int global_nic);

#endif
