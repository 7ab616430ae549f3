/* Benchmark (not a test): one 256 MiB ring all-reduce over 1,024 ranks on bench/h100-128node.yaml, replayed
 * through the library (no CLI, no report) at the fidelity given on the command line. Prints the simulated
 * time; time it with /usr/bin/time -v to get wall time and peak RSS. See bench/README.md. */
#include "platforms/dt_platform.h"
#include "replay/dt_replay.h"
#include "traces/dt_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  const char *fid = argc > 1 ? argv[1] : "flow";
  const char *yaml = argc > 2 ? argv[2] : "bench/h100-128node.yaml";
  int32_t n = argc > 3 ? atoi(argv[3]) : 1024;
  if ((strcmp(fid, "flow") && strcmp(fid, "step")) || n < 2) {
    fprintf(stderr, "usage: %s [flow|step] [platform.yaml] [ranks]\n", argv[0]);
    return 2;
  }
  dt_error err;
  dt_platform *p = NULL;
  if (dt_platform_load(yaml, &p, &err) != DT_OK) {
    char buf[2048];
    fprintf(stderr, "allreduce_1024: %s\n", dt_error_format(&err, buf, sizeof buf));
    return 2;
  }
  dt_trace *t = dt_trace_new(n);
  int32_t *ranks = malloc(sizeof *ranks * (size_t)n);
  for (int32_t r = 0; r < n; r++)
    ranks[r] = r;
  int g = dt_trace_add_group(t, "world", ranks, (size_t)n, 0, 0, &err);
  free(ranks);
  for (int32_t r = 0; r < n && g >= 0; r++) {
    dt_trace_stream(t, r, 0, 1);
    dt_op *op = dt_trace_append(t, r, 0);
    op->kind = DT_OP_ALLREDUCE;
    op->group = g;
    op->bytes = 256ULL << 20;
  }
  dt_replay_opts o;
  dt_replay_opts_init(&o);
  o.fidelity = strcmp(fid, "step") == 0 ? DT_FIDELITY_STEP : DT_FIDELITY_FLOW;
  dt_stats *s = NULL;
  if (g < 0 || dt_trace_validate(t, &err) != DT_OK || dt_replay_run(p, t, &o, &s, &err) != DT_OK) {
    char buf[2048];
    fprintf(stderr, "allreduce_1024: %s\n", dt_error_format(&err, buf, sizeof buf));
    return 1;
  }
  const dt_kind_stats *k = &s->by_kind[DT_OP_ALLREDUCE];
  printf("%d ranks, fidelity %s: makespan %.9g s, busbw %.2f GB/s, deadlocked ops %zu\n", (int)n, fid, s->makespan_s,
         dt_kind_busbw(k) / 1e9, s->ndeadlock);
  dt_stats_free(s);
  dt_trace_free(t);
  dt_platform_free(p);
  return 0;
}
