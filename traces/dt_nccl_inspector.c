/* NCCL Inspector importer (NCCL's profiler plugin, plugins/profiler/inspector/ in NVIDIA/nccl 2.28+): one log per
 * process (`<host>-pid<pid>.log`), a stream of JSON records, one per completed collective or point-to-point
 * operation per communicator: {"header": {id, comm_name, rank, n_ranks, nnodes}, "metadata": {…, hostname, pid},
 * "coll_perf": {coll, coll_sn, coll_msg_size_bytes, coll_exec_time_us, coll_timing_source, …} or "p2p_perf":
 * {p2p, p2p_sn, p2p_peer, p2p_msg_size_bytes, p2p_exec_time_us, …}}. Streamed with yajl's SAX parser through
 * zlib. Communicators are grouped by header id, global ranks come from each process's largest communicator,
 * operations are ordered per communicator by their sequence number; the measured times are kept per op kind for
 * the report, never as cost. docs/import-nccl-inspector.md. */
#include "dt_import_util.h"

#include "../common/dt_json.h"
#include "../common/dt_util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

typedef struct rec {
  int32_t proc;
  int32_t comm;      /* index in comms */
  int32_t crank;     /* the process's rank in the communicator */
  int p2p;
  dt_op_kind kind;
  uint64_t sn;
  uint64_t bytes;    /* NCCL's count × type size */
  int32_t peer;      /* p2p: communicator rank */
  double exec_s;
  int timing;        /* 0 kernel_gpu, 1 kernel_cpu, 2 collective_cpu, 3 other */
  uint32_t file;
  uint64_t offset;   /* byte offset of the record */
} rec;

typedef struct icomm {
  char *id;
  char *name;
  int32_t nranks;
  int32_t *member;   /* process by communicator rank, -1 unseen */
  int32_t group;
} icomm;

typedef struct iproc {
  char *key;         /* hostname:pid */
  int32_t *seen;     /* (communicator, rank) pairs of its records, 2 entries each */
  size_t nseen, seencap;
  int32_t world;     /* largest communicator */
  int32_t rank;
  uint32_t file;
} iproc;

/* What the SAX parser is inside. */
enum { SEC_NONE, SEC_HEADER, SEC_META, SEC_COLL, SEC_P2P };

typedef struct ins {
  const char *path;
  uint32_t file;
  int depth;
  int section;
  char key[64];
  /* the record being read */
  char id[96], comm_name[96], host[128], op[32], timing[32], version[32];
  int64_t rank, nranks, pid, sn, peer;
  uint64_t bytes;
  double exec_us;
  int has_id, has_rank, has_nranks, has_sn, has_bytes, has_op, has_exec, has_peer;
  uint64_t rec_offset;
  yajl_handle h;
  char bad[512];
  uint64_t base;        /* bytes before the chunk being parsed: callbacks add it to yajl's offset */
  uint64_t key_at[16];  /* byte after each read key of the open record (0-7) and section (8-15), 0: not given */
  uint64_t deep_at; /* nesting past DT_JSON_MAX_DEPTH: 1 + the bracket's offset in the chunk, 0 when not */
  /* results */
  rec *recs;
  size_t nrecs, rcap;
  icomm *comms;
  size_t ncomms, ccap;
  iproc *procs;
  size_t nprocs, pcap;
  uint64_t unknown;
  char unknown_names[160];
  char versions[128];
  dt_strtab proc_index, comm_index; /* key -> procs[], header id -> comms[] (the same numbering) */
} ins;

static void reset_record(ins *x)
{
  x->id[0] = x->comm_name[0] = x->host[0] = x->op[0] = x->timing[0] = '\0';
  x->rank = x->nranks = x->pid = x->sn = x->peer = -1;
  x->bytes = 0;
  x->exec_us = 0;
  x->has_id = x->has_rank = x->has_nranks = x->has_sn = x->has_bytes = x->has_op = x->has_exec = x->has_peer = 0;
}

static int32_t find_proc(ins *x, const char *key)
{
  int32_t found = dt_strtab_intern(&x->proc_index, key, strlen(key));
  if ((size_t)found < x->nprocs)
    return found;
  x->procs = dt_grow(x->procs, &x->pcap, x->nprocs, sizeof *x->procs);
  iproc *p = &x->procs[x->nprocs];
  p->key = dt_xstrdup(key);
  p->seen = NULL;
  p->nseen = p->seencap = 0;
  p->world = -1;
  p->rank = -1;
  p->file = x->file;
  return (int32_t)x->nprocs++;
}

