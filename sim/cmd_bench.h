/* dtsim bench: nccl-tests-style tables (size, count, type, redop, root, time, algbw, busbw) simulated on a platform. */
#ifndef DT_CMD_BENCH_H
#define DT_CMD_BENCH_H

/* Usage text of 'dtsim bench' (for 'dtsim help bench'). */
extern const char dt_cmd_bench_usage[];

/* Runs 'dtsim bench' with argv[0] = "bench". Returns the exit code: 0 printed, 2 bad input or usage. */
int dt_cmd_bench(int argc, char **argv);

/* Host time to launch one more GPU's kernels from the same thread (nccl-tests -g G > 1), the default of
 * --launch: (35 - 17 us) / 7, the small-message floors of one process driving 8 GPUs and of one process per GPU
 * on A100 (validation/references/README.md). */
#define DT_BENCH_DEFAULT_LAUNCH_S 2.6e-6

#endif
