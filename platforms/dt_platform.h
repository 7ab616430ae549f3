/* The platform model: a GPU cluster as the user describes it in YAML (DESIGN.md §3, schema version 1).
 * A dt_platform is a plain value, read-only once loaded; all quantities are SI base units
 * (bytes, seconds, bytes per second, FLOP per second). */
#ifndef DT_PLATFORM_H
#define DT_PLATFORM_H

#include "../common/dt_error.h"
#include "dt_platform_var.h"

#include <stddef.h>

typedef enum { DT_INTRA_NVSWITCH = 0, DT_INTRA_NVLINK_MESH, DT_INTRA_PCIE } dt_intra_kind;
typedef enum { DT_NET_NONE = 0, DT_NET_SINGLE_SWITCH, DT_NET_FAT_TREE, DT_NET_DRAGONFLY } dt_net_topology;
typedef enum { DT_WIRING_NODE = 0, DT_WIRING_RAIL } dt_wiring;

/* NCCL's protocols (docs/replay.md): LL (8-byte lines, 4 of data), LL128 (128-byte lines, 120 of data), Simple. */
typedef enum { DT_PROTO_LL = 0, DT_PROTO_LL128, DT_PROTO_SIMPLE, DT_PROTO_COUNT } dt_proto;

/* Collective algorithms (docs/replay.md). DT_ALGO_AUTO lets the replay pick one per instance. */
typedef enum {
  DT_ALGO_AUTO = 0,
  DT_ALGO_RING,
  DT_ALGO_TREE,     /* double binary tree (all-reduce) */
  DT_ALGO_NVLS,     /* in-switch reduction on one NVSwitch node */
  DT_ALGO_NVLS_TREE,/* NVLS inside nodes, double binary tree between them */
  DT_ALGO_HIER,     /* intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather */
  DT_ALGO_COLLNET,  /* in-network reduction in the leaf switches (SHARP) */
  DT_ALGO_CHAIN,    /* pipelined chain (broadcast, reduce) */
  DT_ALGO_DIRECT,   /* direct all-to-all */
  DT_ALGO_PAT,      /* PAT (all-gather, reduce-scatter): log2 n steps of doubling distance, one member per node */
  DT_ALGO_COUNT
} dt_algo;

/* One protocol's costs (`nccl.protocols.<name>`). */
typedef struct dt_proto_model {
  double latency;         /* s, paid once per collective (NCCL's base latency) */
  double hop_latency;     /* s, added to every algorithm step inside a node (NCCL's NVLink/PCIe hardware latency) */
  double net_hop_latency; /* s, added to every algorithm step that crosses the network (NCCL's NET latency) */
  double efficiency;      /* fraction of link bandwidth the protocol delivers, in (0, 1] */
  double ppn1_net_hop_latency; /* s, NCCL's tree NET latency (src/graph/tuning.cc): every network hop of the tree
                                  pays it, and it replaces net_hop_latency when every node holds one member of the
                                  group (NCCL >= 2.23) */
} dt_proto_model;

/* The host CPU of a node (`host.cpu`): NCCL's per-step network overhead floor depends on its vendor. */
typedef enum { DT_CPU_INTEL = 0, DT_CPU_AMD, DT_CPU_ARM } dt_cpu_vendor;

/* One algorithm's costs (`nccl.algorithms.<name>`), on top of the protocol's. */
typedef struct dt_algo_model {
  double latency;    /* s, once per collective */
  double efficiency; /* fraction of link bandwidth, in (0, 1] */
} dt_algo_model;

/* One entry of an nvlink-mesh link table: node-local GPUs a < b joined by `count` NVLinks. */
typedef struct dt_nvlink {
  int a, b;
  int count;
} dt_nvlink;

/* The shape-following compute model (`gpu.compute`, docs/compute.md): each kernel of a generated compute op runs
 * at min(dtype peak x a tile-efficiency curve, HBM roofline); platforms/dt_compute.h evaluates it. */
typedef struct dt_compute_model {
  int present;            /* 1 when `gpu.compute` was given; 0: every flop= op runs at gpu.peak x gpu.efficiency */
  double peak_bf16, peak_fp16, peak_fp8, peak_fp32; /* FLOP/s dense tensor peaks per dtype; 0 = not given (a
                                                       dtype without its peak runs at gpu.peak) */
  double hbm_bandwidth;   /* bytes/s, the datasheet HBM bandwidth */
  double hbm_efficiency;  /* achieved fraction of it by streaming kernels, in (0, 1], default 0.9 */
  double gemm_efficiency; /* a large aligned GEMM's fraction of its dtype peak, in (0, 1] */
  double gemm_efficiency_fp8; /* the same for FP8 GEMMs; 0 = not given (gemm_efficiency) */
  double attn_efficiency; /* fused attention's fraction of the bf16 peak (forward), in (0, 1], default 0.5 */
  int sms;                /* streaming multiprocessors (compute units) a kernel's tiles are spread over */
  int tile;               /* output tile edge in m and n, elements (default 128) */
  int k_half;             /* reduction length at which a tile's main loop reaches half its rate (default 64) */
  int dim_half;           /* m or n at which a GEMM reaches half its rate along that dimension (default 64) */
} dt_compute_model;

