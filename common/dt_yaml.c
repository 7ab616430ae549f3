/* The guard run before libyaml builds a document: nesting and tags (common/dt_yaml.h). */
#include "dt_yaml.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

/* The tag as written: "!!int" for YAML's own "tag:yaml.org,2002:int", else the tag itself. */
static void short_tag(const char *tag, char *buf, size_t size)
{
  static const char yaml_prefix[] = "tag:yaml.org,2002:";
  if (strncmp(tag, yaml_prefix, sizeof yaml_prefix - 1) == 0)
    snprintf(buf, size, "!!%.100s", tag + sizeof yaml_prefix - 1);
  else
    snprintf(buf, size, "%.100s", tag);
}

/* One open mapping or sequence of the event stream: where its key path ends in path[], and, for a mapping,
 * whether the next scalar or node is a key. */
typedef struct frame {
  int is_map, want_key;
  size_t base;
} frame;

/* Why dtsim refuses anchors, aliases and merge keys, appended to each such message. */
#define NO_ALIASES_WHY                                                                                                 \
  "dtsim's YAML files use no anchors, aliases or merge keys: each key is written once where it belongs, and an "       \
  "alias can expand a few bytes into a huge document"

/* What a node is, for messages: "a value", "a mapping", "a sequence". */
static const char *node_word(yaml_event_type_t type)
{
  return type == YAML_MAPPING_START_EVENT ? "a mapping" : type == YAML_SEQUENCE_START_EVENT ? "a sequence" : "a value";
}

/* Sets err at event ev, whose node is refused: what was expected of it (a plain key, a plain value, a mapping or
 * sequence without a tag or anchor), inside the key path of its mapping (the first base bytes of path) when it is a
 * key, else for its own key path; found says what it is instead, why the rule. Returns DT_ERR. */
static int refuse(dt_error *err, const char *source, const yaml_event_t *ev, int is_key, const char *path, size_t base,
                  const char *without, const char *found, const char *why)
{
  long line = (long)ev->start_mark.line + 1, col = (long)ev->start_mark.column + 1;
  if (is_key)
    return dt_error_set(err, source, line, col, "expected a plain key%s%.*s%s, found %s (%s)", base ? " in '" : "",
                        (int)base, path, base ? "'" : " at the top level", found, why);
  if (ev->type == YAML_MAPPING_START_EVENT || ev->type == YAML_SEQUENCE_START_EVENT)
    return dt_error_set(err, source, line, col, "expected %s%s%s%s %s, found %s (%s)", node_word(ev->type),
                        *path ? " for '" : "", path, *path ? "'" : "", without, found, why);
  return dt_error_set(err, source, line, col, "expected a plain value%s%s%s, found %s (%s)", *path ? " for '" : "",
                      path, *path ? "'" : "", found, why);
}

