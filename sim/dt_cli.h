/* The dtsim command line: subcommand table and dispatch (git's run_builtin pattern). */
#ifndef DT_CLI_H
#define DT_CLI_H

/* Runs dtsim with argv; returns the process exit code: 0 success, 1 simulation finished with a problem
 * (deadlock), 2 bad input or usage. */
int dt_cli_main(int argc, char **argv);

#include "../common/dt_error.h"
#include "../traces/dt_trace.h"

#include <stdint.h>

/* DT_OK when the native text of t (at least dt_trace_native_size_bound bytes) fits max_output bytes, else
 * DT_ERR with err naming out, the bound and how to raise the limit (`CMD --max-output SIZE`). import and gen call
 * it before writing, so that a large --expand is refused instead of filling the disk. */
int dt_check_output_size(const dt_trace *t, const char *out, uint64_t max_output, const char *cmd, dt_error *err);

#endif
