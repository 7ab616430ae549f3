/* JSON strings that are valid UTF-8 whatever the input (common/dt_json.h). */
#include "dt_json.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 when the byte at p does not start one
 * (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
  unsigned c = p[0];
  size_t len;
  unsigned min;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, min = 0x10000;
  else
    return 0;
  if (n < len)
    return 0;
  unsigned v = c & (0x7F >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    v = v << 6 | (p[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
    return 0;
  return len;
}

void dt_json_string(yajl_gen g, const char *s)
{
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p), i = 0;
  while (i < n && utf8_len(p + i, n - i) > 0)
    i += utf8_len(p + i, n - i);
  if (i == n) { /* the usual case: valid as it is */
    yajl_gen_string(g, p, n);
    return;
  }
  unsigned char *out = malloc(3 * n + 1), *q = out;
  if (!out)
    abort();
  for (i = 0; i < n;) {
    size_t l = utf8_len(p + i, n - i);
    if (l == 0) {
      memcpy(q, "\xEF\xBF\xBD", 3);
      q += 3;
      i++;
    } else {
      memcpy(q, p + i, l);
      q += l;
      i += l;
    }
  }
  yajl_gen_string(g, out, (size_t)(q - out));
  free(out);
}

int dt_json_depth_error(dt_error *err, const char *path, uint64_t at)
{
  return dt_error_set(err, path, 0, 0, "JSON nested deeper than %d levels at byte %llu: dtsim reads objects and "
                      "arrays nested at most %d deep", DT_JSON_MAX_DEPTH, (unsigned long long)at, DT_JSON_MAX_DEPTH);
}

int dt_json_depth_scan(const char *text, size_t len, size_t *at)
{
  int depth = 0, in_str = 0, esc = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_str) {
      if (esc)
        esc = 0;
      else if (c == '\\')
        esc = 1;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '[' || c == '{') {
      if (++depth > DT_JSON_MAX_DEPTH) {
        *at = i;
        return -1;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  return 0;
}
