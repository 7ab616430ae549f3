/* Unit tests of the Kineto importer (traces/dt_kineto.c): the shipped real capture against hand counts from
 * shared/data/README.md and traces/samples/README.md, and small hand-written captures for each rule. */
#include "dt_test.h"
#include "traces/dt_trace_io.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE "traces/samples/allreduce_bcast_2ranks_rank0.json.gz"

static void opts_default(dt_import_opts *o)
{
  memset(o, 0, sizeof *o);
  o->dep_window_s = 5e-6;
  o->keep_gaps = 1;
  o->expand = 0;
  o->rank = -1;
}

static const char *sample_path(void)
{
  static char buf[1024];
  const char *src = getenv("DTSIM_SOURCE_DIR");
  snprintf(buf, sizeof buf, "%s/%s", src ? src : ".", SAMPLE);
  return buf;
}

static dt_trace *import_ok(const char *path, const dt_import_opts *o)
{
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  char msg[2048];
  int rc = dt_kineto_import(path, o, &t, &err);
  ck_assert_msg(rc == DT_OK, "import of %s failed: %s", path, dt_error_format(&err, msg, sizeof msg));
  ck_assert_ptr_nonnull(t);
  return t;
}

/* Writes text into a new file `capture<suffix>` inside a new temporary directory; returns its path (static
 * buffer, one of four slots). remove_tmp deletes both. */
static const char *write_tmp(const char *text, size_t len, const char *suffix)
{
  static char paths[4][256];
  static int slot;
  char *p = paths[slot++ % 4];
  char dir[] = "/tmp/check_kineto_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(p, 256, "%s/capture%s", dir, suffix);
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
  return p;
}

static void remove_tmp(const char *path)
{
  char dir[256];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  unlink(path);
  if (slash) {
    *slash = '\0';
    rmdir(dir);
  }
}

static int has_note(const dt_trace *t, const char *needle)
{
  for (size_t i = 0; i < t->nnotes; i++)
    if (strstr(t->notes[i], needle))
      return 1;
  return 0;
}

static const char *meta(const dt_trace *t, const char *key)
{
  for (size_t i = 0; i < t->nmeta; i++)
    if (strcmp(t->meta_keys[i], key) == 0)
      return t->meta_values[i];
  return NULL;
}

static size_t count_kind(const dt_trace *t, int32_t rank, dt_op_kind kind, uint64_t *bytes)
{
  size_t n = 0;
  uint64_t b = 0;
  const dt_rank *rk = dt_trace_rank_body(t, rank); /* expanded ranks run the captured rank's ops */
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++)
      if (rk->streams[s].ops[i].kind == kind) {
        n++;
        b += rk->streams[s].ops[i].bytes;
      }
  if (bytes)
    *bytes = b;
  return n;
}

static const dt_op *find_op(const dt_trace *t, int32_t rank, dt_op_kind kind, const char *name)
{
  const dt_rank *rk = dt_trace_rank_body(t, rank);
  for (size_t s = 0; s < rk->nstreams; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      const dt_op *op = &rk->streams[s].ops[i];
      if (op->kind == kind && (!name || (op->name && strcmp(op->name, name) == 0)))
        return op;
    }
  return NULL;
}

/* ---- the shipped real capture ---- */

START_TEST(sample_counts_per_rank)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_path(), &o);
  ck_assert_int_eq(t->nranks, 2); /* expanded to distributedInfo.world_size */
  for (int32_t r = 0; r < 2; r++) {
    uint64_t b;
    /* hand numbers (shared/data/README.md): 15 fp32 all-reduce of 306,684,384 bytes in all */
    ck_assert_uint_eq(count_kind(t, r, DT_OP_ALLREDUCE, &b), 15);
    ck_assert_uint_eq(b, 306684384u);
    /* 6 broadcasts of 638,712 bytes in all: per step 53,120 Float (4 B) + 53 Long (8 B) elements */
    ck_assert_uint_eq(count_kind(t, r, DT_OP_BROADCAST, &b), 6);
    ck_assert_uint_eq(b, 3u * (53120u * 4u + 53u * 8u));
    ck_assert_uint_eq(b, 638712u);
    ck_assert_uint_eq(count_kind(t, r, DT_OP_OTHER, NULL), 0);
    /* 2,700 kernels - 21 NCCL + 960 memcpy + 114 memset (jq count) */
    ck_assert_uint_eq(count_kind(t, r, DT_OP_COMPUTE, NULL), 2700 - 21 + 960 + 114);
    const dt_op *ar = find_op(t, r, DT_OP_ALLREDUCE, NULL);
    ck_assert_ptr_nonnull(ar);
    ck_assert_int_ge(dt_trace_op_group(t, r, ar), 0);
    ck_assert_uint_eq(t->groups[dt_trace_op_group(t, r, ar)].nranks, 2);
    ck_assert_str_eq(ar->dtype, "fp32");
  }
  ck_assert_str_eq(meta(t, "capture_rank"), "0");
  ck_assert_str_eq(meta(t, "world_size"), "2");
  ck_assert_ptr_nonnull(strstr(meta(t, "source"), "allreduce_bcast_2ranks_rank0.json.gz"));
  ck_assert(has_note(t, "root assumed to be group rank 0"));
  dt_trace_free(t);
}
END_TEST

START_TEST(sample_ranks_identical)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_path(), &o);
  const dt_rank *a = dt_trace_rank_body(t, 0), *b = dt_trace_rank_body(t, 1);
  ck_assert_uint_eq(a->nstreams, 2); /* CUDA streams 7 (compute) and 40 (NCCL) */
  ck_assert_uint_eq(a->nstreams, b->nstreams);
  for (size_t s = 0; s < a->nstreams; s++) {
    ck_assert_int_eq(a->streams[s].id, b->streams[s].id);
    ck_assert_uint_eq(a->streams[s].nops, b->streams[s].nops);
    for (size_t i = 0; i < a->streams[s].nops; i++) {
      const dt_op *x = &a->streams[s].ops[i], *y = &b->streams[s].ops[i];
      ck_assert_int_eq(x->kind, y->kind);
      ck_assert_uint_eq(x->bytes, y->bytes);
      ck_assert(x->dur == y->dur);
      ck_assert_int_eq(dt_trace_op_group(t, 0, x), dt_trace_op_group(t, 1, y)); /* one group {0,1}: both use it */
      ck_assert_uint_eq(x->ndeps, y->ndeps);
      for (uint32_t d = 0; d < x->ndeps; d++) {
        ck_assert_int_eq(x->deps[d].stream, y->deps[d].stream);
        ck_assert_int_eq(x->deps[d].index, y->deps[d].index);
      }
      ck_assert_str_eq(x->name ? x->name : "", y->name ? y->name : "");
    }
  }
  ck_assert_int_eq(a->streams[0].id, 7);
  ck_assert_int_eq(a->streams[1].id, 40);
  dt_trace_free(t);
}
END_TEST

