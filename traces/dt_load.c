/* The front door for trace files: tells the format from the content (or takes --format), hands the files to
 * the native reader or an importer, then validates the result, so that replay only sees checked traces. */
#include "dt_trace_io.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

void dt_import_opts_init(dt_import_opts *o)
{
  o->format = NULL;
  o->dep_window_s = 5e-6;
  o->keep_gaps = 1;
  o->expand = 0;
  o->rank = -1;
}

typedef enum { FMT_UNKNOWN, FMT_NATIVE, FMT_KINETO } fmt;

static const char *const supported =
    "supported: the native dtsim trace (first line 'dtsim_trace 1') and PyTorch profiler / Kineto JSON "
    "(.json or .json.gz)";

/* Reads the first non-blank, non-comment line (through zlib, so gzip-compressed files are read as their
 * content). Describes in what what the file looks like when it is no format we read. */
static fmt sniff(const char *path, char *what, size_t wsize, dt_error *err, int *failed)
{
  struct stat st;
  *failed = 0;
  if (stat(path, &st) != 0) {
    *failed = 1;
    dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
    return FMT_UNKNOWN;
  }
  if (S_ISDIR(st.st_mode))
    return FMT_NATIVE; /* a directory of per-rank .dtt files, as dt_trace_write_native writes them */
  if (!S_ISREG(st.st_mode)) {
    /* sniffing reads the start and the reader opens the file again: a pipe would be consumed or block */
    *failed = 1;
    dt_error_set(err, path, 0, 0, "is not a regular file (a pipe or a device): save the trace to a file first");
    return FMT_UNKNOWN;
  }
  FILE *raw = fopen(path, "rb");
  if (!raw) {
    *failed = 1;
    dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
    return FMT_UNKNOWN;
  }
  unsigned char magic[2] = {0, 0};
  size_t got = fread(magic, 1, 2, raw);
  fclose(raw);
  int gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  gzFile f = gzopen(path, "rb");
  if (!f) {
    *failed = 1;
    dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
    return FMT_UNKNOWN;
  }
  char line[4096];
  fmt result = FMT_UNKNOWN;
  snprintf(what, wsize, "an empty file");
  for (int n = 0; n < 100000 && gzgets(f, line, sizeof line); n++) {
    char *p = line;
    if (n == 0 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
      p += 3; /* UTF-8 byte-order mark */
    while (isspace((unsigned char)*p))
      p++;
    if (*p == '\0' || *p == '#')
      continue;
    if (*p == '{') {
      result = FMT_KINETO;
    } else if (strncmp(p, "dtsim_trace", 11) == 0 && (p[11] == '\0' || isspace((unsigned char)p[11]))) {
      result = FMT_NATIVE;
    } else {
      int binary = 0;
      for (char *q = p; *q && q < line + 64; q++)
        binary |= !isprint((unsigned char)*q) && !isspace((unsigned char)*q);
      size_t len = strcspn(p, "\r\n");
      if (len > 40)
        len = 40;
      if (strstr(p, "NCCL INFO"))
        snprintf(what, wsize, "an NCCL debug log (its importer is not available yet)");
      else if (strstr(p, "comm op:"))
        snprintf(what, wsize, "a DeepSpeed communication log (its importer is not available yet)");
      else if (*p == '[')
        snprintf(what, wsize, "a JSON array (a Chrome trace without the Kineto top-level object?)");
      else if (binary)
        snprintf(what, wsize, "binary data%s (a Chakra execution trace? its importer is not available yet)",
                 gz ? " inside gzip" : "");
      else
        snprintf(what, wsize, "text starting with '%.*s'", (int)len, p);
    }
    break;
  }
  int zerr = Z_OK;
  gzerror(f, &zerr);
  if (result == FMT_UNKNOWN && gz && zerr != Z_OK && zerr != Z_STREAM_END)
    snprintf(what, wsize, "a truncated or corrupt gzip file");
  gzclose(f);
  return result;
}

int dt_trace_load(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                  dt_error *err)
{
  dt_import_opts defaults;
  if (!opts) {
    dt_import_opts_init(&defaults);
    opts = &defaults;
  }
  *out = NULL;
  if (npaths == 0)
    return dt_error_set(err, "", 0, 0, "no trace file given");
  fmt f = FMT_UNKNOWN;
  if (!opts->format || strcmp(opts->format, "auto") == 0) {
    for (size_t i = 0; i < npaths; i++) {
      char what[256];
      int failed;
      fmt fi = sniff(paths[i], what, sizeof what, err, &failed);
      if (failed)
        return DT_ERR;
      if (fi == FMT_UNKNOWN)
        return dt_error_set(err, paths[i], 0, 0, "unrecognised trace format: found %s; %s", what, supported);
      if (i > 0 && fi != f)
        return dt_error_set(err, paths[i], 0, 0, "is not of the same format as '%s': load one trace at a time",
                            paths[0]);
      f = fi;
    }
  } else if (strcmp(opts->format, "native") == 0) {
    f = FMT_NATIVE;
  } else if (strcmp(opts->format, "kineto") == 0) {
    f = FMT_KINETO;
  } else {
    return dt_error_set(err, "", 0, 0, "unknown trace format '%s': expected 'auto', 'native' or 'kineto'",
                        opts->format);
  }

  dt_trace *t = NULL;
  if (f == FMT_NATIVE) {
    if (dt_trace_read_native(paths, npaths, &t, err) != DT_OK)
      return DT_ERR;
    /* capture options mean nothing to a native trace: say so rather than ignore them silently */
    dt_import_opts d;
    dt_import_opts_init(&d);
    if (opts->expand != d.expand || opts->rank != d.rank || opts->keep_gaps != d.keep_gaps ||
        opts->dep_window_s != d.dep_window_s)
      dt_trace_add_note(t, "--expand, --rank, --gaps and --dep-window apply to captures (Kineto); ignored for the "
                           "native trace");
  } else {
    if (npaths != 1)
      return dt_error_set(err, paths[1], 0, 0, "the Kineto importer reads one capture at a time, got %zu files",
                          npaths);
    if (dt_kineto_import(paths[0], opts, &t, err) != DT_OK)
      return DT_ERR;
  }
  if (dt_trace_validate(t, err) != DT_OK) {
    dt_trace_free(t);
    return DT_ERR;
  }
  *out = t;
  return DT_OK;
}
