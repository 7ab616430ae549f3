/* dtsim validate: simulated against measured nccl-tests numbers (validation/references/), per table. */
#ifndef DT_CMD_VALIDATE_H
#define DT_CMD_VALIDATE_H

/* Usage text of 'dtsim validate' (for 'dtsim help validate'). */
extern const char dt_cmd_validate_usage[];

/* Runs 'dtsim validate' with argv[0] = "validate". Returns the exit code: 0 when the comparison ran (the errors
 * are findings, whatever their size), 2 bad input or usage (a missing or malformed CSV, a missing platform). */
int dt_cmd_validate(int argc, char **argv);

/* Checks the folders validate reads before any work: refs (the reference CSVs) and platforms. A folder given by
 * its option (refs_given, platforms_given) that is missing is named with its option; a default one (relative to
 * the current folder: validation/references, platforms) that is missing says so with the current folder, and to
 * run from the repository root or give --references DIR / --platforms DIR (dtsim does not guess where a clone is).
 * Prints the usage error for "dtsim CMD" and returns 2, or returns 0. */
int dt_cmd_validate_dirs(const char *cmd, const char *refs, int refs_given, const char *platforms,
                         int platforms_given);

#endif
