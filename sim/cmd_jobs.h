/* `dtsim run PLATFORM --job NAME ... --job NAME ...`: several jobs on one fabric (docs/whatif.md). */
#ifndef CMD_JOBS_H
#define CMD_JOBS_H

/* argv[0] is "run" and some argument is `--job` (or `--job=NAME`). Each job runs alone (a child process per
 * job: SimGrid runs once per process), then all together in this process; prints the together run's report with
 * the jobs section (text, or JSON with --json). Returns the exit code: 0, 1 (a deadlock), 2 (bad input or
 * usage). */
int dt_cmd_jobs(int argc, char **argv);
/* Its usage text ('dtsim help run' prints it after run's). */
extern const char dt_jobs_usage[];

#endif
