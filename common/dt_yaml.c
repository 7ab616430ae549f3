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

int dt_yaml_check(const char *text, size_t len, const char *source, dt_error *err)
{
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return DT_OK; /* the loader reports it */
  yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), text ? len : 0);
  frame stack[DT_YAML_MAX_DEPTH];
  int depth = 0, rc = DT_OK;
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
    frame *top = depth > 0 ? &stack[depth - 1] : NULL;
    int is_key = top && top->is_map && top->want_key &&
                 (type == YAML_SCALAR_EVENT || type == YAML_SEQUENCE_START_EVENT ||
                  type == YAML_MAPPING_START_EVENT || type == YAML_ALIAS_EVENT);
    if (is_key) { /* the path becomes the mapping's path and this key */
      path[top->base] = '\0';
      if (type == YAML_SCALAR_EVENT)
        snprintf(path + top->base, sizeof path - top->base, "%s%.*s", top->base ? "." : "",
                 (int)(ev.data.scalar.length < 200 ? ev.data.scalar.length : 200), (const char *)ev.data.scalar.value);
    }
    if (tag) {
      char shown[128];
      short_tag(tag, shown, sizeof shown);
      if (is_key)
        rc = dt_error_set(err, source, line, col, "expected a plain key%s%.*s, found a key with the tag '%s' (dtsim's "
                          "YAML files use no tags)", top->base ? " in '" : "", (int)top->base, path, shown);
      else
        rc = dt_error_set(err, source, line, col, "expected a plain value%s%s%s, found a value with the tag '%s' "
                          "(dtsim's YAML files use no tags: each key's type is fixed, so a tag could only repeat or "
                          "contradict it)", *path ? " for '" : "", path, *path ? "'" : "", shown);
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
