/* The platform YAML loader, schema version 1 (DESIGN.md §3): libyaml's document API turns the text into a
 * node tree, a table of known keys walks it (unknown and duplicate keys, types, units), then cross-key rules
 * are checked. Every error carries the file and the 1-based line:col of the node at fault. */
#include "dt_platform.h"
#include "dt_topology.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../common/dt_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef enum {
  T_SECTION,   /* a mapping of further keys */
  T_VERSION,   /* the schema version, 1 */
  T_STRING,    /* non-empty text, stored as an owned char * */
  T_COUNT,     /* whole number in [lo, hi], stored as int */
  T_REAL,      /* plain number in (rlo, rhi], stored as double */
  T_BANDWIDTH, /* "450GB/s", stored in bytes/s (> 0) */
  T_TIME,      /* "1.2us", stored in seconds (>= 0) */
  T_FLOPS,     /* "989TFLOPS", stored in FLOP/s (> 0) */
  T_LINKS,     /* nvlink-mesh link table: a sequence of [gpu, gpu, count] (stored in p->nvlinks) */
  T_CHOICE,    /* one word of a list; the first nsupported are implemented, the rest "not supported yet" */
  T_BOOL,      /* true or false, stored as int */
  T_TAX,       /* plain number in [0, 1), stored as double */
  T_POWER2,    /* a power ("700W"), or a mapping {idle: W, busy: W} (lo == 1: only the mapping), stored in a
                  dt_power_figures */
  T_MONEY,     /* plain number in [0, MONEY_MAX], stored as double */
  T_NCCLVER,   /* an NCCL version "2.17" or "2.17.1", stored as int (dt_nccl_version_parse) */
  T_VARIABILITY /* the `variability:` section, read by dt_platform_var.c (stored in p->variability) */
} value_type;

/* Rows of the schema, in the order the tables below list them. The `nccl.protocols.<P>` and
 * `nccl.algorithms.<A>` sections have the same keys each. */
#define PROTO_ROWS(P) R_P_##P, R_P_##P##_LAT, R_P_##P##_HOP, R_P_##P##_NET, R_P_##P##_EFF, R_P_##P##_NET1
#define ALGO_ROWS(A) R_A_##A, R_A_##A##_LAT, R_A_##A##_EFF
enum {
  R_VERSION, R_NAME,
  R_GPU, R_GPU_MODEL, R_GPU_PEAK, R_GPU_EFF,
  R_GPU_CM, R_CM_BF16, R_CM_FP16, R_CM_FP8, R_CM_FP32, R_CM_HBM, R_CM_HBM_EFF, R_CM_GEMM_EFF, R_CM_GEMM8_EFF,
  R_CM_ATTN_EFF, R_CM_SMS, R_CM_TILE, R_CM_KHALF, R_CM_DHALF,
  R_NODES, R_GPN,
  R_INTRA, R_INTRA_KIND, R_INTRA_BW, R_INTRA_LAT, R_INTRA_LINKS, R_INTRA_LBW, R_INTRA_GPS, R_INTRA_CPU_BW,
  R_INTRA_CPU_LAT,
  R_NICS, R_NICS_PER_NODE, R_NICS_BW, R_NICS_LAT,
  R_NET, R_NET_TOPO, R_NET_LEVELS, R_NET_RADIX, R_NET_OVERSUB, R_NET_WIRING, R_NET_LBW, R_NET_LLAT,
  R_NET_GROUPS, R_NET_RPG, R_NET_NPR, R_NET_GLPR, R_NET_LOC_BW, R_NET_LOC_LAT, R_NET_GLOB_BW, R_NET_GLOB_LAT,
  R_MODEL, R_MODEL_BWF, R_MODEL_NBWF, R_MODEL_LATF,
  R_INTRA_NVLS, R_NET_SHARP,
  R_HOST, R_HOST_CPU,
  R_NCCL, R_NCCL_CHANNELS, R_NCCL_PXN, R_NCCL_TAX, R_NCCL_VERSION, R_NCCL_PROTOS,
  PROTO_ROWS(LL), PROTO_ROWS(LL128), PROTO_ROWS(SIMPLE),
  R_NCCL_ALGOS,
  ALGO_ROWS(RING), ALGO_ROWS(TREE), ALGO_ROWS(NVLS), ALGO_ROWS(NVLS_TREE), ALGO_ROWS(HIER), ALGO_ROWS(COLLNET),
  ALGO_ROWS(CHAIN), ALGO_ROWS(DIRECT), ALGO_ROWS(PAT),
  R_GPU_POWER, R_NICS_POWER, R_NET_SWPOWER,
  R_COST, R_COST_CUR, R_COST_GPU, R_COST_NIC, R_COST_SW, R_COST_KWH,
  R_VAR,
  R_COUNT
};

static const char *const intra_kinds[] = {"nvswitch", "nvlink-mesh", "pcie"};
static const char *const topologies[] = {"single-switch", "fat-tree", "dragonfly"};
static const char *const wirings[] = {"node", "rail"};
static const char *const cpus[] = {"intel", "amd", "arm"}; /* dt_cpu_vendor order */

typedef struct key_spec {
  const char *key;
  int parent;     /* row of the enclosing section, -1 at the top level */
  value_type type;
  int required;   /* required whenever its section is present (conditional rules are in validate()) */
  size_t offset;  /* field of dt_platform (unused for sections and choices) */
  long lo, hi;    /* T_COUNT range */
  double rlo, rhi;/* T_REAL range: rlo < v <= rhi */
  const char *const *choices;
  size_t nchoices, nsupported;
} key_spec;

/* Ranges of the plain numbers (docs/platform.md "Ranges"): an efficiency of 1e-300 or a factor of 1e308 made
 * every derived time overflow or pass the replay's horizon. */
#define EFF_MIN 1e-3    /* efficiencies: above this, at most 1 (2^53 bytes / 1e-3 still fits a long flow size) */
#define FACTOR_MIN 1e-6 /* model factors: above this, at most FACTOR_MAX */
#define FACTOR_MAX 1e6
#define MONEY_MAX 1e9   /* prices: per device-hour or per kWh, at most 1e9 of the currency */

#define F(field) offsetof(dt_platform, field)
#define NOFIELD 0
#define CHOICES(list, supported) list, sizeof list / sizeof list[0], supported

