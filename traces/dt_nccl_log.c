/* NCCL debug log importer (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL): one file per process, several, or one
 * interleaved stdout with launcher prefixes. Communicators come from the `Init COMPLETE` lines (members grouped by
 * commId, split communicators by their parent's group and color, very old logs by creation order), each
 * process's global rank from its world communicator (its largest), and every call line becomes an op of that
 * rank in log order, sized by NCCL's per-op count convention. docs/import-nccl-log.md has the mappings. */
#include "dt_import_util.h"

#include "../common/dt_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A communicator as all its members see it. */
typedef struct comm {
  char *key;          /* "commId 0x…", "<parent key>/color <c>", or "init #k of N ranks" */
  int32_t nranks;
  int32_t *member;    /* process index by comm rank, -1 while unseen */
  int32_t group;      /* trace group index, set when emitting */
  uint32_t file;      /* where its first member's Init line is */
  long line;
  int split;          /* made by ncclCommSplit */
  int keyless;        /* old log without commId: grouped by creation order */
} comm;

/* A call line, kept until the ranks are known. */
typedef struct call {
  dt_op_kind kind;
  int32_t name;       /* NCCL's spelling: index in nl.names */
  int32_t comm;
  uint64_t count;
  int dtype;
  int32_t root;
  uint64_t opcount;
  int32_t stream;     /* index in the process's stream pointers */
  uint32_t file;
  long line;
} call;

typedef struct ptrmap {
  uint64_t ptr;
  int32_t comm;
} ptrmap;

typedef struct proc {
  char *id;           /* "host:pid" */
  ptrmap *comms;      /* comm pointer -> comm, latest init wins (NCCL reuses freed pointers) */
  size_t ncomms, ccap;
  uint64_t *streams;
  size_t nstreams, scap;
  call *calls;
  size_t ncalls, kcap;
  int32_t plain_inits; /* Init lines without commId or parent seen so far (old logs) */
  int32_t world;       /* its world communicator (largest), -1 none */
  int32_t rank;        /* global rank */
  uint32_t file;
  long line;           /* its first line, for errors */
} proc;

typedef struct nl {
  comm *comms;
  size_t ncomms, ccap;
  proc *procs;
  size_t nprocs, pcap;
  dt_trace *t;        /* built at the end; files registered as read */
  char **paths;
  size_t npaths;
  uint32_t *tfile;    /* trace file index of each path */
  dt_strtab proc_index, comm_index; /* id -> procs[], key -> comms[] (the same numbering) */
  char **names;       /* op names seen (few) */
  size_t nnames, names_cap;
  uint64_t unknown_ops; /* call lines of ops dtsim has no kind for */
  char unknown_names[256];
  uint64_t nodes_line;  /* nNodes seen (0 none) */
  int32_t nnodes, nlocal;
} nl;

/* ---------------------------------------------------------------------------------------------------- */
/* Tokens of a line */

/* Value after " <key> " in s (the key as a whole word), copied into out; NULL when absent. */
static const char *field(const char *s, const char *key, char *out, size_t size)
{
  size_t k = strlen(key);
  for (const char *p = strstr(s, key); p; p = strstr(p + 1, key)) {
    if ((p == s || p[-1] == ' ' || p[-1] == '[') && (p[k] == ' ' || p[k] == '=')) {
      const char *v = p + k + 1;
      while (*v == ' ')
        v++;
      size_t n = strcspn(v, " ]");
      if (n == 0 || n >= size)
        return NULL;
      memcpy(out, v, n);
      out[n] = '\0';
      return out;
    }
  }
  return NULL;
}

static int parse_i64(const char *s, int64_t *v)
{
  char *end;
  if (!*s)
    return DT_ERR;
  long long x = strtoll(s, &end, 10);
  if (*end)
    return DT_ERR;
  *v = x;
  return DT_OK;
}

