/* The platform as links and routes: every GPU port, NIC and fabric cable as a split-duplex link, and the
 * route between two GPUs with the semantics of DESIGN.md §3 (NVLink only inside a node; GPU -> NIC ->
 * cables -> NIC -> GPU between nodes, destination-mod-k uplink choice). Pure C, no SimGrid: the SimGrid
 * builder in replay/ and the replay's latency terms both read routes from here. */
#ifndef DT_TOPOLOGY_H
#define DT_TOPOLOGY_H

#include "dt_platform.h"

#include <stddef.h>
#include <stdint.h>

/* GPU: a GPU's own port (NVSwitch port, PCIe link to its switch, or on a mesh the loopback port); NVLINK: one
 * pair of an nvlink-mesh (all its NVLinks); CPU: a PCIe switch's link to the CPU; CABLE: a fat-tree or
 * single-switch cable, or a NIC-to-router cable; LOCAL and GLOBAL: dragonfly router-to-router links. */
typedef enum {
  DT_LINK_GPU = 0,
  DT_LINK_NIC,
  DT_LINK_CABLE,
  DT_LINK_NVLINK,
  DT_LINK_CPU,
  DT_LINK_LOCAL,
  DT_LINK_GLOBAL
} dt_link_kind;

/* One split-duplex link. bandwidth and latency already include the platform's model factors. */
typedef struct dt_link {
  dt_link_kind kind;
  double bandwidth; /* bytes/s per direction */
  double latency;   /* s */
} dt_link;

/* One hop of a route: a link and the direction it is crossed in (0 = up/out of the source side,
 * 1 = down/towards the destination side; SimGrid's SPLITDUPLEX UP and DOWN). */
typedef struct dt_hop {
  uint32_t link;
  uint8_t dir;
} dt_hop;

#define DT_ROUTE_MAX_HOPS 16

/* Most GPUs and links dt_topology_build builds (docs/platform.md "Ranges"): it refuses more with exit-2 errors
 * before allocating, so a platform inside the key ranges (nodes: 1000000 x gpus_per_node: 1024, a dragonfly of
 * 100,000 routers per group) cannot take the machine's memory. 2^20 GPUs is also the trace's rank limit. */
#define DT_TOPOLOGY_MAX_GPUS (1 << 20)
#define DT_TOPOLOGY_MAX_LINKS (1 << 24)

typedef struct dt_topology dt_topology;

/* Builds the link table for a validated platform. Link numbering: GPU ports first (index = global GPU,
 * node * gpus_per_node + local gpu), then NICs (global NIC index), then cables: one NIC-to-leaf (or
 * NIC-to-switch, NIC-to-router) cable per NIC in NIC order, then leaf-spine cables (leaf * spines + spine) for
 * 2 levels, or leaf-agg cables (leaf * u + j) and agg-core cables ((pod * u + j) * R/2 + m, only with more than
 * one pod) for 3 levels, or for a dragonfly the local links (group * a(a-1)/2 + the index of router pair i < j)
 * then the global links (index of group pair g < h) * m + r); last the intra-node links of the node kinds that
 * have them: nvlink-mesh pairs (node * n_nvlinks + entry) or pcie CPU links (node * switches + switch, only
 * with more than one switch). A single-node platform has no NIC and no cable. The nvswitch and pcie latency
 * is split in two halves over the source's and destination's GPU links, the pcie CPU latency in two halves
 * over the two switches' CPU links; an NVLink pair has the whole intra_node.latency (one hop). p is borrowed: it must outlive the topology.
 * Returns DT_OK and *out (free with dt_topology_free; NULL is a no-op) or DT_ERR, *out NULL, when the
 * fabric does not fit (see dt_platform_fabric_shape). */
int dt_topology_build(const dt_platform *p, dt_topology **out, dt_error *err);
void dt_topology_free(dt_topology *t);

/* Number of links (numbered as above), and link `index` (borrowed from the topology), or NULL when index is out
 * of range. */
size_t dt_topology_link_count(const dt_topology *t);
const dt_link *dt_topology_link(const dt_topology *t, size_t index);
/* Unique human-readable link name: "gpu3", "nic1.2" (node 1, NIC 2), "cable:nic5-leaf0" (global NIC 5),
 * "cable:nic5-switch" (single switch), "cable:leaf0-spine3", "cable:leaf0-agg1" and "cable:agg1-core3"
 * (aggregation switch pod * u + j, core j * R/2 + m); dragonfly "cable:nic5-router2", "cable:router4-router6"
 * (local, global router indices) and "cable:group0-group3.1" (global, parallel link 1); "nvlink1.0-3" (node 1,
 * the NVLinks between its GPUs 0 and 3); "cpulink1.0" (node 1, PCIe switch 0 to the CPU). Writes into buf, returns buf. The SimGrid links are
 * this name + "_UP" / "_DOWN". */
const char *dt_topology_link_name(const dt_topology *t, size_t index, char *buf, size_t size);

/* Link classes of the bottleneck report (docs/report.md): what a link is in the fabric, finer than dt_link_kind
 * (a CABLE is a NIC-to-leaf, leaf-to-spine, leaf-to-aggregation or aggregation-to-core cable). */
