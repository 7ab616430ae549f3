/* Running one simulation in a child process: SimGrid can be initialised once per process, so commands that
 * simulate many configurations (bench sweeps inside validate and calibrate, the end-to-end rows) run each in a
 * fork and read its result back through a pipe. */
#ifndef DT_FORK_H
#define DT_FORK_H

#include "../common/dt_error.h"

#include <stddef.h>

/* A job for dt_run_forked: fills out_len bytes at out (the child's copy of the caller's buffer) and returns
 * DT_OK, or returns DT_ERR with err set. */
typedef int (*dt_forked_fn)(void *arg, void *out, dt_error *err);

/* Runs fn(arg, out, err) in a child process and copies back, on success, the out_len bytes it wrote to out;
 * on failure, its error record into *err. Returns fn's status (DT_OK or DT_ERR), or DT_ERR with err naming
 * `what` (e.g. "the benchmark process") when the pipe or fork fails, or the child dies or exits early without a
 * result. stdout and stderr are flushed before the fork so nothing is printed twice. out must be plain data
 * (no pointers the parent would follow). */
int dt_run_forked(dt_forked_fn fn, void *arg, void *out, size_t out_len, const char *what, dt_error *err);

#endif
