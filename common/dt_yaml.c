/* Nesting guard for libyaml documents (common/dt_yaml.h). */
#include "dt_yaml.h"

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
