/* Kineto (PyTorch profiler Chrome-trace JSON) importer, metadata vintage 1 (FORMATS.md): streams a .json or
 * .json.gz file through zlib's gzread into yajl's SAX parser, keeps only the GPU events replay needs, then
 * builds the per-stream op lists of the captured rank and expands them to every rank by symmetry
 * (DESIGN.md §4). docs/import-kineto.md describes the mappings and assumptions. */
#include "dt_import_util.h"
#include "dt_trace_io.h"

#include "../common/dt_json.h"
#include "../common/dt_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define NAME_CAP 4096     /* longest event name kept while parsing (kernel names are long C++ signatures) */
#define SHORT_NAME_CAP 120 /* op names are cut to the function name and this length */
#define MAX_DEPTH DT_JSON_MAX_DEPTH /* deeper JSON is refused (common/dt_json.h) */
#define CHUNK (1u << 20)
/* Limits of a capture, checked before the work they bound (docs/import-kineto.md): yajl re-reads a token that
 * spans its input chunks, so one huge string or number is quadratic; find_deps keeps a vector clock of every
 * stream per GPU op and a stream x stream table. */
#define MAX_TOKEN (16u << 20)           /* bytes of one JSON string or number */
#define MAX_STREAMS 256                 /* CUDA streams of the captured rank */
#define MAX_CLOCK_ENTRIES (1u << 26)    /* GPU ops x streams (4 bytes each: 256 MiB) */
/* Kineto times are microseconds; kept as integer nanoseconds within +-2^62 so that ts + dur cannot overflow. */
#define MAX_ABS_NS ((int64_t)1 << 62)

/* ---------------------------------------------------------------------------------------------------- */
/* What the parser keeps. Times are integer nanoseconds (Kineto writes microseconds with up to three
 * decimals; doubles near 4e12 us would lose the last digit). */

typedef struct gpu_ev {
  int64_t ts, dur;  /* ns */
  int64_t corr;     /* CUPTI correlation id, -1 when absent */
  int64_t stream;   /* CUDA stream number as captured (any integer: mapped to a valid sN by build_trace) */
  int32_t name;     /* interned short name */
  int32_t comm;     /* index in comms[] for NCCL kernels, else -1 */
  uint32_t seq;     /* file order, for a stable sort */
  int pageable_d2h; /* a device-to-pageable copy: its cudaMemcpyAsync blocks the host until it is done */
  uint32_t event;   /* index of the event in traceEvents */
} gpu_ev;

typedef struct comm_ev {
  int32_t coll;     /* interned `Collective name`, -1 when absent */
  int has_in, has_out;
  int64_t in_nelems, out_nelems;
  int64_t group_size; /* -1 when absent */
  int32_t dtype;    /* interned, -1 when absent */
  int32_t group;    /* index in groups[], -1 when the kernel has no process-group metadata */
  int64_t rank, src, dst; /* p2p `Rank` (group-local peer), `Src Rank`, `Dst Rank`; -1 when absent */
  int64_t seq;      /* `Seq`: the process group's collective sequence number (newer PyTorch), -1 when absent */
  int64_t *in_split; /* `In split size` (all-to-allv: rows sent to each member), owned, NULL when empty */
  uint32_t nin_split;
} comm_ev;

/* What a kept cuda_runtime call does to the host timeline. */
enum { RT_LAUNCH, RT_MEMCPY_SYNC, RT_SYNC_STREAM, RT_SYNC_EVENT, RT_SYNC_DEVICE };

typedef struct launch_ev { /* cuda_runtime call: a launch (linked to its GPU op by corr) or a blocking call */
  int64_t corr, ts, dur, pid, tid;
  int kind;         /* RT_* */
} launch_ev;

typedef struct span_ev { /* CPU user_annotation (ProfilerStep#N, nccl:*) or a record_param_comms with shapes */
  int64_t ts, dur, pid, tid;
  int32_t name;     /* interned name without `nccl:`; -1 for record_param_comms */
  int64_t nelems;   /* vintage 2: elements of the first tensor in `Input Dims`, -1 when none */
  int32_t dtype;    /* interned `Input type` of that tensor, -1 when none */
  int64_t seq;      /* record_param_comms `Seq`, -1 when none */
  uint32_t event;   /* index of the event in traceEvents */
} span_ev;

typedef struct cgroup { /* a captured process group */
  char *pg_name;    /* `Process Group Name`, NULL when absent */
  char *pg_desc;
  char *ranks_text; /* `Process Group Ranks` as written */
  int64_t size;     /* `Group size`, -1 when absent */
  int32_t *ranks;   /* resolved global ranks (after parsing) */
  size_t nranks;
  int32_t first_tile; /* trace group index of tile 0 */
  int32_t *tile_of; /* per expanded rank: trace group index */
  int used_as_world; /* synthetic group of every rank (kernels with no metadata) */
} cgroup;

typedef struct pgcfg { /* distributedInfo.pg_config entry */
  char *name, *desc;
  int64_t size;
  int32_t *ranks;
  size_t nranks, cap;
} pgcfg;

enum {
  ROLE_OTHER, ROLE_TOP, ROLE_DIST, ROLE_PGCFG, ROLE_PGENT, ROLE_PGRANKS, ROLE_EVENTS, ROLE_EVENT, ROLE_ARGS,
  ROLE_DIMS,  /* `Input Dims`: a list of shapes */
  ROLE_DIMS1, /* one shape of `Input Dims` */
  ROLE_TYPES, /* `Input type`: a list of type names */
};

enum {
  K_NONE,
  /* top */
  K_SCHEMA, K_DIST, K_EVENTS,
  /* distributedInfo */
  K_RANK, K_WORLD, K_PGCFG,
  /* pg_config entry */
  K_PG_NAME, K_PG_DESC, K_PG_SIZE, K_PG_RANKS,
  /* event */
  K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_PID, K_TID, K_ARGS,
  /* args */
  K_STREAM, K_CORR, K_COLL, K_IN_NELEMS, K_OUT_NELEMS, K_GROUP_SIZE, K_DTYPE, K_PGA_NAME, K_PGA_DESC, K_PGA_RANKS,
  K_P2P_RANK, K_SRC_RANK, K_DST_RANK, K_INPUT_DIMS, K_INPUT_TYPE, K_SEQ, K_IN_SPLIT,
  K_COUNT
};
_Static_assert(K_COUNT <= 64, "frame.seen holds one bit per key");

typedef struct keydef {
  int role;
  const char *name;
  int key;
} keydef;

static const keydef keys[] = {
    {ROLE_TOP, "schemaVersion", K_SCHEMA},
    {ROLE_TOP, "distributedInfo", K_DIST},
    {ROLE_TOP, "traceEvents", K_EVENTS},
    {ROLE_DIST, "rank", K_RANK},
    {ROLE_DIST, "world_size", K_WORLD},
    {ROLE_DIST, "pg_config", K_PGCFG},
    {ROLE_PGENT, "pg_name", K_PG_NAME},
    {ROLE_PGENT, "pg_desc", K_PG_DESC},
    {ROLE_PGENT, "pg_size", K_PG_SIZE},
    {ROLE_PGENT, "ranks", K_PG_RANKS},
    {ROLE_EVENT, "ph", K_PH},
    {ROLE_EVENT, "cat", K_CAT},
    {ROLE_EVENT, "name", K_NAME},
    {ROLE_EVENT, "ts", K_TS},
    {ROLE_EVENT, "dur", K_DUR},
    {ROLE_EVENT, "pid", K_PID},
    {ROLE_EVENT, "tid", K_TID},
    {ROLE_EVENT, "args", K_ARGS},
    {ROLE_ARGS, "stream", K_STREAM},
    {ROLE_ARGS, "correlation", K_CORR},
    {ROLE_ARGS, "Collective name", K_COLL},
    {ROLE_ARGS, "In msg nelems", K_IN_NELEMS},
    {ROLE_ARGS, "Out msg nelems", K_OUT_NELEMS},
    {ROLE_ARGS, "Group size", K_GROUP_SIZE},
    {ROLE_ARGS, "dtype", K_DTYPE},
    {ROLE_ARGS, "Process Group Name", K_PGA_NAME},
    {ROLE_ARGS, "Process Group Description", K_PGA_DESC},
    {ROLE_ARGS, "Process Group Ranks", K_PGA_RANKS},
    {ROLE_ARGS, "Rank", K_P2P_RANK},
    {ROLE_ARGS, "Src Rank", K_SRC_RANK},
    {ROLE_ARGS, "Dst Rank", K_DST_RANK},
    {ROLE_ARGS, "Seq", K_SEQ},
    {ROLE_ARGS, "In split size", K_IN_SPLIT},
    {ROLE_ARGS, "Input Dims", K_INPUT_DIMS},
    {ROLE_ARGS, "Input type", K_INPUT_TYPE},
};

enum { CAT_OTHER, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_USER_ANNOTATION, CAT_CPU_OP };

/* One event being parsed: its fields arrive in any order and are acted on at the closing brace. */
typedef struct evacc {
  char ph;
  int cat;
  char name[NAME_CAP];
  size_t name_len;
  int has_ts, has_dur, has_stream, has_tid;
  int64_t ts, dur, pid, tid, stream, corr;
  char coll[128], dtype[64], pg_name[256], pg_desc[256];
  int has_coll, has_dtype, has_pg_name, has_pg_desc, has_pg_ranks;
  int64_t *split;   /* `In split size` rows, kept across events like pg_ranks */
  size_t nsplit, split_cap;
  int split_bad;     /* a split list that is not a list of non-negative integers */
  char *pg_ranks;
  size_t pg_ranks_len, pg_ranks_cap;
  int has_in, has_out;
  int64_t in_nelems, out_nelems, group_size, p2p_rank, src, dst, seq;
  int has_input_dims;
  /* `Input Dims` / `Input type` (vintage 2): the first shape that lists any dimension gives the size */
  int dims_cur;       /* index of the shape being read, -1 before the first */
  int dims_index;     /* index of the shape that gave dims_nelems, -1 when none */
  int dims_overflow;  /* the product does not fit in 63 bits */
  int64_t dims_nelems;
  int ntypes;
  char types[8][48];
  uint32_t event;   /* index of the event in traceEvents */
} evacc;

typedef struct frame {
  int role;
  int key;
  uint64_t seen; /* keys of the object already given (bit K_...): a second one is refused */
} frame;

typedef struct kin {
  const char *path;
  frame frames[MAX_DEPTH];
  int depth;        /* open containers, at most MAX_DEPTH */
  evacc ev;
  uint32_t seq;
  uint32_t nevents; /* traceEvents entries opened so far */
  /* file level */
  int64_t dist_rank, dist_world; /* -1 when absent */
  char schema[64];
  pgcfg *pgs;
  size_t npgs, pgs_cap;
  pgcfg cur_pg;
  int in_pg;
  /* kept events */
  dt_strtab names;
  gpu_ev *gpu;
  size_t ngpu, gpu_cap;
  comm_ev *comms;
  size_t ncomms, comms_cap;
  launch_ev *launches;
  size_t nlaunches, launches_cap;
  span_ev *steps;
  size_t nsteps, steps_cap;
  span_ev *annots; /* nccl:* */
  size_t nannots, annots_cap;
  cgroup *groups;
  size_t ngroups, groups_cap;
  int seen_input_dims; /* a record_param_comms with `Input Dims`: vintage 2 */
  int bad_value;       /* a value that could not be read, reported through err */
  char bad_msg[256];
  /* where the parser is: callbacks read yajl_get_bytes_consumed (within the chunk) and add base */
  yajl_handle h;
  uint64_t base;
  uint64_t key_at[K_COUNT]; /* byte after each key's first occurrence in its (open) object */
  char stop_msg[320];        /* a structural error found in a callback, with its byte offset; stops the parse */
  int stop_depth;            /* the stop is the nesting limit (stop_msg unused) */
  uint64_t stop_at;
} kin;

/* ---------------------------------------------------------------------------------------------------- */
/* Scalars. */

/* Parses a JSON number (or a numeric string) in microseconds into integer nanoseconds, exactly for the usual
 * plain decimal forms. Returns 0 or -1. */
static int parse_us_ns(const char *s, size_t len, int64_t *out)
{
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  if (strpbrk(buf, "eE")) {
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !(fabs(v) * 1000.0 <= (double)MAX_ABS_NS)) /* also refuses NaN */
      return -1;
    *out = (int64_t)(v * 1000.0 + (v >= 0 ? 0.5 : -0.5));
    return 0;
  }
  const char *p = buf;
  int neg = 0;
  if (*p == '-' || *p == '+')
    neg = *p++ == '-';
  int64_t whole = 0, frac = 0;
  int ndig = 0, nfrac = 0;
  for (; isdigit((unsigned char)*p); p++, ndig++) {
    if (whole > (INT64_MAX / 1000 - 9) / 10)
      return -1;
    whole = whole * 10 + (*p - '0');
  }
  if (*p == '.') {
    p++;
    for (; isdigit((unsigned char)*p); p++, nfrac++) {
      if (nfrac < 3)
        frac = frac * 10 + (*p - '0');
      else if (nfrac == 3 && *p >= '5')
        frac++; /* round to the nanosecond */
    }
  }
  if (*p || ndig + nfrac == 0)
    return -1;
  for (int i = nfrac; i < 3; i++)
    frac *= 10;
  int64_t v = whole * 1000 + frac;
  if (v > MAX_ABS_NS)
    return -1;
  *out = neg ? -v : v;
  return 0;
}

/* Parses an integer (JSON number or numeric string; a float with a zero fraction is accepted). */
static int parse_int(const char *s, size_t len, int64_t *out)
{
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (end == buf || errno)
    return -1;
  if (*end) {
    double d = strtod(buf, &end);
    /* the range test first: converting a double outside long long's range is undefined */
    if (*end || !(d > -9.2e18 && d < 9.2e18) || d != (double)(long long)d)
      return -1;
    v = (long long)d;
  }
  *out = v;
  return 0;
}

static void copy_text(char *dst, size_t cap, const char *s, size_t len)
{
  if (len >= cap)
    len = cap - 1;
  memcpy(dst, s, len);
  dst[len] = '\0';
}

static int starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int cat_code(const char *s, size_t len)
{
  static const struct {
    const char *name;
    int code;
  } cats[] = {{"kernel", CAT_KERNEL},         {"Kernel", CAT_KERNEL},
              {"gpu_memcpy", CAT_MEMCPY},     {"Memcpy", CAT_MEMCPY},
              {"gpu_memset", CAT_MEMSET},     {"Memset", CAT_MEMSET},
              {"cuda_runtime", CAT_RUNTIME},  {"cuda_driver", CAT_RUNTIME},
              {"Runtime", CAT_RUNTIME},       {"user_annotation", CAT_USER_ANNOTATION},
              {"cpu_op", CAT_CPU_OP},         {"Operator", CAT_CPU_OP}};
  for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++)
    if (strlen(cats[i].name) == len && memcmp(cats[i].name, s, len) == 0)
      return cats[i].code;
  return CAT_OTHER;
}

/* Whether s (len bytes) is a Python list of ranks as PyTorch writes `Process Group Ranks`: '[', whole numbers
 * separated by commas (and spaces), maybe PyTorch's '...' where it cut the list, ']'. */
static int rank_list_ok(const char *s, size_t len)
{
  size_t i = 0;
  while (i < len && s[i] == ' ')
    i++;
  if (i == len || s[i] != '[')
    return 0;
  while (len > i && s[len - 1] == ' ')
    len--;
  if (s[len - 1] != ']')
    return 0;
  for (size_t j = i + 1; j + 1 < len; j++)
    if (!isdigit((unsigned char)s[j]) && s[j] != ',' && s[j] != ' ' && s[j] != '.')
      return 0;
  return 1;
}

static void set_bad(kin *k, const char *fmt, ...) DT_PRINTF(2, 3);
static void set_bad(kin *k, const char *fmt, ...)
{
  if (k->bad_value)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->bad_msg, sizeof k->bad_msg, fmt, ap);
  va_end(ap);
  k->bad_value = 1;
}

/* ---------------------------------------------------------------------------------------------------- */
/* SAX callbacks. */

static frame *top(kin *k)
{
  return k->depth > 0 ? &k->frames[k->depth - 1] : NULL;
}

