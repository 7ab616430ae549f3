/* `dtsim sweep`: a sweep specification (YAML or --set flags), its points (cartesian grid, seeded random or
 * Latin-hypercube sample), the platform each point runs on (the base platform with keys overridden through
 * libyaml's document API), and the content hash that keys each point's cached result (docs/sweep.md). */
#ifndef DT_SWEEP_H
#define DT_SWEEP_H

#include "../common/dt_error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an axis changes: a platform key (dotted, as `nics.bandwidth`), a generator key (`tp`, docs/generator.md)
 * or a `dtsim run` option (`algo`, `proto`, `fidelity`, `placement`). */
typedef enum { DT_AXIS_PLATFORM = 0, DT_AXIS_GEN, DT_AXIS_RUN } dt_axis_kind;

typedef struct dt_sweep_axis {
  char *key;       /* owned */
  dt_axis_kind kind;
  size_t nvalues;
  char **values;   /* owned, as written (placement: the path resolved against the spec's folder) */
  char **labels;   /* owned, as written in the spec (placement: the path as given) */
} dt_sweep_axis;

typedef enum { DT_SAMPLE_GRID = 0, DT_SAMPLE_RANDOM, DT_SAMPLE_LHS } dt_sample_method;

/* A spec key as given: "workload.traces", "axes.tp", ... at file ("--set" or the spec's path) line:col (0 for --set). */
typedef struct dt_sweep_given {
  char *key;        /* owned */
  const char *file; /* the spec's source or "--set" */
  long line, col;
} dt_sweep_given;

/* A parsed specification. Paths are resolved against the spec file's folder (the current folder for --set). */
typedef struct dt_sweep_spec {
  char *source;          /* spec file path, or "--set" */
  long line, col;        /* start of the spec file's top-level mapping (a missing key's position), 0 when none */
  char *base_dir;        /* folder relative paths resolve against, "" for the current one */
  char *platform;        /* base platform path */
  char *gen;             /* --gen source (preset or workload file), or NULL */
  char *workload;        /* --workload file, or NULL */
  size_t ntraces;
  char **traces;         /* trace files, or none */
  size_t ngen;
  char **gen_keys, **gen_values; /* generator keys fixed for every point, in order */
  char *algo, *proto, *fidelity, *placement; /* fixed run options, NULL when not given */
  size_t ncfg;
  char **cfg;            /* --cfg KEY:VALUE settings */
  size_t naxes;
  dt_sweep_axis *axes;
  dt_sample_method method;
  size_t npoints;        /* random / lhs: points to draw */
  uint64_t seed;         /* random / lhs */
  char *dir;             /* sweep folder: manifest, derived platforms, result cache */
  struct {               /* where sample.method, .points, .seed were given ([0..2]), for the checks after reading */
    const char *file;    /* s->source or "--set", NULL when not given */
    long line, col;      /* 0 when unknown (--set) */
  } sample_at[3];
  size_t ngiven;
  struct dt_sweep_given *given; /* every dotted key as last given, with its position (owned), for the checks that
                                 * combine keys once the whole spec is read */
} dt_sweep_spec;

/* Reads a spec: the YAML file at path (NULL: none), then the overrides sets[0..nsets) ("KEY=VALUE", where
 * KEY is a spec key such as `platform`, `workload.gen`, `workload.tp`, `run.algo`, `sample.points`, `dir`, or
 * `axes.NAME` with comma-separated values). Returns DT_OK and *out (free with dt_sweep_spec_free), or DT_ERR
 * with file:line:col of the key at fault (or "--set"). */
int dt_sweep_spec_load(const char *path, const char *const *sets, size_t nsets, dt_sweep_spec **out,
                       dt_error *err);
void dt_sweep_spec_free(dt_sweep_spec *s);

/* One point of a sweep. */
typedef struct dt_sweep_point {
  size_t index;       /* 0-based position in the sweep */
  size_t *choice;     /* value index per axis, owned */
  char *reason;       /* why the point cannot run (owned), NULL when it can */
  char hash[65];      /* SHA-256 (hex) of everything its result depends on; "" when impossible */
  char *platform_path;/* derived platform file (owned), NULL when impossible before it was written */
  size_t argc;
  char **argv;        /* `dtsim run` arguments after the program name (owned): "run", "--json", ... */
} dt_sweep_point;

/* A planned sweep: its points with their hashes, derived platforms written under spec->dir/platforms. */
typedef struct dt_sweep_plan {
  dt_sweep_spec *spec; /* borrowed */
  size_t npoints;
  dt_sweep_point *points;
  size_t nimpossible;
  char exe[4096];      /* the dtsim binary that runs points (this one, /proc/self/exe) */
  char note[256];      /* sampling note ("" when none), e.g. a random sample as large as the grid */
} dt_sweep_plan;

/* Draws the points of spec and, for each point with want == NULL or want(index, arg) nonzero, derives its
 * platform (written once to spec->dir/platforms/<sha256>.yaml), checks it (dt_platform_parse), checks the
 * generator configuration (world = tp*pp*dp must equal the platform's GPUs), builds its argv and its hash.
 * Points not wanted keep only their choices. Returns DT_OK and *out (free with dt_sweep_plan_free), or DT_ERR
 * for a problem of the whole sweep (unreadable base platform or workload, too many points, cannot write). */
