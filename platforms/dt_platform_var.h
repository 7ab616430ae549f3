/* The platform's `variability:` section (docs/platform.md, docs/whatif.md): compute-speed factors per GPU or per
 * node, a compute jitter distribution and its seed, late starts. Read by the YAML loader (dt_platform_yaml.c),
 * applied by the replay (replay/dt_variability.h). Also the rank/GPU list syntax ("0-7,9") that `--slow` and
 * `--late` share with it. */
#ifndef DT_PLATFORM_VAR_H
#define DT_PLATFORM_VAR_H

#include "../common/dt_error.h"

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

/* Ranges of the values (docs/platform.md "variability"). */
#define DT_VAR_SPEED_MIN 1e-3 /* a compute-speed factor: 1 = nominal, 0.5 = half speed, at least this */
#define DT_VAR_SPEED_MAX 1e3  /* at most this (a factor above 1 is a faster GPU) */
#define DT_VAR_SIGMA_MAX 1.0  /* lognormal jitter sigma, from 0 to this */
#define DT_VAR_SEED_MAX ((uint64_t)1 << 53) /* seeds from 0 to this (exact in JSON) */

/* A list of whole-number ranges [lo, hi] parsed from "3", "0-7" or "0,5,9-11". */
typedef struct dt_var_list {
  size_t n;
  int64_t (*r)[2]; /* owned */
} dt_var_list;

/* Parses s ("0-7,9": values and lo-hi ranges, comma-separated, each at most max) into *out (free with
 * dt_var_list_free). Returns 0, or -1 with why set ("expected ..., found ...") when s is not such a list. */
int dt_var_list_parse(const char *s, int64_t max, dt_var_list *out, char *why, size_t why_size);
/* Whether x is in the list. */
int dt_var_list_has(const dt_var_list *l, int64_t x);
/* Largest value of the list (-1 when empty). */
int64_t dt_var_list_max(const dt_var_list *l);
void dt_var_list_free(dt_var_list *l);

/* A plain decimal number, the whole of s (dt_parse_real: no '+', inf, nan, hex or spaces), for the section's
 * factors and sigma and the --slow and --jitter values. Returns 0 with *out set, or -1 (also for NULL); a number
 * past a double's range is infinite, for the caller's finite range check to refuse with the range. */
int dt_var_plain_real(const char *s, double *out);

/* One entry of `variability.speed` or `variability.late`: the GPUs (or nodes, by_node) it names and its value
 * (a speed factor, or a delay in seconds); line:col of the entry for errors found once the platform is known. */
typedef struct dt_var_entry {
  int by_node;
  dt_var_list which;
  double value;
  long line, col;
} dt_var_entry;

typedef struct dt_platform_var {
  double jitter_sigma;  /* lognormal sigma of the per-compute-op factor (mean 1), 0 = no jitter */
  int has_seed;         /* `seed` given */
  uint64_t seed;
  size_t nspeed, nlate;
  dt_var_entry *speed;  /* owned; later entries win */
  dt_var_entry *late;   /* owned; delay in seconds */
} dt_platform_var;

/* Speed factor of global GPU gpu (gpus_per_node G): the last `speed` entry naming it or its node, else 1. */
double dt_platform_var_speed(const dt_platform_var *v, int gpu, int gpus_per_node);
/* Late start of global GPU gpu in seconds: the last `late` entry naming it or its node, else 0. */
double dt_platform_var_late(const dt_platform_var *v, int gpu, int gpus_per_node);

/* Reads the value of the `variability` key (map, a node of doc) into a new *out (the caller frees it with
 * dt_platform_var_free, also when DT_ERR is returned). Errors carry file:line:col: unknown or duplicate keys
 * (with the nearest known key), values out of their ranges, a bad list. */
int dt_platform_var_parse_yaml(yaml_document_t *doc, yaml_node_t *map, const char *file, dt_platform_var **out,
                               dt_error *err);
/* DT_OK when every GPU and node the section names exists on a platform of nodes x gpus_per_node, else DT_ERR
 * with err at the entry's file:line:col. */
int dt_platform_var_check(const dt_platform_var *v, const char *file, int nodes, int gpus_per_node, dt_error *err);

/* Frees the section; NULL is a no-op. */
void dt_platform_var_free(dt_platform_var *v);

#endif
