/* The native text trace format v1 (DESIGN.md §4, docs/trace-format.md): reader of one file or of the
 * per-rank files of one trace, and the writer whose output reads back to an equal trace. The reader only
 * parses and checks what one line can tell; cross-rank matching is dt_trace_validate's. */
#include "dt_trace_io.h"

#include "../common/dt_outfile.h"
#include "../common/dt_units.h"
#include "../common/dt_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <zlib.h>

/* ---------------------------------------------------------------------------------------------------------
 * Keys and which op takes which: one table row per op. */

enum {
  K_DUR,
  K_FLOP,
  K_GROUP,
  K_BYTES,
  K_ROOT,
  K_SPLITS,
  K_PEER,
  K_TAG,
  K_NAME,
  K_DTYPE,
  K_BATCH,
  K_AFTER,
  K_KERNELS,
  K_COUNT
};

static const char *const key_names[K_COUNT] = {
    [K_DUR] = "dur",     [K_FLOP] = "flop", [K_GROUP] = "group", [K_BYTES] = "bytes",
    [K_ROOT] = "root",   [K_SPLITS] = "splits", [K_PEER] = "peer", [K_TAG] = "tag",
    [K_NAME] = "name",   [K_DTYPE] = "dtype",   [K_BATCH] = "batch", [K_AFTER] = "after",
    [K_KERNELS] = "kernels",
};

#define KB(k) (1u << (k))
#define COMMON_KEYS (KB(K_NAME) | KB(K_DTYPE) | KB(K_BATCH) | KB(K_AFTER))

/* allowed: keys the op takes besides the common ones; required: keys it must have; one_of: exactly one of
 * these must be given. */
static const struct {
  unsigned allowed, required, one_of;
} op_keys[DT_OP_COUNT] = {
    [DT_OP_COMPUTE] = {KB(K_DUR) | KB(K_FLOP) | KB(K_KERNELS), 0, KB(K_DUR) | KB(K_FLOP)},
    [DT_OP_ALLREDUCE] = {KB(K_GROUP) | KB(K_BYTES), KB(K_GROUP) | KB(K_BYTES), 0},
    [DT_OP_REDUCESCATTER] = {KB(K_GROUP) | KB(K_BYTES), KB(K_GROUP) | KB(K_BYTES), 0},
    [DT_OP_BROADCAST] = {KB(K_GROUP) | KB(K_BYTES) | KB(K_ROOT), KB(K_GROUP) | KB(K_BYTES), 0},
    [DT_OP_REDUCE] = {KB(K_GROUP) | KB(K_BYTES) | KB(K_ROOT), KB(K_GROUP) | KB(K_BYTES), 0},
    [DT_OP_ALLGATHER] = {KB(K_GROUP) | KB(K_BYTES), KB(K_GROUP) | KB(K_BYTES), 0},
    [DT_OP_ALLTOALL] = {KB(K_GROUP) | KB(K_BYTES) | KB(K_SPLITS), KB(K_GROUP), KB(K_BYTES) | KB(K_SPLITS)},
    [DT_OP_BARRIER] = {KB(K_GROUP), KB(K_GROUP), 0},
    [DT_OP_SEND] = {KB(K_PEER) | KB(K_BYTES) | KB(K_TAG), KB(K_PEER) | KB(K_BYTES), 0},
    [DT_OP_RECV] = {KB(K_PEER) | KB(K_BYTES) | KB(K_TAG), KB(K_PEER) | KB(K_BYTES), 0},
    [DT_OP_MARK] = {0, 0, 0},
    [DT_OP_DELAY] = {KB(K_DUR), KB(K_DUR), 0},
    [DT_OP_OTHER] = {KB(K_GROUP) | KB(K_BYTES), KB(K_GROUP) | KB(K_BYTES), 0},
};

static const char *const line_words[] = {"dtsim_trace", "ranks", "group", "meta", "rank"};

/* ---------------------------------------------------------------------------------------------------------
 * Reader state. */

typedef struct tok {
  char *key;        /* the whole token when it has no '=' */
  char *val;        /* NULL when the token has no '=' */
  long kcol, vcol;  /* 1-based byte columns in the line of the token and of its value (after the '=') */
  int quoted;       /* the token holds a quote: offsets inside val are not columns */
} tok;

typedef struct reader {
  dt_trace *t;
  dt_error *err;
  uint32_t *sect_file, *sect_line; /* where each rank's section starts (line 0: none yet) */
  uint32_t *group_decl;            /* per group: 1 + index of the last file that declared it */
  char *buf;                       /* unescaped tokens of the current line */
  size_t bufcap;
  tok *toks;
  size_t ntoks, tokcap;
  int32_t *ilist;
  size_t icap;
  char *item; /* one item of a list value (a rank range, an after= or splits= item), NUL-terminated */
  size_t itemcap;
} reader;

typedef struct fstate {
  const char *name;
  uint32_t file;
  long line;
  int seen_magic, seen_ranks, defines; /* defines: this file creates the trace and its groups */
  size_t ngroups;                      /* groups declared in this file */
  int32_t cur_rank;                    /* rank of the open section, -1 before the first */
  long col;                            /* column of the error's subject on the current line, 0 for the line */
  const tok *vtok;                     /* the token whose value is being read (for columns inside it) */
  uint64_t line_at;                    /* byte offset of the current line in the (uncompressed) text */
  int gz;                              /* the file is gzip-compressed: offsets count its uncompressed text */
} fstate;

static int ferr(reader *rd, const fstate *fs, const char *fmt, ...) DT_PRINTF(3, 4);

static int ferr(reader *rd, const fstate *fs, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(rd->err, fs->name, fs->line, fs->col, fmt, ap);
  va_end(ap);
  return DT_ERR;
}

/* ---------------------------------------------------------------------------------------------------------
 * Values. */

/* The len bytes at p as a NUL-terminated string in the reader's scratch (valid until the next call): list items
 * of any length, so that a long spelling of a value in range (leading zeros) reads as that value. */
static char *item_text(reader *rd, const char *p, size_t len)
{
  rd->item = dt_grow(rd->item, &rd->itemcap, len, 1);
  memcpy(rd->item, p, len);
  rd->item[len] = '\0';
  return rd->item;
}

/* An integer in [lo, hi], spelled as every whole number dtsim reads (dt_parse_whole: decimal digits alone, leading
 * zeros decimal), with a '-' in front for a negative one. Returns 0 with *out, -1 when s is not an integer, -2 when
 * it is one outside [lo, hi] (also past 64 bits). Every id and count of the format reads through it: streams, ranks,
 * peers, roots, tags, batches and after= positions. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
  int neg = s[0] == '-';
  uint64_t m;
  int rc = dt_parse_whole_u64(s + neg, UINT64_MAX, &m);
  if (rc != 0)
    return rc;
  int64_t v;
  if (neg) {
    if (m > (uint64_t)INT64_MAX + 1)
      return -2;
    v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
  } else {
    if (m > (uint64_t)INT64_MAX)
      return -2;
    v = (int64_t)m;
  }
  if (v < lo || v > hi)
    return -2;
  *out = v;
  return 0;
}

/* A whole number from 0 to hi (<= INT32_MAX). Returns 0, -1 or -2 as parse_int. */
static int parse_count(const char *s, int32_t hi, int32_t *out)
{
  int64_t v;
  int rc = parse_int(s, 0, hi, &v);
  if (rc == 0)
    *out = (int32_t)v;
  return rc;
}

/* `s<N>` stream name, N from 0 to INT32_MAX. */
static int parse_stream(const char *s, int32_t *out)
{
  return s[0] == 's' && isdigit((unsigned char)s[1]) ? parse_count(s + 1, INT32_MAX, out) : -1;
}

/* Points the error column at the value of the token being read (fs->vtok), offset bytes into it; a quoted value's
 * offsets are not columns, so it points at the value's start. */
static void at_value(fstate *fs, size_t offset)
{
  if (fs->vtok)
    fs->col = fs->vtok->vcol + (fs->vtok->quoted ? 0 : (long)offset);
}