int dt_yaml_check(const char *text, size_t len, const char *source, dt_error *err)
{
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return DT_OK; /* the loader reports it */
  yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), text ? len : 0);
  frame stack[DT_YAML_MAX_DEPTH];
  int depth = 0, rc = DT_OK, documents = 0;
  char path[512] = "";
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev))
      break;
    yaml_event_type_t type = ev.type;
    long line = (long)ev.start_mark.line + 1, col = (long)ev.start_mark.column + 1;
    const char *tag = type == YAML_SCALAR_EVENT           ? (const char *)ev.data.scalar.tag
                      : type == YAML_SEQUENCE_START_EVENT ? (const char *)ev.data.sequence_start.tag
                      : type == YAML_MAPPING_START_EVENT  ? (const char *)ev.data.mapping_start.tag
                                                          : NULL;
    const char *anchor = type == YAML_SCALAR_EVENT           ? (const char *)ev.data.scalar.anchor
                         : type == YAML_SEQUENCE_START_EVENT ? (const char *)ev.data.sequence_start.anchor
                         : type == YAML_MAPPING_START_EVENT  ? (const char *)ev.data.mapping_start.anchor
                         : type == YAML_ALIAS_EVENT          ? (const char *)ev.data.alias.anchor
                                                             : NULL;
    if (type == YAML_DOCUMENT_START_EVENT && ++documents > 1) { /* was ignored by the workload and sweep readers */
      rc = dt_error_set(err, source, line, col, "expected one YAML document, found a second one (dtsim reads one "
                        "document per file)");
      yaml_event_delete(&ev);
      break;
    }
    frame *top = depth > 0 ? &stack[depth - 1] : NULL;
    int is_key = top && top->is_map && top->want_key &&
                 (type == YAML_SCALAR_EVENT || type == YAML_SEQUENCE_START_EVENT ||
                  type == YAML_MAPPING_START_EVENT || type == YAML_ALIAS_EVENT);
    size_t base = top ? top->base : 0;
    if (is_key) { /* the path becomes the mapping's path and this key */
      path[base] = '\0';
      if (type == YAML_SCALAR_EVENT)
        snprintf(path + base, sizeof path - base, "%s%.*s", base ? "." : "",
                 (int)(ev.data.scalar.length < 200 ? ev.data.scalar.length : 200), (const char *)ev.data.scalar.value);
    }
    char found[320];
    const char *why = NULL, *without = "";
    if (tag) {
      char shown[128];
      short_tag(tag, shown, sizeof shown);
      snprintf(found, sizeof found, "%s with the tag '%s'", is_key ? "a key" : node_word(type), shown);
      without = "without a tag";
      why = "dtsim's YAML files use no tags: each key's type is fixed, so a tag could only repeat or contradict it";
    } else if (type == YAML_ALIAS_EVENT) {
      snprintf(found, sizeof found, "the alias '*%.100s'", anchor ? anchor : "");
      why = NO_ALIASES_WHY;
    } else if (anchor) {
      snprintf(found, sizeof found, "%s with the anchor '&%.100s'", is_key ? "a key" : node_word(type), anchor);
      without = "without an anchor";
      why = NO_ALIASES_WHY;
    } else if (is_key && type == YAML_SCALAR_EVENT && ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               ev.data.scalar.length == 2 && memcmp(ev.data.scalar.value, "<<", 2) == 0) {
      snprintf(found, sizeof found, "the merge key '<<'");
      why = NO_ALIASES_WHY;
    }
    if (why) {
      rc = refuse(err, source, &ev, is_key, path, base, without, found, why);
      yaml_event_delete(&ev);
      break;
    }
    if (top && top->is_map && (type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT ||
                               type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT))
      top->want_key = !top->want_key; /* a node: a key, or the value that completes a pair */
    if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
      if (++depth > DT_YAML_MAX_DEPTH) {
        rc = dt_error_set(err, source, line, col,
                          "nesting deeper than %d levels of mappings and sequences (dtsim reads at most %d)",
                          DT_YAML_MAX_DEPTH, DT_YAML_MAX_DEPTH);
        yaml_event_delete(&ev);
        break;
      }
      stack[depth - 1] = (frame){type == YAML_MAPPING_START_EVENT, 1, strlen(path)};
    } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
      if (depth > 0) {
        depth--;
        path[stack[depth].base] = '\0';
      }
    }
    yaml_event_delete(&ev);
    if (type == YAML_STREAM_END_EVENT)
      break;
  }
  yaml_parser_delete(&parser);
  return rc;
}

const char *dt_yaml_not_plain(const yaml_node_t *n, char *buf, size_t size)
{
  if (n->type != YAML_SCALAR_NODE)
    return NULL; /* mappings and sequences have their own messages */
  const char *tag = (const char *)n->tag;
  if (tag && strcmp(tag, YAML_DEFAULT_SCALAR_TAG) != 0) {
    snprintf(buf, size, "a value with the tag '%.100s'", tag);
    return buf;
  }
  switch (n->data.scalar.style) {
  case YAML_SINGLE_QUOTED_SCALAR_STYLE:
  case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
    return "a quoted string";
  case YAML_LITERAL_SCALAR_STYLE:
  case YAML_FOLDED_SCALAR_STYLE:
    return "a block string";
  default:
    return NULL;
  }
}

const char *dt_yaml_mapping_at(const yaml_node_t *n, char *buf, size_t size)
{
  snprintf(buf, size, "the mapping starting at %lu:%lu", (unsigned long)n->start_mark.line + 1,
           (unsigned long)n->start_mark.column + 1);
  return buf;
}
