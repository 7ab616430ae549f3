/* Internal to replay/: what the collective algorithm modules (dt_coll_*.c) share. An instance runs as
 * point-to-point flows between member hosts on mailboxes named per (live instance, destination member, tag);
 * the group's shape (members per node, ring orders per channel) is computed once per group and cached.
 * docs/replay.md gives every algorithm's closed form. */
#ifndef DT_COLL_H
#define DT_COLL_H

#include "dt_replay_internal.h"

#include <stddef.h>
#include <stdint.h>

/* A group as the algorithms see it, built on first use. Members are indices into the group's rank list. */
typedef struct rp_gshape {
  int32_t n;            /* members */
  int32_t nnodes;       /* distinct nodes */
  int32_t min_per_node, max_per_node;
  int32_t *node_of;     /* [n] index of the member's node among the group's nodes (ascending node id) */
  int32_t *local;       /* [n] index of the member among its node's members (ascending local GPU) */
  int32_t *node_first;  /* [nnodes + 1] offsets into by_node */
  int32_t *by_node;     /* [n] members, node by node, each node's by local GPU */
  int nchannels;        /* C */
  int32_t *order;       /* [C * n] channel c's ring: the member at position k is order[c * n + k] */
  int32_t *pos;         /* [C * n] position of member i in channel c's ring */
  int32_t *pxn_proxy;   /* [C * n] member relaying the send of position k to k+1 (PXN), or -1: direct */
  int32_t *relay;       /* [C * n] the ring position whose send member i relays in channel c, or -1 */
  double ring_alpha;    /* largest latency of a ring hop over all channels (a PXN hop: both legs) */
  double ring_alpha_mean; /* mean latency of a ring hop over all channels' hops (a PXN hop: both legs) */
  double alpha_intra, alpha_net; /* largest member-to-member latency inside a node / between nodes */
  double bw_intra;      /* smallest route bandwidth between two members of one node */
  double bw_net;        /* inter-node bandwidth per member: its NIC's bandwidth shared by the members on it */
  int nics_used;        /* fewest distinct NICs a node's members use */
  /* exact shortcuts (dt_coll_closed.c), for a group nothing else can share the links of (rp_group_exclusive):
   * for its ring and its all-to-all exchange (1: uniform, 0: simulate the flows) the common route latency and
   * fair share */
  int ring_cf, a2a_cf;
  double ring_cf_lat, ring_cf_rate, a2a_cf_lat, a2a_cf_rate;
  /* and for the double binary tree's two phases over the channels' orders ([1]: reduce up, [0]: broadcast down) */
  int tree_cf[2];
  double tree_cf_lat[2], tree_cf_rate[2];
} rp_gshape;

/* What one member runs for one instance. */
typedef struct rp_inst {
  rp_ctx *c;
  const dt_op *op;
  int32_t g, i, n;      /* group, this member, members */
  int64_t id;           /* the live instance's id: names its mailboxes */
  const rp_gshape *gs;
  dt_algo algo;
  dt_proto proto;
  double eff;           /* bandwidth efficiency: protocol x algorithm (1 without the NCCL model) */
  double hop, net_hop;  /* per-step latency added inside a node / across the network (0 without the model) */
  double fixed;         /* latency paid once: protocol + algorithm (0 without the model) */
  double lead;          /* of it, what the algorithm still has to wait before its first exchange: 0, or `fixed`
                           when the ring's closed form merges it into its single wait */
  double S;             /* per-rank bytes the algorithm moves: op->bytes (0 for a barrier) */
  dt_fidelity fid;
} rp_inst;

/* One send of an exchange: bytes (before the efficiency is applied) to member `to` on mailbox tag `tag`. */
typedef struct rp_send {
  int32_t to;
  int32_t tag;
  double bytes;
} rp_send;

/* Exact shortcuts (dt_coll_closed.c). rp_closed_exclusive: per group (t->ngroups entries, caller frees), 1 when
 * nothing else in the trace can share the links its flows cross and its instances never overlap each other
 * (NVSwitch platforms only, else all 0). rp_closed_uniform: whether the nflows flows src[k] -> dst[k] (members
 * of group g), all started at once with equal bytes, all have one route latency (*lat, s) and all get one
 * max-min fair share (*rate, bytes/s) from start to end; 0 when not (then they must be simulated). */
uint8_t *rp_closed_exclusive(const rp_ctx *c);
/* A count per link direction (2 x links + 1 entries, owned by the context), all 0: a caller may count in it and
 * must leave it all 0 again. */