/* Rank list "0-3,8-11,12" into rd->ilist; checks bounds against nranks. Returns the count or -1. */
static long parse_rank_list(reader *rd, fstate *fs, const char *text)
{
  size_t n = 0;
  const char *p = text;
  if (!*p)
    return ferr(rd, fs, "empty rank list"), -1;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0)
      return ferr(rd, fs, "bad rank list '%s': expected values and ranges such as '0-3,8-11'", text), -1;
    char *item = item_text(rd, p, len);
    char *dash = strchr(item, '-');
    int32_t a = 0, b = 0, last = rd->t->nranks - 1;
    at_value(fs, (size_t)(p - text));
    if (dash) {
      *dash = '\0';
      int ra = parse_count(item, last, &a), rb = parse_count(dash + 1, last, &b);
      if (ra == -1 || rb == -1 || (ra == 0 && rb == 0 && b < a))
        return ferr(rd, fs, "bad rank range '%.*s' in '%s': expected 'first-last' with first <= last, ranks from 0 "
                    "to %d", (int)len, p, text, (int)last),
               -1;
      if (ra != 0 || rb != 0)
        return ferr(rd, fs, "rank range '%.*s' in '%s' is out of range: the trace has %d ranks (0-%d)", (int)len, p,
                    text, (int)rd->t->nranks, (int)last),
               -1;
    } else {
      int ra = parse_count(item, last, &a);
      if (ra == -1)
        return ferr(rd, fs, "bad rank '%s' in '%s': expected a rank from 0 to %d (a whole number)", item, text,
                    (int)last),
               -1;
      if (ra != 0)
        return ferr(rd, fs, "rank %s in '%s' is out of range: the trace has %d ranks (0-%d)", item, text,
                    (int)rd->t->nranks, (int)last),
               -1;
      b = a;
    }
    for (int64_t r = a; r <= b; r++) {
      rd->ilist = dt_grow(rd->ilist, &rd->icap, n, sizeof *rd->ilist);
      rd->ilist[n++] = (int32_t)r;
    }
    if (!comma)
      break;
    p = comma + 1;
  }
  return (long)n;
}

/* ---------------------------------------------------------------------------------------------------------
 * Lines. */

/* Splits a line into tokens (unescaped into rd->buf). `#` outside quotes ends the line. An error points at the
 * opening quote left open or at the backslash of an unknown escape. */
static int tokenize(reader *rd, fstate *fs, const char *line, size_t len)
{
  rd->buf = dt_grow(rd->buf, &rd->bufcap, len + 1, 1);
  char *o = rd->buf;
  size_t i = 0;
  rd->ntoks = 0;
  for (;;) {
    while (i < len && isspace((unsigned char)line[i]))
      i++;
    if (i >= len || line[i] == '#')
      break;
    rd->toks = dt_grow(rd->toks, &rd->tokcap, rd->ntoks, sizeof *rd->toks);
    tok *tk = &rd->toks[rd->ntoks++];
    tk->key = o;
    tk->val = NULL;
    tk->kcol = tk->vcol = (long)i + 1;
    tk->quoted = 0;
    while (i < len && !isspace((unsigned char)line[i]) && line[i] != '#') {
      char c = line[i++];
      if (c == '"') {
        tk->quoted = 1;
        fs->col = (long)i; /* the opening quote, 1-based */
        for (;;) {
          if (i >= len)
            return ferr(rd, fs, "unterminated quoted value: a '\"' is missing");
          c = line[i++];
          if (c == '"')
            break;
          if (c == '\\') {
            if (i >= len)
              return ferr(rd, fs, "unterminated quoted value: a '\"' is missing");
            long at = (long)i; /* the backslash, 1-based */
            char e = line[i++];
            switch (e) {
            case '"':
            case '\\':
              c = e;
              break;
            case 'n':
              c = '\n';
              break;
            case 't':
              c = '\t';
              break;
            case 'r':
              c = '\r';
              break;
            default:
              fs->col = at;
              return ferr(rd, fs, "unknown escape '\\%c' in a quoted value: use '\\\"' or '\\\\'", e);
            }
          }
          *o++ = c;
        }
      } else if (c == '=' && !tk->val) {
        *o++ = '\0';
        tk->val = o;
        tk->vcol = (long)i + 1;
        tk->quoted = 0; /* a quote in the key does not shift the value */
      } else {
        *o++ = c;
      }
    }
    *o++ = '\0';
  }
  return DT_OK;
}

static int parse_after(reader *rd, fstate *fs, dt_op *op, const char *text)
{
  size_t n = 1;
  for (const char *p = text; *p; p++)
    n += *p == ',';
  op->deps = dt_xcalloc(n, sizeof *op->deps);
  const char *p = text;
  for (size_t k = 0; k < n; k++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    at_value(fs, (size_t)(p - text));
    if (len == 0)
      return ferr(rd, fs, "bad after= value '%s': expected 'sN:I' items such as 's0:0,s2:5'", text);
    char *item = item_text(rd, p, len);
    char *colon = strchr(item, ':');
    int32_t sid, idx;
    if (!colon)
      return ferr(rd, fs, "bad after= item '%s': expected 'sN:I' (stream and 0-based op position)", item);
    *colon = '\0';
    if (parse_stream(item, &sid) != 0 || parse_count(colon + 1, INT32_MAX, &idx) != 0)
      return ferr(rd, fs, "bad after= item '%s:%s': expected 'sN:I', a stream id N and a 0-based op position I, "
                  "each a whole number from 0 to %d", item, colon + 1, INT32_MAX);
    op->deps[k].stream = sid; /* the sN id until the section ends (see resolve_section) */
    op->deps[k].index = idx;
    op->ndeps = (uint32_t)(k + 1);
    p = comma ? comma + 1 : p + len;
  }
  return DT_OK;
}

static int parse_splits(reader *rd, fstate *fs, dt_op *op, const char *text)
{
  size_t n = 1;
  for (const char *p = text; *p; p++)
    n += *p == ',';
  op->splits = dt_xcalloc(n, sizeof *op->splits);
  op->nsplits = (uint32_t)n;
  const char *p = text;
  uint64_t sum = 0;
  for (size_t k = 0; k < n; k++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char why[256];
    at_value(fs, (size_t)(p - text));
    char *item = item_text(rd, p, len);
    if (dt_parse_bytes(item, &op->splits[k], why, sizeof why) != 0)
      return ferr(rd, fs, "bad splits= item %zu: %s", k + 1, why);
    /* the op moves the sum (its bytes): at most what one op may move, as bytes= (each item is, so no overflow) */
    if (op->splits[k] > DT_BYTES_MAX - sum)
      return ferr(rd, fs, "splits= total is out of range: items 1 to %zu sum to more than the %" PRIu64 " (2^53) "
                  "bytes one op may move (%" PRIu64 " + %" PRIu64 ")", k + 1, DT_BYTES_MAX, sum, op->splits[k]);
    sum += op->splits[k];
    p = comma ? comma + 1 : p + len;
  }
  op->bytes = sum; /* the whole send buffer (DESIGN.md §4) */
  return DT_OK;
}

/* The largest dimension (M, N, K, BATCH) of a kernels= item: exact as a double, as the writer prints it. */
#define KERNEL_DIM_MAX 9.0e15

/* One number of a kernels= item (field j: M, N, K, BATCH, FLOP, BYTES): a plain number (dt_parse_real) that is a
 * whole number up to KERNEL_DIM_MAX for the dimensions, a real from 0 to DT_FLOP_MAX FLOP or DT_BYTES_MAX bytes
 * for the work. Returns 0 with *out, or -1 with the message (naming the range) in why. */