START_TEST(sample_marks_and_step_time)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_path(), &o);
  for (int32_t r = 0; r < 2; r++) {
    ck_assert_uint_eq(count_kind(t, r, DT_OP_MARK, NULL), 3);
    ck_assert_ptr_nonnull(find_op(t, r, DT_OP_MARK, "ProfilerStep#4"));
    ck_assert_ptr_nonnull(find_op(t, r, DT_OP_MARK, "ProfilerStep#5"));
    ck_assert_ptr_nonnull(find_op(t, r, DT_OP_MARK, "ProfilerStep#6"));
  }
  /* mean of the three ProfilerStep durations in the file: (222442.191 + 219726.905 + 224936.243) / 3 us */
  ck_assert(t->captured_step_s > 0);
  ck_assert_double_eq_tol(t->captured_step_s, (222442.191 + 219726.905 + 224936.243) / 3 * 1e-6, 1e-9);
  ck_assert_ptr_nonnull(meta(t, "captured_step_time"));
  /* the last mark completes after the last all-reduce: it waits for the NCCL stream's last op of the step */
  const dt_stream *s7 = &t->ranks[0].streams[0];
  const dt_op *last_mark = NULL;
  for (size_t i = 0; i < s7->nops; i++)
    if (s7->ops[i].kind == DT_OP_MARK)
      last_mark = &s7->ops[i];
  ck_assert_ptr_nonnull(last_mark);
  ck_assert_str_eq(last_mark->name, "ProfilerStep#6");
  ck_assert_uint_eq(last_mark->ndeps, 1);
  ck_assert_int_eq(last_mark->deps[0].stream, 1);
  const dt_stream *s40 = &t->ranks[0].streams[1];
  int32_t last_ar = -1;
  for (size_t i = 0; i < s40->nops; i++)
    if (s40->ops[i].kind == DT_OP_ALLREDUCE)
      last_ar = (int32_t)i;
  ck_assert_int_eq(last_mark->deps[0].index, last_ar);
  dt_trace_free(t);
}
END_TEST

START_TEST(sample_nccl_durations_unused)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_path(), &o);
  size_t ncoll = 0;
  for (int32_t r = 0; r < t->nranks; r++)
    for (size_t s = 0; s < dt_trace_rank_body(t, r)->nstreams; s++)
      for (size_t i = 0; i < dt_trace_rank_body(t, r)->streams[s].nops; i++) {
        const dt_op *op = &dt_trace_rank_body(t, r)->streams[s].ops[i];
        if (dt_op_is_collective(op->kind)) {
          ck_assert(op->dur == 0 && op->flop == 0); /* cost comes from bytes, never the captured kernel time */
          ck_assert_uint_gt(op->bytes, 0);
          ncoll++;
        }
        if (op->kind == DT_OP_COMPUTE)
          ck_assert(op->dur > 0);
      }
  ck_assert_uint_eq(ncoll, 2 * 21);
  dt_trace_free(t);
}
END_TEST

START_TEST(sample_gaps_keep_vs_drop)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *kept = import_ok(sample_path(), &o);
  o.keep_gaps = 0;
  dt_trace *dropped = import_ok(sample_path(), &o);
  ck_assert_uint_gt(count_kind(kept, 0, DT_OP_DELAY, NULL), 1000);
  ck_assert_uint_eq(count_kind(dropped, 0, DT_OP_DELAY, NULL), 0);
  ck_assert_uint_eq(count_kind(kept, 0, DT_OP_COMPUTE, NULL), count_kind(dropped, 0, DT_OP_COMPUTE, NULL));
  ck_assert_uint_eq(count_kind(kept, 0, DT_OP_ALLREDUCE, NULL), count_kind(dropped, 0, DT_OP_ALLREDUCE, NULL));
  ck_assert_uint_eq(dt_trace_op_count(kept) - dt_trace_op_count(dropped),
                    2 * count_kind(kept, 0, DT_OP_DELAY, NULL));
  for (size_t i = 0; i < kept->ranks[0].streams[0].nops; i++)
    if (kept->ranks[0].streams[0].ops[i].kind == DT_OP_DELAY)
      ck_assert(kept->ranks[0].streams[0].ops[i].dur > 0);
  dt_trace_free(kept);
  dt_trace_free(dropped);
}
END_TEST

START_TEST(sample_validates)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_path(), &o);
  dt_error err;
  dt_error_clear(&err);
  char msg[2048];
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "%s", dt_error_format(&err, msg, sizeof msg));
  ck_assert_int_eq(t->ninstances, 21); /* 15 all-reduce + 6 broadcast, one instance each across both ranks */
  dt_trace_free(t);
}
END_TEST

/* ---- hand-written captures ---- */