/* A pointer as NCCL prints it (%p): 0x… or (nil). */
static int parse_ptr(const char *s, uint64_t *v)
{
  if (strcmp(s, "(nil)") == 0 || strcmp(s, "0") == 0) {
    *v = 0;
    return DT_OK;
  }
  char *end;
  if (strncmp(s, "0x", 2) != 0 || !s[2])
    return DT_ERR;
  unsigned long long x = strtoull(s + 2, &end, 16);
  if (*end)
    return DT_ERR;
  *v = x;
  return DT_OK;
}

/* Finds "host:pid:tid [dev] NCCL INFO " in a line, whatever the launcher put in front. Copies "host:pid [dev]"
 * into id (a rank: one process may drive several GPUs) and returns the message after "NCCL INFO ", or NULL for a
 * line that is no NCCL INFO line. */
static const char *nccl_message(const char *s, char *id, size_t size)
{
  const char *m = strstr(s, " NCCL INFO ");
  if (!m)
    return NULL;
  /* back over " [dev]" */
  const char *p = m;
  if (p <= s || p[-1] != ']')
    return NULL;
  p--;
  while (p > s && p[-1] >= '0' && p[-1] <= '9')
    p--;
  if (p <= s || p[-1] != '[')
    return NULL;
  p--;
  if (p <= s || p[-1] != ' ')
    return NULL;
  const char *end = p - 1; /* one past host:pid:tid */
  const char *q = end;
  while (q > s && q[-1] >= '0' && q[-1] <= '9') /* tid */
    q--;
  if (q == end || q <= s || q[-1] != ':')
    return NULL;
  q--;
  const char *pid_end = q;
  while (q > s && q[-1] >= '0' && q[-1] <= '9') /* pid */
    q--;
  if (q == pid_end || q <= s || q[-1] != ':')
    return NULL;
  q--;
  const char *host_end = q;
  while (q > s && (q[-1] == '-' || q[-1] == '.' || q[-1] == '_' || (q[-1] >= '0' && q[-1] <= '9') ||
                   (q[-1] >= 'a' && q[-1] <= 'z') || (q[-1] >= 'A' && q[-1] <= 'Z')))
    q--;
  if (q == host_end)
    return NULL;
  int n = (int)(pid_end - q), dn = (int)(m - p);
  if ((size_t)(n + dn) + 2 > size)
    n = (int)size - dn - 2;
  snprintf(id, size, "%.*s %.*s", n, q, dn, p);
  return m + strlen(" NCCL INFO ");
}

/* ---------------------------------------------------------------------------------------------------- */

static int32_t find_proc(nl *x, const char *id, uint32_t file, long line)
{
  int32_t found = dt_strtab_intern(&x->proc_index, id, strlen(id));
  if ((size_t)found < x->nprocs)
    return found;
  x->procs = dt_grow(x->procs, &x->pcap, x->nprocs, sizeof *x->procs);
  proc *p = &x->procs[x->nprocs];
  memset(p, 0, sizeof *p);
  p->id = dt_xstrdup(id);
  p->world = -1;
  p->rank = -1;
  p->file = file;
  p->line = line;
  return (int32_t)x->nprocs++;
}

static int32_t proc_comm(const proc *p, uint64_t ptr)
{
  for (size_t i = p->ncomms; i-- > 0;)
    if (p->comms[i].ptr == ptr)
      return p->comms[i].comm;
  return -1;
}

/* A comm pointer is unique within one OS process, which may drive several GPUs (ranks): finds the rank of the same
 * host:pid that initialised ptr, when the line's device is not the one the communicator was made on. Returns
 * the proc index and sets *comm, or -1. */
static int32_t sibling_with_comm(const nl *x, int32_t pi, uint64_t ptr, int32_t *comm)
{
  const char *id = x->procs[pi].id;
  size_t n = strcspn(id, " ");
  for (size_t i = 0; i < x->nprocs; i++) {
    if ((int32_t)i == pi || strncmp(x->procs[i].id, id, n) != 0 || x->procs[i].id[n] != ' ')
      continue;
    int32_t c = proc_comm(&x->procs[i], ptr);
    if (c >= 0) {
      *comm = c;
      return (int32_t)i;
    }
  }
  return -1;
}

