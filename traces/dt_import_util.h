/* Pieces the text and binary importers share (NCCL logs, NCCL Inspector, DeepSpeed, Chakra): a line reader over
 * plain or gzipped files with no line-length limit, datatype sizes, and the notes that state an importer's
 * fixed assumptions. Internal to traces/. */
#ifndef DT_IMPORT_UTIL_H
#define DT_IMPORT_UTIL_H

#include "dt_trace_io.h"

#include "../common/dt_strtab.h"

#include <stdint.h>
#include <zlib.h>

/* Reads a file line by line through zlib (plain or gzip). */
typedef struct dt_lines {
  gzFile f;
  const char *path;
  char *buf;     /* the current line without its '\n' (and '\r'), NUL-terminated; owned */
  size_t len, cap;
  long lineno;   /* 1-based number of the current line */
  uint64_t bytes; /* uncompressed bytes read so far */
} dt_lines;

/* Opens path. Returns DT_OK, or DT_ERR with err naming the file and the system's reason. */
int dt_lines_open(dt_lines *l, const char *path, dt_error *err);
/* Reads the next line into l->buf. Returns 1 for a line, 0 at the end, DT_ERR (err set: file, line, zlib's
 * message) on a read error such as a truncated gzip stream. A NUL byte inside a line is an error (binary data
 * is not a log). */
int dt_lines_next(dt_lines *l, dt_error *err);
void dt_lines_close(dt_lines *l);

/* Adds one note "<importer>: assumes <line>" per line of the registered importer's fixed assumptions. */
void dt_import_note_assumptions(dt_trace *t, const char *importer);

/* Bytes per element of an NCCL datatype id (ncclInt8 = 0 ... ncclFloat8e5m2 = 11) and its short name
 * (int8, ..., bf16, fp8e4m3); 0 / NULL for an unknown id. */
unsigned dt_nccl_dtype_size(int id);
const char *dt_nccl_dtype_name(int id);

#endif