#define EV(cat, name, ts, dur, stream) \
  "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream ",\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{\"stream\":" #stream ",\"device\":0}}"

/* Times in us. s7: a [0,10], d [15,30], f [42,43]; s20: b [12,17], c [18,19], e [40,41].
 * b starts 2 us after a ended; f 1 us after e ended; e 10 us after d ended; c 8 us after a ended. */
static const char dep_json[] =
    "{\"schemaVersion\":\"1\",\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
    EV("kernel", "a", 0, 10, 7) "," EV("kernel", "d", 15.0, 15, 7) "," EV("kernel", "f", 42, 1.000, 7) ","
    EV("kernel", "b", 12, 5, 20) "," EV("kernel", "c", 18.0, 1, 20) "," EV("kernel", "e", 40, 1, 20) "]}";

static void assert_deps(const dt_op *op, uint32_t n, int32_t stream, int32_t index)
{
  ck_assert_uint_eq(op->ndeps, n);
  if (n) {
    ck_assert_int_eq(op->deps[0].stream, stream);
    ck_assert_int_eq(op->deps[0].index, index);
  }
}

START_TEST(dep_window_edges)
{
  const char *path = write_tmp(dep_json, strlen(dep_json), ".json");
  dt_import_opts o;
  opts_default(&o);
  o.keep_gaps = 0;
  dt_trace *t = import_ok(path, &o);
  ck_assert_int_eq(t->nranks, 1);
  const dt_rank *rk = &t->ranks[0];
  ck_assert_uint_eq(rk->nstreams, 2);
  ck_assert_int_eq(rk->streams[0].id, 7);
  ck_assert_int_eq(rk->streams[1].id, 20);
  const dt_op *s7 = rk->streams[0].ops, *s20 = rk->streams[1].ops;
  ck_assert_str_eq(s7[0].name, "a");
  ck_assert_str_eq(s20[2].name, "e");
  ck_assert_double_eq_tol(s7[1].dur, 15e-6, 1e-15);
  assert_deps(&s20[0], 1, 0, 0); /* b after a: 2 us <= 5 us */
  assert_deps(&s20[1], 0, 0, 0); /* c: a ended 8 us before */
  assert_deps(&s7[1], 0, 0, 0);  /* d: nothing on s20 ended before it */
  assert_deps(&s20[2], 0, 0, 0); /* e: d ended 10 us before */
  assert_deps(&s7[2], 1, 1, 2);  /* f after e: 1 us */
  dt_trace_free(t);

  /* a 20 us window adds e after d; c after a stays out: implied by b (same stream, already after a) */
  o.dep_window_s = 20e-6;
  t = import_ok(path, &o);
  s7 = t->ranks[0].streams[0].ops;
  s20 = t->ranks[0].streams[1].ops;
  assert_deps(&s20[0], 1, 0, 0);
  assert_deps(&s20[1], 0, 0, 0);
  assert_deps(&s20[2], 1, 0, 1);
  assert_deps(&s7[2], 1, 1, 2);
  dt_trace_free(t);

  /* gaps kept: b's 12 us gap is 10 us of waiting for a plus 2 us of launch time: a 2 us delay carrying the
   * wait; the first op of a stream counts its gap from the capture's first GPU op (t = 0) */
  o.dep_window_s = 5e-6;
  o.keep_gaps = 1;
  t = import_ok(path, &o);
  s7 = t->ranks[0].streams[0].ops;
  s20 = t->ranks[0].streams[1].ops;
  ck_assert_int_eq(s20[0].kind, DT_OP_DELAY);
  ck_assert_double_eq_tol(s20[0].dur, 2e-6, 1e-15);
  assert_deps(&s20[0], 1, 0, 0);
  ck_assert_int_eq(s20[1].kind, DT_OP_COMPUTE);
  assert_deps(&s20[1], 0, 0, 0);
  ck_assert_int_eq(s20[2].kind, DT_OP_DELAY); /* c: 1 us after b */
  ck_assert_double_eq_tol(s20[2].dur, 1e-6, 1e-15);
  ck_assert_int_eq(s7[0].kind, DT_OP_COMPUTE); /* a starts at t = 0: no delay */
  ck_assert_int_eq(s7[1].kind, DT_OP_DELAY);
  ck_assert_double_eq_tol(s7[1].dur, 5e-6, 1e-15);
  remove_tmp(path);
  dt_trace_free(t);
}
END_TEST

#define NCCL(name, ts, dur, args)                                                                              \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_" name "(ncclDevComm*, unsigned long, ncclWork*)\"," \
  "\"pid\":0,\"tid\":20,\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"stream\":20,\"correlation\":" #ts args "}}"
#define MD(coll, nelems, dtype, ranks, size)                                                                   \
  ",\"Collective name\":\"" coll "\",\"In msg nelems\":" #nelems ",\"Out msg nelems\":" #nelems                \
  ",\"Group size\":" #size ",\"dtype\":\"" dtype "\",\"Process Group Name\":\"1\","                           \
  "\"Process Group Description\":\"tp\",\"Process Group Ranks\":\"" ranks "\""

START_TEST(unknown_collective_and_no_metadata)
{
  static const char json[] =
      "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":1,\"world_size\":2},\"traceEvents\":["
      NCCL("Gather_RING_LL", 100, 50, MD("gather", 1000, "Half", "[0, 1]", 2)) ","
      NCCL("AllReduce_RING_LL_Sum_float", 200, 50, "") ","
      NCCL("AllReduce_RING_LL_Sum_float", 300, 50, MD("allreduce", 10, "Float", "[0, 1]", 2)) "]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  ck_assert_int_eq(t->nranks, 2);
  const dt_op *ops = dt_trace_rank_body(t, 1)->streams[0].ops;
  size_t n = dt_trace_rank_body(t, 1)->streams[0].nops;
  const dt_op *coll[3];
  size_t nc = 0;
  for (size_t i = 0; i < n; i++)
    if (ops[i].kind != DT_OP_DELAY)
      coll[nc++] = &ops[i];
  ck_assert_uint_eq(nc, 3);
  /* unknown name: kept as other, sized from its metadata (1000 fp16 elements), with a warning */
  ck_assert_int_eq(coll[0]->kind, DT_OP_OTHER);
  ck_assert_uint_eq(coll[0]->bytes, 2000);
  ck_assert_str_eq(coll[0]->name, "gather");
  ck_assert(has_note(t, "unknown collective 'gather'"));
  /* no metadata (capture started mid-run): other of 0 bytes on every rank, with a warning */
  ck_assert_int_eq(coll[1]->kind, DT_OP_OTHER);
  ck_assert_uint_eq(coll[1]->bytes, 0);
  ck_assert_uint_eq(t->groups[dt_trace_op_group(t, 1, coll[1])].nranks, 2);
  ck_assert(has_note(t, "have no size metadata and no launch in the capture"));
  ck_assert_int_eq(coll[2]->kind, DT_OP_ALLREDUCE);
  ck_assert_uint_eq(coll[2]->bytes, 40);
  dt_trace_free(t);
}
END_TEST

START_TEST(expand_group_to_world4)
{
  /* rank 0 of 4 in a 2-rank group {0,1}; sends to rank 1, receives from rank 3 */
  static const char json[] =
      "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0,\"world_size\":4},\"traceEvents\":["
      NCCL("AllReduce_RING_LL_Sum_float", 100, 50, MD("allreduce", 256, "BFloat16", "[0, 1]", 2)) ","
      NCCL("SendRecv", 200, 50, ",\"Collective name\":\"send\",\"In msg nelems\":8,\"dtype\":\"Float\","
           "\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1, 2, 3]\",\"Group size\":4,"
           "\"Rank\":1,\"Src Rank\":0,\"Dst Rank\":1") ","
      NCCL("SendRecv", 300, 50, ",\"Collective name\":\"recv\",\"In msg nelems\":8,\"dtype\":\"Float\","
           "\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1, 2, 3]\",\"Group size\":4,"
           "\"Rank\":3") "]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  o.keep_gaps = 0;
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  ck_assert_int_eq(t->nranks, 4);
  /* groups tile the world as {0,1} does: {0,1} and {2,3}, uniquely named */
  const int32_t expect_group[4][2] = {{0, 1}, {0, 1}, {2, 3}, {2, 3}};
  const int32_t expect_send[4] = {1, 2, 3, 0}, expect_recv[4] = {3, 0, 1, 2};
  for (int32_t r = 0; r < 4; r++) {
    const dt_op *ops = dt_trace_rank_body(t, r)->streams[0].ops;
    ck_assert_uint_eq(dt_trace_rank_body(t, r)->streams[0].nops, 3);
    ck_assert_int_eq(ops[0].kind, DT_OP_ALLREDUCE);
    ck_assert_uint_eq(ops[0].bytes, 512);
    const dt_group *g = &t->groups[dt_trace_op_group(t, r, &ops[0])];
    ck_assert_uint_eq(g->nranks, 2);
    ck_assert_int_eq(g->ranks[0], expect_group[r][0]);
    ck_assert_int_eq(g->ranks[1], expect_group[r][1]);
    ck_assert_int_eq(ops[1].kind, DT_OP_SEND);
    ck_assert_int_eq(dt_trace_op_peer(t, r, &ops[1]), expect_send[r]); /* peer keeps its offset +1 mod 4 */
    ck_assert_uint_eq(ops[1].bytes, 32);
    ck_assert_int_eq(ops[2].kind, DT_OP_RECV);
    ck_assert_int_eq(dt_trace_op_peer(t, r, &ops[2]), expect_recv[r]); /* Process Group Ranks[Rank] = 3: offset -1 */
  }
  const dt_op *ar0 = &dt_trace_rank_body(t, 0)->streams[0].ops[0], *ar2 = &dt_trace_rank_body(t, 2)->streams[0].ops[0];
  ck_assert_int_ne(dt_trace_op_group(t, 0, ar0), dt_trace_op_group(t, 2, ar2));
  ck_assert_str_ne(t->groups[dt_trace_op_group(t, 0, ar0)].name, t->groups[dt_trace_op_group(t, 2, ar2)].name);
  /* one op array: ranks other than the captured one run it as template users */
  ck_assert_int_eq(t->ranks[0].template_rank, -1);
  for (int32_t r = 1; r < 4; r++)
    ck_assert_int_eq(t->ranks[r].template_rank, 0);
  ck_assert(has_note(t, "tile"));
  ck_assert(has_note(t, "offset"));
  dt_error err;
  dt_error_clear(&err);
  char msg[2048];
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "%s", dt_error_format(&err, msg, sizeof msg));
  dt_trace_free(t);

  /* the real capture expanded to 4 ranks: its default group spans the whole captured world (2 ranks), so it
   * becomes the whole expanded world (one 4-rank group), not two copies of a 2-rank one */
  o.expand = 4;
  t = import_ok(sample_path(), &o);
  ck_assert_int_eq(t->nranks, 4);
  ck_assert_uint_eq(t->ngroups, 1);
  ck_assert(has_note(t, "spans the captured world"));
  uint64_t b;
  ck_assert_uint_eq(count_kind(t, 3, DT_OP_ALLREDUCE, &b), 15);
  ck_assert_uint_eq(b, 306684384u);
  const dt_group *g3 = &t->groups[dt_trace_op_group(t, 3, find_op(t, 3, DT_OP_ALLREDUCE, NULL))];
  ck_assert_uint_eq(g3->nranks, 4);
  for (int32_t i = 0; i < 4; i++)
    ck_assert_int_eq(g3->ranks[i], i);
  ck_assert_msg(dt_trace_validate(t, &err) == DT_OK, "%s", dt_error_format(&err, msg, sizeof msg));
  dt_trace_free(t);
}
END_TEST