uint32_t *rp_link_scratch(const rp_ctx *c);
int rp_closed_uniform(const rp_ctx *c, int32_t g, size_t nflows, const int32_t *src, const int32_t *dst, double *lat,
                      double *rate);
/* Waits in closed form for this member's part of an exchange whose flows all carry the same bytes (before the
 * efficiency) and share latency lat (s) and fair share rate (bytes/s): lat + whole(bytes / eff) / rate, as
 * SimGrid would take, and records this member's sends with the per-link accounting. `before` and `after` (s) are
 * latencies to wait before and after the exchange, merged into the same single wait (one SimGrid activity). */
void rp_closed_wait(const rp_inst *x, const rp_send *sends, size_t nsends, double lat, double rate, double before,
                    double after);
/* The time one flow of `bytes` (before the efficiency) takes in closed form: lat + whole(bytes / eff) / rate (s). */
double rp_closed_time(const rp_inst *x, double bytes, double lat, double rate);
/* The flows of phase `up` (1: every member to its parent, 0: parent to children) of the double binary trees over
 * the channels' orders of a group of n members: *nflows pairs src[k] -> dst[k] (members; caller frees both, NULL
 * when n < 2). The replay's trees (dt_coll_tree.c) run exactly these. */
void rp_tree_flows(const rp_gshape *gs, int up, int32_t **src, int32_t **dst, size_t *nflows);

/* The NCCL model's costs of running algorithm a with protocol pr on p (docs/replay.md, Protocols), computed in
 * this one place for the replay and for auto's estimate: fixed = (L_P + L_A) x latency_factor (s, paid once),
 * hop / net_hop = the protocol's per-step latency inside a node / across the network x latency_factor (s), eff =
 * e_P x e_A (a flow carries bytes / eff). Without the NCCL model: all 0 and eff 1. dt_coll_select.c. */
typedef struct rp_costs {
  double fixed, hop, net_hop, eff;
} rp_costs;
rp_costs rp_costs_of(const dt_platform *p, dt_algo a, dt_proto pr);
/* The same costs on group shape gs for op kind, with the terms of NCCL's tuner that depend on the group, by
 * `nccl.version` (docs/replay.md, "NCCL version"): one member per node (>= 2.23) pays the protocol's
 * ppn1_net_hop_latency per network step; a ring all-reduce / all-gather / reduce-scatter across nodes (>= 2.18)
 * pays at least the host's network overhead per NVLink step (1 us Intel / Arm, 2 us AMD, x3 with Simple); PAT's
 * fixed cost is its own latency + 2.8 us per member and its per-step latencies are divided by 3.5. These are the
 * costs both the replay and auto's estimate use. dt_coll_select.c. */
rp_costs rp_costs_group(const dt_platform *p, dt_algo a, dt_proto pr, dt_op_kind kind, const rp_gshape *gs);
/* PAT's steps over n members: ceil(log2 n). */
int rp_pat_steps(int32_t n);
/* PAT all-gather / reduce-scatter (dt_coll_pat.c), one member per node. */
void rp_pat_run(const rp_inst *x);
/* A ring collective as a plan (dt_coll_select.c), shared by the replay (rp_ring_run) and auto's estimate: `steps`
 * steps of `chunk` bytes per member, `inter` of them network steps (rp_ring_inter_steps). kind is the algorithm
 * kind (rp_algo_kind: all-reduce, reduce-scatter or all-gather), S the per-rank bytes. */
typedef struct rp_ring_plan {
  size_t steps, inter;
  double chunk;
} rp_ring_plan;
rp_ring_plan rp_ring_plan_of(dt_op_kind kind, const rp_gshape *gs, double S);
/* The latency of a ring's steps after the first at flow fidelity (s): textbook (steps - 1) alpha_max; NCCL model
 * (steps - 1) mean hop latency + (steps - inter) hop + inter net_hop (NCCL pipelines a ring). */
double rp_ring_rest(const rp_gshape *gs, rp_ring_plan plan, rp_costs k, int nccl);

/* The group's shape (cached). */
const rp_gshape *rp_gshape_of(rp_ctx *c, int32_t g);

/* Posts every send (bytes / eff, rounded to whole bytes) and one receive per entry of recv_tags on this
 * member's mailboxes, and returns when all are complete. */
void rp_xfer(const rp_inst *x, const rp_send *sends, size_t nsends, const int32_t *recv_tags, size_t nrecvs);

/* Simulated sleep (no-op for d <= 0). */
void rp_sleep(double d);

