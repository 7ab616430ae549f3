/* Stragglers, jitter and late ranks (docs/whatif.md): per-rank compute-speed factors, a lognormal factor drawn per
 * compute op from a seed, and late starts, from the platform's `variability:` section and the command line
 * (`--slow`, `--jitter`, `--seed`, `--late`). The replay scales each compute op's duration by jitter / speed and
 * delays a late rank's streams; without any of them it is never consulted (dt_var_resolve returns NULL). */
#ifndef DT_VARIABILITY_H
#define DT_VARIABILITY_H

#include "../platforms/dt_platform.h"
#include "../traces/dt_trace.h"

#include <stddef.h>
#include <stdint.h>

/* One `--slow RANKS=FACTOR` or `--late RANKS=TIME`: the ranks it names and its value (a speed factor, or seconds). */
typedef struct dt_var_rank_entry {
  dt_var_list ranks;
  double value;
} dt_var_rank_entry;

/* What the command line asks for. Zeroed = nothing; the platform's section still applies. Later entries win, and
 * the command line wins over the platform for the ranks it names. */
typedef struct dt_var_opts {
  size_t nslow, nlate;
  dt_var_rank_entry *slow, *late; /* owned (dt_var_opts_free) */
  int has_sigma;                  /* --jitter given: replaces variability.jitter.sigma */
  double sigma;
  int has_seed;                   /* --seed given: replaces variability.seed (default 1) */
  uint64_t seed;
} dt_var_opts;

/* Parses "RANKS=VALUE" for --slow (factor, late = 0) or --late (a time such as 2ms, late = 1) and appends it to o.
 * Returns 0, or -1 with why set. */
int dt_var_opts_add(dt_var_opts *o, const char *arg, int late, char *why, size_t why_size);
/* Parses a --jitter sigma (0 to DT_VAR_SIGMA_MAX) or a --seed (0 to DT_VAR_SEED_MAX). Returns 0 or -1 with why. */
int dt_var_opts_sigma(dt_var_opts *o, const char *arg, char *why, size_t why_size);
int dt_var_opts_seed(dt_var_opts *o, const char *arg, char *why, size_t why_size);
void dt_var_opts_free(dt_var_opts *o);
/* Whether the options or the platform ask for jitter (then --samples has something to sample). */
int dt_var_has_jitter(const dt_var_opts *o, const dt_platform *p);

/* The variability of one run, per rank. */
typedef struct dt_var {
  int32_t nranks;
  double *speed;   /* per rank: compute-speed factor (1 nominal) */
  double *late;    /* per rank: seconds before its streams start */
  double sigma;    /* lognormal sigma of the per-op factor, 0 = none */
  uint64_t seed;
  int32_t nslow, nlate; /* ranks with speed != 1, with late > 0 */
} dt_var;

/* Resolves the platform's section and the options o (may be NULL) for the nranks ranks of a trace placed on
 * gpu_of_rank. Returns DT_OK with *out NULL when nothing varies (every speed 1, no late start, sigma 0), or a new
 * *out (free with dt_var_free); DT_ERR with err set when o names a rank the trace does not have. */
int dt_var_resolve(const dt_platform *p, const dt_var_opts *o, const int32_t *gpu_of_rank, int32_t nranks,
                   dt_var **out, dt_error *err);
void dt_var_free(dt_var *v);

/* The multiplicative jitter of op `index` of stream `stream` (position in the rank's body) of rank: exp(sigma z -
 * sigma^2 / 2) with z standard normal (Box-Muller) from two splitmix64 outputs keyed by (seed, rank, stream,
 * index) -- lognormal with mean 1 and median exp(-sigma^2/2), the same for a given seed whatever the order ops
 * run in. 1 when sigma is 0. */
double dt_var_jitter(const dt_var *v, int32_t rank, size_t stream, size_t index);

/* Seconds a compute op of nominal duration d (s), op `op` of rank's body in trace t, lasts: d x jitter / speed. */
double dt_var_compute(const dt_var *v, const dt_trace *t, int32_t rank, const dt_op *op, double d);

/* One line describing v for the report's notes (buf of size bytes). */
const char *dt_var_describe(const dt_var *v, char *buf, size_t size);

#endif
