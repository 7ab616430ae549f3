/* DeepSpeed communication logger importer (`comms_logger` in the DeepSpeed config): the verbose lines
 * `comm op: <op> [| [Caller Func: f]] | time (ms): t | msg size: s | …` wherever they start, or, when a log has
 * none, the `log_summary` table. Only rank 0 logs, and no group, peer or dtype is logged: the world and group
 * sizes come from --world and --group-size, every rank runs rank 0's ops, and groups tile the world in
 * contiguous blocks. docs/import-deepspeed.md has the mappings. */
#include "dt_import_util.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dsop {
  dt_op_kind kind;
  char name[64];    /* DeepSpeed's op name */
  uint64_t bytes;
  uint64_t count;   /* summary rows stand for count calls; verbose lines for 1 */
  double time_s;    /* measured: this call's time, or the row's total */
  uint32_t line;
} dsop;

typedef struct ds {
  dsop *ops;
  size_t nops, cap;
  size_t nverbose, nsummary;
  char unknown[256];
  uint64_t nunknown, np2p, nsummary_ignored;
  char p2p[128];
} ds;

/* DeepSpeed's op names (deepspeed/comm/comm.py log names) -> our kinds; p2p names have no peer: other. */
static const struct {
  const char *name;
  dt_op_kind kind;
  int p2p;
} names[] = {{"all_reduce", DT_OP_ALLREDUCE, 0},
             {"all_reduce_coalesced", DT_OP_ALLREDUCE, 0},
             {"inference_all_reduce", DT_OP_ALLREDUCE, 0},
             {"all_gather", DT_OP_ALLGATHER, 0},
             {"all_gather_into_tensor", DT_OP_ALLGATHER, 0},
             {"all_gather_base", DT_OP_ALLGATHER, 0},
             {"allgather_fn", DT_OP_ALLGATHER, 0},
             {"reduce_scatter", DT_OP_REDUCESCATTER, 0},
             {"reduce_scatter_tensor", DT_OP_REDUCESCATTER, 0},
             {"reduce_scatter_base", DT_OP_REDUCESCATTER, 0},
             {"reduce_scatter_fn", DT_OP_REDUCESCATTER, 0},
             {"all_to_all_single", DT_OP_ALLTOALL, 0},
             {"all_to_all", DT_OP_ALLTOALL, 0},
             {"broadcast", DT_OP_BROADCAST, 0},
             {"broadcast_object_list", DT_OP_BROADCAST, 0},
             {"reduce", DT_OP_REDUCE, 0},
             {"barrier", DT_OP_BARRIER, 0},
             {"monitored_barrier", DT_OP_BARRIER, 0},
             {"send", DT_OP_OTHER, 1},
             {"recv", DT_OP_OTHER, 1},
             {"isend", DT_OP_OTHER, 1},
             {"irecv", DT_OP_OTHER, 1},
             {"batch_isend_irecv", DT_OP_OTHER, 1},
             {"gather", DT_OP_OTHER, 0},
             {"scatter", DT_OP_OTHER, 0}};

static int lookup(const char *name, int *p2p)
{
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, name) == 0) {
      *p2p = names[i].p2p;
      return (int)names[i].kind;
    }
  *p2p = 0;
  return -1;
}

/* "6.0 MB", "678.86 MB", "128.0 B", "0B": DeepSpeed's convert_size, powers of 1024 rounded to 2 decimals, into
 * bytes (rounded). Reads from s, sets *end past the size. Returns DT_OK, DT_ERR when s does not start with one, or
 * SIZE_TOO_LARGE (*end set) when it is above DT_BYTES_MAX, the most one op may move (infinity included). */