/* Power figures of one kind of device (docs/platform.md "Power and cost"), W. A device draws `idle` when it
 * does nothing and up to `busy` at full load; a scalar in the YAML sets both (constant power). */
typedef struct dt_power_figures {
  int present;   /* 1 when the key was given */
  double idle;   /* W, 0 <= idle <= busy */
  double busy;   /* W, at most DT_POWER_MAX */
  double comm;   /* W, GPUs only (`gpu.power.comm`): while communicating with no compute running, idle <= comm <=
                    busy; equal to idle when not given (other devices: equal to idle) */
  int comm_given; /* 1 when `gpu.power.comm` was given */
} dt_power_figures;

/* The optional `cost:` section: amortised or rented prices per hour of each device, and an electricity price.
 * Plain numbers in `currency` (docs/platform.md). */
typedef struct dt_cost_figures {
  int present;        /* 1 when the section was given */
  char *currency;     /* `cost.currency`, owned; "USD" when not given */
  double gpu_hour;    /* per GPU-hour */
  double nic_hour;    /* per NIC-hour */
  double switch_hour; /* per switch-hour */
  double energy_kwh;  /* per kWh of the energy the power figures give (0: not charged) */
} dt_cost_figures;

typedef struct dt_platform {
  char *name;         /* `name`, owned */
  char *source;       /* path it was loaded from (or the name given to dt_platform_parse), owned */
  char *gpu_model;    /* `gpu.model`, owned */
  double gpu_peak;    /* `gpu.peak`, FLOP/s */
  double gpu_efficiency; /* `gpu.efficiency`, fraction of peak achieved by `flop=` compute, default 1.0; with
                            gpu.compute a plain multiplier on the model's rates */
  dt_compute_model compute; /* `gpu.compute` */
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
  int nvls;                /* `intra_node.nvls`: the NVSwitch reduces in the switch (NVLink SHARP), nvswitch only */
  int sharp;               /* `network.sharp`: the leaf switches reduce in the network (CollNet / SHARP) */
  /* The NCCL model (`nccl:` section, docs/platform.md). nccl == 0 (no section): a textbook alpha-beta machine,
   * ring / chain / direct, no protocol costs, one channel (DESIGN.md §6 closed forms). dt_platform_nccl_defaults
   * fills the defaults below. */
  int nccl;                /* 1 when the section was given */
  int channels;            /* `nccl.channels`: rings / trees a collective's bytes are split over; 0: one per NIC */
  int pxn;                 /* `nccl.pxn`: a cross-rail send hops over NVLink to the GPU on the destination's rail */
  double overlap_tax;      /* `nccl.overlap_tax`: compute slowdown while the rank communicates, in [0, 1) */
  int nccl_version;        /* `nccl.version` as major * 10000 + minor * 100 + patch (2.17.1: 21701); default
                              DT_NCCL_VERSION_DEFAULT. Says which NCCL tuning model the platform follows */
  dt_cpu_vendor host_cpu;  /* `host.cpu`, default DT_CPU_INTEL */
  dt_proto_model protocols[DT_PROTO_COUNT];
  dt_algo_model algorithms[DT_ALGO_COUNT];
  double bandwidth_factor; /* `model.bandwidth_factor`, default 1.0: multiplies every bandwidth */
  double network_bandwidth_factor; /* `model.network_bandwidth_factor`: replaces bandwidth_factor for NICs and
                                      fabric links (cables, dragonfly local/global links); 0 = not given, use
                                      bandwidth_factor. NVLink and network rates are calibrated apart because
                                      measured efficiencies differ (docs/bench.md) */
  double latency_factor;   /* `model.latency_factor`, default 1.0: multiplies every latency */
  /* Energy and cost (docs/platform.md "Power and cost", replay/dt_energy.h) */
  dt_power_figures gpu_power;    /* `gpu.power: {idle, busy}` */
  dt_power_figures nic_power;    /* `nics.power`: a power, or {idle, busy} */
  dt_power_figures switch_power; /* `network.switch_power`: a power, or {idle, busy} (load: port utilisation) */
  dt_cost_figures cost;          /* `cost:` */
  dt_platform_var *variability; /* `variability:` (speed factors, jitter, late starts), owned; NULL when absent */
} dt_platform;