int dt_sweep_plan_make(dt_sweep_spec *spec, int (*want)(size_t index, void *arg), void *arg, dt_sweep_plan **out,
                       dt_error *err);
void dt_sweep_plan_free(dt_sweep_plan *p);

/* "key=value key=value" of a point's parameters, into buf (size bytes). Returns buf. */
const char *dt_sweep_point_label(const dt_sweep_plan *p, const dt_sweep_point *pt, char *buf, size_t size);

/* Writes spec->dir/manifest.jsonl (one JSON object per point: index, parameters, status, reason, hash,
 * platform, argv), atomically (temporary file and rename). Returns DT_OK or DT_ERR. */
int dt_sweep_manifest_write(const dt_sweep_plan *p, dt_error *err);

/* SHA-256 of len bytes at data as 64 hex digits and a NUL into hex (libcrypto). */
void dt_sweep_sha256_hex(const void *data, size_t len, char hex[65]);

/* Reads a whole file into a malloc'ed buffer (NUL-terminated; *len without it). Returns NULL on failure
 * (errno set). */
char *dt_sweep_read_file(const char *path, size_t *len);
/* A decimal integer in [lo, hi], the whole of v: stores it in *out and returns 0, or returns -1. */
int dt_sweep_parse_count(const char *v, long lo, long hi, long *out);

#endif

/* ---- results (dt_sweep_out.c) ---- */

typedef enum { DT_POINT_OK = 0, DT_POINT_FAILED, DT_POINT_MISSING, DT_POINT_IMPOSSIBLE } dt_point_status;

/* What is known of a point's run: its status, the reason when it did not succeed, and the `dtsim run --json`
 * output (one line) when there is one (a deadlock has both a reason and JSON). */
typedef struct dt_sweep_result {
  dt_point_status status;
  char *reason; /* owned, NULL for DT_POINT_OK */
  char *json;   /* owned, NULL when the run printed none */
} dt_sweep_result;

/* Cache files of a point: spec->dir/results/<hash>.json (stdout of a finished run), .fail (first line the
 * reason, then the run's stderr; written for exit codes 1 and 2, which are deterministic), .log (stderr). */
void dt_sweep_cache_path(const dt_sweep_plan *p, const dt_sweep_point *pt, const char *ext, char *buf,
                         size_t size);
/* Fills r from the cache: OK, FAILED, MISSING (nothing cached) or IMPOSSIBLE (pt->reason). */
void dt_sweep_result_load(const dt_sweep_plan *p, const dt_sweep_point *pt, dt_sweep_result *r);
void dt_sweep_result_clear(dt_sweep_result *r);
/* Whether the cache holds a finished run of pt (.json or .fail present). */
int dt_sweep_cached(const dt_sweep_plan *p, const dt_sweep_point *pt);

/* The results' JSON parsed once (yajl trees, per-rank means, extra columns) for the writers below, which all
 * read it: make it after loading the results, free it (NULL is fine) after the last writer. */
typedef struct dt_sweep_table dt_sweep_table;
dt_sweep_table *dt_sweep_table_make(const dt_sweep_plan *p, const dt_sweep_result *r);
void dt_sweep_table_free(dt_sweep_table *t);

/* One row per point in index order: point, status, the axes' values, makespan_s, iteration_s (mean of
 * iterations_s), compute_s, comm_s and exposed_comm_s (means over ranks), <kind>_time_s per op kind, any other
 * scalar the run's JSON carries at its top level or one level down (bottleneck fields), reason, hash. Numbers
 * are the run's own digits where they are copied, %.17g where they are means. Returns DT_OK or DT_ERR. */
int dt_sweep_write_csv(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                       dt_error *err);
/* One JSON object per point: point, status, params, hash, reason, iteration_s, and "result", the run's JSON. */
int dt_sweep_write_jsonl(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                         dt_error *err);
/* The sensitivity ranking: for each axis with two or more values, the mean iteration time of the successful
 * points at each value; spread = largest mean - smallest mean (seconds); axes sorted by spread, largest
 * first (ties in axis order). Prints a table to f. */
void dt_sweep_print_ranking(FILE *f, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t);
/* Draws the mean iteration time against axis x (lines per value of axis by, or a heatmap of x by `by`) with
 * gnuplot into out (.svg or .png); x and by NULL pick the first axes with two or more values. Only points whose
 * axes have the values where[0..nwhere) ("AXIS=VALUE") are drawn; other axes are averaged. The data and script
 * are written beside out (out.dat, out.gp). Returns DT_OK or DT_ERR (bad axis or value, gnuplot failed). */
/* The checks of dt_sweep_plot that need only the spec (out's extension; x and by are axes, x with two or more
 * values, by too for a heatmap; each where[k] is "AXIS=VALUE" with a value of an axis that is not plotted; an
 * axis to plot is left, and a second one for a heatmap), so that a bad plot option is refused before any point
 * runs. Messages list the sweep's axes with two or more values. Returns DT_OK or DT_ERR with the same message
 * dt_sweep_plot would give. */
int dt_sweep_plot_check(const char *out, const char *x, const char *by, int heatmap, const char *const *where,
                        size_t nwhere, const dt_sweep_spec *s, dt_error *err);
int dt_sweep_plot(const char *out, const char *x, const char *by, int heatmap, const char *const *where,
                  size_t nwhere, const dt_sweep_plan *p, const dt_sweep_result *r, const dt_sweep_table *t,
                  dt_error *err);
