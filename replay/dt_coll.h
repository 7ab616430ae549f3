/* Internal to replay/: what the collective algorithm modules (dt_coll_*.c) share. An instance runs as
 * point-to-point flows between member hosts on mailboxes named per (live instance, destination member, tag);
 * the group's shape (members per node, ring orders per channel) is computed once per group and cached. Every
 * algorithm is a row of the plan table (dt_coll_plan.c, below); docs/replay.md gives every closed form. */
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
  int32_t ring_ar_inter; /* network steps of a ring all-reduce in NCCL's tuner: 2(N-1); 2N before 2.23 */
  /* exact shortcuts (dt_coll_closed.c), for a group nothing else can share the links of (rp_group_exclusive):
   * for its ring and its all-to-all exchange (1: uniform, 0: simulate the flows) the common route latency and
   * fair share */
  int excl; /* 1: this shape's instances are exclusive (rp_group_exclusive, or a time-separated instance) */
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
  double fixed;         /* latency paid once: protocol + algorithm (0 without the model); the executor sleeps it
                           before the first phase, or merges it into a ring's closed-form wait */
  double S;             /* per-rank bytes the algorithm moves: op->bytes (0 for a barrier) */
  dt_fidelity fid;
} rp_inst;

/* One send of an exchange: bytes (before the efficiency is applied) to member `to` on mailbox tag `tag`. */
typedef struct rp_send {
  int32_t to;
  int32_t tag;
  double bytes;
} rp_send;

/* What a busy instance waits for to be time-separated after all, per member (rp_closed_exclusive fills it): the
 * member's ops that may meet it on its ports, by stream, as "stream q has completed its ops before need". Per
 * rank r, entries off[r] .. off[r + 1] - 1 sorted by (group, instance). */
typedef struct rp_sep_need {
  size_t *off;  /* [nranks + 1] */
  struct rp_need {
    int32_t g, q; /* group; the rank's stream (position in its streams[]) */
    int64_t k;    /* instance (op->match) */
    size_t need;  /* ops of stream q that must have completed */
  } *e;
} rp_sep_need;
/* Whether busy instance k of group g, all of whose members have arrived, is time-separated now: on every member,
 * every op that may meet it on the member's GPU port and is not ordered after it has completed (its flows with
 * it; those ordered after it start after it). Then it is waited as an exclusive group's would be; exact, since it
 * depends only on what has happened. 0 for an instance that is not busy (it needs no look). dt_coll_common.c. */
int rp_closed_ready(const rp_ctx *c, int32_t g, int64_t k);
/* Exact shortcuts (dt_coll_closed.c). rp_closed_exclusive: per group (t->ngroups entries, caller frees), 1 when
 * nothing else in the trace can share the links its flows cross while one of its instances runs and its instances
 * never overlap each other, 2 when that holds for some of its instances only (a group inside one node whose
 * ports other traffic uses at other times): *busy (t->ngroups entries, each NULL or a bitmap, caller frees all)
 * then marks the others, rp_closed_busy(busy[g], k) = 1 when instance k (op->match) must be simulated
 * (NVSwitch platforms only, else all 0), and *need what its busy instances wait for (caller frees with
 * rp_sep_need_free). rp_closed_uniform: whether the nflows flows src[k] -> dst[k] (members
 * of group g), all started at once with equal bytes, all have one route latency (*lat, s) and all get one
 * max-min fair share (*rate, bytes/s) from start to end; 0 when not (then they must be simulated). */
uint8_t *rp_closed_exclusive(const rp_ctx *c, uint64_t ***busy, rp_sep_need *need);
int rp_closed_busy(const uint64_t *busy, int64_t k);
void rp_sep_need_free(rp_sep_need *need);
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
/* The flows of one ring step over the channels' orders, every member to its successor (PXN relays not followed):
 * n x C pairs src[k] -> dst[k], channel by channel (caller frees both). dt_coll_ring.c. */
void rp_ring_flows(const rp_gshape *gs, int32_t **src, int32_t **dst, size_t *nflows);

