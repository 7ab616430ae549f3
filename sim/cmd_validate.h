/* dtsim validate: simulated against measured nccl-tests numbers (validation/references/), per table. */
#ifndef DT_CMD_VALIDATE_H
#define DT_CMD_VALIDATE_H

/* Usage text of 'dtsim validate' (for 'dtsim help validate'). */
extern const char dt_cmd_validate_usage[];

/* Runs 'dtsim validate' with argv[0] = "validate". Returns the exit code: 0 when the comparison ran (the errors
 * are findings, whatever their size), 2 bad input or usage (a missing or malformed CSV, a missing platform). */
int dt_cmd_validate(int argc, char **argv);

#endif
