/* A guard run before libyaml builds a document (platform and workload files). */
#ifndef DT_YAML_H
#define DT_YAML_H

#include "dt_error.h"

#include <stddef.h>
#include <yaml.h>

/* Deepest nesting of mappings and sequences a platform or workload file may have (real files need 3 or 4).
 * libyaml's document loader takes time quadratic in the nesting: 40,000 levels in 80 KB took 17.6 s. */
#define DT_YAML_MAX_DEPTH 64

/* The guard every dtsim YAML reader (platform, workload, sweep spec) runs before libyaml builds a document.
 * Streams the YAML events of text (len bytes) and returns DT_ERR, with err at source:line:col of the node, at the
 * first of:
 * - nesting deeper than DT_YAML_MAX_DEPTH;
 * - a YAML tag on any node (`!foo 4`, `!!int 4`, `!!str x`, `!!map {..}`): dtsim fixes each key's type itself, so a
 *   tag can only repeat it or contradict it;
 * - an anchor (`&g 8`), an alias (`*g`) or a plain merge key (`<<: {..}`): each key of dtsim's files is written
 *   where it belongs, and aliases are how a few bytes expand into a huge document ("billion laughs");
 * - a second document (`---` after the first): a file holds one.
 * The message names the key path (as 'axes.tp'), what was expected and what was found (the tag, anchor or alias as
 * written; "a mapping with the tag '!!map'"). DT_OK otherwise, also on a syntax error (the loader reports those
 * itself). Linear in the bytes read. */
int dt_yaml_check(const char *text, size_t len, const char *source, dt_error *err);

/* dtsim's files write numbers and booleans as plain YAML scalars: `nodes: 4`, never `nodes: "4"` or
 * `nodes: !foo 4` (docs/platform.md "Numbers"). Returns NULL when n is a plain scalar without an explicit tag
 * (a loaded document cannot tell `!!str 4` from `4`: dt_yaml_check refuses that one, and every other tag, before
 * the document is built); else what it is instead, a static phrase: "a quoted string", "a block string" or "a
 * value with the tag '...'" (the tag text is copied into buf, size bytes). */
const char *dt_yaml_not_plain(const yaml_node_t *n, char *buf, size_t size);

/* Where a missing key was looked for: "the mapping starting at L:C" with n's 1-based line and column (libyaml's
 * marks are 0-based), written into buf (size bytes); returns buf. A key that is absent has no position of its own:
 * the error sits at its mapping and says which one, so that 1:1 reads as the top-level mapping's start. */
const char *dt_yaml_mapping_at(const yaml_node_t *n, char *buf, size_t size);

#endif
