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
/* Writes t in native format to an open stream. */
int dt_trace_write_native_file(const dt_trace *t, FILE *f, dt_error *err);

/* Options for loading captures (dtsim run / dtsim import). */
typedef struct dt_import_opts {
  const char *format;  /* NULL or "auto": sniff; else "native" or "kineto" */
  double dep_window_s; /* Kineto: cross-stream happens-before window, default 5e-6 s */
  int keep_gaps;       /* Kineto: keep idle gaps as `delay` ops (default 1) */
  int32_t expand;      /* single-rank captures: expand to this many ranks; 0 = the capture's world size */
  int32_t rank;        /* capture's rank when the file does not say; -1 = from the file or its name */
} dt_import_opts;

/* Fills the defaults above. */
void dt_import_opts_init(dt_import_opts *o);

/* Loads a trace from files of any supported format (content sniffing unless opts->format forces one),
 * then validates it (dt_trace_validate). A file of an unsupported format or Kineto vintage gets a message
 * saying what it is and what is supported. Returns DT_OK and *out, or DT_ERR with err. */
int dt_trace_load(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                  dt_error *err);

/* Kineto (PyTorch profiler Chrome-trace JSON, .json or .json.gz) importer, FORMATS.md vintage 1: streams
 * the file (yajl + zlib gzread), keeps GPU kernels/memcpy/memset as compute on their streams, NCCL kernels
 * as collectives or send/recv sized from their metadata, idle gaps as `delay`, ProfilerStep#N as `mark`,
 * and expands a single-rank capture to all ranks by symmetry (assumptions added as notes). Does not
 * validate. */
int dt_kineto_import(const char *path, const dt_import_opts *opts, dt_trace **out, dt_error *err);

#endif
