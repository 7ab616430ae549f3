/* MLCommons Chakra execution trace importer: one `<prefix>.<rank>.et` file per rank, plain or gzipped, a stream
 * of protobuf messages each preceded by its length as a varint (first the global metadata, then the nodes),
 * decoded with protobuf-c from our schema subset (traces/proto/dt_chakra.proto). Each rank's node graph
 * (ctrl_deps and data_deps) is ordered topologically without recursion (Kahn's algorithm, ties by start time
 * then file order); host nodes become `delay` on a host stream, GPU compute `compute` on a compute stream,
 * communication one stream per process group, and edges between streams `after=`. docs/import-chakra.md. */
#include "dt_import_util.h"

#include "../common/dt_util.h"
#include "dt_chakra.pb-c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGE (256u << 20) /* a larger length prefix is corruption, not a node */

enum { T_METADATA = 1, T_MEM_LOAD = 2, T_MEM_STORE = 3, T_COMP = 4, T_SEND = 5, T_RECV = 6, T_COLL = 7 };

typedef struct cnode {
  uint64_t id;
  int32_t type;
  int has_comm_type, has_size, has_src, has_dst, cpu;
  int64_t comm_type;
  uint64_t comm_size;
  int64_t src, dst, tag;
  int32_t pg;           /* index in the importer's pg names, 0 = none (the world) */
  uint64_t start_us, dur_us;
  uint64_t deps_at;     /* parents: ids deps[deps_at … deps_at + ndeps) */
  uint32_t ndeps;
  uint64_t offset;      /* byte offset of the message in the uncompressed file */
  int32_t name;         /* index in the importer's interned names, -1 none */
} cnode;

typedef struct crank {
  const char *path;
  int32_t rank;
  uint32_t file;        /* trace file index */
  cnode *nodes;
  size_t nnodes, cap;
  uint64_t *deps;
  size_t ndeps, dcap;
  char *version;
} crank;

typedef struct chk {
  crank *ranks;         /* by rank */
  size_t nfiles;
  int32_t nranks;
  char **pgs;           /* pg names; pgs[0] = "" (none) */
  size_t npgs, pgcap;
  uint64_t missing_parents, cycles_none;
  char missing_list[256];
  uint64_t unknown_types;
  char unknown_list[256];
  uint64_t no_size;     /* communication nodes without comm_size */
  uint64_t other_types; /* nodes of types dtsim does not model (storage, checkpoint, …) */
  char other_list[128];
  uint64_t odd_versions;
  char version_list[256];
  size_t nodes_total;   /* nodes of the ranks built so far */
  dt_strtab names;      /* interned node names (kernel names repeat) */
} chk;

/* ---------------------------------------------------------------------------------------------------- */
/* Reading the length-delimited stream */

typedef struct rd {
  gzFile f;
  const char *path;
  uint64_t offset; /* bytes consumed */
  uint8_t *buf;
  size_t cap;
} rd;

/* Reads a varint length. Returns 1, 0 at a clean end of file, DT_ERR on truncation or an overlong varint. */
static int read_len(rd *r, uint64_t *len, dt_error *err)
{
  uint64_t v = 0;
  for (int i = 0; i < 10; i++) {
    int c = gzgetc(r->f);
    if (c < 0) {
      int zerr = Z_OK;
      const char *msg = gzerror(r->f, &zerr);
      if (zerr != Z_OK && zerr != Z_STREAM_END)
        return dt_error_set(err, r->path, 0, 0, "at byte %" PRIu64 ": cannot read: %s (a truncated or corrupt gzip "
                            "file?)", r->offset, msg);
      if (i == 0)
        return 0;
      return dt_error_set(err, r->path, 0, 0, "at byte %" PRIu64 ": the file ends inside a length prefix",
                          r->offset);
    }
    r->offset++;
    v |= (uint64_t)(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) {
      *len = v;
      return 1;
    }
  }
  return dt_error_set(err, r->path, 0, 0, "at byte %" PRIu64 ": a length prefix longer than 10 bytes: not a "
                      "length-delimited protobuf stream", r->offset);
}

static int read_msg(rd *r, uint64_t *len, dt_error *err)
{
  uint64_t at = r->offset;
  int got = read_len(r, len, err);
  if (got <= 0)
    return got;
  if (*len > MAX_MESSAGE)
    return dt_error_set(err, r->path, 0, 0, "at byte %" PRIu64 ": a message of %" PRIu64 " bytes (more than %u MiB): "
                        "not a Chakra trace, or a corrupt one", at, *len, MAX_MESSAGE >> 20);
  if (*len > r->cap) {
    r->cap = *len;
    r->buf = dt_xrealloc(r->buf, r->cap);
  }
  int n = *len ? gzread(r->f, r->buf, (unsigned)*len) : 0;
  if (n < 0 || (uint64_t)n != *len)
    return dt_error_set(err, r->path, 0, 0, "at byte %" PRIu64 ": the file ends inside a message of %" PRIu64
                        " bytes (%d read)", at, *len, n < 0 ? 0 : n);
  r->offset += *len;
  return 1;
}