/* The NCCL model's costs of running algorithm a with protocol pr on p (docs/replay.md, Protocols), computed in
 * this one place for the replay and for auto's estimate: fixed = (L_P + L_A) x latency_factor (s, paid once),
 * hop / net_hop = the protocol's per-step latency inside a node / across the network x latency_factor (s), eff =
 * e_P x e_A (a flow carries bytes / eff). Without the NCCL model: all 0 and eff 1. dt_coll_select.c. */
typedef struct rp_costs {
  double fixed, hop, net_hop, eff;
} rp_costs;
rp_costs rp_costs_of(const dt_platform *p, dt_algo a, dt_proto pr);
/* The same costs on group shape gs for op kind, with the terms of NCCL's tuner that depend on the group, by
 * `nccl.version` (docs/replay.md, "NCCL version"): the tree across nodes, and any algorithm but the all-to-all with
 * one member per node (>= 2.23), pays the protocol's
 * ppn1_net_hop_latency per network step; up to 2.17 LL's NVLink steps of a ring, tree or CollNet across nodes cost
 * 1.8 h; a ring all-reduce / all-gather / reduce-scatter across nodes (>= 2.18)
 * pays at least the host's network overhead per NVLink step (1 us Intel / Arm, 2 us AMD, x3 with Simple); PAT's
 * fixed cost is its own latency + 2.8 us per member and its per-step latencies are divided by 3.5. These are the
 * costs both the replay and auto's estimate use. dt_coll_select.c. */
rp_costs rp_costs_group(const dt_platform *p, dt_algo a, dt_proto pr, dt_op_kind kind, const rp_gshape *gs);
/* PAT's steps over n members: ceil(log2 n). */
int rp_pat_steps(int32_t n);
/* The group's shape (cached). */
const rp_gshape *rp_gshape_of(rp_ctx *c, int32_t g);
/* The shape instance `match` of group g runs on: the group's, or, for an instance that other traffic may meet on
 * its links (rp_closed_exclusive's busy ones), the same shape without its shortcuts (excl and the closed forms
 * 0). Owned by the context. */
const rp_gshape *rp_gshape_inst(rp_ctx *c, int32_t g, int64_t match);

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

/* ---- plans: every (op, algorithm) as data (dt_coll_plan.c; docs/replay.md, "Plans") ----
 *
 * An algorithm is a row of the plan table: whether it can run on a group shape (and why not, for a strict
 * --algo), its plan, and its note. A plan is a short list of phases; a phase is `steps` steps of one exchange
 * pattern (who sends how many bytes to whom), whose data is pipelined over `depth` hops. One executor
 * (rp_plan_run) runs any plan on SimGrid for one member, and one evaluator (rp_plan_estimate) prices it on the
 * group's shape without SimGrid, for auto. The fidelities are two ways of merging a phase's steps:
 *   flow: one transfer of steps x bytes per flow, then the latency of the other pipelined hops,
 *         (steps + depth - 2) alpha + (steps + depth - 1) h (a ring on the NCCL model splits the h terms into
 *         NVLink and network steps as NCCL's tuner does); a closed form waits it exactly where it applies;
 *   step: every step its own transfer followed by h, then (depth > 1) the last chunk's latency walks the
 *         pipeline as zero-byte messages (trees, chains). */
typedef enum rp_pattern {
  RP_PAT_RING,      /* the channels' rings over the group (PXN relays): to the successor; bytes split over channels */
  RP_PAT_NODE_RING, /* the ring of this member's node's members in local order */
  RP_PAT_NODE_NEXT, /* NVLS: to the next member of the node, through the switch; its own hop's latency */
  RP_PAT_RAILS,     /* hier / collnet across nodes: every rail this member holds, to the next node's holder */
  RP_PAT_TREE,      /* NCCL's tree: chains in the nodes, double binary trees between them (arg 1: up, 0: down) */
  RP_PAT_NODE_TREE, /* the same over the members with this member's local index, one per node, one channel */
  RP_PAT_CHAIN,     /* the chains from the root over the channels' orders (arg 1: toward the root, reduce) */
  RP_PAT_DIRECT,    /* all-to-all: to every other member (or node, aggregated) at once */
  RP_PAT_PAT,       /* PAT's step arg: to the member 2^k before (all-gather) or after (reduce-scatter) */
  RP_PAT_COUNT
} rp_pattern;

