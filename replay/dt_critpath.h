/* Internal to replay/: the critical path of the replay (docs/report.md), built forward as ops complete. Every
 * completed op becomes a node pointing at its critical predecessor: the latest-ending op among the previous op of
 * its stream and the streams its `after=` edges wait on; for a collective or send/recv whose last member arrived
 * after this one, the late member's predecessor (the path jumps to the rank that made everyone wait). Consecutive
 * ops of a stream that follow each other share one *run* (dt_critpath.c); runs and instance cells are reference
 * counted, so memory follows the streams and instances in flight plus the ops that may still be on the path,
 * never ranks x ops; rp_cp_finish walks back from the op that ends last. */
#ifndef DT_CRITPATH_H
#define DT_CRITPATH_H

#include "../traces/dt_trace.h"
#include "dt_stats.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rp_cp rp_cp;
typedef struct rp_cp_node rp_cp_node;

/* New path state for trace t: nstreams flat streams, rank_stream0[r] the first flat stream of rank r (borrowed,
 * nranks + 1 entries, must outlive it). */
rp_cp *rp_cp_new(const dt_trace *t, size_t nstreams, const size_t *rank_stream0);

/* Stream fs of rank issues ops [i, j) of its stream st at simulated time `issue`: fixes their predecessor. */
void rp_cp_issue(rp_cp *cp, int32_t rank, size_t fs, const dt_stream *st, size_t i, size_t j, double issue);

/* Op `index` of stream fs of rank (op: that op of the rank's body; g: its group for a collective, -1 otherwise;
 * both are read again from the trace when the path is walked) completed at `end`, issued at `issue`. For a
 * collective or a send/recv, *cell is the instance's slot (rp_live.cp_cell, NULL when new) and last_issue the last
 * member's issue time (final by now); cell NULL for an op whose own predecessor is its instance's (one member). */
void rp_cp_done(rp_cp *cp, int32_t rank, size_t fs, size_t index, const dt_op *op, int32_t g, double issue, double end,
                rp_cp_node **cell, double last_issue);

/* The part on the path of the op rp_cp_done just recorded for stream fs ([max(issue, last_issue), end]), and how
 * much of it the rank spent computing on other streams (set with rp_cp_set_hidden: on the path, that part counts
 * as compute, the rest as exposed communication). */
void rp_cp_last_span(const rp_cp *cp, size_t fs, double *t0, double *t1);
void rp_cp_set_hidden(rp_cp *cp, size_t fs, double hidden_s);

/* A time before which no transfer still to be recorded starts: the earliest issue of the ops in flight (issued,
 * not completed), or now when none is. O(streams). */
double rp_cp_watermark(const rp_cp *cp, double now);

/* Stream fs still has transfers to record from `since` on (s; INFINITY: none): a batch whose pairs complete one by
 * one (rp_cp_done marks the stream's ops all recorded) keeps the watermark at its issue until its last. */
void rp_cp_hold(rp_cp *cp, size_t fs, double since);

/* Whether stream fs is running a compute op now, and since when (its issue, s). */
int rp_cp_running_compute(const rp_cp *cp, size_t fs, double *since);

/* The instance whose slot is *cell has completed: drops the slot (sets *cell NULL). */
void rp_cp_instance_done(rp_cp *cp, rp_cp_node **cell);

/* Walks the path back from the op that ends last and fills s->critical (owned by s); frees cp and every node. */
void rp_cp_finish(rp_cp *cp, dt_stats *s);

/* Frees cp and every node without a result (an aborted run); NULL is a no-op. */
void rp_cp_free(rp_cp *cp);

#endif
