/* Timeline of a replay in the Chrome trace event format (docs/report.md, timeline), which Perfetto and
 * chrome://tracing open: one process per rank, one thread per stream, one complete ("X") slice per op with its kind,
 * group, dimension, bytes, algorithm and protocol. Written with yajl while the replay runs (the events are not kept),
 * so memory does not grow with the run. */
#ifndef DT_TIMELINE_H
#define DT_TIMELINE_H

#include "../common/dt_error.h"
#include "../platforms/dt_topology.h"
#include "../traces/dt_trace.h"
#include "dt_linkload.h"

#include <stdint.h>
#include <stdio.h>

typedef struct dt_timeline dt_timeline;

/* Opens path for writing the timeline of trace t. ranks: the ranks to write (copied, nranks_sel entries; NULL: all).
 * Returns NULL with err set when the file cannot be created. */
dt_timeline *dt_timeline_open(const char *path, const dt_trace *t, const int32_t *ranks, size_t nranks_sel,
                              dt_error *err);

/* Whether rank's ops are written. */
int dt_timeline_wants(const dt_timeline *tl, int32_t rank);

/* One op of rank on stream `stream` (its sN number), op `index` of that stream, issued at `issue` and completed at
 * `end` (simulated seconds); group g (-1: none) labels it, algo and proto may be NULL. */
void dt_timeline_op(dt_timeline *tl, int32_t rank, int32_t stream, size_t index, const dt_op *op, int32_t g,
                    double issue, double end, const char *algo, const char *proto);

/* Most transfers kept for the fabric's counter tracks (32 bytes each, and each distinct route once); later ones are
 * not shown. */
#define DT_TIMELINE_MAX_TRANSFERS (1u << 21)
/* Link directions the fabric process shows: the busiest. */
#define DT_TIMELINE_COUNTER_LINKS 8 /* at most 8: a byte of flags per route */

/* The topology whose routes the fabric's counters use (borrowed, must outlive tl): each transfer is routed when it
 * is recorded, so that a link failing during the run (replay/dt_degrade.h) moves only the transfers after it.
 * Without it no transfer is kept. */
void dt_timeline_set_topology(dt_timeline *tl, const dt_topology *topo);

/* One transfer of bytes from GPU src to GPU dst, active from start to end (simulated seconds), as the per-link
 * accounting records it (dt_linkload_add): kept, with its route as it is now, for the fabric's counter tracks. */
void dt_timeline_transfer(dt_timeline *tl, int32_t src_gpu, int32_t dst_gpu, double bytes, double start, double end);

/* dt_timeline_transfer for the per-link accounting's observer (dt_linkload_set_observer, data = the timeline): the
 * fabric's counters then show every transfer the accounting counts, those of the ranks folded onto others and the
 * closed-form exchanges' flow sets included. */
void dt_timeline_observe(void *tl, int32_t src_gpu, int32_t dst_gpu, double bytes, double start, double end);

/* Writes the fabric process (pid = the trace's rank count, "fabric (busiest links)"): per link direction among the
 * DT_TIMELINE_COUNTER_LINKS busiest of ls (busiest first), a counter track of the transfers active on it ("flows")
 * and their summed rate in GB/s (each transfer's bytes / its duration), changing at every start and end of a
 * transfer that crossed it (on the route it took). Call once, after the replay and before dt_timeline_close. */
void dt_timeline_link_counters(dt_timeline *tl, const dt_linkstats *ls);

/* A run that did not complete (a deadlock, an abort): one global instant event (ph "i", scope "g", category
 * "outcome") named what (as "deadlock: 2 ops blocked forever") at time t_s (simulated seconds), with the first
 * blocked op in its args when first is not NULL, so that the timeline, complete as far as the run went, says
 * where and why it stopped (docs/report.md "Timeline"). Call before dt_timeline_close. */
void dt_timeline_outcome(dt_timeline *tl, double t_s, const char *what, const char *first);

/* Closes the JSON and the file; returns DT_OK, or DT_ERR with err set when a write failed. NULL is a no-op. */
int dt_timeline_close(dt_timeline *tl, dt_error *err);

#endif