/* A bump allocator for protobuf-c: a message's unpacked fields live until the next message, then the arena is
 * reset, instead of a malloc and a free per field. */
typedef struct arena {
  uint8_t *p;
  size_t used, cap;
  void **big; /* blocks that did not fit, freed at reset */
  size_t nbig, bigcap;
} arena;

static void *arena_alloc(void *data, size_t size)
{
  arena *a = data;
  size = (size + 15) & ~(size_t)15;
  if (a->used + size > a->cap) {
    a->big = dt_grow(a->big, &a->bigcap, a->nbig, sizeof *a->big);
    return a->big[a->nbig++] = dt_xmalloc(size);
  }
  void *r = a->p + a->used;
  a->used += size;
  return r;
}

static void arena_free(void *data, void *ptr)
{
  (void)data;
  (void)ptr;
}

static void arena_reset(arena *a)
{
  for (size_t i = 0; i < a->nbig; i++)
    free(a->big[i]);
  a->nbig = 0;
  a->used = 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Attributes */

/* Integer value of an attribute whatever its integer kind (writers use int64 or uint64 for comm_size, some
 * int32): DT_OK and *v, or DT_ERR for a non-integer value. *neg is set for a negative value. */
static int attr_int(const Dtchakra__Attr *a, int64_t *v, int *neg)
{
  *neg = 0;
  switch (a->value_case) {
  case DTCHAKRA__ATTR__VALUE_INT32_VAL: *v = a->int32_val; break;
  case DTCHAKRA__ATTR__VALUE_INT64_VAL: *v = a->int64_val; break;
  case DTCHAKRA__ATTR__VALUE_UINT32_VAL: *v = a->uint32_val; break;
  case DTCHAKRA__ATTR__VALUE_UINT64_VAL:
    if (a->uint64_val > INT64_MAX)
      return DT_ERR;
    *v = (int64_t)a->uint64_val;
    break;
  case DTCHAKRA__ATTR__VALUE_SINT32_VAL: *v = a->sint32_val; break;
  case DTCHAKRA__ATTR__VALUE_SINT64_VAL: *v = a->sint64_val; break;
  case DTCHAKRA__ATTR__VALUE_FIXED32_VAL: *v = a->fixed32_val; break;
  case DTCHAKRA__ATTR__VALUE_FIXED64_VAL:
    if (a->fixed64_val > INT64_MAX)
      return DT_ERR;
    *v = (int64_t)a->fixed64_val;
    break;
  case DTCHAKRA__ATTR__VALUE_SFIXED32_VAL: *v = a->sfixed32_val; break;
  case DTCHAKRA__ATTR__VALUE_SFIXED64_VAL: *v = a->sfixed64_val; break;
  case DTCHAKRA__ATTR__VALUE_BOOL_VAL: *v = a->bool_val; break;
  case DTCHAKRA__ATTR__VALUE_DOUBLE_VAL:
    if (!isfinite(a->double_val) || a->double_val != floor(a->double_val) || fabs(a->double_val) > 9e18)
      return DT_ERR;
    *v = (int64_t)a->double_val;
    break;
  default:
    return DT_ERR;
  }
  *neg = *v < 0;
  return DT_OK;
}

static int32_t intern_pg(chk *c, const char *name)
{
  for (size_t i = 0; i < c->npgs; i++)
    if (strcmp(c->pgs[i], name) == 0)
      return (int32_t)i;
  c->pgs = dt_grow(c->pgs, &c->pgcap, c->npgs, sizeof *c->pgs);
  c->pgs[c->npgs] = dt_xstrdup(name);
  return (int32_t)c->npgs++;
}

static void add_to_list(char *list, size_t cap, const char *item)
{
  if (strstr(list, item) || strlen(list) + strlen(item) + 3 >= cap)
    return;
  snprintf(list + strlen(list), cap - strlen(list), "%s%s", list[0] ? ", " : "", item);
}

/* ---------------------------------------------------------------------------------------------------- */

static int read_rank(chk *c, crank *k, dt_error *err)
{
  rd r;
  memset(&r, 0, sizeof r);
  r.path = k->path;
  r.f = gzopen(k->path, "rb");
  if (!r.f)
    return dt_error_set(err, k->path, 0, 0, "cannot open");
  gzbuffer(r.f, 1u << 17);
  int rc = DT_OK;
  uint64_t len;
  uint64_t at = 0;
  arena ar = {dt_xmalloc(1 << 16), 0, 1 << 16, NULL, 0, 0};
  ProtobufCAllocator alloc = {arena_alloc, arena_free, &ar};
  int got = read_msg(&r, &len, err);
  if (got < 0)
    rc = DT_ERR;
  else if (got == 0)
    rc = dt_error_set(err, k->path, 0, 0, "an empty Chakra trace: expected the global metadata, then nodes");
  if (rc == DT_OK) {
    Dtchakra__Meta *m = dtchakra__meta__unpack(NULL, (size_t)len, r.buf);
    if (!m) {
      rc = dt_error_set(err, k->path, 0, 0, "at byte 0: the first message is not a Chakra GlobalMetadata (protobuf "
                        "decoding failed)");
    } else {
      const char *v = m->version && m->version[0] ? m->version : NULL;
      for (size_t i = 0; !v && i < m->n_attr; i++)
        if (m->attr[i]->name && strcmp(m->attr[i]->name, "schema") == 0 &&
            m->attr[i]->value_case == DTCHAKRA__ATTR__VALUE_STRING_VAL)
          v = m->attr[i]->string_val;
      k->version = dt_xstrdup(v ? v : "");
      dtchakra__meta__free_unpacked(m, NULL);
      if (!strstr(k->version, "0.0.4")) {
        c->odd_versions++;
        char q[96];
        snprintf(q, sizeof q, "'%.80s'", k->version[0] ? k->version : "(none)");
        add_to_list(c->version_list, sizeof c->version_list, q);
      }
    }
  }
  while (rc == DT_OK) {
    at = r.offset;
    got = read_msg(&r, &len, err);
    if (got < 0) {
      rc = DT_ERR;
      break;
    }
    if (got == 0)
      break;
    arena_reset(&ar);
    Dtchakra__Node *n = dtchakra__node__unpack(&alloc, (size_t)len, r.buf);
    if (!n) {
      rc = dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": a message of %" PRIu64 " bytes that is not a "
                        "Chakra Node (protobuf decoding failed)", at, len);
      break;
    }
    k->nodes = dt_grow(k->nodes, &k->cap, k->nnodes, sizeof *k->nodes);
    cnode *x = &k->nodes[k->nnodes++];
    memset(x, 0, sizeof *x);
    x->id = n->id;
    x->type = n->type;
    x->start_us = n->start_time_micros;
    x->dur_us = n->duration_micros;
    x->offset = at;
    x->name = n->name && n->name[0] ? dt_strtab_intern(&c->names, n->name, strnlen(n->name, 120)) : -1;
    x->deps_at = k->ndeps;
    size_t nd = n->n_ctrl_deps + n->n_data_deps;
    if (k->ndeps + nd + 1 > k->dcap) {
      while (k->ndeps + nd + 1 > k->dcap)
        k->dcap = k->dcap ? k->dcap * 2 : 1024;
      k->deps = dt_xrealloc(k->deps, k->dcap * sizeof *k->deps);
    }
    for (size_t i = 0; i < n->n_ctrl_deps; i++)
      k->deps[k->ndeps++] = n->ctrl_deps[i];
    for (size_t i = 0; i < n->n_data_deps; i++)
      k->deps[k->ndeps++] = n->data_deps[i];
    x->ndeps = (uint32_t)(k->ndeps - x->deps_at);
    for (size_t i = 0; i < n->n_attr && rc == DT_OK; i++) {
      const Dtchakra__Attr *a = n->attr[i];
      if (!a->name)
        continue;
      int64_t v = 0;
      int neg = 0;
      int isint = attr_int(a, &v, &neg) == DT_OK;
      const char *an = a->name;
      if (strcmp(an, "comm_size") == 0 || strcmp(an, "comm_type") == 0 || strcmp(an, "comm_src") == 0 ||
          strcmp(an, "comm_dst") == 0 || strcmp(an, "comm_tag") == 0) {
        if (!isint)
          rc = dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": node %" PRIu64 " attribute %s is not an "
                            "integer below 2^63 (value field %d)", at, x->id, an, (int)a->value_case);
        else if (neg && strcmp(an, "comm_tag") != 0)
          rc = dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": node %" PRIu64 " attribute %s is negative (%"
                            PRId64 ")", at, x->id, an, v);
        else if (strcmp(an, "comm_size") == 0) {
          x->comm_size = (uint64_t)v;
          x->has_size = 1;
        } else if (strcmp(an, "comm_type") == 0) {
          x->comm_type = v;
          x->has_comm_type = 1;
        } else if (strcmp(an, "comm_src") == 0) {
          x->src = v;
          x->has_src = 1;
        } else if (strcmp(an, "comm_dst") == 0) {
          x->dst = v;
          x->has_dst = 1;
        } else {
          x->tag = v;
        }
      } else if (strcmp(an, "pg_name") == 0 && a->value_case == DTCHAKRA__ATTR__VALUE_STRING_VAL) {
        x->pg = intern_pg(c, a->string_val ? a->string_val : "");
      } else if (strcmp(an, "is_cpu_op") == 0 && isint) {
        x->cpu = v != 0;
      }
    }
  }
  arena_reset(&ar);
  free(ar.p);
  free(ar.big);
  gzclose(r.f);
  free(r.buf);
  return rc;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Node id lookup (open addressing) */