/* One scalar value (number or string, raw text) at the current position. */
static int on_scalar(kin *k, const char *s, size_t len, int is_string)
{
  frame *f = top(k);
  if (!f)
    return 1;
  evacc *e = &k->ev;
  int64_t v;
  switch (f->role) {
  case ROLE_TOP:
    if (f->key == K_SCHEMA)
      copy_text(k->schema, sizeof k->schema, s, len);
    break;
  case ROLE_DIST:
    if ((f->key == K_RANK || f->key == K_WORLD) && parse_int(s, len, &v) == 0)
      *(f->key == K_RANK ? &k->dist_rank : &k->dist_world) = v;
    break;
  case ROLE_PGENT:
    if (f->key == K_PG_NAME) {
      free(k->cur_pg.name);
      k->cur_pg.name = dt_xstrndup(s, len);
    } else if (f->key == K_PG_DESC) {
      free(k->cur_pg.desc);
      k->cur_pg.desc = dt_xstrndup(s, len);
    } else if (f->key == K_PG_SIZE && parse_int(s, len, &v) == 0)
      k->cur_pg.size = v;
    break;
  case ROLE_PGRANKS:
    if (parse_int(s, len, &v) == 0 && v >= 0 && v <= INT32_MAX) {
      k->cur_pg.ranks = dt_grow(k->cur_pg.ranks, &k->cur_pg.cap, k->cur_pg.nranks, sizeof *k->cur_pg.ranks);
      k->cur_pg.ranks[k->cur_pg.nranks++] = (int32_t)v;
    }
    break;
  case ROLE_EVENT:
    switch (f->key) {
    case K_PH:
      e->ph = len ? s[0] : 0;
      break;
    case K_CAT:
      e->cat = cat_code(s, len);
      break;
    case K_NAME:
      copy_text(e->name, sizeof e->name, s, len);
      e->name_len = len < sizeof e->name ? len : sizeof e->name - 1;
      break;
    case K_TS:
    case K_DUR:
      if (parse_us_ns(s, len, &v) != 0) {
        set_bad(k, "'%s' is not a number of microseconds within +-4.6e15 (about 146 years)",
                f->key == K_TS ? "ts" : "dur");
        return 0;
      }
      if (f->key == K_DUR && v < 0) {
        set_bad(k, "'dur' is negative");
        return 0;
      }
      if (f->key == K_TS)
        e->ts = v, e->has_ts = 1;
      else
        e->dur = v, e->has_dur = 1;
      break;
    case K_PID:
      if (parse_int(s, len, &v) == 0)
        e->pid = v;
      break;
    case K_TID:
      if (parse_int(s, len, &v) == 0)
        e->tid = v, e->has_tid = 1;
      break;
    default:
      break;
    }
    break;
  case ROLE_DIMS1:
    if (parse_int(s, len, &v) == 0 && v >= 0 && (e->dims_index < 0 || e->dims_index == e->dims_cur)) {
      if (e->dims_index < 0) {
        e->dims_index = e->dims_cur;
        e->dims_nelems = 1;
      }
      if (v > 0 && e->dims_nelems > INT64_MAX / v)
        e->dims_overflow = 1;
      else
        e->dims_nelems *= v;
    }
    break;
  case ROLE_TYPES:
    if (e->ntypes < 8)
      copy_text(e->types[e->ntypes], sizeof e->types[0], s, len);
    e->ntypes++;
    break;
  case ROLE_ARGS:
    switch (f->key) {
    case K_STREAM:
      if (parse_int(s, len, &v) == 0)
        e->stream = v, e->has_stream = 1;
      break;
    case K_CORR:
      if (parse_int(s, len, &v) == 0)
        e->corr = v;
      break;
    case K_COLL:
      copy_text(e->coll, sizeof e->coll, s, len);
      e->has_coll = 1;
      break;
    case K_DTYPE:
      copy_text(e->dtype, sizeof e->dtype, s, len);
      e->has_dtype = 1;
      break;
    case K_PGA_NAME:
      copy_text(e->pg_name, sizeof e->pg_name, s, len);
      e->has_pg_name = 1;
      break;
    case K_PGA_DESC:
      copy_text(e->pg_desc, sizeof e->pg_desc, s, len);
      e->has_pg_desc = 1;
      break;
    case K_IN_SPLIT: /* a Python list as text: "[3, 5, 0]" */
      e->nsplit = 0;
      for (size_t q = 0; q < len;) {
        if (isdigit((unsigned char)s[q])) {
          int64_t x = 0;
          while (q < len && isdigit((unsigned char)s[q])) {
            if (x > (INT64_MAX - 9) / 10) {
              e->split_bad = 1;
              break;
            }
            x = x * 10 + (s[q++] - '0');
          }
          e->split = dt_grow(e->split, &e->split_cap, e->nsplit, sizeof *e->split);
          e->split[e->nsplit++] = x;
          if (e->split_bad)
            break;
        } else {
          if (s[q] == '-' || s[q] == '.')
            e->split_bad = 1;
          q++;
        }
      }
      break;
    case K_PGA_RANKS:
      if (!rank_list_ok(s, len)) { /* an unclosed list was read as complete */
        set_bad(k, "'Process Group Ranks' is not a list of ranks such as '[0, 1]' (or PyTorch's cut '[0, 1, ...]'), "
                "found '%.*s%s'", len > 60 ? 60 : (int)len, s, len > 60 ? "..." : "");
        return 0;
      }
      e->pg_ranks = dt_grow(e->pg_ranks, &e->pg_ranks_cap, len + 1, 1);
      memcpy(e->pg_ranks, s, len);
      e->pg_ranks[len] = '\0';
      e->pg_ranks_len = len;
      e->has_pg_ranks = 1;
      break;
    case K_IN_NELEMS:
    case K_OUT_NELEMS:
      if (parse_int(s, len, &v) != 0 || v < 0) {
        set_bad(k, "'%s' is not a non-negative integer below 2^63 (an element count), found '%.*s'",
                f->key == K_IN_NELEMS ? "In msg nelems" : "Out msg nelems", len > 40 ? 40 : (int)len, s);
        return 0;
      }
      if (f->key == K_IN_NELEMS)
        e->in_nelems = v, e->has_in = 1;
      else
        e->out_nelems = v, e->has_out = 1;
      break;
    case K_GROUP_SIZE:
      if (parse_int(s, len, &v) != 0 || v < 1 || v > DT_TRACE_MAX_RANKS) { /* 0 was ignored silently */
        set_bad(k, "'Group size' expects a rank count from 1 to %d, found '%.*s'", DT_TRACE_MAX_RANKS,
                len > 40 ? 40 : (int)len, s);
        return 0;
      }
      e->group_size = v;
      break;
    case K_SEQ:
      if (parse_int(s, len, &v) == 0 && v >= 0)
        e->seq = v;
      break;
    case K_P2P_RANK:
    case K_SRC_RANK:
    case K_DST_RANK:
      if (parse_int(s, len, &v) == 0)
        *(f->key == K_P2P_RANK ? &e->p2p_rank : f->key == K_SRC_RANK ? &e->src : &e->dst) = v;
      break;
    case K_INPUT_DIMS:
      e->has_input_dims = 1;
      break;
    default:
      break;
    }
    break;
  default:
    break;
  }
  (void)is_string;
  return 1;
}

static int cb_null(void *ctx)
{
  (void)ctx;
  return 1;
}

static int cb_bool(void *ctx, int v)
{
  (void)ctx;
  (void)v;
  return 1;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
  return on_scalar(ctx, s, len, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
  return on_scalar(ctx, (const char *)s, len, 1);
}

static const char *keys_name(int key)
{
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (keys[i].key == key)
      return keys[i].name;
  return "?";
}

/* The object of a role, as an error names it. */
static const char *role_where(int role)
{
  switch (role) {
  case ROLE_TOP:
    return "the top-level object";
  case ROLE_DIST:
    return "'distributedInfo'";
  case ROLE_PGENT:
    return "an entry of 'distributedInfo.pg_config'";
  case ROLE_EVENT:
    return "an event of 'traceEvents'";
  case ROLE_ARGS:
    return "the 'args' of an event";
  default:
    return "an object";
  }
}

static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
  kin *k = ctx;
  frame *f = top(k);
  if (!f)
    return 1;
  f->key = K_NONE;
  if (f->role == ROLE_OTHER || f->role == ROLE_PGCFG)
    return 1;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (keys[i].role == f->role && strlen(keys[i].name) == len && memcmp(keys[i].name, s, len) == 0) {
      f->key = keys[i].key;
      break;
    }
  if (f->key == K_NONE)
    return 1;
  /* a key dtsim reads, given twice in one object: which one is meant is unknown (JSON leaves it open) */
  uint64_t at = k->base + yajl_get_bytes_consumed(k->h), bit = (uint64_t)1 << f->key;
  if (f->seen & bit) {
    snprintf(k->stop_msg, sizeof k->stop_msg, "key '%s' given twice in %s: first ending at byte %" PRIu64
             ", again ending at byte %" PRIu64 " (dtsim reads each key it uses once per object)", keys_name(f->key),
             role_where(f->role), k->key_at[f->key], at);
    return 0;
  }
  f->seen |= bit;
  k->key_at[f->key] = at;
  return 1;
}

static void evacc_reset(evacc *e)
{
  char *keep = e->pg_ranks;
  size_t keep_cap = e->pg_ranks_cap;
  int64_t *keep_split = e->split;
  size_t keep_split_cap = e->split_cap;
  memset(e, 0, sizeof *e);
  e->pg_ranks = keep;
  e->pg_ranks_cap = keep_cap;
  e->split = keep_split;
  e->split_cap = keep_split_cap;
  e->corr = -1;
  e->group_size = e->p2p_rank = e->src = e->dst = e->seq = -1;
  e->dims_cur = e->dims_index = -1;
}

static int open_container(kin *k, int is_map)
{
  frame *p = top(k);
  int role = ROLE_OTHER;
  if (k->depth == 0)
    role = is_map ? ROLE_TOP : ROLE_OTHER;
  else if (p) {
    switch (p->role) {
    case ROLE_TOP:
      if (p->key == K_EVENTS && !is_map)
        role = ROLE_EVENTS;
      else if (p->key == K_DIST && is_map)
        role = ROLE_DIST;
      break;
    case ROLE_DIST:
      if (p->key == K_PGCFG)
        role = ROLE_PGCFG;
      break;
    case ROLE_PGCFG:
      if (is_map) {
        role = ROLE_PGENT;
        memset(&k->cur_pg, 0, sizeof k->cur_pg);
        k->cur_pg.size = -1;
        k->in_pg = 1;
      }
      break;
    case ROLE_PGENT:
      if (p->key == K_PG_RANKS && !is_map)
        role = ROLE_PGRANKS;
      break;
    case ROLE_EVENTS:
      if (is_map) {
        role = ROLE_EVENT;
        evacc_reset(&k->ev);
        k->ev.event = k->nevents;
      }
      k->nevents++;
      break;
    case ROLE_EVENT:
      if (p->key == K_ARGS && is_map)
        role = ROLE_ARGS;
      break;
    case ROLE_ARGS:
      if (p->key == K_INPUT_DIMS) {
        k->ev.has_input_dims = 1;
        if (!is_map)
          role = ROLE_DIMS;
      } else if (p->key == K_INPUT_TYPE && !is_map)
        role = ROLE_TYPES;
      break;
    case ROLE_DIMS:
      if (!is_map) {
        role = ROLE_DIMS1;
        k->ev.dims_cur++;
      }
      break;
    default:
      break;
    }
  }
  if (k->depth >= MAX_DEPTH) { /* the bracket is the byte before the parser's position */
    k->stop_depth = 1;
    k->stop_at = k->base + yajl_get_bytes_consumed(k->h) - 1;
    return 0;
  }
  k->frames[k->depth].role = role;
  k->frames[k->depth].key = K_NONE;
  k->frames[k->depth].seen = 0;
  k->depth++;
  return 1;
}

static int cb_start_map(void *ctx)
{
  return open_container(ctx, 1);
}

static int cb_start_array(void *ctx)
{
  return open_container(ctx, 0);
}

static int32_t find_or_add_group(kin *k, const evacc *e)
{
  for (size_t i = 0; i < k->ngroups; i++) {
    const cgroup *g = &k->groups[i];
    if (e->has_pg_name ? (g->pg_name && strcmp(g->pg_name, e->pg_name) == 0)
                       : (!g->pg_name && g->ranks_text && strcmp(g->ranks_text, e->pg_ranks) == 0))
      return (int32_t)i;
  }
  k->groups = dt_grow(k->groups, &k->groups_cap, k->ngroups, sizeof *k->groups);
  cgroup *g = &k->groups[k->ngroups];
  g->pg_name = e->has_pg_name ? dt_xstrdup(e->pg_name) : NULL;
  g->pg_desc = e->has_pg_desc ? dt_xstrdup(e->pg_desc) : NULL;
  g->ranks_text = e->has_pg_ranks ? dt_xstrdup(e->pg_ranks) : NULL;
  g->size = e->group_size;
  return (int32_t)k->ngroups++;
}

/* Op name kept for a kernel: the function name without `void `, `(anonymous namespace)::`, template
 * arguments and parameter list, cut to SHORT_NAME_CAP bytes ("at::native::vectorized_elementwise_kernel").
 * Names only label reports; full C++ signatures would dominate memory on large captures. */
static int32_t intern_short_name(kin *k, const char *name)
{
  static const char anon[] = "(anonymous namespace)::";
  char out[SHORT_NAME_CAP + 1];
  size_t n = 0;
  int angle = 0;
  const char *s = starts_with(name, "void ") ? name + 5 : name;
  for (; *s && n < SHORT_NAME_CAP; s++) {
    if (starts_with(s, anon)) {
      s += sizeof anon - 2;
      continue;
    }
    if (*s == '<')
      angle++;
    else if (*s == '>' && angle > 0)
      angle--;
    else if (angle == 0 && *s == '(' && n > 0)
      break;
    else if (angle == 0)
      out[n++] = *s;
  }
  while (n > 0 && out[n - 1] == ' ')
    n--;
  if (n == 0) /* nothing left (a name that is all template or parameters): keep it raw */
    return dt_strtab_intern(&k->names, name, strlen(name) < SHORT_NAME_CAP ? strlen(name) : SHORT_NAME_CAP);
  return dt_strtab_intern(&k->names, out, n);
}

static int is_nccl_kernel(const char *name)
{
  if (starts_with(name, "void "))
    name += 5;
  return starts_with(name, "ncclKernel") || starts_with(name, "ncclDevKernel");
}

/* What a cuda_runtime (or driver) call is to the host timeline, by its name; -1 for calls that neither
 * launch GPU work nor block (cudaEventQuery, cudaStreamIsCapturing, ...: their time is plain CPU time). */