#define SIZE_TOO_LARGE (-2)
static int parse_size(const char *s, uint64_t *bytes, const char **end)
{
  while (*s == ' ')
    s++;
  char *e;
  double v = strtod(s, &e);
  if (e == s || isnan(v) || v < 0)
    return DT_ERR;
  s = e;
  while (*s == ' ')
    s++;
  static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int k = -1;
  for (int i = 5; i >= 0 && k < 0; i--) {
    size_t n = strlen(units[i]);
    if (strncmp(s, units[i], n) == 0 && (s[n] == '\0' || s[n] == ' ' || s[n] == '|'))
      k = i;
  }
  if (k < 0)
    return DT_ERR;
  double b = v * pow(1024.0, k);
  *end = s + strlen(units[k]);
  if (!(b <= (double)DT_BYTES_MAX))
    return SIZE_TOO_LARGE;
  *bytes = (uint64_t)llround(b);
  return DT_OK;
}

/* The error for a size parse_size found above DT_BYTES_MAX: its text (number and unit) and the limit. */
static int size_too_large(dt_error *err, const char *path, long line, const char *what, const char *text)
{
  while (*text == ' ')
    text++;
  char *e;
  strtod(text, &e);
  while (*e == ' ')
    e++;
  while (isalpha((unsigned char)*e))
    e++;
  return dt_error_set(err, path, line, 0, "%s '%.*s' is more than the %" PRIu64 " bytes (2^53) one op may move",
                      what, (int)(e - text), text, DT_BYTES_MAX);
}

static void add_op(ds *d, const char *name, uint64_t bytes, uint64_t count, double time_s, long line)
{
  int p2p;
  int kind = lookup(name, &p2p);
  d->ops = dt_grow(d->ops, &d->cap, d->nops, sizeof *d->ops);
  dsop *o = &d->ops[d->nops++];
  o->kind = kind < 0 ? DT_OP_OTHER : (dt_op_kind)kind;
  snprintf(o->name, sizeof o->name, "%s", name);
  o->bytes = bytes;
  o->count = count;
  o->time_s = time_s;
  o->line = (uint32_t)line;
  char *list = kind < 0 ? d->unknown : p2p ? d->p2p : NULL;
  size_t cap = kind < 0 ? sizeof d->unknown : sizeof d->p2p;
  if (kind < 0)
    d->nunknown += count;
  if (p2p)
    d->np2p += count;
  if (list) {
    char quoted[80];
    snprintf(quoted, sizeof quoted, "'%s'", name);
    if (!strstr(list, quoted) && strlen(list) + strlen(quoted) + 3 < cap)
      snprintf(list + strlen(list), cap - strlen(list), "%s%s", list[0] ? ", " : "", quoted);
  }
}

/* The op name: up to " | " or the end, trimmed. */
static int take_name(const char *s, char *out, size_t size)
{
  while (*s == ' ')
    s++;
  size_t n = 0;
  while (s[n] && s[n] != '|' && s[n] != ' ')
    n++;
  if (n == 0 || n >= size)
    return DT_ERR;
  memcpy(out, s, n);
  out[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)out[i]) && out[i] != '_' && out[i] != '.')
      return DT_ERR;
  return DT_OK;
}

/* A verbose line, from just after "comm op:". */
static int on_verbose(ds *d, const char *s, long line, const char *path, dt_error *err)
{
  char name[64];
  if (take_name(s, name, sizeof name) != DT_OK)
    return dt_error_set(err, path, line, 0, "'comm op:' without an op name (expected 'comm op: <op> | time (ms): "
                        "…')");
  const char *t = strstr(s, "time (ms):");
  const char *m = strstr(s, "msg size:");
  if (!t || !m)
    return dt_error_set(err, path, line, 0, "'comm op: %s' line without '%s'", name, t ? "msg size:" : "time (ms):");
  char *e;
  double ms = strtod(t + 10, &e);
  if (e == t + 10 || !isfinite(ms) || ms < 0) {
    const char *v = t + 10;
    while (*v == ' ')
      v++;
    return dt_error_set(err, path, line, 0, "'time (ms):' of %s: expected a non-negative number of milliseconds, "
                        "found '%.*s'", name, (int)strcspn(v, " |\r\n"), v);
  }
  uint64_t bytes;
  const char *end;
  int src = parse_size(m + 9, &bytes, &end);
  if (src == SIZE_TOO_LARGE) {
    char what[160];
    snprintf(what, sizeof what, "'msg size:' of %s", name);
    return size_too_large(err, path, line, what, m + 9);
  }
  if (src != DT_OK)
    return dt_error_set(err, path, line, 0, "'msg size:' of %s is '%.*s': expected a size such as '6.0 MB' or "
                        "'0B' (units B, KB, MB, GB, TB: powers of 1024)", name, (int)strcspn(m + 9, "|\r\n"), m + 9);
  add_op(d, name, bytes, 1, ms * 1e-3, line);
  d->nverbose++;
  return DT_OK;
}