typedef struct idmap {
  uint64_t *keys;
  int64_t *vals;
  size_t cap;
} idmap;

static uint64_t mixid(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static void idmap_init(idmap *m, size_t n)
{
  m->cap = 16;
  while (m->cap < 2 * n + 16)
    m->cap *= 2;
  m->keys = dt_xmalloc(m->cap * sizeof *m->keys);
  m->vals = dt_xmalloc(m->cap * sizeof *m->vals);
  for (size_t i = 0; i < m->cap; i++)
    m->vals[i] = -1;
}

/* Inserts id -> v; returns the existing value when id is there already, else -1. */
static int64_t idmap_put(idmap *m, uint64_t id, int64_t v)
{
  size_t k = mixid(id) & (m->cap - 1);
  while (m->vals[k] >= 0) {
    if (m->keys[k] == id)
      return m->vals[k];
    k = (k + 1) & (m->cap - 1);
  }
  m->keys[k] = id;
  m->vals[k] = v;
  return -1;
}

static int64_t idmap_get(const idmap *m, uint64_t id)
{
  size_t k = mixid(id) & (m->cap - 1);
  while (m->vals[k] >= 0) {
    if (m->keys[k] == id)
      return m->vals[k];
    k = (k + 1) & (m->cap - 1);
  }
  return -1;
}

/* A binary min-heap of node indices by (start time, file order). */
typedef struct heap {
  int64_t *a;
  size_t n;
  const cnode *nodes;
} heap;

static int before(const heap *h, int64_t x, int64_t y)
{
  const cnode *a = &h->nodes[x], *b = &h->nodes[y];
  return a->start_us != b->start_us ? a->start_us < b->start_us : x < y;
}

static void heap_push(heap *h, int64_t v)
{
  size_t i = h->n++;
  h->a[i] = v;
  while (i > 0 && before(h, h->a[i], h->a[(i - 1) / 2])) {
    int64_t t = h->a[i];
    h->a[i] = h->a[(i - 1) / 2];
    h->a[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static int64_t heap_pop(heap *h)
{
  int64_t top = h->a[0];
  h->a[0] = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && before(h, h->a[l], h->a[m]))
      m = l;
    if (r < h->n && before(h, h->a[r], h->a[m]))
      m = r;
    if (m == i)
      break;
    int64_t t = h->a[i];
    h->a[i] = h->a[m];
    h->a[m] = t;
    i = m;
  }
  return top;
}

/* ---------------------------------------------------------------------------------------------------- */

/* Our op kind of a collective node's comm_type (Chakra 0.0.4 CollectiveCommType); -1 unknown. */
static int coll_kind(int64_t t, const char **name)
{
  static const struct {
    dt_op_kind kind;
    const char *name;
  } m[] = {{DT_OP_ALLREDUCE, "ALL_REDUCE"}, {DT_OP_REDUCE, "REDUCE"},       {DT_OP_ALLGATHER, "ALL_GATHER"},
           {DT_OP_OTHER, "GATHER"},        {DT_OP_OTHER, "SCATTER"},       {DT_OP_BROADCAST, "BROADCAST"},
           {DT_OP_ALLTOALL, "ALL_TO_ALL"}, {DT_OP_REDUCESCATTER, "REDUCE_SCATTER"},
           {DT_OP_REDUCESCATTER, "REDUCE_SCATTER_BLOCK"}, {DT_OP_BARRIER, "BARRIER"}};
  if (t < 0 || t >= (int64_t)(sizeof m / sizeof m[0])) {
    *name = NULL;
    return -1;
  }
  *name = m[t].name;
  return (int)m[t].kind;
}

typedef struct pos {
  int32_t stream; /* stream id (sN) */
  int32_t index;
} pos;

/* Orders rank k's graph and appends its ops. groups[pg] is the trace group of process group pg. */
static int build_rank(chk *c, crank *k, dt_trace *t, const int32_t *groups, dt_error *err)
{
  size_t n = k->nnodes;
  idmap ids;
  idmap_init(&ids, n);
  int rc = DT_OK;
  for (size_t i = 0; i < n; i++) {
    int64_t prev = idmap_put(&ids, k->nodes[i].id, (int64_t)i);
    if (prev >= 0) {
      free(ids.keys);
      free(ids.vals);
      return dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": node id %" PRIu64 " again (first at byte %" PRIu64
                          "): node ids must be unique", k->nodes[i].offset, k->nodes[i].id, k->nodes[prev].offset);
    }
  }
  /* children lists (CSR) and in-degrees; a parent that is not in the file is a warning, its edge dropped */
  uint32_t *indeg = dt_xcalloc(n ? n : 1, sizeof *indeg);
  size_t *cstart = dt_xcalloc(n + 1, sizeof *cstart);
  int64_t *parent = dt_xmalloc((k->ndeps ? k->ndeps : 1) * sizeof *parent);
  for (size_t i = 0; i < n && rc == DT_OK; i++) {
    const cnode *x = &k->nodes[i];
    for (uint32_t d = 0; d < x->ndeps; d++) {
      int64_t p = idmap_get(&ids, k->deps[x->deps_at + d]);
      parent[x->deps_at + d] = p;
      if (p == (int64_t)i) { /* a self-edge is a cycle of one */
        rc = dt_error_set(err, k->path, 0, 0, "rank %d: node %" PRIu64 " (at byte %" PRIu64 ") depends on itself: a "
                          "dependency cycle", (int)k->rank, x->id, x->offset);
        break;
      }
      if (p >= 0) {
        cstart[p + 1]++;
        indeg[i]++;
      } else {
        c->missing_parents++;
        char item[80];
        snprintf(item, sizeof item, "rank %d node %" PRIu64 " -> %" PRIu64, (int)k->rank, x->id,
                 k->deps[x->deps_at + d]);
        add_to_list(c->missing_list, sizeof c->missing_list, item);
      }
    }
  }
  if (rc != DT_OK) {
    free(indeg);
    free(cstart);
    free(parent);
    free(ids.keys);
    free(ids.vals);
    return rc;
  }
  for (size_t i = 0; i < n; i++)
    cstart[i + 1] += cstart[i];
  int64_t *child = dt_xmalloc((cstart[n] ? cstart[n] : 1) * sizeof *child);
  size_t *fill = dt_xmalloc((n ? n : 1) * sizeof *fill);
  for (size_t i = 0; i < n; i++)
    fill[i] = cstart[i];
  for (size_t i = 0; i < n; i++) {
    const cnode *x = &k->nodes[i];
    for (uint32_t d = 0; d < x->ndeps; d++)
      if (parent[x->deps_at + d] >= 0)
        child[fill[parent[x->deps_at + d]]++] = (int64_t)i;
  }
  free(fill);
  heap h = {dt_xmalloc((n ? n : 1) * sizeof *h.a), 0, k->nodes};
  for (size_t i = 0; i < n; i++)
    if (indeg[i] == 0)
      heap_push(&h, (int64_t)i);
  pos *where = dt_xmalloc((n ? n : 1) * sizeof *where);
  size_t done = 0;
  /* the latest op each node must wait for on each stream: collected per node from its parents */
  dt_dep *deps = dt_xmalloc(sizeof *deps * 64);
  size_t depcap = 64;
  while (h.n > 0 && rc == DT_OK) {
    int64_t i = heap_pop(&h);
    cnode *x = &k->nodes[i];
    int32_t stream;
    dt_op_kind kind;
    int32_t group = -1;
    if (x->type == T_COLL) {
      const char *cname;
      int ck = x->has_comm_type ? coll_kind(x->comm_type, &cname) : -1;
      if (ck < 0) {
        c->unknown_types++;
        char item[48];
        snprintf(item, sizeof item, x->has_comm_type ? "comm_type %" PRId64 : "no comm_type", x->comm_type);
        add_to_list(c->unknown_list, sizeof c->unknown_list, item);
        kind = DT_OP_OTHER;
      } else {
        kind = (dt_op_kind)ck;
      }
      stream = 2 + x->pg;
      group = groups[x->pg];
      if (!x->has_size && kind != DT_OP_BARRIER)
        c->no_size++;
    } else if (x->type == T_SEND || x->type == T_RECV) {
      kind = x->type == T_SEND ? DT_OP_SEND : DT_OP_RECV;
      stream = 2 + x->pg;
      if (!x->has_size)
        c->no_size++;
    } else if ((x->type == T_COMP || x->type == T_MEM_LOAD || x->type == T_MEM_STORE) && !x->cpu) {
      kind = DT_OP_COMPUTE;
      stream = 1;
    } else { /* host ops, metadata and node types dtsim does not model: host time, keeping the graph's order */
      kind = DT_OP_DELAY;
      stream = 0;
      if (x->type != T_COMP && x->type != T_METADATA && x->type != T_MEM_LOAD && x->type != T_MEM_STORE) {
        c->other_types++;
        char item[32];
        snprintf(item, sizeof item, "type %d", (int)x->type);
        add_to_list(c->other_list, sizeof c->other_list, item);
      }
    }
    /* after= edges: for each other stream, the latest parent on it */
    size_t nd = 0;
    for (uint32_t d = 0; d < x->ndeps; d++) {
      int64_t p = parent[x->deps_at + d];
      if (p < 0 || where[p].stream == stream)
        continue;
      size_t j = 0;
      while (j < nd && deps[j].stream != where[p].stream)
        j++;
      if (j == nd) {
        if (nd == depcap) {
          depcap *= 2;
          deps = dt_xrealloc(deps, depcap * sizeof *deps);
        }
        deps[nd].stream = where[p].stream;
        deps[nd++].index = where[p].index;
      } else if (where[p].index > deps[j].index) {
        deps[j].index = where[p].index;
      }
    }
    int spos = dt_trace_stream(t, k->rank, stream, 1);
    dt_op *op = dt_trace_append(t, k->rank, stream);
    where[i].stream = stream;
    where[i].index = (int32_t)(t->ranks[k->rank].streams[spos].nops - 1);
    op->kind = kind;
    op->file = k->file;
    op->line = (uint32_t)done + 1; /* issue order: the topological order */
    if (x->name >= 0)
      op->name = dt_xstrdup(c->names.s[x->name]);
    if (kind == DT_OP_COMPUTE || kind == DT_OP_DELAY) {
      op->dur = (double)x->dur_us * 1e-6;
    } else if (kind == DT_OP_SEND || kind == DT_OP_RECV) {
      int has = kind == DT_OP_SEND ? x->has_dst : x->has_src;
      int64_t peer = kind == DT_OP_SEND ? x->dst : x->src;
      if (!has || peer < 0 || peer >= c->nranks) {
        rc = dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": %s node %" PRIu64 " has %s %s: expected a rank "
                          "0-%d", x->offset, kind == DT_OP_SEND ? "send" : "recv", x->id,
                          kind == DT_OP_SEND ? "comm_dst" : "comm_src", has ? "out of range" : "missing",
                          (int)c->nranks - 1);
        break;
      }
      op->peer = (int32_t)peer;
      op->tag = x->tag;
      op->bytes = x->comm_size;
    } else {
      op->group = group;
      uint64_t b = x->comm_size;
      if (kind == DT_OP_ALLGATHER) { /* comm_size is the gathered output: our bytes are the shard */
        size_t gn = t->groups[group].nranks;
        if (b % gn) {
          rc = dt_error_set(err, k->path, 0, 0, "at byte %" PRIu64 ": all-gather node %" PRIu64 " has comm_size %"
                            PRIu64 ", not a multiple of its group's %zu ranks (comm_size is the gathered output)",
                            x->offset, x->id, b, gn);
          break;
        }
        b /= gn;
      }
      op->bytes = kind == DT_OP_BARRIER ? 0 : b;
    }
    if (nd) {
      op->ndeps = (uint32_t)nd;
      op->deps = dt_xmalloc(nd * sizeof *op->deps);
      for (size_t j = 0; j < nd; j++) { /* stream ids -> stream positions */
        op->deps[j].stream = dt_trace_stream(t, k->rank, deps[j].stream, 0);
        op->deps[j].index = deps[j].index;
      }
    }
    done++;
    for (size_t e = cstart[i]; e < cstart[i + 1]; e++)
      if (--indeg[child[e]] == 0)
        heap_push(&h, child[e]);
  }
  if (rc == DT_OK && done < n) {
    /* a cycle: walk parents among the unfinished nodes until one repeats (iterative, bounded by n) */
    int64_t s = -1;
    for (size_t i = 0; i < n && s < 0; i++)
      if (indeg[i] > 0)
        s = (int64_t)i;
    int64_t *seen = dt_xmalloc(n * sizeof *seen);
    for (size_t i = 0; i < n; i++)
      seen[i] = -1;
    int64_t cur = s, step = 0;
    while (seen[cur] < 0) {
      seen[cur] = step++;
      const cnode *x = &k->nodes[cur];
      int64_t next = -1;
      for (uint32_t d = 0; d < x->ndeps && next < 0; d++) {
        int64_t p = parent[x->deps_at + d];
        if (p >= 0 && indeg[p] > 0)
          next = p;
      }
      cur = next;
    }
    char list[512] = "";
    int64_t first = cur;
    int count = 0;
    do {
      char item[32];
      snprintf(item, sizeof item, "%s%" PRIu64, list[0] ? " <- " : "", k->nodes[cur].id);
      if (strlen(list) + strlen(item) < sizeof list - 8)
        strcat(list, item);
      const cnode *x = &k->nodes[cur];
      int64_t next = -1;
      for (uint32_t d = 0; d < x->ndeps && next < 0; d++) {
        int64_t p = parent[x->deps_at + d];
        if (p >= 0 && indeg[p] > 0 && seen[p] >= seen[first])
          next = p;
      }
      cur = next;
      count++;
    } while (cur >= 0 && cur != first && count < 1000000);
    free(seen);
    rc = dt_error_set(err, k->path, 0, 0, "rank %d: a dependency cycle through nodes %s <- %" PRIu64 " (%zu nodes "
                      "cannot be ordered)", (int)k->rank, list, k->nodes[first].id, n - done);
  }
  free(deps);
  free(where);
  free(h.a);
  free(child);
  free(indeg);
  free(cstart);
  free(parent);
  free(ids.keys);
  free(ids.vals);
  return rc;
}

