/* The SimGrid log settings `dtsim run --log` accepts: thresholds of dtsim's own log categories, checked before
 * SimGrid sees them (SimGrid aborts on a malformed setting and silently ignores an unknown category). */
#ifndef DT_SIMLOG_H
#define DT_SIMLOG_H

#include <stddef.h>

/* 0 when s is CATEGORY.thres:LEVEL (or .threshold, ':' or '=') with CATEGORY one of dtsim's log categories
 * (dtsim, dtsim_replay, dtsim_coll, dtsim_critpath, dtsim_timeline, dtsim_platform) and LEVEL one of SimGrid's
 * priorities (trace, debug, verbose, info, warning, error, critical); else -1 with the reason in why (why_size
 * bytes). */
int dt_check_log_setting(const char *s, char *why, size_t why_size);

#endif
