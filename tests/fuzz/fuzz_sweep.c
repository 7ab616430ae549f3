/* libFuzzer harness: the sweep spec reader (sim/dt_sweep.c: dt_yaml_check, libyaml, the value checks of each axis
 * against the platform and generator readers) on any bytes written to a scratch file; a spec that reads names a
 * platform and one workload source, and its axes have values. Nothing is planned (that reads the base platform). */
#include "fuzz_common.h"
#include "sim/dt_sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_scratch(data, size, ".yaml");
  dt_sweep_spec *s = NULL;
  dt_error err;
  dt_error_clear(&err);
  if (dt_sweep_spec_load(path, NULL, 0, &s, &err) != DT_OK) {
    FUZZ_CHECK(s == NULL && err.msg[0]);
    return 0;
  }
  FUZZ_CHECK(s->platform != NULL);
  for (size_t a = 0; a < s->naxes; a++)
    FUZZ_CHECK(s->axes[a].nvalues > 0 && s->axes[a].key && s->axes[a].key[0]);
  dt_sweep_spec_free(s);
  return 0;
}
