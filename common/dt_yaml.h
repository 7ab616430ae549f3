/* A guard run before libyaml builds a document (platform and workload files). */
#ifndef DT_YAML_H
#define DT_YAML_H

#include "dt_error.h"

#include <stddef.h>

/* Deepest nesting of mappings and sequences a platform or workload file may have (real files need 3 or 4).
 * libyaml's document loader takes time quadratic in the nesting: 40,000 levels in 80 KB took 17.6 s. */
#define DT_YAML_MAX_DEPTH 64

/* Streams the YAML events of text (len bytes) and returns DT_ERR, with err at source:line:col, as soon as the
 * nesting passes max_depth; DT_OK otherwise, also on a syntax error (the loader reports those itself). Linear
 * in the bytes read. */
int dt_yaml_check_depth(const char *text, size_t len, const char *source, int max_depth, dt_error *err);

#endif