static int rt_kind(const char *name)
{
  if (strstr(name, "Synchronize")) {
    if (strstr(name, "Stream"))
      return RT_SYNC_STREAM;
    if (strstr(name, "Event"))
      return RT_SYNC_EVENT;
    return RT_SYNC_DEVICE; /* cudaDeviceSynchronize, cuCtxSynchronize */
  }
  if (strstr(name, "Memcpy") && !strstr(name, "Async") && !strstr(name, "Peer"))
    return RT_MEMCPY_SYNC; /* cudaMemcpy, cudaMemcpy2D, cuMemcpyDtoH...: return when the copy is done */
  if (strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset"))
    return RT_LAUNCH;
  return -1;
}

/* Element count and dtype of the first shape of `Input Dims` (vintage 2), or nelems -1. */
static void span_sizes(kin *k, const evacc *e, span_ev *sp)
{
  sp->nelems = -1;
  sp->dtype = -1;
  if (e->dims_index < 0 || e->dims_overflow)
    return;
  sp->nelems = e->dims_nelems;
  if (e->dims_index < e->ntypes && e->dims_index < 8 && e->types[e->dims_index][0])
    sp->dtype = dt_strtab_intern(&k->names, e->types[e->dims_index], strlen(e->types[e->dims_index]));
}

static void finish_event(kin *k)
{
  evacc *e = &k->ev;
  if (e->ph != 'X' || !e->has_ts)
    return;
  if (e->cat == CAT_CPU_OP && (e->has_input_dims || e->seq >= 0) && strcmp(e->name, "record_param_comms") == 0) {
    k->seen_input_dims |= e->has_input_dims;
    if (e->dims_index >= 0 || e->seq >= 0) {
      k->annots = dt_grow(k->annots, &k->annots_cap, k->nannots, sizeof *k->annots);
      span_ev *sp = &k->annots[k->nannots++];
      *sp = (span_ev){e->ts, e->has_dur ? e->dur : 0, e->pid, e->tid, -1, -1, -1, e->seq, e->event};
      span_sizes(k, e, sp);
    }
    return;
  }
  switch (e->cat) {
  case CAT_KERNEL:
  case CAT_MEMCPY:
  case CAT_MEMSET: {
    k->gpu = dt_grow(k->gpu, &k->gpu_cap, k->ngpu, sizeof *k->gpu);
    gpu_ev *g = &k->gpu[k->ngpu++];
    g->ts = e->ts;
    g->dur = e->has_dur && e->dur > 0 ? e->dur : 0;
    g->corr = e->corr;
    g->stream = e->has_stream ? e->stream : e->has_tid ? e->tid : 0;
    g->event = e->event;
    g->name = intern_short_name(k, e->name);
    g->seq = k->seq++;
    g->comm = -1;
    g->pageable_d2h = e->cat == CAT_MEMCPY && strstr(e->name, "DtoH") && strstr(e->name, "Pageable");
    if (e->cat == CAT_KERNEL && is_nccl_kernel(e->name)) {
      k->comms = dt_grow(k->comms, &k->comms_cap, k->ncomms, sizeof *k->comms);
      comm_ev *c = &k->comms[k->ncomms];
      g->comm = (int32_t)k->ncomms++;
      c->coll = e->has_coll ? dt_strtab_intern(&k->names, e->coll, strlen(e->coll)) : -1;
      c->has_in = e->has_in;
      c->has_out = e->has_out;
      c->in_nelems = e->in_nelems;
      c->out_nelems = e->out_nelems;
      c->group_size = e->group_size;
      c->dtype = e->has_dtype ? dt_strtab_intern(&k->names, e->dtype, strlen(e->dtype)) : -1;
      c->group = e->has_pg_name || e->has_pg_ranks ? find_or_add_group(k, e) : -1;
      c->rank = e->p2p_rank;
      c->src = e->src;
      c->dst = e->dst;
      c->seq = e->seq;
      c->in_split = NULL;
      c->nin_split = 0;
      if (e->nsplit && !e->split_bad && e->nsplit <= DT_TRACE_MAX_RANKS) {
        c->in_split = dt_xmalloc(e->nsplit * sizeof *c->in_split);
        memcpy(c->in_split, e->split, e->nsplit * sizeof *c->in_split);
        c->nin_split = (uint32_t)e->nsplit;
      }
    }
    break;
  }
  case CAT_RUNTIME: {
    int kind = rt_kind(e->name);
    if (kind >= 0 && (e->corr >= 0 || kind != RT_LAUNCH)) {
      k->launches = dt_grow(k->launches, &k->launches_cap, k->nlaunches, sizeof *k->launches);
      k->launches[k->nlaunches++] = (launch_ev){e->corr, e->ts, e->has_dur ? e->dur : 0, e->pid, e->tid, kind};
    }
    break;
  }
  case CAT_USER_ANNOTATION:
    if (starts_with(e->name, "ProfilerStep#")) {
      k->steps = dt_grow(k->steps, &k->steps_cap, k->nsteps, sizeof *k->steps);
      k->steps[k->nsteps++] =
          (span_ev){e->ts, e->dur, e->pid, e->tid, dt_strtab_intern(&k->names, e->name, e->name_len), -1, -1, -1,
                    e->event};
    } else if (starts_with(e->name, "nccl:")) {
      k->annots = dt_grow(k->annots, &k->annots_cap, k->nannots, sizeof *k->annots);
      span_ev *sp = &k->annots[k->nannots++];
      *sp = (span_ev){e->ts, e->dur, e->pid, e->tid, dt_strtab_intern(&k->names, e->name + 5, e->name_len - 5), -1, -1,
                      e->seq, e->event};
      span_sizes(k, e, sp);
    }
    break;
  default:
    break;
  }
}

static int close_container(kin *k)
{
  frame *f = top(k);
  if (f && f->role == ROLE_EVENT)
    finish_event(k);
  else if (f && f->role == ROLE_PGENT && k->in_pg) {
    k->pgs = dt_grow(k->pgs, &k->pgs_cap, k->npgs, sizeof *k->pgs);
    k->pgs[k->npgs++] = k->cur_pg;
    memset(&k->cur_pg, 0, sizeof k->cur_pg);
    k->in_pg = 0;
  }
  k->depth--;
  return 1;
}

static int cb_end_map(void *ctx)
{
  return close_container(ctx);
}

static int cb_end_array(void *ctx)
{
  return close_container(ctx);
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map, cb_key, cb_end_map, cb_start_array,
    cb_end_array,
};

/* ---------------------------------------------------------------------------------------------------- */
/* Reading. */

/* Length of the JSON string or number being read across chunks, to refuse one longer than MAX_TOKEN before
 * yajl spends quadratic time on it. A linear scan of the bytes yajl is about to read. */
typedef struct tokscan {
  int in_str, esc;
  uint64_t len;
} tokscan;

/* Scans n bytes; returns the index of the byte at which a token passes MAX_TOKEN, or n. */
static size_t tokscan_feed(tokscan *ts, const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (ts->in_str) {
      if (ts->esc)
        ts->esc = 0;
      else if (c == '\\')
        ts->esc = 1;
      else if (c == '"')
        ts->in_str = 0;
      ts->len++;
    } else if (c == '"') {
      ts->in_str = 1;
      ts->len = 0;
    } else if (isdigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')
      ts->len++;
    else
      ts->len = 0;
    if (ts->len > MAX_TOKEN)
      return i;
  }
  return n;
}

static int parse_file(kin *k, dt_error *err)
{
  int rc = DT_ERR;
  unsigned char *buf = NULL;
  yajl_handle h = NULL;
  gzFile gz = gzopen(k->path, "rb");
  if (!gz)
    return dt_error_set(err, k->path, 0, 0, "cannot open kineto trace: %s", strerror(errno ? errno : ENOENT));
  gzbuffer(gz, 256 * 1024);
  h = yajl_alloc(&callbacks, NULL, k);
  k->h = h;
  yajl_config(h, yajl_dont_validate_strings, 1);
  buf = dt_xmalloc(CHUNK);
  uint64_t offset = 0; /* uncompressed bytes fed so far */
  tokscan scan = {0, 0, 0};
  for (;;) {
    int n = gzread(gz, buf, CHUNK);
    if (n < 0) {
      int zerr;
      const char *msg = gzerror(gz, &zerr);
      dt_error_set(err, k->path, 0, 0, "cannot read kineto trace at byte %" PRIu64 " (uncompressed): %s", offset,
                   msg);
      goto cleanup;
    }
    if (n == 0)
      break;
    size_t at = tokscan_feed(&scan, buf, (size_t)n);
    if (at < (size_t)n) {
      dt_error_set(err, k->path, 0, 0, "a JSON %s longer than %u MiB at byte %" PRIu64 " (uncompressed): dtsim reads "
                   "strings and numbers of at most %u MiB", scan.in_str ? "string" : "number", MAX_TOKEN >> 20,
                   offset + at, MAX_TOKEN >> 20);
      goto cleanup;
    }
    k->base = offset;
    yajl_status st = yajl_parse(h, buf, (size_t)n);
    if (st != yajl_status_ok) {
      uint64_t at = offset + yajl_get_bytes_consumed(h);
      if (k->stop_depth)
        dt_json_depth_error(err, k->path, k->stop_at);
      else if (k->stop_msg[0])
        dt_error_set(err, k->path, 0, 0, "%s", k->stop_msg);
      else if (st == yajl_status_client_canceled)
        dt_error_set(err, k->path, 0, 0, "bad event value near byte %" PRIu64 ": %s", at, k->bad_msg);
      else {
        unsigned char *msg = yajl_get_error(h, 0, buf, (size_t)n);
        dt_error_set(err, k->path, 0, 0, "invalid JSON at byte %" PRIu64 ": %s", at, (const char *)msg);
        yajl_free_error(h, msg);
      }
      goto cleanup;
    }
    offset += (uint64_t)n;
  }
  {
    int zerr = Z_OK;
    const char *zmsg = gzerror(gz, &zerr);
    if (zerr != Z_OK && zerr != Z_STREAM_END) { /* e.g. a .gz cut inside its trailer: the JSON may look whole */
      dt_error_set(err, k->path, 0, 0, "corrupt or truncated gzip stream after %" PRIu64 " bytes: %s", offset, zmsg);
      goto cleanup;
    }
  }
  if (offset == 0) {
    dt_error_set(err, k->path, 0, 0, "empty kineto trace");
    goto cleanup;
  }
  if (yajl_complete_parse(h) != yajl_status_ok) {
    dt_error_set(err, k->path, 0, 0, "truncated JSON: the input ends at byte %" PRIu64 " inside an unfinished value",
                 offset);
    goto cleanup;
  }
  rc = DT_OK;
cleanup:
  free(buf);
  if (h)
    yajl_free(h);
  gzclose(gz);
  return rc;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Mapping tables. */

typedef struct dtype_def {
  const char *torch; /* as Kineto writes it */
  const char *name;  /* native `dtype=` (NCCL-style names) */
  unsigned size;
} dtype_def;

static const dtype_def dtypes[] = {
    {"Float", "fp32", 4},          {"Double", "fp64", 8},       {"Half", "fp16", 2},
    {"BFloat16", "bf16", 2},       {"Long", "int64", 8},        {"Int", "int32", 4},
    {"Short", "int16", 2},         {"Char", "int8", 1},         {"Byte", "uint8", 1},
    {"Bool", "bool", 1},           {"Float8_e4m3fn", "fp8e4m3", 1}, {"Float8_e5m2", "fp8e5m2", 1},
    {"Float8_e4m3fnuz", "fp8e4m3", 1}, {"Float8_e5m2fnuz", "fp8e5m2", 1}, {"UInt16", "uint16", 2},
    {"UInt32", "uint32", 4},       {"UInt64", "uint64", 8},     {"ComplexHalf", "complex32", 4},
    {"ComplexFloat", "complex64", 8}, {"ComplexDouble", "complex128", 16},
};

/* `Input type` of record_param_comms and `nccl:*` annotations (vintage 2) names C++ types. */
static const dtype_def cxx_dtypes[] = {
    {"float", "fp32", 4},          {"double", "fp64", 8},        {"c10::Half", "fp16", 2},
    {"c10::BFloat16", "bf16", 2},  {"long", "int64", 8},         {"long int", "int64", 8},
    {"int64_t", "int64", 8},       {"int", "int32", 4},          {"short", "int16", 2},
    {"signed char", "int8", 1},    {"unsigned char", "uint8", 1}, {"bool", "bool", 1},
    {"c10::Float8_e4m3fn", "fp8e4m3", 1}, {"c10::Float8_e5m2", "fp8e5m2", 1},
    {"c10::complex<float>", "complex64", 8}, {"c10::complex<double>", "complex128", 16},
};

static const dtype_def *find_dtype(const char *torch)
{
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(dtypes[i].torch, torch) == 0)
      return &dtypes[i];
  for (size_t i = 0; i < sizeof cxx_dtypes / sizeof cxx_dtypes[0]; i++)
    if (strcmp(cxx_dtypes[i].torch, torch) == 0)
      return &cxx_dtypes[i];
  return NULL;
}

/* Collective names as PyTorch records them (`Collective name`, or the `nccl:` annotation), compared after
 * lowercasing and dropping underscores: `_allgather_base`, `all_gather_into_tensor_coalesced`, ... */
static const struct {
  const char *norm;
  dt_op_kind kind;
} colls[] = {
    {"allreduce", DT_OP_ALLREDUCE},
    {"allreducecoalesced", DT_OP_ALLREDUCE},
    {"broadcast", DT_OP_BROADCAST},
    {"broadcastoop", DT_OP_BROADCAST},
    {"reduce", DT_OP_REDUCE},
    {"reduceoop", DT_OP_REDUCE},
    {"allgather", DT_OP_ALLGATHER},
    {"allgatherbase", DT_OP_ALLGATHER},
    {"allgathercoalesced", DT_OP_ALLGATHER},
    {"allgatherintotensor", DT_OP_ALLGATHER},
    {"allgatherintotensorcoalesced", DT_OP_ALLGATHER},
    {"reducescatter", DT_OP_REDUCESCATTER},
    {"reducescatterbase", DT_OP_REDUCESCATTER},
    {"reducescattertensor", DT_OP_REDUCESCATTER},
    {"reducescattertensorcoalesced", DT_OP_REDUCESCATTER},
    {"alltoall", DT_OP_ALLTOALL},
    {"alltoallbase", DT_OP_ALLTOALL},
    {"alltoallv", DT_OP_ALLTOALL},
    {"barrier", DT_OP_BARRIER},
    {"send", DT_OP_SEND},
    {"recv", DT_OP_RECV},
};

/* Returns the op kind of a collective name, or -1 for a name we do not know. */
static int coll_kind(const char *name)
{
  char norm[128];
  size_t n = 0;
  for (const char *p = name; *p && n + 1 < sizeof norm; p++)
    if (*p != '_' && *p != ' ')
      norm[n++] = (char)tolower((unsigned char)*p);
  norm[n] = '\0';
  for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
    if (strcmp(colls[i].norm, norm) == 0)
      return (int)colls[i].kind;
  return -1;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Groups. */

/* Parses "[0, 1, 2]" (a Python list as text). Sets *truncated when it holds "..." (PyTorch cuts the list past
 * 30 entries). Returns the number of ranks read into a new array *out. */
static size_t parse_rank_list(const char *text, int32_t **out, int *truncated)
{
  size_t n = 0, cap = 0;
  int32_t *r = NULL;
  *truncated = strstr(text, "...") != NULL;
  for (const char *p = text; *p;) {
    if (isdigit((unsigned char)*p)) {
      char *end;
      long v = strtol(p, &end, 10);
      r = dt_grow(r, &cap, n, sizeof *r);
      r[n++] = (int32_t)(v > INT32_MAX ? INT32_MAX : v);
      p = end;
    } else
      p++;
  }
  *out = r;
  return n;
}

static const pgcfg *find_pgcfg(const kin *k, const char *name)
{
  if (!name)
    return NULL;
  for (size_t i = 0; i < k->npgs; i++)
    if (k->pgs[i].name && strcmp(k->pgs[i].name, name) == 0)
      return &k->pgs[i];
  return NULL;
}

static void format_ranks(const int32_t *r, size_t n, char *buf, size_t size)
{
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len + 16 < size;) {
    size_t j = i;
    while (j + 1 < n && r[j + 1] == r[j] + 1)
      j++;
    len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", (int)r[i]);
    if (j > i)
      len += (size_t)snprintf(buf + len, size - len, "-%d", (int)r[j]);
    i = j + 1;
  }
  if (len + 16 >= size && size > 4)
    strcpy(buf + size - 4, "...");
}

/* Resolves a captured group's global ranks: `Process Group Ranks` when complete, else pg_config, else the
 * listed prefix continued with its stride (contiguous when one rank is listed), else the block of `Group size`
 * ranks holding the captured rank. Every fallback adds a note. */
static int resolve_group(kin *k, cgroup *g, int32_t rank, int32_t world, dt_trace *t, dt_error *err)
{
  int truncated = 0;
  int32_t *listed = NULL;
  size_t nlisted = g->ranks_text ? parse_rank_list(g->ranks_text, &listed, &truncated) : 0;
  const pgcfg *cfg = find_pgcfg(k, g->pg_name);
  const char *label = g->pg_name ? g->pg_name : g->ranks_text ? g->ranks_text : "?";
  int64_t size = g->size > 0 ? g->size : cfg && cfg->nranks ? (int64_t)cfg->nranks : (int64_t)nlisted;
  if (g->ranks_text && !truncated && nlisted > 0) {
    g->ranks = listed;
    g->nranks = nlisted;
    listed = NULL;
    if (g->size > 0 && (size_t)g->size != nlisted)
      dt_trace_add_note(t, "kineto warning: process group '%s' lists %zu ranks but 'Group size' is %" PRId64
                        "; the listed ranks are used", label, nlisted, g->size);
  } else if (cfg && cfg->nranks > 0 && (g->size <= 0 || (size_t)g->size == cfg->nranks)) {
    g->nranks = cfg->nranks;
    g->ranks = dt_xmalloc(cfg->nranks * sizeof *g->ranks);
    memcpy(g->ranks, cfg->ranks, cfg->nranks * sizeof *g->ranks);
    if (truncated)
      dt_trace_add_note(t, "kineto: process group '%s' has its 'Process Group Ranks' truncated; its %zu ranks come "
                        "from distributedInfo.pg_config", label, g->nranks);
  } else if (size > 0) {
    g->nranks = (size_t)size;
    g->ranks = dt_xmalloc(g->nranks * sizeof *g->ranks);
    if (nlisted > 0) {
      int32_t stride = nlisted > 1 ? listed[1] - listed[0] : 1;
      if (stride <= 0)
        stride = 1;
      for (size_t i = 0; i < g->nranks; i++)
        g->ranks[i] = i < nlisted ? listed[i] : g->ranks[i - 1] + stride;
      dt_trace_add_note(t, "kineto warning: process group '%s' lists only %zu of its %" PRId64 " ranks "
                        "('Process Group Ranks' is truncated and pg_config does not list it); the rest are assumed "
                        "to continue with stride %d", label, nlisted, size, (int)stride);
    } else {
      int32_t base = (int32_t)((rank / size) * size);
      for (size_t i = 0; i < g->nranks; i++)
        g->ranks[i] = base + (int32_t)i;
      dt_trace_add_note(t, "kineto warning: process group '%s' has no rank list; assumed the %" PRId64
                        " contiguous ranks %d-%d holding rank %d", label, size, (int)base,
                        (int)(base + size - 1), (int)rank);
    }
  } else {
    free(listed);
    return dt_error_set(err, k->path, 0, 0, "process group '%s' has neither ranks nor a size", label);
  }
  free(listed);
  int member = 0;
  for (size_t i = 0; i < g->nranks; i++) {
    if (g->ranks[i] < 0 || g->ranks[i] >= world)
      return dt_error_set(err, k->path, 0, 0, "process group '%s' lists rank %d, outside the world of %d ranks",
                          label, (int)g->ranks[i], (int)world);
    member |= g->ranks[i] == rank;
  }
  if (!member)
    return dt_error_set(err, k->path, 0, 0, "process group '%s' does not hold the captured rank %d", label,
                        (int)rank);
  return DT_OK;
}

static void sanitize_name(const char *in, char *out, size_t size)
{
  size_t n = 0;
  for (const char *p = in; *p && n + 1 < size; p++)
    out[n++] = isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.' ? *p : '_';
  out[n] = '\0';
}

static int int_cmp(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Creates the trace groups of captured group g for `nranks` ranks: the group as listed, and its translates
 * tiling the rest of the world (DESIGN.md §4). Fills g->tile_of. */
static int tile_group(kin *k, cgroup *g, const char *base_name, int32_t nranks, dt_trace *t, uint32_t file,
                      dt_error *err)
{
  size_t n = g->nranks;
  int32_t *shape = dt_xmalloc(n * sizeof *shape);
  memcpy(shape, g->ranks, n * sizeof *shape);
  qsort(shape, n, sizeof *shape, int_cmp);
  int32_t lo = shape[0];
  for (size_t i = 0; i < n; i++)
    shape[i] -= lo;
  g->tile_of = dt_xmalloc((size_t)nranks * sizeof *g->tile_of);
  for (int32_t r = 0; r < nranks; r++)
    g->tile_of[r] = -1;
  int32_t *members = dt_xmalloc(n * sizeof *members);
  int rc = DT_OK;
  char name[300];
  int tiles = 0;
  /* tile 0 is the captured group itself, in its listed order */
  for (int32_t u = -1; u < nranks && rc == DT_OK; u++) {
    if (u >= 0 && g->tile_of[u] >= 0)
      continue;
    int32_t shift = u < 0 ? 0 : u - lo;
    for (size_t i = 0; i < n; i++) {
      int32_t m = g->ranks[i] + shift;
      if (m < 0 || m >= nranks || g->tile_of[m] >= 0) {
        char list[128];
        format_ranks(shape, n, list, sizeof list);
        rc = dt_error_set(err, k->path, 0, 0,
                          "process group '%s' (ranks %d+{%s}) does not tile %d ranks by translation; cannot expand "
                          "the capture to %d ranks",
                          base_name, (int)lo, list, (int)nranks, (int)nranks);
        break;
      }
      members[i] = m;
    }
    if (rc != DT_OK)
      break;
    if (tiles == 0)
      snprintf(name, sizeof name, "%s", base_name);
    else
      snprintf(name, sizeof name, "%s_t%d", base_name, tiles);
    while (dt_trace_find_group(t, name) >= 0) /* a captured name may collide with a tile name */
      strncat(name, "_", sizeof name - strlen(name) - 1);
    int gi = dt_trace_add_group(t, name, members, n, file, 0, err);
    if (gi < 0) {
      rc = DT_ERR;
      break;
    }
    for (size_t i = 0; i < n; i++)
      g->tile_of[members[i]] = gi;
    if (tiles == 0)
      g->first_tile = gi;
    tiles++;
  }
  free(members);
  free(shape);
  return rc;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Building the captured rank's program. */

typedef struct sdep {
  int32_t stream; /* stream position */
  int32_t op;     /* GPU-op index within that stream */
} sdep;

typedef struct op_info {
  const gpu_ev *ev;
  int64_t host_ts;  /* launch time on the CPU when known, else the GPU start */
  int32_t order;    /* position in the global start-time order */
  int32_t *clock;   /* per stream: highest op index this op is known to follow (-1 none) */
  sdep *deps;
  uint32_t ndeps;
  int64_t delay;    /* ns of idle time kept before the op (0: none) */
  int deps_on_delay; /* the deps sit on the delay op in front of it */
  int32_t pos;      /* final position in the stream */
  int32_t nmarks;   /* marks inserted right after it */
  int32_t launch;   /* index in k->launches of its launch call, -1 when the capture has none */
  int32_t host_s, host_i; /* host timeline: the host stream and op it waits for (its launch), -1 when none */
} op_info;

/* One op of a host thread's stream (host timeline): a `delay` of captured CPU time, ending at a launch (the
 * GPU op launched there waits for it) or, for a blocking call, waiting for the GPU ops the call covered. */
typedef struct hop {
  int64_t dur;      /* ns */
  uint32_t line;
  uint32_t ndeps;
  sdep *deps;       /* GPU ops (stream position, index) */
} hop;

typedef struct hstream {
  int64_t pid, tid;
  int32_t id;       /* native stream number */
  hop *ops;
  size_t nops, cap;
  size_t nlaunch;   /* GPU ops it launched */
  int64_t cpu_ns;   /* captured CPU time it holds as delays */
} hstream;

typedef struct tstream {
  int32_t id;          /* the N of sN: the CUDA stream number when it is one (0..INT32_MAX), else a free one */
  int64_t raw;         /* the CUDA stream number as captured */
  op_info *ops;
  size_t nops;
  int32_t *mark_after; /* steps placed on this stream: op index after which each goes */
  int32_t *mark_step;
  size_t nmarks, marks_cap, marks_cap2;
} tstream;

static int gpu_cmp(const void *a, const void *b)
{
  const gpu_ev *x = *(const gpu_ev *const *)a, *y = *(const gpu_ev *const *)b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->ts + x->dur != y->ts + y->dur)
    return x->ts + x->dur < y->ts + y->dur ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static int launch_cmp(const void *a, const void *b)
{
  const launch_ev *x = a, *y = b;
  return (x->corr > y->corr) - (x->corr < y->corr);
}

static int span_cmp(const void *a, const void *b)
{
  const span_ev *x = a, *y = b;
  return (x->ts > y->ts) - (x->ts < y->ts);
}

static const launch_ev *find_launch(const kin *k, int64_t corr)
{
  if (corr < 0)
    return NULL;
  size_t lo = 0, hi = k->nlaunches;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (k->launches[mid].corr < corr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < k->nlaunches && k->launches[lo].corr == corr ? &k->launches[lo] : NULL;
}

/* Order of k->annots for enclosing_spans: by thread, then start time. */
static int annot_cmp(const void *a, const void *b)
{
  const span_ev *x = a, *y = b;
  if (x->pid != y->pid)
    return (x->pid > y->pid) - (x->pid < y->pid);
  if (x->tid != y->tid)
    return (x->tid > y->tid) - (x->tid < y->tid);
  if (x->ts != y->ts)
    return (x->ts > y->ts) - (x->ts < y->ts);
  return (x->dur < y->dur) - (x->dur > y->dur); /* the outer of two spans starting together first */
}

/* How far back from a launch enclosing_spans looks among the thread's annotations that started before it:
 * `nccl:*` and `record_param_comms` nest one or two deep, never dozens. */
#define SPAN_LOOKBACK 64

/* The spans enclosing a kernel's launch on its thread (k->annots sorted by annot_cmp): *named gets the
 * innermost `nccl:*` annotation (NULL when none), *sized the innermost span with a size from `Input Dims`
 * (NULL when none). O(log annotations). */
static void enclosing_spans(const kin *k, const launch_ev *l, const span_ev **named, const span_ev **sized,
                            int64_t *seq)
{
  *named = NULL;
  *sized = NULL;
  *seq = -1;
  if (!l)
    return;
  size_t lo = 0, hi = k->nannots; /* first span after (pid, tid, l->ts) */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const span_ev *a = &k->annots[mid];
    int before = a->pid < l->pid || (a->pid == l->pid && (a->tid < l->tid || (a->tid == l->tid && a->ts <= l->ts)));
    if (before)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo, n = 0; i > 0 && n < SPAN_LOOKBACK; i--, n++) {
    const span_ev *a = &k->annots[i - 1];
    if (a->pid != l->pid || a->tid != l->tid)
      break;
    if (l->ts > a->ts + a->dur)
      continue;
    if (!*named && a->name >= 0)
      *named = a;
    if (!*sized && a->nelems >= 0)
      *sized = a;
    if (*seq < 0 && a->seq >= 0)
      *seq = a->seq;
    if (*named && *sized && *seq >= 0)
      break;
  }
}

static int64_t ev_end(const gpu_ev *e)
{
  return e->ts + e->dur;
}

static int file_rank(const char *path, int32_t *rank)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int found = 0;
  for (const char *p = base; (p = strstr(p, "rank")) != NULL; p += 4) {
    const char *q = p + 4;
    if (*q == '-' || *q == '_')
      q++;
    if (isdigit((unsigned char)*q)) {
      errno = 0;
      long v = strtol(q, NULL, 10);
      *rank = errno || v >= DT_TRACE_MAX_RANKS ? DT_TRACE_MAX_RANKS : (int32_t)v; /* refused by the world check */
      found = 1;
    }
  }
  return found ? DT_OK : DT_ERR;
}

static void free_kin(kin *k)
{
  dt_strtab_free(&k->names);
  free(k->gpu);
  for (size_t i = 0; i < k->ncomms; i++)
    free(k->comms[i].in_split);
  free(k->comms);
  free(k->launches);
  free(k->steps);
  free(k->annots);
  for (size_t i = 0; i < k->ngroups; i++) {
    free(k->groups[i].pg_name);
    free(k->groups[i].pg_desc);
    free(k->groups[i].ranks_text);
    free(k->groups[i].ranks);
    free(k->groups[i].tile_of);
  }
  free(k->groups);
  for (size_t i = 0; i < k->npgs; i++) {
    free(k->pgs[i].name);
    free(k->pgs[i].desc);
    free(k->pgs[i].ranks);
  }
  free(k->pgs);
  free(k->cur_pg.name);
  free(k->cur_pg.desc);
  free(k->cur_pg.ranks);
  free(k->ev.pg_ranks);
  free(k->ev.split);
}

/* Resolved communication op of one NCCL kernel, for the captured rank. */
typedef struct comm_op {
  dt_op_kind kind;
  uint64_t bytes;
  int32_t cgroup;  /* captured group, or the synthetic world group */
  int32_t peer;    /* captured global peer for send/recv */
  int32_t name;    /* interned op name */
  const char *dtype;
  int estimated;   /* bytes estimated from the captured duration */
  int64_t seq;     /* the group's collective sequence number (`Seq`), -1 when the capture has none */
  uint64_t *splits; /* all-to-allv: bytes to each group member, owned; NULL for an even all-to-all */
  uint32_t nsplits;
} comm_op;

typedef struct build {
  kin *k;
  dt_trace *t;
  const dt_import_opts *opts;
  uint32_t file;
  int32_t rank, world, nranks;
  tstream *streams;
  size_t nstreams;
  comm_op *cops; /* per comms[] entry */
  int32_t world_group; /* index in k->groups of the synthetic world group, -1 until needed */
  hstream *hosts;  /* host timeline: one stream per captured host thread that launched GPU work */
  size_t nhosts;
  struct mergectx *merge; /* several ranks' captures into one trace (NULL: one capture, expanded) */
  struct markidx *mx;     /* launch-time index of the GPU ops for placing step marks (place_marks) */
} build;

/* A collective of a merged capture and its `Seq`, for matching across ranks after every rank is built. */
typedef struct seqref {
  int32_t stream, index; /* stream position and op index in the rank's streams */
  int64_t seq;
} seqref;

typedef struct mergectx {
  seqref **refs;   /* per rank */
  size_t *nrefs, *caps;
} mergectx;

/* Bus bandwidth assumed to turn a captured NCCL kernel duration into a size when the capture records none
 * (vintage 3, tensor-list ops of vintage 2): bytes/s. An upper-bound estimate, since the duration includes
 * waiting for peers; every op sized this way is named in the notes. */
#define EST_BUSBW 100e9
/* Estimated ops named one by one in the notes; the rest are counted. */
#define EST_NOTES 16

/* nccl-tests bus-bandwidth factor of a kind on n ranks (DESIGN.md §7), for sizing from a duration. */
static double busbw_factor(dt_op_kind kind, int64_t n)
{
  if (n <= 1)
    return 1.0;
  switch (kind) {
  case DT_OP_ALLREDUCE:
  case DT_OP_OTHER:
    return 2.0 * (double)(n - 1) / (double)n;
  case DT_OP_ALLGATHER:
  case DT_OP_REDUCESCATTER:
  case DT_OP_ALLTOALL:
    return (double)(n - 1) / (double)n;
  default:
    return 1.0;
  }
}

/* Decides op, size, group and peer of every NCCL kernel: the kernel's own args (vintage 1), else the op of
 * the enclosing `nccl:*` annotation and the size of the innermost enclosing span with `Input Dims` (vintage
 * 2), else a size estimated from the kernel's captured duration (vintage 3; said per op). Kernels whose launch
 * is not in the capture (or that no annotation names) are kept as unsized `other` with a warning. */
static int resolve_comms(build *b, dt_error *err)
{
  kin *k = b->k;
  dt_trace *t = b->t;
  b->cops = dt_xcalloc(k->ncomms ? k->ncomms : 1, sizeof *b->cops);
  size_t nomd = 0, unknown_dtype = 0, nbcast = 0, np2p = 0, nogroup = 0, nshape = 0, nest = 0, nsplit_ops = 0,
         nsplit_odd = 0;
  unsigned char *used = dt_xcalloc(k->nannots ? k->nannots : 1, 1);
  /* unknown names, counted once each */
  int32_t *unk = NULL;
  size_t *unk_n = NULL, nunk = 0, unk_cap = 0, unk_cap2 = 0;
  int rc = DT_OK;
  for (size_t gi = 0; gi < k->ngpu; gi++) {
    const gpu_ev *g = &k->gpu[gi];
    if (g->comm < 0)
      continue;
    const comm_ev *c = &k->comms[g->comm];
    comm_op *o = &b->cops[g->comm];
    const char *cname = c->coll >= 0 ? k->names.s[c->coll] : NULL;
    const span_ev *named = NULL, *sized = NULL;
    int64_t span_seq;
    enclosing_spans(k, find_launch(k, g->corr), &named, &sized, &span_seq);
    o->seq = c->seq >= 0 ? c->seq : span_seq;
    int32_t annot = named ? named->name : -1;
    if (named)
      used[named - k->annots] = 1;
    if (!cname || !*cname)
      cname = annot >= 0 ? k->names.s[annot] : NULL;
    int kind = cname ? coll_kind(cname) : -1;
    o->name = cname ? dt_strtab_intern(&k->names, cname, strlen(cname)) : g->name;
    o->peer = -1;
    o->cgroup = c->group;
    int have_size = c->has_in || c->has_out;
    if (!have_size && !cname) {
      /* launched before the capture started, or a kernel the profiler did not annotate: keep it, unsized */
      o->kind = DT_OP_OTHER;
      o->bytes = 0;
      o->cgroup = -1;
      nomd++;
      continue;
    }
    if (kind < 0) {
      o->kind = DT_OP_OTHER;
      size_t u = 0;
      while (u < nunk && unk[u] != o->name)
        u++;
      if (u == nunk) {
        unk = dt_grow(unk, &unk_cap, nunk, sizeof *unk);
        unk_n = dt_grow(unk_n, &unk_cap2, nunk, sizeof *unk_n);
        unk[nunk++] = o->name;
      }
      unk_n[u]++;
    } else
      o->kind = (dt_op_kind)kind;
    int64_t n = o->cgroup >= 0 ? (int64_t)k->groups[o->cgroup].nranks : b->world;
    const char *dtname = c->dtype >= 0 ? k->names.s[c->dtype] : sized && sized->dtype >= 0 ? k->names.s[sized->dtype] : NULL;
    const dtype_def *dt = dtname ? find_dtype(dtname) : NULL;
    o->dtype = dt ? dt->name : NULL;
    if (o->kind == DT_OP_BARRIER) {
      o->bytes = 0;
    } else if (have_size || sized) {
      unsigned esize = dt ? dt->size : 4;
      if (!dt)
        unknown_dtype++;
      int64_t nelems;
      if (have_size) {
        nelems = c->has_in ? c->in_nelems : c->out_nelems;
        if (o->kind == DT_OP_RECV && c->has_out && c->out_nelems > 0)
          nelems = c->out_nelems;
      } else {
        nelems = sized->nelems;
        nshape++;
      }
      if (nelems < 0 || (uint64_t)nelems > DT_TRACE_MAX_BYTES / esize) {
        rc = dt_error_set(err, k->path, 0, 0, "traceEvents[%u]: %s kernel at ts %.3f us: %" PRId64 " elements of %u "
                          "bytes are more than the %" PRIu64 " bytes an op may move", g->event, cname ? cname : "NCCL",
                          (double)g->ts / 1000.0, nelems, esize, DT_TRACE_MAX_BYTES);
        goto done;
      }
      o->bytes = (uint64_t)nelems * esize;
      if (o->kind == DT_OP_ALLTOALL && c->nin_split > 0 && have_size) {
        /* all-to-allv: `In split size` counts rows of the input sent to each member */
        uint64_t rows = 0;
        for (uint32_t q = 0; q < c->nin_split; q++)
          rows += (uint64_t)c->in_split[q];
        if ((int64_t)c->nin_split != n) {
          rc = dt_error_set(err, k->path, 0, 0, "all-to-all kernel at ts %.3f us: 'In split size' lists %u entries but "
                            "its group has %lld ranks", (double)g->ts / 1000.0, c->nin_split, (long long)n);
          goto done;
        }
        if (rows > 0 && (uint64_t)nelems % rows == 0) {
          uint64_t row_bytes = (uint64_t)nelems / rows * esize;
          o->splits = dt_xmalloc(c->nin_split * sizeof *o->splits);
          o->nsplits = c->nin_split;
          for (uint32_t q = 0; q < c->nin_split; q++)
            o->splits[q] = (uint64_t)c->in_split[q] * row_bytes;
          nsplit_ops++;
        } else if (rows > 0)
          nsplit_odd++;
      }
    } else {
      /* no size anywhere: from the captured duration at an assumed bus bandwidth (an upper bound) */
      double f = busbw_factor(o->kind, n);
      double s_nccl = (double)g->dur * 1e-9 * EST_BUSBW / f;
      if (o->kind == DT_OP_ALLGATHER && n > 0)
        s_nccl /= (double)n;
      uint64_t unit = o->kind == DT_OP_ALLTOALL ? 4 * (uint64_t)(n > 0 ? n : 1) : 4;
      o->bytes = s_nccl >= (double)DT_TRACE_MAX_BYTES ? DT_TRACE_MAX_BYTES / unit * unit : (uint64_t)s_nccl / unit * unit;
      o->estimated = 1;
      if (nest < EST_NOTES)
        dt_trace_add_note(t, "kineto estimate: %s kernel at ts %.3f us (stream %" PRId64 ") records no size; bytes=%" PRIu64
                          " = its captured %.3f us x %.0f GB/s assumed bus bandwidth / busbw factor %.3g (an upper "
                          "bound: the duration includes waiting for peers)",
                          cname, (double)g->ts / 1000.0, g->stream, o->bytes, (double)g->dur / 1000.0,
                          EST_BUSBW / 1e9, f);
      nest++;
    }
    if (o->kind == DT_OP_BROADCAST || o->kind == DT_OP_REDUCE)
      nbcast++;
    if (o->kind == DT_OP_SEND || o->kind == DT_OP_RECV) {
      np2p++;
      int64_t peer = o->kind == DT_OP_SEND ? c->dst : c->src;
      if (peer < 0 || peer == b->rank) {
        int64_t other = o->kind == DT_OP_SEND ? c->src : c->dst;
        if (other >= 0 && other != b->rank)
          peer = other;
      }
      if ((peer < 0 || peer == b->rank) && c->rank >= 0 && c->group >= 0 && (size_t)c->rank < k->groups[c->group].nranks)
        peer = k->groups[c->group].ranks[c->rank];
      if (peer < 0 || peer >= b->world) {
        rc = dt_error_set(err, k->path, 0, 0, "traceEvents[%u]: %s kernel at ts %.3f us has no usable peer rank",
                          g->event, cname, (double)g->ts / 1000.0);
        goto done;
      }
      o->peer = (int32_t)peer;
    } else if (o->cgroup < 0)
      nogroup++; /* no process group recorded: assumed to span the world */
  }
  for (size_t u = 0; u < nunk; u++)
    dt_trace_add_note(t, "kineto warning: %zu kernel(s) of unknown collective '%s' kept as op 'other' (replayed as an "
                      "all-reduce of their input bytes)", unk_n[u], k->names.s[unk[u]]);
  if (nomd)
    dt_trace_add_note(t, "kineto warning: %zu NCCL kernel(s) have no size metadata and no launch in the capture "
                      "(launched before the capture started?); kept as op 'other' of 0 bytes on all ranks", nomd);
  if (nshape)
    dt_trace_add_note(t, "kineto: %zu NCCL kernel(s) sized from the 'Input Dims'/'Input type' of their enclosing "
                      "nccl:* annotation or record_param_comms (the first tensor: the per-rank input)", nshape);
  {
    /* annotations that launched no NCCL kernel (NCCL launches nothing for an empty buffer) */
    size_t nempty = 0, nsized0 = 0;
    for (size_t i = 0; i < k->nannots; i++)
      if (k->annots[i].name >= 0 && !used[i]) {
        nempty++;
        nsized0 += k->annots[i].nelems == 0;
      }
    if (nempty)
      dt_trace_add_note(t, "kineto: %zu nccl:* annotation(s) launched no NCCL kernel in the capture (%zu of them of "
                        "0 elements: NCCL launches nothing for an empty buffer); not replayed", nempty, nsized0);
  }
  if (nest > EST_NOTES)
    dt_trace_add_note(t, "kineto estimate: %zu more NCCL kernel(s) sized from their captured durations the same way",
                      nest - EST_NOTES);
  if (nogroup)
    dt_trace_add_note(t, "kineto warning: %zu NCCL kernel(s) name no process group; assumed to span all ranks",
                      nogroup);
  if (unknown_dtype)
    dt_trace_add_note(t, "kineto warning: %zu NCCL kernel(s) have an unknown or missing dtype; assumed 4 bytes per "
                      "element", unknown_dtype);
  if (nbcast)
    dt_trace_add_note(t, "kineto: broadcast/reduce root assumed to be group rank 0 (Kineto records no root)");
  if (nsplit_ops)
    dt_trace_add_note(t, "kineto: %zu all-to-all(s) are all-to-allv: splits= from 'In split size' (rows per member) x "
                      "the input's bytes per row%s", nsplit_ops,
                      !b->merge && b->nranks > 1 ? "; every expanded rank sends the captured rank's rows (the "
                                                   "other ranks' splits are not in the capture)" : "");
  if (nsplit_odd)
    dt_trace_add_note(t, "kineto warning: %zu all-to-all(s) have an 'In split size' whose rows do not divide their "
                      "input; replayed as even all-to-alls of their bytes", nsplit_odd);
  if (np2p)
    dt_trace_add_note(t, "kineto: send/recv peers keep their offset: peer' = r' + (peer - %d) mod %d", (int)b->rank,
                      (int)b->nranks);
done:
  free(used);
  free(unk);
  free(unk_n);
  return rc;
}

/* Cross-stream happens-before edges (DESIGN.md §4): op X waits for the latest op of each other stream that
 * ended at most dep_window before X started; an edge already implied (through stream order or earlier edges,
 * tracked with per-op vector clocks) is not added. */
static void find_deps(build *b)
{
  size_t S = b->nstreams, total = 0;
  for (size_t s = 0; s < S; s++)
    total += b->streams[s].nops;
  const op_info **order = dt_xmalloc((total ? total : 1) * sizeof *order);
  int32_t *order_stream = dt_xmalloc((total ? total : 1) * sizeof *order_stream);
  int32_t *order_index = dt_xmalloc((total ? total : 1) * sizeof *order_index);
  /* merge streams by start time */
  size_t *head = dt_xcalloc(S ? S : 1, sizeof *head);
  for (size_t n = 0; n < total; n++) {
    size_t best = S;
    for (size_t s = 0; s < S; s++) {
      if (head[s] >= b->streams[s].nops)
        continue;
      if (best == S || gpu_cmp(&b->streams[s].ops[head[s]].ev, &b->streams[best].ops[head[best]].ev) < 0)
        best = s;
    }
    op_info *oi = &b->streams[best].ops[head[best]];
    oi->order = (int32_t)n;
    order[n] = oi;
    order_stream[n] = (int32_t)best;
    order_index[n] = (int32_t)head[best]++;
  }
  int64_t window = (int64_t)(b->opts->dep_window_s * 1e9 + 0.5);
  int host = b->opts->host_timeline;
  int32_t *ptr = dt_xmalloc((S ? S * S : 1) * sizeof *ptr); /* [a*S+b]: latest op of b ended before a's op */
  for (size_t i = 0; i < S * S; i++)
    ptr[i] = -1;
  sdep *cand = dt_xmalloc((S ? S : 1) * sizeof *cand);
  for (size_t n = 0; n < total; n++) {
    int32_t a = order_stream[n], i = order_index[n];
    tstream *sa = &b->streams[a];
    op_info *x = &sa->ops[i];
    x->clock = dt_xmalloc(S * sizeof *x->clock);
    if (i > 0)
      memcpy(x->clock, sa->ops[i - 1].clock, S * sizeof *x->clock);
    else
      for (size_t s = 0; s < S; s++)
        x->clock[s] = -1;
    size_t nc = 0;
    for (size_t s = 0; s < S; s++) {
      if ((int32_t)s == a)
        continue;
      tstream *sb = &b->streams[s];
      int32_t *p = &ptr[(size_t)a * S + s];
      while (*p + 1 < (int32_t)sb->nops && ev_end(sb->ops[*p + 1].ev) <= x->ev->ts && sb->ops[*p + 1].order < (int32_t)n)
        (*p)++;
      if (*p < 0 || x->ev->ts - ev_end(sb->ops[*p].ev) > window || *p <= x->clock[s])
        continue;
      if (host) {
        /* with the host timeline, a start right after another stream's op is evidence of a wait only when
         * nothing else explains it: not when the op was launched after that op ended, nor when its own
         * stream predecessor ended after it */
        int64_t yend = ev_end(sb->ops[*p].ev);
        if (x->launch >= 0) {
          const launch_ev *l = &b->k->launches[x->launch];
          int64_t queued = l->ts + l->dur < x->ev->ts ? l->ts + l->dur : x->ev->ts;
          if (queued >= yend)
            continue;
        }
        if (i > 0 && ev_end(sa->ops[i - 1].ev) >= yend)
          continue;
      }
      cand[nc++] = (sdep){(int32_t)s, *p};
    }
    /* drop candidates implied by another candidate */
    for (size_t c = 0; c < nc; c++) {
      int implied = 0;
      for (size_t d = 0; d < nc && !implied; d++)
        if (d != c && b->streams[cand[d].stream].ops[cand[d].op].clock[cand[c].stream] >= cand[c].op)
          implied = 1;
      if (implied) {
        cand[c] = cand[--nc];
        c--;
      }
    }
    if (nc) {
      x->deps = dt_xmalloc(nc * sizeof *x->deps);
      x->ndeps = (uint32_t)nc;
      for (size_t c = 0; c < nc; c++) {
        x->deps[c] = cand[c];
        const int32_t *yc = b->streams[cand[c].stream].ops[cand[c].op].clock;
        for (size_t s = 0; s < S; s++)
          if (yc[s] > x->clock[s])
            x->clock[s] = yc[s];
        if (cand[c].op > x->clock[cand[c].stream])
          x->clock[cand[c].stream] = cand[c].op;
      }
    }
    x->clock[a] = i;
  }
  free(cand);
  free(ptr);
  free(head);
  free(order);
  free(order_stream);
  free(order_index);
}

static void add_mark(tstream *s, int32_t after, int32_t step)
{
  size_t cap2 = s->marks_cap2;
  s->mark_after = dt_grow(s->mark_after, &s->marks_cap, s->nmarks, sizeof *s->mark_after);
  s->mark_step = dt_grow(s->mark_step, &cap2, s->nmarks, sizeof *s->mark_step);
  s->marks_cap2 = cap2;
  s->mark_after[s->nmarks] = after;
  s->mark_step[s->nmarks] = step;
  s->nmarks++;
  s->ops[after].nmarks++;
}

/* Launch-time index of the GPU ops, so that a step's marks cost O(log ops) per stream instead of a scan of
 * every op (a capture of many steps and many ops was O(steps x ops)). Ops sorted by host_ts, over all streams
 * (all[]) and per stream (byst[off[s] .. off[s + 1])), with segment trees: over all[] the op of the earliest GPU
 * start, over each stream's slice its highest op index. */
typedef struct hentry {
  int64_t host_ts;
  int32_t stream, idx;
} hentry;

typedef struct markidx {
  hentry *all, *byst;
  size_t nall;
  size_t *off;      /* nstreams + 1 */
  int32_t *mint;    /* 2 * nall: indices into all[] */
  int32_t *maxt;    /* 2 * nall: per stream s, its tree in maxt[2 off[s] .. 2 off[s + 1]) */
  int32_t *last;    /* per stream: scratch of mark_deps */
  uint32_t *stamp;  /* per stream: scratch of mark_deps */
  uint32_t now;
  int32_t *touched; /* per stream: scratch of mark_deps, the streams a short step launched on */
  int32_t *known;   /* nstreams x nstreams: known[s * nstreams + o], the highest op of stream o that an earlier
                       mark of stream s already waits for (-1: none), so that a later mark of s does not */
} markidx;

/* (mark, stream) pairs that mark_deps examined in this process, for the test of its cost (check_kineto.c). */
static uint64_t mark_work;

uint64_t dt_kineto_mark_work(void)
{
  return mark_work;
}

static int hentry_cmp(const void *a, const void *b)
{
  const hentry *x = a, *y = b;
  if (x->host_ts != y->host_ts)
    return x->host_ts < y->host_ts ? -1 : 1;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Whether all[i] starts on the GPU before all[j] (ties: lower stream, then lower index, as a scan would find). */
static int earlier(const build *b, const hentry *all, int32_t i, int32_t j)
{
  if (j < 0)
    return i >= 0;
  if (i < 0)
    return 0;
  int64_t ti = b->streams[all[i].stream].ops[all[i].idx].ev->ts, tj = b->streams[all[j].stream].ops[all[j].idx].ev->ts;
  if (ti != tj)
    return ti < tj;
  if (all[i].stream != all[j].stream)
    return all[i].stream < all[j].stream;
  return all[i].idx < all[j].idx;
}

/* First index of e[0..n) with host_ts >= t (e sorted by host_ts). */
static size_t lower_ts(const hentry *e, size_t n, int64_t t)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e[mid].host_ts < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Which of two entries of a segment tree wins: the op of the earliest GPU start (over all[]) or the highest op
 * index (over a stream's slice). -1 stands for none and never wins. */
typedef struct tree_order {
  const build *b; /* NULL: the highest index wins, else the earliest GPU start of all[] */
  const hentry *all;
} tree_order;

static int wins(const tree_order *o, int32_t x, int32_t y)
{
  return o->b ? earlier(o->b, o->all, x, y) : x > y;
}

/* Fills the inner nodes of the segment tree t[1 .. 2 len) (its leaves t[len .. 2 len) are set) bottom-up. */
static void tree_build(int32_t *t, size_t len, const tree_order *o)
{
  for (size_t i = len; i-- > 1;)
    t[i] = wins(o, t[2 * i], t[2 * i + 1]) ? t[2 * i] : t[2 * i + 1];
}

/* The winner among leaves [l, r) (0-based) of the segment tree t of len leaves, -1 when the range is empty:
 * O(log len). */
static int32_t tree_query(const int32_t *t, size_t len, size_t l, size_t r, const tree_order *o)
{
  int32_t best = -1;
  for (l += len, r += len; l < r; l >>= 1, r >>= 1) {
    if (l & 1) {
      if (wins(o, t[l], best))
        best = t[l];
      l++;
    }
    if (r & 1) {
      r--;
      if (wins(o, t[r], best))
        best = t[r];
    }
  }
  return best;
}

static markidx *markidx_new(const build *b)
{
  markidx *m = dt_xcalloc(1, sizeof *m);
  size_t n = 0;
  for (size_t s = 0; s < b->nstreams; s++)
    n += b->streams[s].nops;
  m->nall = n;
  m->all = dt_xmalloc((n ? n : 1) * sizeof *m->all);
  m->byst = dt_xmalloc((n ? n : 1) * sizeof *m->byst);
  m->off = dt_xmalloc((b->nstreams + 1) * sizeof *m->off);
  m->mint = dt_xmalloc(2 * (n ? n : 1) * sizeof *m->mint);
  m->maxt = dt_xmalloc(2 * (n ? n : 1) * sizeof *m->maxt);
  m->last = dt_xmalloc((b->nstreams ? b->nstreams : 1) * sizeof *m->last);
  m->stamp = dt_xcalloc(b->nstreams ? b->nstreams : 1, sizeof *m->stamp);
  m->touched = dt_xmalloc((b->nstreams ? b->nstreams : 1) * sizeof *m->touched);
  size_t S = b->nstreams ? b->nstreams : 1; /* at most MAX_STREAMS: S x S is at most 256 KiB */
  m->known = dt_xmalloc(S * S * sizeof *m->known);
  for (size_t i = 0; i < S * S; i++)
    m->known[i] = -1;
  size_t k = 0;
  for (size_t s = 0; s < b->nstreams; s++) {
    m->off[s] = k;
    for (size_t i = 0; i < b->streams[s].nops; i++, k++)
      m->byst[k] = (hentry){b->streams[s].ops[i].host_ts, (int32_t)s, (int32_t)i};
    size_t len = k - m->off[s];
    hentry *e = m->byst + m->off[s];
    qsort(e, len, sizeof *e, hentry_cmp);
    int32_t *t = m->maxt + 2 * m->off[s];
    for (size_t i = 0; i < len; i++)
      t[len + i] = e[i].idx;
    tree_build(t, len, &(tree_order){NULL, NULL});
  }
  m->off[b->nstreams] = k;
  memcpy(m->all, m->byst, n * sizeof *m->all);
  qsort(m->all, n, sizeof *m->all, hentry_cmp);
  for (size_t i = 0; i < n; i++)
    m->mint[n + i] = (int32_t)i;
  tree_build(m->mint, n, &(tree_order){b, m->all});
  return m;
}

static void markidx_free(markidx *m)
{
  if (!m)
    return;
  free(m->all);
  free(m->byst);
  free(m->off);
  free(m->mint);
  free(m->maxt);
  free(m->last);
  free(m->stamp);
  free(m->touched);
  free(m->known);
  free(m);
}

/* Highest op index of stream s launched in [lo, hi), -1 for none: O(log ops). */
static int32_t last_in(const markidx *m, size_t s, int64_t lo, int64_t hi)
{
  const hentry *e = m->byst + m->off[s];
  size_t len = m->off[s + 1] - m->off[s];
  return tree_query(m->maxt + 2 * m->off[s], len, lower_ts(e, len, lo), lower_ts(e, len, hi),
                    &(tree_order){NULL, NULL});
}

/* ProfilerStep#N → `mark` on the stream of the step's first GPU op, after the last op of that stream launched
 * inside the step; the mark also waits for the last in-step op of every other stream, so it completes when the
 * step's GPU work is done. An op is inside a step when its launch (CPU time, through the correlation id) falls
 * in the step's annotation; ops without a known launch use their GPU start. O((steps + ops) log ops). */
static void place_marks(build *b)
{
  kin *k = b->k;
  b->mx = markidx_new(b);
  const markidx *m = b->mx;
  for (size_t si = 0; si < k->nsteps; si++) {
    const span_ev *st = &k->steps[si];
    int64_t lo = st->ts, hi = st->ts + st->dur;
    int32_t first = tree_query(m->mint, m->nall, lower_ts(m->all, m->nall, lo), lower_ts(m->all, m->nall, hi),
                               &(tree_order){b, m->all});
    if (first < 0) {
      dt_trace_add_note(b->t, "kineto warning: '%s' launched no GPU work; no mark for it", k->names.s[st->name]);
      continue;
    }
    size_t first_s = (size_t)m->all[first].stream;
    add_mark(&b->streams[first_s], last_in(m, first_s, lo, hi), (int32_t)si);
  }
}

static int cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Appends to *out (growing it, *n entries of *cap) the deps of the mark placed after op `after` of stream `s` for
 * step `step`, in stream order: the last in-step op of every other stream that the mark does not already
 * follow, through the op's clock or an earlier mark of s (marks of a stream come in stream order: a later one
 * follows the earlier ones, and what they wait for). A step launching fewer ops than there are streams is read
 * from its ops and only the streams it launched on are examined, else each stream is asked:
 * O(min(step's ops, streams x log ops)) per mark, and the deps of all marks number at most streams x ops (each
 * (s, o) pair's dep moves strictly forward on o), not marks x streams. Returns the count appended. */
static uint32_t mark_deps(build *b, size_t s, int32_t after, int32_t step, dt_dep **out, size_t *n, size_t *cap)
{
  const span_ev *st = &b->k->steps[step];
  int64_t lo = st->ts, hi = st->ts + st->dur;
  const int32_t *clock = b->streams[s].ops[after].clock;
  markidx *m = b->mx;
  size_t S = b->nstreams;
  int32_t *known = m->known + s * S;
  size_t a = lower_ts(m->all, m->nall, lo), c = lower_ts(m->all, m->nall, hi);
  int few = c - a < S;
  size_t nt = 0;
  if (few) {
    if (++m->now == 0) { /* the stamps wrapped: start them again */
      memset(m->stamp, 0, S * sizeof *m->stamp);
      m->now = 1;
    }
    for (size_t i = a; i < c; i++) {
      size_t o = (size_t)m->all[i].stream;
      if (m->stamp[o] != m->now) {
        m->stamp[o] = m->now;
        m->last[o] = -1;
        m->touched[nt++] = (int32_t)o;
      }
      if (m->all[i].idx > m->last[o])
        m->last[o] = m->all[i].idx;
    }
    qsort(m->touched, nt, sizeof *m->touched, cmp_i32); /* in stream order, as a scan of every stream */
  }
  size_t nexam = few ? nt : S;
  mark_work += nexam;
  uint32_t added = 0;
  for (size_t e = 0; e < nexam; e++) {
    size_t o = few ? (size_t)m->touched[e] : e;
    if (o == s)
      continue;
    int32_t last = few ? m->last[o] : last_in(m, o, lo, hi);
    if (last < 0 || clock[o] >= last || known[o] >= last)
      continue;
    known[o] = last;
    *out = dt_grow(*out, cap, *n, sizeof **out);
    (*out)[(*n)++] = (dt_dep){(int32_t)o, b->streams[o].ops[last].pos};
    added++;
  }
  return added;
}

/* The op's `after=` edges: its captured cross-stream dependencies, and (host timeline) its launch. */
static void set_deps(dt_op *op, const build *b, const op_info *x, int with_launch)
{
  uint32_t n = x->ndeps + (with_launch && x->host_s >= 0);
  if (!n)
    return;
  op->deps = dt_xmalloc(n * sizeof *op->deps);
  op->ndeps = n;
  for (uint32_t d = 0; d < x->ndeps; d++)
    op->deps[d] = (dt_dep){x->deps[d].stream, b->streams[x->deps[d].stream].ops[x->deps[d].op].pos};
  if (n > x->ndeps) /* host streams follow the GPU streams */
    op->deps[x->ndeps] = (dt_dep){(int32_t)b->nstreams + x->host_s, x->host_i};
}

static int launch_ptr_cmp(const void *a, const void *b)
{
  const launch_ev *x = *(const launch_ev *const *)a, *y = *(const launch_ev *const *)b;
  if (x->pid != y->pid)
    return (x->pid > y->pid) - (x->pid < y->pid);
  if (x->tid != y->tid)
    return (x->tid > y->tid) - (x->tid < y->tid);
  if (x->ts != y->ts)
    return (x->ts > y->ts) - (x->ts < y->ts);
  return (x->corr > y->corr) - (x->corr < y->corr);
}

static hop *push_hop(hstream *h, int64_t dur, uint32_t line)
{
  h->ops = dt_grow(h->ops, &h->cap, h->nops, sizeof *h->ops);
  hop *o = &h->ops[h->nops++];
  *o = (hop){dur > 0 ? dur : 0, line, 0, NULL};
  return o;
}

/* Index of the last op of stream s launched before host time ts (ops of a stream are launched in stream
 * order), or -1. */
static int32_t last_launched_before(const tstream *s, int64_t ts)
{
  size_t lo = 0, hi = s->nops;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->ops[mid].host_ts < ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (int32_t)lo - 1;
}

/* What the host timeline found, for the notes. */
typedef struct host_stats {
  size_t anchored;     /* GPU ops waiting for their launch */
  size_t waits;        /* blocking calls replayed as waits on GPU ops */
  size_t waits_free;   /* blocking calls that waited for nothing in the capture (no GPU op ended inside) */
} host_stats;

/* The host launch timeline (docs/import-kineto.md): every captured host thread that launched GPU work
 * becomes a stream of `delay` ops holding its CPU time between launches, starting at t0 (ns). Each launch
 * ends one delay, and the GPU op it launched (by correlation id) waits for that delay. A blocking call
 * (cudaDeviceSynchronize: every stream's last op launched before it; cudaStreamSynchronize /
 * cudaEventSynchronize: the op, launched before the call, whose end falls inside the call and is the latest;
 * a synchronous or device-to-pageable copy: the copy itself) becomes a delay that waits for the GPU ops it
 * covered, holding only the part of the call after they ended. Every edge points at work that ended earlier
 * in the capture, so no cycle is created. */
static void host_timeline(build *b, int64_t t0, int32_t base_id, host_stats *st)
{
  kin *k = b->k;
  size_t L = k->nlaunches;
  memset(st, 0, sizeof *st);
  if (!L)
    return;
  int32_t *ls = dt_xmalloc(L * sizeof *ls), *li = dt_xmalloc(L * sizeof *li);
  for (size_t j = 0; j < L; j++)
    ls[j] = li[j] = -1;
  /* the op each launch call anchors: its earliest (a cudaGraphLaunch launches many kernels under one
   * correlation id; all of them wait for the same launch) */
  for (size_t s = 0; s < b->nstreams; s++)
    for (size_t i = 0; i < b->streams[s].nops; i++) {
      int32_t l = b->streams[s].ops[i].launch;
      if (l >= 0 && (ls[l] < 0 || b->streams[s].ops[i].ev->ts < b->streams[ls[l]].ops[li[l]].ev->ts)) {
        ls[l] = (int32_t)s;
        li[l] = (int32_t)i;
      }
    }
  const launch_ev **by_thread = dt_xmalloc(L * sizeof *by_thread);
  for (size_t j = 0; j < L; j++)
    by_thread[j] = &k->launches[j];
  qsort(by_thread, L, sizeof *by_thread, launch_ptr_cmp);
  size_t S = b->nstreams, hcap = 0;
  sdep *cover = dt_xmalloc((S ? S : 1) * sizeof *cover);
  for (size_t a = 0; a < L;) {
    size_t z = a;
    int launches = 0;
    while (z < L && by_thread[z]->pid == by_thread[a]->pid && by_thread[z]->tid == by_thread[a]->tid) {
      launches |= ls[by_thread[z] - k->launches] >= 0;
      z++;
    }
    if (!launches) { /* a thread that launched nothing we keep only waits: nothing waits for it */
      a = z;
      continue;
    }
    b->hosts = dt_grow(b->hosts, &hcap, b->nhosts, sizeof *b->hosts);
    hstream *h = &b->hosts[b->nhosts];
    *h = (hstream){by_thread[a]->pid, by_thread[a]->tid, base_id + (int32_t)b->nhosts, NULL, 0, 0, 0, 0};
    int32_t hidx = (int32_t)b->nhosts++;
    int64_t now = t0;
    for (; a < z; a++) {
      const launch_ev *e = by_thread[a];
      size_t j = (size_t)(e - k->launches);
      int64_t end = e->ts + e->dur;
      if (ls[j] >= 0) {
        op_info *x = &b->streams[ls[j]].ops[li[j]];
        int64_t at = end < x->ev->ts ? end : x->ev->ts; /* the launch has queued the op by then */
        if (at < now)
          at = now;
        push_hop(h, at - now, 3 * (uint32_t)x->order);
        h->cpu_ns += at - now;
        now = at;
        x->host_s = hidx;
        x->host_i = (int32_t)h->nops - 1;
        st->anchored++;
        h->nlaunch++;
        if (e->kind == RT_MEMCPY_SYNC || x->ev->pageable_d2h) {
          int64_t from = ev_end(x->ev) > now ? ev_end(x->ev) : now;
          hop *w = push_hop(h, end - from, 3 * (uint32_t)x->order + 2);
          w->deps = dt_xmalloc(sizeof *w->deps);
          w->deps[0] = (sdep){ls[j], li[j]};
          w->ndeps = 1;
          h->cpu_ns += w->dur;
          st->waits++;
          if (end > now)
            now = end;
        }
        continue;
      }
      if (e->kind != RT_SYNC_STREAM && e->kind != RT_SYNC_EVENT && e->kind != RT_SYNC_DEVICE)
        continue;
      size_t nc = 0;
      int64_t last_end = INT64_MIN;
      int32_t last_order = -1;
      for (size_t s = 0; s < S; s++) {
        int32_t i = last_launched_before(&b->streams[s], e->ts);
        if (i < 0)
          continue;
        const op_info *x = &b->streams[s].ops[i];
        int64_t xe = ev_end(x->ev);
        if (e->kind == RT_SYNC_DEVICE) {
          cover[nc++] = (sdep){(int32_t)s, i};
        } else if (xe >= e->ts && xe <= end && xe > last_end) {
          nc = 0; /* the one latest-ending op the call waited for */
          cover[nc++] = (sdep){(int32_t)s, i};
        } else
          continue;
        if (xe > last_end)
          last_end = xe;
        if (x->order > last_order)
          last_order = x->order;
      }
      if (e->kind != RT_SYNC_DEVICE && nc == 0) {
        st->waits_free++; /* returned at once: its time is CPU time */
        continue;
      }
      if (nc == 0)
        continue;
      if (e->ts > now) {
        push_hop(h, e->ts - now, 3 * (uint32_t)last_order + 2);
        h->cpu_ns += e->ts - now;
        now = e->ts;
      }
      hop *w = push_hop(h, end - (last_end > now ? last_end : now), 3 * (uint32_t)last_order + 2);
      w->deps = dt_xmalloc(nc * sizeof *w->deps);
      memcpy(w->deps, cover, nc * sizeof *w->deps);
      w->ndeps = (uint32_t)nc;
      h->cpu_ns += w->dur;
      st->waits++;
      if (end > now)
        now = end;
    }
  }
  /* the other ops of a multi-kernel launch wait for the same delay */
  for (size_t s = 0; s < b->nstreams; s++)
    for (size_t i = 0; i < b->streams[s].nops; i++) {
      op_info *x = &b->streams[s].ops[i];
      if (x->launch < 0 || x->host_s >= 0 || ls[x->launch] < 0)
        continue;
      const op_info *a = &b->streams[ls[x->launch]].ops[li[x->launch]];
      if (a->host_s < 0)
        continue;
      x->host_s = a->host_s;
      x->host_i = a->host_i;
      st->anchored++;
      b->hosts[a->host_s].nlaunch++;
    }
  free(cover);
  free(by_thread);
  free(ls);
  free(li);
}

static int32_t peer_of(int32_t rprime, int32_t peer, int32_t rank, int32_t nranks)
{
  int64_t v = ((int64_t)rprime + peer - rank) % nranks;
  return (int32_t)(v < 0 ? v + nranks : v);
}

/* Emits the captured program once, on the captured rank, and makes every other expanded rank a template
 * user of it (DESIGN.md §4): its groups map to its own tiles, its peers keep their offset (dt_trace_op_peer's
 * rule is peer_of's). A 1,024-rank expansion holds the ops once, not 1,024 times. */
static int emit(build *b, dt_error *err)
{
  kin *k = b->k;
  dt_trace *t = b->t;
  /* mark deps are the same on every rank: computed once */
  size_t nm = 0;
  for (size_t s = 0; s < b->nstreams; s++)
    nm += b->streams[s].nmarks;
  dt_dep *mdeps = NULL; /* every mark's deps, one after the other: mark m's from moff[m] */
  size_t nmdeps = 0, mdeps_cap = 0;
  uint32_t *mnd = dt_xmalloc((nm ? nm : 1) * sizeof *mnd);
  size_t *moff = dt_xmalloc((nm ? nm : 1) * sizeof *moff);
  for (size_t s = 0, m = 0; s < b->nstreams; s++)
    for (size_t mi = 0; mi < b->streams[s].nmarks; mi++, m++) { /* in op order (sorted with the gaps) */
      moff[m] = nmdeps;
      mnd[m] = mark_deps(b, s, b->streams[s].mark_after[mi], b->streams[s].mark_step[mi], &mdeps, &nmdeps,
                         &mdeps_cap);
    }
  {
    int32_t r = b->rank;
    size_t m = 0;
    for (size_t s = 0; s < b->nstreams; s++)
      dt_trace_stream(t, r, b->streams[s].id, 1); /* stream positions in order of first op */
    for (size_t h = 0; h < b->nhosts; h++) /* host streams after the GPU streams (set_deps relies on it) */
      dt_trace_stream(t, r, b->hosts[h].id, 1);
    for (size_t h = 0; h < b->nhosts; h++) {
      const hstream *hs = &b->hosts[h];
      for (size_t i = 0; i < hs->nops; i++) {
        const hop *ho = &hs->ops[i];
        dt_op *d = dt_trace_append(t, r, hs->id);
        d->kind = DT_OP_DELAY;
        d->dur = (double)ho->dur / 1e9;
        d->file = b->file;
        d->line = ho->line;
        if (ho->ndeps) {
          d->deps = dt_xmalloc(ho->ndeps * sizeof *d->deps);
          d->ndeps = ho->ndeps;
          for (uint32_t q = 0; q < ho->ndeps; q++)
            d->deps[q] = (dt_dep){ho->deps[q].stream, b->streams[ho->deps[q].stream].ops[ho->deps[q].op].pos};
        }
      }
    }
    for (size_t s = 0; s < b->nstreams; s++) {
      tstream *ts = &b->streams[s];
      size_t mi = 0;
      for (size_t i = 0; i < ts->nops; i++) {
        const op_info *x = &ts->ops[i];
        if (x->delay > 0) {
          dt_op *d = dt_trace_append(t, r, ts->id);
          d->kind = DT_OP_DELAY;
          d->dur = (double)x->delay / 1e9; /* ns: dividing keeps round decimals round */
          d->file = b->file;
          d->line = 3 * (uint32_t)x->order + 1; /* issue order; the position is the event */
          d->event = x->ev->event + 1;
          if (x->deps_on_delay)
            set_deps(d, b, x, 1);
        }
        dt_op *op = dt_trace_append(t, r, ts->id);
        op->file = b->file;
        op->line = 3 * (uint32_t)x->order + 2;
        op->event = x->ev->event + 1;
        if (!x->deps_on_delay)
          set_deps(op, b, x, 1);
        if (x->ev->comm < 0) {
          op->kind = DT_OP_COMPUTE;
          op->dur = (double)x->ev->dur / 1e9;
          op->name = dt_xstrdup(k->names.s[x->ev->name]);
        } else {
          const comm_op *c = &b->cops[x->ev->comm];
          if (b->merge && dt_op_is_collective(c->kind)) {
            mergectx *mc = b->merge;
            mc->refs[r] = dt_grow(mc->refs[r], &mc->caps[r], mc->nrefs[r], sizeof *mc->refs[r]);
            mc->refs[r][mc->nrefs[r]++] =
                (seqref){(int32_t)s, (int32_t)t->ranks[r].streams[s].nops - 1, c->seq};
          }
          op->kind = c->kind;
          op->bytes = c->bytes;
          if (c->nsplits) {
            op->splits = dt_xmalloc(c->nsplits * sizeof *op->splits);
            memcpy(op->splits, c->splits, c->nsplits * sizeof *op->splits);
            op->nsplits = c->nsplits;
          }
          op->name = dt_xstrdup(k->names.s[c->name]);
          op->dtype = dt_xstrdup(c->dtype);
          if (c->kind == DT_OP_SEND || c->kind == DT_OP_RECV)
            op->peer = peer_of(r, c->peer, b->rank, b->nranks);
          else
            op->group = k->groups[c->cgroup >= 0 ? c->cgroup : b->world_group].tile_of[r];
        }
        for (; mi < ts->nmarks && ts->mark_after[mi] == (int32_t)i; mi++, m++) {
          uint32_t nd = mnd[m];
          dt_op *mk = dt_trace_append(t, r, ts->id);
          mk->kind = DT_OP_MARK;
          mk->file = b->file;
          mk->line = 3 * (uint32_t)x->order + 3;
          mk->event = k->steps[ts->mark_step[mi]].event + 1;
          mk->name = dt_xstrdup(k->names.s[k->steps[ts->mark_step[mi]].name]);
          if (nd) {
            mk->deps = dt_xmalloc(nd * sizeof *mk->deps);
            memcpy(mk->deps, mdeps + moff[m], nd * sizeof *mk->deps);
            mk->ndeps = nd;
          }
        }
      }
    }
  }
  free(mdeps);
  free(mnd);
  free(moff);

  if (b->merge) /* every rank has a capture of its own */
    return DT_OK;
  /* the other ranks: the captured rank's tile of each group -> their own tile */
  int32_t *map = dt_xmalloc((t->ngroups ? t->ngroups : 1) * sizeof *map);
  int rc = DT_OK;
  for (int32_t r = 0; r < b->nranks && rc == DT_OK; r++) {
    if (r == b->rank)
      continue;
    for (size_t g = 0; g < t->ngroups; g++)
      map[g] = -1; /* groups the captured rank does not use */
    for (size_t i = 0; i < k->ngroups; i++)
      if (k->groups[i].tile_of)
        map[k->groups[i].tile_of[b->rank]] = k->groups[i].tile_of[r];
    rc = dt_trace_set_template(t, r, b->rank, map, err);
  }
  free(map);
  return rc;
}

typedef struct raw_ref {
  int64_t raw;
  size_t i; /* position in the start-time order */
} raw_ref;

static int raw_cmp(const void *a, const void *b)
{
  const raw_ref *x = a, *y = b;
  if (x->raw != y->raw)
    return x->raw < y->raw ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int first_cmp(const void *a, const void *b)
{
  const raw_ref *x = a, *y = b;
  return (x->i > y->i) - (x->i < y->i);
}

/* The streams of the captured rank, in order of their first op, each holding its GPU ops in start-time order
 * (sorted: k->ngpu events by start). O(n log n). A CUDA stream number that is not a valid sN (negative, or
 * above INT32_MAX) gets the smallest number no captured stream uses, said in the notes, so that what import
 * writes, run reads, and two numbers never merge. Refuses more than MAX_STREAMS streams or MAX_CLOCK_ENTRIES
 * ops x streams (find_deps' vector clocks) before allocating for them. */
static int make_streams(build *b, const gpu_ev **sorted, dt_error *err)
{
  kin *k = b->k;
  size_t n = k->ngpu;
  raw_ref *r = dt_xmalloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++)
    r[i] = (raw_ref){sorted[i]->stream, i};
  qsort(r, n, sizeof *r, raw_cmp);
  /* one entry per stream: its number and first op */
  size_t ns = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || r[i].raw != r[i - 1].raw)
      r[ns++] = r[i];
  if (ns > MAX_STREAMS || (uint64_t)ns * n > MAX_CLOCK_ENTRIES) {
    free(r);
    return dt_error_set(err, k->path, 0, 0, "the capture has %zu GPU ops on %zu CUDA streams: more than dtsim "
                        "imports (at most %d streams and %u ops x streams)", n, ns, MAX_STREAMS, MAX_CLOCK_ENTRIES);
  }
  /* ids: valid numbers as they are (r is sorted by number), the others the free numbers from 0 up */
  int32_t *id = dt_xmalloc(ns * sizeof *id);
  size_t v0 = 0;
  while (v0 < ns && r[v0].raw < 0)
    v0++;
  int64_t next = 0;
  size_t used = v0, nmapped = 0;
  for (size_t s = 0; s < ns; s++) {
    if (r[s].raw >= 0 && r[s].raw <= INT32_MAX) {
      id[s] = (int32_t)r[s].raw;
      continue;
    }
    for (;; next++) { /* the next number no valid stream has: the valid ones are sorted from v0 */
      while (used < ns && r[used].raw <= INT32_MAX && r[used].raw < next)
        used++;
      if (used >= ns || r[used].raw > INT32_MAX || r[used].raw != next)
        break;
    }
    id[s] = (int32_t)next++;
    if (nmapped++ < 8)
      dt_trace_add_note(b->t, "kineto: CUDA stream %lld is not a valid stream number (0-%d): written as s%d",
                        (long long)r[s].raw, INT32_MAX, (int)id[s]);
  }
  if (nmapped > 8)
    dt_trace_add_note(b->t, "kineto: %zu more CUDA stream numbers outside 0-%d renumbered likewise", nmapped - 8,
                      INT32_MAX);
  /* streams in order of first op; the sort of r by first op goes with the ids */
  raw_ref *byfirst = dt_xmalloc(ns * sizeof *byfirst);
  for (size_t s = 0; s < ns; s++)
    byfirst[s] = (raw_ref){(int64_t)id[s], r[s].i};
  qsort(byfirst, ns, sizeof *byfirst, first_cmp);
  b->streams = dt_xcalloc(ns ? ns : 1, sizeof *b->streams);
  b->nstreams = ns;
  int32_t *slot = dt_xmalloc(n * sizeof *slot); /* per op in start order: its stream position */
  for (size_t s = 0; s < ns; s++) {
    b->streams[s].id = (int32_t)byfirst[s].raw;
    b->streams[s].raw = sorted[byfirst[s].i]->stream;
  }
  /* each op's stream: ops of one stream are a run of the re-sorted r; redo the sort to walk them */
  for (size_t i = 0; i < n; i++)
    r[i] = (raw_ref){sorted[i]->stream, i};
  qsort(r, n, sizeof *r, raw_cmp);
  /* byfirst is in first-op order: map each stream's first op to its position */
  for (size_t s = 0; s < ns; s++)
    slot[byfirst[s].i] = (int32_t)s;
  for (size_t i = 0; i < n; i++)
    if (i > 0 && r[i].raw == r[i - 1].raw)
      slot[r[i].i] = slot[r[i - 1].i];
  for (size_t i = 0; i < n; i++)
    b->streams[slot[i]].nops++;
  for (size_t s = 0; s < ns; s++) {
    b->streams[s].ops = dt_xcalloc(b->streams[s].nops, sizeof *b->streams[s].ops);
    b->streams[s].nops = 0;
  }
  for (size_t i = 0; i < n; i++) {
    tstream *ts = &b->streams[slot[i]];
    op_info *o = &ts->ops[ts->nops++];
    o->ev = sorted[i];
    const launch_ev *l = find_launch(k, sorted[i]->corr);
    o->host_ts = l ? l->ts : sorted[i]->ts;
    o->launch = l ? (int32_t)(l - k->launches) : -1;
    o->host_s = o->host_i = -1;
  }
  free(slot);
  free(byfirst);
  free(id);
  free(r);
  return DT_OK;
}

static int mark_cmp(const void *a, const void *b)
{
  const int32_t *x = a, *y = b;
  if (x[0] != y[0])
    return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Finds or adds the trace group of captured group g in a merged trace: the group with the same ranks in the
 * same order, else a new one named base (made unique). Sets g->tile_of[rank] (the only rank that uses it from
 * this capture) and g->first_tile. */
static int merge_group(cgroup *g, const char *base, int32_t rank, int32_t nranks, dt_trace *t, uint32_t file,
                       dt_error *err)
{
  int gi = -1;
  for (size_t i = 0; i < t->ngroups && gi < 0; i++)
    if (t->groups[i].nranks == g->nranks && memcmp(t->groups[i].ranks, g->ranks, g->nranks * sizeof *g->ranks) == 0)
      gi = (int)i;
  if (gi < 0) {
    char name[300];
    snprintf(name, sizeof name, "%s", base);
    for (int n = 2; dt_trace_find_group(t, name) >= 0; n++)
      snprintf(name, sizeof name, "%s_%d", base, n);
    gi = dt_trace_add_group(t, name, g->ranks, g->nranks, file, 0, err);
    if (gi < 0)
      return DT_ERR;
    char list[200];
    format_ranks(g->ranks, g->nranks, list, sizeof list);
    dt_trace_add_note(t, "kineto: group '%s' = process group '%s'%s%s%s, ranks %s", name,
                      g->pg_name ? g->pg_name : g->used_as_world ? "(none: all ranks)" : "?", g->pg_desc ? " (" : "",
                      g->pg_desc ? g->pg_desc : "", g->pg_desc ? ")" : "", list);
  }
  g->tile_of = dt_xmalloc((size_t)nranks * sizeof *g->tile_of);
  for (int32_t r = 0; r < nranks; r++)
    g->tile_of[r] = -1;
  g->tile_of[rank] = gi;
  g->first_tile = gi;
  return DT_OK;
}

/* Builds the program of capture k. With shared == NULL: a new trace of the capture's rank, expanded to every
 * rank by symmetry (*out). With shared: the capture is rank mrank of a merged world of mworld ranks; its ops go
 * into shared as that rank's own (no expansion), its groups are shared with the other ranks' captures by rank
 * list, and its collectives' sequence numbers are recorded in mc for matching. */
static int build_trace(kin *k, const dt_import_opts *opts, dt_trace *shared, int32_t mrank, int32_t mworld,
                       mergectx *mc, dt_trace **out, dt_error *err)
{
  int rc = DT_ERR;
  build b = {0};
  b.k = k;
  b.opts = opts;
  b.world_group = -1;
  b.merge = shared ? mc : NULL;
  dt_trace *t = NULL;

  /* vintage (FORMATS.md): 1 puts sizes on the NCCL kernels, 2 on record_param_comms / nccl:* shapes, 3 nowhere */
  size_t sized = 0, shaped = 0;
  for (size_t i = 0; i < k->ncomms; i++)
    sized += k->comms[i].has_in || k->comms[i].has_out;
  for (size_t i = 0; i < k->nannots; i++)
    shaped += k->annots[i].nelems >= 0;
  int vintage = k->ncomms == 0 || sized > 0 ? 1 : shaped > 0 || k->seen_input_dims ? 2 : 3;
  if (k->ngpu == 0)
    return dt_error_set(err, k->path, 0, 0, "kineto trace has no GPU events (kernel, gpu_memcpy, gpu_memset)");

  /* rank and world */
  int32_t rank = -1;
  const char *rank_from = "distributedInfo.rank";
  if (!shared && k->dist_rank >= DT_TRACE_MAX_RANKS)
    return dt_error_set(err, k->path, 0, 0, "distributedInfo.rank %lld is more than dtsim supports (ranks 0-%d)",
                        (long long)k->dist_rank, DT_TRACE_MAX_RANKS - 1);
  if (shared)
    rank = mrank;
  else if (k->dist_rank >= 0)
    rank = (int32_t)k->dist_rank;
  else if (opts->rank >= 0) {
    rank = opts->rank;
    rank_from = "the --rank option";
  } else if (file_rank(k->path, &rank) == DT_OK)
    rank_from = "the file name";
  else
    return dt_error_set(err, k->path, 0, 0, "kineto trace does not say its rank (no distributedInfo.rank): give "
                        "the rank (--rank) or name the file '...rank-N...'");
  if (rank >= DT_TRACE_MAX_RANKS)
    return dt_error_set(err, k->path, 0, 0, "capture rank %d (from %s) is more than dtsim supports (ranks 0-%d)",
                        (int)rank, rank_from, DT_TRACE_MAX_RANKS - 1);
  if (k->dist_world > DT_TRACE_MAX_RANKS)
    return dt_error_set(err, k->path, 0, 0, "distributedInfo.world_size %lld is more than dtsim supports (at most %d "
                        "ranks)", (long long)k->dist_world, DT_TRACE_MAX_RANKS);
  if (opts->expand > DT_TRACE_MAX_RANKS)
    return dt_error_set(err, k->path, 0, 0, "--expand %d is more than dtsim supports (at most %d ranks)",
                        (int)opts->expand, DT_TRACE_MAX_RANKS);
  int32_t world = (int32_t)(shared ? mworld : k->dist_world > 0 ? k->dist_world : 0);
  int world_guessed = world <= 0;
  if (world_guessed) {
    /* the largest rank any group names, in 64 bits (rank + 1 of INT32_MAX), checked against the limit before
     * anything is sized by it */
    int64_t guess = (int64_t)rank + 1;
    const char *from = "the capture rank";
    for (size_t i = 0; i < k->npgs; i++)
      for (size_t j = 0; j < k->pgs[i].nranks; j++)
        if ((int64_t)k->pgs[i].ranks[j] + 1 > guess) {
          guess = (int64_t)k->pgs[i].ranks[j] + 1;
          from = "distributedInfo.pg_config";
        }
    for (size_t i = 0; i < k->ngroups; i++) {
      int tr;
      int32_t *r = NULL;
      size_t n = k->groups[i].ranks_text ? parse_rank_list(k->groups[i].ranks_text, &r, &tr) : 0;
      for (size_t j = 0; j < n; j++)
        if ((int64_t)r[j] + 1 > guess) {
          guess = (int64_t)r[j] + 1;
          from = "a kernel's 'Process Group Ranks'";
        }
      if (k->groups[i].size > guess) {
        guess = k->groups[i].size;
        from = "a kernel's 'Group size'";
      }
      free(r);
    }
    if (guess > DT_TRACE_MAX_RANKS)
      return dt_error_set(err, k->path, 0, 0, "no distributedInfo.world_size, and %s implies a world of %lld ranks: "
                          "more than dtsim supports (at most %d ranks)", from, (long long)guess, DT_TRACE_MAX_RANKS);
    world = (int32_t)guess;
  }
  if (rank >= world)
    return dt_error_set(err, k->path, 0, 0, "kineto trace is rank %d of a world of %d ranks", (int)rank, (int)world);
  int32_t nranks = opts->expand > 0 && !shared ? opts->expand : world;
  if (rank >= nranks)
    return dt_error_set(err, k->path, 0, 0, "cannot expand the capture of rank %d to %d ranks", (int)rank,
                        (int)nranks);
  b.rank = rank;
  b.world = world;
  b.nranks = nranks;

  char buf[512];
  if (shared) {
    t = shared;
    b.t = t;
    b.file = dt_trace_add_file(t, k->path);
    dt_trace_add_meta(t, "source", k->path);
    snprintf(buf, sizeof buf, "rank %d: metadata vintage %d", (int)rank, vintage);
    dt_trace_add_meta(t, "kineto_vintage", buf);
  } else {
    t = dt_trace_new(nranks);
    b.t = t;
    b.file = dt_trace_add_file(t, k->path);
    dt_trace_add_meta(t, "source", k->path);
    dt_trace_add_meta(t, "format", "kineto");
    snprintf(buf, sizeof buf, "%d", (int)rank);
    dt_trace_add_meta(t, "capture_rank", buf);
    snprintf(buf, sizeof buf, "%d", (int)world);
    dt_trace_add_meta(t, "world_size", buf);
    if (world_guessed)
      dt_trace_add_note(t, "kineto warning: no distributedInfo.world_size; world assumed to be %d ranks (the largest "
                        "rank seen in the process groups)", (int)world);
    if (rank_from[0] != 'd')
      dt_trace_add_note(t, "kineto: capture rank %d taken from %s", (int)rank, rank_from);
    snprintf(buf, sizeof buf, "%d", vintage);
    dt_trace_add_meta(t, "kineto_vintage", buf);
  }
  if (vintage > 1)
    dt_trace_add_note(t, "kineto: metadata vintage %d: NCCL kernels carry no sizes; %s", vintage,
                      vintage == 2 ? "sizes come from the 'Input Dims' of the enclosing nccl:* annotation or "
                                     "record_param_comms, the op from the annotation"
                                   : "the op comes from the enclosing nccl:* annotation and sizes are estimated");

  /* launches by correlation id, annotations by thread and time, steps by time */
  if (k->nlaunches) /* qsort with a NULL array is undefined even for 0 elements */
    qsort(k->launches, k->nlaunches, sizeof *k->launches, launch_cmp);
  if (k->nannots)
    qsort(k->annots, k->nannots, sizeof *k->annots, annot_cmp);
  if (k->nsteps)
    qsort(k->steps, k->nsteps, sizeof *k->steps, span_cmp);

  /* groups */
  for (size_t i = 0; i < k->ngroups; i++)
    if (resolve_group(k, &k->groups[i], rank, world, t, err) != DT_OK)
      goto cleanup;
  if (resolve_comms(&b, err) != DT_OK)
    goto cleanup;
  int need_world = 0;
  for (size_t i = 0; i < k->ncomms; i++)
    need_world |= b.cops[i].cgroup < 0 && b.cops[i].kind != DT_OP_SEND && b.cops[i].kind != DT_OP_RECV;
  for (size_t i = 0; i < k->ngroups; i++) {
    cgroup *g = &k->groups[i];
    int used = 0;
    for (size_t c = 0; c < k->ncomms && !used; c++)
      used = b.cops[c].cgroup == (int32_t)i && b.cops[c].kind != DT_OP_SEND && b.cops[c].kind != DT_OP_RECV;
    if (!used)
      continue;
    char base[280], clean[260];
    sanitize_name(g->pg_name ? g->pg_name : "", clean, sizeof clean);
    if (g->pg_name)
      snprintf(base, sizeof base, "pg%s", clean);
    else
      snprintf(base, sizeof base, "pg_anon%zu", i);
    if (shared) {
      if (merge_group(g, base, rank, nranks, t, b.file, err) != DT_OK)
        goto cleanup;
      continue;
    }
    char list[200];
    format_ranks(g->ranks, g->nranks, list, sizeof list);
    if ((int32_t)g->nranks == world && nranks > world) {
      /* the captured world's group (data parallelism over every rank): expanding the capture means a bigger
       * world, not copies of the small one */
      free(g->ranks);
      g->ranks = dt_xmalloc((size_t)nranks * sizeof *g->ranks);
      for (int32_t r = 0; r < nranks; r++)
        g->ranks[r] = r;
      g->nranks = (size_t)nranks;
      dt_trace_add_note(t, "kineto: process group '%s' spans the captured world of %d ranks: expanded to all %d ranks",
                        g->pg_name ? g->pg_name : "?", (int)world, (int)nranks);
    }
    if (tile_group(k, g, base, nranks, t, b.file, err) != DT_OK)
      goto cleanup;
    dt_trace_add_note(t, "kineto: group '%s' = process group '%s'%s%s%s, ranks %s", t->groups[g->first_tile].name,
                      g->pg_name ? g->pg_name : "?", g->pg_desc ? " (" : "", g->pg_desc ? g->pg_desc : "",
                      g->pg_desc ? ")" : "", list);
    if (nranks > (int32_t)g->nranks)
      dt_trace_add_note(t, "kineto: group '%s' assumed to tile the %d ranks by translation (%d groups '%s', "
                        "'%s_t1', ...)", t->groups[g->first_tile].name, (int)nranks, (int)(nranks / (int32_t)g->nranks),
                        t->groups[g->first_tile].name, t->groups[g->first_tile].name);
  }
  if (need_world) {
    k->groups = dt_grow(k->groups, &k->groups_cap, k->ngroups, sizeof *k->groups);
    cgroup *g = &k->groups[k->ngroups];
    memset(g, 0, sizeof *g);
    g->nranks = (size_t)nranks;
    g->ranks = dt_xmalloc((size_t)nranks * sizeof *g->ranks);
    for (int32_t r = 0; r < nranks; r++)
      g->ranks[r] = r;
    g->used_as_world = 1;
    b.world_group = (int32_t)k->ngroups++;
    if (shared ? merge_group(g, "world", rank, nranks, t, b.file, err) != DT_OK
               : tile_group(k, g, "world", nranks, t, b.file, err) != DT_OK)
      goto cleanup;
  }

  /* streams: GPU ops sorted by start time, streams in order of their first op */
  const gpu_ev **sorted = dt_xmalloc(k->ngpu * sizeof *sorted);
  for (size_t i = 0; i < k->ngpu; i++)
    sorted[i] = &k->gpu[i];
  qsort(sorted, k->ngpu, sizeof *sorted, gpu_cmp);
  if (make_streams(&b, sorted, err) != DT_OK) {
    free(sorted);
    goto cleanup;
  }
  int64_t t0 = sorted[0]->ts;
  free(sorted);

  find_deps(&b);
  place_marks(&b);

  /* host launch timeline (the default; --gaps keep|drop replay the GPU streams alone) */
  host_stats hst = {0};
  int host = opts->host_timeline;
  int64_t h0 = t0; /* time origin: the earliest of the first GPU op, the first step and the first launch */
  if (host) {
    if (k->nsteps && k->steps[0].ts < h0)
      h0 = k->steps[0].ts;
    for (size_t s = 0; s < b.nstreams; s++)
      for (size_t i = 0; i < b.streams[s].nops; i++)
        if (b.streams[s].ops[i].launch >= 0 && b.streams[s].ops[i].host_ts < h0)
          h0 = b.streams[s].ops[i].host_ts;
    int32_t max_id = 0;
    for (size_t s = 0; s < b.nstreams; s++)
      if (b.streams[s].id > max_id)
        max_id = b.streams[s].id;
    int32_t base_id = max_id < INT32_MAX - 2000000 ? (max_id / 1000 + 1) * 1000 : 0;
    if (base_id == 0) /* a GPU stream near INT32_MAX: the first window of a million numbers no GPU stream uses */
      for (int64_t base = 1000; base < INT32_MAX - 1000000; base += 1000000) {
        size_t s = 0;
        while (s < b.nstreams && !(b.streams[s].id >= base && b.streams[s].id < base + 1000000))
          s++;
        if (s == b.nstreams) {
          base_id = (int32_t)base;
          break;
        }
      }
    host_timeline(&b, h0, base_id, &hst);
  }

  /* gaps (delay ops) and final positions */
  size_t ndelays = 0;
  double gap_total = 0; /* ns, summed over streams: may pass int64 */
  for (size_t s = 0; s < b.nstreams; s++) {
    tstream *ts = &b.streams[s];
    /* marks in op order (steps are sorted, but two steps can land after ops in any order) */
    if (ts->nmarks > 1) {
      int32_t *pairs = dt_xmalloc(ts->nmarks * 2 * sizeof *pairs);
      for (size_t m = 0; m < ts->nmarks; m++)
        pairs[2 * m] = ts->mark_after[m], pairs[2 * m + 1] = ts->mark_step[m];
      qsort(pairs, ts->nmarks, 2 * sizeof *pairs, mark_cmp);
      for (size_t m = 0; m < ts->nmarks; m++)
        ts->mark_after[m] = pairs[2 * m], ts->mark_step[m] = pairs[2 * m + 1];
      free(pairs);
    }
    int32_t pos = 0;
    int64_t prev_end = host ? h0 : t0;
    for (size_t i = 0; i < ts->nops; i++) {
      op_info *x = &ts->ops[i];
      int64_t ready = prev_end;
      for (uint32_t d = 0; d < x->ndeps; d++) {
        int64_t e = ev_end(b.streams[x->deps[d].stream].ops[x->deps[d].op].ev);
        if (e > ready)
          ready = e;
      }
      int64_t gap = x->ev->ts - prev_end;
      if (gap > 0)
        gap_total += (double)gap;
      /* idle time spent waiting for a captured dependency is not CPU/launch time: the delay is what is left
       * after the wait, and the wait is put on the delay op so the simulated wait comes first */
      /* host timeline: an op waits for its launch instead; one without a captured launch keeps its gap */
      int keep = host ? x->host_s < 0 : opts->keep_gaps;
      if (keep && x->ev->ts - ready > 0) {
        x->delay = x->ev->ts - ready;
        x->deps_on_delay = x->ndeps > 0;
        pos++;
        ndelays++;
      }
      x->pos = pos++;
      pos += x->nmarks;
      if (ev_end(x->ev) > prev_end)
        prev_end = ev_end(x->ev);
    }
  }

  if (emit(&b, err) != DT_OK)
    goto cleanup;

  /* captured step time (merged: rank 0's, whose marks give the report's iterations) */
  if (k->nsteps > 0 && (!shared || rank == 0)) {
    double sum = 0;
    for (size_t i = 0; i < k->nsteps; i++)
      sum += (double)k->steps[i].dur / 1e9;
    t->captured_step_s = sum / (double)k->nsteps;
    snprintf(buf, sizeof buf, "%.9gs", t->captured_step_s);
    dt_trace_add_meta(t, "captured_step_time", buf);
  } else if (k->nsteps == 0)
    dt_trace_add_note(t, "kineto warning: no ProfilerStep#N annotation: no marks and no captured step time");

  size_t ncomp = 0;
  for (size_t i = 0; i < k->ngpu; i++)
    ncomp += k->gpu[i].comm < 0;
  dt_trace_add_note(t, "kineto: imported %zu compute ops (captured durations) and %zu NCCL kernels (sized from their "
                    "metadata; their captured durations are not used) on %zu streams, %zu profiler steps",
                    ncomp, k->ncomms, b.nstreams, k->nsteps);
  if (host) {
    double steps_s = 0;
    for (size_t i = 0; i < k->nsteps; i++)
      steps_s += (double)k->steps[i].dur * 1e-9;
    dt_trace_add_note(t, "kineto: host launch timeline: %zu host thread(s) replayed as streams (%d and up), %zu GPU ops "
                      "wait for their launch, %zu blocking calls wait for the GPU ops they covered (%zu more returned "
                      "at once in the capture and stay CPU time); GPU idle gaps are not replayed (%.6g s of them on the "
                      "captured rank), %zu GPU ops without a captured launch keep theirs (%zu delay ops)",
                      b.nhosts, b.nhosts ? (int)b.hosts[0].id : 0, hst.anchored, hst.waits, hst.waits_free,
                      gap_total * 1e-9, ndelays ? ndelays : 0, ndelays);
    for (size_t h = 0; h < b.nhosts; h++) {
      const hstream *hs = &b.hosts[h];
      char share[96] = "";
      if (steps_s > 0)
        snprintf(share, sizeof share, ", %.1f%% of the %.6g s of captured profiler steps",
                 100.0 * (double)hs->cpu_ns * 1e-9 / steps_s, steps_s);
      dt_trace_add_note(t, "kineto: stream s%d = host thread %" PRId64 " of process %" PRId64 ": %zu launches, %.6g s "
                        "of captured CPU time between launches and waits%s", (int)hs->id, hs->tid, hs->pid,
                        hs->nlaunch, (double)hs->cpu_ns * 1e-9, share);
    }
    dt_trace_add_note(t, "kineto: cross-stream dependency window %.3g us; CUDA event waits (cudaStreamWaitEvent) are "
                      "not read, host threads' joins with each other are kept as captured time", opts->dep_window_s * 1e6);
  } else
    dt_trace_add_note(t, "kineto: idle gaps %s (%zu delay ops; %.6g s of gaps on the captured rank), cross-stream "
                      "dependency window %.3g us", opts->keep_gaps ? "kept" : "dropped", ndelays,
                      gap_total * 1e-9, opts->dep_window_s * 1e6);
  if (nranks > 1 && !shared)
    dt_trace_add_note(t, "kineto: single-rank capture of rank %d expanded to %d ranks by symmetry: every rank runs "
                      "rank %d's ops", (int)rank, (int)nranks, (int)rank);
  if (shared)
    t = NULL; /* the caller's */
  else
    *out = t;
  t = NULL;
  rc = DT_OK;
cleanup:
  for (size_t s = 0; s < b.nstreams; s++) {
    for (size_t i = 0; i < b.streams[s].nops; i++) {
      free(b.streams[s].ops[i].clock);
      free(b.streams[s].ops[i].deps);
    }
    free(b.streams[s].ops);
    free(b.streams[s].mark_after);
    free(b.streams[s].mark_step);
  }
  markidx_free(b.mx);
  free(b.streams);
  for (size_t h = 0; h < b.nhosts; h++) {
    for (size_t i = 0; i < b.hosts[h].nops; i++)
      free(b.hosts[h].ops[i].deps);
    free(b.hosts[h].ops);
  }
  free(b.hosts);
  for (size_t i = 0; b.cops && i < k->ncomms; i++)
    free(b.cops[i].splits);
  free(b.cops);
  if (!shared)
    dt_trace_free(t);
  return rc;
}

int dt_kineto_import(const char *path, const dt_import_opts *opts, dt_trace **out, dt_error *err)
{
  return dt_kineto_import_many(&path, 1, opts, out, err);
}

static int ref_pos_cmp(const void *a, const void *b)
{
  const seqref *x = a, *y = b;
  if (x->stream != y->stream)
    return (x->stream > y->stream) - (x->stream < y->stream);
  return (x->index > y->index) - (x->index < y->index);
}

static int ref_seq_cmp(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Turns a collective op of a merged trace into nothing (a zero delay keeps the positions after= uses). */
static void neutralize(dt_op *op)
{
  op->kind = DT_OP_DELAY;
  op->dur = 0;
  op->group = -1;
  op->bytes = 0;
  free(op->splits);
  op->splits = NULL;
  op->nsplits = 0;
}

/* After every rank of a merged capture is built: per group, the collectives' `Seq` numbers (when every
 * member's capture has them) decide which instances all members captured — one a member's window missed is
 * dropped on the others, with a note — and all-to-alls whose sizes differ across members become all-to-allv
 * (splits=, each member's own bytes spread evenly over the group, Kineto's split sizes being in rows). */
static int merge_fixups(dt_trace *t, mergectx *mc, dt_error *err)
{
  size_t G = t->ngroups;
  /* per group, per member position: the member's collectives on it, in issue order */
  size_t **cnt = dt_xcalloc(G ? G : 1, sizeof *cnt);
  seqref ***lists = dt_xcalloc(G ? G : 1, sizeof *lists);
  for (size_t g = 0; g < G; g++) {
    cnt[g] = dt_xcalloc(t->groups[g].nranks, sizeof *cnt[g]);
    lists[g] = dt_xcalloc(t->groups[g].nranks, sizeof *lists[g]);
  }
  int rc = DT_OK;
  size_t dropped = 0, avs = 0;
  for (int32_t r = 0; r < t->nranks; r++) {
    size_t nops = dt_trace_rank_op_count(t, r);
    dt_dep *order = dt_xmalloc((nops ? nops : 1) * sizeof *order);
    dt_trace_rank_order(t, r, order);
    /* seq of each collective, found by (stream, index) */
    if (mc->nrefs[r])
      qsort(mc->refs[r], mc->nrefs[r], sizeof *mc->refs[r], ref_pos_cmp);
    for (size_t i = 0; i < nops; i++) {
      dt_op *op = &t->ranks[r].streams[order[i].stream].ops[order[i].index];
      if (!dt_op_is_collective(op->kind) || op->group < 0)
        continue;
      const dt_group *gr = &t->groups[op->group];
      size_t m = 0;
      while (m < gr->nranks && gr->ranks[m] != r)
        m++;
      if (m == gr->nranks)
        continue; /* the validator names it */
      seqref key = {order[i].stream, order[i].index, -1};
      const seqref *hit = mc->nrefs[r] ? bsearch(&key, mc->refs[r], mc->nrefs[r], sizeof key, ref_pos_cmp) : NULL;
      int64_t seq = hit ? hit->seq : -1;
      size_t cap = cnt[op->group][m];
      lists[op->group][m] = dt_grow(lists[op->group][m], &cap, cnt[op->group][m], sizeof **lists[op->group]);
      lists[op->group][m][cnt[op->group][m]++] = (seqref){order[i].stream, order[i].index, seq};
    }
    free(order);
  }
  for (size_t g = 0; g < G && rc == DT_OK; g++) {
    const dt_group *gr = &t->groups[g];
    size_t n = gr->nranks, total = 0;
    int all_seq = 1;
    for (size_t m = 0; m < n; m++)
      for (size_t i = 0; i < cnt[g][m]; i++) {
        all_seq &= lists[g][m][i].seq >= 0;
        total++;
      }
    if (all_seq && total > 0) {
      int64_t *seqs = dt_xmalloc(total * sizeof *seqs);
      size_t ns = 0;
      for (size_t m = 0; m < n; m++)
        for (size_t i = 0; i < cnt[g][m]; i++)
          seqs[ns++] = lists[g][m][i].seq;
      qsort(seqs, ns, sizeof *seqs, ref_seq_cmp);
      for (size_t m = 0; m < n; m++) {
        size_t w = 0;
        int64_t prev = -1;
        for (size_t i = 0; i < cnt[g][m]; i++) {
          seqref *x = &lists[g][m][i];
          if (x->seq <= prev) {
            rc = dt_error_set(err, t->files[t->ranks[gr->ranks[m]].streams[x->stream].ops[x->index].file], 0, 0,
                              "rank %d issues collective Seq %" PRId64 " on group '%s' after Seq %" PRId64
                              ": sequence numbers must grow in issue order", (int)gr->ranks[m], x->seq, gr->name,
                              prev);
            break;
          }
          prev = x->seq;
          /* members holding this seq: count its run in the sorted list */
          size_t lo = 0, hi = ns;
          while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (seqs[mid] < x->seq)
              lo = mid + 1;
            else
              hi = mid;
          }
          size_t run = 0;
          while (lo + run < ns && seqs[lo + run] == x->seq)
            run++;
          if (run == n)
            lists[g][m][w++] = *x;
          else {
            neutralize(&t->ranks[gr->ranks[m]].streams[x->stream].ops[x->index]);
            dropped++;
          }
        }
        cnt[g][m] = w;
        if (rc != DT_OK)
          break;
      }
      free(seqs);
    }
    if (rc != DT_OK)
      break;
    /* all-to-all whose sizes differ across members: all-to-allv as captured */
    size_t k = cnt[g][0];
    for (size_t m = 1; m < n; m++)
      if (cnt[g][m] < k)
        k = cnt[g][m];
    for (size_t i = 0; i < k; i++) {
      int alltoall = 1, differ = 0;
      uint64_t b0 = 0;
      for (size_t m = 0; m < n; m++) {
        const dt_op *op = &t->ranks[gr->ranks[m]].streams[lists[g][m][i].stream].ops[lists[g][m][i].index];
        alltoall &= op->kind == DT_OP_ALLTOALL;
        if (m == 0)
          b0 = op->bytes;
        differ |= op->bytes != b0 || op->splits != NULL;
      }
      if (!alltoall || !differ)
        continue;
      avs++;
      for (size_t m = 0; m < n; m++) {
        dt_op *op = &t->ranks[gr->ranks[m]].streams[lists[g][m][i].stream].ops[lists[g][m][i].index];
        if (op->splits)
          continue;
        op->splits = dt_xmalloc(n * sizeof *op->splits);
        op->nsplits = (uint32_t)n;
        for (size_t q = 0; q < n; q++)
          op->splits[q] = op->bytes / n + (q < op->bytes % n);
      }
    }
  }
  if (dropped)
    dt_trace_add_note(t, "kineto: %zu collective(s) whose Seq number not every member of their group captured (the "
                      "capture windows differ) were dropped", dropped);
  if (avs)
    dt_trace_add_note(t, "kineto: %zu all-to-all instance(s) have different sizes on different ranks: kept as captured, "
                      "as all-to-allv with each rank's bytes split evenly over its group (Kineto's split sizes are "
                      "in rows, not bytes)", avs);
  for (size_t g = 0; g < G; g++) {
    for (size_t m = 0; m < t->groups[g].nranks; m++)
      free(lists[g][m]);
    free(lists[g]);
    free(cnt[g]);
  }
  free(lists);
  free(cnt);
  return rc;
}

/* Prefixes the notes added since `from` with the rank they belong to. */
static void prefix_notes(dt_trace *t, size_t from, int32_t rank)
{
  for (size_t i = from; i < t->nnotes; i++) {
    size_t len = strlen(t->notes[i]) + 32;
    char *n = dt_xmalloc(len);
    snprintf(n, len, "rank %d: %s", (int)rank, t->notes[i]);
    free(t->notes[i]);
    t->notes[i] = n;
  }
}

int dt_kineto_import_many(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                          dt_error *err)
{
  dt_import_opts defaults;
  dt_import_opts_init(&defaults);
  if (!opts)
    opts = &defaults;
  *out = NULL;
  if (npaths == 0)
    return dt_error_set(err, "", 0, 0, "no Kineto capture given");
  if (npaths == 1) {
    kin *k = dt_xcalloc(1, sizeof *k);
    k->path = paths[0];
    k->dist_rank = k->dist_world = -1;
    int rc = parse_file(k, err);
    if (rc == DT_OK)
      rc = build_trace(k, opts, NULL, -1, 0, NULL, out, err);
    free_kin(k);
    free(k);
    return rc;
  }
  if (npaths > (size_t)DT_TRACE_MAX_RANKS)
    return dt_error_set(err, paths[0], 0, 0, "%zu captures: more than dtsim supports (at most %d ranks)", npaths,
                        DT_TRACE_MAX_RANKS);
  /* one capture at a time: parsed, built into the shared trace, freed (memory of one capture's events) */
  dt_trace *t = NULL;
  int32_t world = 0;
  const char **by_rank = NULL;
  mergectx mc = {0};
  int rc = DT_OK;
  for (size_t f = 0; f < npaths && rc == DT_OK; f++) {
    kin *k = dt_xcalloc(1, sizeof *k);
    k->path = paths[f];
    k->dist_rank = k->dist_world = -1;
    rc = parse_file(k, err);
    int32_t rank = -1;
    const char *from = "distributedInfo.rank";
    if (rc == DT_OK) {
      if (k->dist_rank >= 0 && k->dist_rank < DT_TRACE_MAX_RANKS)
        rank = (int32_t)k->dist_rank;
      else if (file_rank(k->path, &rank) == DT_OK)
        from = "its file name";
      else
        rc = dt_error_set(err, k->path, 0, 0, "kineto capture does not say its rank (no distributedInfo.rank): with "
                          "several captures name each file '...rank-N...' (--rank applies to one capture)");
    }
    if (rc == DT_OK && f == 0) {
      world = k->dist_world > 0 && k->dist_world <= DT_TRACE_MAX_RANKS ? (int32_t)k->dist_world : (int32_t)npaths;
      t = dt_trace_new(world);
      by_rank = dt_xcalloc((size_t)world, sizeof *by_rank);
      mc.refs = dt_xcalloc((size_t)world, sizeof *mc.refs);
      mc.nrefs = dt_xcalloc((size_t)world, sizeof *mc.nrefs);
      mc.caps = dt_xcalloc((size_t)world, sizeof *mc.caps);
      char buf[32];
      dt_trace_add_meta(t, "format", "kineto");
      snprintf(buf, sizeof buf, "%d", (int)world);
      dt_trace_add_meta(t, "world_size", buf);
      dt_trace_add_note(t, "kineto: %zu captures merged into one trace of %d ranks (one capture per rank; "
                        "collectives matched by Seq where every member has it, else by issue order per group)",
                        npaths, (int)world);
    }
    if (rc == DT_OK && k->dist_world > 0 && k->dist_world != world)
      rc = dt_error_set(err, k->path, 0, 0, "distributedInfo.world_size is %lld but '%s' says %d: captures of one "
                        "run must agree", (long long)k->dist_world, paths[0], (int)world);
    if (rc == DT_OK && (rank < 0 || rank >= world))
      rc = dt_error_set(err, k->path, 0, 0, "capture of rank %d is outside the world of %d ranks", (int)rank,
                        (int)world);
    if (rc == DT_OK && by_rank[rank])
      rc = dt_error_set(err, k->path, 0, 0, "is a capture of rank %d, as is '%s': one capture per rank", (int)rank,
                        by_rank[rank]);
    if (rc == DT_OK) {
      by_rank[rank] = paths[f];
      size_t from_note = t->nnotes;
      if (from[0] != 'd')
        dt_trace_add_note(t, "kineto: rank %d taken from %s", (int)rank, from);
      rc = build_trace(k, opts, t, rank, world, &mc, NULL, err);
      prefix_notes(t, from_note, rank);
    }
    free_kin(k);
    free(k);
  }
  if (rc == DT_OK) {
    char missing[256] = "";
    size_t nmiss = 0, len = 0;
    for (int32_t r = 0; r < world; r++)
      if (!by_rank[r] && nmiss++ < 16 && len + 16 < sizeof missing)
        len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%d", len ? ", " : "", (int)r);
    if (nmiss)
      rc = dt_error_set(err, paths[0], 0, 0, "%zu of the %d ranks have no capture (%s%s): give one file per rank",
                        nmiss, (int)world, missing, nmiss > 16 ? ", ..." : "");
  }
  if (rc == DT_OK)
    rc = merge_fixups(t, &mc, err);
  if (mc.refs)
    for (int32_t r = 0; r < world; r++)
      free(mc.refs[r]);
  free(mc.refs);
  free(mc.nrefs);
  free(mc.caps);
  free(by_rank);
  if (rc != DT_OK) {
    dt_trace_free(t);
    return DT_ERR;
  }
  *out = t;
  return DT_OK;
}
