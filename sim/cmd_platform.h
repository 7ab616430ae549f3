/* dtsim platform check|show: validates a platform file and prints its topology and routes. */
#ifndef DT_CMD_PLATFORM_H
#define DT_CMD_PLATFORM_H

/* Usage text of 'dtsim platform' (for 'dtsim help platform'). */
extern const char dt_cmd_platform_usage[];

/* Runs 'dtsim platform' with argv[0] = "platform". Returns the exit code: 0 valid (and printed), 2 bad input
 * or usage (the error, with its file:line:col, on stderr). */
int dt_cmd_platform(int argc, char **argv);

#endif
