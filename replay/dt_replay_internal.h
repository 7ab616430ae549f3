/* State shared by the replay's actors (dt_replay.c) and the collective algorithms (dt_collectives.c).
 * Internal to replay/: one simulation per process, so one context lives for the duration of dt_replay_run. */
#ifndef DT_REPLAY_INTERNAL_H
#define DT_REPLAY_INTERNAL_H

#include "../platforms/dt_topology.h"
#include "../traces/dt_trace.h"
#include "dt_replay.h"

#include <simgrid/forward.h>

#include <stddef.h>
#include <stdint.h>

/* A live collective instance (key: actual group, sequence, 0) or send/recv pair (key: src << 32 | dst, tag,
 * sequence): created when its first member arrives, freed (with its stats accumulated) when its last member's
 * op, or batch, completes. */
typedef struct rp_live {
  uint64_t key[3];
  int32_t id;          /* small, recycled after the record is freed: names the record's mailboxes */
  int32_t n;           /* members: the group's size, 2 for a pair */
  int32_t arrived;     /* members that issued it */
  int32_t ndone;       /* members whose op (or batch) completed */
  int32_t nbatched;    /* of those, members whose op was in a batch: their batch adds their share of the time */
  sg_bar_t bar;        /* the members of a collective wait on it until the last one arrives */
  double last_issue;   /* latest member issue time */
  double last_end;     /* latest member completion time */
  const dt_op *op;     /* the op of the lowest-ranked member that completed (the send's for a pair) */
  int32_t op_rank;
  const char *algo;    /* static label of the algorithm that ran, set by the algorithm module; NULL: the kind's
                          default (dt_replay.c) */
  const char *proto;   /* static label of the protocol that ran, or NULL */
  struct rp_cp_node *cp_cell; /* the critical path's cell of this instance (dt_critpath.h), NULL until used */
  int sel_algo;        /* dt_algo and dt_proto chosen once per instance by its last member to arrive, so that
                          every member runs the same algorithm (all-to-allv members differ in their splits) */
  int sel_proto;
  int32_t xrow;        /* 1 + its --explain row (dt_explain.c), 0: none */
  int sep;             /* 1: time-separated at its last arrival (rp_closed_ready), set by that member */
} rp_live;

typedef struct rp_table {
  rp_live **slots;     /* open addressing, linear probing, cap a power of two */
  size_t cap, n, peak;
  int32_t *free_ids;
  size_t nfree, free_cap;
  int32_t next_id;
  rp_live **spare;     /* freed records kept for reuse (a record per instance in flight, millions per run) */
  size_t nspare, spare_cap;
} rp_table;

/* The record of key (a, b, c), created with n members when absent. Never NULL. */
rp_live *rp_live_get(rp_table *tb, uint64_t a, uint64_t b, uint64_t c, int32_t n);
/* Removes a record (destroying its barrier) and keeps its memory for a later record; its id is reused too. */
void rp_live_remove(rp_table *tb, rp_live *l);
/* Frees every record left (a deadlocked run) and the table. */
void rp_table_free(rp_table *tb);

/* Group-local index lookup: (global rank, index in group) sorted by rank. */
typedef struct rp_member {
  int32_t rank;
  int32_t index;
} rp_member;