#define PROTO_SPEC(P, name, i)                                                                                 \
  [R_P_##P] = {name, R_NCCL_PROTOS, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},                                   \
  [R_P_##P##_LAT] = {"latency", R_P_##P, T_TIME, 0, F(protocols[i].latency), 0, 0, 0, 0, NULL, 0, 0},               \
  [R_P_##P##_HOP] = {"hop_latency", R_P_##P, T_TIME, 0, F(protocols[i].hop_latency), 0, 0, 0, 0, NULL, 0, 0},       \
  [R_P_##P##_NET] = {"net_hop_latency", R_P_##P, T_TIME, 0, F(protocols[i].net_hop_latency), 0, 0, 0, 0, NULL, 0, 0}, \
  [R_P_##P##_EFF] = {"efficiency", R_P_##P, T_REAL, 0, F(protocols[i].efficiency), 0, 0, EFF_MIN, 1.0, NULL, 0, 0}, \
  [R_P_##P##_NET1] = {"ppn1_net_hop_latency", R_P_##P, T_TIME, 0, F(protocols[i].ppn1_net_hop_latency), 0, 0, 0, 0,  \
                      NULL, 0, 0}
#define ALGO_SPEC(A, name, i)                                                                                  \
  [R_A_##A] = {name, R_NCCL_ALGOS, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},                                    \
  [R_A_##A##_LAT] = {"latency", R_A_##A, T_TIME, 0, F(algorithms[i].latency), 0, 0, 0, 0, NULL, 0, 0},              \
  [R_A_##A##_EFF] = {"efficiency", R_A_##A, T_REAL, 0, F(algorithms[i].efficiency), 0, 0, EFF_MIN, 1.0, NULL, 0, 0}

static const key_spec schema[R_COUNT] = {
  [R_VERSION] = {"dtsim_platform", -1, T_VERSION, 1, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_NAME] = {"name", -1, T_STRING, 1, F(name), 0, 0, 0, 0, NULL, 0, 0},
  [R_GPU] = {"gpu", -1, T_SECTION, 1, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_GPU_MODEL] = {"model", R_GPU, T_STRING, 1, F(gpu_model), 0, 0, 0, 0, NULL, 0, 0},
  [R_GPU_PEAK] = {"peak", R_GPU, T_FLOPS, 1, F(gpu_peak), 0, 0, 0, 0, NULL, 0, 0},
  [R_GPU_EFF] = {"efficiency", R_GPU, T_REAL, 0, F(gpu_efficiency), 0, 0, EFF_MIN, 1.0, NULL, 0, 0},
  [R_GPU_CM] = {"compute", R_GPU, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_BF16] = {"bf16", R_GPU_CM, T_FLOPS, 0, F(compute.peak_bf16), 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_FP16] = {"fp16", R_GPU_CM, T_FLOPS, 0, F(compute.peak_fp16), 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_FP8] = {"fp8", R_GPU_CM, T_FLOPS, 0, F(compute.peak_fp8), 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_FP32] = {"fp32", R_GPU_CM, T_FLOPS, 0, F(compute.peak_fp32), 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_HBM] = {"hbm_bandwidth", R_GPU_CM, T_BANDWIDTH, 1, F(compute.hbm_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_CM_HBM_EFF] = {"hbm_efficiency", R_GPU_CM, T_REAL, 0, F(compute.hbm_efficiency), 0, 0, EFF_MIN, 1.0, NULL, 0, 0},
  [R_CM_GEMM_EFF] = {"gemm_efficiency", R_GPU_CM, T_REAL, 1, F(compute.gemm_efficiency), 0, 0, EFF_MIN, 1.0, NULL, 0,
                     0},
  [R_CM_GEMM8_EFF] = {"gemm_efficiency_fp8", R_GPU_CM, T_REAL, 0, F(compute.gemm_efficiency_fp8), 0, 0, EFF_MIN, 1.0,
                      NULL, 0, 0},
  [R_CM_ATTN_EFF] = {"attention_efficiency", R_GPU_CM, T_REAL, 0, F(compute.attn_efficiency), 0, 0, EFF_MIN, 1.0, NULL,
                     0, 0},
  [R_CM_SMS] = {"sms", R_GPU_CM, T_COUNT, 1, F(compute.sms), 1, 100000, 0, 0, NULL, 0, 0},
  [R_CM_TILE] = {"tile", R_GPU_CM, T_COUNT, 0, F(compute.tile), 8, 4096, 0, 0, NULL, 0, 0},
  [R_CM_KHALF] = {"k_half", R_GPU_CM, T_COUNT, 0, F(compute.k_half), 0, 1000000, 0, 0, NULL, 0, 0},
  [R_CM_DHALF] = {"dim_half", R_GPU_CM, T_COUNT, 0, F(compute.dim_half), 0, 1000000, 0, 0, NULL, 0, 0},
  [R_NODES] = {"nodes", -1, T_COUNT, 1, F(nodes), 1, 1000000, 0, 0, NULL, 0, 0},
  [R_GPN] = {"gpus_per_node", -1, T_COUNT, 1, F(gpus_per_node), 1, 1024, 0, 0, NULL, 0, 0},
  [R_INTRA] = {"intra_node", -1, T_SECTION, 1, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_KIND] = {"kind", R_INTRA, T_CHOICE, 1, NOFIELD, 0, 0, 0, 0, CHOICES(intra_kinds, 3)},
  /* per kind: which of these are allowed and required is in intra_rules below */
  [R_INTRA_BW] = {"bandwidth", R_INTRA, T_BANDWIDTH, 0, F(intra_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_LAT] = {"latency", R_INTRA, T_TIME, 1, F(intra_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_LINKS] = {"links", R_INTRA, T_LINKS, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_LBW] = {"link_bandwidth", R_INTRA, T_BANDWIDTH, 0, F(nvlink_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_GPS] = {"gpus_per_switch", R_INTRA, T_COUNT, 0, F(gpus_per_switch), 1, 1024, 0, 0, NULL, 0, 0},
  [R_INTRA_CPU_BW] = {"cpu_bandwidth", R_INTRA, T_BANDWIDTH, 0, F(cpu_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_INTRA_CPU_LAT] = {"cpu_latency", R_INTRA, T_TIME, 0, F(cpu_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_NICS] = {"nics", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_NICS_PER_NODE] = {"per_node", R_NICS, T_COUNT, 1, F(nics_per_node), 1, 1024, 0, 0, NULL, 0, 0},
  [R_NICS_BW] = {"bandwidth", R_NICS, T_BANDWIDTH, 1, F(nic_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_NICS_LAT] = {"latency", R_NICS, T_TIME, 1, F(nic_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET] = {"network", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_TOPO] = {"topology", R_NET, T_CHOICE, 1, NOFIELD, 0, 0, 0, 0, CHOICES(topologies, 3)},
  [R_NET_LEVELS] = {"levels", R_NET, T_COUNT, 0, F(levels), 2, 3, 0, 0, NULL, 0, 0},
  [R_NET_RADIX] = {"radix", R_NET, T_COUNT, 0, F(radix), 2, 65536, 0, 0, NULL, 0, 0},
  [R_NET_OVERSUB] = {"oversubscription", R_NET, T_COUNT, 0, F(oversubscription), 1, 65535, 0, 0, NULL, 0, 0},
  [R_NET_WIRING] = {"wiring", R_NET, T_CHOICE, 0, NOFIELD, 0, 0, 0, 0, CHOICES(wirings, 2)},
  [R_NET_LBW] = {"link_bandwidth", R_NET, T_BANDWIDTH, 1, F(link_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_LLAT] = {"link_latency", R_NET, T_TIME, 1, F(link_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_GROUPS] = {"groups", R_NET, T_COUNT, 0, F(groups), 1, 100000, 0, 0, NULL, 0, 0},
  [R_NET_RPG] = {"routers_per_group", R_NET, T_COUNT, 0, F(routers_per_group), 1, 100000, 0, 0, NULL, 0, 0},
  [R_NET_NPR] = {"nodes_per_router", R_NET, T_COUNT, 0, F(nodes_per_router), 1, 100000, 0, 0, NULL, 0, 0},
  [R_NET_GLPR] = {"global_links_per_router", R_NET, T_COUNT, 0, F(global_links_per_router), 0, 100000, 0, 0, NULL,
                  0, 0},
  [R_NET_LOC_BW] = {"local_bandwidth", R_NET, T_BANDWIDTH, 0, F(local_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_LOC_LAT] = {"local_latency", R_NET, T_TIME, 0, F(local_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_GLOB_BW] = {"global_bandwidth", R_NET, T_BANDWIDTH, 0, F(global_bandwidth), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_GLOB_LAT] = {"global_latency", R_NET, T_TIME, 0, F(global_latency), 0, 0, 0, 0, NULL, 0, 0},
  [R_MODEL] = {"model", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_MODEL_BWF] = {"bandwidth_factor", R_MODEL, T_REAL, 0, F(bandwidth_factor), 0, 0, FACTOR_MIN, FACTOR_MAX, NULL, 0, 0},
  [R_MODEL_NBWF] = {"network_bandwidth_factor", R_MODEL, T_REAL, 0, F(network_bandwidth_factor), 0, 0, FACTOR_MIN,
                    FACTOR_MAX, NULL, 0, 0},
  [R_MODEL_LATF] = {"latency_factor", R_MODEL, T_REAL, 0, F(latency_factor), 0, 0, FACTOR_MIN, FACTOR_MAX, NULL, 0, 0},
  [R_INTRA_NVLS] = {"nvls", R_INTRA, T_BOOL, 0, F(nvls), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_SHARP] = {"sharp", R_NET, T_BOOL, 0, F(sharp), 0, 0, 0, 0, NULL, 0, 0},
  [R_HOST] = {"host", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_HOST_CPU] = {"cpu", R_HOST, T_CHOICE, 0, NOFIELD, 0, 0, 0, 0, CHOICES(cpus, 3)},
  [R_NCCL] = {"nccl", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_NCCL_CHANNELS] = {"channels", R_NCCL, T_COUNT, 0, F(channels), 1, 64, 0, 0, NULL, 0, 0},
  [R_NCCL_PXN] = {"pxn", R_NCCL, T_BOOL, 0, F(pxn), 0, 0, 0, 0, NULL, 0, 0},
  [R_NCCL_TAX] = {"overlap_tax", R_NCCL, T_TAX, 0, F(overlap_tax), 0, 0, 0, 0, NULL, 0, 0},
  [R_NCCL_VERSION] = {"version", R_NCCL, T_NCCLVER, 0, F(nccl_version), 0, 0, 0, 0, NULL, 0, 0},
  [R_NCCL_PROTOS] = {"protocols", R_NCCL, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  PROTO_SPEC(LL, "LL", DT_PROTO_LL),
  PROTO_SPEC(LL128, "LL128", DT_PROTO_LL128),
  PROTO_SPEC(SIMPLE, "Simple", DT_PROTO_SIMPLE),
  [R_NCCL_ALGOS] = {"algorithms", R_NCCL, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  ALGO_SPEC(RING, "ring", DT_ALGO_RING),
  ALGO_SPEC(TREE, "tree", DT_ALGO_TREE),
  ALGO_SPEC(NVLS, "nvls", DT_ALGO_NVLS),
  ALGO_SPEC(NVLS_TREE, "nvls-tree", DT_ALGO_NVLS_TREE),
  ALGO_SPEC(HIER, "hier", DT_ALGO_HIER),
  ALGO_SPEC(COLLNET, "collnet", DT_ALGO_COLLNET),
  ALGO_SPEC(CHAIN, "chain", DT_ALGO_CHAIN),
  ALGO_SPEC(DIRECT, "direct", DT_ALGO_DIRECT),
  [R_GPU_POWER] = {"power", R_GPU, T_POWER2, 0, F(gpu_power), 1, 0, 0, 0, NULL, 0, 0},
  [R_NICS_POWER] = {"power", R_NICS, T_POWER2, 0, F(nic_power), 0, 0, 0, 0, NULL, 0, 0},
  [R_NET_SWPOWER] = {"switch_power", R_NET, T_POWER2, 0, F(switch_power), 0, 0, 0, 0, NULL, 0, 0},
  [R_COST] = {"cost", -1, T_SECTION, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
  [R_COST_CUR] = {"currency", R_COST, T_STRING, 0, F(cost.currency), 0, 0, 0, 0, NULL, 0, 0},
  [R_COST_GPU] = {"gpu_hour", R_COST, T_MONEY, 0, F(cost.gpu_hour), 0, 0, 0, 0, NULL, 0, 0},
  [R_COST_NIC] = {"nic_hour", R_COST, T_MONEY, 0, F(cost.nic_hour), 0, 0, 0, 0, NULL, 0, 0},
  [R_COST_SW] = {"switch_hour", R_COST, T_MONEY, 0, F(cost.switch_hour), 0, 0, 0, 0, NULL, 0, 0},
  [R_COST_KWH] = {"energy_kwh", R_COST, T_MONEY, 0, F(cost.energy_kwh), 0, 0, 0, 0, NULL, 0, 0},
  ALGO_SPEC(PAT, "pat", DT_ALGO_PAT),
  [R_VAR] = {"variability", -1, T_VARIABILITY, 0, NOFIELD, 0, 0, 0, 0, NULL, 0, 0},
};

/* Which kinds (bit 1 << choice index) allow and which require a key; a key given with another kind is an
 * error rather than silently ignored. */
typedef struct kind_rule {
  int row;
  unsigned allowed, required;
} kind_rule;

#define K_NVSWITCH (1u << DT_INTRA_NVSWITCH)
#define K_MESH (1u << DT_INTRA_NVLINK_MESH)
#define K_PCIE (1u << DT_INTRA_PCIE)
#define N_SINGLE (1u << 0)
#define N_TREE (1u << 1)
#define N_DRAGONFLY (1u << 2)

static const kind_rule intra_rules[] = {
    {R_INTRA_BW, K_NVSWITCH | K_PCIE, K_NVSWITCH | K_PCIE},
    {R_INTRA_LINKS, K_MESH, K_MESH},
    {R_INTRA_LBW, K_MESH, K_MESH},
    {R_INTRA_GPS, K_PCIE, K_PCIE},
    {R_INTRA_CPU_BW, K_PCIE, 0}, /* required when there is more than one switch */
    {R_INTRA_CPU_LAT, K_PCIE, 0},
    {R_INTRA_NVLS, K_NVSWITCH, 0},
};

static const kind_rule net_rules[] = {
    {R_NET_LEVELS, N_TREE, N_TREE},
    {R_NET_RADIX, N_TREE, N_TREE},
    {R_NET_OVERSUB, N_TREE, 0},
    {R_NET_WIRING, N_TREE, 0},
    {R_NET_GROUPS, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_RPG, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_NPR, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_GLPR, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_LOC_BW, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_LOC_LAT, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_GLOB_BW, N_DRAGONFLY, N_DRAGONFLY},
    {R_NET_GLOB_LAT, N_DRAGONFLY, N_DRAGONFLY},
};

/* State of one load: the document, where each key was seen, and the platform being filled. */
typedef struct loader {
  const char *file;
  yaml_document_t *doc;
  yaml_node_t *root;
  yaml_node_t *key[R_COUNT]; /* the key node of each row seen, NULL when absent */
  yaml_node_t *val[R_COUNT]; /* its value node */
  int choice[R_COUNT];       /* index into the row's choices for T_CHOICE rows */
  yaml_node_t **link_item;   /* [p->n_nvlinks] the YAML entry of each nvlink-mesh link, for positions */
  dt_platform *p;
  dt_error *err;
} loader;

/* "nics.bandwidth" for a row, "nodes" at the top level. */
static const char *path_of(int row, char *buf, size_t size)
{
  int chain[8], n = 0;
  for (int r = row; r >= 0 && n < 8; r = schema[r].parent)
    chain[n++] = r;
  size_t len = 0;
  buf[0] = '\0';
  while (n-- > 0 && len < size) {
    int w = snprintf(buf + len, size - len, "%s%s", len ? "." : "", schema[chain[n]].key);
    len += w > 0 ? (size_t)w : 0;
  }
  return buf;
}

/* The keys inside the {idle, busy} mappings of the T_POWER2 rows (comm: the GPU's only), which the schema's rows
 * do not list one by one: a sweep can set one figure (`gpu.power.busy`) of a base that gives the mapping. */
static const char *const power_subkeys[] = {"gpu.power.idle",  "gpu.power.busy",  "gpu.power.comm",
                                            "nics.power.idle", "nics.power.busy", "network.switch_power.idle",
                                            "network.switch_power.busy"};
#define NPOWER_SUBKEYS (sizeof power_subkeys / sizeof power_subkeys[0])

size_t dt_platform_key_count(void)
{
  return R_COUNT + NPOWER_SUBKEYS;
}

int dt_platform_key_numeric(size_t i)
{
  if (i >= R_COUNT)
    return 0;
  value_type t = schema[i].type;
  return t == T_VERSION || t == T_COUNT || t == T_REAL || t == T_TAX || t == T_BOOL; /* as convert() refuses */
}

const char *dt_platform_key_path(size_t i)
{
  static char paths[R_COUNT][96];
  if (i >= R_COUNT)
    return i - R_COUNT < NPOWER_SUBKEYS ? power_subkeys[i - R_COUNT] : NULL;
  if (!paths[i][0])
    path_of((int)i, paths[i], sizeof paths[i]);
  return paths[i];
}

/* Fills the error at a node's start (libyaml marks are 0-based). */
static int fail_at(loader *L, const yaml_node_t *node, const char *fmt, ...) DT_PRINTF(3, 4);
static int fail_at(loader *L, const yaml_node_t *node, const char *fmt, ...)
{
  long line = node ? (long)node->start_mark.line + 1 : 0;
  long col = node ? (long)node->start_mark.column + 1 : 0;
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(L->err, L->file, line, col, fmt, ap);
  va_end(ap);
  return DT_ERR;
}

static const char *scalar_text(const yaml_node_t *n)
{
  return (const char *)n->data.scalar.value;
}

/* A plain empty, `~` or `null` scalar: YAML's null, i.e. a key given without a value. */
static int is_null(const yaml_node_t *n)
{
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return 0;
  const char *s = scalar_text(n);
  return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* What a node holds, for "found ..." in messages. */
static const char *describe(const yaml_node_t *n, char *buf, size_t size)
{
  if (n->type == YAML_MAPPING_NODE)
    snprintf(buf, size, "a mapping");
  else if (n->type == YAML_SEQUENCE_NODE)
    snprintf(buf, size, "a sequence");
  else if (is_null(n))
    snprintf(buf, size, "nothing");
  else if (!*scalar_text(n))
    snprintf(buf, size, "an empty string");
  else
    snprintf(buf, size, "'%.200s'", scalar_text(n));
  return buf;
}

/* Whole number (dt_parse_whole: decimal digits alone, no sign); -1 when the text is not one. Values past 2^63
 * saturate, and a '-' before digits (even '-0') is below every range, so that the range check names them. */
static int parse_long(const char *s, long *out)
{
  long long v;
  if (s[0] == '-' && dt_parse_whole(s + 1, 0, LLONG_MAX, &v) != -1) {
    *out = LONG_MIN;
    return 0;
  }
  int rc = dt_parse_whole(s, 0, LLONG_MAX, &v);
  if (rc == -1)
    return -1;
  *out = rc == 0 ? (long)v : LONG_MAX;
  return 0;
}

/* Plain decimal number (dt_parse_real: no '+', inf, nan or hex); -1 when the text is not one. A number past a
 * double's range is infinite, so that the (finite) range check of each key names the range. */
static int parse_real(const char *s, double *out)
{
  return dt_parse_real(s, out);
}

/* What a range message adds for parse_real's -2: the number is nonzero but too small to read as one. */
static const char *tiny(int parse_rc)
{
  return parse_rc == -2 ? " (nonzero, but below " DT_NONZERO_MIN_TEXT ", the smallest nonzero number dtsim reads: "
                          "write 0 for none)"
                        : "";
}

/* One whole number of a [gpu, gpu, count] entry. */
static int link_number(loader *L, yaml_node_t *n, const char *what, long lo, long hi, int *out)
{
  char found[256];
  long x;
  char tagbuf[160];
  if (n->type != YAML_SCALAR_NODE || dt_yaml_not_plain(n, tagbuf, sizeof tagbuf) ||
      parse_long(scalar_text(n), &x) != 0 || x < lo || x > hi)
    return fail_at(L, n, "expected %s in an entry of 'intra_node.links', found %s", what,
                   describe(n, found, sizeof found));
  *out = (int)x;
  return DT_OK;
}

/* `intra_node.links`: a non-empty sequence of [gpu, gpu, count]. Ranges against gpus_per_node, duplicates
 * and connectivity are checked in validate(), once every key is read. */
static int convert_links(loader *L, yaml_node_t *v)
{
  char found[256];
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return fail_at(L, v, "expected a sequence of [gpu, gpu, count] entries for 'intra_node.links', found %s",
                   describe(v, found, sizeof found));
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  L->p->nvlinks = dt_xcalloc(n, sizeof *L->p->nvlinks);
  L->link_item = dt_xcalloc(n, sizeof *L->link_item);
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *e = yaml_document_get_node(L->doc, v->data.sequence.items.start[i]);
    if (e->type != YAML_SEQUENCE_NODE || e->data.sequence.items.top - e->data.sequence.items.start != 3)
      return fail_at(L, e, "expected an entry [gpu, gpu, count] in 'intra_node.links', found %s",
                     describe(e, found, sizeof found));
    yaml_node_t *a = yaml_document_get_node(L->doc, e->data.sequence.items.start[0]);
    yaml_node_t *b = yaml_document_get_node(L->doc, e->data.sequence.items.start[1]);
    yaml_node_t *c = yaml_document_get_node(L->doc, e->data.sequence.items.start[2]);
    dt_nvlink *l = &L->p->nvlinks[i];
    if (link_number(L, a, "a GPU index (a whole number from 0 to gpus_per_node - 1)", 0, INT_MAX, &l->a) != DT_OK ||
        link_number(L, b, "a GPU index (a whole number from 0 to gpus_per_node - 1)", 0, INT_MAX, &l->b) != DT_OK ||
        link_number(L, c, "a whole number of NVLinks from 1 to 1024", 1, 1024, &l->count) != DT_OK)
      return DT_ERR;
    L->link_item[i] = e;
    L->p->n_nvlinks = (int)i + 1;
  }
  return DT_OK;
}

/* One power of a T_POWER2 row: "700W" into *out, or an error naming path (and the mapping key, when given). */
static int power_value(loader *L, yaml_node_t *v, const char *path, const char *key, double *out)
{
  char found[256], why[512], name[160];
  snprintf(name, sizeof name, "%s%s%s", path, key ? "." : "", key ? key : "");
  if (v->type != YAML_SCALAR_NODE || is_null(v) || !*scalar_text(v))
    return fail_at(L, v, "expected a power such as '700W' for '%s', found %s", name, describe(v, found, sizeof found));
  if (dt_parse_power(scalar_text(v), out, why, sizeof why) != 0)
    return fail_at(L, v, "bad value for '%s': %s", name, why);
  return DT_OK;
}

/* A T_POWER2 row: a power (idle = busy: constant) or {idle: W, busy: W}, both keys required, idle <= busy; the GPU's
 * mapping (lo == 1) may also give comm, its power while it communicates without computing, idle <= comm <= busy. */
static int convert_power(loader *L, int row, yaml_node_t *v)
{
  const key_spec *k = &schema[row];
  dt_power_figures *pf = (dt_power_figures *)((char *)L->p + k->offset);
  char path[128], found[256];
  path_of(row, path, sizeof path);
  if (v->type == YAML_SCALAR_NODE && k->lo != 1) {
    if (power_value(L, v, path, NULL, &pf->busy) != DT_OK)
      return DT_ERR;
    pf->idle = pf->comm = pf->busy;
    pf->present = 1;
    return DT_OK;
  }
  if (v->type != YAML_MAPPING_NODE)
    return fail_at(L, v, "expected %s{idle: W, busy: W} for '%s', found %s",
                   k->lo == 1 ? "a mapping " : "a power such as '25W' or a mapping ", path,
                   describe(v, found, sizeof found));
  static const char *const keys[] = {"idle", "busy", "comm"};
  size_t nkeys = k->lo == 1 ? 3 : 2;
  yaml_node_t *seen[3] = {NULL, NULL, NULL};
  double val[3] = {0, 0, 0};
  for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++) {
    yaml_node_t *kn = yaml_document_get_node(L->doc, pair->key);
    yaml_node_t *vn = yaml_document_get_node(L->doc, pair->value);
    if (kn->type != YAML_SCALAR_NODE)
      return fail_at(L, kn, "expected a key name in '%s', found %s", path, describe(kn, found, sizeof found));
    const char *name = scalar_text(kn);
    int i = -1;
    for (size_t q = 0; q < nkeys; q++)
      if (strcmp(name, keys[q]) == 0)
        i = (int)q;
    if (i < 0) {
      const char *near = dt_nearest_word(name, keys, nkeys);
      if (near)
        return fail_at(L, kn, "unknown key '%s' in '%s' (did you mean '%s'?)", name, path, near);
      return fail_at(L, kn, "unknown key '%s' in '%s' (expected 'idle' and 'busy'%s)", name, path,
                     nkeys == 3 ? ", optionally 'comm'" : "");
    }
    if (seen[i])
      return fail_at(L, kn, "duplicate key '%s' in '%s' (first given at line %ld)", name, path,
                     (long)seen[i]->start_mark.line + 1);
    seen[i] = kn;
    if (power_value(L, vn, path, name, &val[i]) != DT_OK)
      return DT_ERR;
  }
  for (int i = 0; i < 2; i++)
    if (!seen[i]) {
      char map[64];
      return fail_at(L, v, "missing required key '%s' in '%s' (%s; give both idle and busy power)", keys[i], path,
                     dt_yaml_mapping_at(v, map, sizeof map));
    }
  if (val[0] > val[1])
    return fail_at(L, seen[0], "'%s.idle' (%g W) is above '%s.busy' (%g W): a device draws at least its idle power "
                   "when busy", path, val[0], path, val[1]);
  if (seen[2] && !(val[2] >= val[0] && val[2] <= val[1]))
    return fail_at(L, seen[2], "'%s.comm' (%g W) is outside 'idle' to 'busy' (%g W to %g W): a GPU that communicates "
                   "draws at least its idle power and at most its busy power", path, val[2], val[0], val[1]);
  pf->idle = val[0];
  pf->busy = val[1];
  pf->comm = seen[2] ? val[2] : val[0];
  pf->comm_given = seen[2] != NULL;
  pf->present = 1;
  return DT_OK;
}

/* Converts the value of one non-section row into the platform. */
static int convert(loader *L, int row, yaml_node_t *v)
{
  const key_spec *k = &schema[row];
  char path[128], found[256], why[512];
  path_of(row, path, sizeof path);
  describe(v, found, sizeof found);
  char *field = (char *)L->p + k->offset;
  static const char *const what[] = {
      [T_SECTION] = "a mapping", [T_VERSION] = "the schema version 1", [T_STRING] = "a name",
      [T_COUNT] = "a whole number", [T_REAL] = "a number", [T_BANDWIDTH] = "a bandwidth such as '450GB/s'",
      [T_TIME] = "a time such as '1.2us'", [T_FLOPS] = "a compute rate such as '989TFLOPS'",
      [T_LINKS] = "a sequence of [gpu, gpu, count]", [T_CHOICE] = "one of", [T_BOOL] = "true or false",
      [T_TAX] = "a number from 0 to below 1", [T_POWER2] = "a power such as '700W'",
      [T_MONEY] = "a plain number (a price in cost.currency)", [T_NCCLVER] = "an NCCL version such as '2.17.1'"};

  if (k->type == T_LINKS)
    return convert_links(L, v);
  if (k->type == T_POWER2)
    return convert_power(L, row, v);
  if (k->type == T_VARIABILITY)
    return dt_platform_var_parse_yaml(L->doc, v, L->file, &L->p->variability, L->err);
  if (v->type != YAML_SCALAR_NODE || is_null(v) || !*scalar_text(v)) {
    if (k->type == T_CHOICE) {
      char list[256] = "";
      for (size_t i = 0; i < k->nsupported; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", k->choices[i]);
      return fail_at(L, v, "expected one of %s for '%s', found %s", list, path, found);
    }
    return fail_at(L, v, "expected %s for '%s', found %s", what[k->type], path, found);
  }
  const char *text = scalar_text(v);
  char tagbuf[160];
  const char *not_plain = dt_yaml_not_plain(v, tagbuf, sizeof tagbuf);
  int numeric = k->type == T_VERSION || k->type == T_COUNT || k->type == T_REAL || k->type == T_TAX ||
                k->type == T_BOOL;
  if (not_plain && not_plain == tagbuf)
    return fail_at(L, v, "expected %s for '%s', found %s %s (platform files use no YAML tags)",
                   k->type == T_CHOICE ? "a word" : what[k->type], path, not_plain, found);
  if (not_plain && numeric)
    return fail_at(L, v, "expected %s for '%s', found %s %s (numbers and booleans are written unquoted, as "
                   "'nodes: 4')", what[k->type], path, not_plain, found);

  switch (k->type) {
  case T_VERSION: {
    long n;
    if (parse_long(text, &n) != 0)
      return fail_at(L, v, "expected the schema version 1 for '%s', found %s", path, found);
    if (n != 1)
      return fail_at(L, v, "unsupported '%s' version %s (this dtsim reads version 1)", path, found);
    return DT_OK;
  }
  case T_STRING:
    *(char **)field = dt_xstrdup(text);
    return DT_OK;
  case T_NCCLVER: {
    int ver = dt_nccl_version_parse(text);
    if (ver < 0)
      return fail_at(L, v, "expected an NCCL version such as '2.17.1' or '2.32' for '%s', found %s (MAJOR.MINOR or "
                     "MAJOR.MINOR.PATCH as NCCL numbers its releases, without leading zeros; a package revision "
                     "'-1' may follow)", path, found);
    if (ver < DT_NCCL_VERSION_MIN || ver > DT_NCCL_VERSION_MAX)
      return fail_at(L, v, "NCCL version %s for '%s' is outside the releases dtsim models, %d.%d to %d.%d.x (older "
                     "tuners are not modelled; for a newer release give %d.%d, the newest model, which lacks what "
                     "changed after it)", found, path, DT_NCCL_VERSION_MIN / 10000, DT_NCCL_VERSION_MIN / 100 % 100,
                     DT_NCCL_VERSION_MAX / 10000, DT_NCCL_VERSION_MAX / 100 % 100, DT_NCCL_VERSION_MAX / 10000,
                     DT_NCCL_VERSION_MAX / 100 % 100);
    *(int *)field = ver;
    return DT_OK;
  }
  case T_COUNT: {
    long n;
    if (parse_long(text, &n) != 0)
      return fail_at(L, v, "expected a whole number for '%s', found %s%s", path, found,
                     text[0] == '+' ? " (digits alone, without a sign)" : "");
    if (n < k->lo || n > k->hi) { /* the whole range, whichever end is passed */
      if (k->hi - k->lo == 1)
        return fail_at(L, v, "expected %ld or %ld for '%s', found %s", k->lo, k->hi, path, found);
      return fail_at(L, v, "expected a whole number from %ld to %ld for '%s', found %s", k->lo, k->hi, path, found);
    }
    *(int *)field = (int)n;
    return DT_OK;
  }
  case T_REAL: {
    double x;
    int rc = parse_real(text, &x);
    if (rc == -1)
      return fail_at(L, v, "expected a plain number for '%s', found %s", path, found);
    if (rc == -2 || !(x > k->rlo && x <= k->rhi)) {
      /* a nonzero number too small to read is out of range on its own only above 0: one range, said once */
      const char *small = rc == -2 && k->rlo == 0 ? " (below " DT_NONZERO_MIN_TEXT ", the smallest positive "
                                                    "number dtsim reads)"
                                                  : "";
      if (isinf(k->rhi))
        return fail_at(L, v, "expected a number above %g for '%s', found %s%s", k->rlo, path, found, small);
      return fail_at(L, v, "expected a number above %g and at most %g for '%s', found %s%s", k->rlo, k->rhi, path,
                     found, small);
    }
    *(double *)field = x;
    return DT_OK;
  }
  case T_BANDWIDTH:
  case T_TIME:
  case T_FLOPS: {
    double x;
    int rc = k->type == T_BANDWIDTH ? dt_parse_bandwidth(text, &x, why, sizeof why)
             : k->type == T_TIME    ? dt_parse_time(text, &x, why, sizeof why)
                                    : dt_parse_flop_rate(text, &x, why, sizeof why);
    /* a nonzero bandwidth or rate below DT_NONZERO_MIN is below the platform's own minimum: that range alone */
    if (rc == -2 && k->type == T_BANDWIDTH)
      return fail_at(L, v, "expected a bandwidth from %g B/s to %g B/s for '%s', found %s (below %g B/s)",
                     DT_BANDWIDTH_MIN, DT_BANDWIDTH_MAX, path, found, DT_BANDWIDTH_MIN);
    if (rc == -2 && k->type == T_FLOPS)
      return fail_at(L, v, "expected a compute rate from %g FLOP/s to %g FLOP/s for '%s', found %s (below %g "
                     "FLOP/s)", DT_FLOP_RATE_MIN, DT_FLOP_RATE_MAX, path, found, DT_FLOP_RATE_MIN);
    if (rc != 0)
      return fail_at(L, v, "bad value for '%s': %s", path, why);
    if (k->type != T_TIME && x <= 0)
      return fail_at(L, v, "expected %s above zero for '%s', found %s", what[k->type], path, found);
    if (k->type == T_BANDWIDTH && x < DT_BANDWIDTH_MIN)
      return fail_at(L, v, "expected a bandwidth from %g B/s to %g B/s for '%s', found %s (%.3g B/s)",
                     DT_BANDWIDTH_MIN, DT_BANDWIDTH_MAX, path, found, x);
    if (k->type == T_FLOPS && x < DT_FLOP_RATE_MIN)
      return fail_at(L, v, "expected a compute rate from %g FLOP/s to %g FLOP/s for '%s', found %s (%.3g FLOP/s)",
                     DT_FLOP_RATE_MIN, DT_FLOP_RATE_MAX, path, found, x);
    *(double *)field = x;
    return DT_OK;
  }
  case T_CHOICE: {
    for (size_t i = 0; i < k->nchoices; i++)
      if (strcmp(text, k->choices[i]) == 0) {
        if (i >= k->nsupported) {
          char list[256] = "";
          for (size_t j = 0; j < k->nsupported; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", j ? ", " : "", k->choices[j]);
          return fail_at(L, v, "value '%s' for '%s' is not supported yet (supported: %s)", text, path, list);
        }
        L->choice[row] = (int)i;
        return DT_OK;
      }
    const char *near = dt_nearest_word(text, k->choices, k->nchoices);
    char list[256] = "";
    for (size_t j = 0; j < k->nsupported; j++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", j ? ", " : "", k->choices[j]);
    if (near)
      return fail_at(L, v, "unknown value %s for '%s' (did you mean '%s'?)", found, path, near);
    return fail_at(L, v, "unknown value %s for '%s' (expected %s%s)", found, path, k->nsupported > 1 ? "one of " : "",
                   list);
  }
  case T_BOOL:
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
      *(int *)field = text[0] == 't';
      return DT_OK;
    }
    return fail_at(L, v, "expected true or false for '%s', found %s", path, found);
  case T_TAX: {
    double x;
    int rc = parse_real(text, &x);
    if (rc != 0 || !(x >= 0 && x < 1))
      return fail_at(L, v, "expected a number from 0 to below 1 for '%s', found %s%s", path, found, tiny(rc));
    *(double *)field = x;
    return DT_OK;
  }
  case T_MONEY: {
    double x;
    int rc = parse_real(text, &x);
    if (rc != 0 || !(x >= 0 && x <= MONEY_MAX))
      return fail_at(L, v, "expected a plain number from 0 to %g for '%s' (a price in cost.currency, without a "
                     "currency sign), found %s%s", MONEY_MAX, path, found, tiny(rc));
    *(double *)field = x;
    return DT_OK;
  }
  case T_SECTION:
  case T_LINKS:
  case T_POWER2:
  case T_VARIABILITY:
    break;
  }
  return DT_OK;
}

/* Walks one mapping whose keys are the rows with parent `section` (-1: the top level). */
static int walk(loader *L, yaml_node_t *map, int section)
{
  char where[160], path[128];
  if (section < 0)
    snprintf(where, sizeof where, "at the top level");
  else
    snprintf(where, sizeof where, "in '%s'", path_of(section, path, sizeof path));

  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
    yaml_node_t *kn = yaml_document_get_node(L->doc, pair->key);
    yaml_node_t *vn = yaml_document_get_node(L->doc, pair->value);
    char found[256];
    if (kn->type != YAML_SCALAR_NODE)
      return fail_at(L, kn, "expected a key name %s, found %s", where, describe(kn, found, sizeof found));
    const char *name = scalar_text(kn);

    int row = -1;
    const char *cands[R_COUNT];
    size_t ncands = 0;
    for (int r = 0; r < R_COUNT; r++)
      if (schema[r].parent == section) {
        cands[ncands++] = schema[r].key;
        if (strcmp(schema[r].key, name) == 0)
          row = r;
      }
    if (row < 0) {
      const char *near = dt_nearest_word(name, cands, ncands);
      if (near)
        return fail_at(L, kn, "unknown key '%s' %s (did you mean '%s'?)", name, where, near);
      char list[1024] = "";
      for (size_t i = 0; i < ncands; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i == 0 ? "" : i + 1 == ncands ? " or " : ", ",
                 cands[i]);
      return fail_at(L, kn, "unknown key '%s' %s (expected %s)", name, where, list);
    }
    if (L->key[row])
      return fail_at(L, kn, "duplicate key '%s' %s (first given at line %ld)", name, where,
                     (long)L->key[row]->start_mark.line + 1);
    L->key[row] = kn;
    L->val[row] = vn;

    if (schema[row].type == T_SECTION) {
      if (vn->type != YAML_MAPPING_NODE)
        return fail_at(L, vn, "expected a mapping for '%s', found %s", name, describe(vn, found, sizeof found));
      if (walk(L, vn, row) != DT_OK)
        return DT_ERR;
    } else if (convert(L, row, vn) != DT_OK) {
      return DT_ERR;
    }
  }
  return DT_OK;
}

/* The error for a required key (row) that its mapping lacks, at the mapping, which it names with its start; because
 * (NULL or a phrase such as "required when 'nodes' is more than 1") says why it is required there. */
static int require(loader *L, int row, const char *because)
{
  if (L->val[row])
    return DT_OK;
  int parent = schema[row].parent;
  yaml_node_t *at = parent < 0 ? L->root : L->val[parent];
  char in[160] = "at the top level", map[64], path[128];
  if (parent >= 0)
    snprintf(in, sizeof in, "in '%s'", path_of(parent, path, sizeof path));
  return fail_at(L, at, "missing required key '%s' %s (%s%s%s)", schema[row].key, in,
                 dt_yaml_mapping_at(at, map, sizeof map), because ? "; " : "", because ? because : "");
}

/* Keys that belong to other kinds (or topologies) than the one chosen are errors at the key; keys the chosen
 * one requires must be there. */
static int check_kind_rules(loader *L, const kind_rule *rules, size_t n, int choice, int section, const char *what,
                            const char *const *names)
{
  unsigned bit = 1u << choice;
  /* the first misplaced key in document order */
  const kind_rule *bad = NULL;
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *k = L->key[rules[i].row];
    if (k && !(rules[i].allowed & bit) && (!bad || k->start_mark.index < L->key[bad->row]->start_mark.index))
      bad = &rules[i];
  }
  if (bad) {
    char list[256] = "";
    int count = 0;
    for (int c = 0; c < 8; c++)
      if (bad->allowed & (1u << c))
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", count++ ? ", " : "", names[c]);
    return fail_at(L, L->key[bad->row], "key '%s' in '%s' applies only to %s%s %s (not '%s')", schema[bad->row].key,
                   schema[section].key, what, count > 1 ? "s" : "", list, names[choice]);
  }
  for (size_t i = 0; i < n; i++)
    if (rules[i].required & bit) {
      char because[128];
      snprintf(because, sizeof because, "required for %s '%s'", what, names[choice]);
      if (require(L, rules[i].row, because) != DT_OK)
        return DT_ERR;
    }
  return DT_OK;
}

static int link_key_cmp(const void *x, const void *y)
{
  const int *a = x, *b = y;
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i])
      return (a[i] > b[i]) - (a[i] < b[i]);
  return 0;
}

/* nvlink-mesh: every link names two different GPUs of the node, no pair twice, and every GPU reaches every
 * other within DT_ROUTE_MAX_HOPS NVLink hops. Entries are then stored with a < b. */
static int validate_mesh(loader *L)
{
  dt_platform *p = L->p;
  int g = p->gpus_per_node;
  for (int i = 0; i < p->n_nvlinks; i++) {
    dt_nvlink *l = &p->nvlinks[i];
    yaml_node_t *e = L->link_item[i];
    for (int end = 0; end < 2; end++) {
      int gpu = end ? l->b : l->a;
      if (gpu >= g)
        return fail_at(L, yaml_document_get_node(L->doc, e->data.sequence.items.start[end]),
                       "GPU %d in 'intra_node.links' is out of range (gpus_per_node is %d: GPUs 0 to %d)", gpu, g,
                       g - 1);
    }
    if (l->a == l->b)
      return fail_at(L, e, "link from GPU %d to itself in 'intra_node.links'", l->a);
    if (l->a > l->b) {
      int t = l->a;
      l->a = l->b;
      l->b = t;
    }
  }
  /* duplicates by sorting (GPU pair, entry): O(n log n), where comparing every pair took 13.7 s for 512 GPUs.
   * The entry reported is the first, in file order, that repeats an earlier one. */
  if (p->n_nvlinks > 1) {
    int (*key)[3] = dt_xmalloc((size_t)p->n_nvlinks * sizeof *key);
    for (int i = 0; i < p->n_nvlinks; i++) {
      key[i][0] = p->nvlinks[i].a;
      key[i][1] = p->nvlinks[i].b;
      key[i][2] = i;
    }
    qsort(key, (size_t)p->n_nvlinks, sizeof *key, link_key_cmp);
    /* a pair's entries sort by file order: the run's first entry is the first given, its second the first
     * repeat */
    int dup = -1, first = -1;
    for (int k = 1; k < p->n_nvlinks; k++)
      if (key[k][0] == key[k - 1][0] && key[k][1] == key[k - 1][1] &&
          (k < 2 || key[k - 2][0] != key[k][0] || key[k - 2][1] != key[k][1]) && (dup < 0 || key[k][2] < dup)) {
        dup = key[k][2];
        first = key[k - 1][2];
      }
    free(key);
    if (dup >= 0)
      return fail_at(L, L->link_item[dup],
                     "duplicate link between GPUs %d and %d in 'intra_node.links' (first given at line %ld; give "
                     "one entry with the total count)",
                     p->nvlinks[dup].a, p->nvlinks[dup].b, (long)L->link_item[first]->start_mark.line + 1);
  }
  int *dist = dt_platform_mesh_distances(p);
  int rc = DT_OK;
  for (int a = 0; a < g && rc == DT_OK; a++)
    for (int b = 0; b < g; b++) {
      int d = dist[(size_t)a * g + b];
      if (d < 0) {
        rc = fail_at(L, L->val[R_INTRA_LINKS], "the NVLink mesh is not connected: no path from GPU %d to GPU %d", a,
                     b);
        break;
      }
      if (d > DT_ROUTE_MAX_HOPS) {
        rc = fail_at(L, L->val[R_INTRA_LINKS],
                     "the NVLink mesh needs %d hops from GPU %d to GPU %d, more than the %d a route may have", d, a,
                     b, DT_ROUTE_MAX_HOPS);
        break;
      }
    }
  free(dist);
  return rc;
}

/* Power and cost (docs/platform.md "Power and cost"): energy is computed when gpu.power is given, so NIC and
 * switch figures without it, or an electricity price without it, would be ignored: errors instead. */
static int validate_energy(loader *L)
{
  dt_platform *p = L->p;
  static const int needs_gpu[] = {R_NICS_POWER, R_NET_SWPOWER};
  for (size_t i = 0; i < 2; i++)
    if (L->key[needs_gpu[i]] && !L->val[R_GPU_POWER]) {
      char path[128];
      return fail_at(L, L->key[needs_gpu[i]], "'%s' needs 'gpu.power' (energy is computed only when the GPUs have "
                     "power figures)", path_of(needs_gpu[i], path, sizeof path));
    }
  if (L->val[R_COST_KWH] && !L->val[R_GPU_POWER] && p->cost.energy_kwh > 0)
    return fail_at(L, L->val[R_COST_KWH], "'cost.energy_kwh' needs 'gpu.power' (the energy it prices comes from the "
                   "power figures)");
  if (!L->val[R_COST])
    return DT_OK;
  p->cost.present = 1;
  if (!L->val[R_COST_GPU] && !L->val[R_COST_NIC] && !L->val[R_COST_SW] && !L->val[R_COST_KWH])
    return fail_at(L, L->val[R_COST], "the 'cost' section gives no price: expected at least one of 'gpu_hour', "
                   "'nic_hour', 'switch_hour', 'energy_kwh'");
  if (!p->cost.currency)
    p->cost.currency = dt_xstrdup("USD");
  size_t n = strlen(p->cost.currency);
  for (size_t i = 0; i <= n; i++)
    if (n == 0 || n > 16 || (i < n && !isalpha((unsigned char)p->cost.currency[i]))) /* '5' is a number, not one */
      return fail_at(L, L->val[R_COST_CUR], "expected a currency code of 1 to 16 letters for 'cost.currency' (such "
                     "as USD or EUR), found '%.40s'", p->cost.currency);
  return DT_OK;
}

/* Rules across keys, once every value is converted. */
static int validate(loader *L)
{
  dt_platform *p = L->p;
  for (int r = 0; r < R_COUNT; r++) {
    int parent = schema[r].parent;
    if (schema[r].required && (parent < 0 || L->val[parent]) && require(L, r, NULL) != DT_OK)
      return DT_ERR;
  }
  if (p->nodes > 1) {
    if (require(L, R_NICS, "required when 'nodes' is more than 1") != DT_OK ||
        require(L, R_NET, "required when 'nodes' is more than 1") != DT_OK)
      return DT_ERR;
  }
  if (L->val[R_NET] && require(L, R_NICS, "required when 'network' is given") != DT_OK)
    return DT_ERR;

  if (validate_energy(L) != DT_OK)
    return DT_ERR;
  p->nccl = L->val[R_NCCL] != NULL;
  p->host_cpu = L->val[R_HOST_CPU] ? (dt_cpu_vendor)L->choice[R_HOST_CPU] : DT_CPU_INTEL;
  p->compute.present = L->val[R_GPU_CM] != NULL;
  p->intra_kind = (dt_intra_kind)L->choice[R_INTRA_KIND];
  if (check_kind_rules(L, intra_rules, sizeof intra_rules / sizeof intra_rules[0], L->choice[R_INTRA_KIND], R_INTRA,
                       "kind", intra_kinds) != DT_OK)
    return DT_ERR;
  if (p->intra_kind == DT_INTRA_NVLINK_MESH && validate_mesh(L) != DT_OK)
    return DT_ERR;
  if (p->intra_kind == DT_INTRA_PCIE) {
    if (p->gpus_per_node % p->gpus_per_switch != 0)
      return fail_at(L, L->val[R_INTRA_GPS], "'intra_node.gpus_per_switch' (%d) does not divide 'gpus_per_node' (%d)",
                     p->gpus_per_switch, p->gpus_per_node);
    if (p->gpus_per_node / p->gpus_per_switch > 1 &&
        (require(L, R_INTRA_CPU_BW, "required for kind 'pcie' with more than one switch") != DT_OK ||
         require(L, R_INTRA_CPU_LAT, "required for kind 'pcie' with more than one switch") != DT_OK))
      return DT_ERR;
  }
  if (dt_platform_var_check(p->variability, L->file, p->nodes, p->gpus_per_node, L->err) != DT_OK)
    return DT_ERR;
  if (L->val[R_NICS] && p->gpus_per_node % p->nics_per_node != 0)
    return fail_at(L, L->val[R_NICS_PER_NODE], "'nics.per_node' (%d) does not divide 'gpus_per_node' (%d)",
                   p->nics_per_node, p->gpus_per_node);

  if (!L->val[R_NET])
    return DT_OK;
  static const dt_net_topology topo_of_choice[] = {DT_NET_SINGLE_SWITCH, DT_NET_FAT_TREE, DT_NET_DRAGONFLY};
  p->topology = topo_of_choice[L->choice[R_NET_TOPO]];
  p->wiring = L->val[R_NET_WIRING] && L->choice[R_NET_WIRING] == 1 ? DT_WIRING_RAIL : DT_WIRING_NODE;
  if (check_kind_rules(L, net_rules, sizeof net_rules / sizeof net_rules[0], L->choice[R_NET_TOPO], R_NET, "topology",
                       topologies) != DT_OK)
    return DT_ERR;

  dt_fabric_shape shape;
  dt_error why;
  dt_error_clear(&why);
  if (p->topology == DT_NET_SINGLE_SWITCH)
    return DT_OK;
  if (p->topology == DT_NET_DRAGONFLY) {
    if (dt_platform_fabric_shape(p, &shape, &why) != DT_OK)
      return fail_at(L, L->val[R_NET], "%s", why.msg);
    return DT_OK;
  }

  long r = p->radix, k = p->oversubscription;
  if (r % (k + 1) != 0)
    return fail_at(L, L->val[R_NET_OVERSUB] ? L->val[R_NET_OVERSUB] : L->val[R_NET_RADIX],
                   "'network.radix' %ld with 'network.oversubscription' %ld does not split into whole ports: "
                   "down-ports radix*k/(k+1) = %ld*%ld/%ld and up-ports radix/(k+1) = %ld/%ld must be integers",
                   r, k, r, k, k + 1, r, k + 1);
  if (p->levels == 3 && r % 2 != 0)
    return fail_at(L, L->val[R_NET_RADIX], "a 3-level fat-tree needs an even 'network.radix', found %ld", r);

  if (dt_platform_fabric_shape(p, &shape, &why) != DT_OK)
    return fail_at(L, L->val[R_NET], "%s", why.msg);
  return DT_OK;
}

/* Describes a libyaml parser failure with its position. */
static int yaml_failure(loader *L, const yaml_parser_t *parser)
{
  const char *problem = parser->problem ? parser->problem : "cannot read the text";
  if (parser->error == YAML_READER_ERROR)
    return dt_error_set(L->err, L->file, 0, 0, "not valid YAML: %s at byte %zu", problem, parser->problem_offset);
  long line = (long)parser->problem_mark.line + 1, col = (long)parser->problem_mark.column + 1;
  if (parser->context)
    return dt_error_set(L->err, L->file, line, col, "not valid YAML: %s (%s at line %ld)", problem, parser->context,
                        (long)parser->context_mark.line + 1);
  return dt_error_set(L->err, L->file, line, col, "not valid YAML: %s", problem);
}

/* Converts text as the value of key i the way a platform file's reader does; on success, when canon is not NULL,
 * writes what it converted to (dt_platform_key_canon). Returns 0, or -1 with why. */
static int key_convert(size_t i, const char *text, char *why, size_t size, char *canon, size_t csize)
{
  if (i >= dt_platform_key_count())
    return snprintf(why, size, "unknown platform key"), -1;
  value_type t = i < R_COUNT ? schema[i].type : T_POWER2;
  if (canon)
    snprintf(canon, csize, "%s", text);
  if (t == T_SECTION || t == T_LINKS || t == T_VARIABILITY || t == T_STRING)
    return 0; /* sections and names: read with the rest of the platform */
  yaml_document_t doc;
  if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1))
    return 0; /* cannot check here: the platform file will */
  int id = yaml_document_add_scalar(&doc, NULL, (yaml_char_t *)text, -1, YAML_PLAIN_SCALAR_STYLE);
  int rc = DT_OK;
  if (id) {
    dt_error e;
    dt_error_clear(&e);
    loader L;
    memset(&L, 0, sizeof L);
    L.file = "";
    L.doc = &doc;
    L.err = &e;
    L.p = dt_xcalloc(1, sizeof *L.p); /* scratch: numbers only (names are skipped above) */
    yaml_node_t *v = yaml_document_get_node(&doc, id);
    double x = 0;
    rc = i >= R_COUNT ? power_value(&L, v, power_subkeys[i - R_COUNT], NULL, &x) : convert(&L, (int)i, v);
    if (rc != DT_OK) {
      snprintf(why, size, "%.*s", (int)(size > 1 ? size - 1 : 0), e.msg);
    } else if (canon) {
      const char *field = i < R_COUNT ? (const char *)L.p + schema[i].offset : NULL;
      switch (t) {
      case T_COUNT:
      case T_NCCLVER:
      case T_BOOL:
        snprintf(canon, csize, "%d", *(const int *)field);
        break;
      case T_REAL:
      case T_TAX:
      case T_MONEY:
        snprintf(canon, csize, "%.15g", *(const double *)field);
        break;
      case T_BANDWIDTH:
      case T_TIME:
      case T_FLOPS:
        snprintf(canon, csize, "%.15g %s", *(const double *)field,
                 t == T_BANDWIDTH ? "B/s" : t == T_TIME ? "s" : "FLOP/s");
        break;
      case T_POWER2:
        snprintf(canon, csize, "%.15g W", x);
        break;
      default: /* words (choices) and the schema version: as written */
        break;
      }
    }
    free(L.p);
  }
  yaml_document_delete(&doc);
  return rc == DT_OK ? 0 : -1;
}

int dt_platform_key_check(size_t i, const char *text, char *why, size_t size)
{
  return key_convert(i, text, why, size, NULL, 0);
}

int dt_platform_key_canon(size_t i, const char *text, char *canon, size_t size)
{
  char why[512];
  return key_convert(i, text, why, sizeof why, canon, size);
}

int dt_platform_parse(const char *text, size_t len, const char *source_name, dt_platform **out, dt_error *err)
{
  int rc = DT_ERR;
  yaml_parser_t parser;
  yaml_document_t doc, extra;
  int have_parser = 0, have_doc = 0, have_extra = 0;
  loader L;
  memset(&L, 0, sizeof L);
  L.file = source_name ? source_name : "";
  L.err = err;
  L.doc = &doc;
  dt_error_clear(err);
  *out = NULL;

  if (dt_yaml_check(text, text ? len : 0, L.file, err) != DT_OK)
    goto cleanup;
  if (!yaml_parser_initialize(&parser)) {
    dt_error_set(err, L.file, 0, 0, "cannot initialise the YAML parser");
    goto cleanup;
  }
  have_parser = 1;
  yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), text ? len : 0);
  if (!yaml_parser_load(&parser, &doc)) {
    yaml_failure(&L, &parser);
    goto cleanup;
  }
  have_doc = 1;
  L.root = yaml_document_get_root_node(&doc);
  if (!L.root) {
    dt_error_set(err, L.file, 0, 0, "the platform file is empty: expected a mapping starting with 'dtsim_platform: 1'");
    goto cleanup;
  }
  if (L.root->type != YAML_MAPPING_NODE) {
    char found[256];
    fail_at(&L, L.root, "expected a mapping of platform keys at the top level, found %s",
            describe(L.root, found, sizeof found));
    goto cleanup;
  }
  if (!yaml_parser_load(&parser, &extra)) {
    yaml_failure(&L, &parser);
    goto cleanup;
  }
  have_extra = 1;
  yaml_node_t *second = yaml_document_get_root_node(&extra);
  if (second) {
    dt_error_set(err, L.file, (long)second->start_mark.line + 1, (long)second->start_mark.column + 1,
                 "expected one YAML document, found a second one");
    goto cleanup;
  }

  L.p = dt_xcalloc(1, sizeof *L.p);
  L.p->gpu_efficiency = 1.0;
  L.p->compute.hbm_efficiency = 0.9;
  L.p->compute.attn_efficiency = 0.5;
  L.p->compute.tile = 128;
  L.p->compute.k_half = 64;
  L.p->compute.dim_half = 64;
  L.p->oversubscription = 1;
  L.p->wiring = DT_WIRING_NODE;
  L.p->topology = DT_NET_NONE;
  L.p->bandwidth_factor = 1.0;
  L.p->latency_factor = 1.0;
  dt_platform_nccl_defaults(L.p);
  if (walk(&L, L.root, -1) != DT_OK || validate(&L) != DT_OK)
    goto cleanup;
  L.p->source = dt_xstrdup(L.file);
  *out = L.p;
  L.p = NULL;
  rc = DT_OK;

cleanup:
  free(L.link_item);
  dt_platform_free(L.p);
  if (have_extra)
    yaml_document_delete(&extra);
  if (have_doc)
    yaml_document_delete(&doc);
  if (have_parser)
    yaml_parser_delete(&parser);
  return rc;
}

int dt_platform_load(const char *path, dt_platform **out, dt_error *err)
{
  *out = NULL;
  dt_error_clear(err);
  dt_phase("reading the platform %s", path);
  char *buf;
  size_t len;
  if (dt_read_config(path, "platform file", &buf, &len, err) != DT_OK)
    return DT_ERR;
  int rc = dt_platform_parse(buf, len, path, out, err);
  free(buf);
  return rc;
}