static int32_t find_comm(nl *x, const char *key, int32_t nranks, uint32_t file, long line)
{
  int32_t found = dt_strtab_intern(&x->comm_index, key, strlen(key));
  if ((size_t)found < x->ncomms)
    return found;
  x->comms = dt_grow(x->comms, &x->ccap, x->ncomms, sizeof *x->comms);
  comm *c = &x->comms[x->ncomms];
  memset(c, 0, sizeof *c);
  c->key = dt_xstrdup(key);
  c->nranks = nranks;
  c->member = dt_xmalloc((size_t)nranks * sizeof *c->member);
  for (int32_t i = 0; i < nranks; i++)
    c->member[i] = -1;
  c->file = file;
  c->line = line;
  c->group = -1;
  return (int32_t)x->ncomms++;
}

/* An `… comm <ptr> rank <r> nranks <N> … - Init COMPLETE` line. */
static int on_init(nl *x, int32_t pi, const char *msg, uint32_t file, long line, const char *path, dt_error *err)
{
  char v[128], key[192];
  uint64_t ptr;
  int64_t rank, nranks;
  if (!field(msg, "comm", v, sizeof v) || parse_ptr(v, &ptr) != DT_OK)
    return dt_error_set(err, path, line, 0, "Init COMPLETE line without 'comm <pointer>'");
  if (!field(msg, "rank", v, sizeof v) || parse_i64(v, &rank) != DT_OK)
    return dt_error_set(err, path, line, 0, "Init COMPLETE line without 'rank <number>'");
  if (!field(msg, "nranks", v, sizeof v) || parse_i64(v, &nranks) != DT_OK)
    return dt_error_set(err, path, line, 0, "Init COMPLETE line without 'nranks <number>'");
  if (nranks < 1 || nranks > DT_TRACE_MAX_RANKS || rank < 0 || rank >= nranks)
    return dt_error_set(err, path, line, 0, "Init COMPLETE line with rank %" PRId64 " of %" PRId64
                        " ranks: expected 0 <= rank < nranks <= %d", rank, nranks, DT_TRACE_MAX_RANKS);
  proc *p = &x->procs[pi];
  int split = 0, keyless = 0;
  if (field(msg, "commId", v, sizeof v)) {
    snprintf(key, sizeof key, "commId %s", v);
  } else if (field(msg, "parent", v, sizeof v)) {
    uint64_t parent;
    char color[64];
    if (parse_ptr(v, &parent) != DT_OK)
      return dt_error_set(err, path, line, 0, "split communicator with parent '%s': expected a pointer", v);
    int32_t pc = proc_comm(p, parent);
    if (pc < 0)
      sibling_with_comm(x, pi, parent, &pc);
    if (pc < 0)
      return dt_error_set(err, path, line, 0, "split communicator's parent %s has no Init COMPLETE line in "
                          "process %s before it", v, p->id);
    if (!field(msg, "color", color, sizeof color))
      return dt_error_set(err, path, line, 0, "split communicator without 'color <c>'");
    snprintf(key, sizeof key, "%.120s/color %s", x->comms[pc].key, color);
    split = 1;
  } else { /* NCCL before 2.19 printed neither: the k-th plain communicator of every process is one */
    snprintf(key, sizeof key, "init #%d of %" PRId64 " ranks", (int)p->plain_inits, nranks);
    p->plain_inits++;
    keyless = 1;
  }
  int32_t ci = find_comm(x, key, (int32_t)nranks, file, line);
  comm *c = &x->comms[ci];
  c->split = split;
  c->keyless = keyless;
  if (c->nranks != nranks)
    return dt_error_set(err, path, line, 0, "communicator %s has %" PRId64 " ranks here but %d at %s:%ld", key,
                        nranks, (int)c->nranks, x->paths[c->file - 1], c->line);
  if (c->member[rank] >= 0 && c->member[rank] != pi)
    return dt_error_set(err, path, line, 0, "communicator %s: rank %" PRId64 " is claimed by processes %s and %s",
                        key, rank, x->procs[c->member[rank]].id, p->id);
  c->member[rank] = pi;
  p->comms = dt_grow(p->comms, &p->ccap, p->ncomms, sizeof *p->comms);
  p->comms[p->ncomms].ptr = ptr;
  p->comms[p->ncomms].comm = ci;
  p->ncomms++;
  if (p->world < 0 || x->comms[p->world].nranks < nranks)
    p->world = ci;
  return DT_OK;
}