typedef enum {
  DT_LC_NVSWITCH_PORT = 0, /* a GPU's port into its node's NVSwitch */
  DT_LC_PCIE,              /* a GPU's PCIe link to its switch */
  DT_LC_GPU_PORT,          /* an nvlink-mesh GPU's own (loopback) port */
  DT_LC_NVLINK,            /* an nvlink-mesh pair */
  DT_LC_PCIE_CPU,          /* a PCIe switch's link to the CPU */
  DT_LC_GPU_NIC,           /* a NIC (the GPU-to-NIC leg of a route between nodes) */
  DT_LC_NIC_LEAF,          /* NIC to leaf (fat-tree) */
  DT_LC_NIC_SWITCH,        /* NIC to the single switch */
  DT_LC_NIC_ROUTER,        /* NIC to its dragonfly router */
  DT_LC_LEAF_SPINE,        /* 2-level fat-tree leaf to spine */
  DT_LC_LEAF_AGG,          /* 3-level fat-tree leaf to aggregation */
  DT_LC_AGG_CORE,          /* 3-level fat-tree aggregation to core */
  DT_LC_DF_LOCAL,          /* dragonfly router to router inside a group */
  DT_LC_DF_GLOBAL,         /* dragonfly group to group */
  DT_LC_COUNT
} dt_link_class;

/* Class of link `index` (DT_LC_COUNT when out of range), and a class's stable name ("nvswitch-port", "pcie",
 * "gpu-port", "nvlink", "pcie-cpu", "gpu-nic", "nic-leaf", "nic-switch", "nic-router", "leaf-spine", "leaf-agg",
 * "agg-core", "dragonfly-local", "dragonfly-global"; static, "?" when out of range). */
dt_link_class dt_topology_link_class(const dt_topology *t, size_t index);
const char *dt_link_class_name(dt_link_class c);

/* Route from global GPU src to global GPU dst, computed in O(1) (nothing is stored per pair; an nvlink-mesh
 * route walks a per-node next-hop table, O(hops)). Same node: src GPU port UP, dst GPU port DOWN (src == dst
 * gives the loopback over the GPU's own port, for every kind); pcie across switches: src GPU UP, src switch's
 * CPU link UP, dst switch's CPU link DOWN, dst GPU DOWN; nvlink-mesh: the NVLink pairs of the fewest-hop path,
 * the lowest-numbered next GPU first (a pair a < b is crossed UP from a to b). Other node: src NIC UP, cables
 * (UP to the top switch, DOWN from it), dst NIC DOWN, no GPU port -- except on pcie nodes, where the GPU's
 * PCIe link (and the CPU links when its NIC hangs off another switch) come before the src NIC and after the
 * dst NIC. Dragonfly: NIC cable, local hop to the gateway router, global link (b mod m of the m parallel ones,
 * b the destination NIC), local hop, NIC cable (see docs/platform.md). Going up, a leaf takes
 * uplink (key mod u), key = the destination NIC's index in the fabric's port order (wiring node: its global
 * index node * nics_per_node + nic; wiring rail: nic * nodes + node); in a 3-level tree the aggregation
 * switch then takes core uplink ((key / u) mod R/2), the next digit (D-mod-k), so that all cores carry
 * traffic.
 * Fills hops (room for DT_ROUTE_MAX_HOPS) and returns the hop count; *latency (may be NULL)
 * gets the sum of link latencies in hop order (the route's alpha), *bandwidth (may be NULL) the smallest
 * link bandwidth on it. Hop counts: nvswitch 2 or 4-8 between nodes; a mesh its path length; pcie up to 6
 * more; dragonfly up to 7 between nodes; never more than DT_ROUTE_MAX_HOPS. Returns -1 if src or dst is out of range,
 * DT_ROUTE_UNREACHABLE when a failed link cannot be avoided (dt_topology_set_down). */
int dt_topology_route(const dt_topology *t, int src, int dst, dt_hop *hops, double *latency, double *bandwidth);

/* dt_topology_route's answer when the route would cross a link marked down and no detour exists. */
#define DT_ROUTE_UNREACHABLE (-2)

/* Slow and failed links (docs/whatif.md). dt_topology_scale_bandwidth multiplies link index's bandwidth by factor
 * (> 0; each call multiplies again); every reader of the table (the SimGrid builder, the shortcuts' analysis, the
 * collective model's estimates, the per-link accounting) sees the new value. dt_topology_set_down marks the link
 * failed (down != 0) or up again; routes then avoid a failed cable where the fabric offers another path: on a
 * fat-tree the destination-mod-k uplink stays when its cables are up, else the choice is remade with the same key
 * among the uplinks (spines; aggregation switches and cores in 3 levels) whose cables are all up; on a dragonfly
 * among the parallel global links still up. A route that still needs a failed link (a GPU port, a NIC, its cable,
 * an NVLink, a dragonfly local link, or every uplink gone) makes dt_topology_route return DT_ROUTE_UNREACHABLE.
 * Out-of-range indices are ignored. Costs nothing on a topology without failed links. */
void dt_topology_scale_bandwidth(dt_topology *t, size_t index, double factor);
void dt_topology_set_down(dt_topology *t, size_t index, int down);
int dt_topology_is_down(const dt_topology *t, size_t index);

/* The platform the topology was built from (borrowed), and the fabric shape it built (dt_platform_fabric_shape,
 * owned by the topology: valid until dt_topology_free). */
const dt_platform *dt_topology_platform(const dt_topology *t);
const dt_fabric_shape *dt_topology_shape(const dt_topology *t);

#endif
