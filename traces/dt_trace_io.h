/* Reading and writing traces: the native text format v1 (DESIGN.md §4, docs/trace-format.md) and the
 * front door that sniffs a file's content and hands it to the right importer (native, Kineto). */
#ifndef DT_TRACE_IO_H
#define DT_TRACE_IO_H

#include "dt_trace.h"

#include <stdio.h>

/* Reads native trace files: either one file, or the per-rank files `name.<rank>.dtt` of one trace (each
 * with the header and the groups; headers must agree). Does not validate (call dt_trace_validate).
 * Returns DT_OK and *out, or DT_ERR with err at file:line and what was expected (unknown op or key,
 * bad value, missing header...). */
int dt_trace_read_native(const char *const *paths, size_t npaths, dt_trace **out, dt_error *err);

/* Same on an in-memory text of len bytes; source_name is used in positions. */
int dt_trace_parse_native(const char *text, size_t len, const char *source_name, dt_trace **out, dt_error *err);

/* Writes t in native format. When path ends with '/', writes one file per rank with ops,
 * `<dir>/trace.<rank>.dtt` (the directory is created if missing); otherwise one file. "-" writes to stdout.
 * The output reads back to an equal trace. A template user (dt_trace_set_template) is written as its own
 * section, its template's ops with its groups and peers; the reader gives back ranks that own their ops.
 * Returns DT_OK or DT_ERR (I/O error, with the path). */
int dt_trace_write_native(const dt_trace *t, const char *path, dt_error *err);
/* The limit and progress of dt_trace_write_native_limit. */
typedef struct dt_write_limit {
  uint64_t max_bytes;  /* in: the most bytes the output may take (all files of a directory output together) */
  uint64_t written;    /* out: bytes written when the write stopped (or finished) */
  size_t ops_written;  /* out: ops written by then (template users count their template's ops) */
  size_t ops_total;    /* out: ops of the whole trace, as dt_trace_op_count */
  int stopped;         /* out: 1 when the write passed max_bytes and stopped */
} dt_write_limit;
/* dt_trace_write_native that stops once the bytes written pass lim->max_bytes (it looks every 256 ops, so it
 * stops within a few hundred lines past the limit): the temporary file is removed and so are the files of this
 * output it had finished (a directory output), so that no output is left at all; returns DT_ERR with
 * lim->stopped = 1, lim->written and lim->ops_written saying how far it got, and err "PATH: stopped after
 * writing ...". On stdout ("-") the bytes already written stay written; a non-seekable stdout (a pipe) cannot
 * be measured and is not limited here. Any other error is as dt_trace_write_native, with lim->stopped 0. */
int dt_trace_write_native_limit(const dt_trace *t, const char *path, dt_write_limit *lim, dt_error *err);
/* A lower bound of the bytes dt_trace_write_native writes for t: 8 per op as written (the shortest op line,
 * "s0 mark\n"; template users count their template's ops), so that refusing above a limit never refuses an
 * output that would have fit. */
uint64_t dt_trace_native_size_bound(const dt_trace *t);
/* The output limit of `import` and `gen` unless --max-output raises it: 16 GiB. */
#define DT_MAX_OUTPUT_DEFAULT ((uint64_t)16 << 30)
/* The longest line the native reader takes: 64 MiB, far above the longest line a valid trace needs (a group of
 * 2^20 ranks listed one by one is about 8 MB, an all-to-allv's splits= for 2^20 members about 17 MB), so that
 * a file of one endless line is an error with its line number instead of all the memory there is. */
#define DT_TRACE_MAX_LINE ((size_t)64 << 20)
/* Writes t in native format to an open stream. */
int dt_trace_write_native_file(const dt_trace *t, FILE *f, dt_error *err);

/* Most `--group-size KIND=N` flags one import takes. */
#define DT_IMPORT_MAX_GROUP_SIZES 16

/* Options for loading captures (dtsim run / dtsim import). Fields an importer does not use are ignored by it;
 * dt_trace_load adds a note naming the ones given to an importer that ignores them. */
typedef struct dt_import_opts {
  const char *format;  /* NULL or "auto": sniff; else an importer's name (dt_importer_find) */
  double dep_window_s; /* Kineto: cross-stream happens-before window, default 5e-6 s */
  int host_timeline;   /* Kineto: replay the host launch timeline (default 1); 0 replays the GPU streams alone,
                          with keep_gaps deciding their idle gaps (--gaps keep|drop) */
  int keep_gaps;       /* Kineto without the host timeline: keep idle gaps as `delay` ops (default 1) */
  int32_t expand;      /* single-rank captures: expand to this many ranks; 0 = the capture's world size */
  int32_t rank;        /* capture's rank when the file does not say; -1 = from the file or its name */
  double compute_gap_s; /* NCCL log, DeepSpeed: compute (s) put before every communication call, default 0 (the
                           logs have no durations); < 0 when not given */
  int32_t world;        /* DeepSpeed (rank 0 only): world size, 0 = not given */
  size_t ngroup_sizes;  /* DeepSpeed: `--group-size KIND=N` entries */
  struct {
    char kind[32];      /* native op name (allreduce, allgather, ...) or "all" */
    int32_t n;          /* group size for that kind */
  } group_sizes[DT_IMPORT_MAX_GROUP_SIZES];
} dt_import_opts;

