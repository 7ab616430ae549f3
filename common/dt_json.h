/* JSON strings for every report dtsim writes: through yajl (quoting, escaping) and always valid UTF-8. */
#ifndef DT_JSON_H
#define DT_JSON_H

#include <yajl/yajl_gen.h>

/* Writes s (NUL-terminated, NULL = "") to g as a JSON string. Bytes that are not valid UTF-8 (a capture's
 * process-group name, a file name) become U+FFFD, so that the document stays JSON; yajl escapes the rest. */
void dt_json_string(yajl_gen g, const char *s);

#endif
