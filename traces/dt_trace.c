/* The trace model's builder: ranks, streams, ops, groups, files, meta and notes. Validation (matching
 * collectives and send/recv pairs) lives in dt_validate.c. */
#include "dt_trace.h"

#include "../common/dt_util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[DT_OP_COUNT] = {
    [DT_OP_COMPUTE] = "compute",     [DT_OP_ALLREDUCE] = "allreduce", [DT_OP_REDUCESCATTER] = "reducescatter",
    [DT_OP_BROADCAST] = "broadcast", [DT_OP_REDUCE] = "reduce",       [DT_OP_ALLGATHER] = "allgather",
    [DT_OP_ALLTOALL] = "alltoall",   [DT_OP_BARRIER] = "barrier",     [DT_OP_SEND] = "send",
    [DT_OP_RECV] = "recv",           [DT_OP_MARK] = "mark",           [DT_OP_DELAY] = "delay",
    [DT_OP_OTHER] = "other",
};

const char *dt_op_kind_name(dt_op_kind kind)
{
  return (unsigned)kind < DT_OP_COUNT ? kind_names[kind] : NULL;
}

static const char *const dtype_names[DT_DTYPE_COUNT] = {"bf16", "fp16", "fp8", "fp32"};
static const char *const kernel_names[DT_KERN_COUNT] = {"gemm", "attn", "elem"};

const char *dt_dtype_name(dt_dtype d)
{
  return (unsigned)d < DT_DTYPE_COUNT ? dtype_names[d] : NULL;
}

int dt_dtype_from_name(const char *name)
{
  for (int i = 0; i < DT_DTYPE_COUNT; i++)
    if (strcmp(name, dtype_names[i]) == 0)
      return i;
  return -1;
}

const char *dt_kernel_kind_name(dt_kernel_kind k)
{
  return (unsigned)k < DT_KERN_COUNT ? kernel_names[k] : NULL;
}

int dt_op_kind_from_name(const char *name, dt_op_kind *kind)
{
  for (int i = 0; i < DT_OP_COUNT; i++)
    if (strcmp(name, kind_names[i]) == 0) {
      *kind = (dt_op_kind)i;
      return DT_OK;
    }
  return DT_ERR;
}

int dt_op_is_collective(dt_op_kind kind)
{
  switch (kind) {
  case DT_OP_ALLREDUCE:
  case DT_OP_REDUCESCATTER:
  case DT_OP_BROADCAST:
  case DT_OP_REDUCE:
  case DT_OP_ALLGATHER:
  case DT_OP_ALLTOALL:
  case DT_OP_BARRIER:
  case DT_OP_OTHER:
    return 1;
  default:
    return 0;
  }
}

dt_trace *dt_trace_new(int32_t nranks)
{
  dt_trace *t = dt_xcalloc(1, sizeof *t);
  t->nranks = nranks;
  t->ranks = dt_xcalloc(nranks > 0 ? (size_t)nranks : 1, sizeof *t->ranks);
  for (int32_t r = 0; r < nranks; r++)
    t->ranks[r].template_rank = -1;
  dt_trace_add_file(t, "");
  return t;
}

typedef struct note_kind {
  uint64_t key;  /* note_key of the kind, 0 for an empty slot */
  uint64_t n;    /* notes of the kind given so far */
  size_t last;   /* index of the last one kept (in notes or meta) */
  size_t more;   /* index of the closing "… and K more" note, SIZE_MAX before there is one */
} note_kind;

struct dt_note_kinds {
  note_kind *slot; /* open addressing on key */
  size_t cap, n;
  /* notes of kinds past DT_NOTE_KINDS_MAX, [0] notes, [1] `meta note=` lines: counted in one closing note */
  uint64_t other_n[2];
  size_t other_at[2]; /* index of that note */
  char *other_first[2]; /* the first such note (owned) */
};

static void note_kinds_free(struct dt_note_kinds *k)
{
  if (k) {
    free(k->slot);
    free(k->other_first[0]);
    free(k->other_first[1]);
  }
  free(k);
}