START_TEST(truncated_pg_ranks_fall_back)
{
  /* 32-rank group whose rank list PyTorch cut after 30 entries; pg_config lists it in full (stride 2) */
  static const char json[] =
      "{\"distributedInfo\":{\"rank\":0,\"world_size\":64,\"pg_config\":[{\"pg_name\":\"1\",\"pg_desc\":\"dp\","
      "\"pg_size\":32,\"ranks\":[0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,"
      "56,58,60,62]}]},\"traceEvents\":["
      NCCL("AllReduce_RING_LL_Sum_float", 100, 50, MD("allreduce", 4, "Float",
           "[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, "
           "52, 54, 56, 58, ...]", 32)) "]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  ck_assert_int_eq(t->nranks, 64);
  const dt_group *g = &t->groups[dt_trace_op_group(t, 0, find_op(t, 0, DT_OP_ALLREDUCE, NULL))];
  ck_assert_uint_eq(g->nranks, 32);
  ck_assert_int_eq(g->ranks[31], 62);
  ck_assert(has_note(t, "truncated"));
  /* rank 1 uses the odd tile */
  const dt_group *g1 = &t->groups[dt_trace_op_group(t, 1, find_op(t, 1, DT_OP_ALLREDUCE, NULL))];
  ck_assert_int_eq(g1->ranks[0], 1);
  ck_assert_int_eq(g1->ranks[31], 63);
  dt_trace_free(t);
}
END_TEST

START_TEST(rank_from_file_name)
{
  static const char json[] = "{\"traceEvents\":[" EV("kernel", "k", 5, 1, 7) "]}";
  const char *path = write_tmp(json, strlen(json), "_rank-3.json");
  dt_import_opts o;
  opts_default(&o);
  o.expand = 4;
  dt_trace *t = import_ok(path, &o);
  ck_assert_str_eq(meta(t, "capture_rank"), "3");
  ck_assert_int_eq(t->nranks, 4);
  dt_trace_free(t);
  o.rank = 2; /* the option wins over the file name */
  t = import_ok(path, &o);
  ck_assert_str_eq(meta(t, "capture_rank"), "2");
  dt_trace_free(t);
  remove_tmp(path);
}
END_TEST

/* ---- errors ---- */


static const char *sample_named(const char *file)
{
  static char buf[1024];
  const char *src = getenv("DTSIM_SOURCE_DIR");
  snprintf(buf, sizeof buf, "%s/traces/samples/%s", src ? src : ".", file);
  return buf;
}

/* Vintage 2: sizes from the nccl:* annotations' `Input Dims` x `Input type` (hand sums in
 * traces/samples/README.md), the op from the annotation, never the SendRecv kernel name. */
