/* Timeline of a replay in the Chrome trace event format (docs/report.md, timeline), which Perfetto and
 * chrome://tracing open: one process per rank, one thread per stream, one complete ("X") slice per op with its kind,
 * group, dimension, bytes, algorithm and protocol. Written with yajl while the replay runs (the events are not kept),
 * so memory does not grow with the run. */
#ifndef DT_TIMELINE_H
#define DT_TIMELINE_H

#include "../common/dt_error.h"
#include "../traces/dt_trace.h"

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

/* Closes the JSON and the file; returns DT_OK, or DT_ERR with err set when a write failed. NULL is a no-op. */
int dt_timeline_close(dt_timeline *tl, dt_error *err);

#endif