static int kernel_num(reader *rd, const char *t, size_t len, int j, double *out, char *why, size_t why_size)
{
  static const char *const field[] = {"M", "N", "K", "BATCH", "FLOP", "BYTES"};
  double v = 0, max = j < 4 ? KERNEL_DIM_MAX : j == 4 ? DT_FLOP_MAX : (double)DT_BYTES_MAX;
  const char *what = j < 4 ? "a whole number" : j == 4 ? "a number of FLOP" : "a number of bytes";
  int rc = -1;
  if (len > 0)
    rc = dt_parse_real(item_text(rd, t, len), &v);
  if (rc == 0 && v >= 0 && v <= max && (j >= 4 || v == floor(v))) {
    *out = v;
    return 0;
  }
  char range[64];
  if (j < 5)
    snprintf(range, sizeof range, "from 0 to %g", max);
  else
    snprintf(range, sizeof range, "from 0 to %" PRIu64 " (2^53)", DT_BYTES_MAX);
  int shown = (int)(len > 40 ? 40 : len);
  if (rc == -2)
    snprintf(why, why_size, "%s '%.*s' is out of range: nonzero but below %g, the smallest nonzero number dtsim "
             "reads (write 0 for none)", field[j], shown, t, DT_NONZERO_MIN);
  else if (rc == -1 || v < 0 || (j < 4 && isfinite(v) && v != floor(v)))
    snprintf(why, why_size, "%s: expected %s %s, found '%.*s'", field[j], what, range, shown, t);
  else
    snprintf(why, why_size, "%s '%.*s' is out of range: expected %s %s", field[j], shown, t, what, range);
  return -1;
}

/* kernels=KIND[.causal][.bwd]:DTYPE:M:N:K:BATCH:FLOP:BYTES,... (docs/trace-format.md, docs/compute.md) */
static int parse_kernels(reader *rd, fstate *fs, dt_op *op, const char *text)
{
  static const char expect[] = "expected items KIND:DTYPE:M:N:K:BATCH:FLOP:BYTES (KIND gemm, attn, attn.causal, "
                               "attn.bwd, attn.causal.bwd or elem; DTYPE bf16, fp16, fp8 or fp32) joined by ','";
  size_t n = 1;
  for (const char *p = text; *p; p++)
    n += *p == ',';
  op->kernels = dt_xcalloc(n, sizeof *op->kernels);
  op->nkernels = (uint32_t)n;
  const char *p = text;
  for (size_t i = 0; i < n; i++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    const char *f[8];
    size_t fl[8], nf = 0;
    at_value(fs, (size_t)(p - text));
    const char *q = p, *stop = p + len;
    while (nf < 8) {
      const char *colon = memchr(q, ':', (size_t)(stop - q));
      f[nf] = q;
      fl[nf] = colon ? (size_t)(colon - q) : (size_t)(stop - q);
      nf++;
      if (!colon)
        break;
      q = colon + 1;
    }
    if (nf != 8 || f[7] + fl[7] != stop)
      return ferr(rd, fs, "bad kernels= item %zu '%.*s': %s", i + 1, (int)len, p, expect);
    dt_kernel *k = &op->kernels[i];
    char kind[32], dtype[8];
    if (fl[0] >= sizeof kind || fl[1] >= sizeof dtype)
      return ferr(rd, fs, "bad kernels= item %zu '%.*s': %s", i + 1, (int)len, p, expect);
    snprintf(kind, sizeof kind, "%.*s", (int)fl[0], f[0]);
    snprintf(dtype, sizeof dtype, "%.*s", (int)fl[1], f[1]);
    if (strcmp(kind, "gemm") == 0)
      k->kind = DT_KERN_GEMM;
    else if (strcmp(kind, "elem") == 0)
      k->kind = DT_KERN_ELEM;
    else if (strncmp(kind, "attn", 4) == 0 && (kind[4] == '\0' || kind[4] == '.')) {
      k->kind = DT_KERN_ATTN;
      for (char *w = kind + 4; *w == '.';) {
        char *e = strchr(w + 1, '.');
        size_t wl = e ? (size_t)(e - w - 1) : strlen(w + 1);
        if (wl == 6 && strncmp(w + 1, "causal", 6) == 0)
          k->causal = 1;
        else if (wl == 3 && strncmp(w + 1, "bwd", 3) == 0)
          k->bwd = 1;
        else
          return ferr(rd, fs, "bad kernels= item %zu: unknown kind '%s' (%s)", i + 1, kind, expect);
        w = e ? e : w + 1 + wl;
      }
    } else {
      return ferr(rd, fs, "bad kernels= item %zu: unknown kind '%s' (%s)", i + 1, kind, expect);
    }
    int d = dt_dtype_from_name(dtype);
    if (d < 0)
      return ferr(rd, fs, "bad kernels= item %zu: unknown dtype '%s' (expected bf16, fp16, fp8 or fp32)", i + 1,
                  dtype);
    k->dtype = (uint8_t)d;
    double v[6];
    char why[256];
    for (int j = 0; j < 6; j++)
      if (kernel_num(rd, f[2 + j], fl[2 + j], j, &v[j], why, sizeof why) != 0) {
        at_value(fs, (size_t)(f[2 + j] - text));
        return ferr(rd, fs, "bad kernels= item %zu: %s", i + 1, why);
      }
    k->m = (int64_t)v[0];
    k->n = (int64_t)v[1];
    k->k = (int64_t)v[2];
    k->batch = (int64_t)v[3];
    k->flop = v[4];
    k->bytes = v[5];
    p = comma ? comma + 1 : p + len;
  }
  return DT_OK;
}

static int key_value(reader *rd, fstate *fs, int32_t rank, dt_op *op, int key, const char *v)
{
  char why[256];
  int64_t i64;
  int rc;
  switch (key) {
  case K_DUR:
    if (dt_parse_time(v, &op->dur, why, sizeof why) != 0)
      return ferr(rd, fs, "bad dur= value: %s", why);
    return DT_OK;
  case K_FLOP: {
    double f = 0;
    rc = dt_parse_real(v, &f); /* past a double's range: infinite, out of range below */
    if (rc == -2)
      return ferr(rd, fs, "bad flop= value '%s': out of range, nonzero but below %g, the smallest nonzero number "
                  "dtsim reads (write 0 for none)", v, DT_NONZERO_MIN);
    if (rc != 0 || f < 0)
      return ferr(rd, fs, "bad flop= value '%s': expected a number of FLOP from 0 to %g, such as '3.2e12'", v,
                  DT_FLOP_MAX);
    if (!(f <= DT_FLOP_MAX))
      return ferr(rd, fs, "bad flop= value '%s': out of range, above the %.0e FLOP one compute op may have", v,
                  DT_FLOP_MAX);
    op->flop = f;
    return DT_OK;
  }
  case K_GROUP: {
    int g = dt_trace_find_group(rd->t, v);
    if (g < 0) {
      /* the nearest name, only on this error path */
      const char **names = dt_xmalloc((rd->t->ngroups + 1) * sizeof *names);
      for (size_t j = 0; j < rd->t->ngroups; j++)
        names[j] = rd->t->groups[j].name;
      const char *best = dt_nearest_word(v, names, rd->t->ngroups);
      int rc = best ? ferr(rd, fs, "unknown group '%s' (did you mean '%s'?)", v, best)
                    : ferr(rd, fs, "unknown group '%s': declare it with a 'group' header line", v);
      free(names);
      return rc;
    }
    op->group = g;
    return DT_OK;
  }
  case K_BYTES:
    if (dt_parse_bytes(v, &op->bytes, why, sizeof why) != 0)
      return ferr(rd, fs, "bad bytes= value: %s", why);
    return DT_OK;
  case K_ROOT: /* its range is the group's, checked once the line is read */
    rc = parse_count(v, INT32_MAX, &op->root);
    if (rc == -1)
      return ferr(rd, fs, "bad root= value '%s': expected a group-local rank, a whole number from 0 to the group's "
                  "size - 1", v);
    if (rc == -2)
      op->root = INT32_MAX; /* above every group's ranks */
    return DT_OK;
  case K_SPLITS:
    return parse_splits(rd, fs, op, v);
  case K_KERNELS:
    return parse_kernels(rd, fs, op, v);
  case K_PEER:
    rc = parse_count(v, rd->t->nranks - 1, &op->peer);
    if (rc == -1)
      return ferr(rd, fs, "bad peer= value '%s': expected a global rank, a whole number from 0 to %d", v,
                  (int)rd->t->nranks - 1);
    if (rc == -2)
      return ferr(rd, fs, "peer %s is out of range: the trace has %d ranks (0-%d)", v, (int)rd->t->nranks,
                  (int)rd->t->nranks - 1);
    if (op->peer == rank)
      return ferr(rd, fs, "peer %d is the rank itself: a rank cannot send to or receive from itself", (int)rank);
    return DT_OK;
  case K_TAG:
    if (parse_int(v, INT64_MIN, INT64_MAX, &op->tag) != 0)
      return ferr(rd, fs, "bad tag= value '%s': expected an integer from %" PRId64 " to %" PRId64, v, INT64_MIN,
                  INT64_MAX);
    return DT_OK;
  case K_NAME:
    op->name = dt_xstrdup(v);
    return DT_OK;
  case K_DTYPE:
    op->dtype = dt_xstrdup(v);
    return DT_OK;
  case K_BATCH:
    if (parse_int(v, 0, INT64_MAX, &i64) != 0)
      return ferr(rd, fs, "bad batch= value '%s': expected an integer id from 0 to %" PRId64, v, INT64_MAX);
    op->batch = i64;
    return DT_OK;
  case K_AFTER:
    return parse_after(rd, fs, op, v);
  default:
    return DT_OK;
  }
}