static const struct {
  const char *name;
  dt_op_kind kind;
} kinds[] = {{"AllReduce", DT_OP_ALLREDUCE}, {"AllGather", DT_OP_ALLGATHER}, {"ReduceScatter", DT_OP_REDUCESCATTER},
             {"Broadcast", DT_OP_BROADCAST}, {"Reduce", DT_OP_REDUCE},       {"AlltoAll", DT_OP_ALLTOALL},
             {"Send", DT_OP_SEND},           {"Recv", DT_OP_RECV}};

/* A record is complete: checks it and keeps it. Returns 0 to stop the parser (x->bad set). */
static int finish_record(ins *x)
{
  if (x->section != SEC_COLL && x->section != SEC_P2P && !x->has_op) {
    snprintf(x->bad, sizeof x->bad, "a record without coll_perf or p2p_perf: not an NCCL Inspector record");
    return 0;
  }
  const char *miss = !x->has_id ? "header.id" : !x->has_rank ? "header.rank" : !x->has_nranks ? "header.n_ranks"
                     : !x->has_op ? "the op name" : !x->has_sn ? "the sequence number" : !x->has_bytes ? "the message size"
                     : NULL;
  if (miss) {
    snprintf(x->bad, sizeof x->bad, "an Inspector record without %s", miss);
    return 0;
  }
  if (x->nranks < 1 || x->nranks > DT_TRACE_MAX_RANKS || x->rank < 0 || x->rank >= x->nranks) {
    snprintf(x->bad, sizeof x->bad, "header rank %" PRId64 " of n_ranks %" PRId64 ": expected 0 <= rank < n_ranks",
             x->rank, x->nranks);
    return 0;
  }
  char key[200];
  snprintf(key, sizeof key, "%s:%" PRId64, x->host[0] ? x->host : x->path, x->pid);
  int32_t pi = find_proc(x, key);
  size_t ci = (size_t)dt_strtab_intern(&x->comm_index, x->id, strlen(x->id));
  if (ci == x->ncomms) {
    x->comms = dt_grow(x->comms, &x->ccap, x->ncomms, sizeof *x->comms);
    icomm *c = &x->comms[x->ncomms++];
    c->id = dt_xstrdup(x->id);
    c->name = dt_xstrdup(x->comm_name);
    c->nranks = (int32_t)x->nranks;
    c->member = dt_xmalloc((size_t)x->nranks * sizeof *c->member);
    for (int32_t r = 0; r < c->nranks; r++)
      c->member[r] = -1;
    c->group = -1;
  }
  icomm *c = &x->comms[ci];
  if (c->nranks != x->nranks) {
    snprintf(x->bad, sizeof x->bad, "communicator %s has %" PRId64 " ranks here but %d in an earlier record", x->id,
             x->nranks, (int)c->nranks);
    return 0;
  }
  if (c->member[x->rank] >= 0 && c->member[x->rank] != pi) {
    snprintf(x->bad, sizeof x->bad, "communicator %s rank %" PRId64 " is in the records of two processes (%s and %s)",
             x->id, x->rank, x->procs[c->member[x->rank]].key, key);
    return 0;
  }
  c->member[x->rank] = pi;
  iproc *p = &x->procs[pi];
  /* one process, one rank per communicator: a process driving several GPUs writes records that do not say which
   * GPU they are from */
  size_t s = 0;
  while (s < p->nseen && p->seen[2 * s] != (int32_t)ci)
    s++;
  if (s == p->nseen) {
    p->seen = dt_grow(p->seen, &p->seencap, 2 * p->nseen + 1, sizeof *p->seen);
    p->seen[2 * s] = (int32_t)ci;
    p->seen[2 * s + 1] = (int32_t)x->rank;
    p->nseen++;
  } else if (p->seen[2 * s + 1] != (int32_t)x->rank) {
    snprintf(x->bad, sizeof x->bad, "process %s has records of ranks %d and %" PRId64 " of communicator %s: a "
             "process driving several GPUs, whose records do not say which GPU they are from (not supported: run one "
             "process per GPU)", key, (int)p->seen[2 * s + 1], x->rank, x->id);
    return 0;
  }
  if (p->world < 0 || x->comms[p->world].nranks < c->nranks)
    p->world = (int32_t)ci;
  int k = -1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(kinds[i].name, x->op) == 0)
      k = (int)kinds[i].kind;
  int p2p = x->section == SEC_P2P;
  if (p2p && k != DT_OP_SEND && k != DT_OP_RECV)
    k = -1; /* "SendRecv" and the like: no direction */
  if (k < 0) {
    x->unknown++;
    char q[40];
    snprintf(q, sizeof q, "'%.30s'", x->op);
    if (!strstr(x->unknown_names, q) && strlen(x->unknown_names) + strlen(q) + 3 < sizeof x->unknown_names)
      snprintf(x->unknown_names + strlen(x->unknown_names), sizeof x->unknown_names - strlen(x->unknown_names), "%s%s",
               x->unknown_names[0] ? ", " : "", q);
    if (p2p)
      return 1; /* a p2p record with no direction cannot be paired: counted and left out */
    k = DT_OP_OTHER;
  }
  if (p2p && (!x->has_peer || x->peer < 0 || x->peer >= x->nranks)) {
    snprintf(x->bad, sizeof x->bad, "%s record with p2p_peer %" PRId64 " on a communicator of %" PRId64 " ranks",
             x->op, x->peer, x->nranks);
    return 0;
  }
  x->recs = dt_grow(x->recs, &x->rcap, x->nrecs, sizeof *x->recs);
  rec *r = &x->recs[x->nrecs++];
  r->proc = pi;
  r->comm = (int32_t)ci;
  r->crank = (int32_t)x->rank;
  r->p2p = p2p;
  r->kind = (dt_op_kind)k;
  r->sn = (uint64_t)x->sn;
  r->bytes = x->bytes;
  r->peer = (int32_t)x->peer;
  r->exec_s = x->exec_us * 1e-6;
  r->timing = strcmp(x->timing, "kernel_gpu") == 0 ? 0 : strcmp(x->timing, "kernel_cpu") == 0 ? 1
              : strcmp(x->timing, "collective_cpu") == 0 ? 2 : 3;
  r->file = x->file;
  r->offset = x->rec_offset;
  if (x->version[0] && !strstr(x->versions, x->version) && strlen(x->versions) + strlen(x->version) + 3 < sizeof x->versions)
    snprintf(x->versions + strlen(x->versions), sizeof x->versions - strlen(x->versions), "%s%s",
             x->versions[0] ? ", " : "", x->version);
  return 1;
}