typedef struct rp_ctx {
  const dt_platform *p;
  const dt_trace *t;
  dt_topology *topo;
  dt_fidelity fidelity;
  const int32_t *gpu_of_rank; /* nranks entries */
  sg_host_t *host_of_rank;    /* nranks entries */

  rp_table instances;     /* live collective instances */
  rp_table pairs;         /* live send/recv pairs */
  rp_member **members;    /* per group: its members sorted by global rank */
  dt_algo algo;           /* forced algorithm (dt_replay_opts), DT_ALGO_AUTO to choose per instance */
  int proto;              /* forced protocol, -1 to choose per instance */
  uint64_t forced_fallback[DT_OP_COUNT]; /* instances per kind where the forced algorithm could not run */
  const char *forced_why[DT_OP_COUNT];   /* why, for the first of them (rp_forced_why_not; static text) */
  struct rp_coll *coll;   /* per-group shapes and the choices made (dt_coll_common.c) */
  int32_t *comm_active;   /* per rank: collectives and sends/recvs in flight (the overlap tax) */
  struct dt_linkload *linkload; /* per-link accounting (dt_linkload.h), NULL when off: every transfer of bytes
                                   between GPUs, a SimGrid flow or a modelled one, goes to dt_linkload_add */
  int exact;              /* 1: no shortcut, every exchange simulated as flows (--exact) */
  uint64_t closed_instances[DT_OP_COUNT]; /* instances per kind waited in closed form (dt_coll_closed.c) */
  /* folding (rp_fold_plan): fold ranks per class (0: none); per rank its class group and its index k in it
   * (k = 0: the representative, the only one that runs); per (group of the representatives, k) its image */
  int32_t fold;
  int32_t *fold_cls, *fold_idx, *fold_gimg;
  struct rp_explain *explain; /* --explain rows (dt_explain.c), NULL when off */
  struct dt_faults *faults; /* slow and failed links (dt_degrade.h), NULL when none */
  struct dt_timeline *tl;     /* --timeline, whose fabric counters observe the linkload, or NULL */
  struct rp_solved *solved;   /* evaluated tree instances kept for reuse (dt_coll_solve.c), NULL until used */
  /* the replay's per-stream progress (dt_replay.c): flat stream rank_stream0[r] + s of rank r has completed its
   * ops before stream_done[...]; NULL outside a replay (rp_closed_ready then says no) */
  const size_t *stream_done, *rank_stream0;
  double reached;             /* the latest time a collective's flows completed (rp_xfer), s: with the ops' ends,
                                 the time a deadlocked run reached */
  struct rp_flight *flights;  /* the flows in flight of the actors waiting on them (rp_flight_push), with links */
  int stopped;                /* 1 once rp_flights_cut ran: the list is left alone (killed actors' frames) */
} rp_ctx;

/* The flows an actor waits on, so that a run that stops while they move data counts what each had moved: the
 * per-link accounting's one rule (dt_linkload_stop). A record on the waiting actor's stack, linked only while it
 * waits in SimGrid (its comms are alive then: the wait holds them). comms[0, n) are its comms; cut(arg, k,
 * remaining, t0, t1) records comm k, which moved data from t0 and had `remaining` of its simulated bytes left at
 * the stop t1 (s), on the links (a receive: cut does nothing). */
typedef struct rp_flight {
  struct rp_flight *prev, *next;
  const sg_comm_t *comms;
  size_t n;
  void (*cut)(void *arg, size_t k, double remaining, double t0, double t1);
  void *arg;
} rp_flight;

/* Links f (its fields but prev/next set) while its actor waits; rp_flight_pop unlinks it when the wait returned.
 * Both do nothing without per-link accounting or once the run stopped. dt_coll_common.c. */
void rp_flight_push(rp_ctx *c, rp_flight *f);
void rp_flight_pop(rp_ctx *c, rp_flight *f);
/* The run stops at `now` (s), before its actors are killed: each flow in flight that moved data is recorded for
 * what it moved (cut), then the list is dropped for good. */
void rp_flights_cut(rp_ctx *c, double now);

/* Folding lock-step ranks (dt_coll_closed.c, docs/replay.md): on a textbook platform at flow fidelity, when every
 * rank belongs to one class -- an exclusive single-node group whose rings are waited in closed form -- and member
 * k of every class runs its representative's ops with every group and peer mapped member 0 -> member k, on links
 * that map one to one and never meet, only the representatives are simulated and the others copy them. Fills
 * c->fold and its maps and returns the class size, or 0 (no folding). Call after rp_coll_init. */
int rp_fold_plan(rp_ctx *c);
/* Whether group g is exclusive (rp_closed_exclusive; 0 with --exact). */
int rp_group_exclusive(const rp_ctx *c, int32_t g);

/* Sets up and frees the algorithm modules' state (c->p, c->t, c->topo and c->gpu_of_rank set). */
void rp_coll_init(rp_ctx *c);
/* Strict --algo (NCCL >= 2.24, by `nccl.version`): DT_OK, or DT_ERR with err naming the first collective of the
 * trace (file:line) that the forced algorithm cannot run, its group and why. Before the run; older versions and
 * textbook platforms fall back to the op's default at run time (and say so in the notes). dt_coll_select.c. */
int rp_select_check(rp_ctx *c, dt_error *err);
void rp_coll_free(rp_ctx *c);
/* Calls note(data, text) once per collective kind with the algorithms and protocols chosen for it, and after it
 * the kind's rp_coll_fallback_note when there is one. */