static int op_line(reader *rd, fstate *fs)
{
  tok *tk = rd->toks;
  int32_t sid;
  fs->col = tk[0].kcol;
  if (parse_stream(tk[0].key, &sid) != 0 || tk[0].val)
    return ferr(rd, fs, "bad stream '%s': expected 's<N>' with N a whole number from 0 to %d, such as 's0'",
                tk[0].key, INT32_MAX);
  if (rd->ntoks < 2)
    return ferr(rd, fs, "missing op after stream '%s'", tk[0].key);
  dt_op_kind kind;
  fs->col = tk[1].kcol;
  if (tk[1].val || dt_op_kind_from_name(tk[1].key, &kind) != DT_OK) {
    const char *ops[DT_OP_COUNT];
    for (int i = 0; i < DT_OP_COUNT; i++)
      ops[i] = dt_op_kind_name((dt_op_kind)i);
    const char *best = dt_nearest_word(tk[1].key, ops, DT_OP_COUNT);
    if (best)
      return ferr(rd, fs, "unknown op '%s' (did you mean '%s'?)", tk[1].key, best);
    return ferr(rd, fs, "unknown op '%s'", tk[1].key);
  }
  const char *opname = dt_op_kind_name(kind);
  unsigned allowed = op_keys[kind].allowed | COMMON_KEYS, seen = 0;
  dt_op *op = dt_trace_append(rd->t, fs->cur_rank, sid);
  op->file = fs->file;
  op->line = (uint32_t)fs->line;
  long vcol[K_COUNT] = {0}; /* where each key's value starts, for the checks after the line */
  const char *root_text = NULL;
  for (size_t i = 2; i < rd->ntoks; i++) {
    fs->col = tk[i].kcol;
    if (!tk[i].val)
      return ferr(rd, fs, "expected key=value after '%s', found '%s'", opname, tk[i].key);
    int key = -1;
    for (int k = 0; k < K_COUNT; k++)
      if (strcmp(tk[i].key, key_names[k]) == 0)
        key = k;
    if (key < 0) {
      const char *cands[K_COUNT];
      size_t nc = 0;
      for (int k = 0; k < K_COUNT; k++)
        if (allowed & KB(k))
          cands[nc++] = key_names[k];
      const char *best = dt_nearest_word(tk[i].key, cands, nc);
      if (!best)
        best = dt_nearest_word(tk[i].key, key_names, K_COUNT);
      if (best)
        return ferr(rd, fs, "unknown key '%s' for '%s' (did you mean '%s'?)", tk[i].key, opname, best);
      return ferr(rd, fs, "unknown key '%s' for '%s'", tk[i].key, opname);
    }
    if (!(allowed & KB(key))) {
      char list[256] = "";
      for (int k = 0; k < K_COUNT; k++)
        if (op_keys[kind].allowed & KB(k))
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s=, ", key_names[k]);
      snprintf(list + strlen(list), sizeof list - strlen(list), "name=, dtype=, batch=, after=");
      return ferr(rd, fs, "key '%s' does not apply to '%s' (it takes %s)", tk[i].key, opname, list);
    }
    if (seen & KB(key))
      return ferr(rd, fs, "key '%s' is given twice", tk[i].key);
    seen |= KB(key);
    fs->col = vcol[key] = tk[i].vcol;
    fs->vtok = &tk[i];
    int rc = key_value(rd, fs, fs->cur_rank, op, key, tk[i].val);
    fs->vtok = NULL;
    if (rc != DT_OK)
      return DT_ERR;
    if (key == K_ROOT)
      root_text = tk[i].val;
  }
  fs->col = 0; /* what the line lacks has no column */
  op->kind = kind;
  unsigned missing = op_keys[kind].required & ~seen;
  for (int k = 0; k < K_COUNT; k++)
    if (missing & KB(k))
      return ferr(rd, fs, "'%s' needs %s=", opname, key_names[k]);
  unsigned one = op_keys[kind].one_of;
  if (one) {
    unsigned got = one & seen;
    int a = -1, b = -1;
    for (int k = 0; k < K_COUNT; k++)
      if (one & KB(k)) {
        if (a < 0)
          a = k;
        else
          b = k;
      }
    if (!got)
      return ferr(rd, fs, "'%s' needs %s= or %s=", opname, key_names[a], key_names[b]);
    if (got != (got & -got))
      return ferr(rd, fs, "'%s' takes %s= or %s=, not both", opname, key_names[a], key_names[b]);
  }
  if (op->group >= 0) {
    size_t n = rd->t->groups[op->group].nranks;
    if ((kind == DT_OP_BROADCAST || kind == DT_OP_REDUCE) && (size_t)op->root >= n) {
      fs->col = vcol[K_ROOT];
      return ferr(rd, fs, "root %s is out of range for group '%s' of %zu ranks (root is group-local, 0-%zu)",
                  root_text ? root_text : "?", rd->t->groups[op->group].name, n, n - 1);
    }
    if (op->splits && op->nsplits != n) {
      fs->col = vcol[K_SPLITS];
      return ferr(rd, fs, "splits= lists %u sizes but group '%s' has %zu ranks", op->nsplits,
                  rd->t->groups[op->group].name, n);
    }
  }
  return DT_OK;
}

/* Turns the sN ids of after= into stream positions once the whole section is read, so that an op may wait
 * for a stream that first appears further down. */
static int resolve_section(reader *rd, int32_t rank)
{
  dt_rank *rk = &rd->t->ranks[rank];
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      dt_op *op = &rk->streams[s].ops[i];
      for (uint32_t d = 0; d < op->ndeps; d++) {
        int pos = dt_trace_stream(rd->t, rank, op->deps[d].stream, 0);
        if (pos < 0)
          return dt_error_set(rd->err, rd->t->files[op->file], op->line, 0,
                              "after= waits for stream 's%d', which rank %d does not have", (int)op->deps[d].stream,
                              (int)rank);
        op->deps[d].stream = pos;
      }
    }
  return DT_OK;
}

static int close_section(reader *rd, fstate *fs)
{
  if (fs->cur_rank < 0)
    return DT_OK;
  int32_t r = fs->cur_rank;
  fs->cur_rank = -1;
  return resolve_section(rd, r);
}

/* End of the header of a later per-rank file: it must declare the same groups as the first. */
static int check_header_done(reader *rd, fstate *fs)
{
  if (!fs->seen_ranks)
    return ferr(rd, fs, "missing 'ranks N' line before the rank sections");
  if (!fs->defines && fs->ngroups != rd->t->ngroups)
    return ferr(rd, fs, "this file declares %zu groups but %s declares %zu: the headers of per-rank files must agree",
                fs->ngroups, rd->t->files[1], rd->t->ngroups);
  return DT_OK;
}

