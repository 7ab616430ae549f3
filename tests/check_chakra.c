/* Unit tests of the Chakra importer on execution traces written here byte by byte (the public schema's field
 * numbers and wire types, DESIGN of traces/proto/dt_chakra.proto): comm_size in every integer kind, a dependency
 * chain far deeper than any recursion could follow, gzip. Expected values are the inputs themselves. */
#include "common/dt_util.h"
#include "dt_test.h"
#include "traces/dt_trace_io.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
} buf;

static void put(buf *b, const void *s, size_t n)
{
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = dt_xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void varint(buf *b, uint64_t v)
{
  uint8_t c[10];
  size_t n = 0;
  do {
    c[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      c[n] |= 0x80;
    n++;
  } while (v);
  put(b, c, n);
}

static void field_varint(buf *b, unsigned f, uint64_t v)
{
  varint(b, f << 3);
  varint(b, v);
}

static void field_bytes(buf *b, unsigned f, const void *s, size_t n)
{
  varint(b, f << 3 | 2);
  varint(b, n);
  put(b, s, n);
}

/* An attribute "name" with an integer in field number `kind_field` of Chakra's AttributeProto oneof, encoded
 * as its protobuf kind wants: varint (int32/int64/uint32/uint64), zigzag (sint32/sint64), fixed 4 or 8 bytes. */
static void attr_int(buf *b, const char *name, unsigned kind_field, int64_t v)
{
  buf a = {0};
  field_bytes(&a, 1, name, strlen(name));
  switch (kind_field) {
  case 15: /* sint32 */
  case 17: /* sint64 */
    field_varint(&a, kind_field, (uint64_t)((v << 1) ^ (v >> 63)));
    break;
  case 19: /* fixed32 */
  case 23: { /* sfixed32 */
    uint32_t x = (uint32_t)v;
    varint(&a, kind_field << 3 | 5);
    put(&a, &x, 4); /* little-endian host */
    break;
  }
  case 21: /* fixed64 */
  case 25: { /* sfixed64 */
    uint64_t x = (uint64_t)v;
    varint(&a, kind_field << 3 | 1);
    put(&a, &x, 8);
    break;
  }
  default:
    field_varint(&a, kind_field, (uint64_t)v);
  }
  field_bytes(b, 10, a.p, a.n);
  free(a.p);
}

static void message(buf *file, const buf *m)
{
  varint(file, m->n);
  put(file, m->p, m->n);
}

static void metadata(buf *file)
{
  buf m = {0};
  field_bytes(&m, 1, "0.0.4", 5);
  message(file, &m);
  free(m.p);
}

static void write_file(const char *path, const buf *b, int gz)
{
  if (gz) {
    gzFile f = gzopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(gzwrite(f, b->p, (unsigned)b->n), (int)b->n);
    gzclose(f);
  } else {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b->p, 1, b->n, f), b->n);
    fclose(f);
  }
}

static const char *fmt(const dt_error *e)
{
  static char s[2048];
  return dt_error_format(e, s, sizeof s);
}

/* comm_size of a 2-rank all-reduce in each integer kind the schema has: the bytes always come through. */
START_TEST(test_comm_size_kinds)
{
  static const unsigned kinds[] = {7, 9, 11, 13, 15, 17, 19, 21, 23, 25};
  char dir[] = "/tmp/check_chakra.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    char p0[256], p1[256];
    snprintf(p0, sizeof p0, "%s/t%zu.0.et", dir, k);
    snprintf(p1, sizeof p1, "%s/t%zu.1.et", dir, k);
    for (int r = 0; r < 2; r++) {
      buf file = {0}, n = {0};
      metadata(&file);
      field_varint(&n, 1, 7);
      field_bytes(&n, 2, "nccl:all_reduce", 15);
      field_varint(&n, 3, 7); /* COMM_COLL_NODE */
      attr_int(&n, "comm_type", 9, 0); /* ALL_REDUCE as int64 */
      attr_int(&n, "comm_size", kinds[k], 3 << 20);
      message(&file, &n);
      write_file(r ? p1 : p0, &file, r == 1);
      free(n.p);
      free(file.p);
    }
    const char *paths[] = {p0, p1};
    dt_trace *t = NULL;
    dt_error e;
    /* rank 1's file is gzipped but named .et: content decides */
    ck_assert_msg(dt_trace_load(paths, 2, NULL, &t, &e) == DT_OK, "kind field %u: %s", kinds[k], fmt(&e));
    ck_assert_str_eq(t->format, "chakra");
    ck_assert_int_eq(t->ninstances, 1);
    ck_assert_uint_eq(t->ranks[0].streams[0].ops[0].bytes, 3u << 20);
    ck_assert_uint_eq(t->ranks[1].streams[0].ops[0].bytes, 3u << 20);
    dt_trace_free(t);
    unlink(p0);
    unlink(p1);
  }
  rmdir(dir);
}
END_TEST

