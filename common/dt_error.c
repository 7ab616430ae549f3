/* The error record: filling and formatting positions and messages. */
#include "dt_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dt_error_clear(dt_error *err)
{
  if (!err)
    return;
  err->file[0] = '\0';
  err->line = 0;
  err->col = 0;
  err->msg[0] = '\0';
}

int dt_error_vset(dt_error *err, const char *file, long line, long col, const char *fmt, va_list ap)
{
  if (!err)
    return DT_ERR;
  snprintf(err->file, sizeof err->file, "%s", file ? file : "");
  err->line = line;
  err->col = col;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  return DT_ERR;
}

int dt_error_set(dt_error *err, const char *file, long line, long col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(err, file, line, col, fmt, ap);
  va_end(ap);
  return DT_ERR;
}

int dt_error_prefix(dt_error *err, const char *fmt, ...)
{
  if (!err)
    return DT_ERR;
  char head[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  char old[sizeof err->msg];
  memcpy(old, err->msg, sizeof old);
  size_t hl = strlen(head);
  if (hl >= sizeof err->msg)
    hl = sizeof err->msg - 1;
  memcpy(err->msg, head, hl);
  size_t ol = strlen(old);
  if (ol > sizeof err->msg - 1 - hl)
    ol = sizeof err->msg - 1 - hl;
  memcpy(err->msg + hl, old, ol);
  err->msg[hl + ol] = '\0';
  return DT_ERR;
}

const char *dt_error_format(const dt_error *err, char *buf, size_t size)
{
  if (!buf || size == 0)
    return buf;
  if (!err) {
    buf[0] = '\0';
    return buf;
  }
  if (err->file[0] && err->line > 0 && err->col > 0)
    snprintf(buf, size, "%s:%ld:%ld: %s", err->file, err->line, err->col, err->msg);
  else if (err->file[0] && err->line > 0)
    snprintf(buf, size, "%s:%ld: %s", err->file, err->line, err->msg);
  else if (err->file[0])
    snprintf(buf, size, "%s: %s", err->file, err->msg);
  else
    snprintf(buf, size, "%s", err->msg);
  return buf;
}
