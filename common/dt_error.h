/* The error record every stage fills: where in the input the problem is and what it is.
 * Functions below sim/ never print or exit: they return DT_ERR and fill a dt_error that sim/ prints. */
#ifndef DT_ERROR_H
#define DT_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#if defined(__GNUC__)
#define DT_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define DT_PRINTF(fmt_idx, arg_idx)
#endif

/* Status codes returned by fallible functions. */
enum { DT_OK = 0, DT_ERR = -1 };

/* Position and message of one error. file may be empty, line/col 0 when unknown.
 * msg follows git's wording: lowercase, no full stop, the subject in quotes, the problem first. */
typedef struct dt_error {
  char file[512];
  long line; /* 1-based, 0 when unknown */
  long col;  /* 1-based, 0 when unknown */
  char msg[1024];
} dt_error;

/* Clears the record (empty file, no position, empty message). err may be NULL. */
void dt_error_clear(dt_error *err);

/* Fills err with a position and a printf-style message; returns DT_ERR so callers can
 * `return dt_error_set(...)`. err may be NULL (the message is then dropped). */
int dt_error_set(dt_error *err, const char *file, long line, long col, const char *fmt, ...) DT_PRINTF(5, 6);
/* Same with a va_list, for a module's own positioned error helpers (they pass their arguments on instead of
 * formatting the message twice). ap is consumed. Returns DT_ERR. */
int dt_error_vset(dt_error *err, const char *file, long line, long col, const char *fmt, va_list ap)
    DT_PRINTF(5, 0);

/* Prefixes the current message with a printf-style context ("while loading x: "). Returns DT_ERR. */
int dt_error_prefix(dt_error *err, const char *fmt, ...) DT_PRINTF(2, 3);

/* Writes "file:line:col: msg" (the parts that are known) into buf (always NUL-terminated).
 * Returns buf. */
const char *dt_error_format(const dt_error *err, char *buf, size_t size);

#endif
