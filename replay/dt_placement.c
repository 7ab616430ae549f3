/* Rank-to-GPU placement files (DESIGN.md §4): lines `rank node gpu`, `#` comments; ranks not listed keep the
 * default placement, rank r on node r / G, GPU r mod G, i.e. global GPU r. */
#include "dt_replay.h"

#include "../common/dt_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Parses a non-negative decimal integer token; returns 0 on success. */
static int parse_count(const char *tok, long *out)
{
  if (!tok || !*tok)
    return -1;
  char *end = NULL;
  errno = 0;
  long v = strtol(tok, &end, 10);
  if (errno || *end || v < 0 || tok[0] == '-' || tok[0] == '+')
    return -1;
  *out = v;
  return 0;
}

int dt_placement_load(const char *path, const dt_platform *p, int32_t nranks, int32_t **gpu_of_rank, dt_error *err)
{
  size_t nlisted;
  return dt_placement_load_listed(path, p, nranks, gpu_of_rank, &nlisted, err);
}

int dt_placement_load_listed(const char *path, const dt_platform *p, int32_t nranks, int32_t **gpu_of_rank,
                             size_t *nlisted, dt_error *err)
{
  *gpu_of_rank = NULL;
  *nlisted = 0;
  dt_error_clear(err);
  FILE *f = fopen(path, "r");
  if (!f)
    return dt_error_set(err, path, 0, 0, "cannot open placement file: %s", strerror(errno));

  int rc = DT_ERR;
  int G = p->gpus_per_node;
  int ngpus = dt_platform_gpu_count(p);
  size_t n = nranks > 0 ? (size_t)nranks : 0;
  int32_t *map = dt_xmalloc(sizeof *map * (n + 1));
  long *listed_at = dt_xcalloc(n + 1, sizeof *listed_at); /* line that placed each rank, 0 = default */
  long *gpu_line = dt_xcalloc(ngpus > 0 ? (size_t)ngpus : 1, sizeof *gpu_line);
  int32_t *gpu_rank = dt_xmalloc(sizeof *gpu_rank * (ngpus > 0 ? (size_t)ngpus : 1));
  char *buf = NULL;
  size_t cap = 0;
  long lineno = 0;

  for (size_t r = 0; r < n; r++)
    map[r] = (int32_t)r;
  ssize_t got;
  while ((got = getline(&buf, &cap, f)) >= 0) {
    lineno++;
    const char *nul = memchr(buf, '\0', (size_t)got);
    if (nul) { /* strtok would stop there and read the line's start alone */
      dt_error_set(err, path, lineno, (long)(nul - buf) + 1, "NUL byte in a placement line (expected 'rank node gpu')");
      goto cleanup;
    }
    char *hash = strchr(buf, '#');
    if (hash)
      *hash = '\0';
    char *save = NULL;
    char *tok[4];
    int ntok = 0;
    for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
      if (ntok < 4)
        tok[ntok] = w;
      ntok++;
    }
    if (ntok == 0)
      continue;
    long rank, node, gpu;
    if (ntok != 3 || parse_count(tok[0], &rank) || parse_count(tok[1], &node) || parse_count(tok[2], &gpu)) {
      dt_error_set(err, path, lineno, 0, "expected 'rank node gpu' (three non-negative integers)");
      goto cleanup;
    }
    if (rank >= nranks) {
      dt_error_set(err, path, lineno, 0, "rank %ld out of range: the trace has %d ranks", rank, (int)nranks);
      goto cleanup;
    }
    if (node >= p->nodes) {
      dt_error_set(err, path, lineno, 0, "node %ld out of range: platform '%s' has %d nodes", node, p->name, p->nodes);
      goto cleanup;
    }
    if (gpu >= G) {
      dt_error_set(err, path, lineno, 0, "gpu %ld out of range: platform '%s' has %d GPUs per node", gpu, p->name, G);
      goto cleanup;
    }
    if (listed_at[rank]) {
      dt_error_set(err, path, lineno, 0, "rank %ld placed twice (first on line %ld)", rank, listed_at[rank]);
      goto cleanup;
    }
    listed_at[rank] = lineno;
    map[rank] = (int32_t)(node * G + gpu);
    (*nlisted)++;
  }
  if (ferror(f)) {
    dt_error_set(err, path, lineno, 0, "cannot read placement file: %s", strerror(errno));
    goto cleanup;
  }

  /* every rank on its own GPU: listed ranks first (so errors name a file line), then the defaults */
  for (int pass = 0; pass < 2; pass++)
    for (size_t r = 0; r < n; r++) {
      if ((listed_at[r] != 0) != (pass == 0))
        continue;
      int32_t g = map[r];
      if (g >= ngpus) {
        dt_error_set(err, path, 0, 0,
                     "rank %zu is not listed and its default GPU %d does not exist: platform '%s' has %d GPUs", r,
                     (int)g, p->name, ngpus);
        goto cleanup;
      }
      if (gpu_line[g] != 0) {
        long at = listed_at[r] ? listed_at[r] : gpu_line[g];
        dt_error_set(err, path, at > 0 ? at : 0, 0, "GPU %d (node %d, gpu %d) used twice: by rank %d and rank %zu%s",
                     (int)g, (int)g / G, (int)g % G, (int)gpu_rank[g], r, listed_at[r] ? "" : " (default placement)");
        goto cleanup;
      }
      gpu_line[g] = listed_at[r] ? listed_at[r] : -1;
      gpu_rank[g] = (int32_t)r;
    }
  *gpu_of_rank = map;
  map = NULL;
  rc = DT_OK;

cleanup:
  free(buf);
  free(gpu_rank);
  free(gpu_line);
  free(listed_at);
  free(map);
  fclose(f);
  return rc;
}