/* Route latency between two members (their hosts). */
double rp_alpha(const rp_inst *x, int32_t a, int32_t b);
/* Per-step protocol latency of a hop between two members: x->net_hop across nodes, x->hop inside a node. */
double rp_hop(const rp_inst *x, int32_t a, int32_t b);

/* Global GPU of member i of group g. */
int32_t rp_gpu_of_member(const rp_ctx *c, int32_t g, int32_t i);

/* Ring over channels: the plan's steps of chunk bytes, split evenly over the channels' rings (flow: one flow per
 * channel and neighbour plus rp_ring_rest; step: every step). dt_coll_ring.c. */
void rp_ring_run(const rp_inst *x, rp_ring_plan plan);
/* NCCL's network steps of a ring over the group (src/graph/tuning.cc, nInterSteps): 0 on one node, 2(N - 1) for an
 * all-reduce (allreduce != 0), N - 1 otherwise. */
size_t rp_ring_inter_steps(const rp_gshape *gs, int allreduce);
/* Ring among a subset: members[k] sends to members[k + 1 mod m] on `tag`; this member is members[self].
 * `steps` steps of `chunk` bytes. Used by the hierarchical algorithms. */
void rp_subring_run(const rp_inst *x, const int32_t *members, int32_t m, int32_t self, size_t steps, double chunk,
                    int32_t tag);

/* Double binary tree all-reduce over the members in ring order (dt_coll_tree.c); over a subset with
 * rp_subtree_allreduce (members[], this member is members[self], tags from tag0). */
void rp_tree_allreduce(const rp_inst *x);
void rp_subtree_allreduce(const rp_inst *x, const int32_t *members, int32_t m, int32_t self, double bytes,
                          int32_t tag0);
/* Depth of a heap-shaped binary tree over m members: floor(log2 m). */
int rp_tree_depth(int32_t m);

void rp_nvls_allreduce(const rp_inst *x);      /* dt_coll_nvls.c: NVLS and NVLS-tree */
void rp_nvls_tree_allreduce(const rp_inst *x);
void rp_hier_allreduce(const rp_inst *x);      /* dt_coll_hier.c */
void rp_collnet_allreduce(const rp_inst *x);   /* dt_coll_collnet.c */
void rp_chain_run(const rp_inst *x, int toward_root); /* dt_coll_chain.c: broadcast (0), reduce (1) */
void rp_alltoall_run(const rp_inst *x);        /* dt_coll_alltoall.c */
/* Whether an all-to-all over this group is aggregated per node pair. */
int rp_alltoall_aggregated(const rp_gshape *gs);

/* The op kind whose algorithms run op kind `kind` (barrier and `other` run as all-reduces). */
dt_op_kind rp_algo_kind(dt_op_kind kind);
/* Whether the (op, algorithm) table has a row for kind and algo. */
int rp_algo_has(dt_op_kind kind, dt_algo algo);

/* Chooses algorithm and protocol for an instance (dt_coll_select.c): the forced ones if any (an algorithm that
 * cannot run on this platform or op falls back to the default), else the least estimated time. */
void rp_select(rp_ctx *c, const dt_op *op, const rp_gshape *gs, dt_algo *algo, dt_proto *proto);
/* Estimated time of op with algorithm a and protocol p on the group (NCCL-tuner-style: latency + size / bw),
 * or a negative number when a cannot run it. */
double rp_estimate(const rp_ctx *c, const dt_op *op, const rp_gshape *gs, dt_algo a, dt_proto p);
/* rp_estimate for op kind `kind` (as the algorithms run it) of S per-rank bytes. */
double rp_estimate_S(const rp_ctx *c, dt_op_kind kind, double S, const rp_gshape *gs, dt_algo a, dt_proto p);
/* A ring's bottleneck bandwidth per member (bytes/s): the intra-node bandwidth on one node, else the least of it
 * and the NICs' share (one NIC per channel, at most the NICs the node's members use). */
double rp_ring_bw(const rp_gshape *gs);

/* --explain (dt_explain.c): the row of an instance of op on group g just chosen (a, pr), created with every
 * candidate's estimate on first use; returns 1 + its index, or 0 when the table is full. */
int32_t rp_explain_choose(rp_ctx *c, const dt_op *op, int32_t g, const rp_gshape *gs, dt_algo a, dt_proto pr);

/* Records a choice for the notes. */
void rp_choice_record(rp_ctx *c, dt_op_kind kind, dt_algo a, dt_proto p, uint64_t bytes);

#endif