static int group_line(reader *rd, fstate *fs)
{
  if (rd->ntoks != 3 || rd->toks[1].val || rd->toks[2].val)
    return ferr(rd, fs, "expected 'group NAME RANKLIST' such as 'group tp0 0-7'");
  const char *name = rd->toks[1].key;
  fs->vtok = &rd->toks[2]; /* the column of a bad item (as in a value) */
  long n = parse_rank_list(rd, fs, rd->toks[2].key);
  fs->vtok = NULL;
  fs->col = rd->toks[1].kcol; /* the group's name */
  if (n < 0)
    return DT_ERR;
  fs->ngroups++;
  if (fs->defines) {
    int g = dt_trace_add_group(rd->t, name, rd->ilist, (size_t)n, fs->file, (uint32_t)fs->line, rd->err);
    if (g < 0) {
      if (rd->err && rd->err->line == fs->line && rd->err->col == 0)
        rd->err->col = fs->col; /* the group's name: dt_trace_add_group knows the line only */
      return DT_ERR;
    }
    rd->group_decl = dt_xrealloc(rd->group_decl, rd->t->ngroups * sizeof *rd->group_decl);
    rd->group_decl[g] = fs->file + 1;
    return DT_OK;
  }
  int g = dt_trace_find_group(rd->t, name);
  if (g < 0)
    return ferr(rd, fs, "group '%s' is not declared in %s: the headers of per-rank files must agree", name,
                rd->t->files[1]);
  dt_group *gr = &rd->t->groups[g];
  if (rd->group_decl[g] == fs->file + 1)
    return ferr(rd, fs, "group '%s' is declared twice", name);
  rd->group_decl[g] = fs->file + 1;
  if (gr->nranks != (size_t)n || memcmp(gr->ranks, rd->ilist, (size_t)n * sizeof *rd->ilist) != 0)
    return ferr(rd, fs, "group '%s' lists other ranks than in %s:%u: the headers of per-rank files must agree", name,
                rd->t->files[gr->file], gr->line);
  return DT_OK;
}

static int meta_line(reader *rd, fstate *fs)
{
  if (rd->ntoks < 2)
    return ferr(rd, fs, "expected 'meta key=value'");
  for (size_t i = 1; i < rd->ntoks; i++) {
    tok *tk = &rd->toks[i];
    fs->col = tk->kcol;
    if (!tk->val || !tk->key[0])
      return ferr(rd, fs, "expected 'meta key=value', found '%s'", tk->key);
    fs->col = tk->vcol; /* a bad value of a key dtsim reads */
    if (strcmp(tk->key, "tokens_per_iteration") == 0) { /* energy and cost per token (replay/dt_energy.c) */
      long long n;
      if (dt_parse_whole(tk->val, 1, DT_TOKENS_PER_ITERATION_MAX, &n) != 0)
        return ferr(rd, fs, "meta tokens_per_iteration: expected a whole number from 1 to %lld, found '%s'",
                    (long long)DT_TOKENS_PER_ITERATION_MAX, tk->val);
    }
    if (strcmp(tk->key, "captured_step_time") == 0) {
      char why[256];
      if (dt_parse_time(tk->val, &rd->t->captured_step_s, why, sizeof why) != 0)
        return ferr(rd, fs, "bad captured_step_time: %s", why);
    }
    if (!fs->defines) { /* per-rank files repeat the header: keep one copy of each pair */
      int dup = 0;
      for (size_t m = 0; m < rd->t->nmeta && !dup; m++)
        dup = strcmp(rd->t->meta_keys[m], tk->key) == 0 && strcmp(rd->t->meta_values[m], tk->val) == 0;
      if (dup)
        continue;
    }
    dt_trace_add_meta(rd->t, tk->key, tk->val);
  }
  return DT_OK;
}

/* The first line that is not blank or a comment: `dtsim_trace 1`. A capture given as a native trace (JSON, maybe
 * gzip-compressed) is told as such, at its byte offset: its line numbers would mean nothing to the user. */
static int magic_line(reader *rd, fstate *fs, const char *line, size_t len)
{
  const tok *tk = rd->toks;
  const char *w = tk[0].key;
  size_t lead = 0;
  while (lead < len && isspace((unsigned char)line[lead]))
    lead++;
  if (lead < len && (line[lead] == '{' || line[lead] == '['))
    return dt_error_set(rd->err, fs->name, 0, 0, "not a native trace: its %stext is JSON ('%c' at byte %" PRIu64
                        "), a native trace starts with the line 'dtsim_trace 1' (a capture is imported, not read as "
                        "a native trace)", fs->gz ? "gzip-decompressed " : "", line[lead], fs->line_at + lead);
  if (strcmp(w, "dtsim_trace") != 0 || tk[0].val)
    return ferr(rd, fs, "expected the header 'dtsim_trace 1', found '%s'%s", w,
                fs->gz ? " (positions count the gzip-decompressed text)" : "");
  if (rd->ntoks > 2 && !tk[1].val && strcmp(tk[1].key, "1") == 0) {
    fs->col = tk[2].kcol;
    return ferr(rd, fs, "unexpected '%s' after the header 'dtsim_trace 1': the header line holds nothing else",
                tk[2].key);
  }
  if (rd->ntoks != 2 || tk[1].val || strcmp(tk[1].key, "1") != 0) {
    if (rd->ntoks > 1)
      fs->col = tk[1].kcol;
    return ferr(rd, fs, "unsupported native trace version '%s': this dtsim reads 'dtsim_trace 1'",
                rd->ntoks > 1 ? tk[1].key : "");
  }
  fs->seen_magic = 1;
  return DT_OK;
}