void rp_coll_notes(const rp_ctx *c, void (*note)(void *data, const char *text), void *data);
/* The note saying that the forced algorithm could not run some instances of op kind k (how many, why, and what
 * the platform lacks or which NCCL version it follows), into buf. Returns 1, or 0 (buf empty) when every
 * instance of k ran with it. `run` and `bench` both print it. dt_coll_common.c. */
int rp_coll_fallback_note(const rp_ctx *c, int k, char *buf, size_t size);

/* The live instance of collective op (an op of rank's body) as rank sees it: key (its group, op->match). */
rp_live *rp_instance_of(rp_ctx *c, const dt_op *op, int32_t rank);

/* Runs collective op (an op of rank's body, instance (its group, op->match)) for global rank `rank`: arrives
 * at the instance (creating it), blocks until the last member has arrived, then runs the algorithm as flows
 * between member hosts. Returns when this member's part is complete; the caller completes the member
 * (dt_replay.c frees the instance when its last member completes). Called from an actor on the rank's host. */
void rp_collective_run(rp_ctx *c, const dt_op *op, int32_t rank);

/* Group-local index of global rank in group g, or -1. */
int32_t rp_member_index(const rp_ctx *c, int32_t g, int32_t rank);

/* The NCCL model's cost of a send/recv pair from src_rank to dst_rank (docs/replay.md, point-to-point): the
 * protocol NCCL's p2p picks (LL up to 16 KiB, else Simple; a forced --proto LL or Simple wins) pays its base
 * latency and one hop's per-step latency (NVLink or network), returned in seconds, to be waited by both sides
 * once the data has arrived; *eff receives the protocol's efficiency (the flow carries bytes / *eff). Without
 * the NCCL model: 0 and *eff = 1. *label receives the protocol's static label for the records, or NULL. */
double rp_p2p_cost(const rp_ctx *c, int32_t src_rank, int32_t dst_rank, uint64_t bytes, double *eff,
                   const char **label);
/* The algorithm a collective of kind runs unless auto or --algo picks another (dt_coll_select.c): chain for
 * broadcast and reduce, direct for all-to-all, ring otherwise (barrier and `other` run as all-reduces). */
dt_algo rp_default_algo(dt_op_kind kind);
/* Lowercase label of a protocol for the per-instance records ("ll", "ll128", "simple"). */
const char *rp_proto_label(dt_proto proto);

/* --explain rows (dt_explain.c; rp_explain_choose in dt_coll.h creates them): rp_explain_new makes the table,
 * rp_explain_done adds an instance's simulated time t (s) to row xrow (1-based), m times (folding), and
 * rp_explain_take moves the rows into s (NULL: drops them) and frees the table; a NULL table is a no-op. */
struct rp_explain *rp_explain_new(void);
void rp_explain_done(rp_ctx *c, int32_t xrow, double t, int m);
/* A send/recv pair from rank src to dst of `bytes` took t (s, last side's arrival to completion), m times (folding):
 * added to the row of its size and route shape (dt_stats.explain_p2p), made with the route's alpha-beta terms and
 * the NCCL model's p2p terms on first sight. With npairs > 0, a queue of npairs pairs of one batch from src to dst
 * (`bytes` in all) took t, from the latest arrival of its pairs to its last send's completion: added to the rows of
 * batch queues of that many pairs and bytes. No-op without --explain. */
void rp_explain_p2p(rp_ctx *c, int32_t src, int32_t dst, uint64_t bytes, uint64_t npairs, double t, int m);
void rp_explain_take(rp_ctx *c, dt_stats *s);

/* Simulated time as the replay's actors see it (s): SimGrid's clock, or, while a stream runs GPU-local ops ahead
 * of it (coalescing, dt_replay.c, docs/replay.md "Shortcuts"), that stream's own clock. The algorithm modules
 * read the time with it, never with simgrid_get_clock. */
double rp_now(void);
/* Waits d seconds of simulated time (nothing when d <= 0): a SimGrid sleep, or, while the stream runs ahead, an
 * advance of its clock (then the caller makes no other simcall). */
void rp_wait(double d);

/* Bytes each member of an all-to-all sends in total (sum of splits, or bytes). */
uint64_t rp_alltoall_bytes(const dt_op *op);

#endif
