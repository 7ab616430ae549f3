/* `dtsim sweep`: run a parameter sweep locally, by shards, through GNU parallel or Slurm (docs/sweep.md). */
#ifndef DT_CMD_SWEEP_H
#define DT_CMD_SWEEP_H

/* argv[0] is "sweep". Returns the exit code: 0 every point that can run ran, 1 a point failed or (collect) is
 * missing, 2 bad input or usage (or no point can run), 130 interrupted (finished points stay cached). */
int dt_cmd_sweep(int argc, char **argv);
extern const char dt_cmd_sweep_usage[];

#endif