void dt_trace_free(dt_trace *t)
{
  if (!t)
    return;
  for (int32_t r = 0; r < t->nranks; r++) {
    dt_rank *rk = &t->ranks[r];
    for (size_t s = 0; s < rk->nstreams; s++) {
      dt_stream *st = &rk->streams[s];
      for (size_t i = 0; i < st->nops; i++) {
        free(st->ops[i].deps);
        free(st->ops[i].splits);
        free(st->ops[i].kernels);
        free(st->ops[i].name);
        free(st->ops[i].dtype);
      }
      free(st->ops);
    }
    free(rk->streams);
    free(rk->stream_slot);
    free(rk->group_map);
  }
  free(t->ranks);
  for (size_t g = 0; g < t->ngroups; g++) {
    free(t->groups[g].name);
    free(t->groups[g].ranks);
  }
  free(t->groups);
  dt_strtab_free(&t->group_index);
  for (size_t i = 0; i < t->nfiles; i++)
    free(t->files[i]);
  free(t->files);
  for (size_t i = 0; i < t->nmeta; i++) {
    free(t->meta_keys[i]);
    free(t->meta_values[i]);
  }
  free(t->meta_keys);
  free(t->meta_values);
  for (size_t i = 0; i < t->nnotes; i++)
    free(t->notes[i]);
  free(t->notes);
  note_kinds_free(t->note_kinds);
  free(t);
}

uint32_t dt_trace_add_file(dt_trace *t, const char *path)
{
  for (size_t i = 0; i < t->nfiles; i++)
    if (strcmp(t->files[i], path) == 0)
      return (uint32_t)i;
  t->files = dt_grow(t->files, &t->files_cap, t->nfiles, sizeof *t->files);
  t->files[t->nfiles] = dt_xstrdup(path);
  return (uint32_t)t->nfiles++;
}

