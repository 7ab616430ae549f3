/* Shared importer pieces: the gzip-transparent line reader, NCCL datatype sizes, assumption notes. */
#include "dt_import_util.h"

#include "../common/dt_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dt_lines_open(dt_lines *l, const char *path, dt_error *err)
{
  memset(l, 0, sizeof *l);
  l->path = path;
  errno = 0;
  l->f = gzopen(path, "rb");
  if (!l->f)
    return dt_error_set(err, path, 0, 0, "cannot open: %s", errno ? strerror(errno) : "out of memory");
  gzbuffer(l->f, 1u << 17);
  l->cap = 4096;
  l->buf = dt_xmalloc(l->cap);
  return DT_OK;
}

int dt_lines_next(dt_lines *l, dt_error *err)
{
  l->len = 0;
  l->buf[0] = '\0';
  int any = 0;
  for (;;) {
    if (l->cap - l->len < 2) {
      l->cap *= 2;
      l->buf = dt_xrealloc(l->buf, l->cap);
    }
    size_t space = l->cap - l->len;
    if (space > (1u << 30))
      space = 1u << 30;
    if (!gzgets(l->f, l->buf + l->len, (int)space))
      break;
    any = 1;
    size_t n = strlen(l->buf + l->len);
    l->len += n;
    if (l->len > 0 && l->buf[l->len - 1] == '\n')
      break;
    /* gzgets stops at '\n', a full buffer or the end; short of all three, a NUL byte cut the line */
    if (n + 1 < space && !gzeof(l->f))
      return dt_error_set(err, l->path, l->lineno + 1, 0, "a NUL byte inside a line: binary data, not a text log");
  }
  int zerr = Z_OK;
  const char *msg = gzerror(l->f, &zerr);
  if (zerr != Z_OK && zerr != Z_STREAM_END)
    return dt_error_set(err, l->path, l->lineno + 1, 0, "cannot read: %s (a truncated or corrupt gzip file?)",
                        zerr == Z_ERRNO ? strerror(errno) : msg);
  if (!any)
    return 0;
  l->bytes += l->len;
  l->lineno++;
  while (l->len > 0 && (l->buf[l->len - 1] == '\n' || l->buf[l->len - 1] == '\r'))
    l->buf[--l->len] = '\0';
  return 1;
}

void dt_lines_close(dt_lines *l)
{
  if (l->f)
    gzclose(l->f);
  free(l->buf);
  memset(l, 0, sizeof *l);
}

void dt_import_note_assumptions(dt_trace *t, const char *importer)
{
  const dt_importer *imp = dt_importer_find(importer);
  if (!imp)
    return;
  const char *a = imp->assumptions;
  while (*a) {
    size_t n = strcspn(a, "\n");
    dt_trace_add_note(t, "%s: assumes %.*s", importer, (int)n, a);
    a += n + (a[n] == '\n');
  }
}

static const struct {
  unsigned size;
  const char *name;
} nccl_types[] = {{1, "int8"}, {1, "uint8"}, {4, "int32"}, {4, "uint32"}, {8, "int64"}, {8, "uint64"},
                  {2, "fp16"}, {4, "fp32"},  {8, "fp64"},  {2, "bf16"},   {1, "fp8e4m3"}, {1, "fp8e5m2"}};

unsigned dt_nccl_dtype_size(int id)
{
  return id >= 0 && id < (int)(sizeof nccl_types / sizeof nccl_types[0]) ? nccl_types[id].size : 0;
}

const char *dt_nccl_dtype_name(int id)
{
  return id >= 0 && id < (int)(sizeof nccl_types / sizeof nccl_types[0]) ? nccl_types[id].name : NULL;
}