/* ---- SAX callbacks ---- */

static void copy_str(char *dst, size_t cap, const char *v)
{
  size_t n = strlen(v);
  if (n >= cap)
    n = cap - 1;
  memcpy(dst, v, n);
  dst[n] = '\0';
}

static int on_value(ins *x, const char *s, size_t len, int is_string)
{
  if (x->depth != 2)
    return 1;
  const char *k = x->key;
  char v[128];
  size_t n = len < sizeof v - 1 ? len : sizeof v - 1;
  memcpy(v, s, n);
  v[n] = '\0';
  char *end;
  switch (x->section) {
  case SEC_HEADER:
    if (strcmp(k, "id") == 0) {
      copy_str(x->id, sizeof x->id, v);
      x->has_id = 1;
    } else if (strcmp(k, "comm_name") == 0) {
      copy_str(x->comm_name, sizeof x->comm_name, v);
    } else if ((strcmp(k, "rank") == 0 || strcmp(k, "n_ranks") == 0) && !is_string) {
      long long r = strtoll(v, &end, 10);
      if (*end)
        return snprintf(x->bad, sizeof x->bad, "header.%s is '%s': expected an integer", k, v), 0;
      if (k[0] == 'r') {
        x->rank = r;
        x->has_rank = 1;
      } else {
        x->nranks = r;
        x->has_nranks = 1;
      }
    }
    break;
  case SEC_META:
    if (strcmp(k, "hostname") == 0)
      copy_str(x->host, sizeof x->host, v);
    else if (strcmp(k, "pid") == 0 && !is_string)
      x->pid = strtoll(v, NULL, 10);
    else if (strcmp(k, "inspector_output_format_version") == 0)
      copy_str(x->version, sizeof x->version, v);
    break;
  case SEC_COLL:
  case SEC_P2P: {
    const char *f = k + (x->section == SEC_COLL ? 5 : 4); /* past "coll_" / "p2p_" */
    if (strncmp(k, x->section == SEC_COLL ? "coll_" : "p2p_", x->section == SEC_COLL ? 5 : 4) != 0) {
      if ((strcmp(k, "coll") == 0 || strcmp(k, "p2p") == 0) && is_string) {
        copy_str(x->op, sizeof x->op, v);
        x->has_op = 1;
      }
      break;
    }
    if (strcmp(f, "sn") == 0 || strcmp(f, "msg_size_bytes") == 0 || strcmp(f, "peer") == 0) {
      if (is_string || (v[0] == '-' && strcmp(f, "peer") != 0))
        return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected a non-negative integer", k, v), 0;
      uint64_t u = UINT64_MAX;
      int whole = v[0] == '-' ? 0 : dt_parse_whole_u64(v, UINT64_MAX, &u); /* -2: past 64 bits, u stays the max */
      if (v[0] == '-') {
        x->peer = strtoll(v, NULL, 10);
        x->has_peer = 1;
      } else if (whole == -1) {
        return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected an integer", k, v), 0;
      } else if (f[0] == 's') {
        if (u > INT64_MAX) /* kept whole: two numbers past 2^63 would otherwise become one */
          return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected a whole number from 0 to %" PRId64, k, v,
                          INT64_MAX), 0;
        x->sn = (int64_t)u;
        x->has_sn = 1;
      } else if (f[0] == 'm') {
        if (u > DT_TRACE_MAX_BYTES)
          return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected a byte count from 0 to %" PRIu64 " (2^53, the "
                          "most one op may move)", k, v, DT_TRACE_MAX_BYTES), 0;
        x->bytes = u;
        x->has_bytes = 1;
      } else {
        if (u > INT32_MAX)
          return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected a rank from 0 to %d", k, v, INT32_MAX), 0;
        x->peer = (int64_t)u;
        x->has_peer = 1;
      }
    } else if (strcmp(f, "exec_time_us") == 0 && !is_string) {
      double d = strtod(v, &end);
      if (*end || !isfinite(d) || d < 0)
        return snprintf(x->bad, sizeof x->bad, "%s is '%s': expected microseconds", k, v), 0;
      x->exec_us = d;
      x->has_exec = 1;
    } else if (strcmp(f, "timing_source") == 0) {
      copy_str(x->timing, sizeof x->timing, v);
    }
    break;
  }
  default:
    break;
  }
  return 1;
}

