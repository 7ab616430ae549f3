/* JSON strings for every report dtsim writes: through yajl (quoting, escaping) and always valid UTF-8. */
#ifndef DT_JSON_H
#define DT_JSON_H

#include "dt_error.h"

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

/* The deepest nesting of JSON objects and arrays dtsim reads (Kineto traces, NCCL Inspector logs, nccl-tests -J
 * output, sweep results): the files these tools write nest fewer than ten levels. Deeper input is refused before
 * it costs memory or, in yajl's tree parser, one recursion per level (a segfault at millions of levels). */
#define DT_JSON_MAX_DEPTH 64

/* The error for an object or array that opens level DT_JSON_MAX_DEPTH + 1 at byte `at` (0-based, of the
 * uncompressed text) of path: "path: JSON nested deeper than 64 levels at byte N: ...". Returns DT_ERR. */
int dt_json_depth_error(dt_error *err, const char *path, uint64_t at);

/* Scans len bytes of JSON text for objects and arrays (outside strings) nested deeper than DT_JSON_MAX_DEPTH,
 * before a tree parser sees it. Returns 0, or -1 with *at the byte offset (0-based) of the bracket that opens level
 * DT_JSON_MAX_DEPTH + 1. Linear; it checks nothing else (the parser then says what else is wrong). */
int dt_json_depth_scan(const char *text, size_t len, size_t *at);

/* Writes s (NUL-terminated, NULL = "") to g as a JSON string. Bytes that are not valid UTF-8 (a capture's
 * process-group name, a file name) become U+FFFD, so that the document stays JSON; yajl escapes the rest. */
void dt_json_string(yajl_gen g, const char *s);

#endif
