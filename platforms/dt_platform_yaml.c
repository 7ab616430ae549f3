/* The platform YAML v1 loader (DESIGN.md §3). Placeholder until the libyaml loader lands. */
#include "dt_platform.h"

#include <stddef.h>

int dt_platform_parse(const char *text, size_t len, const char *source_name, dt_platform **out, dt_error *err)
{
  (void)text;
  (void)len;
  if (out)
    *out = NULL;
  return dt_error_set(err, source_name, 0, 0, "the platform loader is not implemented yet");
}

int dt_platform_load(const char *path, dt_platform **out, dt_error *err)
{
  return dt_platform_parse("", 0, path, out, err);
}
