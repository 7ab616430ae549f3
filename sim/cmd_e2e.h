/* dtsim validate --e2e: simulated against published whole-iteration times (validation/references/
 * e2e_iterations.csv), calibrated once per source on its smallest row (docs/validation.md). */
#ifndef DT_CMD_E2E_H
#define DT_CMD_E2E_H

/* Usage text of 'dtsim validate --e2e'. */
extern const char dt_cmd_e2e_usage[];

/* Runs 'dtsim validate --e2e' (argv[0] = "validate"; "--e2e" may appear among the options). Returns the exit
 * code: 0 when the comparison ran (the errors are findings), 2 for bad input or usage (a missing or malformed CSV,
 * an unknown source, a platform or workload that cannot run). */
int dt_cmd_validate_e2e(int argc, char **argv);

#endif
