/* Shared by the libFuzzer harnesses (tests/fuzz/README.md): a per-process scratch file for the readers that take
 * a path, and the rule that a broken invariant is a finding (abort, which libFuzzer reports with the input). */
#ifndef DT_FUZZ_COMMON_H
#define DT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Aborts with a message: libFuzzer saves the input as a crash. */
#define FUZZ_CHECK(cond)                                                                                      \
  do {                                                                                                        \
    if (!(cond)) {                                                                                            \
      fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);                      \
      abort();                                                                                                \
    }                                                                                                         \
  } while (0)

/* Writes data to this process's scratch file (created once under $TMPDIR or /tmp, suffix kept so that readers
 * that look at the name see it) and returns its path. */
static inline const char *fuzz_scratch(const uint8_t *data, size_t size, const char *suffix)
{
  static char path[256];
  if (!path[0]) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/dtsim-fuzz-%ld%s", dir && *dir ? dir : "/tmp", (long)getpid(), suffix);
  }
  FILE *f = fopen(path, "wb");
  if (!f)
    abort();
  if (size && fwrite(data, 1, size, f) != size)
    abort();
  fclose(f);
  return path;
}

#endif