START_TEST(vintage2_fsdp_sample)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_named("fsdp_like_16ranks_rank0.json.gz"), &o);
  ck_assert_int_eq(t->nranks, 16);
  ck_assert_str_eq(meta(t, "kineto_vintage"), "2");
  uint64_t b;
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_ALLTOALL, &b), 45);
  ck_assert_uint_eq(b, 157873564u);
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_REDUCESCATTER, &b), 10);
  ck_assert_uint_eq(b, 587202560u);
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_ALLGATHER, &b), 10);
  ck_assert_uint_eq(b, 73400320u);
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_ALLREDUCE, &b), 10);
  ck_assert_uint_eq(b, 8965794640u);
  /* 5 kernels without a launch in the file: kept, unsized, with a warning; 10 empty annotations said */
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_OTHER, &b), 5);
  ck_assert_uint_eq(b, 0);
  ck_assert(has_note(t, "5 NCCL kernel(s) have no size metadata and no launch"));
  ck_assert(has_note(t, "10 nccl:* annotation(s) launched no NCCL kernel"));
  ck_assert(has_note(t, "75 NCCL kernel(s) sized from the 'Input Dims'"));
  const dt_op *ar = find_op(t, 0, DT_OP_ALLREDUCE, NULL);
  ck_assert_str_eq(ar->dtype, "fp32");
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  dt_trace_free(t);
}
END_TEST

START_TEST(vintage2_alltoall_sample)
{
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(sample_named("alltoall_allreduce_8ranks_rank3.json.gz"), &o);
  ck_assert_int_eq(t->nranks, 8);
  ck_assert_str_eq(meta(t, "capture_rank"), "3");
  uint64_t b;
  ck_assert_uint_eq(count_kind(t, 3, DT_OP_ALLTOALL, &b), 42);
  ck_assert_uint_eq(b, 3865189408u);
  ck_assert_uint_eq(count_kind(t, 3, DT_OP_ALLREDUCE, &b), 18);
  ck_assert_uint_eq(b, 1200223224u);
  ck_assert_uint_eq(count_kind(t, 3, DT_OP_OTHER, NULL), 0);
  ck_assert(has_note(t, "name no process group; assumed to span all ranks"));
  dt_trace_free(t);
}
END_TEST

/* No size anywhere (vintage 3): estimated from the captured duration, said per op. */
START_TEST(vintage3_estimates_sizes)
{
  static const char json[] =
      "{\"distributedInfo\":{\"rank\":0,\"world_size\":4},\"traceEvents\":["
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:all_reduce\",\"pid\":1,\"tid\":1,\"ts\":5,"
      "\"dur\":10},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":6,"
      "\"dur\":2,\"args\":{\"correlation\":9}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWork*)\","
      "\"pid\":0,\"tid\":20,\"ts\":10,\"dur\":150,\"args\":{\"stream\":20,\"correlation\":9}}]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  ck_assert_str_eq(meta(t, "kineto_vintage"), "3");
  const dt_op *ar = find_op(t, 0, DT_OP_ALLREDUCE, NULL);
  ck_assert_ptr_nonnull(ar);
  /* 150 us x 100 GB/s / (2 x 3/4) = 10,000,000 bytes, a multiple of 4 */
  ck_assert_uint_eq(ar->bytes, 10000000u);
  ck_assert(has_note(t, "records no size; bytes=10000000"));
  dt_trace_free(t);
}
END_TEST

/* Host launch timeline on a hand-made capture (times in us):
 *   thread 1: launch k1 [10,15] -> k1 on s7 [20,120]; launch the all-reduce [30,35] -> s40 [40,90];
 *             cudaStreamSynchronize [40,100] (the all-reduce ended inside it); launch k2 [110,115] -> s7 [130,140].
 * Expected host stream s1000 from t0 = 10: delay 5 (ends at k1's launch), delay 20 (the all-reduce's), delay 5
 * (up to the sync), delay 10 waiting for the all-reduce (100 - its end 90), delay 15 (k2's launch); each GPU op
 * waits for its launch and keeps no gap. */
#define RT(name, ts, dur, corr)                                                                                \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts          \
  ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}}"
#define KER(name, ts, dur, stream, corr)                                                                       \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream ",\"ts\":" #ts        \
  ",\"dur\":" #dur ",\"args\":{\"stream\":" #stream ",\"correlation\":" #corr "}}"

START_TEST(host_timeline_launches_and_sync)
{
  static const char json[] =
      "{\"distributedInfo\":{\"rank\":0,\"world_size\":2},\"traceEvents\":["
      RT("cudaLaunchKernel", 10, 5, 1) "," KER("k1", 20, 100, 7, 1) ","
      RT("cudaLaunchKernel", 30, 5, 2) ","
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWork*)\","
      "\"pid\":0,\"tid\":40,\"ts\":40,\"dur\":50,\"args\":{\"stream\":40,\"correlation\":2"
      MD("allreduce", 1024, "Float", "[0, 1]", 2) "}},"
      RT("cudaStreamSynchronize", 40, 60, 3) "," RT("cudaEventQuery", 102, 1, 4) ","
      RT("cudaLaunchKernel", 110, 5, 5) "," KER("k2", 130, 10, 7, 5) "]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  o.host_timeline = 1;
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  const dt_rank *rk = dt_trace_rank_body(t, 0);
  ck_assert_uint_eq(rk->nstreams, 3);
  const dt_stream *s7 = &rk->streams[0], *s40 = &rk->streams[1], *h = &rk->streams[2];
  ck_assert_int_eq(s7->id, 7);
  ck_assert_int_eq(s40->id, 40);
  ck_assert_int_eq(h->id, 1000);
  ck_assert_uint_eq(h->nops, 5);
  const double want[5] = {5e-6, 20e-6, 5e-6, 10e-6, 15e-6};
  for (size_t i = 0; i < 5; i++) {
    ck_assert_int_eq(h->ops[i].kind, DT_OP_DELAY);
    ck_assert_msg(fabs(h->ops[i].dur - want[i]) < 1e-12, "host op %zu: %g s, want %g s", i, h->ops[i].dur, want[i]);
  }
  assert_deps(&h->ops[3], 1, 1, 0); /* the sync waits for the all-reduce (stream position 1, op 0) */
  ck_assert_uint_eq(s7->nops, 2);   /* no gap delays on GPU streams */
  assert_deps(&s7->ops[0], 1, 2, 0);
  assert_deps(&s7->ops[1], 1, 2, 4);
  ck_assert_uint_eq(s40->nops, 1);
  ck_assert_int_eq(s40->ops[0].kind, DT_OP_ALLREDUCE);
  assert_deps(&s40->ops[0], 1, 2, 1);
  ck_assert(has_note(t, "1 blocking calls wait for the GPU ops they covered"));
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  dt_trace_free(t);
}
END_TEST