static int cb_null(void *ctx)
{
  return on_value(ctx, "", 0, 0);
}
static int cb_bool(void *ctx, int b)
{
  return on_value(ctx, b ? "1" : "0", 1, 0);
}
static int cb_number(void *ctx, const char *s, size_t len)
{
  return on_value(ctx, s, len, 0);
}
static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
  return on_value(ctx, (const char *)s, len, 1);
}
/* The keys dtsim reads: a record's sections (depth 1) and each section's fields (depth 2, by section). */
static const char *const read_keys[][7] = {
    [SEC_NONE] = {"header", "metadata", "coll_perf", "p2p_perf"},
    [SEC_HEADER] = {"id", "comm_name", "rank", "n_ranks"},
    [SEC_META] = {"hostname", "pid", "inspector_output_format_version"},
    [SEC_COLL] = {"coll", "coll_sn", "coll_msg_size_bytes", "coll_exec_time_us", "coll_timing_source"},
    [SEC_P2P] = {"p2p", "p2p_sn", "p2p_peer", "p2p_msg_size_bytes", "p2p_exec_time_us", "p2p_timing_source"},
};

/* A key dtsim reads given twice in one object is refused, with both byte offsets: which one is meant is unknown
 * (the second overwrote the first). Sections are told apart at depth 1; their fields at depth 2. */
