/* Nesting guard for libyaml documents (common/dt_yaml.h). */
#include "dt_yaml.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

int dt_yaml_check_depth(const char *text, size_t len, const char *source, int max_depth, dt_error *err)
{
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return DT_OK; /* the loader reports it */
  yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), text ? len : 0);
  int depth = 0, rc = DT_OK;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev))
      break;
    yaml_event_type_t type = ev.type;
    if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
      if (++depth > max_depth) {
        rc = dt_error_set(err, source, (long)ev.start_mark.line + 1, (long)ev.start_mark.column + 1,
                          "nesting deeper than %d levels of mappings and sequences (dtsim reads at most %d)",
                          max_depth, max_depth);
        yaml_event_delete(&ev);
        break;
      }
    } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT)
      depth--;
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
  if (tag && strcmp(tag, YAML_DEFAULT_SCALAR_TAG) != 0 && strcmp(tag, YAML_INT_TAG) != 0 &&
      strcmp(tag, YAML_FLOAT_TAG) != 0 && strcmp(tag, YAML_BOOL_TAG) != 0) {
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