/* All-to-allv from `In split size` (rows per member): 400 fp32 elements in 1 + 3 rows = 100 per row. */
START_TEST(alltoallv_from_split_sizes)
{
  static const char json[] =
      "{\"distributedInfo\":{\"rank\":0,\"world_size\":2},\"traceEvents\":["
      NCCL("SendRecv", 100, 50, ",\"Collective name\":\"all_to_all\",\"In msg nelems\":400,\"Out msg nelems\":400,"
           "\"dtype\":\"Float\",\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1]\",\"Group size\":2,"
           "\"In split size\":\"[1, 3]\",\"Out split size\":\"[2, 2]\"") "]}";
  const char *path = write_tmp(json, strlen(json), ".json");
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(path, &o);
  remove_tmp(path);
  const dt_op *a = find_op(t, 0, DT_OP_ALLTOALL, NULL);
  ck_assert_uint_eq(a->bytes, 1600);
  ck_assert_uint_eq(a->nsplits, 2);
  ck_assert_uint_eq(a->splits[0], 400);
  ck_assert_uint_eq(a->splits[1], 1200);
  ck_assert(has_note(t, "1 all-to-all(s) are all-to-allv"));
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  dt_trace_free(t);

  /* a split list whose length is not the group size: an error naming both numbers */
  static const char bad[] =
      "{\"distributedInfo\":{\"rank\":0,\"world_size\":2},\"traceEvents\":["
      NCCL("SendRecv", 100, 50, ",\"Collective name\":\"all_to_all\",\"In msg nelems\":400,\"dtype\":\"Float\","
           "\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1]\",\"Group size\":2,"
           "\"In split size\":\"[1, 1, 2]\"") "]}";
  path = write_tmp(bad, strlen(bad), ".json");
  t = NULL;
  ck_assert_int_eq(dt_kineto_import(path, &o, &t, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "'In split size' lists 3 entries but its group has 2 ranks"), "%s", err.msg);
  remove_tmp(path);
}
END_TEST

/* ---- several ranks' captures merged ---- */

#define SEQK(coll, ts, nelems, seq)                                                                            \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_X(ncclWork*)\",\"pid\":0,\"tid\":20,\"ts\":" #ts         \
  ",\"dur\":5,\"args\":{\"stream\":20,\"Collective name\":\"" coll "\",\"In msg nelems\":" #nelems               \
  ",\"Out msg nelems\":" #nelems ",\"Group size\":2,\"dtype\":\"Float\",\"Process Group Name\":\"0\","            \
  "\"Process Group Ranks\":\"[0, 1]\",\"Seq\":" #seq "}}"

static const char *write_named(const char *text, const char *name)
{
  static char paths[4][256];
  static int slot;
  char *p = paths[slot++ % 4];
  char dir[] = "/tmp/check_kineto_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(p, 256, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
  ck_assert_int_eq(fclose(f), 0);
  return p;
}

/* Rank 0 captured Seq 5-7, rank 1 Seq 6-8: 5 and 8 are outside one member's window and dropped; the all-to-all
 * (Seq 7) has 400 bytes on rank 0 and 800 on rank 1: kept as all-to-allv. */
START_TEST(merge_by_seq_and_alltoallv)
{
  static const char r0[] = "{\"distributedInfo\":{\"rank\":0,\"world_size\":2},\"traceEvents\":["
      SEQK("allreduce", 10, 8, 5) "," SEQK("allreduce", 20, 8, 6) "," SEQK("all_to_all", 30, 100, 7) "]}";
  static const char r1[] = "{\"distributedInfo\":{\"rank\":1,\"world_size\":2},\"traceEvents\":["
      SEQK("allreduce", 12, 8, 6) "," SEQK("all_to_all", 31, 200, 7) "," SEQK("allreduce", 40, 8, 8) "]}";
  const char *paths[2] = {write_named(r0, "a.json"), write_named(r1, "b.json")};
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  char msg[1024];
  ck_assert_msg(dt_kineto_import_many(paths, 2, &o, &t, &err) == DT_OK, "%s", dt_error_format(&err, msg, sizeof msg));
  ck_assert_int_eq(t->nranks, 2);
  ck_assert_int_eq(t->ranks[1].template_rank, -1); /* each rank runs its own capture */
  uint64_t b;
  ck_assert_uint_eq(count_kind(t, 0, DT_OP_ALLREDUCE, &b), 1);
  ck_assert_uint_eq(count_kind(t, 1, DT_OP_ALLREDUCE, &b), 1);
  const dt_op *a0 = find_op(t, 0, DT_OP_ALLTOALL, NULL), *a1 = find_op(t, 1, DT_OP_ALLTOALL, NULL);
  ck_assert_uint_eq(a0->nsplits, 2);
  ck_assert_uint_eq(a0->splits[0] + a0->splits[1], 400);
  ck_assert_uint_eq(a1->splits[0], 400);
  ck_assert_uint_eq(a1->splits[1], 400);
  ck_assert(has_note(t, "2 collective(s) whose Seq number not every member"));
  ck_assert(has_note(t, "1 all-to-all instance(s) have different sizes on different ranks"));
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  ck_assert_int_eq(t->ninstances, 2);
  dt_trace_free(t);

  /* one capture per rank: a repeated rank, and a rank without a capture, are errors naming them */
  const char *twice[2] = {paths[0], paths[0]};
  ck_assert_int_eq(dt_kineto_import_many(twice, 2, &o, &t, &err), DT_ERR);
  ck_assert_ptr_nonnull(strstr(err.msg, "is a capture of rank 0, as is"));
  static const char r2[] = "{\"distributedInfo\":{\"rank\":0,\"world_size\":3},\"traceEvents\":["
      EV("kernel", "k", 5, 1, 7) "]}";
  static const char r3[] = "{\"distributedInfo\":{\"rank\":2,\"world_size\":3},\"traceEvents\":["
      EV("kernel", "k", 5, 1, 7) "]}";
  const char *gap[2] = {write_named(r2, "c.json"), write_named(r3, "d.json")};
  ck_assert_int_eq(dt_kineto_import_many(gap, 2, &o, &t, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "1 of the 3 ranks have no capture (1)"), "%s", err.msg);
  remove_tmp(paths[0]);
  remove_tmp(paths[1]);
  remove_tmp(gap[0]);
  remove_tmp(gap[1]);
}
END_TEST