static int cmp_rank(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int dt_trace_add_group(dt_trace *t, const char *name, const int32_t *ranks, size_t n, uint32_t file, uint32_t line,
                       dt_error *err)
{
  const char *fname = file < t->nfiles ? t->files[file] : "";
  if (dt_trace_find_group(t, name) >= 0)
    return dt_error_set(err, fname, line, 0, "group '%s' is declared twice", name);
  if (n == 0)
    return dt_error_set(err, fname, line, 0, "group '%s' has no ranks", name);
  for (size_t i = 0; i < n; i++)
    if (ranks[i] < 0 || ranks[i] >= t->nranks)
      return dt_error_set(err, fname, line, 0, "group '%s' lists rank %d, outside 0-%d", name, (int)ranks[i],
                          (int)t->nranks - 1);
  /* repeated ranks: sort a copy, O(n log n) (a 16,384-rank world group would be 134 M pair comparisons) */
  int32_t *sorted = dt_xmalloc(n * sizeof *sorted);
  memcpy(sorted, ranks, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_rank);
  for (size_t i = 1; i < n; i++)
    if (sorted[i] == sorted[i - 1]) {
      int32_t twice = sorted[i];
      free(sorted);
      return dt_error_set(err, fname, line, 0, "group '%s' lists rank %d twice", name, (int)twice);
    }
  free(sorted);
  t->groups = dt_grow(t->groups, &t->groups_cap, t->ngroups, sizeof *t->groups);
  dt_group *g = &t->groups[t->ngroups];
  g->name = dt_xstrdup(name);
  g->dim = dt_dim_from_group_name(name);
  g->nranks = n;
  g->ranks = dt_xmalloc(n * sizeof *g->ranks);
  memcpy(g->ranks, ranks, n * sizeof *g->ranks);
  g->file = file;
  g->line = line;
  dt_strtab_intern(&t->group_index, name, strlen(name)); /* new: index ngroups */
  return (int)t->ngroups++;
}

int dt_trace_find_group(const dt_trace *t, const char *name)
{
  return dt_strtab_find(&t->group_index, name, strlen(name));
}

/* Streams a rank may have before dt_trace_stream keeps a table of their ids (below it, a scan is as fast). */
#define STREAM_SCAN_MAX 8

static size_t stream_slot_of(const dt_rank *rk, int32_t id)
{
  size_t mask = rk->stream_slots - 1, i = (size_t)dt_mix64((uint64_t)(uint32_t)id) & mask;
  while (rk->stream_slot[i] && rk->streams[rk->stream_slot[i] - 1].id != id)
    i = (i + 1) & mask;
  return i;
}

int dt_trace_stream(dt_trace *t, int32_t rank, int32_t stream_id, int create)
{
  dt_rank *rk = &t->ranks[rank];
  size_t slot = 0;
  if (rk->stream_slots) {
    slot = stream_slot_of(rk, stream_id);
    if (rk->stream_slot[slot])
      return rk->stream_slot[slot] - 1;
  } else {
    for (size_t s = 0; s < rk->nstreams; s++)
      if (rk->streams[s].id == stream_id)
        return (int)s;
  }
  if (!create)
    return -1;
  rk->streams = dt_grow(rk->streams, &rk->cap, rk->nstreams, sizeof *rk->streams);
  rk->streams[rk->nstreams].id = stream_id;
  int pos = (int)rk->nstreams++;
  if (rk->stream_slots && rk->nstreams * 2 <= rk->stream_slots) {
    rk->stream_slot[slot] = pos + 1;
  } else if (rk->nstreams > STREAM_SCAN_MAX) { /* (re)build the table at a load of at most 1/2 */
    size_t cap = 16;
    while (cap < rk->nstreams * 4)
      cap *= 2;
    free(rk->stream_slot);
    rk->stream_slot = dt_xcalloc(cap, sizeof *rk->stream_slot);
    rk->stream_slots = cap;
    for (size_t s = 0; s < rk->nstreams; s++)
      rk->stream_slot[stream_slot_of(rk, rk->streams[s].id)] = (int32_t)s + 1;
  }
  return pos;
}

dt_op *dt_trace_append(dt_trace *t, int32_t rank, int32_t stream_id)
{
  int pos = dt_trace_stream(t, rank, stream_id, 1); /* may move streams[]: index it only afterwards */
  dt_stream *st = &t->ranks[rank].streams[pos];
  st->ops = dt_grow(st->ops, &st->cap, st->nops, sizeof *st->ops);
  dt_op *op = &st->ops[st->nops++];
  memset(op, 0, sizeof *op);
  op->group = -1;
  op->peer = -1;
  op->batch = -1;
  op->match = -1;
  return op;
}

static void *dup_mem(const void *p, size_t n)
{
  if (!p || n == 0)
    return NULL;
  void *q = dt_xmalloc(n);
  memcpy(q, p, n);
  return q;
}

dt_op *dt_trace_append_copy(dt_trace *t, int32_t rank, int32_t stream_id, const dt_op *op)
{
  dt_op *o = dt_trace_append(t, rank, stream_id);
  *o = *op;
  o->deps = dup_mem(op->deps, sizeof *op->deps * op->ndeps);
  o->splits = dup_mem(op->splits, sizeof *op->splits * op->nsplits);
  o->kernels = dup_mem(op->kernels, sizeof *op->kernels * op->nkernels);
  o->name = dt_xstrdup(op->name); /* NULL stays NULL */
  o->dtype = dt_xstrdup(op->dtype);
  o->match = -1;
  return o;
}

/* ---- notes, at most DT_NOTES_PER_KIND of a kind ---- */

/* The kind of a note: FNV-1a of its text with every run of digits read as one '#' and every 'quoted name' as
 * '' (the parts that change between the notes of one call site). Never 0. */
static uint64_t note_key(const char *s, int meta)
{
  uint64_t h = 1469598103934665603ull ^ (uint64_t)meta;
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c >= '0' && c <= '9') {
      while (p[1] >= '0' && p[1] <= '9')
        p++;
      c = '#';
    } else if (c == '\'' && (p == s || !isalnum((unsigned char)p[-1]))) {
      const char *q = strchr(p + 1, '\'');
      if (q)
        p = q; /* the closing quote is hashed below */
    }
    h = (h ^ c) * 1099511628211ull;
  }
  return h ? h : 1;
}

static note_kind *note_kind_of(dt_trace *t, uint64_t key)
{
  struct dt_note_kinds *k = t->note_kinds;
  if (!k)
    k = t->note_kinds = dt_xcalloc(1, sizeof *k);
  if (2 * (k->n + 1) > k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 64;
    note_kind *slot = dt_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < k->cap; i++) {
      if (!k->slot[i].key)
        continue;
      size_t j = dt_mix64(k->slot[i].key) & (cap - 1);
      while (slot[j].key)
        j = (j + 1) & (cap - 1);
      slot[j] = k->slot[i];
    }
    free(k->slot);
    k->slot = slot;
    k->cap = cap;
  }
  size_t j = dt_mix64(key) & (k->cap - 1);
  while (k->slot[j].key && k->slot[j].key != key)
    j = (j + 1) & (k->cap - 1);
  if (!k->slot[j].key) {
    k->slot[j] = (note_kind){key, 0, 0, SIZE_MAX};
    k->n++;
  }
  return &k->slot[j];
}

