/* dtsim calibrate: fits a platform's NCCL-model constants to the user's nccl-tests measurements (text output or
 * -J JSON) and writes the calibrated platform (docs/bench.md). */
#ifndef DT_CMD_CALIBRATE_H
#define DT_CMD_CALIBRATE_H

/* Usage text of 'dtsim calibrate'. */
extern const char dt_cmd_calibrate_usage[];

/* Runs 'dtsim calibrate' with argv[0] = "calibrate". Returns the exit code: 0 when the fit ran, 2 for bad input
 * or usage (an unreadable or malformed nccl-tests file, a platform without an nccl section, more GPUs than the
 * platform has). */
int dt_cmd_calibrate(int argc, char **argv);

#endif