/* The rank in "<prefix>.<rank>.et" or "<prefix>.<rank>.et.gz"; -1 when the name has none. */
static int32_t name_rank(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
    n -= 3;
  if (n < 4 || strncmp(base + n - 3, ".et", 3) != 0)
    return -1;
  n -= 3;
  size_t e = n;
  while (n > 0 && base[n - 1] >= '0' && base[n - 1] <= '9')
    n--;
  if (n == e || n == 0 || base[n - 1] != '.' || e - n > 7)
    return -1;
  return (int32_t)strtol(base + n, NULL, 10);
}

static void free_chk(chk *c)
{
  for (int32_t r = 0; c->ranks && r < c->nranks; r++) { /* ranks is NULL when the file names were refused */
    crank *k = &c->ranks[r];
    free(k->nodes);
    free(k->deps);
    free(k->version);
  }
  free(c->ranks);
  for (size_t i = 0; i < c->npgs; i++)
    free(c->pgs[i]);
  free(c->pgs);
  dt_strtab_free(&c->names);
}

int dt_chakra_import(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                     dt_error *err)
{
  (void)opts;
  *out = NULL;
  chk c;
  memset(&c, 0, sizeof c);
  intern_pg(&c, "");
  int32_t max = -1;
  for (size_t i = 0; i < npaths; i++) {
    int32_t r = name_rank(paths[i]);
    if (r < 0 && npaths > 1) {
      free_chk(&c);
      return dt_error_set(err, paths[i], 0, 0, "no rank in the file name: expected <prefix>.<rank>.et or "
                          "<prefix>.<rank>.et.gz, one file per rank");
    }
    if (r > max)
      max = r;
  }
  c.nranks = npaths == 1 ? (max < 0 ? 1 : max + 1) : max + 1;
  if (npaths > 1 && (size_t)c.nranks != npaths) {
    free_chk(&c);
    return dt_error_set(err, paths[0], 0, 0, "%zu files for ranks up to %d: give one file per rank, every rank "
                        "from 0 to %d", npaths, (int)max, (int)max);
  }
  if (c.nranks > DT_TRACE_MAX_RANKS) {
    free_chk(&c);
    return dt_error_set(err, paths[0], 0, 0, "rank %d is more than dtsim's %d ranks", (int)max, DT_TRACE_MAX_RANKS);
  }
  c.ranks = dt_xcalloc((size_t)c.nranks, sizeof *c.ranks);
  int32_t only = npaths == 1 ? (max < 0 ? 0 : max) : -1; /* a single file: its rank alone holds ops */
  for (size_t i = 0; i < npaths; i++) {
    int32_t r = npaths == 1 ? only : name_rank(paths[i]);
    if (c.ranks[r].path) {
      const char *first = c.ranks[r].path;
      free_chk(&c);
      return dt_error_set(err, paths[i], 0, 0, "rank %d again (first '%s')", (int)r, first);
    }
    c.ranks[r].path = paths[i];
    c.ranks[r].rank = r;
  }
  int rc = DT_OK;
  for (int32_t r = 0; r < c.nranks && rc == DT_OK; r++)
    if (c.ranks[r].path)
      rc = read_rank(&c, &c.ranks[r], err);
  dt_trace *t = NULL;
  int32_t *groups = NULL;
  if (rc == DT_OK) {
    t = dt_trace_new(c.nranks);
    for (int32_t r = 0; r < c.nranks; r++)
      if (c.ranks[r].path)
        c.ranks[r].file = dt_trace_add_file(t, c.ranks[r].path);
    /* groups: a process group is the ranks whose files use its pg_name; collectives without one use the world */
    groups = dt_xmalloc(c.npgs * sizeof *groups);
    int32_t *ranks = dt_xmalloc((size_t)c.nranks * sizeof *ranks);
    uint8_t *uses = dt_xmalloc((size_t)c.nranks);
    for (size_t pg = 0; pg < c.npgs && rc == DT_OK; pg++) {
      size_t m = 0;
      if (pg == 0) {
        for (int32_t r = 0; r < c.nranks; r++)
          ranks[m++] = r;
      } else {
        memset(uses, 0, (size_t)c.nranks);
        for (int32_t r = 0; r < c.nranks; r++)
          for (size_t i = 0; i < c.ranks[r].nnodes && !uses[r]; i++)
            uses[r] = c.ranks[r].nodes[i].pg == (int32_t)pg;
        for (int32_t r = 0; r < c.nranks; r++)
          if (uses[r])
            ranks[m++] = r;
      }
      char name[64];
      snprintf(name, sizeof name, pg == 0 ? "world" : "pg%zu", pg);
      groups[pg] = dt_trace_add_group(t, name, ranks, m, c.ranks[only >= 0 ? only : 0].file, 0, err);
      if (groups[pg] < 0) {
        rc = DT_ERR;
        break;
      }
      if (pg > 0) {
        char list[160] = "";
        for (size_t j = 0; j < m && strlen(list) < 120; j++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", j ? "," : "", (int)ranks[j]);
        dt_trace_add_note(t, "chakra: group '%s' = pg_name '%s', the %zu ranks whose files use it (%s%s)", name,
                          c.pgs[pg], m, list, strlen(list) >= 120 ? ",…" : "");
      }
    }
    free(ranks);
    free(uses);
    for (int32_t r = 0; r < c.nranks && rc == DT_OK; r++)
      if (c.ranks[r].path) {
        rc = build_rank(&c, &c.ranks[r], t, groups, err);
        c.nodes_total += c.ranks[r].nnodes;
        free(c.ranks[r].nodes); /* the rank's ops are built: its graph is no longer needed */
        free(c.ranks[r].deps);
        c.ranks[r].nodes = NULL;
        c.ranks[r].deps = NULL;
      }
  }
  free(groups);
  if (rc == DT_OK) {
    dt_trace_add_meta(t, "source", paths[0]);
    dt_trace_add_meta(t, "format", "chakra");
    size_t nodes = c.nodes_total;
    dt_trace_add_note(t, "chakra: %zu nodes of %zu rank file%s ordered by their dependencies (ctrl_deps and "
                      "data_deps; ties by start time, then file order)", nodes, npaths, npaths == 1 ? "" : "s");
    if (npaths == 1 && c.nranks > 1)
      dt_trace_add_note(t, "chakra: only rank %d's file was given: the other ranks are idle", (int)only);
    if (c.odd_versions)
      dt_trace_add_note(t, "chakra: warning: schema version %s is not the 0.0.4 dtsim knows: parsed with the 0.0.4 "
                        "layout", c.version_list);
    if (c.missing_parents)
      dt_trace_add_note(t, "chakra: warning: %" PRIu64 " dependencies on nodes that are not in the file were "
                        "dropped (%s)", c.missing_parents, c.missing_list);
    if (c.no_size)
      dt_trace_add_note(t, "chakra: warning: %" PRIu64 " communication nodes have no comm_size attribute: imported "
                        "as 0 bytes (latency only)", c.no_size);
    if (c.other_types)
      dt_trace_add_note(t, "chakra: warning: %" PRIu64 " nodes of types dtsim does not model (%s) kept as host time "
                        "(their duration_micros on the host stream)", c.other_types, c.other_list);
    if (c.unknown_types)
      dt_trace_add_note(t, "chakra: warning: %" PRIu64 " collective nodes of a type dtsim does not know (%s) kept as "
                        "opaque 'other' collectives of their comm_size", c.unknown_types, c.unknown_list);
    dt_import_note_assumptions(t, "chakra");
    *out = t;
  } else {
    dt_trace_free(t);
  }
  free_chk(&c);
  return rc;
}