/* Loads and validates a platform YAML file (libyaml). On success returns DT_OK and sets *out (free with
 * dt_platform_free). On failure returns DT_ERR, *out is NULL, and err holds file:line:col and a message:
 * unknown key (with the nearest known key), bare number where a unit is required, bad unit, missing
 * required key, nics.per_node not dividing gpus_per_node, radix/oversubscription split not whole,
 * a fabric too small for the NICs (saying how many NICs fit). */
int dt_platform_load(const char *path, dt_platform **out, dt_error *err);

/* The keys of the platform schema as dotted paths ("nics.bandwidth", "nccl.protocols.LL.latency"; sections too,
 * as "nics"; the figures of the power mappings, as "gpu.power.busy"), for i below dt_platform_key_count(): for callers that name platform keys outside a platform file
 * (a sweep's axes) and want the same "did you mean". Static strings. */
size_t dt_platform_key_count(void);
const char *dt_platform_key_path(size_t i);
/* Whether key i takes a number or a boolean, which platform files write unquoted ('nodes: 4', never
 * 'nodes: "4"'): a sweep applies the same rule to its axis values. 0 past the end. */
int dt_platform_key_numeric(size_t i);

/* Checks text as the value of key i (below dt_platform_key_count()) the way a platform file's reader converts it
 * (units, ranges, choices): for a sweep, which sets keys outside a platform file and reports a bad value at its
 * own line and column. Returns 0, or -1 with why (size bytes) holding the reader's message ("bad value for
 * 'gpu.power.busy': ..."). Sections, [gpu, gpu, count] lists and names pass (the platform file checks them). */
int dt_platform_key_check(size_t i, const char *text, char *why, size_t size);

/* What text converts to as the value of key i, as a string two values of the key are equal by (a sweep refuses an
 * axis that lists one value twice): the number in SI units, to 15 significant digits (a last-bit difference of two
 * spellings is no difference), with its unit for quantities ("50000000000 B/s" for "400Gb/s" and "50GB/s"); the
 * number for counts, ratios, booleans (1 or 0) and NCCL versions (21701); else the text itself. Returns 0 with
 * canon (size bytes) filled, or -1 when text is not a valid value of the key. */
int dt_platform_key_canon(size_t i, const char *text, char *canon, size_t size);

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

/* Fills the NCCL model's defaults (channels 0, pxn 1, overlap_tax 0, the protocol and algorithm tables of
 * docs/platform.md, from NCCL's src/graph/tuning.cc) without touching `nccl`. */
void dt_platform_nccl_defaults(dt_platform *p);

/* The NCCL version a platform without `nccl.version` follows: the newest model dtsim implements (2.32; its tuning
 * terms as read in NCCL 2.30.7's src/graph/tuning.cc, the newest source read, docs/platform.md). */
#define DT_NCCL_VERSION_DEFAULT 23200

/* The NCCL releases dtsim's model follows (docs/platform.md "NCCL version"): from 2.17, the oldest source its
 * tables were read at (and the release that brought NVLS), to 2.32.x, the newest it models. */
#define DT_NCCL_VERSION_MIN 21700
#define DT_NCCL_VERSION_MAX 23299

/* Parses an NCCL version in NCCL's own numbering, MAJOR.MINOR or MAJOR.MINOR.PATCH ("2.17", "2.17.1"), optionally
 * with a package revision ("2.17.1-1", ignored), into major * 10000 + minor * 100 + patch (NCCL_VERSION_CODE's
 * encoding). Returns -1 when it is not of that form: major 2, minor and patch decimal numbers 0-99 without a
 * leading zero ("2.023" and "2.17.01" are not versions). The range dtsim models is the caller's check. */
int dt_nccl_version_parse(const char *text);

/* Channels a collective uses on p: 1 without the NCCL model; `nccl.channels`, or max(1, nics_per_node) when it
 * is 0 (one ring per NIC, as NCCL's rings on rail-optimized nodes). */
int dt_platform_channels(const dt_platform *p);

/* YAML / CLI names: "LL", "LL128", "Simple"; "auto", "ring", "tree", "nvls", "nvls-tree", "hier", "collnet",
 * "chain", "direct", "pat". The lookups are case-insensitive and return -1 for an unknown name. */
const char *dt_proto_name(dt_proto proto);
int dt_proto_from_name(const char *name);
const char *dt_algo_name(dt_algo algo);
int dt_algo_from_name(const char *name);
/* Every algorithm name in table order (from "auto" when with_auto, else from "ring"), separated by ", " and the
 * last one by last_sep (", " or " or "), into buf (always terminated, truncated to size). Returns buf, for the
 * help texts and the error of an unknown --algo, so that they list what dt_algo_from_name accepts. */
const char *dt_algo_list(char *buf, size_t size, int with_auto, const char *last_sep);

/* Names of the kinds as written in YAML ("nvswitch", "fat-tree", ...). */
const char *dt_platform_intra_kind_name(dt_intra_kind kind);
const char *dt_platform_topology_name(dt_net_topology topology);

#endif