static const struct {
  const char *name;
  dt_op_kind kind;
} op_names[] = {{"AllReduce", DT_OP_ALLREDUCE}, {"AllGather", DT_OP_ALLGATHER}, {"ReduceScatter", DT_OP_REDUCESCATTER},
                {"Broadcast", DT_OP_BROADCAST}, {"Reduce", DT_OP_REDUCE},       {"Send", DT_OP_SEND},
                {"Recv", DT_OP_RECV},           {"AlltoAll", DT_OP_ALLTOALL},   {"Gather", DT_OP_OTHER},
                {"Scatter", DT_OP_OTHER},       {"Bcast", DT_OP_BROADCAST}};

/* A `<Op>: opCount <hex> sendbuff … count <n> datatype <d> op <o> root <r> comm <ptr> …` line. */
static int on_call(nl *x, int32_t pi, const char *msg, uint32_t file, long line, const char *path, dt_error *err)
{
  size_t n = strcspn(msg, ":");
  char name[64];
  if (n == 0 || n >= sizeof name)
    return DT_OK;
  memcpy(name, msg, n);
  name[n] = '\0';
  const char *rest = msg + n;
  char v[128];
  uint64_t opcount, ptr, stream = 0;
  int64_t dtype, root;
  uint64_t count;
  if (!field(rest, "opCount", v, sizeof v))
    return DT_OK; /* another "X: …" message */
  char *end;
  opcount = strtoull(v, &end, 16);
  if (*end)
    return dt_error_set(err, path, line, 0, "%s call with opCount '%s': expected a hexadecimal counter", name, v);
  if (!field(rest, "count", v, sizeof v))
    return dt_error_set(err, path, line, 0, "%s call without 'count <elements>'", name);
  if (dt_parse_whole_u64(v, UINT64_MAX, &count) != 0)
    return dt_error_set(err, path, line, 0, "%s call with count '%s': expected a number of elements (a decimal "
                        "integer of at most 20 digits, below 2^64)", name, v);
  if (!field(rest, "datatype", v, sizeof v) || parse_i64(v, &dtype) != DT_OK)
    return dt_error_set(err, path, line, 0, "%s call without 'datatype <id>'", name);
  if (!dt_nccl_dtype_size((int)dtype) || dtype > 64)
    return dt_error_set(err, path, line, 0, "%s call with datatype %" PRId64 ": expected an NCCL datatype id 0-11 "
                        "(int8 … fp8e5m2)", name, dtype);
  if (!field(rest, "root", v, sizeof v) || parse_i64(v, &root) != DT_OK)
    return dt_error_set(err, path, line, 0, "%s call without 'root <rank>'", name);
  if (!field(rest, "comm", v, sizeof v) || parse_ptr(v, &ptr) != DT_OK)
    return dt_error_set(err, path, line, 0, "%s call without 'comm <pointer>'", name);
  if (field(rest, "stream", v, sizeof v) && parse_ptr(v, &stream) != DT_OK)
    return dt_error_set(err, path, line, 0, "%s call with stream '%s': expected a pointer", name, v);
  proc *p = &x->procs[pi];
  int32_t ci = proc_comm(p, ptr);
  if (ci < 0) {
    int32_t sib = sibling_with_comm(x, pi, ptr, &ci);
    if (sib >= 0) {
      pi = sib;
      p = &x->procs[pi];
    }
  }
  if (ci < 0)
    return dt_error_set(err, path, line, 0, "%s call on comm %s, which has no Init COMPLETE line in process %s "
                        "before it (log INIT as well as COLL: NCCL_DEBUG_SUBSYS=INIT,COLL)", name, v, p->id);
  const char *opname = NULL;
  dt_op_kind kind = DT_OP_OTHER;
  for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
    if (strcmp(op_names[i].name, name) == 0) {
      opname = op_names[i].name;
      kind = op_names[i].kind;
    }
  if (!opname) {
    /* an op this version of dtsim does not know: kept as an opaque collective, named in a warning */
    x->unknown_ops++;
    if (!strstr(x->unknown_names, name) && strlen(x->unknown_names) + n + 3 < sizeof x->unknown_names)
      snprintf(x->unknown_names + strlen(x->unknown_names), sizeof x->unknown_names - strlen(x->unknown_names),
               "%s%s", x->unknown_names[0] ? ", " : "", name);
    opname = "other";
  }
  int32_t nr = x->comms[ci].nranks;
  if ((kind == DT_OP_SEND || kind == DT_OP_RECV || kind == DT_OP_BROADCAST || kind == DT_OP_REDUCE) &&
      (root < 0 || root >= nr))
    return dt_error_set(err, path, line, 0, "%s with root %" PRId64 " on a communicator of %d ranks: expected "
                        "0-%d (the %s)", name, root, (int)nr, (int)nr - 1,
                        kind == DT_OP_SEND || kind == DT_OP_RECV ? "peer" : "root");
  int32_t si = -1;
  for (size_t i = 0; i < p->nstreams; i++)
    if (p->streams[i] == stream)
      si = (int32_t)i;
  if (si < 0) {
    p->streams = dt_grow(p->streams, &p->scap, p->nstreams, sizeof *p->streams);
    p->streams[p->nstreams] = stream;
    si = (int32_t)p->nstreams++;
  }
  p->calls = dt_grow(p->calls, &p->kcap, p->ncalls, sizeof *p->calls);
  call *c = &p->calls[p->ncalls++];
  c->kind = kind;
  c->name = -1; /* ops keep NCCL's name (for 'other' ones, their only name) */
  for (size_t i = 0; i < x->nnames && c->name < 0; i++)
    if (strcmp(x->names[i], name) == 0)
      c->name = (int32_t)i;
  if (c->name < 0) {
    x->names = dt_grow(x->names, &x->names_cap, x->nnames, sizeof *x->names);
    x->names[x->nnames] = dt_xstrdup(name);
    c->name = (int32_t)x->nnames++;
  }
  c->comm = ci;
  c->count = count;
  c->dtype = (int)dtype;
  c->root = (int32_t)root;
  c->opcount = opcount;
  c->stream = si;
  c->file = file;
  c->line = line;
  return DT_OK;
}

