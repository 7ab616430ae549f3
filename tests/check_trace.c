/* Unit tests of the native trace format (reader, writer), validation and the loader's sniffing.
 * Expected values are hand-counted from the small traces written inline. */
#include "dt_test.h"
#include "common/dt_util.h"
#include "traces/dt_trace_io.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char errbuf[2048];

static const char *fmt_err(const dt_error *e)
{
  return dt_error_format(e, errbuf, sizeof errbuf);
}

static dt_trace *parse_ok(const char *text)
{
  dt_trace *t = NULL;
  dt_error e;
  dt_error_clear(&e);
  int rc = dt_trace_parse_native(text, strlen(text), "t.dtt", &t, &e);
  ck_assert_msg(rc == DT_OK, "parse failed: %s", fmt_err(&e));
  ck_assert_ptr_nonnull(t);
  return t;
}

static dt_trace *valid_ok(const char *text)
{
  dt_trace *t = parse_ok(text);
  dt_error e;
  dt_error_clear(&e);
  ck_assert_msg(dt_trace_validate(t, &e) == DT_OK, "validate failed: %s", fmt_err(&e));
  return t;
}

/* Asserts the formatted error starts with prefix and contains every word (NULL-terminated list). */
static void assert_error(const dt_error *e, const char *prefix, const char *const *words)
{
  const char *s = fmt_err(e);
  ck_assert_msg(strncmp(s, prefix, strlen(prefix)) == 0, "error '%s' does not start with '%s'", s, prefix);
  for (; *words; words++)
    ck_assert_msg(strstr(s, *words) != NULL, "error '%s' lacks '%s'", s, *words);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void parse_fails(const char *text, const char *prefix, const char *const *words)
{
  dt_trace *t = NULL;
  dt_error e;
  dt_error_clear(&e);
  ck_assert_msg(dt_trace_parse_native(text, strlen(text), "t.dtt", &t, &e) == DT_ERR, "parse of\n%s\nsucceeded", text);
  ck_assert_ptr_null(t);
  assert_error(&e, prefix, words);
}

static void validate_fails(const char *text, const char *prefix, const char *const *words)
{
  dt_trace *t = parse_ok(text);
  dt_error e;
  dt_error_clear(&e);
  ck_assert_msg(dt_trace_validate(t, &e) == DT_ERR, "validation of\n%s\nsucceeded", text);
  assert_error(&e, prefix, words);
  dt_trace_free(t);
}

static dt_op *op_at(dt_trace *t, int rank, int stream_id, size_t i)
{
  int s = dt_trace_stream(t, rank, stream_id, 0);
  ck_assert_int_ge(s, 0);
  ck_assert_uint_lt(i, t->ranks[rank].streams[s].nops);
  return &t->ranks[rank].streams[s].ops[i];
}

/* 4 header lines: ops of rank 0 start at line 6 */
#define HDR "dtsim_trace 1\nranks 4\ngroup g 0-3\ngroup p 0,1\n"

/* ------------------------------------------------------------------------------------------------------ */

START_TEST(test_every_op_and_key)
{
  dt_trace *t = parse_ok(HDR "rank 0\n"
                             "s0 compute dur=1.25ms name=fwd.l0 dtype=bf16\n"
                             "s0 compute flop=3.5e12\n"
                             "s1 allreduce group=g bytes=50331648 after=s0:0\n"
                             "s1 reducescatter group=g bytes=4096\n"
                             "s1 broadcast group=g bytes=100 root=3\n"
                             "s1 reduce group=g bytes=200\n"
                             "s1 allgather group=g bytes=300\n"
                             "s1 alltoall group=g bytes=400\n"
                             "s1 alltoall group=g splits=1,2,3,4\n"
                             "s1 barrier group=g\n"
                             "s2 send peer=1 bytes=8388608 batch=3\n"
                             "s2 recv peer=1 bytes=8388608 tag=-7 batch=3\n"
                             "s0 mark name=iter1\n"
                             "s0 delay dur=830us\n"
                             "s1 other group=p bytes=64 name=nccl:gather after=s0:1,s2:1\n");
  ck_assert_int_eq(t->nranks, 4);
  ck_assert_uint_eq(t->ranks[0].nstreams, 3);
  dt_op *o = op_at(t, 0, 0, 0);
  ck_assert_int_eq(o->kind, DT_OP_COMPUTE);
  ck_assert_double_eq_tol(o->dur, 1.25e-3, 1e-18);
  ck_assert_str_eq(o->name, "fwd.l0");
  ck_assert_str_eq(o->dtype, "bf16");
  ck_assert_uint_eq(o->line, 6);
  o = op_at(t, 0, 0, 1);
  ck_assert_double_eq(o->flop, 3.5e12);
  ck_assert_double_eq(o->dur, 0);
  o = op_at(t, 0, 1, 0);
  ck_assert_int_eq(o->kind, DT_OP_ALLREDUCE);
  ck_assert_int_eq(o->group, 0);
  ck_assert_uint_eq(o->bytes, 50331648);
  ck_assert_uint_eq(o->ndeps, 1);
  ck_assert_int_eq(o->deps[0].stream, 0);
  ck_assert_int_eq(o->deps[0].index, 0);
  ck_assert_int_eq(op_at(t, 0, 1, 1)->kind, DT_OP_REDUCESCATTER);
  o = op_at(t, 0, 1, 2);
  ck_assert_int_eq(o->kind, DT_OP_BROADCAST);
  ck_assert_int_eq(o->root, 3);
  o = op_at(t, 0, 1, 3);
  ck_assert_int_eq(o->kind, DT_OP_REDUCE);
  ck_assert_int_eq(o->root, 0);
  ck_assert_int_eq(op_at(t, 0, 1, 4)->kind, DT_OP_ALLGATHER);
  o = op_at(t, 0, 1, 5);
  ck_assert_int_eq(o->kind, DT_OP_ALLTOALL);
  ck_assert_uint_eq(o->bytes, 400);
  ck_assert_ptr_null(o->splits);
  o = op_at(t, 0, 1, 6);
  ck_assert_uint_eq(o->nsplits, 4);
  ck_assert_uint_eq(o->splits[3], 4);
  ck_assert_uint_eq(o->bytes, 10);
  o = op_at(t, 0, 1, 7);
  ck_assert_int_eq(o->kind, DT_OP_BARRIER);
  ck_assert_uint_eq(o->bytes, 0);
  o = op_at(t, 0, 2, 0);
  ck_assert_int_eq(o->kind, DT_OP_SEND);
  ck_assert_int_eq(o->peer, 1);
  ck_assert_int_eq(o->tag, 0);
  ck_assert_int_eq(o->batch, 3);
  o = op_at(t, 0, 2, 1);
  ck_assert_int_eq(o->kind, DT_OP_RECV);
  ck_assert_int_eq(o->tag, -7);
  o = op_at(t, 0, 0, 2);
  ck_assert_int_eq(o->kind, DT_OP_MARK);
  ck_assert_str_eq(o->name, "iter1");
  ck_assert_int_eq(o->batch, -1);
  o = op_at(t, 0, 0, 3);
  ck_assert_int_eq(o->kind, DT_OP_DELAY);
  ck_assert_double_eq_tol(o->dur, 830e-6, 1e-18);
  o = op_at(t, 0, 1, 8);
  ck_assert_int_eq(o->kind, DT_OP_OTHER);
  ck_assert_int_eq(o->group, 1);
  ck_assert_str_eq(o->name, "nccl:gather");
  ck_assert_uint_eq(o->ndeps, 2);
  ck_assert_int_eq(o->deps[1].stream, 2);
  ck_assert_int_eq(o->deps[1].index, 1);
  ck_assert_uint_eq(dt_trace_op_count(t), 15);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_quoting_and_escapes)
{
  dt_trace *t = parse_ok(HDR "rank 0\n"
                             "s0 mark name=\"step 1 # not a comment\"\n"
                             "s0 mark name=\"say \\\"hi\\\" \\\\ back\" # a comment\n"
                             "s0 mark name=\"\" dtype=\"a=b\"\n"
                             "s0 mark name=plain#comment\n");
  ck_assert_str_eq(op_at(t, 0, 0, 0)->name, "step 1 # not a comment");
  ck_assert_str_eq(op_at(t, 0, 0, 1)->name, "say \"hi\" \\ back");
  ck_assert_str_eq(op_at(t, 0, 0, 2)->name, "");
  ck_assert_str_eq(op_at(t, 0, 0, 2)->dtype, "a=b");
  ck_assert_str_eq(op_at(t, 0, 0, 3)->name, "plain");
  dt_trace_free(t);
  parse_fails(HDR "rank 0\ns0 mark name=\"open\n", "t.dtt:6:14: ", WORDS("unterminated"));
  parse_fails(HDR "rank 0\ns0 mark name=\"a\\qb\"\n", "t.dtt:6:16: ", WORDS("escape", "\\q"));
}
END_TEST

START_TEST(test_comments_and_blank_lines)
{
  dt_trace *t = parse_ok("# produced by hand\n\n   # indented comment\n"
                         "dtsim_trace 1   # version\n"
                         "ranks 2\n"
                         "meta source=\"my run.json\"\n"
                         "meta captured_step_time=2.5ms assumption=x\n"
                         "\n"
                         "rank 1 # the second\n"
                         "   s3 compute dur=1us\t# tab before\n"
                         "\r\n");
  ck_assert_uint_eq(t->nmeta, 3);
  ck_assert_str_eq(t->meta_keys[0], "source");
  ck_assert_str_eq(t->meta_values[0], "my run.json");
  ck_assert_str_eq(t->meta_keys[1], "captured_step_time");
  ck_assert_str_eq(t->meta_values[1], "2.5ms");
  ck_assert_double_eq_tol(t->captured_step_s, 2.5e-3, 1e-15);
  ck_assert_uint_eq(t->ranks[1].nstreams, 1);
  ck_assert_int_eq(t->ranks[1].streams[0].id, 3);
  ck_assert_uint_eq(op_at(t, 1, 3, 0)->line, 10);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_rank_lists)
{
  dt_trace *t = parse_ok("dtsim_trace 1\nranks 16\ngroup a 0-3,8-11\ngroup b 5\ngroup c 15,0,7-8\n");
  ck_assert_uint_eq(t->ngroups, 3);
  static const int32_t a[] = {0, 1, 2, 3, 8, 9, 10, 11};
  ck_assert_uint_eq(t->groups[0].nranks, 8);
  for (int i = 0; i < 8; i++)
    ck_assert_int_eq(t->groups[0].ranks[i], a[i]);
  ck_assert_uint_eq(t->groups[1].nranks, 1);
  ck_assert_int_eq(t->groups[1].ranks[0], 5);
  static const int32_t c[] = {15, 0, 7, 8};
  ck_assert_uint_eq(t->groups[2].nranks, 4);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(t->groups[2].ranks[i], c[i]);
  dt_trace_free(t);
  parse_fails("dtsim_trace 1\nranks 16\ngroup a 0-16\n", "t.dtt:3:9: ", WORDS("16", "out of range"));
  parse_fails("dtsim_trace 1\nranks 16\ngroup a 3-1\n", "t.dtt:3:9: ", WORDS("3-1"));
  parse_fails("dtsim_trace 1\nranks 16\ngroup a 0,,1\n", "t.dtt:3:9: ", WORDS("0,,1"));
  parse_fails("dtsim_trace 1\nranks 16\ngroup a 0-3,2\n", "t.dtt:3:7: ", WORDS("'a'", "twice"));
}
END_TEST

START_TEST(test_idle_ranks)
{
  dt_trace *t = valid_ok("dtsim_trace 1\nranks 8\nrank 5\ns0 compute dur=1ms\n");
  for (int r = 0; r < 8; r++)
    ck_assert_uint_eq(t->ranks[r].nstreams, r == 5 ? 1 : 0);
  ck_assert_uint_eq(dt_trace_op_count(t), 1);
  dt_trace_free(t);
  /* no rank section at all */
  t = valid_ok("dtsim_trace 1\nranks 2\n");
  ck_assert_uint_eq(dt_trace_op_count(t), 0);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_after_forward_stream)
{
  /* s0 waits for stream s7, which first appears two lines later */
  dt_trace *t = parse_ok(HDR "rank 2\n"
                             "s0 compute dur=1ms after=s7:1\n"
                             "s7 compute dur=1ms\n"
                             "s7 compute dur=2ms\n"
                             "rank 3\n"
                             "s1 compute dur=1ms\n");
  dt_op *o = op_at(t, 2, 0, 0);
  ck_assert_int_eq(o->deps[0].stream, 1); /* s7 is the rank's second stream */
  ck_assert_int_eq(o->deps[0].index, 1);
  dt_trace_free(t);
  parse_fails(HDR "rank 2\ns0 compute dur=1ms\ns0 compute dur=1ms after=s4:0\nrank 3\n", "t.dtt:7: ",
              WORDS("s4", "rank 2"));
  parse_fails(HDR "rank 2\ns0 compute dur=1ms after=s0-1\n", "t.dtt:6:26: ", WORDS("after", "s0-1"));
  validate_fails(HDR "rank 2\ns0 compute dur=1ms\ns1 compute dur=1ms after=s0:1\n", "t.dtt:7: ",
                 WORDS("s0:1", "does not exist"));
  validate_fails(HDR "rank 2\ns0 compute dur=1ms after=s0:0\n", "t.dtt:6: ", WORDS("later", "own stream"));
  validate_fails(HDR "rank 2\ns0 compute dur=1ms after=s1:0\ns1 compute dur=1ms after=s0:0\n", "t.dtt:6: ",
                 WORDS("cycle", "rank 2", "s0:0"));
  validate_fails(HDR "rank 1\ns0 compute dur=1ms\ns0 compute dur=1ms after=s1:0\ns1 compute dur=1ms after=s0:1\n",
                 "t.dtt:7: ", WORDS("cycle", "s0:1"));
  /* a diamond is not a cycle */
  dt_trace *d = valid_ok(HDR "rank 1\ns0 compute dur=1ms\ns1 compute dur=1ms after=s0:0\ns2 compute dur=1ms "
                             "after=s0:0\ns0 compute dur=1ms after=s1:0,s2:0\n");
  dt_trace_free(d);
}
END_TEST

static char *tmpdir_new(void)
{
  char *d = strdup("/tmp/check_trace.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void write_file(const char *dir, const char *name, const char *text, char *path, size_t size)
{
  snprintf(path, size, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void rm_rf(const char *dir)
{
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_per_rank_files)
{
  char *dir = tmpdir_new();
  char p0[512], p1[512], p2[512], bad[512];
  const char *h = "dtsim_trace 1\nranks 2\nmeta source=x\ngroup w 0-1\n";
  char t0[512], t1[512];
  snprintf(t0, sizeof t0, "%srank 0\ns0 allreduce group=w bytes=8\ns0 send peer=1 bytes=4\n", h);
  snprintf(t1, sizeof t1, "%srank 1\ns0 allreduce group=w bytes=8\ns0 recv peer=0 bytes=4\n", h);
  write_file(dir, "tr.0.dtt", t0, p0, sizeof p0);
  write_file(dir, "tr.1.dtt", t1, p1, sizeof p1);
  const char *paths[] = {p0, p1};
  dt_trace *t = NULL;
  dt_error e;
  ck_assert_msg(dt_trace_read_native(paths, 2, &t, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_uint_eq(t->ngroups, 1);
  ck_assert_uint_eq(t->nmeta, 1); /* the repeated header is kept once */
  ck_assert_uint_eq(dt_trace_op_count(t), 4);
  ck_assert_str_eq(t->files[op_at(t, 1, 0, 1)->file], p1);
  ck_assert_uint_eq(op_at(t, 1, 0, 1)->line, 7);
  ck_assert_msg(dt_trace_validate(t, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_int_eq(t->ninstances, 1);
  ck_assert_int_eq(t->npairs, 1);
  dt_trace_free(t);

  /* the directory itself reads as the per-rank files in it */
  const char *dirs[] = {dir};
  ck_assert_msg(dt_trace_read_native(dirs, 1, &t, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_uint_eq(dt_trace_op_count(t), 4);
  dt_trace_free(t);

  /* headers that disagree */
  char prefix[600];
  write_file(dir, "bad.1.dtt", "dtsim_trace 1\nranks 3\ngroup w 0-1\nrank 1\n", bad, sizeof bad);
  const char *pb[] = {p0, bad};
  ck_assert_int_eq(dt_trace_read_native(pb, 2, &t, &e), DT_ERR);
  snprintf(prefix, sizeof prefix, "%s:2:7: ", bad);
  assert_error(&e, prefix, WORDS("ranks 3", "ranks 2", "agree"));
  write_file(dir, "bad.1.dtt", "dtsim_trace 1\nranks 2\ngroup w 1,0\nrank 1\n", bad, sizeof bad);
  ck_assert_int_eq(dt_trace_read_native(pb, 2, &t, &e), DT_ERR);
  snprintf(prefix, sizeof prefix, "%s:3:7: ", bad);
  assert_error(&e, prefix, WORDS("'w'", "agree"));
  write_file(dir, "bad.1.dtt", "dtsim_trace 1\nranks 2\nrank 1\n", bad, sizeof bad);
  ck_assert_int_eq(dt_trace_read_native(pb, 2, &t, &e), DT_ERR);
  snprintf(prefix, sizeof prefix, "%s:3:1: ", bad);
  assert_error(&e, prefix, WORDS("0 groups", "agree"));
  write_file(dir, "bad.1.dtt", "dtsim_trace 1\nranks 2\ngroup w 0-1\ngroup v 0\nrank 1\n", bad, sizeof bad);
  ck_assert_int_eq(dt_trace_read_native(pb, 2, &t, &e), DT_ERR);
  snprintf(prefix, sizeof prefix, "%s:4:7: ", bad);
  assert_error(&e, prefix, WORDS("'v'", "not declared"));
  /* a rank in two files */
  write_file(dir, "copy.0.dtt", t0, p2, sizeof p2);
  const char *twice[] = {p0, p2};
  ck_assert_int_eq(dt_trace_read_native(twice, 2, &t, &e), DT_ERR);
  snprintf(prefix, sizeof prefix, "%s:5:6: ", p2);
  assert_error(&e, prefix, WORDS("rank 0", "second section", p0));
  const char *same[] = {p0, p0};
  ck_assert_int_eq(dt_trace_read_native(same, 2, &t, &e), DT_ERR);
  assert_error(&e, p0, WORDS("given twice"));
  rm_rf(dir);
  free(dir);
}
END_TEST

/* Equality of everything the native format carries (not file/line positions). */
static void assert_equal_traces(const dt_trace *a, const dt_trace *b)
{
  ck_assert_int_eq(a->nranks, b->nranks);
  ck_assert_uint_eq(a->ngroups, b->ngroups);
  for (size_t g = 0; g < a->ngroups; g++) {
    ck_assert_str_eq(a->groups[g].name, b->groups[g].name);
    ck_assert_uint_eq(a->groups[g].nranks, b->groups[g].nranks);
    ck_assert_mem_eq(a->groups[g].ranks, b->groups[g].ranks, a->groups[g].nranks * sizeof(int32_t));
  }
  ck_assert_uint_eq(a->nmeta, b->nmeta);
  for (size_t m = 0; m < a->nmeta; m++) {
    ck_assert_str_eq(a->meta_keys[m], b->meta_keys[m]);
    ck_assert_str_eq(a->meta_values[m], b->meta_values[m]);
  }
  ck_assert(a->captured_step_s == b->captured_step_s);
  for (int32_t r = 0; r < a->nranks; r++) {
    ck_assert_uint_eq(a->ranks[r].nstreams, b->ranks[r].nstreams);
    for (size_t s = 0; s < a->ranks[r].nstreams; s++) {
      const dt_stream *x = &a->ranks[r].streams[s], *y = &b->ranks[r].streams[s];
      ck_assert_int_eq(x->id, y->id);
      ck_assert_uint_eq(x->nops, y->nops);
      for (size_t i = 0; i < x->nops; i++) {
        const dt_op *p = &x->ops[i], *q = &y->ops[i];
        ck_assert_int_eq(p->kind, q->kind);
        ck_assert_int_eq(p->group, q->group);
        ck_assert_int_eq(p->peer, q->peer);
        ck_assert_int_eq(p->root, q->root);
        ck_assert_int_eq(p->tag, q->tag);
        ck_assert_uint_eq(p->bytes, q->bytes);
        ck_assert_msg(p->dur == q->dur, "dur %.17g != %.17g", p->dur, q->dur);
        ck_assert_msg(p->flop == q->flop, "flop %.17g != %.17g", p->flop, q->flop);
        ck_assert_int_eq(p->batch, q->batch);
        ck_assert_uint_eq(p->ndeps, q->ndeps);
        for (uint32_t d = 0; d < p->ndeps; d++) {
          ck_assert_int_eq(p->deps[d].stream, q->deps[d].stream);
          ck_assert_int_eq(p->deps[d].index, q->deps[d].index);
        }
        ck_assert_uint_eq(p->nsplits, q->nsplits);
        if (p->nsplits)
          ck_assert_mem_eq(p->splits, q->splits, p->nsplits * sizeof(uint64_t));
        ck_assert_int_eq(p->name == NULL, q->name == NULL);
        if (p->name)
          ck_assert_str_eq(p->name, q->name);
        ck_assert_int_eq(p->dtype == NULL, q->dtype == NULL);
        if (p->dtype)
          ck_assert_str_eq(p->dtype, q->dtype);
      }
    }
  }
}

static dt_trace *round_trip_memory(const dt_trace *t)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  dt_error e;
  ck_assert_msg(dt_trace_write_native_file(t, f, &e) == DT_OK, "%s", fmt_err(&e));
  fclose(f);
  dt_trace *back = NULL;
  ck_assert_msg(dt_trace_parse_native(text, len, "back.dtt", &back, &e) == DT_OK, "%s\n%s", fmt_err(&e), text);
  free(text);
  return back;
}

static const char *rich =
    "dtsim_trace 1\n"
    "ranks 4\n"
    "meta source=\"run 7.json\"\n"
    "meta captured_step_time=12.5ms\n"
    "group tp0 0-1\n"
    "group \"dp # 0\" 0,2\n"
    "group all 0-3\n"
    "rank 0\n"
    "s0 compute dur=1.25ms name=\"fwd \\\"l0\\\" \\\\x\" dtype=bf16\n"
    "s1 allreduce group=tp0 bytes=50331648 after=s0:0\n"
    "s0 compute flop=1.234567890123e15\n"
    "s2 send peer=1 bytes=8388608 batch=3 tag=9\n"
    "s2 recv peer=1 bytes=8388608 batch=3\n"
    "s1 broadcast group=\"dp # 0\" bytes=7 root=1 after=s2:1,s0:1\n"
    "s1 alltoall group=all splits=0,5,6,7\n"
    "s0 delay dur=0.3us\n"
    "s0 mark name=iter1\n"
    "s1 barrier group=all\n"
    "s1 other group=all bytes=12 name=nccl:gather\n"
    "rank 2\n"
    "s5 compute dur=0.1s\n"
    "s5 reduce group=\"dp # 0\" bytes=7\n"
    "s5 mark\n";

START_TEST(test_round_trip)
{
  dt_trace *t = parse_ok(rich);
  dt_trace *back = round_trip_memory(t);
  assert_equal_traces(t, back);
  dt_trace_free(back);

  /* durations that print badly in decimal, built in memory with their notes */
  dt_trace *m = dt_trace_new(3);
  static const double durs[] = {1.0 / 3, 1e-9 / 7, 0.1 + 0.2, 123456.789e-6, 1e-300, 2.5e-3};
  for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
    dt_op *o = dt_trace_append(m, 1, (int32_t)(i % 2));
    o->kind = DT_OP_COMPUTE;
    o->dur = durs[i];
  }
  dt_op *o = dt_trace_append(m, 1, 1);
  o->kind = DT_OP_MARK;
  o->name = strdup("line\nbreak\ttab");
  m->captured_step_s = 1.0 / 7;
  dt_trace_add_note(m, "assumed \"rank 0\" for all");
  back = round_trip_memory(m);
  ck_assert(back->captured_step_s == m->captured_step_s);
  ck_assert_uint_eq(back->nmeta, 2);
  ck_assert_str_eq(back->meta_keys[1], "note");
  ck_assert_str_eq(back->meta_values[1], "assumed \"rank 0\" for all");
  ck_assert_uint_eq(back->ranks[1].nstreams, 2);
  for (size_t s = 0; s < 2; s++)
    for (size_t i = 0; i < m->ranks[1].streams[s].nops; i++) {
      ck_assert_msg(m->ranks[1].streams[s].ops[i].dur == back->ranks[1].streams[s].ops[i].dur, "dur %.17g",
                    m->ranks[1].streams[s].ops[i].dur);
    }
  ck_assert_str_eq(back->ranks[1].streams[1].ops[3].name, "line\nbreak\ttab");
  dt_trace_free(back);
  dt_trace_free(m);

  /* per-rank files into a directory, read back from the directory */
  char *dir = tmpdir_new();
  char out[600];
  snprintf(out, sizeof out, "%s/per/", dir);
  dt_error e;
  ck_assert_msg(dt_trace_write_native(t, out, &e) == DT_OK, "%s", fmt_err(&e));
  char f0[700], f1[700], f2[700];
  snprintf(f0, sizeof f0, "%strace.0.dtt", out);
  snprintf(f1, sizeof f1, "%strace.1.dtt", out);
  snprintf(f2, sizeof f2, "%strace.2.dtt", out);
  ck_assert_int_eq(access(f0, R_OK), 0);
  ck_assert_int_ne(access(f1, R_OK), 0); /* rank 1 is idle: no file */
  ck_assert_int_eq(access(f2, R_OK), 0);
  const char *dirs[] = {out};
  ck_assert_msg(dt_trace_read_native(dirs, 1, &back, &e) == DT_OK, "%s", fmt_err(&e));
  assert_equal_traces(t, back);
  dt_trace_free(back);
  /* one file, then read back */
  snprintf(out, sizeof out, "%s/one.dtt", dir);
  ck_assert_msg(dt_trace_write_native(t, out, &e) == DT_OK, "%s", fmt_err(&e));
  const char *one[] = {out};
  ck_assert_msg(dt_trace_read_native(one, 1, &back, &e) == DT_OK, "%s", fmt_err(&e));
  assert_equal_traces(t, back);
  dt_trace_free(back);
  rm_rf(dir);
  free(dir);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_parse_errors)
{
  parse_fails(HDR "rank 0\ns0 allreduc group=g bytes=8\n", "t.dtt:6:4: ", WORDS("unknown op 'allreduc'", "'allreduce'"));
  parse_fails(HDR "rank 0\ns0 allreduce group=g byts=8\n", "t.dtt:6:22: ", WORDS("unknown key 'byts'", "'bytes'"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms bytes=8\n", "t.dtt:6:20: ", WORDS("'bytes'", "does not apply", "'compute'"));
  parse_fails(HDR "rank 0\ns0 allreduce group=g\n", "t.dtt:6: ", WORDS("'allreduce'", "bytes="));
  parse_fails(HDR "rank 0\ns0 send bytes=8\n", "t.dtt:6: ", WORDS("'send'", "peer="));
  parse_fails(HDR "rank 0\ns0 compute name=x\n", "t.dtt:6: ", WORDS("dur=", "flop="));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms flop=5\n", "t.dtt:6: ", WORDS("not both"));
  parse_fails(HDR "rank 0\ns0 alltoall group=g bytes=4 splits=1,1,1,1\n", "t.dtt:6: ", WORDS("not both"));
  parse_fails(HDR "rank 0\ns0 alltoall group=g splits=1,1\n", "t.dtt:6:28: ", WORDS("splits", "2", "4 ranks"));
  parse_fails(HDR "rank 0\ns0 compute dur=5\n", "t.dtt:6:16: ", WORDS("dur=", "bare number"));
  parse_fails(HDR "rank 0\ns0 allreduce group=g bytes=1.5\n", "t.dtt:6:28: ", WORDS("bytes=", "1.5"));
  parse_fails(HDR "rank 0\ns0 allreduce group=gg bytes=8\n", "t.dtt:6:20: ", WORDS("unknown group 'gg'", "'g'"));
  parse_fails(HDR "rank 0\ns0 broadcast group=p bytes=8 root=2\n", "t.dtt:6:35: ", WORDS("root 2", "'p'"));
  parse_fails(HDR "rank 0\ns0 send peer=4 bytes=8\n", "t.dtt:6:14: ", WORDS("peer 4", "out of range"));
  parse_fails(HDR "rank 0\ns0 send peer=0 bytes=8\n", "t.dtt:6:14: ", WORDS("peer 0", "itself"));
  parse_fails(HDR "rank 0\ns0 mark name=a name=b\n", "t.dtt:6:16: ", WORDS("'name'", "twice"));
  parse_fails(HDR "rank 0\ns0 mark batch=-2\n", "t.dtt:6:15: ", WORDS("batch=", "-2"));
  parse_fails(HDR "rank 0\ns0 mark oops\n", "t.dtt:6:9: ", WORDS("key=value", "oops"));
  parse_fails(HDR "rank 0\nx0 mark\n", "t.dtt:6:1: ", WORDS("unknown line 'x0'"));
  parse_fails(HDR "rank 0\nallreduce group=g bytes=1\n", "t.dtt:6:1: ", WORDS("'allreduce'", "stream"));
  parse_fails(HDR "rank 0\ns0\n", "t.dtt:6:1: ", WORDS("missing op"));
  parse_fails(HDR "rank 4\n", "t.dtt:5:6: ", WORDS("rank 4", "out of range"));
  parse_fails(HDR "rank 0\nrank 0\n", "t.dtt:6:6: ", WORDS("rank 0", "second section", "t.dtt:5"));
  parse_fails(HDR "s0 mark\n", "t.dtt:5:1: ", WORDS("before any 'rank"));
  parse_fails(HDR "rank 0\ngroup h 0\n", "t.dtt:6:1: ", WORDS("'group'", "header lines come first"));
  parse_fails(HDR "grup h 0\n", "t.dtt:5:1: ", WORDS("unknown line 'grup'", "'group'"));
  parse_fails(HDR "group g 0\n", "t.dtt:5:7: ", WORDS("group 'g'", "twice"));
  parse_fails(HDR "ranks 4\n", "t.dtt:5:1: ", WORDS("duplicate", "'ranks'"));
  parse_fails(HDR "dtsim_trace 1\n", "t.dtt:5:1: ", WORDS("duplicate", "'dtsim_trace'"));
  parse_fails("dtsim_trace 2\n", "t.dtt:1:13: ", WORDS("version", "'2'"));
  parse_fails("# nothing\n\n", "t.dtt:3: ", WORDS("missing", "dtsim_trace 1"));
  parse_fails("ranks 4\n", "t.dtt:1:1: ", WORDS("dtsim_trace 1", "'ranks'"));
  parse_fails("dtsim_trace 1\ngroup a 0\n", "t.dtt:2:1: ", WORDS("before 'ranks"));
  parse_fails("dtsim_trace 1\nranks 0\n", "t.dtt:2:7: ", WORDS("ranks N"));
  parse_fails("dtsim_trace 1\nranks 2\nmeta captured_step_time=3\n", "t.dtt:3:25: ", WORDS("captured_step_time"));
  parse_fails("dtsim_trace 1\nranks 2\nmeta novalue\n", "t.dtt:3:6: ", WORDS("meta key=value", "novalue"));
  /* header lines name their column (were line only); the NUL byte its column; JSON is not a native trace, said at
   * its byte offset (was line 2 of a gzip file's text: "expected the header 'dtsim_trace 1', found '{'") */
  parse_fails("dtsim_trace 1 x\n", "t.dtt:1:15: ", WORDS("unexpected 'x'", "nothing else"));
  parse_fails("dtsim_trace 1\n  ranks  x\n", "t.dtt:2:10: ", WORDS("ranks N", "'x'"));
  parse_fails(HDR "  group  g 0\n", "t.dtt:5:10: ", WORDS("group 'g'", "twice"));
  static const char nul[] = HDR "rank 0\ns0 mark na\0me=x\n";
  dt_trace *t = NULL;
  dt_error e;
  dt_error_clear(&e);
  ck_assert_int_eq(dt_trace_parse_native(nul, sizeof nul - 1, "t.dtt", &t, &e), DT_ERR);
  assert_error(&e, "t.dtt:6:11: ", WORDS("NUL byte", "a trace is text"));
  parse_fails("\n  {\"traceEvents\": []}\n", "t.dtt: ", WORDS("not a native trace", "JSON ('{' at byte 3)"));
}
END_TEST

/* Every id and number of an op line names its range and its column when it is outside (was: "expected a
 * non-negative integer id" for batch=9...9, "bad stream" for s2^31, "not a non-negative number" for a FLOP of
 * 1e400, and splits= summing past 2^53 accepted); ids read as every whole number dtsim reads (leading zeros
 * decimal, in every id alike). */
/* A list item is read at any length: a spelling with many leading zeros is the value it spells, as everywhere
 * else (a 45-character splits= item, a 64-character rank, a kernels= dimension: "bad splits= item" or the rank
 * list's syntax message before, from fixed 32- to 64-byte buffers). Values compared with the short spellings. */
START_TEST(test_long_items_in_range)
{
  char text[2048], z[80];
  memset(z, '0', 64);
  z[64] = '\0';
  snprintf(text, sizeof text,
           "dtsim_trace 1\nranks 4\ngroup g %s0-%s3\nrank 0\ns0 alltoall group=g splits=%s1024,1,2,%s3\n"
           "s1 compute dur=1us kernels=gemm:bf16:%s64:64:64:1:%s524288:%s1024 after=s%s0:%s0\n",
           z, z, z, z, z, z, z, z, z);
  dt_trace *t = parse_ok(text);
  ck_assert_uint_eq(t->groups[0].nranks, 4);
  ck_assert_int_eq(t->groups[0].ranks[3], 3);
  const dt_op *o = op_at(t, 0, 0, 0);
  ck_assert_uint_eq(o->nsplits, 4);
  ck_assert_uint_eq(o->splits[0], 1024);
  ck_assert_uint_eq(o->splits[3], 3);
  ck_assert_uint_eq(o->bytes, 1024 + 1 + 2 + 3);
  o = op_at(t, 0, 1, 0);
  ck_assert_uint_eq(o->nkernels, 1);
  ck_assert_int_eq(o->kernels[0].m, 64);
  ck_assert_double_eq(o->kernels[0].flop, 524288);
  ck_assert_double_eq(o->kernels[0].bytes, 1024);
  ck_assert_uint_eq(o->ndeps, 1);
  ck_assert_int_eq(o->deps[0].index, 0);
  dt_trace_free(t);
  /* out of range at any length still names the range */
  snprintf(text, sizeof text, HDR "rank 0\ns0 alltoall group=g splits=%s9007199254740993,1,1,1\n", z);
  parse_fails(text, "t.dtt:6:28: ", WORDS("splits= item 1", "2^53"));
}
END_TEST

START_TEST(test_id_and_number_ranges)
{
  parse_fails(HDR "rank 0\ns2147483648 compute dur=1ms\n", "t.dtt:6:1: ",
              WORDS("bad stream 's2147483648'", "from 0 to 2147483647"));
  parse_fails(HDR "rank 0\ns0 send peer=1 bytes=8 tag=99999999999999999999\n", "t.dtt:6:28: ",
              WORDS("tag=", "'99999999999999999999'", "from -9223372036854775808 to 9223372036854775807"));
  parse_fails(HDR "rank 0\ns0 send peer=1 bytes=8 tag=-9223372036854775809\n", "t.dtt:6:28: ",
              WORDS("tag=", "from -9223372036854775808"));
  parse_fails(HDR "rank 0\ns0 mark batch=99999999999999999999\n", "t.dtt:6:15: ",
              WORDS("batch=", "'99999999999999999999'", "from 0 to 9223372036854775807"));
  parse_fails(HDR "rank 0\ns0 mark batch=+1\n", "t.dtt:6:15: ", WORDS("batch=", "'+1'", "from 0 to"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms after=s0:0,s1:2147483648\n", "t.dtt:6:31: ",
              WORDS("after=", "s1:2147483648", "from 0 to 2147483647"));
  parse_fails(HDR "rank 0\ns0 send peer=99999999999 bytes=8\n", "t.dtt:6:14: ",
              WORDS("peer 99999999999", "out of range", "0-3"));
  parse_fails(HDR "rank 0\ns0 send peer=x bytes=8\n", "t.dtt:6:14: ", WORDS("peer=", "from 0 to 3"));
  parse_fails(HDR "rank 0\ns0 broadcast group=p bytes=8 root=99999999999\n", "t.dtt:6:35: ",
              WORDS("root 99999999999", "'p' of 2 ranks", "0-1"));
  parse_fails(HDR "rank 99999999999\n", "t.dtt:5:6: ", WORDS("rank 99999999999", "out of range", "0-3"));
  parse_fails(HDR "rank x\n", "t.dtt:5:6: ", WORDS("rank N", "from 0 to 3", "'x'"));
  parse_fails("dtsim_trace 1\nranks 4\ngroup a 0,99999999999\n", "t.dtt:3:11: ",
              WORDS("rank 99999999999", "out of range", "0-3"));
  parse_fails("dtsim_trace 1\nranks 4\ngroup a 0,x\n", "t.dtt:3:11: ", WORDS("bad rank 'x'", "from 0 to 3"));
  /* kernels= numbers: dt_parse_real, with the range (the column is the number's) */
  parse_fails(HDR "rank 0\ns0 compute dur=1ms kernels=gemm:bf16:1:1:1:1:1e400:1\n", "t.dtt:6:46: ",
              WORDS("item 1", "FLOP '1e400' is out of range", "from 0 to 1e+30"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms kernels=gemm:bf16:1:1:1:1:1:1,elem:fp32:1:1:1:1:1:1e-400\n",
              "t.dtt:6:70: ", WORDS("item 2", "BYTES '1e-400' is out of range", "1e-300"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms kernels=gemm:bf16:1:1:1:1e16:1:1\n", "t.dtt:6:44: ",
              WORDS("BATCH '1e16' is out of range", "from 0 to 9e+15"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms kernels=gemm:bf16:1.5:1:1:1:1:1\n", "t.dtt:6:38: ",
              WORDS("M: expected a whole number from 0 to 9e+15, found '1.5'"));
  parse_fails(HDR "rank 0\ns0 compute dur=1ms kernels=gemm:bf16:1:1:1:1:0x10:1\n", "t.dtt:6:46: ",
              WORDS("FLOP: expected a number of FLOP", "'0x10'"));
  parse_fails(HDR "rank 0\ns0 compute flop=1e-400\n", "t.dtt:6:17: ", WORDS("flop=", "1e-300"));
  parse_fails(HDR "rank 0\ns0 compute flop=inf\n", "t.dtt:6:17: ", WORDS("flop=", "from 0 to 1e+30"));
  /* splits=: each item at most 2^53 and so is their sum, the op's bytes (was: 2^53 + 2^53 accepted) */
  parse_fails(HDR "rank 0\ns0 alltoall group=g splits=9007199254740992,9007199254740992,0,0\n", "t.dtt:6:45: ",
              WORDS("splits= total is out of range", "items 1 to 2", "9007199254740992 (2^53)"));
  parse_fails(HDR "rank 0\ns0 alltoall group=g splits=1,2,9007199254740993,0\n", "t.dtt:6:32: ",
              WORDS("splits= item 3", "2^53"));
  dt_trace_free(parse_ok(HDR "rank 0\ns0 alltoall group=g splits=9007199254740990,1,1,0\n")); /* exactly 2^53 */
  /* leading zeros are decimal in every id, as in every whole number dtsim reads: s01 is s1, batch=01 is batch 1 */
  dt_trace *t = parse_ok(HDR "rank 01\ns01 send peer=02 bytes=08 tag=-07 batch=01\ns1 mark batch=1 after=s01:00\n");
  dt_op *o = op_at(t, 1, 1, 0);
  ck_assert_int_eq(o->peer, 2);
  ck_assert_uint_eq(o->bytes, 8);
  ck_assert_int_eq(o->tag, -7);
  ck_assert_int_eq(o->batch, 1);
  ck_assert_int_eq(op_at(t, 1, 1, 1)->batch, 1);
  ck_assert_uint_eq(t->ranks[1].nstreams, 1);
  dt_trace_free(t);
  t = parse_ok(HDR "rank 0\ns2147483647 send peer=1 bytes=9007199254740992 tag=-9223372036854775808 "
                   "batch=9223372036854775807\n");
  o = op_at(t, 0, INT32_MAX, 0);
  ck_assert_int_eq(o->tag, INT64_MIN);
  ck_assert_int_eq(o->batch, INT64_MAX);
  dt_trace_free(t);
}
END_TEST

/* 2 ranks, group g = {0,1}; rank 0 starts at line 4, rank 1 wherever the test puts it */
#define HDR2 "dtsim_trace 1\nranks 2\ngroup g 0-1\n"

START_TEST(test_validate_collective_mismatch)
{
  validate_fails(HDR2 "rank 0\ns0 allreduce group=g bytes=8\nrank 1\ns0 allreduce group=g bytes=16\n", "t.dtt:7: ",
                 WORDS("allreduce of 16 bytes", "rank 1", "t.dtt:7", "allreduce of 8 bytes", "rank 0", "t.dtt:5",
                       "sizes differ"));
  validate_fails(HDR2 "rank 0\ns0 allreduce group=g bytes=8\nrank 1\ns0 allgather group=g bytes=8\n", "t.dtt:7: ",
                 WORDS("allgather", "allreduce", "rank 0", "rank 1", "t.dtt:5", "t.dtt:7", "ops differ"));
  validate_fails(HDR2 "rank 0\ns0 broadcast group=g bytes=8 root=1\nrank 1\ns0 broadcast group=g bytes=8\n",
                 "t.dtt:7: ", WORDS("root 0", "root 1", "rank 0", "rank 1", "t.dtt:5", "t.dtt:7", "roots differ"));
  validate_fails(HDR2 "rank 0\ns0 alltoall group=g splits=3,5\nrank 1\ns0 alltoall group=g bytes=8\n", "t.dtt:7: ",
                 WORDS("splits=3,5", "rank 0", "rank 1", "t.dtt:5", "t.dtt:7", "splits differ"));
  /* the second collective on g differs: matching is by issue order, across streams */
  validate_fails(HDR2 "rank 0\ns0 allreduce group=g bytes=8\ns1 allreduce group=g bytes=4\n"
                      "rank 1\ns0 allreduce group=g bytes=8\ns0 allreduce group=g bytes=5\n",
                 "t.dtt:9: ", WORDS("2nd", "t.dtt:6", "t.dtt:9", "sizes differ"));
  /* a member issues fewer instances */
  validate_fails(HDR2 "rank 0\ns0 allreduce group=g bytes=8\ns0 barrier group=g\nrank 1\ns0 allreduce group=g bytes=8\n",
                 "t.dtt:6: ", WORDS("barrier", "rank 0", "no match on rank 1", "2nd", "issues only 1"));
  /* a non-member issues on the group */
  validate_fails("dtsim_trace 1\nranks 3\ngroup g 0-1\nrank 2\ns0 allreduce group=g bytes=8\n", "t.dtt:5: ",
                 WORDS("rank 2", "'g'", "not one of its ranks"));
  /* all-to-allv rows may differ between members */
  dt_trace *t = valid_ok(HDR2 "rank 0\ns0 alltoall group=g splits=3,5\nrank 1\ns0 alltoall group=g splits=9,0\n");
  dt_trace_free(t);
}
END_TEST

START_TEST(test_validate_p2p_mismatch)
{
  validate_fails(HDR2 "rank 0\ns0 send peer=1 bytes=8388608\nrank 1\n", "t.dtt:5: ",
                 WORDS("send of 8388608 bytes to rank 1 has no matching recv"));
  validate_fails(HDR2 "rank 0\ns0 send peer=1 bytes=8 tag=2\nrank 1\ns0 recv peer=0 bytes=8 tag=3\n", "t.dtt:5: ",
                 WORDS("send of 8 bytes to rank 1 with tag 2 has no matching recv"));
  validate_fails(HDR2 "rank 0\ns0 send peer=1 bytes=8\nrank 1\ns0 recv peer=0 bytes=8\ns0 recv peer=0 bytes=8\n",
                 "t.dtt:8: ", WORDS("recv of 8 bytes from rank 0 has no matching send", "1 sends"));
  validate_fails(HDR2 "rank 0\ns0 send peer=1 bytes=8\nrank 1\ns0 recv peer=0 bytes=9\n", "t.dtt:5: ",
                 WORDS("send of 8 bytes", "rank 0", "rank 1", "recv of 9 bytes", "t.dtt:5", "t.dtt:7", "sizes differ"));
}
END_TEST

START_TEST(test_match_ids)
{
  dt_trace *t = valid_ok("dtsim_trace 1\n"                          /* 1 */
                         "ranks 3\n"                                /* 2 */
                         "group a 0-2\n"                            /* 3 */
                         "group b 1,2\n"                            /* 4 */
                         "rank 0\n"                                 /* 5 */
                         "s0 allreduce group=a bytes=8\n"           /* 6: 1st on a -> 0 */
                         "s0 send peer=1 bytes=16\n"                /* 7: 1st send to +1, tag 0 -> 0 */
                         "s0 allgather group=a bytes=4\n"           /* 8: 2nd on a -> 1 */
                         "s0 send peer=2 bytes=32 tag=5\n"          /* 9: 1st send to +2, tag 5 -> 0 */
                         "rank 1\n"                                 /* 10 */
                         "s0 recv peer=0 bytes=16\n"                /* 1st recv from +2 (mod 3) -> 0 */
                         "s0 allreduce group=a bytes=8\n"           /* 0 */
                         "s0 broadcast group=b bytes=100 root=1\n"  /* 1st on b -> 0 */
                         "s0 allgather group=a bytes=4\n"           /* 1 */
                         "s0 mark name=x\n"                         /* -1 */
                         "rank 2\n"
                         "s0 broadcast group=b bytes=100 root=1\n"  /* 0 */
                         "s0 allreduce group=a bytes=8\n"           /* 0 */
                         "s0 allgather group=a bytes=4\n"           /* 1 */
                         "s0 recv peer=0 bytes=32 tag=5\n");        /* 0 */
  ck_assert_int_eq(t->ninstances, 3);
  ck_assert_int_eq(t->npairs, 2);
  static const int64_t want0[] = {0, 0, 1, 0}, want1[] = {0, 0, 0, 1, -1}, want2[] = {0, 0, 1, 0};
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(op_at(t, 0, 0, (size_t)i)->match, want0[i]);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(op_at(t, 1, 0, (size_t)i)->match, want1[i]);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(op_at(t, 2, 0, (size_t)i)->match, want2[i]);
  ck_assert_uint_eq(t->nnotes, 0);
  dt_trace_free(t);

  /* issue order across streams is line order: s1's allreduce (line 5) is the 1st on g, s0's (line 6) the 2nd */
  t = valid_ok(HDR2 "rank 0\ns1 allreduce group=g bytes=1\ns0 allreduce group=g bytes=2\n"
                    "rank 1\ns0 allreduce group=g bytes=1\ns0 allreduce group=g bytes=2\n");
  ck_assert_int_eq(op_at(t, 0, 1, 0)->match, 0);
  ck_assert_int_eq(op_at(t, 0, 0, 0)->match, 1);
  dt_trace_free(t);

  /* send/recv sequences count per (peer offset, tag, direction): rank 0's sends to 1 are 0, 1; its send to 1
   * with tag 7 starts again at 0; rank 1's recvs from 0 are 0, 1 and its recv with tag 7 is 0 */
  t = valid_ok(HDR2 "rank 0\ns0 send peer=1 bytes=1\ns0 send peer=1 bytes=1 tag=7\ns0 send peer=1 bytes=2\n"
                    "rank 1\ns0 recv peer=0 bytes=1\ns0 recv peer=0 bytes=2\ns0 recv peer=0 bytes=1 tag=7\n");
  ck_assert_int_eq(op_at(t, 0, 0, 0)->match, 0);
  ck_assert_int_eq(op_at(t, 0, 0, 1)->match, 0);
  ck_assert_int_eq(op_at(t, 0, 0, 2)->match, 1);
  ck_assert_int_eq(op_at(t, 1, 0, 0)->match, 0);
  ck_assert_int_eq(op_at(t, 1, 0, 1)->match, 1);
  ck_assert_int_eq(op_at(t, 1, 0, 2)->match, 0);
  ck_assert_int_eq(t->npairs, 3);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_batch_consecutive)
{
  dt_trace *t = valid_ok(HDR2 "rank 0\ns0 send peer=1 bytes=8 batch=1\ns0 recv peer=1 bytes=8 batch=1\n"
                              "s0 compute dur=1ms\ns0 send peer=1 bytes=8 batch=2\n"
                              "rank 1\ns0 send peer=0 bytes=8 batch=1\ns0 recv peer=0 bytes=8 batch=1\n"
                              "s0 recv peer=0 bytes=8\n");
  dt_trace_free(t);
  validate_fails(HDR2 "rank 0\ns0 send peer=1 bytes=8 batch=1\ns0 compute dur=1ms\ns0 recv peer=1 bytes=8 batch=1\n"
                      "rank 1\ns0 recv peer=0 bytes=8\ns0 send peer=0 bytes=8\n",
                 "t.dtt:7: ", WORDS("batch 1", "rank 0", "not consecutive", "t.dtt:5"));
  /* the same id on two streams is two batches */
  t = valid_ok(HDR2 "rank 0\ns0 compute dur=1ms batch=4\ns1 compute dur=1ms batch=4\ns0 compute dur=1ms batch=4\n");
  dt_trace_free(t);
}
END_TEST

START_TEST(test_two_streams_warning)
{
  dt_trace *t = valid_ok(HDR2 "rank 0\ns0 allreduce group=g bytes=8\ns1 allreduce group=g bytes=8\n"
                              "rank 1\ns0 allreduce group=g bytes=8\ns0 allreduce group=g bytes=8\n");
  ck_assert_uint_eq(t->nnotes, 1);
  ck_assert_msg(strstr(t->notes[0], "warning") && strstr(t->notes[0], "'g'") && strstr(t->notes[0], "rank 0") &&
                    strstr(t->notes[0], "s0 and s1"),
                "%s", t->notes[0]);
  dt_error e;
  ck_assert_int_eq(dt_trace_validate(t, &e), DT_OK); /* validating again adds no second copy */
  ck_assert_uint_eq(t->nnotes, 1);
  /* written, read back (the note is now a `meta note=` pair) and validated again: no second copy, so writing
   * again gives the same text (a libFuzzer finding: tests/fuzz/regressions/native/roundtrip-meta-note-twice.dtt) */
  char *text[2] = {NULL, NULL};
  size_t len[2];
  dt_trace *cur = t;
  for (int pass = 0; pass < 2; pass++) {
    FILE *f = open_memstream(&text[pass], &len[pass]);
    ck_assert_int_eq(dt_trace_write_native_file(cur, f, &e), DT_OK);
    fclose(f);
    dt_trace *back = NULL;
    ck_assert_int_eq(dt_trace_parse_native(text[pass], len[pass], "back.dtt", &back, &e), DT_OK);
    ck_assert_int_eq(dt_trace_validate(back, &e), DT_OK);
    ck_assert_uint_eq(back->nnotes, 0);
    ck_assert(dt_trace_has_note(back, t->notes[0]));
    if (cur != t)
      dt_trace_free(cur);
    cur = back;
  }
  ck_assert_uint_eq(len[0], len[1]);
  ck_assert_str_eq(text[0], text[1]);
  free(text[0]);
  free(text[1]);
  dt_trace_free(cur);
  dt_trace_free(t);
}
END_TEST

/* A name or value holding '=' that came quoted is written quoted again: unquoted, "a=b" reads back as a key and a
 * value and the group line is refused (a libFuzzer finding: tests/fuzz/regressions/native/roundtrip-equals.dtt). */
START_TEST(test_roundtrip_equals)
{
  dt_trace *t = valid_ok("dtsim_trace 1\nranks 2\ngroup a\"=\"b 0-1\nmeta \"k=1\"=v=2\n"
                         "rank 0\ns0 allreduce group=a=b bytes=8\nrank 1\ns0 allreduce group=\"a=b\" bytes=8\n");
  ck_assert_str_eq(t->groups[0].name, "a=b");
  dt_error e;
  char *text = NULL;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  ck_assert_int_eq(dt_trace_write_native_file(t, f, &e), DT_OK);
  fclose(f);
  ck_assert_msg(strstr(text, "group \"a=b\" 0-1\n") && strstr(text, "meta \"k=1\"=\"v=2\"\n"), "%s", text);
  dt_trace *back = NULL;
  ck_assert_int_eq(dt_trace_parse_native(text, len, "back.dtt", &back, &e), DT_OK);
  ck_assert_int_eq(dt_trace_validate(back, &e), DT_OK);
  ck_assert_str_eq(back->groups[0].name, "a=b");
  ck_assert_uint_eq(dt_trace_op_count(back), 2);
  free(text);
  dt_trace_free(back);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_load_sniffing)
{
  char *dir = tmpdir_new();
  char p[512], q[512];
  dt_import_opts o;
  dt_import_opts_init(&o);
  ck_assert_ptr_null(o.format);
  ck_assert_double_eq(o.dep_window_s, 5e-6);
  ck_assert_int_eq(o.keep_gaps, 1);
  ck_assert_int_eq(o.expand, 0);
  ck_assert_int_eq(o.rank, -1);
  dt_trace *t = NULL;
  dt_error e;
  /* native after comments; validated on load */
  write_file(dir, "a.dtt", "# hi\n\ndtsim_trace 1\nranks 2\nrank 0\ns0 send peer=1 bytes=3\nrank 1\ns0 recv peer=0 bytes=3\n",
             p, sizeof p);
  const char *one[] = {p};
  ck_assert_msg(dt_trace_load(one, 1, &o, &t, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_int_eq(t->npairs, 1);
  ck_assert_str_eq(t->format, "native");
  dt_trace_free(t);
  /* the importer table: every row has a name, a label, an importer and stated assumptions */
  ck_assert_uint_ge(dt_importer_count(), 2);
  for (size_t i = 0; i < dt_importer_count(); i++) {
    const dt_importer *imp = dt_importer_at(i);
    ck_assert(imp->name && imp->label && imp->import && imp->assumptions && imp->assumptions[0]);
    ck_assert_ptr_eq(dt_importer_find(imp->name), imp);
  }
  ck_assert_ptr_null(dt_importer_at(dt_importer_count()));
  ck_assert_ptr_null(dt_importer_find("bogus"));
  /* files of two formats in one load: an error naming both */
  write_file(dir, "k.json", "{\"traceEvents\": []}\n", q, sizeof q);
  const char *mixed[] = {p, q};
  ck_assert_int_eq(dt_trace_load(mixed, 2, &o, &t, &e), DT_ERR);
  assert_error(&e, q, WORDS("of one format", "a.dtt", "Kineto"));
  /* the same gzip-compressed */
  snprintf(q, sizeof q, "%s/a.dtt.gz", dir);
  gzFile gz = gzopen(q, "wb");
  gzputs(gz, "dtsim_trace 1\nranks 2\nrank 0\ns0 send peer=1 bytes=3\nrank 1\ns0 recv peer=0 bytes=3\n");
  gzclose(gz);
  const char *gzp[] = {q};
  ck_assert_msg(dt_trace_load(gzp, 1, &o, &t, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_int_eq(t->npairs, 1);
  dt_trace_free(t);
  /* validation errors come through */
  write_file(dir, "b.dtt", "dtsim_trace 1\nranks 2\nrank 0\ns0 send peer=1 bytes=3\n", p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  ck_assert_ptr_null(t);
  ck_assert(strstr(fmt_err(&e), "no matching recv"));
  /* unknown formats name the file and what was found */
  write_file(dir, "c.txt", "hello world\n", p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS("unrecognised trace format", "hello world", "dtsim_trace 1"));
  write_file(dir, "d.log", "node1:12:12 [0] NCCL INFO AllReduce: opCount 0\n", p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS("AllReduce call without 'count"));
  /* a count that is there but does not fit 64 bits is named as such, not as missing */
  write_file(dir, "d2.log", "node1:12:12 [0] NCCL INFO AllReduce: opCount 0 count 99999999999999999999999 datatype 7\n",
             p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS(":1:", "AllReduce call with count '99999999999999999999999'", "expected a number of elements"));
  write_file(dir, "e.dtt", "", p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS("empty file"));
  /* a file of comments only (a capture cut after its header) is not called empty */
  write_file(dir, "e2.log", "# NCCL debug log of 8 processes\n# (header only)\n\n", p, sizeof p);
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS("unrecognised trace format", "only blank lines and '#' comments"));
  ck_assert_msg(strstr(fmt_err(&e), "empty file") == NULL, "%s", fmt_err(&e));
  /* forcing the format: a JSON object read as native fails in the native reader */
  write_file(dir, "f.json", "{\"traceEvents\": []}\n", p, sizeof p);
  o.format = "native";
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  assert_error(&e, p, WORDS("dtsim_trace 1"));
  o.format = "bogus";
  ck_assert_int_eq(dt_trace_load(one, 1, &o, &t, &e), DT_ERR);
  ck_assert(strstr(fmt_err(&e), "'bogus'"));
  ck_assert(strstr(fmt_err(&e), "kineto"));
  rm_rf(dir);
  free(dir);
}
END_TEST

/* Template ranks: set_template's errors, and the accessors' mapping (hand-computed peers modulo nranks). */
/* An importer that builds an all-to-allv whose split list is not one size per group member gets an error at
 * validation naming both numbers (the native reader checks this itself; the validator catches every importer). */
START_TEST(test_splits_length)
{
  dt_trace *t = dt_trace_new(4);
  dt_error e;
  int32_t ranks[4] = {0, 1, 2, 3};
  ck_assert_int_eq(dt_trace_add_group(t, "g", ranks, 4, 0, 0, &e), 0);
  for (int32_t r = 0; r < 4; r++) {
    dt_op *op = dt_trace_append(t, r, 0);
    op->kind = DT_OP_ALLTOALL;
    op->group = 0;
    op->nsplits = r == 2 ? 3 : 4;
    op->splits = dt_xcalloc(op->nsplits, sizeof *op->splits);
    for (uint32_t i = 0; i < op->nsplits; i++)
      op->splits[i] = 1024;
  }
  ck_assert_int_eq(dt_trace_validate(t, &e), DT_ERR);
  ck_assert_msg(strstr(e.msg, "lists 3 sizes") && strstr(e.msg, "has 4 ranks"), "%s", e.msg);
  dt_trace_free(t);
}
END_TEST

/* An op built in memory (an importer's product of counts) past the 2^53 bytes one op may move is refused by the
 * validation every trace goes through (NCCL Inspector's coll_msg_size_bytes 2^64-1 was written as bytes=2^64-1,
 * a trace the native reader then refuses). 2^53 itself is allowed. */
START_TEST(test_validate_bytes_limit)
{
  for (int k = 0; k < 2; k++) {
    dt_trace *t = dt_trace_new(2);
    dt_error e;
    dt_error_clear(&e);
    int32_t ranks[2] = {0, 1};
    ck_assert_int_eq(dt_trace_add_group(t, "g", ranks, 2, 0, 0, &e), 0);
    for (int32_t r = 0; r < 2; r++) {
      dt_op *op = dt_trace_append(t, r, 0);
      op->kind = DT_OP_ALLREDUCE;
      op->group = 0;
      op->bytes = ((uint64_t)1 << 53) + (uint64_t)k;
    }
    if (k == 0) {
      ck_assert_msg(dt_trace_validate(t, &e) == DT_OK, "%s", e.msg);
    } else {
      ck_assert_int_eq(dt_trace_validate(t, &e), DT_ERR);
      ck_assert_msg(strstr(e.msg, "allreduce of rank 0 moves 9007199254740993 bytes, more than the 9007199254740992 "
                               "(2^53) one op may move"), "%s", e.msg);
    }
    dt_trace_free(t);
  }
}
END_TEST

START_TEST(test_template_api)
{
  dt_trace *t = dt_trace_new(4);
  for (int32_t r = 0; r < 4; r++)
    ck_assert_int_eq(t->ranks[r].template_rank, -1);
  dt_error e;
  dt_error_clear(&e);
  int32_t g01[] = {0, 1}, g23[] = {2, 3};
  ck_assert_int_eq(dt_trace_add_group(t, "a", g01, 2, 0, 0, &e), 0);
  ck_assert_int_eq(dt_trace_add_group(t, "b", g23, 2, 0, 0, &e), 1);
  dt_op *op = dt_trace_append(t, 0, 0);
  op->kind = DT_OP_ALLREDUCE;
  op->group = 0;
  op->bytes = 8;
  op = dt_trace_append(t, 0, 1);
  op->kind = DT_OP_SEND;
  op->peer = 3;
  op = dt_trace_append(t, 0, 0);
  op->kind = DT_OP_COMPUTE;
  op->dur = 1;
  dt_trace_append(t, 1, 0)->kind = DT_OP_COMPUTE;

  ck_assert_int_eq(dt_trace_set_template(t, 4, 0, NULL, &e), DT_ERR);
  ck_assert(strstr(fmt_err(&e), "out of range"));
  ck_assert_int_eq(dt_trace_set_template(t, 2, -1, NULL, &e), DT_ERR);
  ck_assert_int_eq(dt_trace_set_template(t, 2, 2, NULL, &e), DT_ERR);
  ck_assert(strstr(fmt_err(&e), "its own template"));
  ck_assert_int_eq(dt_trace_set_template(t, 1, 0, NULL, &e), DT_ERR);
  ck_assert(strstr(fmt_err(&e), "already has ops"));
  int32_t bad[] = {5, 1};
  ck_assert_int_eq(dt_trace_set_template(t, 2, 0, bad, &e), DT_ERR);
  ck_assert(strstr(fmt_err(&e), "group index 5"));
  int32_t map[] = {1, 0};
  ck_assert_int_eq(dt_trace_set_template(t, 2, 0, map, &e), DT_OK);
  ck_assert_int_eq(dt_trace_set_template(t, 3, 2, NULL, &e), DT_ERR); /* 2 is a template user */
  ck_assert(strstr(fmt_err(&e), "runs the template"));
  ck_assert_int_eq(dt_trace_set_template(t, 3, 0, NULL, &e), DT_OK);

  ck_assert_ptr_eq(dt_trace_rank_body(t, 2), &t->ranks[0]);
  ck_assert_ptr_eq(dt_trace_rank_body(t, 1), &t->ranks[1]);
  ck_assert_uint_eq(dt_trace_rank_op_count(t, 2), 3);
  ck_assert_uint_eq(dt_trace_op_count(t), 3 + 1 + 3 + 3);
  const dt_op *ar = &t->ranks[0].streams[0].ops[0], *snd = &t->ranks[0].streams[1].ops[0],
              *cmp = &t->ranks[0].streams[0].ops[1];
  ck_assert_int_eq(dt_trace_op_group(t, 0, ar), 0);
  ck_assert_int_eq(dt_trace_op_group(t, 2, ar), 1); /* mapped */
  ck_assert_int_eq(dt_trace_op_group(t, 3, ar), 0); /* identity */
  ck_assert_int_eq(dt_trace_op_group(t, 2, cmp), -1);
  ck_assert_int_eq(dt_trace_op_peer(t, 0, snd), 3);
  ck_assert_int_eq(dt_trace_op_peer(t, 2, snd), 1); /* (2 + 3 - 0) mod 4 */
  ck_assert_int_eq(dt_trace_op_peer(t, 3, snd), 2); /* (3 + 3 - 0) mod 4 */
  ck_assert_int_eq(dt_trace_op_peer(t, 2, cmp), -1);
  dt_dep order[3];
  dt_trace_rank_order(t, 2, order);
  ck_assert_int_eq(order[0].stream, 0); /* no lines: stream position, then index */
  ck_assert_int_eq(order[0].index, 0);
  ck_assert_int_eq(order[1].stream, 0);
  ck_assert_int_eq(order[1].index, 1);
  ck_assert_int_eq(order[2].stream, 1);
  dt_trace_free(t);
}
END_TEST

/* 4 ranks, groups p0 = {0,1}, p1 = {2,3}, w = 0-3. Each rank all-reduces on its pair (s0), sends to r+1 and
 * receives from r-1 in one batch (s1), then broadcasts on w after its recv. Ranks whose bit is set in
 * `users` run rank 0's ops as template users; the others own a copy, rank 3's with its own sizes. */
static dt_trace *ring_trace(unsigned users, uint64_t r3_allreduce, uint64_t r3_recv)
{
  dt_trace *t = dt_trace_new(4);
  dt_error e;
  int32_t a[] = {0, 1}, b[] = {2, 3}, w[] = {0, 1, 2, 3};
  ck_assert_int_eq(dt_trace_add_group(t, "p0", a, 2, 0, 0, &e), 0);
  ck_assert_int_eq(dt_trace_add_group(t, "p1", b, 2, 0, 0, &e), 1);
  ck_assert_int_eq(dt_trace_add_group(t, "w", w, 4, 0, 0, &e), 2);
  for (int32_t r = 0; r < 4; r++) {
    if (users >> r & 1)
      continue;
    dt_trace_stream(t, r, 0, 1);
    dt_trace_stream(t, r, 1, 1);
    dt_op *op = dt_trace_append(t, r, 0);
    op->kind = DT_OP_ALLREDUCE;
    op->group = r < 2 ? 0 : 1;
    op->bytes = r == 3 ? r3_allreduce : 64;
    op->line = 1;
    op = dt_trace_append(t, r, 1);
    op->kind = DT_OP_SEND;
    op->peer = (r + 1) % 4;
    op->bytes = 8;
    op->batch = 1;
    op->line = 2;
    op = dt_trace_append(t, r, 1);
    op->kind = DT_OP_RECV;
    op->peer = (r + 3) % 4;
    op->bytes = r == 3 ? r3_recv : 8;
    op->batch = 1;
    op->line = 3;
    op = dt_trace_append(t, r, 0);
    op->kind = DT_OP_BROADCAST;
    op->group = 2;
    op->bytes = 16;
    op->root = 1;
    op->line = 4;
    op->deps = dt_xmalloc(sizeof *op->deps);
    op->deps[0] = (dt_dep){1, 1};
    op->ndeps = 1;
  }
  for (int32_t r = 1; r < 4; r++)
    if (users >> r & 1) {
      int32_t map[] = {r < 2 ? 0 : 1, -1, 2};
      ck_assert_msg(dt_trace_set_template(t, r, 0, map, &e) == DT_OK, "%s", fmt_err(&e));
    }
  return t;
}

/* Validation of template users: the same instances, pairs and sequence numbers as owning ranks; mismatches
 * between a template user and an owning rank name both ranks; bad maps and chains are errors. */
START_TEST(test_template_validate)
{
  dt_trace *own = ring_trace(0, 64, 8), *tpl = ring_trace(0xE, 64, 8);
  dt_error e;
  ck_assert_msg(dt_trace_validate(own, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_msg(dt_trace_validate(tpl, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_int_eq(own->ninstances, 3); /* p0, p1 and w once each: hand count */
  ck_assert_int_eq(own->npairs, 4);     /* the ring 0->1->2->3->0 */
  ck_assert_int_eq(tpl->ninstances, 3);
  ck_assert_int_eq(tpl->npairs, 4);
  ck_assert_uint_eq(dt_trace_op_count(tpl), 16);
  for (int32_t r = 0; r < 4; r++)
    for (size_t s = 0; s < 2; s++)
      for (size_t i = 0; i < 2; i++)
        ck_assert_int_eq(own->ranks[r].streams[s].ops[i].match, tpl->ranks[0].streams[s].ops[i].match);
  dt_trace_free(own);
  dt_trace_free(tpl);

  /* rank 2 runs rank 0's ops (all-reduce of 64 bytes on p1), rank 3 owns an all-reduce of 32 bytes on p1 */
  tpl = ring_trace(0x6, 32, 8);
  ck_assert_int_eq(dt_trace_validate(tpl, &e), DT_ERR);
  ck_assert_msg(strstr(fmt_err(&e), "allreduce of 32 bytes on group 'p1' at rank 3") &&
                    strstr(fmt_err(&e), "allreduce of 64 bytes at rank 2") && strstr(fmt_err(&e), "sizes differ"),
                "%s", fmt_err(&e));
  dt_trace_free(tpl);
  /* rank 3 receives 9 bytes from rank 2, a template user that sends 8 */
  tpl = ring_trace(0x6, 64, 9);
  ck_assert_int_eq(dt_trace_validate(tpl, &e), DT_ERR);
  ck_assert_msg(strstr(fmt_err(&e), "send of 8 bytes from rank 2 to rank 3") && strstr(fmt_err(&e), "recv of 9 bytes") &&
                    strstr(fmt_err(&e), "sizes differ"),
                "%s", fmt_err(&e));
  dt_trace_free(tpl);

  /* a map that merges two of the template's groups, one that leaves a used group out */
  tpl = dt_trace_new(4);
  int32_t a[] = {0, 1}, w[] = {0, 1, 2, 3};
  dt_trace_add_group(tpl, "p0", a, 2, 0, 0, &e);
  dt_trace_add_group(tpl, "w", w, 4, 0, 0, &e);
  dt_op *op = dt_trace_append(tpl, 0, 0);
  op->kind = DT_OP_ALLREDUCE;
  op->group = 0;
  op = dt_trace_append(tpl, 0, 0);
  op->kind = DT_OP_BARRIER;
  op->group = 1;
  int32_t m2[] = {1, 1};
  ck_assert_int_eq(dt_trace_set_template(tpl, 1, 0, m2, &e), DT_OK);
  ck_assert_int_eq(dt_trace_validate(tpl, &e), DT_ERR);
  ck_assert_msg(strstr(fmt_err(&e), "sends groups 'p0' and 'w' of its template (rank 0) both to group 'w'"), "%s",
                fmt_err(&e));
  int32_t m3[] = {-1, 1};
  ck_assert_int_eq(dt_trace_set_template(tpl, 1, 0, m3, &e), DT_OK); /* replaces the map */
  ck_assert_int_eq(dt_trace_validate(tpl, &e), DT_ERR);
  ck_assert_msg(strstr(fmt_err(&e), "group 'p0' to group index -1"), "%s", fmt_err(&e));
  dt_trace_free(tpl);

  /* a chain: rank 1 runs rank 0's ops, then rank 0 (owning nothing) is made to run rank 2's */
  tpl = dt_trace_new(3);
  dt_trace_append(tpl, 2, 0)->kind = DT_OP_COMPUTE;
  ck_assert_int_eq(dt_trace_set_template(tpl, 1, 0, NULL, &e), DT_OK);
  ck_assert_int_eq(dt_trace_set_template(tpl, 0, 2, NULL, &e), DT_OK);
  ck_assert_int_eq(dt_trace_validate(tpl, &e), DT_ERR);
  ck_assert_msg(strstr(fmt_err(&e), "templates do not chain"), "%s", fmt_err(&e));
  dt_trace_free(tpl);
}
END_TEST

/* The writer expands template users: one file or per-rank files read back equal to the owning-rank trace. */
START_TEST(test_template_write_expanded)
{
  dt_trace *own = ring_trace(0, 64, 8), *tpl = ring_trace(0xE, 64, 8);
  dt_trace *back = round_trip_memory(tpl);
  assert_equal_traces(own, back);
  dt_error e;
  ck_assert_msg(dt_trace_validate(back, &e) == DT_OK, "%s", fmt_err(&e));
  ck_assert_int_eq(back->ninstances, 3);
  ck_assert_int_eq(back->npairs, 4);
  dt_trace_free(back);
  char *dir = tmpdir_new();
  char out[600];
  snprintf(out, sizeof out, "%s/per/", dir);
  ck_assert_msg(dt_trace_write_native(tpl, out, &e) == DT_OK, "%s", fmt_err(&e));
  for (int r = 0; r < 4; r++) {
    char f[700];
    snprintf(f, sizeof f, "%strace.%d.dtt", out, r);
    ck_assert_int_eq(access(f, R_OK), 0);
  }
  const char *dirs[] = {out};
  ck_assert_msg(dt_trace_read_native(dirs, 1, &back, &e) == DT_OK, "%s", fmt_err(&e));
  assert_equal_traces(own, back);
  dt_trace_free(back);
  rm_rf(dir);
  free(dir);
  dt_trace_free(own);
  dt_trace_free(tpl);
}
END_TEST

/* dt_trace_rank_order on a rank of many streams (a native trace or a capture of that shape): a binary heap of
 * the streams' next ops, O(ops log streams); the scan of every stream per op was O(ops x streams), about 8e10
 * steps here. The case's own timeout (20 s, x4 under ASan) is the bound. Stream s holds two ops on lines
 * S - s and 2S - s/2 (pairs of streams share the second line: ties go to the lower stream position), so the
 * order is every first op, streams last to first, then the second ops, pairs last to first. */
#define MANY_STREAMS 200000
START_TEST(test_rank_order_many_streams)
{
  dt_trace *t = dt_trace_new(1);
  for (int32_t s = 0; s < MANY_STREAMS; s++) {
    dt_op *a = dt_trace_append(t, 0, s);
    a->kind = DT_OP_MARK;
    a->line = (uint32_t)(MANY_STREAMS - s);
    dt_op *b = dt_trace_append(t, 0, s);
    b->kind = DT_OP_MARK;
    b->line = (uint32_t)(2 * MANY_STREAMS - s / 2);
  }
  dt_dep *order = malloc(sizeof *order * 2 * MANY_STREAMS);
  ck_assert_ptr_nonnull(order);
  dt_trace_rank_order(t, 0, order);
  for (int32_t k = 0; k < MANY_STREAMS; k++) {
    ck_assert_int_eq(order[k].stream, MANY_STREAMS - 1 - k);
    ck_assert_int_eq(order[k].index, 0);
  }
  for (int32_t k = 0; k < MANY_STREAMS; k++) { /* pair p = (2p, 2p + 1) on line 2S - p, pairs from the last */
    int32_t p = MANY_STREAMS / 2 - 1 - k / 2;
    ck_assert_int_eq(order[MANY_STREAMS + k].stream, 2 * p + k % 2);
    ck_assert_int_eq(order[MANY_STREAMS + k].index, 1);
  }
  free(order);
  dt_trace_free(t);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"every_op_and_key", test_every_op_and_key, 1},
      {"quoting_and_escapes", test_quoting_and_escapes, 1},
      {"comments_and_blank_lines", test_comments_and_blank_lines, 1},
      {"rank_lists", test_rank_lists, 1},
      {"idle_ranks", test_idle_ranks, 1},
      {"after_forward_stream", test_after_forward_stream, 1},
      {"per_rank_files", test_per_rank_files, 1},
      {"round_trip", test_round_trip, 1},
      {"parse_errors", test_parse_errors, 1},
      {"id_and_number_ranges", test_id_and_number_ranges, 1},
      {"long_items_in_range", test_long_items_in_range, 1},
      {"validate_bytes_limit", test_validate_bytes_limit, 1},
      {"validate_collective_mismatch", test_validate_collective_mismatch, 1},
      {"validate_p2p_mismatch", test_validate_p2p_mismatch, 1},
      {"match_ids", test_match_ids, 1},
      {"batch_consecutive", test_batch_consecutive, 1},
      {"two_streams_warning", test_two_streams_warning, 1},
      {"roundtrip_equals", test_roundtrip_equals, 1},
      {"load_sniffing", test_load_sniffing, 1},
      {"template_api", test_template_api, 1},
      {"template_validate", test_template_validate, 1},
      {"template_write_expanded", test_template_write_expanded, 1},
      {"splits_length", test_splits_length, 1},
  };
  Suite *su = dt_test_suite("trace", cases, sizeof cases / sizeof cases[0], 0);
  TCase *tc = tcase_create("rank_order_many_streams");
  tcase_set_timeout(tc, 20); /* the bound of the test (CK_TIMEOUT_MULTIPLIER scales it under ASan) */
  tcase_add_test(tc, test_rank_order_many_streams);
  suite_add_tcase(su, tc);
  return dt_test_run(su);
}
