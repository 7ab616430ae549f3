/* The dtsim command line: subcommand table and dispatch (git's run_builtin pattern). */
#ifndef DT_CLI_H
#define DT_CLI_H

/* Runs dtsim with argv; returns the process exit code: 0 success, 1 simulation finished with a problem
 * (deadlock), 2 bad input or usage. */
int dt_cli_main(int argc, char **argv);

#endif