typedef struct rp_phase {
  uint8_t pattern; /* rp_pattern */
  uint8_t arg;     /* the pattern's argument (above) */
  uint8_t walk;    /* step fidelity: after this phase the latency walks the pipeline (the tree's last phase, chain) */
  int32_t tag;     /* mailbox tag (the ring and the chain add the channel, the tree its tree and direction) */
  int32_t steps;   /* steps; 0: nothing to do (a node ring of one member) */
  int32_t depth;   /* hops one step's data is pipelined over: 1; a tree's depth; a chain's n - 1 */
  int32_t inter;   /* >= 0: of the flow merge's per-step latencies, the network ones (a ring: NCCL's nInterSteps);
                      -1: all pay the pattern's largest per-step latency */
  double bytes;    /* per member and step, before the efficiency; the pattern splits it over its flows */
} rp_phase;

/* PAT's ceil(log2 n) phases bound a plan (n < 2^30). */
#define RP_PLAN_MAX 34
typedef struct rp_plan {
  int nphases;
  rp_phase ph[RP_PLAN_MAX];
} rp_plan;

/* What a pattern lists for one member and one step of a phase (dt_coll_<family>.c), into caller arrays of the
 * executor's capacity: sends and receive tags, the latencies the fidelities charge, and a closed form. */
typedef struct rp_listing {
  rp_send *sends;
  int32_t *tags;
  size_t ns, nr;
  double alpha;    /* flow: the route latency of each pipelined hop after the first (s) */
  double h;        /* the per-step protocol latency (s) */
  double after;    /* >= 0: the latency after the exchange at both fidelities instead (all-to-all rounds, s) */
  int closed;      /* 1: waited in closed form (cf_lat s, cf_rate bytes/s per flow; dt_coll_closed.c) */
  int merge;       /* 1: the closed wait also takes the fixed latency before it and the phase's latency after */
  double cf_lat, cf_rate;
  double cf_bytes; /* the bytes of each of the phase's flows in a step (all equal when closed) */
} rp_listing;

/* Whether a phase of the pattern is waited in closed form on this shape whatever the op (the group's shortcuts,
 * dt_coll_closed.c; a ring at flow fidelity). */
int rp_closed_ring(const rp_gshape *gs);
int rp_closed_tree(const rp_gshape *gs);
void rp_list_ring(const rp_inst *x, const rp_phase *ph, rp_listing *L);      /* dt_coll_ring.c */
void rp_list_node_ring(const rp_inst *x, const rp_phase *ph, rp_listing *L); /* dt_coll_hier.c */
void rp_list_rails(const rp_inst *x, const rp_phase *ph, rp_listing *L);
void rp_list_node_next(const rp_inst *x, const rp_phase *ph, rp_listing *L); /* dt_coll_nvls.c */
void rp_list_tree(const rp_inst *x, const rp_phase *ph, rp_listing *L);      /* dt_coll_tree.c */
void rp_list_node_tree(const rp_inst *x, const rp_phase *ph, rp_listing *L);
void rp_walk_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L);
void rp_walk_node_tree(const rp_inst *x, const rp_phase *ph, const rp_listing *L);
void rp_list_chain(const rp_inst *x, const rp_phase *ph, rp_listing *L);     /* dt_coll_chain.c */
void rp_walk_chain(const rp_inst *x, const rp_phase *ph, const rp_listing *L);
void rp_list_direct(const rp_inst *x, const rp_phase *ph, rp_listing *L);    /* dt_coll_alltoall.c */
void rp_list_pat(const rp_inst *x, const rp_phase *ph, rp_listing *L);       /* dt_coll_pat.c */