static int parse_line(reader *rd, fstate *fs, const char *line, size_t len)
{
  fs->col = 0;
  fs->vtok = NULL;
  if (len > DT_TRACE_MAX_LINE)
    return ferr(rd, fs, "line longer than %zu MiB (the longest a trace line may be)", DT_TRACE_MAX_LINE >> 20);
  const char *nul = memchr(line, '\0', len);
  if (nul) { /* a C string would end there: the rest of the line would be read as nothing */
    fs->col = (long)(nul - line) + 1;
    return ferr(rd, fs, "NUL byte (a trace is text)");
  }
  if (tokenize(rd, fs, line, len) != DT_OK)
    return DT_ERR;
  if (rd->ntoks == 0)
    return DT_OK;
  tok *tk = rd->toks;
  const char *w = tk[0].key;
  fs->col = tk[0].kcol; /* a header line's error points at its word unless it names a value */
  if (!fs->seen_magic)
    return magic_line(rd, fs, line, len);
  if (tk[0].val)
    return ferr(rd, fs, "unexpected '%s=%s' at the start of a line", w, tk[0].val);
  if (w[0] == 's' && isdigit((unsigned char)w[1])) {
    if (fs->cur_rank < 0)
      return ferr(rd, fs, "op line before any 'rank N' section");
    fs->col = 0; /* op_line points at the key or value it refuses */
    return op_line(rd, fs);
  }
  int word = -1;
  for (size_t i = 0; i < sizeof line_words / sizeof line_words[0]; i++)
    if (strcmp(w, line_words[i]) == 0)
      word = (int)i;
  if (word < 0) {
    dt_op_kind k;
    if (dt_op_kind_from_name(w, &k) == DT_OK)
      return ferr(rd, fs, "op '%s' needs a stream first, such as 's0 %s ...'", w, w);
    const char *best = dt_nearest_word(w, line_words, sizeof line_words / sizeof line_words[0]);
    if (best)
      return ferr(rd, fs, "unknown line '%s' (did you mean '%s'?)", w, best);
    return ferr(rd, fs, "unknown line '%s': expected a header line, 'rank N' or an op line 's<N> <op> key=value...'",
                w);
  }
  if (word == 0)
    return ferr(rd, fs, "duplicate header line 'dtsim_trace'");
  if (word != 4 && fs->cur_rank >= 0)
    return ferr(rd, fs, "header line '%s' after a 'rank' section: header lines come first", w);
  if (word == 1) { /* ranks N */
    int32_t n;
    if (fs->seen_ranks)
      return ferr(rd, fs, "duplicate header line 'ranks'");
    const char *num = rd->ntoks >= 2 ? tk[1].key : "";
    int digits = num[0] && num[strspn(num, "0123456789")] == '\0';
    int64_t v = 0;
    int fits = digits && parse_int(num, 0, INT64_MAX, &v) == 0;
    if (rd->ntoks >= 2)
      fs->col = tk[1].kcol;
    if (rd->ntoks != 2 || tk[1].val || !digits || (fits && v < 1))
      return ferr(rd, fs, "expected 'ranks N' with N a whole number from 1 to %d, found '%s%s%s'%s",
                  DT_TRACE_MAX_RANKS, num, rd->ntoks >= 2 && tk[1].val ? "=" : "",
                  rd->ntoks >= 2 && tk[1].val ? tk[1].val : "", rd->ntoks > 2 ? " and more" : "");
    if (!fits || v > DT_TRACE_MAX_RANKS) /* the limit before anything is sized by it */
      return ferr(rd, fs, "'ranks %s' is more than dtsim supports (at most %d ranks)", num, DT_TRACE_MAX_RANKS);
    n = (int32_t)v;
    fs->seen_ranks = 1;
    if (!rd->t) {
      rd->t = dt_trace_new(n);
      fs->defines = 1;
      fs->file = dt_trace_add_file(rd->t, fs->name);
      rd->sect_file = dt_xcalloc((size_t)n, sizeof *rd->sect_file);
      rd->sect_line = dt_xcalloc((size_t)n, sizeof *rd->sect_line);
    } else {
      fs->file = dt_trace_add_file(rd->t, fs->name);
      if (n != rd->t->nranks)
        return ferr(rd, fs, "'ranks %d' disagrees with 'ranks %d' in %s: the headers of per-rank files must agree",
                    (int)n, (int)rd->t->nranks, rd->t->files[1]);
    }
    return DT_OK;
  }
  if (!fs->seen_ranks)
    return ferr(rd, fs, "'%s' before 'ranks N': the rank count comes first", w);
  if (word == 2)
    return group_line(rd, fs);
  if (word == 3)
    return meta_line(rd, fs);
  /* rank N */
  int32_t r = 0;
  if (fs->cur_rank < 0 && check_header_done(rd, fs) != DT_OK)
    return DT_ERR;
  if (close_section(rd, fs) != DT_OK)
    return DT_ERR;
  int rc = rd->ntoks == 2 && !tk[1].val ? parse_count(tk[1].key, rd->t->nranks - 1, &r) : -1;
  if (rd->ntoks >= 2)
    fs->col = tk[1].kcol;
  if (rc == -1)
    return ferr(rd, fs, "expected 'rank N' with N a rank from 0 to %d (a whole number), found '%s%s%s'%s",
                (int)rd->t->nranks - 1, rd->ntoks >= 2 ? tk[1].key : "", rd->ntoks >= 2 && tk[1].val ? "=" : "",
                rd->ntoks >= 2 && tk[1].val ? tk[1].val : "", rd->ntoks > 2 ? " and more" : "");
  if (rc == -2)
    return ferr(rd, fs, "rank %s is out of range: the trace has %d ranks (0-%d)", tk[1].key, (int)rd->t->nranks,
                (int)rd->t->nranks - 1);
  if (rd->sect_line[r])
    return ferr(rd, fs, "rank %d has a second section (the first is at %s:%u)", (int)r,
                rd->t->files[rd->sect_file[r]], rd->sect_line[r]);
  rd->sect_file[r] = fs->file;
  rd->sect_line[r] = (uint32_t)fs->line;
  fs->cur_rank = r;
  return DT_OK;
}

static int finish_file(reader *rd, fstate *fs)
{
  fs->line++;
  if (!fs->seen_magic)
    return ferr(rd, fs, "missing the header 'dtsim_trace 1': the file is empty or has only comments");
  if (fs->cur_rank < 0)
    return check_header_done(rd, fs);
  return close_section(rd, fs);
}

static void reader_free(reader *rd)
{
  free(rd->sect_file);
  free(rd->sect_line);
  free(rd->group_decl);
  free(rd->buf);
  free(rd->toks);
  free(rd->ilist);
  free(rd->item);
}

static void fstate_init(fstate *fs, const char *name)
{
  memset(fs, 0, sizeof *fs);
  fs->name = name;
  fs->cur_rank = -1;
}

static int parse_text(reader *rd, const char *text, size_t len, const char *name)
{
  fstate fs;
  fstate_init(&fs, name);
  size_t i = 0;
  while (i < len) {
    const char *nl = memchr(text + i, '\n', len - i);
    size_t end = nl ? (size_t)(nl - text) : len;
    fs.line++;
    fs.line_at = i;
    if (parse_line(rd, &fs, text + i, end - i) != DT_OK)
      return DT_ERR;
    i = end + 1;
  }
  return finish_file(rd, &fs);
}

/* Reads through zlib, so that a gzip-compressed trace reads as its content. */
static int parse_file(reader *rd, const char *path)
{
  gzFile f = gzopen(path, "rb");
  if (!f)
    return dt_error_set(rd->err, path, 0, 0, "cannot open: %s", strerror(errno));
  gzbuffer(f, 1 << 17);
  fstate fs;
  fstate_init(&fs, path);
  size_t cap = 1 << 20, len = 0;
  char *buf = dt_xmalloc(cap);
  int rc = DT_OK, eof = 0;
  size_t scanned = 0;    /* bytes of buf already searched for a newline */
  uint64_t consumed = 0; /* bytes of the text before buf[0] */
  while (rc == DT_OK && !eof) {
    if (len == cap) {
      if (len > DT_TRACE_MAX_LINE) { /* no newline in more than the longest line: stop before the memory goes */
        rc = dt_error_set(rd->err, path, fs.line + 1, 0, "line longer than %zu MiB (the longest a trace line may be)",
                          DT_TRACE_MAX_LINE >> 20);
        break;
      }
      cap *= 2;
      buf = dt_xrealloc(buf, cap);
    }
    int n = gzread(f, buf + len, (unsigned)(cap - len > (1u << 30) ? (1u << 30) : cap - len));
    if (n < 0) {
      int zerr;
      const char *msg = gzerror(f, &zerr);
      rc = dt_error_set(rd->err, path, fs.line + 1, 0, "read error: %s", zerr == Z_ERRNO ? strerror(errno) : msg);
      break;
    }
    eof = n == 0;
    len += (size_t)n;
    fs.gz = !gzdirect(f);
    size_t start = 0;
    for (;;) { /* whole lines; at the end of the file the last one may lack its newline */
      size_t from = scanned > start ? scanned : start;
      char *nl = memchr(buf + from, '\n', len - from);
      if (!nl && !(eof && start < len)) {
        scanned = len;
        break;
      }
      size_t end = nl ? (size_t)(nl - buf) : len;
      fs.line++;
      fs.line_at = consumed + start;
      if (parse_line(rd, &fs, buf + start, end - start) != DT_OK) {
        rc = DT_ERR;
        break;
      }
      start = nl ? end + 1 : len;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    consumed += start;
    scanned = scanned > start ? scanned - start : 0;
  }
  if (rc == DT_OK)
    rc = finish_file(rd, &fs);
  free(buf);
  gzclose(f);
  return rc;
}

/* Rank number in "name.<rank>.dtt", or -1. */
static long file_rank(const char *name)
{
  size_t n = strlen(name);
  if (n < 5 || strcmp(name + n - 4, ".dtt") != 0)
    return -1;
  size_t e = n - 4, b = e;
  while (b > 0 && isdigit((unsigned char)name[b - 1]))
    b--;
  if (b == e || b == 0 || name[b - 1] != '.')
    return -1;
  return strtol(name + b, NULL, 10);
}

static int cmp_dtt(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  long rx = file_rank(x), ry = file_rank(y);
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return strcmp(x, y);
}

/* The *.dtt files of a directory (dt_trace_write_native's per-rank output), sorted by rank. */
static int list_dir(const char *dir, char ***out, size_t *nout, dt_error *err)
{
  DIR *d = opendir(dir);
  if (!d)
    return dt_error_set(err, dir, 0, 0, "cannot open directory: %s", strerror(errno));
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  size_t dl = strlen(dir);
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".dtt") != 0)
      continue;
    names = dt_grow(names, &cap, n, sizeof *names);
    names[n] = dt_xmalloc(dl + l + 2);
    snprintf(names[n], dl + l + 2, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
    n++;
  }
  closedir(d);
  if (n == 0) {
    free(names);
    return dt_error_set(err, dir, 0, 0, "directory holds no '.dtt' trace files");
  }
  qsort(names, n, sizeof *names, cmp_dtt);
  *out = names;
  *nout = n;
  return DT_OK;
}