/* The text of the closing note of a kind: "… and K more like "LAST"" (LAST cut at 120 bytes, on a UTF-8
 * character boundary). Owned by the caller. */
static char *more_text(uint64_t k, const char *last)
{
  size_t n = strlen(last);
  int cut = n > 120;
  if (cut) {
    n = 120;
    while (n > 0 && ((unsigned char)last[n] & 0xC0) == 0x80)
      n--;
  }
  char *s = dt_xmalloc(n + 96);
  snprintf(s, n + 96, "\u2026 and %" PRIu64 " more like \"%.*s%s\"", k, (int)n, last, cut ? "\u2026" : "");
  return s;
}

/* Counts one note of kind key; returns 1 when it is to be kept, else updates the kind's closing note (which
 * it appends, at the first one past the cap) and returns 0. notes/n: the array the kind lives in. */
static int note_admit(dt_trace *t, const char *text, int meta)
{
  uint64_t key = note_key(text, meta);
  struct dt_note_kinds *K = t->note_kinds;
  /* a new kind past DT_NOTE_KINDS_MAX is counted, not kept (closing notes, which a trace written and read back
   * brings as notes of their own, always are) */
  if (K && K->n >= DT_NOTE_KINDS_MAX && strncmp(text, "\u2026 and ", strlen("\u2026 and ")) != 0) {
    size_t j = dt_mix64(key) & (K->cap - 1);
    while (K->slot[j].key && K->slot[j].key != key)
      j = (j + 1) & (K->cap - 1);
    if (!K->slot[j].key) {
      char **arr = meta ? t->meta_values : t->notes;
      size_t *n = meta ? &t->nmeta : &t->nnotes;
      if (K->other_n[meta]++ == 0) {
        K->other_first[meta] = dt_xstrdup(text);
        K->other_at[meta] = *n;
        if (meta) {
          size_t cap = t->meta_cap;
          t->meta_keys = dt_grow(t->meta_keys, &cap, t->nmeta, sizeof *t->meta_keys);
          t->meta_values = dt_grow(t->meta_values, &t->meta_cap, t->nmeta, sizeof *t->meta_values);
          t->meta_keys[t->nmeta] = dt_xstrdup("note");
          arr = t->meta_values;
        } else {
          t->notes = dt_grow(t->notes, &t->notes_cap, t->nnotes, sizeof *t->notes);
          arr = t->notes;
        }
        arr[(*n)++] = NULL;
      }
      const char *first = K->other_first[meta];
      size_t len = strlen(first) > 120 ? 120 : strlen(first);
      while (len > 0 && len < strlen(first) && ((unsigned char)first[len] & 0xC0) == 0x80)
        len--;
      char *more = dt_xmalloc(len + 160);
      snprintf(more, len + 160, "\u2026 and %" PRIu64 " more notes of kinds past the first %d (the first of them: \"%.*s%s\")",
               K->other_n[meta], DT_NOTE_KINDS_MAX, (int)len, first, len < strlen(first) ? "\u2026" : "");
      free(arr[K->other_at[meta]]);
      arr[K->other_at[meta]] = more;
      return 0;
    }
  }
  note_kind *k = note_kind_of(t, key);
  if (++k->n <= DT_NOTES_PER_KIND) {
    k->last = meta ? t->nmeta : t->nnotes;
    return 1;
  }
  const char *last = meta ? t->meta_values[k->last] : t->notes[k->last];
  char *more = more_text(k->n - DT_NOTES_PER_KIND, last);
  if (k->more == SIZE_MAX) {
    k->more = meta ? t->nmeta : t->nnotes;
    if (meta) {
      size_t cap = t->meta_cap;
      t->meta_keys = dt_grow(t->meta_keys, &cap, t->nmeta, sizeof *t->meta_keys);
      t->meta_values = dt_grow(t->meta_values, &t->meta_cap, t->nmeta, sizeof *t->meta_values);
      t->meta_keys[t->nmeta] = dt_xstrdup("note");
      t->meta_values[t->nmeta++] = more;
    } else {
      t->notes = dt_grow(t->notes, &t->notes_cap, t->nnotes, sizeof *t->notes);
      t->notes[t->nnotes++] = more;
    }
  } else if (meta) {
    free(t->meta_values[k->more]);
    t->meta_values[k->more] = more;
  } else {
    free(t->notes[k->more]);
    t->notes[k->more] = more;
  }
  return 0;
}