/* Skips a launcher prefix: "[default0]:", "(Worker pid=1) ", "3: ". */
static const char *strip_prefix(const char *s)
{
  if (*s == '[') {
    const char *p = strstr(s, "]:");
    if (p)
      return p + 2;
  } else if (*s == '(') {
    const char *p = strstr(s, ") ");
    if (p)
      return p + 2;
  } else if (isdigit((unsigned char)*s)) {
    const char *p = s;
    while (isdigit((unsigned char)*p))
      p++;
    if (p[0] == ':' && p[1] == ' ')
      return p + 2;
  }
  return s;
}

/* A summary row: "<size> <count> <total ms> <avg ms> <tput> <busbw>" (20-character columns). */
static int summary_row(const char *s, uint64_t *bytes, uint64_t *count, double *total_ms)
{
  const char *p;
  int rc = parse_size(s, bytes, &p);
  if (rc != DT_OK)
    return rc; /* SIZE_TOO_LARGE is an error of the row; DT_ERR: not a row */
  char *e;
  while (*p == ' ')
    p++;
  if (!isdigit((unsigned char)*p))
    return DT_ERR;
  unsigned long long c = strtoull(p, &e, 10);
  if (e == p || *e != ' ')
    return DT_ERR;
  *count = c;
  p = e;
  *total_ms = strtod(p, &e);
  if (e == p || !isfinite(*total_ms) || *total_ms < 0)
    return DT_ERR;
  for (int i = 0; i < 3; i++) { /* avg latency, tput, busbw: read, not used */
    p = e;
    strtod(p, &e);
    if (e == p)
      return DT_ERR;
  }
  while (*e == ' ')
    e++;
  return *e ? DT_ERR : DT_OK;
}

static int parse(ds *d, const char *path, dt_error *err)
{
  dt_lines l;
  if (dt_lines_open(&l, path, err) != DT_OK)
    return DT_ERR;
  int rc, in_table = 0;
  char op[64] = "";
  /* summary rows are kept apart: they are used only when the log has no verbose line */
  ds sum;
  memset(&sum, 0, sizeof sum);
  while ((rc = dt_lines_next(&l, err)) == 1) {
    const char *c = strstr(l.buf, "comm op:");
    if (c) {
      in_table = 0;
      if (on_verbose(d, c + 8, l.lineno, path, err) != DT_OK) {
        rc = DT_ERR;
        break;
      }
      continue;
    }
    const char *s = strip_prefix(l.buf);
    if (strstr(s, "Comm. Op") && strstr(s, "Message Size")) {
      in_table = 1;
      op[0] = '\0';
      continue;
    }
    if (!in_table)
      continue;
    const char *p = s;
    while (*p == ' ' || *p == '\t')
      p++;
    if (!*p)
      continue;
    uint64_t bytes, count;
    double total_ms;
    int row = p != s ? summary_row(p, &bytes, &count, &total_ms) : DT_ERR;
    if (row == SIZE_TOO_LARGE) { /* a row, not the table's end: refused, never dropped */
      char what[160];
      snprintf(what, sizeof what, "the message size of a summary row of %s", op[0] ? op : "an unnamed op");
      rc = size_too_large(err, path, l.lineno, what, p);
      break;
    }
    if (row == DT_OK) {
      if (!op[0]) {
        rc = dt_error_set(err, path, l.lineno, 0, "summary row before any op name");
        break;
      }
      sum.nsummary += count;
      if (count > 100000000 || sum.nsummary > 100000000) {
        rc = dt_error_set(err, path, l.lineno, 0, "summary rows add up to more than 1e8 calls (found a count of %"
                          PRIu64 "): too many to replay one by one", count);
        break;
      }
      add_op(&sum, op, bytes, count, total_ms * 1e-3, l.lineno);
    } else if (p == s && take_name(p, op, sizeof op) == DT_OK) {
      /* an op name alone, maybe followed by " | [Caller Func: f]" */
    } else if (strstr(s, "straggler") || strstr(s, "____") || strstr(s, "----")) {
      in_table = 0; /* the straggler breakdown repeats the ops: not read */
    } else {
      in_table = 0;
    }
  }
  dt_lines_close(&l);
  if (rc != DT_ERR) {
    if (d->nverbose == 0) {
      free(d->ops);
      *d = sum;
    } else {
      for (size_t i = 0; i < sum.nops; i++)
        d->nsummary_ignored += sum.ops[i].count;
      free(sum.ops);
    }
    rc = DT_OK;
  } else {
    free(sum.ops);
  }
  return rc;
}

