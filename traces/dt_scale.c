/* dtsim scale (docs/scale.md): replicate a data-parallel replica's ops into more replicas, re-homing the
 * gradient collectives onto the new DP groups. */
#include "dt_scale.h"

#include "../common/dt_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct layout {
  int32_t T, D0, P, D; /* tp, input dp, pp, output dp */
} layout;

static int32_t tp_of(const layout *l, int32_t r)
{
  return r % l->T;
}
static int32_t dp_of(const layout *l, int32_t r, int32_t D)
{
  return (r / l->T) % D;
}
static int32_t pp_of(const layout *l, int32_t r, int32_t D)
{
  return r / (l->T * D);
}
static int32_t rank_at(const layout *l, int32_t t, int32_t j, int32_t k, int32_t D)
{
  return t + l->T * (j + D * k);
}

/* Role of an input group. */
enum { G_UNUSED, G_REPLICA, G_GRAD, G_WORLD };

typedef struct ginfo {
  int role;
  int32_t replica; /* G_REPLICA: the input replica holding it */
  int32_t *out_of; /* G_REPLICA: per output replica j (j mod D0 == replica) its group, else -1; others: [0] */
  size_t nops;     /* collectives on it (over the input's owning ranks and their template users) */
  size_t nresized;
} ginfo;

static void say(FILE *report, dt_trace *t, const char *fmt, ...) DT_PRINTF(3, 4);
static void say(FILE *report, dt_trace *t, const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (report)
    fprintf(report, "%s\n", buf);
  dt_trace_add_note(t, "scale: %s", buf);
}

static int add_group_unique(dt_trace *t, const char *base, const int32_t *ranks, size_t n, dt_error *err)
{
  char name[560];
  snprintf(name, sizeof name, "%.500s", base);
  for (int i = 2; dt_trace_find_group(t, name) >= 0; i++)
    snprintf(name, sizeof name, "%.500s_%d", base, i);
  return dt_trace_add_group(t, name, ranks, n, 0, 0, err);
}

/* Copies one op of the input (as run by input rank r) into out rank r2 of the output. */
static int copy_op(const dt_trace *in, int32_t r, const dt_op *op, dt_trace *out, int32_t r2, int32_t stream_id,
                   const layout *l, const ginfo *gi, int32_t j2, dt_error *err)
{
  int32_t g = dt_trace_op_group(in, r, op);
  int32_t peer = dt_trace_op_peer(in, r, op);
  dt_op *o = dt_trace_append_copy(out, r2, stream_id, op);
  o->group = -1;
  o->peer = -1;
  if (g >= 0) {
    const ginfo *x = &gi[g];
    o->group = x->role == G_REPLICA ? x->out_of[j2] : x->out_of[0];
    if (x->role == G_GRAD && op->kind == DT_OP_ALLGATHER && l->D != l->D0) {
      /* a ZeRO parameter shard: params / dp */
      if ((op->bytes * (uint64_t)l->D0) % (uint64_t)l->D != 0)
        return dt_error_set(err, in->files[op->file], op->line, 0,
                            "all-gather of %" PRIu64 " bytes on gradient group '%s': a shard of %" PRIu64 " / %d "
                            "bytes is not a whole number of bytes",
                            op->bytes, in->groups[g].name, op->bytes * (uint64_t)l->D0, (int)l->D);
      o->bytes = op->bytes * (uint64_t)l->D0 / (uint64_t)l->D;
    }
  }
  if (peer >= 0)
    o->peer = rank_at(l, tp_of(l, peer), j2, pp_of(l, peer, l->D0), l->D);
  return DT_OK;
}