/* Without distributedInfo, each capture's rank comes from its rank-N file name. */
START_TEST(merge_ranks_from_file_names)
{
  static const char r[] = "{\"traceEvents\":[" SEQK("allreduce", 10, 8, -1) "]}";
  const char *paths[2] = {write_named(r, "trace_rank-1.json"), write_named(r, "trace_rank-0.json")};
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  char msg[1024];
  ck_assert_msg(dt_kineto_import_many(paths, 2, &o, &t, &err) == DT_OK, "%s", dt_error_format(&err, msg, sizeof msg));
  ck_assert(has_note(t, "rank 1: kineto: rank 1 taken from its file name"));
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  ck_assert_int_eq(t->ninstances, 1);
  dt_trace_free(t);
  remove_tmp(paths[0]);
  remove_tmp(paths[1]);
}
END_TEST

/* The shipped capture under the host timeline: two host threads, every GPU op waits for its launch. */
START_TEST(sample_host_timeline)
{
  dt_import_opts o;
  opts_default(&o);
  o.host_timeline = 1;
  dt_trace *t = import_ok(sample_path(), &o);
  const dt_rank *rk = dt_trace_rank_body(t, 0);
  ck_assert_uint_eq(rk->nstreams, 4); /* s7, s40, and the two launching threads */
  size_t launches = 0, delays = 0;
  for (size_t s = 0; s < 2; s++)
    for (size_t i = 0; i < rk->streams[s].nops; i++) {
      const dt_op *op = &rk->streams[s].ops[i];
      delays += op->kind == DT_OP_DELAY;
      for (uint32_t d = 0; d < op->ndeps; d++)
        launches += op->deps[d].stream >= 2;
    }
  ck_assert_uint_eq(delays, 0);
  ck_assert_uint_eq(launches, 2700 + 960 + 114); /* every kernel, memcpy and memset */
  /* + the final cudaDeviceSynchronize: the CPU time up to it, then its wait */
  ck_assert_uint_eq(rk->streams[2].nops + rk->streams[3].nops, 2700 + 960 + 114 + 2);
  ck_assert(has_note(t, "host thread 2910249"));
  ck_assert(has_note(t, "host thread 2919752"));
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_trace_validate(t, &err), DT_OK);
  dt_trace_free(t);
}
END_TEST

/* The error of importing the first len bytes of text (written to a .json file) must say `expect`. */
static void import_err_n(const char *text, size_t len, const char *expect)
{
  const char *path = write_tmp(text, len, ".json");
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_kineto_import(path, &o, &t, &err), DT_ERR);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(err.msg, expect) != NULL, "'%s' does not say '%s'", err.msg, expect);
  remove_tmp(path);
}

static void import_err(const char *text, const char *expect)
{
  import_err_n(text, strlen(text), expect);
}

START_TEST(truncated_json_reports_offset)
{
  size_t cut = strlen(dep_json) - 40;
  char expect[64];
  snprintf(expect, sizeof expect, "byte %zu", cut);
  import_err_n(dep_json, cut, expect);
  /* a syntax error in the middle: position of the bad byte */
  import_err("{\"traceEvents\":[{\"ph\":\"X\",,}]}", "invalid JSON at byte");

  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = NULL;
  dt_error err;
  ck_assert_int_eq(dt_kineto_import("/nonexistent/x.json", &o, &t, &err), DT_ERR);
  ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
}
END_TEST


/* A key dtsim reads given twice in one object is refused at the byte after each occurrence (the second
 * `traceEvents` was read as well and won, unsaid); nesting past the documented 64 levels is refused at the bracket
 * that opens level 65 (10,000 levels said "no GPU events"). Offsets counted here by hand from the texts. */
START_TEST(duplicate_keys_and_nesting_refused)
{
  char text[512], expect[256];
  /* {"traceEvents": [], "traceEvents": []}: the keys span bytes 1-13 and 20-32 (quotes included) */
  import_err("{\"traceEvents\": [], \"traceEvents\": []}",
             "key 'traceEvents' given twice in the top-level object: first ending at byte 14, again ending at byte 33");
  /* in an event: "ts" spans bytes 46-49, then 55-58 */
  snprintf(text, sizeof text, "%s", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"ts\": 2}]}");
  import_err(text, "key 'ts' given twice in an event of 'traceEvents': first ending at byte 50, again ending at "
                   "byte 59");
  /* a key dtsim does not read may repeat: the file is read to its end */
  import_err("{\"traceName\": \"a\", \"traceName\": \"b\", \"traceEvents\": []}", "no GPU events");
  /* nesting: '{' is level 1 at byte 0, "traceEvents": '[' level 2 at byte 16; level 65 is at byte 16 + 63 */
  size_t n = 0;
  n += (size_t)snprintf(text + n, sizeof text - n, "{\"traceEvents\": [");
  for (int i = 0; i < 100; i++)
    text[n++] = '[';
  for (int i = 0; i < 100; i++)
    text[n++] = ']';
  snprintf(text + n, sizeof text - n, "]}");
  snprintf(expect, sizeof expect, "JSON nested deeper than 64 levels at byte %d: dtsim reads objects and arrays nested "
           "at most 64 deep", 16 + 63);
  import_err(text, expect);
}
END_TEST

/* Many ProfilerStep annotations and many GPU ops (a hostile capture of that shape): the marks are placed in
 * O((steps + ops) log ops), was O(steps x ops) twice (place_marks, mark_deps): 30,000 steps took 1.6 s and
 * 100,000 about 18 s, now about 0.5 s. The case's own timeout (8 s, x4 under ASan) is the bound: a return to the
 * scan fails it. Each step launches one kernel, on two alternating streams; each step gets its mark. */