int dt_trace_read_native(const char *const *paths, size_t npaths, dt_trace **out, dt_error *err)
{
  reader rd;
  memset(&rd, 0, sizeof rd);
  rd.err = err;
  *out = NULL;
  char **listed = NULL;
  size_t nlisted = 0;
  int rc = DT_OK;
  struct stat st;
  if (npaths == 0) {
    rc = dt_error_set(err, "", 0, 0, "no trace file given");
    goto cleanup;
  }
  if (npaths == 1 && stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode)) {
    if (list_dir(paths[0], &listed, &nlisted, err) != DT_OK) {
      rc = DT_ERR;
      goto cleanup;
    }
    paths = (const char *const *)listed;
    npaths = nlisted;
  }
  for (size_t i = 0; i < npaths && rc == DT_OK; i++) {
    for (size_t j = 0; j < i && rc == DT_OK; j++)
      if (strcmp(paths[i], paths[j]) == 0)
        rc = dt_error_set(err, paths[i], 0, 0, "trace file given twice");
    if (rc == DT_OK)
      rc = parse_file(&rd, paths[i]);
  }
cleanup:
  for (size_t i = 0; i < nlisted; i++)
    free(listed[i]);
  free(listed);
  if (rc == DT_OK)
    *out = rd.t;
  else
    dt_trace_free(rd.t);
  reader_free(&rd);
  return rc;
}

int dt_trace_parse_native(const char *text, size_t len, const char *source_name, dt_trace **out, dt_error *err)
{
  reader rd;
  memset(&rd, 0, sizeof rd);
  rd.err = err;
  *out = NULL;
  int rc = parse_text(&rd, text, len, source_name ? source_name : "");
  if (rc == DT_OK)
    *out = rd.t;
  else
    dt_trace_free(rd.t);
  reader_free(&rd);
  return rc;
}

/* ---------------------------------------------------------------------------------------------------------
 * Writer. */

/* Whether a value must be written quoted to read back as itself: empty, or holding a space, a comment mark, a
 * quote, a backslash, an '=' (unquoted, a group name "a=b" would read back as key a, value b) or a non-printable. */
static int needs_quotes(const char *s)
{
  if (!*s)
    return 1;
  for (; *s; s++)
    if (isspace((unsigned char)*s) || strchr("#\"\\=", *s) || !isprint((unsigned char)*s))
      return 1;
  return 0;
}

static void put_value(FILE *f, const char *s)
{
  if (!needs_quotes(s)) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    switch (*s) {
    case '"':
      fputs("\\\"", f);
      break;
    case '\\':
      fputs("\\\\", f);
      break;
    case '\n':
      fputs("\\n", f);
      break;
    case '\t':
      fputs("\\t", f);
      break;
    case '\r':
      fputs("\\r", f);
      break;
    default:
      fputc(*s, f);
    }
  }
  fputc('"', f);
}

/* Shortest text of a time, in a readable unit, that dt_parse_time reads back to exactly the same double. */
static const char *format_exact_time(double s, char *buf, size_t size)
{
  static const struct {
    const char *u;
    double mult;
  } units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  if (s == 0) {
    snprintf(buf, size, "0s");
    return buf;
  }
  size_t u = 0;
  while (u + 1 < sizeof units / sizeof units[0] && s < units[u].mult)
    u++;
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, size, "%.*g%s", p, s / units[u].mult, units[u].u);
    double back;
    char why[8];
    if (dt_parse_time(buf, &back, why, sizeof why) == 0 && back == s) /* read back exactly as the reader will */
      return buf;
  }
  snprintf(buf, size, "%.17gs", s); /* always exact: the multiplier is 1 */
  return buf;
}

static const char *format_exact_number(double v, char *buf, size_t size)
{
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, size, "%.*g", p, v);
    if (strtod(buf, NULL) == v)
      return buf;
  }
  return buf;
}

static void put_rank_list(FILE *f, const dt_group *g)
{
  for (size_t i = 0; i < g->nranks;) {
    size_t j = i;
    while (j + 1 < g->nranks && g->ranks[j + 1] == g->ranks[j] + 1)
      j++;
    if (i)
      fputc(',', f);
    if (j > i)
      fprintf(f, "%d-%d", (int)g->ranks[i], (int)g->ranks[j]);
    else
      fprintf(f, "%d", (int)g->ranks[i]);
    i = j + 1;
  }
}

static void write_header(const dt_trace *t, FILE *f)
{
  char buf[64];
  fprintf(f, "dtsim_trace 1\nranks %d\n", (int)t->nranks);
  int has_step = 0;
  for (size_t m = 0; m < t->nmeta; m++) {
    has_step |= strcmp(t->meta_keys[m], "captured_step_time") == 0;
    fputs("meta ", f);
    put_value(f, t->meta_keys[m]);
    fputc('=', f);
    put_value(f, t->meta_values[m]);
    fputc('\n', f);
  }
  if (!has_step && t->captured_step_s > 0)
    fprintf(f, "meta captured_step_time=%s\n", format_exact_time(t->captured_step_s, buf, sizeof buf));
  for (size_t n = 0; n < t->nnotes; n++) { /* importers' assumptions travel with the file */
    fputs("meta note=", f);
    put_value(f, t->notes[n]);
    fputc('\n', f);
  }
  for (size_t g = 0; g < t->ngroups; g++) {
    fputs("group ", f);
    put_value(f, t->groups[g].name);
    fputc(' ', f);
    put_rank_list(f, &t->groups[g]);
    fputc('\n', f);
  }
}

/* One op of rank r (rk is its body: its own streams or its template's), with groups and peers as r sees
 * them. */