int dt_trace_scale(const dt_trace *in, const dt_scale_opts *o, dt_trace **out, FILE *report, dt_error *err)
{
  *out = NULL;
  layout L = {o->tp, 0, o->pp, o->dp};
  /* the input's first source file, for errors about the whole trace (its layout, the --grad names) */
  const char *src = in->nfiles > 1 ? in->files[1] : in->files[0];
  int32_t N = in->nranks;
  if (L.T < 1 || L.P < 1 || L.D < 1)
    return dt_error_set(err, "", 0, 0, "--tp, --pp and --dp must be at least 1");
  if (N % (L.T * L.P) != 0)
    return dt_error_set(err, src, 0, 0, "the trace has %d ranks: not a multiple of tp %d x pp %d", (int)N, (int)L.T,
                        (int)L.P);
  L.D0 = N / (L.T * L.P);
  if (L.D < L.D0) /* was accepted silently: the replicas past dp dropped, ZeRO shards grown by dp0 / dp */
    return dt_error_set(err, src, 0, 0, "--dp %d is fewer replicas than the input's %d (%d ranks / (tp %d x pp %d)): "
                        "dtsim scale adds data-parallel replicas, it does not remove them", (int)L.D, (int)L.D0, (int)N,
                        (int)L.T, (int)L.P);
  if ((int64_t)L.T * L.D * L.P > DT_TRACE_MAX_RANKS)
    return dt_error_set(err, "", 0, 0, "tp %d x dp %d x pp %d is more ranks than dtsim supports (%d)", (int)L.T,
                        (int)L.D, (int)L.P, DT_TRACE_MAX_RANKS);
  int32_t N2 = L.T * L.D * L.P;
  ginfo *gi = dt_xcalloc(in->ngroups ? in->ngroups : 1, sizeof *gi);
  int rc = DT_OK;
  dt_trace *t = NULL;

  /* gradient groups: each exactly the DP group of one (t, k) */
  for (size_t i = 0; i < o->ngrad && rc == DT_OK; i++) {
    int g = dt_trace_find_group(in, o->grad[i]);
    if (g < 0) {
      const char **names = dt_xmalloc(sizeof *names * (in->ngroups ? in->ngroups : 1));
      for (size_t k = 0; k < in->ngroups; k++)
        names[k] = in->groups[k].name;
      const char *near = dt_nearest_word(o->grad[i], names, in->ngroups);
      rc = dt_error_set(err, src, 0, 0, "--grad names group '%s', which the trace does not have%s%s%s", o->grad[i],
                        near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
      free(names);
      break;
    }
    const dt_group *gr = &in->groups[g];
    if (gi[g].role == G_GRAD) {
      rc = dt_error_set(err, src, 0, 0, "--grad names group '%s' twice", gr->name);
      break;
    }
    int ok = gr->nranks == (size_t)L.D0;
    for (size_t m = 0; m < gr->nranks && ok; m++)
      ok = tp_of(&L, gr->ranks[m]) == tp_of(&L, gr->ranks[0]) &&
           pp_of(&L, gr->ranks[m], L.D0) == pp_of(&L, gr->ranks[0], L.D0) &&
           dp_of(&L, gr->ranks[m], L.D0) == (int32_t)m;
    if (!ok) {
      rc = dt_error_set(err, in->files[gr->file < in->nfiles ? gr->file : 0], (long)gr->line, 0,
                        "group '%s' (%zu ranks, first %d) is not a data-parallel group of the layout tp "
                        "%d x dp %d x pp %d: a DP group holds the %d ranks t + %d*(j + %d*k), j = 0..%d, in that order",
                        gr->name, gr->nranks, (int)gr->ranks[0], (int)L.T, (int)L.D0, (int)L.P, (int)L.D0, (int)L.T,
                        (int)L.D0, (int)L.D0 - 1);
      break;
    }
    gi[g].role = G_GRAD;
  }
  /* every other group used: inside one replica, or all ranks */
  for (int32_t r = 0; r < N && rc == DT_OK; r++) {
    const dt_rank *body = dt_trace_rank_body(in, r);
    for (size_t s = 0; s < body->nstreams && rc == DT_OK; s++)
      for (size_t i = 0; i < body->streams[s].nops; i++) {
        const dt_op *op = &body->streams[s].ops[i];
        int32_t g = dt_trace_op_group(in, r, op);
        int32_t peer = dt_trace_op_peer(in, r, op);
        if (peer >= 0 && dp_of(&L, peer, L.D0) != dp_of(&L, r, L.D0)) {
          rc = dt_error_set(err, in->files[op->file], op->line, 0,
                            "%s of rank %d to rank %d crosses data-parallel replicas (%d and %d) of the layout tp %d x "
                            "dp %d x pp %d: point-to-point traffic must stay in its replica",
                            dt_op_kind_name(op->kind), (int)r, (int)peer, (int)dp_of(&L, r, L.D0),
                            (int)dp_of(&L, peer, L.D0), (int)L.T, (int)L.D0, (int)L.P);
          break;
        }
        if (g < 0)
          continue;
        ginfo *x = &gi[g];
        if (x->role == G_GRAD && op->kind == DT_OP_ALLTOALL) {
          rc = dt_error_set(err, in->files[op->file], op->line, 0,
                            "all-to-all on gradient group '%s': not a "
                            "gradient collective (expert parallelism is not scaled)",
                            in->groups[g].name);
          break;
        }
        if (r == in->groups[g].ranks[0]) {
          x->nops++;
          x->nresized += x->role == G_GRAD && op->kind == DT_OP_ALLGATHER && L.D != L.D0;
        }
        if (x->role != G_UNUSED)
          continue;
        const dt_group *gr = &in->groups[g];
        int32_t j = dp_of(&L, gr->ranks[0], L.D0);
        int inside = 1;
        for (size_t m = 1; m < gr->nranks && inside; m++)
          inside = dp_of(&L, gr->ranks[m], L.D0) == j;
        if (inside) {
          x->role = G_REPLICA;
          x->replica = j;
        } else if (gr->nranks == (size_t)N) {
          x->role = G_WORLD;
        } else {
          rc = dt_error_set(err, in->files[op->file], op->line, 0,
                            "group '%s' spans data-parallel replicas of the layout tp %d x dp %d x pp %d but is not "
                            "named a gradient group (--grad %s if it is one)",
                            gr->name, (int)L.T, (int)L.D0, (int)L.P, gr->name);
          break;
        }
      }
  }
  if (rc != DT_OK)
    goto done;

  t = dt_trace_new(N2);
  for (size_t f = 1; f < in->nfiles; f++)
    dt_trace_add_file(t, in->files[f]);
  for (size_t i = 0; i < in->nmeta; i++)
    dt_trace_add_meta(t, in->meta_keys[i], in->meta_values[i]);
  for (size_t i = 0; i < in->nnotes; i++)
    dt_trace_add_note(t, "%s", in->notes[i]);
  t->captured_step_s = in->captured_step_s;
  say(report, t,
      "layout tp %d x dp %d x pp %d = %d ranks -> tp %d x dp %d x pp %d = %d ranks (Megatron order: "
      "rank = t + %d*(j + dp*k))",
      (int)L.T, (int)L.D0, (int)L.P, (int)N, (int)L.T, (int)L.D, (int)L.P, (int)N2, (int)L.T);
  say(report, t,
      "rank (t, j, k) runs the trace's rank (t, j mod %d, k): new rank r runs rank "
      "r mod %d + %d*((r / %d) mod %d mod %d + %d*(r / %d))",
      (int)L.D0, (int)L.T, (int)L.T, (int)L.T, (int)L.D, (int)L.D0, (int)L.D0, (int)(L.T * L.D));

  /* output groups */
  int32_t *members = dt_xmalloc((size_t)(N2 > N ? N2 : N) * sizeof *members);
  for (size_t g = 0; g < in->ngroups && rc == DT_OK; g++) {
    ginfo *x = &gi[g];
    const dt_group *gr = &in->groups[g];
    if (x->role == G_UNUSED)
      continue;
    if (x->role == G_REPLICA) {
      x->out_of = dt_xmalloc((size_t)L.D * sizeof *x->out_of);
      for (int32_t j = 0; j < L.D && rc == DT_OK; j++) {
        x->out_of[j] = -1;
        if (j % L.D0 != x->replica)
          continue;
        for (size_t m = 0; m < gr->nranks; m++)
          members[m] = rank_at(&L, tp_of(&L, gr->ranks[m]), j, pp_of(&L, gr->ranks[m], L.D0), L.D);
        char base[512];
        if (j == x->replica)
          snprintf(base, sizeof base, "%s", gr->name);
        else
          snprintf(base, sizeof base, "%s_dp%d", gr->name, (int)j);
        x->out_of[j] = add_group_unique(t, base, members, gr->nranks, err);
        if (x->out_of[j] < 0)
          rc = DT_ERR;
      }
      if (rc == DT_OK && L.D > 1)
        say(report, t,
            "group '%s' (%zu ranks, %zu collectives) is inside replica %d: each replica j = %d mod %d "
            "uses its own copy ('%s', '%s_dpJ')",
            gr->name, gr->nranks, x->nops, (int)x->replica, (int)x->replica, (int)L.D0, gr->name, gr->name);
    } else {
      x->out_of = dt_xmalloc(sizeof *x->out_of);
      size_t n = 0;
      if (x->role == G_GRAD) {
        int32_t tt = tp_of(&L, gr->ranks[0]), kk = pp_of(&L, gr->ranks[0], L.D0);
        for (int32_t j = 0; j < L.D; j++)
          members[n++] = rank_at(&L, tt, j, kk, L.D);
      } else
        for (int32_t r = 0; r < N2; r++)
          members[n++] = r;
      x->out_of[0] = add_group_unique(t, gr->name, members, n, err);
      if (x->out_of[0] < 0)
        rc = DT_ERR;
      else if (x->role == G_GRAD)
        say(report, t,
            "gradient group '%s' (%d ranks, %zu collectives) -> the DP group of %d ranks; all-reduce and "
            "reduce-scatter keep their bytes (the whole gradient), %zu all-gather(s) of parameter shards scale by "
            "%d/%d",
            gr->name, (int)L.D0, x->nops, (int)L.D, x->nresized, (int)L.D0, (int)L.D);
      else
        say(report, t, "group '%s' spans all %d ranks (%zu collectives): it spans all %d ranks, bytes unchanged",
            gr->name, (int)N, x->nops, (int)N2);
    }
  }
  free(members);
  if (rc != DT_OK)
    goto done;

  /* ops: replicas j < dp0 own copies of the input's ops, the rest run them as template users */
  for (int32_t r2 = 0; r2 < N2 && rc == DT_OK; r2++) {
    int32_t tt = tp_of(&L, r2), j2 = dp_of(&L, r2, L.D), kk = pp_of(&L, r2, L.D);
    int32_t src = rank_at(&L, tt, j2 % L.D0, kk, L.D0);
    if (j2 >= L.D0)
      continue;
    const dt_rank *body = dt_trace_rank_body(in, src);
    for (size_t s = 0; s < body->nstreams; s++)
      dt_trace_stream(t, r2, body->streams[s].id, 1);
    for (size_t s = 0; s < body->nstreams && rc == DT_OK; s++)
      for (size_t i = 0; i < body->streams[s].nops && rc == DT_OK; i++)
        rc = copy_op(in, src, &body->streams[s].ops[i], t, r2, body->streams[s].id, &L, gi, j2, err);
  }
  int32_t *map = dt_xmalloc((t->ngroups ? t->ngroups : 1) * sizeof *map);
  for (int32_t r2 = 0; r2 < N2 && rc == DT_OK; r2++) {
    int32_t tt = tp_of(&L, r2), j2 = dp_of(&L, r2, L.D), kk = pp_of(&L, r2, L.D);
    if (j2 < L.D0)
      continue;
    int32_t owner = rank_at(&L, tt, j2 % L.D0, kk, L.D);
    for (size_t g = 0; g < t->ngroups; g++)
      map[g] = -1; /* groups the owner does not use */
    for (size_t g = 0; g < in->ngroups; g++) {
      if (gi[g].role == G_REPLICA && gi[g].out_of[j2 % L.D0] >= 0)
        map[gi[g].out_of[j2 % L.D0]] = gi[g].out_of[j2];
      else if (gi[g].role == G_GRAD || gi[g].role == G_WORLD)
        map[gi[g].out_of[0]] = gi[g].out_of[0];
    }
    rc = dt_trace_set_template(t, r2, owner, map, err);
  }
  free(map);

done:
  for (size_t g = 0; g < in->ngroups; g++)
    free(gi[g].out_of);
  free(gi);
  if (rc != DT_OK) {
    dt_trace_free(t);
    return DT_ERR;
  }
  *out = t;
  return DT_OK;
}