/* Group size of an op: --group-size for its DeepSpeed name, then its kind's name, then "p2p" for point-to-point
 * names, then "all", else the world (point-to-point: 2). */
static int32_t group_size(const dt_import_opts *o, const dsop *op, int p2p, int32_t world, unsigned char *used)
{
  const char *kind = dt_op_kind_name(op->kind);
  const char *tries[4] = {op->name, op->kind == DT_OP_OTHER ? NULL : kind, p2p ? "p2p" : NULL, "all"};
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; tries[t] && i < o->ngroup_sizes; i++)
      if (strcmp(o->group_sizes[i].kind, tries[t]) == 0) {
        used[i] = 1;
        return o->group_sizes[i].n;
      }
  return p2p ? 2 : world;
}

/* 1 when KIND of --group-size KIND=N can ever match: a DeepSpeed op name this importer knows or the log has
 * (ops it does not know are kept as 'other' under their name), a dtsim op kind, "p2p" or "all". A misspelt KIND
 * would otherwise be ignored and its ops run on the whole world. */
static int known_group_kind(const char *kind, const ds *d)
{
  int p2p;
  if (lookup(kind, &p2p) >= 0 || strcmp(kind, "p2p") == 0 || strcmp(kind, "all") == 0)
    return 1;
  for (size_t i = 0; i < d->nops; i++)
    if (strcmp(kind, d->ops[i].name) == 0)
      return 1;
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (k != DT_OP_OTHER && strcmp(kind, dt_op_kind_name((dt_op_kind)k)) == 0)
      return 1;
  return 0;
}

