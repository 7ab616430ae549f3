/* An exact evaluator of SimGrid's flow sharing for one collective instance nothing else shares (docs/replay.md,
 * "Shortcuts"): the flows of the instance, their routes and the order in which they start (gates) are given, and
 * rp_solver_run computes what SimGrid 3.32 would simulate for them with dtsim's network configuration (CM02, no
 * TCP window, no cross-traffic, weight-S 0): every flow pays its route latency first, then shares the links of its
 * route max-min with weight 1 / latency (a link's bandwidth is divided among its flows in proportion to their
 * weights, progressively filled), re-solved whenever a flow joins or ends; events closer than the time precision
 * happen together, as in SimGrid. No SimGrid call: the evaluator is plain C and can run outside a simulation.
 * Internal to replay/. */
#ifndef DT_COLL_SOLVE_H
#define DT_COLL_SOLVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rp_solver rp_solver;

/* An empty problem. Never NULL; free with rp_solver_free (NULL is a no-op). */
rp_solver *rp_solver_new(void);
void rp_solver_free(rp_solver *s);

/* Adds a link (one direction) of `bandwidth` bytes/s (> 0); returns its index, 0, 1, ... */
int32_t rp_solver_link(rp_solver *s, double bandwidth);

/* Adds a gate: it fires `delay` seconds (>= 0) after the last flow ending into it (rp_solver_flow's end_a,
 * end_b) has finished, or at time `delay` when none does. Returns its index, 0, 1, ... A gate stands for an actor
 * that waits for all its transfers, sleeps `delay`, then posts its next ones. rp_solver_gate_after: the same,
 * also waiting for gate `pred` (an earlier index, or -1) to fire (an actor's next step after its previous one). */
int32_t rp_solver_gate(rp_solver *s, double delay);
int32_t rp_solver_gate_after(rp_solver *s, double delay, int32_t pred);

/* Adds a flow of `bytes` (whole bytes, >= 0) over the links links[0 .. nlinks-1] (indices from rp_solver_link,
 * nlinks >= 1) with route latency `latency` (s, >= 0: the sum of its links' latencies). It starts when both
 * gates start_a and start_b have fired (-1: time 0), as a SimGrid communication starts when both its sender and
 * its receiver have posted it, and its finish counts for the gates end_a and end_b (-1: none). Returns its index.
 */
int32_t rp_solver_flow(rp_solver *s, double bytes, double latency, const int32_t *links, int nlinks, int32_t start_a,
                       int32_t start_b, int32_t end_a, int32_t end_b);

/* Flow f stands for `count` (>= 1) identical flows (same links, latency, bytes and gates): they always get the
 * same rate, so one variable of `count` times the weight carries them (rp_solver_flow_start/finish: each one's). */
void rp_solver_flow_count(rp_solver *s, int32_t f, int count);

/* Changes flow f's bytes (whole bytes, >= 0) or gate g's delay (s, >= 0) for the next rp_solver_run: a problem
 * whose structure (links, routes, gates) repeats is built once and re-run with new sizes and latencies. */
void rp_solver_set_bytes(rp_solver *s, int32_t f, double bytes);
void rp_solver_set_delay(rp_solver *s, int32_t g, double delay);

/* Declares a symmetry of the problem: flow_perm (nflows entries) and gate_perm (ngates entries) are permutations
 * of the flows and gates added so far. It is checked when the problem is run: when the flows' images start and
 * end on the images of their gates, with their counts and latencies, on routes that one permutation of the links
 * maps hop by hop onto theirs (links of equal bandwidth), and the gates' images wait for the images of their
 * predecessors, it is a symmetry of the structure; when also every flow's image has its bytes and every gate's
 * its delay (checked at every run), the run evaluates the quotient problem: one flow per orbit of the flows
 * under the symmetries that hold, one link per orbit of the links (a flow orbit of size |O| loads each link of a
 * link orbit of size |L| by |O| / |L| of its rate per crossing) and one gate per orbit of the gates. Max-min
 * sharing gives every flow of an orbit the same rate, so the answer is the full problem's (to rounding), and
 * every flow and gate gets its orbit's times. A symmetry that does not hold is ignored (the run is the full
 * problem's). Returns 0, or -1 when an argument is not a permutation (nothing is declared; gate_perm may be NULL
 * when there are no gates). Copies both. */
int rp_solver_symmetry(rp_solver *s, const int32_t *flow_perm, const int32_t *gate_perm);

/* Runs the problem from time 0. time_precision (s) is SimGrid's surf/precision (events less than this apart
 * happen at the earlier one's time), rate_precision its maxmin/precision (a link whose remaining bandwidth falls
 * below that fraction of its capacity is full). Returns 0, or -1 when some gate never fires or a flow never
 * starts (a gate waits, directly or not, for its own flows): then the times are meaningless. */
int rp_solver_run(rp_solver *s, double time_precision, double rate_precision);

/* After rp_solver_run: when gate g fired (s), when flow f started (both gates fired) and finished (s). */
double rp_solver_gate_time(const rp_solver *s, int32_t g);
double rp_solver_flow_start(const rp_solver *s, int32_t f);
double rp_solver_flow_finish(const rp_solver *s, int32_t f);
/* Distinct event times the run went through (each one a re-solve of the sharing), for benchmarks. */
size_t rp_solver_rounds(const rp_solver *s);
/* Flows the last run simulated: the quotient's when a symmetry held, else every flow (for tests, benchmarks). */
size_t rp_solver_solved_flows(const rp_solver *s);

/* ---- a collective instance of an exclusive group, evaluated (rp_plan_run's hook) ---- */

struct rp_inst;
struct rp_plan;
struct rp_ctx;

/* This member's part of a collective instance at flow fidelity, when its group is exclusive (rp_group_exclusive:
 * nothing else can use its links, its instances never overlap) but some phase of its plan is not uniform (hops of
 * different latencies: a tree or a PXN ring across nodes, a one-channel tree): every member's phases, as
 * rp_plan_run would run them (dt_coll_plan.c), are evaluated with rp_solver once, by the first member to get here,
 * and every member waits for its own end as one timed sleep, its sends recorded with the per-link accounting at
 * their evaluated start and finish. The result is kept for the instances that repeat it (same group, op kind,
 * algorithm, protocol, bytes). Returns 1 when waited, 0 when the shortcut does not apply (the caller runs the
 * plan; every member of the instance gets the same answer). */
int rp_solve_plan_wait(const struct rp_inst *x, const struct rp_plan *pl);
/* Frees the kept results (c->solved); call once the replay is over. */
void rp_solve_free(struct rp_ctx *c);

#endif