#define MANY_STEPS 100000
START_TEST(many_steps_marks_linear)
{
  size_t cap = (size_t)MANY_STEPS * 220 + 200, len = 0;
  char *json = malloc(cap);
  ck_assert_ptr_nonnull(json);
  len += (size_t)snprintf(json + len, cap - len,
                          "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":[");
  for (int i = 0; i < MANY_STEPS; i++)
    len += (size_t)snprintf(json + len, cap - len,
                            "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,"
                            "\"tid\":1,\"ts\":%d,\"dur\":10},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                            "\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"stream\":%d}}",
                            i ? "," : "", i, i * 10, i * 10 + 1, 7 + i % 2);
  len += (size_t)snprintf(json + len, cap - len, "]}");
  ck_assert_uint_lt(len, cap);
  const char *path = write_tmp(json, len, ".json");
  free(json);
  dt_import_opts o;
  opts_default(&o);
  dt_trace *t = import_ok(path, &o);
  size_t marks = 0, kernels = 0;
  for (size_t s = 0; s < t->ranks[0].nstreams; s++)
    for (size_t i = 0; i < t->ranks[0].streams[s].nops; i++) {
      marks += t->ranks[0].streams[s].ops[i].kind == DT_OP_MARK;
      kernels += t->ranks[0].streams[s].ops[i].kind == DT_OP_COMPUTE;
    }
  ck_assert_uint_eq(marks, MANY_STEPS);
  ck_assert_uint_eq(kernels, MANY_STEPS);
  dt_trace_free(t);
  remove_tmp(path);
}
END_TEST

/* Mark dependencies cost the steps' ops, not marks x streams (they were a dense marks x streams array, each row
 * scanned over every stream: 256 streams made every step 256 times dearer). Counted, not timed: the work of
 * mark_deps (the (mark, stream) pairs it examines, dt_kineto_mark_work) for STREAMS streams that each run one
 * kernel before the steps, then MARK_STEPS steps of one kernel each on the first stream: one pair per step
 * (a return to scanning every stream is STREAMS per step). Then STREAMS streams' kernels all inside every one
 * of MARK_STEPS overlapping steps: every mark lands after the same op, and the first one already waits for
 * every other stream's last kernel, so the marks' deps number STREAMS - 1 in all (were MARK_STEPS times that). */
#define STREAMS 200
#define MARK_STEPS 3000
static char *steps_capture(int overlap, size_t *len)
{
  size_t cap = (size_t)(STREAMS + MARK_STEPS) * 240 + 200;
  char *json = malloc(cap);
  ck_assert_ptr_nonnull(json);
  size_t n = (size_t)snprintf(json, cap,
                              "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":[");
  for (int i = 0; i < STREAMS; i++) /* one kernel per stream: before the steps, or inside all of them */
    n += (size_t)snprintf(json + n, cap - n,
                          "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":1,"
                          "\"args\":{\"stream\":%d}}",
                          i ? "," : "", overlap ? 100 + i : i, 7 + i);
  for (int i = 0; i < MARK_STEPS; i++) {
    int ts = overlap ? 50 - i % 50 : 1000 + 10 * i, dur = overlap ? 1000000 : 10;
    n += (size_t)snprintf(json + n, cap - n,
                          ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,\"tid\":1,"
                          "\"ts\":%d,\"dur\":%d}",
                          i, ts, dur);
    if (!overlap)
      n += (size_t)snprintf(json + n, cap - n,
                            ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":5,"
                            "\"args\":{\"stream\":7}}",
                            ts + 1);
  }
  n += (size_t)snprintf(json + n, cap - n, "]}");
  ck_assert_uint_lt(n, cap);
  *len = n;
  return json;
}

static void count_marks(const dt_trace *t, size_t *marks, size_t *deps)
{
  *marks = *deps = 0;
  for (size_t s = 0; s < t->ranks[0].nstreams; s++)
    for (size_t i = 0; i < t->ranks[0].streams[s].nops; i++)
      if (t->ranks[0].streams[s].ops[i].kind == DT_OP_MARK) {
        (*marks)++;
        *deps += t->ranks[0].streams[s].ops[i].ndeps;
      }
}

START_TEST(mark_deps_not_marks_x_streams)
{
  dt_import_opts o;
  opts_default(&o);
  for (int overlap = 0; overlap < 2; overlap++) {
    size_t len;
    char *json = steps_capture(overlap, &len);
    const char *path = write_tmp(json, len, ".json");
    free(json);
    uint64_t w0 = dt_kineto_mark_work();
    dt_trace *t = import_ok(path, &o);
    uint64_t work = dt_kineto_mark_work() - w0;
    size_t marks, deps;
    count_marks(t, &marks, &deps);
    ck_assert_uint_eq(marks, MARK_STEPS);
    if (!overlap) {
      ck_assert_msg(work <= 2 * MARK_STEPS, "mark_deps examined %llu (mark, stream) pairs for %d one-kernel steps",
                    (unsigned long long)work, MARK_STEPS);
      ck_assert_uint_eq(deps, 0); /* the other streams ran before the steps */
    } else {
      ck_assert_uint_eq(deps, STREAMS - 1);
    }
    dt_trace_free(t);
    remove_tmp(path);
  }
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"sample_counts_per_rank", sample_counts_per_rank, 1},
      {"sample_ranks_identical", sample_ranks_identical, 1},
      {"sample_marks_and_step_time", sample_marks_and_step_time, 1},
      {"sample_nccl_durations_unused", sample_nccl_durations_unused, 1},
      {"sample_gaps_keep_vs_drop", sample_gaps_keep_vs_drop, 1},
      {"sample_validates", sample_validates, 1},
      {"dep_window_edges", dep_window_edges, 1},
      {"unknown_collective_and_no_metadata", unknown_collective_and_no_metadata, 1},
      {"expand_group_to_world4", expand_group_to_world4, 1},
      {"truncated_pg_ranks_fall_back", truncated_pg_ranks_fall_back, 1},
      {"rank_from_file_name", rank_from_file_name, 1},
      {"vintage2_fsdp_sample", vintage2_fsdp_sample, 1},
      {"vintage2_alltoall_sample", vintage2_alltoall_sample, 1},
      {"vintage3_estimates_sizes", vintage3_estimates_sizes, 1},
      {"host_timeline_launches_and_sync", host_timeline_launches_and_sync, 1},
      {"sample_host_timeline", sample_host_timeline, 1},
      {"alltoallv_from_split_sizes", alltoallv_from_split_sizes, 1},
      {"merge_by_seq_and_alltoallv", merge_by_seq_and_alltoallv, 1},
      {"merge_ranks_from_file_names", merge_ranks_from_file_names, 1},
      {"truncated_json_reports_offset", truncated_json_reports_offset, 1},
      {"mark_deps_not_marks_x_streams", mark_deps_not_marks_x_streams, 1},
      {"duplicate_keys_and_nesting_refused", duplicate_keys_and_nesting_refused, 1},
  };
  Suite *su = dt_test_suite("kineto", cases, sizeof cases / sizeof cases[0], 120);
  TCase *tc = tcase_create("many_steps_marks_linear");
  tcase_set_timeout(tc, 8); /* the bound of the test (CK_TIMEOUT_MULTIPLIER scales it under ASan) */
  tcase_add_test(tc, many_steps_marks_linear);
  suite_add_tcase(su, tc);
  return dt_test_run(su);
}