/* Fills the defaults above. */
void dt_import_opts_init(dt_import_opts *o);

/* Bits of dt_importer.uses, one per capture option (the option's name in the comment). */
enum {
  DT_IMPORT_USES_EXPAND = 1,      /* --expand */
  DT_IMPORT_USES_RANK = 2,        /* --rank */
  DT_IMPORT_USES_GAPS = 4,        /* --gaps */
  DT_IMPORT_USES_DEP_WINDOW = 8,  /* --dep-window */
  DT_IMPORT_USES_COMPUTE_GAP = 16, /* --compute-gap */
  DT_IMPORT_USES_WORLD = 32,      /* --world */
  DT_IMPORT_USES_GROUP_SIZE = 64  /* --group-size */
};

/* One capture format dtsim reads: a row of the importer table (traces/dt_load.c). */
typedef struct dt_importer {
  const char *name;  /* the --format value: native, kineto, nccl-log, nccl-inspector, deepspeed, chakra */
  const char *label; /* what users call it ("NCCL debug log (NCCL_DEBUG=INFO)") */
  /* How sure the importer is that a file is its format, from its first bytes (head, len bytes after gzip
   * decompression, NUL-terminated, may hold binary) and its path: 0 no, 1 plausible, 2 certain. NULL for a
   * format that is never sniffed. */
  int (*sniff)(const char *head, size_t len, const char *path);
  /* Imports npaths files (one per rank or per process, all of this format) into one trace, not validated.
   * Returns DT_OK and *out (owned by the caller), or DT_ERR with err at file:line (or byte offset). */
  int (*import)(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                dt_error *err);
  /* The assumptions every import of this format makes, one per line (each also becomes a trace note), for
   * `dtsim import --explain`. Capture-specific assumptions are added as notes by the importer. */
  const char *assumptions;
  /* The capture options (dt_import_opts) it reads, DT_IMPORT_USES_* bits: dt_trace_load refuses any other one
   * given ("--expand does not apply to format 'native': only kineto reads it"). */
  unsigned uses;
} dt_importer;

/* Number of importers and the i-th (in table order, the order of --format's list); NULL past the end. */
size_t dt_importer_count(void);
const dt_importer *dt_importer_at(size_t i);
/* The importer named name, or NULL. */
const dt_importer *dt_importer_find(const char *name);

/* Sniffs one file: the importer with the highest sniff score (table order breaks ties). Returns DT_OK and
 * *imp, or DT_ERR with err naming the file, what it looks like and the supported formats. */
int dt_trace_sniff(const char *path, const dt_importer **imp, dt_error *err);

/* Loads a trace from files of one format (content sniffing unless opts->format forces one), then validates
 * it (dt_trace_validate). Sets t->format to the importer's name. A file of an unsupported format gets a
 * message saying what it looks like and what is supported. Returns DT_OK and *out, or DT_ERR with err. */
int dt_trace_load(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                  dt_error *err);

/* Kineto (PyTorch profiler Chrome-trace JSON, .json or .json.gz) importer, FORMATS.md vintage 1: streams
 * the file (yajl + zlib gzread), keeps GPU kernels/memcpy/memset as compute on their streams, NCCL kernels
 * as collectives or send/recv sized from their metadata, idle gaps as `delay`, ProfilerStep#N as `mark`,
 * and expands a single-rank capture to all ranks by symmetry (assumptions added as notes). Does not
 * validate. */
int dt_kineto_import(const char *path, const dt_import_opts *opts, dt_trace **out, dt_error *err);
/* For the test of the importer's cost (tests/check_kineto.c): the (mark, stream) pairs examined so far in this
 * process while placing the marks' dependencies, which grows with the steps' ops, not marks x streams. */
uint64_t dt_kineto_mark_work(void);
/* Several ranks' captures of one run, one file per rank (rank from distributedInfo.rank, else a rank-N file
 * name): merged into one trace of the world's ranks, each rank running its own captured ops; groups shared by
 * rank list; collectives matched across ranks by their `Seq` number where every member's capture has it
 * (instances a member's window missed are dropped, with a note), else by issue order per group; all-to-alls
 * whose sizes differ across ranks kept as all-to-allv. One file: dt_kineto_import. Memory: one capture's
 * events at a time plus the trace. Does not validate. */
int dt_kineto_import_many(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                          dt_error *err);

/* NCCL debug log importer (traces/dt_nccl_log.c, docs/import-nccl-log.md): one or many log files of one run
 * (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL); every process must be in them. Does not validate. */
int dt_nccl_log_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                       dt_error *err);

/* DeepSpeed comms logger importer (traces/dt_deepspeed.c, docs/import-deepspeed.md): one rank-0 log; needs
 * opts->world, group sizes from opts->group_sizes. Measured times go to t->measured_*. Does not validate. */
int dt_deepspeed_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                        dt_error *err);

/* Chakra execution trace importer (traces/dt_chakra.c, docs/import-chakra.md): one `<prefix>.<rank>.et[.gz]`
 * file per rank (a single file: that rank alone). Does not validate. */
int dt_chakra_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                     dt_error *err);

/* NCCL Inspector importer (traces/dt_nccl_inspector.c, docs/import-nccl-inspector.md): every process's log of
 * one run. Measured times go to t->measured_*. Does not validate. */
int dt_nccl_inspector_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                             dt_error *err);

#endif