int dt_deepspeed_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                        dt_error *err)
{
  *out = NULL;
  if (npaths != 1)
    return dt_error_set(err, paths[1], 0, 0, "a DeepSpeed comms log is rank 0's alone: give one file, got %zu",
                        npaths);
  if (opts->world <= 0)
    return dt_error_set(err, paths[0], 0, 0, "a DeepSpeed comms log is rank 0's only and names no world size: give "
                        "it with --world N (and --group-size KIND=N for ops on smaller groups)");
  ds d;
  memset(&d, 0, sizeof d);
  if (parse(&d, paths[0], err) != DT_OK) {
    free(d.ops);
    return DT_ERR;
  }
  if (d.nops == 0) {
    free(d.ops);
    return dt_error_set(err, paths[0], 0, 0, "no 'comm op:' line and no summary table: expected a DeepSpeed log "
                        "written with comms_logger enabled (verbose: true, or comm.log_summary())");
  }
  int32_t world = opts->world;
  for (size_t i = 0; i < opts->ngroup_sizes; i++)
    if (!known_group_kind(opts->group_sizes[i].kind, &d))
      return free(d.ops), dt_error_set(err, paths[0], 0, 0, "--group-size %s=%d: '%s' is no op this importer knows: "
                                       "expected a DeepSpeed op name (all_reduce, all_gather_into_tensor, …), a "
                                       "dtsim op kind (allreduce, allgather, reducescatter, alltoall, broadcast, …), "
                                       "'p2p' or 'all'", opts->group_sizes[i].kind, (int)opts->group_sizes[i].n,
                                       opts->group_sizes[i].kind);
  /* every group size must tile the world */
  for (size_t i = 0; i < opts->ngroup_sizes; i++)
    if (opts->group_sizes[i].n > world || world % opts->group_sizes[i].n)
      return free(d.ops), dt_error_set(err, paths[0], 0, 0, "--group-size %s=%d does not divide --world %d: groups "
                                       "of contiguous ranks must tile the world", opts->group_sizes[i].kind,
                                       (int)opts->group_sizes[i].n, (int)world);
  dt_trace *t = dt_trace_new(world);
  uint32_t fi = dt_trace_add_file(t, paths[0]);
  /* groups: for each size used, its tiles {k·g … k·g+g−1}; rank 0's is tile 0 */
  int32_t sizes[64];
  int32_t first_group[64];
  size_t nsizes = 0;
  int32_t *ranks = dt_xmalloc((size_t)world * sizeof *ranks);
  int32_t *op_group = dt_xmalloc(d.nops * sizeof *op_group);
  unsigned char gs_used[DT_IMPORT_MAX_GROUP_SIZES] = {0};
  int rc = DT_OK;
  for (size_t i = 0; i < d.nops && rc == DT_OK; i++) {
    int p2p;
    lookup(d.ops[i].name, &p2p);
    int32_t g = group_size(opts, &d.ops[i], p2p, world, gs_used);
    if (g > world || world % g) {
      rc = dt_error_set(err, paths[0], d.ops[i].line, 0, "%s on groups of %d ranks do not tile --world %d",
                        d.ops[i].name, (int)g, (int)world);
      break;
    }
    size_t k = 0;
    while (k < nsizes && sizes[k] != g)
      k++;
    if (k == nsizes) {
      if (nsizes == 64) {
        rc = dt_error_set(err, paths[0], 0, 0, "more than 64 group sizes");
        break;
      }
      sizes[nsizes] = g;
      first_group[nsizes] = (int32_t)t->ngroups;
      for (int32_t tile = 0; tile < world / g && rc == DT_OK; tile++) {
        char name[48];
        for (int32_t j = 0; j < g; j++)
          ranks[j] = tile * g + j;
        if (g == world)
          snprintf(name, sizeof name, "world");
        else
          snprintf(name, sizeof name, "g%d_%d", (int)g, (int)tile);
        if (dt_trace_add_group(t, name, ranks, (size_t)g, fi, 0, err) < 0)
          rc = DT_ERR;
      }
      nsizes++;
    }
    op_group[i] = first_group[k];
  }
  double gap = opts->compute_gap_s > 0 ? opts->compute_gap_s : 0;
  uint64_t ncalls = 0;
  for (size_t i = 0; i < d.nops && rc == DT_OK; i++) {
    const dsop *o = &d.ops[i];
    for (uint64_t c = 0; c < o->count; c++) {
      if (gap > 0) {
        dt_op *g = dt_trace_append(t, 0, 0);
        g->kind = DT_OP_COMPUTE;
        g->dur = gap;
        g->file = fi;
        g->line = o->line;
      }
      dt_op *op = dt_trace_append(t, 0, 0);
      op->kind = o->kind;
      op->group = op_group[i];
      op->bytes = o->kind == DT_OP_BARRIER ? 0 : o->bytes;
      op->file = fi;
      op->line = o->line;
      op->name = dt_xstrdup(o->name);
      ncalls++;
    }
    t->measured_n[o->kind] += o->count;
    t->measured_s[o->kind] += o->time_s;
  }
  /* ranks 1 … world−1 run rank 0's ops on their own tiles */
  int32_t *map = dt_xmalloc((t->ngroups ? t->ngroups : 1) * sizeof *map);
  for (int32_t r = 1; r < world && rc == DT_OK; r++) {
    for (size_t k = 0; k < nsizes; k++) {
      int32_t ntiles = world / sizes[k];
      for (int32_t tile = 0; tile < ntiles; tile++)
        map[first_group[k] + tile] = first_group[k] + (tile + r / sizes[k]) % ntiles;
    }
    rc = dt_trace_set_template(t, r, 0, map, err);
  }
  free(map);
  free(ranks);
  free(op_group);
  if (rc == DT_OK) {
    dt_trace_add_meta(t, "source", paths[0]);
    dt_trace_add_meta(t, "format", "deepspeed");
    t->measured_what = "DeepSpeed comms logger time on rank 0 (includes waiting for peers)";
    if (d.nverbose)
      dt_trace_add_note(t, "deepspeed: %zu verbose 'comm op:' lines imported in log order%s", d.nverbose,
                        d.nsummary_ignored ? "; the summary table is not used (the verbose lines give the order)"
                                           : "");
    else
      dt_trace_add_note(t, "deepspeed: no verbose lines: %" PRIu64 " calls from %zu summary rows, in the table's "
                        "order (op by op, sizes ascending), not the run's", ncalls, d.nops);
    char buf[512] = "";
    for (size_t k = 0; k < nsizes; k++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", k ? ", " : "", (int)sizes[k]);
    dt_trace_add_note(t, "deepspeed: the log is rank 0's only: world of %d ranks from --world; every rank runs rank "
                      "0's ops; groups of %s contiguous ranks tile the world (--group-size)", (int)world, buf);
    dt_trace_add_note(t, "deepspeed: msg sizes are rounded by DeepSpeed to two decimals of B/KB/MB/GB (powers of "
                      "1024): bytes are exact to within 0.005 of the unit");
    if (gap > 0)
      dt_trace_add_note(t, "deepspeed: the log has no compute: %.9g s of compute (--compute-gap) before every call",
                        gap);
    else
      dt_trace_add_note(t, "deepspeed: the log has no compute: none between calls (give --compute-gap TIME for "
                        "some); the simulated time is communication only");
    for (size_t i = 0; i < opts->ngroup_sizes; i++)
      if (!gs_used[i])
        dt_trace_add_note(t, "deepspeed: warning: --group-size %s=%d matched no call of the log (or an earlier, "
                          "more specific --group-size did)", opts->group_sizes[i].kind, (int)opts->group_sizes[i].n);
    if (d.np2p)
      dt_trace_add_note(t, "deepspeed: warning: %" PRIu64 " point-to-point calls (%s) name no peer: kept as opaque "
                        "'other' collectives of their size on groups of 2 contiguous ranks (--group-size p2p=N)",
                        d.np2p, d.p2p);
    if (d.nunknown)
      dt_trace_add_note(t, "deepspeed: warning: %" PRIu64 " calls of ops dtsim does not know (%s) kept as opaque "
                        "'other' collectives (replayed as an all-reduce of their size)", d.nunknown, d.unknown);
    for (int k = 0; k < DT_OP_COUNT; k++)
      if (t->measured_n[k])
        dt_trace_add_note(t, "deepspeed: measured %s: %" PRIu64 " calls, mean %.6g ms on rank 0 (measured, not used "
                          "as cost)", dt_op_kind_name((dt_op_kind)k), t->measured_n[k],
                          1e3 * t->measured_s[k] / (double)t->measured_n[k]);
    dt_import_note_assumptions(t, "deepspeed");
    *out = t;
  } else {
    dt_trace_free(t);
  }
  free(d.ops);
  return rc;
}