static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
  ins *x = ctx;
  size_t n = len < sizeof x->key - 1 ? len : sizeof x->key - 1;
  memcpy(x->key, s, n);
  x->key[n] = '\0';
  if (x->depth != 1 && (x->depth != 2 || x->section == SEC_NONE))
    return 1;
  int sec = x->depth == 1 ? SEC_NONE : x->section;
  for (int i = 0; i < 7 && read_keys[sec][i]; i++)
    if (strlen(read_keys[sec][i]) == len && memcmp(read_keys[sec][i], s, len) == 0) {
      int slot = (x->depth - 1) * 8 + i;
      uint64_t at = x->base + (uint64_t)yajl_get_bytes_consumed(x->h);
      if (x->key_at[slot]) {
        snprintf(x->bad, sizeof x->bad, "key '%s' given twice in %s%s%s: first ending at byte %" PRIu64 ", again "
                 "ending at byte %" PRIu64 " (dtsim reads each key it uses once per object)", read_keys[sec][i],
                 x->depth == 1 ? "a record" : "'", x->depth == 1 ? "" : read_keys[SEC_NONE][sec - 1],
                 x->depth == 1 ? "" : "'", x->key_at[slot], at);
        return 0;
      }
      x->key_at[slot] = at;
      break;
    }
  return 1;
}
/* One more level of nesting, refused past DT_JSON_MAX_DEPTH (the bracket is the byte before the parser's
 * position; the reader adds the chunk's offset). */
static int open_level(ins *x)
{
  if (x->depth >= DT_JSON_MAX_DEPTH) {
    x->deep_at = (uint64_t)yajl_get_bytes_consumed(x->h);
    return 0;
  }
  x->depth++;
  return 1;
}

static int cb_start_map(void *ctx)
{
  ins *x = ctx;
  if (x->depth == 0) {
    reset_record(x);
    memset(x->key_at, 0, sizeof x->key_at);
    x->section = SEC_NONE;
    x->rec_offset = (uint64_t)yajl_get_bytes_consumed(x->h); /* within the current chunk; fixed up by the reader */
  } else if (x->depth == 1) {
    x->section = strcmp(x->key, "header") == 0 ? SEC_HEADER : strcmp(x->key, "metadata") == 0 ? SEC_META
                 : strcmp(x->key, "coll_perf") == 0 ? SEC_COLL : strcmp(x->key, "p2p_perf") == 0 ? SEC_P2P : SEC_NONE;
    memset(x->key_at + 8, 0, 8 * sizeof x->key_at[0]);
  }
  return open_level(x);
}
static int cb_end_map(void *ctx)
{
  ins *x = ctx;
  x->depth--;
  if (x->depth == 1 && (x->section == SEC_COLL || x->section == SEC_P2P))
    return 1; /* keep the section: the record ends at depth 0 */
  if (x->depth == 0)
    return finish_record(x);
  return 1;
}
static int cb_start_array(void *ctx)
{
  ins *x = ctx;
  if (x->depth == 0)
    return snprintf(x->bad, sizeof x->bad, "a JSON array at the top level: expected one object per record"), 0;
  return open_level(x);
}
static int cb_end_array(void *ctx)
{
  ((ins *)ctx)->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {cb_null,      cb_bool, NULL,       NULL,         cb_number, cb_string,
                                         cb_start_map, cb_key,  cb_end_map, cb_start_array, cb_end_array};

static int parse_file(ins *x, dt_error *err)
{
  gzFile f = gzopen(x->path, "rb");
  if (!f)
    return dt_error_set(err, x->path, 0, 0, "cannot open");
  x->h = yajl_alloc(&callbacks, NULL, x);
  yajl_config(x->h, yajl_allow_multiple_values, 1);
  x->depth = 0;
  enum { CHUNK = 1 << 20 };
  unsigned char *buf = dt_xmalloc(CHUNK);
  uint64_t base = 0;
  int rc = DT_OK;
  for (;;) {
    int n = gzread(f, buf, CHUNK);
    if (n < 0) {
      int zerr;
      rc = dt_error_set(err, x->path, 0, 0, "at byte %" PRIu64 ": cannot read: %s", base, gzerror(f, &zerr));
      break;
    }
    x->base = base;
    yajl_status st = n > 0 ? yajl_parse(x->h, buf, (size_t)n) : yajl_complete_parse(x->h);
    if (st != yajl_status_ok) {
      /* after yajl_complete_parse (the end of the input) nothing more was consumed: the offset is the size */
      uint64_t at = n > 0 ? base + yajl_get_bytes_consumed(x->h) : base;
      if (x->deep_at) {
        rc = dt_json_depth_error(err, x->path, base + x->deep_at - 1);
      } else if (x->bad[0]) {
        rc = dt_error_set(err, x->path, 0, 0, "record ending near byte %" PRIu64 ": %s", at, x->bad);
      } else {
        unsigned char *m = yajl_get_error(x->h, 0, buf, (size_t)(n > 0 ? n : 0));
        for (size_t k = m ? strlen((char *)m) : 0; k > 0 && isspace(m[k - 1]); k--)
          m[k - 1] = '\0'; /* yajl ends its message with a newline */
        rc = dt_error_set(err, x->path, 0, 0, "%s at byte %" PRIu64 ": %s", n > 0 ? "invalid JSON" : "truncated JSON",
                          at, m ? (const char *)m : "parse error");
        if (m)
          yajl_free_error(x->h, m);
      }
      break;
    }
    if (n == 0)
      break;
    base += (uint64_t)n;
  }
  free(buf);
  yajl_free(x->h);
  gzclose(f);
  return rc;
}

/* ---------------------------------------------------------------------------------------------------- */

static int rec_cmp(const void *a, const void *b)
{
  const rec *x = a, *y = b;
  if (x->proc != y->proc)
    return x->proc < y->proc ? -1 : 1;
  if (x->comm != y->comm)
    return x->comm < y->comm ? -1 : 1;
  if (x->p2p != y->p2p)
    return x->p2p - y->p2p;
  return x->sn < y->sn ? -1 : x->sn > y->sn;
}

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void free_ins(ins *x)
{
  free(x->recs);
  for (size_t i = 0; i < x->ncomms; i++) {
    free(x->comms[i].id);
    free(x->comms[i].name);
    free(x->comms[i].member);
  }
  free(x->comms);
  for (size_t i = 0; i < x->nprocs; i++) {
    free(x->procs[i].key);
    free(x->procs[i].seen);
  }
  free(x->procs);
  dt_strtab_free(&x->proc_index);
  dt_strtab_free(&x->comm_index);
}

/* Whether sorted array a (n entries) holds v. */
static int has_sn(const uint64_t *a, size_t n, uint64_t v)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (a[m] < v)
      lo = m + 1;
    else
      hi = m;
  }
  return lo < n && a[lo] == v;
}

