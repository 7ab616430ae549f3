/* Several jobs' traces merged into one (dt_merge.h): ranks, groups and files offset per job, ops deep-copied,
 * templates kept where their peer arithmetic survives the larger world. */
#include "dt_merge.h"

#include "../common/dt_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies op (of rank `rank` of src, seen as that rank sees it when `as_rank` >= 0) to a new op of stream id sid
 * of merged rank mr: groups offset by goff, files through fmap, peers offset by roff. */
static void copy_op(dt_trace *m, int32_t mr, int32_t sid, const dt_trace *src, int32_t as_rank, const dt_op *op,
                    size_t goff, int32_t roff, const uint32_t *fmap)
{
  dt_op *o = dt_trace_append_copy(m, mr, sid, op);
  int32_t g = as_rank >= 0 ? dt_trace_op_group(src, as_rank, op) : op->group;
  int32_t peer = as_rank >= 0 ? dt_trace_op_peer(src, as_rank, op) : op->peer;
  o->group = g >= 0 ? g + (int32_t)goff : -1;
  o->peer = peer >= 0 ? peer + roff : -1;
  o->file = op->file < src->nfiles ? fmap[op->file] : 0;
}

/* Copies the streams of body (a rank of src) to merged rank mr. */
static void copy_body(dt_trace *m, int32_t mr, const dt_trace *src, int32_t as_rank, const dt_rank *body,
                      size_t goff, int32_t roff, const uint32_t *fmap)
{
  for (size_t s = 0; s < body->nstreams; s++) {
    const dt_stream *st = &body->streams[s];
    dt_trace_stream(m, mr, st->id, 1); /* an empty stream keeps its position */
    for (size_t i = 0; i < st->nops; i++)
      copy_op(m, mr, st->id, src, as_rank, &st->ops[i], goff, roff, fmap);
  }
}

/* Whether template user r of src (n ranks) has a peer that the merged world's modulo would send elsewhere: a
 * template's peer p seen by r is (r + p - template) mod n, which the merged trace computes without the wrap. */
static int peers_wrap(const dt_trace *src, int32_t r)
{
  const dt_rank *body = dt_trace_rank_body(src, r);
  int64_t tr = src->ranks[r].template_rank, n = src->nranks;
  for (size_t s = 0; s < body->nstreams; s++)
    for (size_t i = 0; i < body->streams[s].nops; i++) {
      const dt_op *op = &body->streams[s].ops[i];
      if (op->peer < 0)
        continue;
      int64_t v = (int64_t)r + op->peer - tr;
      if (v < 0 || v >= n)
        return 1;
    }
  return 0;
}

int dt_trace_merge(dt_trace *const *jobs, const char *const *names, size_t njobs, int32_t *first, dt_trace **out,
                   dt_error *err)
{
  *out = NULL;
  if (njobs < 1 || njobs > DT_MERGE_MAX_JOBS)
    return dt_error_set(err, "", 0, 0, "expected 1 to %d jobs, found %zu", DT_MERGE_MAX_JOBS, njobs);
  int64_t total = 0;
  first[0] = 0;
  for (size_t j = 0; j < njobs; j++) {
    total += jobs[j]->nranks;
    if (total > DT_TRACE_MAX_RANKS)
      return dt_error_set(err, "", 0, 0, "the jobs have more than %d ranks together", DT_TRACE_MAX_RANKS);
    first[j + 1] = (int32_t)total;
  }
  dt_trace *m = dt_trace_new((int32_t)total);
  uint32_t **fmap = dt_xcalloc(njobs, sizeof *fmap);
  size_t *goff = dt_xcalloc(njobs + 1, sizeof *goff);
  int32_t *map = NULL;
  int rc = DT_ERR;
  dt_dim p2p = dt_trace_p2p_dim(jobs[0]);

  /* files and groups of every job first: template users' group maps cover all of them */
  for (size_t j = 0; j < njobs; j++) {
    const dt_trace *src = jobs[j];
    if (dt_trace_p2p_dim(src) != p2p)
      p2p = DT_DIM_NONE;
    fmap[j] = dt_xcalloc(src->nfiles + 1, sizeof *fmap[j]);
    for (size_t f = 0; f < src->nfiles; f++)
      fmap[j][f] = dt_trace_add_file(m, src->files[f]);
    goff[j] = m->ngroups;
    for (size_t g = 0; g < src->ngroups; g++) {
      const dt_group *gr = &src->groups[g];
      size_t len = strlen(names[j]) + strlen(gr->name) + 2;
      char *name = dt_xmalloc(len);
      snprintf(name, len, "%s/%s", names[j], gr->name);
      int32_t *ranks = dt_xmalloc(sizeof *ranks * (gr->nranks + 1));
      for (size_t i = 0; i < gr->nranks; i++)
        ranks[i] = gr->ranks[i] + first[j];
      int gi = dt_trace_add_group(m, name, ranks, gr->nranks, gr->file < src->nfiles ? fmap[j][gr->file] : 0,
                                  gr->line, err);
      free(name);
      free(ranks);
      if (gi < 0)
        goto done;
      m->groups[gi].dim = gr->dim;
    }
    for (size_t i = 0; i < src->nmeta; i++) {
      size_t len = strlen(names[j]) + strlen(src->meta_keys[i]) + 2;
      char *key = dt_xmalloc(len);
      snprintf(key, len, "%s:%s", names[j], src->meta_keys[i]);
      dt_trace_add_meta(m, key, src->meta_values[i]);
      free(key);
    }
    for (size_t i = 0; i < src->nnotes; i++)
      dt_trace_add_note(m, "%s: %s", names[j], src->notes[i]);
  }
  goff[njobs] = m->ngroups;
  m->p2p_dim = p2p;

  /* ranks: owners copied, template users kept on their template (offset) unless a peer wraps around the job */
  map = dt_xmalloc(sizeof *map * (m->ngroups + 1));
  for (size_t j = 0; j < njobs; j++) {
    const dt_trace *src = jobs[j];
    for (int32_t r = 0; r < src->nranks; r++) {
      const dt_rank *rk = &src->ranks[r];
      int32_t mr = r + first[j];
      if (rk->template_rank < 0) {
        copy_body(m, mr, src, -1, rk, goff[j], first[j], fmap[j]);
        continue;
      }
      if (peers_wrap(src, r)) {
        copy_body(m, mr, src, r, dt_trace_rank_body(src, r), goff[j], first[j], fmap[j]);
        continue;
      }
      for (size_t g = 0; g < m->ngroups; g++)
        map[g] = (int32_t)g;
      for (size_t g = 0; g < rk->ngroup_map && rk->group_map; g++)
        map[goff[j] + g] = rk->group_map[g] >= 0 ? rk->group_map[g] + (int32_t)goff[j] : -1;
      if (dt_trace_set_template(m, mr, rk->template_rank + first[j], rk->group_map ? map : NULL, err) != DT_OK)
        goto done;
    }
  }
  if (dt_trace_validate(m, err) != DT_OK)
    goto done;
  *out = m;
  m = NULL;
  rc = DT_OK;
done:
  for (size_t j = 0; j < njobs; j++)
    free(fmap[j]);
  free(fmap);
  free(goff);
  free(map);
  dt_trace_free(m);
  return rc;
}