void dt_trace_add_meta(dt_trace *t, const char *key, const char *value)
{
  if (strcmp(key, "note") == 0 && !note_admit(t, value, 1))
    return;
  size_t cap = t->meta_cap;
  t->meta_keys = dt_grow(t->meta_keys, &cap, t->nmeta, sizeof *t->meta_keys);
  t->meta_values = dt_grow(t->meta_values, &t->meta_cap, t->nmeta, sizeof *t->meta_values);
  t->meta_keys[t->nmeta] = dt_xstrdup(key);
  t->meta_values[t->nmeta] = dt_xstrdup(value);
  t->nmeta++;
}

void dt_trace_add_note(dt_trace *t, const char *fmt, ...)
{
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!note_admit(t, buf, 0))
    return;
  t->notes = dt_grow(t->notes, &t->notes_cap, t->nnotes, sizeof *t->notes);
  t->notes[t->nnotes++] = dt_xstrdup(buf);
}

int dt_trace_has_note(const dt_trace *t, const char *note)
{
  for (size_t i = 0; i < t->nnotes; i++)
    if (strcmp(t->notes[i], note) == 0)
      return 1;
  for (size_t m = 0; m < t->nmeta; m++)
    if (strcmp(t->meta_keys[m], "note") == 0 && strcmp(t->meta_values[m], note) == 0)
      return 1;
  return 0;
}

size_t dt_trace_op_count(const dt_trace *t)
{
  size_t n = 0;
  for (int32_t r = 0; r < t->nranks; r++)
    n += dt_trace_rank_op_count(t, r);
  return n;
}

size_t dt_trace_rank_op_count(const dt_trace *t, int32_t rank)
{
  const dt_rank *rk = dt_trace_rank_body(t, rank);
  size_t n = 0;
  for (size_t s = 0; s < rk->nstreams; s++)
    n += rk->streams[s].nops;
  return n;
}

/* ---------------------------------------------------------------------------------------------------------
 * Template ranks: a template user keeps no ops of its own; it reads its template's and maps groups and peers
 * on the fly, so a schedule shared by thousands of ranks is held once. */

int dt_trace_set_template(dt_trace *t, int32_t rank, int32_t template_rank, const int32_t *group_map,
                          dt_error *err)
{
  if (rank < 0 || rank >= t->nranks)
    return dt_error_set(err, "", 0, 0, "template user rank %d is out of range: the trace has %d ranks", (int)rank,
                        (int)t->nranks);
  if (template_rank < 0 || template_rank >= t->nranks)
    return dt_error_set(err, "", 0, 0, "template rank %d of rank %d is out of range: the trace has %d ranks",
                        (int)template_rank, (int)rank, (int)t->nranks);
  if (template_rank == rank)
    return dt_error_set(err, "", 0, 0, "rank %d cannot be its own template", (int)rank);
  if (t->ranks[template_rank].template_rank >= 0)
    return dt_error_set(err, "", 0, 0,
                        "rank %d cannot use rank %d as its template: rank %d runs the template of rank %d itself",
                        (int)rank, (int)template_rank, (int)template_rank, (int)t->ranks[template_rank].template_rank);
  dt_rank *rk = &t->ranks[rank];
  if (rk->nstreams > 0)
    return dt_error_set(err, "", 0, 0, "rank %d cannot run the template of rank %d: it already has ops", (int)rank,
                        (int)template_rank);
  if (group_map)
    for (size_t g = 0; g < t->ngroups; g++)
      if (group_map[g] < -1 || group_map[g] >= (int32_t)t->ngroups)
        return dt_error_set(err, "", 0, 0,
                            "group map of rank %d sends group '%s' to group index %d, which does not exist (the trace "
                            "has %zu groups)",
                            (int)rank, t->groups[g].name, (int)group_map[g], t->ngroups);
  free(rk->group_map);
  rk->group_map = NULL;
  rk->ngroup_map = 0;
  if (group_map && t->ngroups > 0) {
    rk->group_map = dt_xmalloc(t->ngroups * sizeof *rk->group_map);
    memcpy(rk->group_map, group_map, t->ngroups * sizeof *rk->group_map);
    rk->ngroup_map = t->ngroups;
  }
  rk->template_rank = template_rank;
  return DT_OK;
}

