/* Replay statistics helpers: nccl-tests bandwidth conventions and interval unions. */
#include "dt_stats.h"

#include "dt_linkload.h"

#include <stdlib.h>

double dt_busbw_factor(dt_op_kind kind, size_t n)
{
  if (n == 0)
    return 0;
  double nn = (double)n;
  switch (kind) {
  case DT_OP_ALLREDUCE:
  case DT_OP_OTHER: /* replayed as an all-reduce */
    return 2.0 * (nn - 1) / nn;
  case DT_OP_ALLGATHER:
  case DT_OP_REDUCESCATTER:
  case DT_OP_ALLTOALL:
    return (nn - 1) / nn;
  case DT_OP_BROADCAST:
  case DT_OP_REDUCE:
  case DT_OP_SEND:
    return 1.0;
  default:
    return 0;
  }
}

double dt_kind_algbw(const dt_kind_stats *k)
{
  return k->time_s > 0 ? k->nccl_bytes / k->time_s : 0;
}

double dt_kind_busbw(const dt_kind_stats *k)
{
  return k->time_s > 0 ? k->bus_bytes / k->time_s : 0;
}

double dt_stats_link_span(const dt_stats *s)
{
  if (!s->aborted && s->ndeadlock == 0)
    return s->makespan_s;
  double t = s->stopped_s;
  if (s->links && s->links->end_s > t)
    t = s->links->end_s;
  return t;
}

double dt_kind_pair_time(int send_batched, double arrival_s, double end_s)
{
  return send_batched ? 0 : end_s - arrival_s;
}

void dt_kind_add_batch(dt_kind_stats *send, double arrival_s, double end_s, int m)
{
  if (end_s > arrival_s)
    send->time_s += (end_s - arrival_s) * m;
}

static int cmp_start(const void *a, const void *b)
{
  const double *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

double dt_interval_union(double (*iv)[2], size_t n)
{
  if (n == 0)
    return 0;
  qsort(iv, n, sizeof iv[0], cmp_start);
  double total = 0, cur_s = iv[0][0], cur_e = iv[0][1];
  for (size_t i = 1; i < n; i++) {
    if (iv[i][0] > cur_e) {
      total += cur_e - cur_s;
      cur_s = iv[i][0];
      cur_e = iv[i][1];
    } else if (iv[i][1] > cur_e) {
      cur_e = iv[i][1];
    }
  }
  return total + (cur_e - cur_s);
}

void dt_stats_free(dt_stats *s)
{
  if (!s)
    return;
  free(s->per_rank);
  free(s->iterations_s);
  for (size_t i = 0; i < s->nnotes; i++)
    free(s->notes[i]);
  free(s->notes);
  for (size_t i = 0; i < s->nfallbacks; i++)
    free(s->fallbacks[i]);
  free(s->fallbacks);
  for (size_t i = 0; i < s->ndeadlock; i++)
    free(s->deadlock[i]);
  free(s->deadlock);
  free(s->aborted);
  dt_linkstats_free(s->links);
  if (s->critical)
    free(s->critical->segs);
  free(s->critical);
  free(s->hist_group);
  free(s->explain);
  free(s->explain_p2p);
  for (size_t j = 0; j < s->njobs; j++)
    free(s->jobs[j].iterations_s);
  free(s->jobs);
  free(s);
}

int dt_hist_bucket(uint64_t bytes)
{
  int b = 0;
  while (bytes) {
    bytes >>= 1;
    b++;
  }
  return b;
}
