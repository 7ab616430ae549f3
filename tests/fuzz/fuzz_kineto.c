/* libFuzzer harness: the Kineto importer (traces/dt_kineto.c, zlib + yajl) on any bytes written to a scratch
 * file; an import that succeeds must validate. */
#include "fuzz_common.h"
#include "traces/dt_trace_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_scratch(data, size, ".json");
  dt_import_opts o;
  dt_import_opts_init(&o);
  o.rank = 0; /* a capture that does not say its rank is rank 0 */
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  if (dt_kineto_import(path, &o, &t, &err) != DT_OK) {
    FUZZ_CHECK(t == NULL && err.msg[0]);
    return 0;
  }
  if (dt_trace_validate(t, &err) != DT_OK)
    FUZZ_CHECK(err.msg[0]);
  dt_trace_free(t);
  return 0;
}