const dt_rank *dt_trace_rank_body(const dt_trace *t, int32_t rank)
{
  const dt_rank *rk = &t->ranks[rank];
  return rk->template_rank >= 0 ? &t->ranks[rk->template_rank] : rk;
}

int32_t dt_trace_op_group(const dt_trace *t, int32_t rank, const dt_op *op)
{
  if (op->group < 0)
    return -1;
  const dt_rank *rk = &t->ranks[rank];
  if (rk->template_rank < 0 || !rk->group_map || (size_t)op->group >= rk->ngroup_map)
    return op->group;
  return rk->group_map[op->group];
}

int32_t dt_trace_op_peer(const dt_trace *t, int32_t rank, const dt_op *op)
{
  if (op->peer < 0)
    return -1;
  const dt_rank *rk = &t->ranks[rank];
  if (rk->template_rank < 0)
    return op->peer;
  int64_t n = t->nranks;
  int64_t p = ((int64_t)rank + op->peer - rk->template_rank) % n;
  return (int32_t)(p < 0 ? p + n : p);
}

const char *dt_dim_name(dt_dim d)
{
  static const char *const names[DT_DIM_COUNT] = {"-", "TP", "PP", "DP", "EP", "SP", "CP"};
  return (unsigned)d < DT_DIM_COUNT ? names[d] : "?";
}

dt_dim dt_dim_from_group_name(const char *name)
{
  static const struct {
    const char *word;
    dt_dim dim;
  } words[] = {{"tp", DT_DIM_TP},       {"tensor", DT_DIM_TP},    {"pp", DT_DIM_PP},       {"pipeline", DT_DIM_PP},
               {"emb", DT_DIM_PP},      {"embedding", DT_DIM_PP}, {"dp", DT_DIM_DP},       {"data", DT_DIM_DP},
               {"edp", DT_DIM_DP},      {"zero", DT_DIM_DP},      {"ep", DT_DIM_EP},       {"expert", DT_DIM_EP},
               {"sp", DT_DIM_SP},       {"sequence", DT_DIM_SP},  {"cp", DT_DIM_CP},       {"context", DT_DIM_CP}};
  const char *s = name ? name : "";
  while (*s) {
    while (*s && !isalnum((unsigned char)*s))
      s++;
    const char *b = s;
    while (*s && isalnum((unsigned char)*s))
      s++;
    size_t len = (size_t)(s - b);
    while (len > 0 && isdigit((unsigned char)b[len - 1]))
      len--;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
      if (strlen(words[i].word) == len && strncasecmp(b, words[i].word, len) == 0)
        return words[i].dim;
  }
  return DT_DIM_NONE;
}

dt_dim dt_trace_p2p_dim(const dt_trace *t)
{
  if (t->p2p_dim != DT_DIM_NONE)
    return t->p2p_dim;
  for (size_t g = 0; g < t->ngroups; g++)
    if (t->groups[g].dim == DT_DIM_PP)
      return DT_DIM_PP;
  return DT_DIM_NONE;
}

const char *dt_trace_op_where(const dt_trace *t, const dt_op *op, char *buf, size_t size)
{
  const char *file = op->file < t->nfiles ? t->files[op->file] : "";
  if (op->event > 0)
    snprintf(buf, size, "%s%straceEvents[%u]", file, file[0] ? ": " : "", op->event - 1);
  else if (op->line > 0 && file[0])
    snprintf(buf, size, "%s:%u", file, op->line);
  else if (op->line > 0)
    snprintf(buf, size, "line %u", op->line);
  else if (size > 0)
    buf[0] = '\0';
  return buf;
}
