/* libFuzzer harness: the native trace reader (traces/dt_native.c) and validator on any bytes; what reads and
 * validates must write, read back and write again to the same text (a write-and-read-back round trip). */
#include "fuzz_common.h"
#include "traces/dt_trace_io.h"

static char *write_text(const dt_trace *t, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  FUZZ_CHECK(f != NULL);
  dt_error err;
  dt_error_clear(&err);
  FUZZ_CHECK(dt_trace_write_native_file(t, f, &err) == DT_OK);
  fclose(f);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  if (dt_trace_parse_native((const char *)data, size, "fuzz.dtt", &t, &err) != DT_OK) {
    FUZZ_CHECK(t == NULL && err.msg[0]);
    return 0;
  }
  if (dt_trace_validate(t, &err) != DT_OK) {
    FUZZ_CHECK(err.msg[0]);
    dt_trace_free(t);
    return 0;
  }
  size_t n1, n2;
  char *text1 = write_text(t, &n1);
  dt_trace *u = NULL;
  int rc = dt_trace_parse_native(text1, n1, "roundtrip.dtt", &u, &err);
  if (rc != DT_OK)
    fprintf(stderr, "written trace does not read back: %s\n", err.msg);
  FUZZ_CHECK(rc == DT_OK);
  FUZZ_CHECK(dt_trace_validate(u, &err) == DT_OK);
  FUZZ_CHECK(u->nranks == t->nranks && u->ngroups == t->ngroups);
  FUZZ_CHECK(dt_trace_op_count(u) == dt_trace_op_count(t));
  char *text2 = write_text(u, &n2);
  FUZZ_CHECK(n1 == n2 && memcmp(text1, text2, n1) == 0);
  free(text1);
  free(text2);
  dt_trace_free(u);
  dt_trace_free(t);
  return 0;
}
