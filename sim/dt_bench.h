/* The engine of `dtsim bench` and `dtsim validate` (docs/bench.md): nccl-tests-style benchmarks simulated as one
 * trace in which every rank issues the benchmark's op for each size in turn (warm-up and timed iterations),
 * each op waiting for the previous one on the same stream, so that instances never overlap; each instance's
 * time comes from the replay's per-instance records. Sizes, counts and bandwidths follow nccl-tests. */
#ifndef DT_BENCH_H
#define DT_BENCH_H

#include "../common/dt_error.h"
#include "../platforms/dt_platform.h"
#include "../replay/dt_replay.h"
#include "dt_explain.h"

#include <stddef.h>
#include <stdint.h>

/* One nccl-tests benchmark: its name (`all_reduce`, ...) and how its size maps onto dtsim's op. */
typedef struct dt_bench_op {
  const char *name;  /* nccl-tests name without `_perf` */
  dt_op_kind kind;   /* dtsim op (DT_OP_SEND for sendrecv: a send to rank+1 and a recv from rank-1) */
  int chunked;       /* 1: nccl-tests' count is per rank chunk, size/(nranks * 4) aligned down to 4 elements
                        (all_gather, reduce_scatter, alltoall); 0: count = size/4 */
  const char *redop; /* column `redop`: "sum" for reductions, "none" otherwise */
  int root;          /* column `root`: 0 for broadcast and reduce (the root they run with), -1 otherwise */
} dt_bench_op;

/* The op named name (nccl-tests spelling), or NULL. */
const dt_bench_op *dt_bench_op_find(const char *name);
/* All ops, for usage and "did you mean" (n set to their count). */
const dt_bench_op *dt_bench_ops(size_t *n);

typedef struct dt_bench_opts {
  const dt_bench_op *op;
  int ngpus;             /* ranks; rank r on the r-th GPU of the placement below */
  int gpus_per_node;     /* 0: the first ngpus GPUs of the platform; K: the first K GPUs of consecutive nodes */
  int gpus_per_process;  /* nccl-tests -g: GPUs one host thread drives (default 1), see launch_s */
  double launch_s;       /* host time to launch one more GPU's kernels from the same thread: an instance of a
                            process driving G GPUs takes (G-1) * launch_s longer (docs/bench.md) */
  const uint64_t *sizes; /* nccl-tests sizes in bytes (before alignment), nsizes entries */
  size_t nsizes;
  int iters, warmup;     /* timed iterations averaged per size (>= 1), and untimed ones before them */
  dt_fidelity fidelity;
  dt_algo algo;          /* DT_ALGO_AUTO (default) or a forced algorithm (dt_replay_opts.algo) */
  int proto;             /* -1 (default: chosen per instance) or a forced dt_proto */
  int exact;             /* 1: no shortcut (dt_replay_opts.exact) */
  int explain;           /* 1: explain every size (teaching mode, docs/bench.md): dt_bench_row.explain and .x */
} dt_bench_opts;

/* Defaults: 1 GPU per process, launch_s 0, 1 iteration, no warm-up, flow fidelity, auto algorithm and protocol. */
void dt_bench_opts_init(dt_bench_opts *o);

/* One printed row (nccl-tests columns). */
typedef struct dt_bench_row {
  uint64_t size;     /* nccl-tests size: bytes of the largest buffer (the gathered buffer for all_gather, the
                        whole input for reduce_scatter and alltoall), after alignment */
  uint64_t count;    /* nccl-tests count (elements of float) */
  uint64_t bytes;    /* dtsim's per-rank `bytes=` of the op that ran (DESIGN.md §4) */
  double time_s;     /* mean instance time over the timed iterations, host launch included */
  double algbw;      /* bytes/s: size / time */
  double busbw;      /* bytes/s: algbw * dt_busbw_factor */
  char algo[48];     /* "ring", or "ring/simple" when the replay names a protocol */
  /* with dt_bench_opts.explain (dt_bench_run only): the size's explanation as `dtsim run --explain` writes it
   * (malloc'ed text, the caller frees each before the rows; NULL when the replay kept no row for the size), and
   * its numbers (nx of them: one collective shape, or one per send/recv route shape, at most 4, for the JSON) */
  char *explain;
  int nx;
  dt_explain_numbers x[4];
} dt_bench_row;

/* Maps an nccl-tests size onto the op: fills size, count and bytes of row (the other fields zero). */
void dt_bench_size(const dt_bench_op *op, int nranks, uint64_t size, dt_bench_row *row);

/* Builds the benchmark trace (validated; the caller frees it): rank 0 owns one stream with the ops of every
 * size and iteration in order, the other ranks run it as template users. Returns DT_OK or DT_ERR. */
int dt_bench_trace(const dt_bench_opts *o, dt_trace **out, dt_error *err);

/* Runs the benchmark on platform p in this process (SimGrid: once per process). *rows (o->nsizes entries,
 * caller frees) on DT_OK; DT_ERR (err set) for a bad option (more GPUs than the platform has, a placement that
 * does not fit), a replay error or a deadlock. */
int dt_bench_run(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, dt_error *err);

/* dt_bench_run that also hands back the replay's fallback notes (dt_stats.fallbacks: a forced --algo that could
 * not run some sizes, why, and what the platform lacks), as `dtsim run` prints them: *notes (nnotes strings, each
 * and the array malloc'ed, the caller frees them; NULL and 0 when there are none) on DT_OK. */
int dt_bench_run_notes(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, char ***notes,
                       size_t *nnotes, dt_error *err);

/* Same as dt_bench_run in a child process (fork), so that one process can run many benchmarks; stdout and
 * stderr are flushed first. */
int dt_bench_run_forked(const dt_platform *p, const dt_bench_opts *o, dt_bench_row **rows, dt_error *err);

/* nccl-tests sizes from min to max (inclusive): multiplied by factor (> 1) when increment is 0, else increased
 * by increment. *sizes (caller frees), *n. Returns DT_OK or DT_ERR for min > max, min 0 with a factor,
 * more than 100,000 sizes. */
int dt_bench_sizes(uint64_t min, uint64_t max, uint64_t factor, uint64_t increment, uint64_t **sizes, size_t *n,
                   dt_error *err);

/* Parses an nccl-tests size: an integer with an optional K, M, G or T suffix (powers of 1024, as nccl-tests),
 * optionally followed by B ("8G", "512K", "1048576", "64MB"). Returns 0 or -1 (why filled). */
int dt_bench_parse_size(const char *text, uint64_t *out, char *why, size_t why_size);

#endif