/* A row of the plan table, found by rp_algo_row (NULL: dtsim has no such algorithm for the kind). */
typedef struct rp_algo_row {
  dt_op_kind kind; /* as the algorithms run it (rp_algo_kind) */
  dt_algo algo;
  /* NULL when the algorithm can run on this platform and group shape, else why not (a sentence) */
  const char *(*why_not)(const dt_platform *p, const rp_gshape *gs);
  /* the plan of op kind `kind` of S per-rank bytes on the shape for member i (-1: for the estimate, which plans
   * the member that finishes last: the largest node's node rings) */
  void (*plan)(const rp_gshape *gs, dt_op_kind kind, double S, int32_t i, rp_plan *pl);
  const char *note; /* how it runs, in the user's words (the report's notes, --explain) */
} rp_algo_row;
const rp_algo_row *rp_algo_row_of(dt_op_kind kind, dt_algo algo);

/* Whether every phase of plan pl is waited in closed form on shape gs at flow fidelity, whatever the op (the
 * folding of ranks needs every collective of a class so). */
int rp_plan_closed(const rp_gshape *gs, const rp_plan *pl);
/* Runs plan pl for member x->i: the fixed latency, then every phase at x->fid's merging (above). */
void rp_plan_run(const rp_inst *x, const rp_plan *pl);
/* What rp_plan_run's flow merge runs for member x->i in phase ph (dt_coll_solve.c evaluates it): the listing
 * into L (sends and tags arrays of rp_plan_listing_cap entries), each send's bytes for all the phase's steps, and
 * the latency waited after the exchange (s). */
size_t rp_plan_listing_cap(const rp_gshape *s, const rp_phase *ph);
double rp_plan_flow_list(const rp_inst *x, const rp_phase *ph, rp_listing *L);
/* The plan's time on the group's shape without SimGrid (s): costs k's fixed latency, then per phase its first
 * hop's latency, the flow merge's latency (above) and its bytes over the pattern's bottleneck bandwidth
 * (docs/replay.md, auto), with the shape's largest intra- and inter-node latencies and its bandwidths. */
double rp_plan_estimate(const dt_platform *p, const rp_gshape *gs, const rp_plan *pl, rp_costs k);

/* NCCL's network steps of a ring over the group (src/graph/tuning.cc, nInterSteps): 0 on one node, 2(N - 1) for an
 * all-reduce (allreduce != 0; 2N with nccl.version before 2.23), N - 1 otherwise. */
size_t rp_ring_inter_steps(const rp_gshape *gs, int allreduce);
/* Depth of a heap-shaped binary tree over m members: floor(log2 m). */
int rp_tree_depth(int32_t m);
/* The busiest port's time (s, before the efficiency) in one phase of NCCL's tree (RP_PAT_TREE, dt_coll_tree.c)
 * carrying S bytes per member on the shape: a GPU's NVLink port 2 x S/(2C) per channel it neither heads nor ends
 * (the fewest a member of node 0 heads or ends), over bw_intra; across nodes at least a head's NIC, S/(2C) per
 * channel it heads (N = 2) or twice that (N > 2), over its NIC's bandwidth. The estimate's bandwidth term. */
double rp_tree_port_time(const rp_gshape *s, double S);
/* Whether an all-to-all over this group is aggregated per node pair. */
int rp_alltoall_aggregated(const rp_gshape *gs);

/* The op kind whose algorithms run op kind `kind` (barrier and `other` run as all-reduces). */
dt_op_kind rp_algo_kind(dt_op_kind kind);

/* Chooses algorithm and protocol for an instance (dt_coll_select.c): the forced ones if any (an algorithm that
 * cannot run on this platform or op falls back to the default), else the least estimated time. */
void rp_select(rp_ctx *c, const dt_op *op, const rp_gshape *gs, dt_algo *algo, dt_proto *proto);
/* Why the forced algorithm (c->algo) cannot run op on group shape gs: its plan row's reason, or that PAT runs
 * with Simple only; static text, for the fallback note (rp_coll_fallback_note). */
const char *rp_forced_why_not(const rp_ctx *c, const dt_op *op, const rp_gshape *gs);
/* Whether auto weighs algorithm a on this platform and shape (the ones NCCL's tuner never picks are opt-in only:
 * PAT over several members per node, and on the NCCL model dtsim's own hier). */
int rp_auto_candidate(const dt_platform *p, const rp_gshape *gs, dt_algo a);
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