static int parse_file(nl *x, const char *path, uint32_t file, dt_error *err)
{
  dt_lines l;
  if (dt_lines_open(&l, path, err) != DT_OK)
    return DT_ERR;
  int rc;
  char id[256];
  while ((rc = dt_lines_next(&l, err)) == 1) {
    const char *msg = nccl_message(l.buf, id, sizeof id);
    if (!msg)
      continue;
    int32_t pi = find_proc(x, id, file, l.lineno);
    if (strstr(msg, "Init COMPLETE")) {
      if (on_init(x, pi, msg, file, l.lineno, path, err) != DT_OK) {
        rc = DT_ERR;
        break;
      }
    } else if (strstr(msg, ": opCount ")) {
      if (on_call(x, pi, msg, file, l.lineno, path, err) != DT_OK) {
        rc = DT_ERR;
        break;
      }
    } else if (strstr(msg, " nNodes ") && strstr(msg, " localRanks ")) {
      char v[64];
      int64_t a, b;
      if (field(msg, "nNodes", v, sizeof v) && parse_i64(v, &a) == DT_OK && field(msg, "localRanks", v, sizeof v) &&
          parse_i64(v, &b) == DT_OK && a > x->nnodes) {
        x->nnodes = (int32_t)a;
        x->nlocal = (int32_t)b;
      }
    }
  }
  dt_lines_close(&l);
  return rc == DT_ERR ? DT_ERR : DT_OK;
}

/* ---------------------------------------------------------------------------------------------------- */

