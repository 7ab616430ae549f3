/* libFuzzer harness: the platform loader (platforms/dt_platform_yaml.c, libyaml) on any bytes; a platform that
 * loads must build its topology (or refuse with a message), and its routes between a few GPU pairs must have at
 * most DT_ROUTE_MAX_HOPS hops, a finite latency and a positive, finite bottleneck bandwidth. */
#include "fuzz_common.h"
#include "platforms/dt_platform.h"
#include "platforms/dt_topology.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  dt_platform *p = NULL;
  dt_error err;
  dt_error_clear(&err);
  if (dt_platform_parse((const char *)data, size, "fuzz.yaml", &p, &err) != DT_OK) {
    FUZZ_CHECK(p == NULL && err.msg[0]);
    return 0;
  }
  dt_topology *t = NULL;
  if (dt_topology_build(p, &t, &err) != DT_OK) {
    FUZZ_CHECK(t == NULL && err.msg[0]);
    dt_platform_free(p);
    return 0;
  }
  int n = dt_platform_gpu_count(p);
  FUZZ_CHECK(n >= 1);
  int pairs[][2] = {{0, n - 1}, {0, n / 2}, {n - 1, 0}, {n / 3, (2 * n) / 3}, {0, 0}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    double lat = -1, bw = -1;
    int h = dt_topology_route(t, pairs[i][0], pairs[i][1], hops, &lat, &bw);
    FUZZ_CHECK(h >= 0 && h <= DT_ROUTE_MAX_HOPS);
    FUZZ_CHECK(isfinite(lat) && lat >= 0);
    FUZZ_CHECK(isfinite(bw) && bw > 0);
  }
  dt_topology_free(t);
  dt_platform_free(p);
  return 0;
}
