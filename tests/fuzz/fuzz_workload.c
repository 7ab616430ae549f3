/* libFuzzer harness: the generator's workload YAML (traces/dt_gen_config.c, libyaml) on any bytes; a workload
 * that reads is resolved and validated against a machine of its own world size (never built: sizes are the
 * generator's, not the reader's). */
#include "fuzz_common.h"
#include "traces/dt_gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  dt_error_clear(&err);
  if (dt_gen_parse_yaml((const char *)data, size, "fuzz.yaml", &c, &err) != DT_OK) {
    FUZZ_CHECK(err.msg[0]);
    return 0;
  }
  char note[512];
  if (dt_gen_resolve(&c, note, sizeof note) == DT_OK) {
    int64_t w = dt_gen_world(&c);
    if (dt_gen_validate(&c, w > 0 ? w : 1, &err) != DT_OK)
      FUZZ_CHECK(err.msg[0]);
  }
  return 0;
}