static void free_nl(nl *x)
{
  for (size_t i = 0; i < x->ncomms; i++) {
    free(x->comms[i].key);
    free(x->comms[i].member);
  }
  free(x->comms);
  for (size_t i = 0; i < x->nprocs; i++) {
    free(x->procs[i].id);
    free(x->procs[i].comms);
    free(x->procs[i].streams);
    free(x->procs[i].calls);
  }
  free(x->procs);
  free(x->tfile);
  dt_strtab_free(&x->proc_index);
  dt_strtab_free(&x->comm_index);
  for (size_t i = 0; i < x->nnames; i++)
    free(x->names[i]);
  free(x->names);
}

/* Global ranks from the world communicators; groups from the communicators. */
static int resolve(nl *x, dt_trace **tout, dt_error *err)
{
  if (x->nprocs == 0)
    return dt_error_set(err, x->paths[0], 0, 0, "no 'NCCL INFO' lines: expected an NCCL debug log written with "
                        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL");
  int32_t world = 0;
  for (size_t i = 0; i < x->nprocs; i++) {
    proc *p = &x->procs[i];
    if (p->world < 0)
      return dt_error_set(err, x->paths[p->file - 1], p->line, 0, "process %s has no Init COMPLETE line: its rank "
                          "is unknown (log INIT as well as COLL)", p->id);
    if (x->comms[p->world].nranks > world)
      world = x->comms[p->world].nranks;
  }
  /* the world communicator: the largest; every process must be in one of that size */
  int32_t *owner = dt_xmalloc((size_t)world * sizeof *owner);
  for (int32_t r = 0; r < world; r++)
    owner[r] = -1;
  for (size_t i = 0; i < x->nprocs; i++) {
    proc *p = &x->procs[i];
    comm *w = &x->comms[p->world];
    if (w->nranks != world) {
      free(owner);
      return dt_error_set(err, x->paths[p->file - 1], p->line, 0, "process %s is in no communicator of all %d ranks "
                          "(its largest has %d): dtsim needs each process's world communicator for its global rank",
                          p->id, (int)world, (int)w->nranks);
    }
    for (int32_t r = 0; r < w->nranks; r++)
      if (w->member[r] == (int32_t)i)
        p->rank = r;
    if (owner[p->rank] >= 0) {
      int32_t o = owner[p->rank];
      free(owner);
      return dt_error_set(err, x->paths[p->file - 1], p->line, 0, "processes %s and %s both have global rank %d "
                          "(two runs in one log?)", x->procs[o].id, p->id, (int)p->rank);
    }
    owner[p->rank] = (int32_t)i;
  }
  char missing[256] = "";
  int nmissing = 0;
  for (int32_t r = 0; r < world; r++)
    if (owner[r] < 0 && nmissing++ < 16)
      snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%d", nmissing > 1 ? "," : "", (int)r);
  free(owner);
  if (nmissing)
    return dt_error_set(err, x->paths[0], 0, 0, "the world communicator has %d ranks but the log%s %d of them: "
                        "ranks %s%s have no lines (give every rank's log; a log of rank 0 only cannot be replayed)",
                        (int)world, x->npaths > 1 ? "s hold" : " holds", (int)(world - nmissing), missing,
                        nmissing > 16 ? ",…" : "");
  dt_trace *t = dt_trace_new(world);
  *tout = t;
  x->tfile = dt_xmalloc(x->npaths * sizeof *x->tfile);
  for (size_t i = 0; i < x->npaths; i++)
    x->tfile[i] = dt_trace_add_file(t, x->paths[i]);
  /* groups: communicators whose every member was seen */
  int32_t *ranks = dt_xmalloc((size_t)world * sizeof *ranks);
  int nsplit = 0, nkeyless = 0;
  for (size_t ci = 0; ci < x->ncomms; ci++) {
    comm *c = &x->comms[ci];
    for (int32_t r = 0; r < c->nranks; r++) {
      if (c->member[r] < 0) {
        free(ranks);
        return dt_error_set(err, x->paths[c->file - 1], c->line, 0, "communicator %s of %d ranks: rank %d has no "
                            "Init COMPLETE line (its process is missing from the log)", c->key, (int)c->nranks, (int)r);
      }
      ranks[r] = x->procs[c->member[r]].rank;
    }
    char name[32];
    if (c->nranks == world && ci == (size_t)x->procs[0].world)
      snprintf(name, sizeof name, "world");
    else
      snprintf(name, sizeof name, "comm%zu", ci);
    c->group = dt_trace_add_group(t, name, ranks, (size_t)c->nranks, x->tfile[c->file - 1], (uint32_t)c->line, err);
    if (c->group < 0) {
      free(ranks);
      return DT_ERR;
    }
    nsplit += c->split;
    nkeyless += c->keyless;
    char list[160] = "";
    for (int32_t r = 0; r < c->nranks && strlen(list) < 120; r++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", r ? "," : "", (int)ranks[r]);
    dt_trace_add_note(t, "nccl-log: group '%s' = communicator %s, ranks %s%s", name, c->key, list,
                      strlen(list) >= 120 ? ",…" : "");
  }
  free(ranks);
  if (nsplit)
    dt_trace_add_note(t, "nccl-log: %d split communicator%s grouped by parent communicator and color", nsplit,
                      nsplit == 1 ? "" : "s");
  if (nkeyless)
    dt_trace_add_note(t, "nccl-log: %d communicator%s without commId (NCCL before 2.19): the k-th such communicator "
                      "of every process with the same size is assumed to be one communicator", nkeyless,
                      nkeyless == 1 ? "" : "s");
  return DT_OK;
}

/* Native bytes of a call (DESIGN.md §4) from NCCL's count (FORMATS.md): all-reduce, broadcast, reduce the whole
 * buffer; all-gather the per-rank send count (our shard); reduce-scatter the per-rank receive count (we want the
 * whole input, n times it); all-to-all per peer (we want the whole send buffer); send/recv the message. */
static uint64_t call_bytes(const call *c, int32_t n, int *overflow)
{
  uint64_t s = dt_nccl_dtype_size(c->dtype), b = c->count;
  uint64_t mul = (c->kind == DT_OP_REDUCESCATTER || c->kind == DT_OP_ALLTOALL) ? (uint64_t)n : 1;
  if (b && (s > UINT64_MAX / b || s * b > UINT64_MAX / mul)) {
    *overflow = 1;
    return 0;
  }
  return b * s * mul;
}

static int emit(nl *x, const dt_import_opts *opts, dt_trace *t, dt_error *err)
{
  double gap = opts->compute_gap_s > 0 ? opts->compute_gap_s : 0;
  uint64_t ncalls = 0, nself = 0, nbatched = 0, nbatches = 0, kinds[DT_OP_COUNT] = {0};
  for (size_t pi = 0; pi < x->nprocs; pi++) {
    proc *p = &x->procs[pi];
    int64_t batch = -1, next_batch = 0;
    int batch_ops = 0;
    const call *prev = NULL;
    for (size_t k = 0; k < p->ncalls; k++) {
      const call *c = &p->calls[k];
      comm *cm = &x->comms[c->comm];
      int p2p = c->kind == DT_OP_SEND || c->kind == DT_OP_RECV;
      int32_t peer = p2p ? t->groups[cm->group].ranks[c->root] : -1;
      if (p2p && peer == p->rank) { /* a copy to itself (PyTorch all-to-all): no traffic */
        nself++;
        continue;
      }
      /* Send/Recv calls of one group launch share the communicator's opCount: one batch */
      int same = p2p && prev && batch >= 0 && prev->comm == c->comm && prev->opcount == c->opcount &&
                 prev->stream == c->stream;
      if (p2p && !same) {
        if (batch_ops > 1) {
          nbatched += (uint64_t)batch_ops;
          nbatches++;
        }
        batch = next_batch++;
        batch_ops = 0;
      }
      if (!p2p) {
        if (batch_ops > 1) {
          nbatched += (uint64_t)batch_ops;
          nbatches++;
        }
        batch = -1;
        batch_ops = 0;
      }
      if (gap > 0 && !same) {
        dt_op *g = dt_trace_append(t, p->rank, c->stream);
        g->kind = DT_OP_COMPUTE;
        g->dur = gap;
        g->file = x->tfile[c->file - 1];
        g->line = (uint32_t)c->line;
      }
      dt_op *op = dt_trace_append(t, p->rank, c->stream);
      int overflow = 0;
      op->kind = c->kind;
      op->bytes = call_bytes(c, cm->nranks, &overflow);
      if (overflow)
        return dt_error_set(err, x->paths[c->file - 1], c->line, 0, "count %" PRIu64 " overflows 64-bit bytes",
                            c->count);
      op->file = x->tfile[c->file - 1];
      op->line = (uint32_t)c->line;
      op->dtype = dt_xstrdup(dt_nccl_dtype_name(c->dtype));
      if (p2p) {
        op->peer = peer;
        op->batch = batch;
        batch_ops++;
      } else {
        op->group = cm->group;
        if (c->kind == DT_OP_BROADCAST || c->kind == DT_OP_REDUCE)
          op->root = c->root;
      }
      if (c->kind == DT_OP_OTHER)
        op->name = dt_xstrdup(x->names[c->name]);
      kinds[c->kind]++;
      ncalls++;
      prev = c;
    }
    if (batch_ops > 1) {
      nbatched += (uint64_t)batch_ops;
      nbatches++;
    }
  }
  char buf[512] = "";
  for (int k = 0; k < DT_OP_COUNT; k++)
    if (kinds[k])
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%" PRIu64 " %s", buf[0] ? ", " : "", kinds[k],
               dt_op_kind_name((dt_op_kind)k));
  dt_trace_add_note(t, "nccl-log: %" PRIu64 " calls of %zu processes imported (%s)", ncalls, x->nprocs,
                    buf[0] ? buf : "none");
  if (gap > 0)
    dt_trace_add_note(t, "nccl-log: the log has no durations: %.9g s of compute (--compute-gap) put before every "
                      "call or group of sends/recvs", gap);
  else
    dt_trace_add_note(t, "nccl-log: the log has no durations: no compute between calls (give --compute-gap TIME "
                      "for some); the simulated time is communication only");
  if (nbatches)
    dt_trace_add_note(t, "nccl-log: %" PRIu64 " sends/recvs in %" PRIu64 " group launches (same communicator and "
                      "opCount) posted together as batches", nbatched, nbatches);
  if (nself)
    dt_trace_add_note(t, "nccl-log: %" PRIu64 " sends/recvs to the process itself (local copies) left out",
                      nself);
  if (x->unknown_ops)
    dt_trace_add_note(t, "nccl-log: warning: %" PRIu64 " calls of ops dtsim does not know (%s) kept as opaque "
                      "'other' collectives (replayed as an all-reduce of their buffer)", x->unknown_ops,
                      x->unknown_names);
  if (kinds[DT_OP_OTHER] > x->unknown_ops)
    dt_trace_add_note(t, "nccl-log: Gather/Scatter calls kept as 'other' collectives of their count (replayed as an "
                      "all-reduce of that buffer)");
  if (x->nnodes > 0)
    dt_trace_add_note(t, "nccl-log: the log reports %d node%s with %d local ranks (placement is still the "
                      "platform's)", (int)x->nnodes, x->nnodes == 1 ? "" : "s", (int)x->nlocal);
  return DT_OK;
}

int dt_nccl_log_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                       dt_error *err)
{
  nl x;
  memset(&x, 0, sizeof x);
  x.paths = (char **)paths;
  x.npaths = npaths;
  *out = NULL;
  dt_trace *t = NULL;
  int rc = DT_OK;
  for (size_t i = 0; i < npaths && rc == DT_OK; i++)
    rc = parse_file(&x, paths[i], (uint32_t)i + 1, err);
  if (rc == DT_OK)
    rc = resolve(&x, &t, err);
  if (rc == DT_OK)
    rc = emit(&x, opts, t, err);
  if (rc == DT_OK) {
    dt_trace_add_meta(t, "source", paths[0]);
    dt_trace_add_meta(t, "format", "nccl-log");
    dt_import_note_assumptions(t, "nccl-log");
    *out = t;
  } else {
    dt_trace_free(t);
  }
  free_nl(&x);
  return rc;
}