static void write_op(const dt_trace *t, int32_t r, const dt_rank *rk, const dt_stream *st, const dt_op *op, FILE *f)
{
  char buf[64];
  fprintf(f, "s%d %s", (int)st->id, dt_op_kind_name(op->kind));
  int32_t g = dt_trace_op_group(t, r, op);
  const char *gname = g >= 0 && (size_t)g < t->ngroups ? t->groups[g].name : NULL;
  switch (op->kind) {
  case DT_OP_COMPUTE:
    if (op->flop != 0)
      fprintf(f, " flop=%s", format_exact_number(op->flop, buf, sizeof buf));
    else
      fprintf(f, " dur=%s", format_exact_time(op->dur, buf, sizeof buf));
    for (uint32_t i = 0; i < op->nkernels; i++) {
      const dt_kernel *k = &op->kernels[i];
      char fb[64], bb[64];
      fprintf(f, "%s%s%s%s:%s:%lld:%lld:%lld:%lld:%s:%s", i ? "," : " kernels=", dt_kernel_kind_name(k->kind),
              k->causal ? ".causal" : "", k->bwd ? ".bwd" : "", dt_dtype_name(k->dtype), (long long)k->m,
              (long long)k->n, (long long)k->k, (long long)k->batch, format_exact_number(k->flop, fb, sizeof fb),
              format_exact_number(k->bytes, bb, sizeof bb));
    }
    break;
  case DT_OP_DELAY:
    fprintf(f, " dur=%s", format_exact_time(op->dur, buf, sizeof buf));
    break;
  case DT_OP_SEND:
  case DT_OP_RECV:
    fprintf(f, " peer=%d bytes=%" PRIu64, (int)dt_trace_op_peer(t, r, op), op->bytes);
    if (op->tag != 0)
      fprintf(f, " tag=%" PRId64, op->tag);
    break;
  case DT_OP_MARK:
    break;
  default:
    if (gname) {
      fputs(" group=", f);
      put_value(f, gname);
    }
    if (op->kind == DT_OP_ALLTOALL && op->splits) {
      fputs(" splits=", f);
      for (uint32_t i = 0; i < op->nsplits; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", op->splits[i]);
    } else if (op->kind != DT_OP_BARRIER) {
      fprintf(f, " bytes=%" PRIu64, op->bytes);
    }
    if ((op->kind == DT_OP_BROADCAST || op->kind == DT_OP_REDUCE) && op->root != 0)
      fprintf(f, " root=%d", (int)op->root);
  }
  if (op->name) {
    fputs(" name=", f);
    put_value(f, op->name);
  }
  if (op->dtype) {
    fputs(" dtype=", f);
    put_value(f, op->dtype);
  }
  if (op->batch >= 0)
    fprintf(f, " batch=%" PRId64, op->batch);
  for (uint32_t d = 0; d < op->ndeps; d++) {
    int32_t s = op->deps[d].stream;
    int32_t sid = s >= 0 && (size_t)s < rk->nstreams ? rk->streams[s].id : s;
    fprintf(f, "%ss%d:%d", d ? "," : " after=", (int)sid, (int)op->deps[d].index);
  }
  fputc('\n', f);
}

/* How often (in ops) a limited write looks at its size: often enough that it stops within a few hundred lines
 * of the limit, rarely enough that ftello costs nothing beside the formatting. */
#define LIMIT_CHECK_OPS 256

/* The running count of a limited write: lim (NULL when unlimited), the bytes of files already finished, and the
 * stream position the current file started at (stdout may be appended to a file). */
typedef struct {
  dt_write_limit *lim;
  uint64_t done;
  off_t start;
} limit_state;

/* Whether the current file f has taken the total past the limit; records the progress in ls->lim either way. */
static int limit_passed(limit_state *ls, FILE *f)
{
  if (!ls->lim)
    return 0;
  off_t pos = ftello(f);
  if (pos < 0)
    return 0; /* not seekable (a pipe): the pre-check alone applies */
  ls->lim->written = ls->done + (uint64_t)(pos - ls->start);
  return ls->lim->written > ls->lim->max_bytes;
}

/* A rank's section, its ops in issue order (dt_trace_rank_order) so that matching reads back the same. A
 * template user's section is its template's ops expanded (groups mapped, peers shifted), written from the one
 * shared op array: the writer holds one rank's issue order at a time, never all ranks' ops. Returns -1 when a
 * limited write passed its limit (ls->lim->stopped set), else 0. */
static int write_rank(const dt_trace *t, int32_t r, dt_dep **order, size_t *cap, limit_state *ls, FILE *f)
{
  size_t n = dt_trace_rank_op_count(t, r);
  if (n == 0)
    return 0;
  *order = dt_grow(*order, cap, n, sizeof **order);
  dt_trace_rank_order(t, r, *order);
  const dt_rank *rk = dt_trace_rank_body(t, r);
  fprintf(f, "rank %d\n", (int)r);
  size_t since = 0; /* ops written since the last look at the size */
  for (size_t i = 0; i < n; i++) {
    const dt_stream *st = &rk->streams[(*order)[i].stream];
    write_op(t, r, rk, st, &st->ops[(*order)[i].index], f);
    if (ls->lim && (++since == LIMIT_CHECK_OPS || i + 1 == n)) {
      int over = limit_passed(ls, f);
      ls->lim->ops_written += since;
      since = 0;
      if (over) {
        ls->lim->stopped = 1;
        return -1;
      }
    }
  }
  return 0;
}

/* The error of a write stopped at its limit (the caller words the option). */
static int limit_error(const dt_write_limit *lim, const char *path, dt_error *err)
{
  return dt_error_set(err, path, 0, 0, "stopped after writing %" PRIu64 " bytes (%zu of %zu ops), more than the "
                      "limit of %" PRIu64 " bytes; nothing was kept", lim->written, lim->ops_written, lim->ops_total,
                      lim->max_bytes);
}

int dt_trace_write_native_file(const dt_trace *t, FILE *f, dt_error *err)
{
  dt_dep *order = NULL;
  size_t cap = 0;
  limit_state ls = {0};
  write_header(t, f);
  for (int32_t r = 0; r < t->nranks; r++)
    write_rank(t, r, &order, &cap, &ls, f);
  free(order);
  if (fflush(f) != 0 || ferror(f))
    return dt_error_set(err, "", 0, 0, "write error: %s", strerror(errno));
  return DT_OK;
}

uint64_t dt_trace_native_size_bound(const dt_trace *t)
{
  return (uint64_t)dt_trace_op_count(t) * 8;
}

/* Writes through a temporary file renamed to path once complete (dt_outfile.h), so that an interrupted or failed
 * write never leaves half a file under the final name. A write that passes its limit discards the temporary. */
static int write_path(const dt_trace *t, const char *path, int32_t only_rank, dt_dep **order, size_t *cap,
                      limit_state *ls, dt_error *err)
{
  dt_outfile *o = dt_outfile_open(path, err);
  if (!o)
    return DT_ERR;
  FILE *f = dt_outfile_stream(o);
  off_t start = ls->lim ? ftello(f) : 0;
  ls->start = start > 0 ? start : 0;
  write_header(t, f);
  int over = 0;
  if (only_rank >= 0)
    over = write_rank(t, only_rank, order, cap, ls, f) != 0;
  else
    for (int32_t r = 0; r < t->nranks && !over; r++)
      over = write_rank(t, r, order, cap, ls, f) != 0;
  if (!over && limit_passed(ls, f)) { /* a header alone past the limit */
    ls->lim->stopped = 1;
    over = 1;
  }
  if (over) {
    if (strcmp(path, "-") == 0)
      fflush(f);
    dt_outfile_discard(o);
    return limit_error(ls->lim, path, err);
  }
  if (ls->lim) {
    off_t end = ftello(f);
    ls->done += end > ls->start ? (uint64_t)(end - ls->start) : 0;
  }
  return dt_outfile_commit(o, err);
}

static int write_native(const dt_trace *t, const char *path, dt_write_limit *lim, dt_error *err)
{
  limit_state ls = {lim, 0, 0};
  if (lim) {
    lim->written = 0;
    lim->ops_written = 0;
    lim->ops_total = dt_trace_op_count(t);
    lim->stopped = 0;
  }
  if (strcmp(path, "-") == 0 && !lim)
    return dt_trace_write_native_file(t, stdout, err);
  size_t len = strlen(path);
  dt_dep *order = NULL;
  size_t cap = 0;
  int rc = DT_OK;
  if (len == 0 || path[len - 1] != '/') {
    rc = write_path(t, path, -1, &order, &cap, &ls, err);
  } else {
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      free(order);
      return dt_error_set(err, path, 0, 0, "cannot create directory: %s", strerror(errno));
    }
    char *file = dt_xmalloc(len + 32);
    int wrote = 0;
    int32_t r = 0;
    for (; r < t->nranks && rc == DT_OK; r++) {
      if (dt_trace_rank_op_count(t, r) == 0 && (wrote || r + 1 < t->nranks))
        continue; /* an idle rank needs no file; one file is written even when all are idle */
      snprintf(file, len + 32, "%strace.%d.dtt", path, (int)r);
      rc = write_path(t, file, r, &order, &cap, &ls, err);
      wrote = 1;
    }
    if (lim && lim->stopped) /* the files of the ranks before are this run's: remove them, keep none */
      for (int32_t q = 0; q + 1 < r; q++)
        if (dt_trace_rank_op_count(t, q) > 0) {
          snprintf(file, len + 32, "%strace.%d.dtt", path, (int)q);
          unlink(file);
        }
    free(file);
  }
  free(order);
  return rc;
}

int dt_trace_write_native_limit(const dt_trace *t, const char *path, dt_write_limit *lim, dt_error *err)
{
  return write_native(t, path, lim, err);
}

int dt_trace_write_native(const dt_trace *t, const char *path, dt_error *err)
{
  return write_native(t, path, NULL, err);
}