/* A chain of a million compute nodes, each depending on the previous (ids descending: file order is the
 * reverse of dependency order): ordered without recursion, all on one stream in dependency order. */
START_TEST(test_deep_chain)
{
  enum { N = 1000000 };
  char dir[] = "/tmp/check_chakra.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/deep.0.et.gz", dir);
  buf file = {0};
  metadata(&file);
  for (uint64_t i = 0; i < N; i++) {
    buf n = {0};
    uint64_t id = N - i;
    field_varint(&n, 1, id);
    field_varint(&n, 3, 4); /* COMP_NODE */
    if (i > 0) {
      buf d = {0};
      varint(&d, id + 1);
      field_bytes(&n, 4, d.p, d.n);
      free(d.p);
    }
    field_varint(&n, 7, 1 + (id % 3)); /* 1-3 us */
    message(&file, &n);
    free(n.p);
  }
  write_file(path, &file, 1);
  free(file.p);
  const char *paths[] = {path};
  dt_trace *t = NULL;
  dt_error e;
  ck_assert_msg(dt_trace_load(paths, 1, NULL, &t, &e) == DT_OK, "%s", fmt(&e));
  ck_assert_uint_eq(t->ranks[0].nstreams, 1);
  const dt_stream *s = &t->ranks[0].streams[0];
  ck_assert_uint_eq(s->nops, N);
  /* dependency order: the node with the highest id (no parent) first */
  ck_assert_double_eq_tol(s->ops[0].dur, 1e-6 * (1 + (N % 3)), 1e-12);
  ck_assert_double_eq_tol(s->ops[N - 1].dur, 1e-6 * (1 + (1 % 3)), 1e-12);
  dt_trace_free(t);
  unlink(path);
  rmdir(dir);
}
END_TEST

/* Bytes that stop inside a message: an error with the byte offset, never a crash. */
START_TEST(test_truncated)
{
  char dir[] = "/tmp/check_chakra.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/cut.0.et", dir);
  buf file = {0}, n = {0};
  metadata(&file);
  field_varint(&n, 1, 1);
  field_varint(&n, 3, 4);
  field_varint(&n, 7, 5);
  message(&file, &n);
  file.n -= 2; /* metadata is bytes 0-7 (length 7 + 7 bytes): the node starts at byte 8 */
  write_file(path, &file, 0);
  free(n.p);
  free(file.p);
  const char *paths[] = {path};
  dt_trace *t = NULL;
  dt_error e;
  ck_assert_int_eq(dt_trace_load(paths, 1, NULL, &t, &e), DT_ERR);
  ck_assert_msg(strstr(e.msg, "at byte 8") && strstr(e.msg, "ends inside a message"), "%s", fmt(&e));
  unlink(path);
  rmdir(dir);
}
END_TEST

/* A collective without comm_size is kept at 0 bytes, with a warning: communication never vanishes silently. A
 * node of a type dtsim does not model (8, STORAGE_NODE) is host time, with a warning naming the type. */
START_TEST(test_no_size_warns)
{
  char dir[] = "/tmp/check_chakra.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/ns.0.et", dir);
  buf file = {0}, n = {0}, m = {0};
  metadata(&file);
  field_varint(&n, 1, 1);
  field_varint(&n, 3, 7);
  attr_int(&n, "comm_type", 9, 0);
  message(&file, &n);
  field_varint(&m, 1, 2);
  field_varint(&m, 3, 8);
  field_varint(&m, 7, 40);
  message(&file, &m);
  write_file(path, &file, 0);
  free(n.p);
  free(m.p);
  free(file.p);
  const char *paths[] = {path};
  dt_trace *t = NULL;
  dt_error e;
  ck_assert_msg(dt_trace_load(paths, 1, NULL, &t, &e) == DT_OK, "%s", fmt(&e));
  int size_note = 0, type_note = 0;
  for (size_t i = 0; i < t->nnotes; i++) {
    size_note |= strstr(t->notes[i], "1 communication nodes have no comm_size") != NULL;
    type_note |= strstr(t->notes[i], "(type 8) kept as host time") != NULL;
  }
  ck_assert(size_note && type_note);
  dt_trace_free(t);
  unlink(path);
  rmdir(dir);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"comm_size_kinds", test_comm_size_kinds, 1},
      {"deep_chain", test_deep_chain, 1},
      {"truncated", test_truncated, 1},
      {"no_size_warns", test_no_size_warns, 1},
  };
  return dt_test_run(dt_test_suite("chakra", cases, sizeof cases / sizeof cases[0], 120));
}