int dt_nccl_inspector_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                             dt_error *err)
{
  *out = NULL;
  ins x;
  memset(&x, 0, sizeof x);
  int rc = DT_OK;
  for (size_t i = 0; i < npaths && rc == DT_OK; i++) {
    x.path = paths[i];
    x.file = (uint32_t)i;
    x.bad[0] = '\0';
    rc = parse_file(&x, err);
  }
  if (rc == DT_OK && x.nrecs == 0)
    rc = dt_error_set(err, paths[0], 0, 0, "no NCCL Inspector records (coll_perf / p2p_perf)");
  /* global ranks: each process's rank in its largest communicator */
  int32_t world = 0;
  for (size_t i = 0; rc == DT_OK && i < x.nprocs; i++)
    if (x.comms[x.procs[i].world].nranks > world)
      world = x.comms[x.procs[i].world].nranks;
  int32_t *owner = dt_xmalloc((size_t)(world > 0 ? world : 1) * sizeof *owner);
  for (int32_t r = 0; r < world; r++)
    owner[r] = -1;
  for (size_t i = 0; rc == DT_OK && i < x.nprocs; i++) {
    iproc *p = &x.procs[i];
    icomm *w = &x.comms[p->world];
    if (w->nranks != world) {
      rc = dt_error_set(err, paths[p->file], 0, 0, "process %s has records of no communicator of all %d ranks (its "
                        "largest has %d): its global rank is unknown", p->key, (int)world, (int)w->nranks);
      break;
    }
    for (int32_t r = 0; r < w->nranks; r++)
      if (w->member[r] == (int32_t)i)
        p->rank = r;
    if (owner[p->rank] >= 0) {
      rc = dt_error_set(err, paths[p->file], 0, 0, "processes %s and %s both have global rank %d", x.procs[owner[p->rank]].key,
                        p->key, (int)p->rank);
      break;
    }
    owner[p->rank] = (int32_t)i;
  }
  for (int32_t r = 0; rc == DT_OK && r < world; r++)
    if (owner[r] < 0)
      rc = dt_error_set(err, paths[0], 0, 0, "the largest communicator has %d ranks but rank %d has no records: give "
                        "every process's Inspector log", (int)world, (int)r);
  free(owner);
  dt_trace *t = NULL;
  if (rc == DT_OK) {
    t = dt_trace_new(world);
    uint32_t *tfile = dt_xmalloc(npaths * sizeof *tfile);
    for (size_t i = 0; i < npaths; i++)
      tfile[i] = dt_trace_add_file(t, paths[i]);
    int32_t *ranks = dt_xmalloc((size_t)world * sizeof *ranks);
    for (size_t ci = 0; ci < x.ncomms && rc == DT_OK; ci++) {
      icomm *c = &x.comms[ci];
      for (int32_t r = 0; r < c->nranks && rc == DT_OK; r++) {
        if (c->member[r] < 0)
          rc = dt_error_set(err, paths[0], 0, 0, "communicator %s (%d ranks): rank %d has no records (its process's "
                            "log is missing, or it ran nothing the Inspector kept)", c->id, (int)c->nranks, (int)r);
        else
          ranks[r] = x.procs[c->member[r]].rank;
      }
      if (rc != DT_OK)
        break;
      char name[32];
      snprintf(name, sizeof name, "comm%zu", ci);
      c->group = dt_trace_add_group(t, name, ranks, (size_t)c->nranks, tfile[0], 0, err);
      if (c->group < 0) {
        rc = DT_ERR;
        break;
      }
      dt_trace_add_note(t, "nccl-inspector: group '%s' = communicator %s%s%s%s, %d ranks", name, c->id,
                        c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", (int)c->nranks);
    }
    free(ranks);
    /* per communicator, keep the collective sequence numbers every member recorded: the Inspector may miss some
     * (small messages under NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES, a full buffer), and an instance must be on all */
    qsort(x.recs, x.nrecs, sizeof *x.recs, rec_cmp);
    uint64_t dropped = 0, kept = 0, p2p_trimmed = 0, timing[4] = {0};
    uint64_t **sns = dt_xcalloc(x.ncomms ? x.ncomms : 1, sizeof *sns);
    size_t *nsn = dt_xcalloc(x.ncomms ? x.ncomms : 1, sizeof *nsn);
    for (size_t ci = 0; ci < x.ncomms && rc == DT_OK; ci++) {
      icomm *c = &x.comms[ci];
      /* count, for each sn, how many members recorded it (records are sorted by process, comm, sn) */
      uint64_t *all = NULL;
      size_t nall = 0, cap = 0;
      for (size_t i = 0; i < x.nrecs; i++)
        if (x.recs[i].comm == (int32_t)ci && !x.recs[i].p2p) {
          all = dt_grow(all, &cap, nall, sizeof *all);
          all[nall++] = x.recs[i].sn;
        }
      if (nall)
        qsort(all, nall, sizeof *all, u64_cmp);
      size_t m = 0;
      for (size_t i = 0; i < nall;) {
        size_t j = i;
        while (j < nall && all[j] == all[i])
          j++;
        if ((int32_t)(j - i) == c->nranks)
          all[m++] = all[i];
        i = j;
      }
      sns[ci] = all;
      nsn[ci] = m;
    }
    double gap = opts->compute_gap_s > 0 ? opts->compute_gap_s : 0;
    for (size_t i = 0; i < x.nrecs && rc == DT_OK; i++) {
      rec *r = &x.recs[i];
      icomm *c = &x.comms[r->comm];
      int32_t rank = x.procs[r->proc].rank;
      if (!r->p2p && !has_sn(sns[r->comm], nsn[r->comm], r->sn)) {
        dropped++;
        continue;
      }
      if (r->p2p && i > 0 && x.recs[i - 1].p2p && x.recs[i - 1].proc == r->proc && x.recs[i - 1].comm == r->comm &&
          x.recs[i - 1].sn == r->sn) {
        p2p_trimmed++; /* the same record dumped twice */
        continue;
      }
      int32_t stream = r->comm; /* no order between communicators is recorded: one stream each */
      if (gap > 0) {
        dt_op *g = dt_trace_append(t, rank, stream);
        g->kind = DT_OP_COMPUTE;
        g->dur = gap;
        g->file = tfile[r->file];
      }
      dt_op *op = dt_trace_append(t, rank, stream);
      op->kind = r->kind;
      op->file = tfile[r->file];
      op->line = 0;
      if (r->p2p) {
        /* the records say nothing of group launches: the p2p records of one communicator are posted together
         * (one batch per run), so that an exchange both ways cannot deadlock */
        op->peer = t->groups[c->group].ranks[r->peer];
        op->bytes = r->bytes;
        op->batch = (int64_t)r->comm;
        if (op->peer == rank) {
          /* a copy to itself: no traffic */
          t->ranks[rank].streams[dt_trace_stream(t, rank, stream, 0)].nops--;
          free(op->name);
          p2p_trimmed++;
          continue;
        }
      } else {
        op->group = c->group;
        uint64_t b = r->bytes;
        if (r->kind == DT_OP_REDUCESCATTER || r->kind == DT_OP_ALLTOALL) { /* per-rank receive / per-peer count */
          if (b > DT_TRACE_MAX_BYTES / (uint64_t)c->nranks) {
            rc = dt_error_set(err, paths[r->file], 0, 0, "record near byte %" PRIu64 ": message size %" PRIu64
                              " x %d ranks is more than the %" PRIu64 " bytes (2^53) one op may move", r->offset, b,
                              (int)c->nranks, DT_TRACE_MAX_BYTES);
            break;
          }
          b *= (uint64_t)c->nranks;
        }
        op->bytes = r->kind == DT_OP_BARRIER ? 0 : b;
      }
      t->measured_n[r->kind]++;
      t->measured_s[r->kind] += r->exec_s;
      timing[r->timing]++;
      kept++;
    }
    for (size_t ci = 0; ci < x.ncomms; ci++)
      free(sns[ci]);
    free(sns);
    free(nsn);
    /* ops carry no line; issue order = stream order (each stream is one communicator) */
    if (rc == DT_OK) {
      t->measured_what = "NCCL Inspector coll_exec_time_us / p2p_exec_time_us, on every member";
      dt_trace_add_meta(t, "source", paths[0]);
      dt_trace_add_meta(t, "format", "nccl-inspector");
      dt_trace_add_note(t, "nccl-inspector: %" PRIu64 " records of %zu processes, %zu communicators imported%s%s",
                        kept, x.nprocs, x.ncomms, x.versions[0] ? "; format version " : "", x.versions);
      if (dropped)
        dt_trace_add_note(t, "nccl-inspector: warning: %" PRIu64 " collective records left out: their sequence number "
                          "is not in every member's log (the Inspector skips messages under "
                          "NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES, 8 KiB by default, and may miss records)", dropped);
      if (p2p_trimmed)
        dt_trace_add_note(t, "nccl-inspector: %" PRIu64 " repeated p2p records left out", p2p_trimmed);
      if (x.unknown)
        dt_trace_add_note(t, "nccl-inspector: warning: %" PRIu64 " records of ops dtsim does not know (%s): collectives "
                          "kept as opaque 'other', point-to-point records without a direction left out", x.unknown,
                          x.unknown_names);
      dt_trace_add_note(t, "nccl-inspector: measured times by source: %" PRIu64 " GPU kernel timers, %" PRIu64 " CPU "
                        "kernel timers, %" PRIu64 " CPU collective timers, %" PRIu64 " other", timing[0], timing[1],
                        timing[2], timing[3]);
      for (int k = 0; k < DT_OP_COUNT; k++)
        if (t->measured_n[k])
          dt_trace_add_note(t, "nccl-inspector: measured %s: %" PRIu64 " records, mean %.6g us (measured, not used as "
                            "cost)", dt_op_kind_name((dt_op_kind)k), t->measured_n[k],
                            1e6 * t->measured_s[k] / (double)t->measured_n[k]);
      if (gap > 0)
        dt_trace_add_note(t, "nccl-inspector: %.9g s of compute (--compute-gap) before every operation", gap);
      else
        dt_trace_add_note(t, "nccl-inspector: the records hold no compute: none between operations (give "
                          "--compute-gap TIME for some); the simulated time is communication only");
      dt_import_note_assumptions(t, "nccl-inspector");
    }
    free(tfile);
  }
  if (rc == DT_OK)
    *out = t;
  else
    dt_trace_free(t);
  free_ins(&x);
  return rc;
}
