/* libFuzzer harness: the placement reader (replay/dt_placement.c) on any bytes written to a scratch file, for 16
 * ranks on 2 nodes x 8 GPUs; a placement that reads maps every rank to a distinct GPU of the platform. */
#include "fuzz_common.h"
#include "platforms/dt_platform.h"
#include "replay/dt_replay.h"

static const char platform_yaml[] =
    "dtsim_platform: 1\nname: fuzz\ngpu: {model: X, peak: 100TFLOPS}\nnodes: 2\ngpus_per_node: 8\n"
    "intra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: 2us}\n"
    "nics: {per_node: 1, bandwidth: 50GB/s, latency: 1us}\n"
    "network: {topology: single-switch, link_bandwidth: 50GB/s, link_latency: 1us}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static dt_platform *p;
  dt_error err;
  dt_error_clear(&err);
  if (!p && dt_platform_parse(platform_yaml, sizeof platform_yaml - 1, "fuzz-platform.yaml", &p, &err) != DT_OK)
    abort();
  const char *path = fuzz_scratch(data, size, ".txt");
  int32_t *map = NULL;
  const int32_t nranks = 16;
  if (dt_placement_load(path, p, nranks, &map, &err) != DT_OK) {
    FUZZ_CHECK(map == NULL && err.msg[0]);
    return 0;
  }
  int used[16] = {0};
  for (int32_t r = 0; r < nranks; r++) {
    FUZZ_CHECK(map[r] >= 0 && map[r] < 16);
    FUZZ_CHECK(!used[map[r]]);
    used[map[r]] = 1;
  }
  free(map);
  return 0;
}
