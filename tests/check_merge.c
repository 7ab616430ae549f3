/* Unit tests of merging several jobs' traces into one (traces/dt_merge.h): ranks, groups, peers and templates
 * offset per job; expected values are the job-local ones worked out by hand, shifted by the job's first rank. */
#include "dt_test.h"
#include "traces/dt_merge.h"

#include <check.h>
#include <string.h>

static char errbuf[2048];

/* A 4-rank ring job: rank 0 owns "send to r+1, recv from r-1" (one batch) then an all-reduce on "dp"; ranks 1-3
 * run its template, so their peers are (r + 1) mod 4 and (r + 3) mod 4 -- ranks 1-3 wrap around the job. With
 * p2p = 0 the job is the all-reduce alone and no peer wraps. */
static dt_trace *ring_job(int p2p)
{
  dt_trace *t = dt_trace_new(4);
  dt_error e;
  int32_t all[4] = {0, 1, 2, 3};
  ck_assert_int_ge(dt_trace_add_group(t, "dp", all, 4, 0, 0, &e), 0);
  if (p2p) {
    dt_op *s = dt_trace_append(t, 0, 0);
    s->kind = DT_OP_SEND, s->peer = 1, s->bytes = 1000, s->batch = 0;
    dt_op *r = dt_trace_append(t, 0, 0);
    r->kind = DT_OP_RECV, r->peer = 3, r->bytes = 1000, r->batch = 0;
  }
  dt_op *a = dt_trace_append(t, 0, 0);
  a->kind = DT_OP_ALLREDUCE, a->group = 0, a->bytes = 4096;
  dt_op *m = dt_trace_append(t, 0, 0);
  m->kind = DT_OP_MARK;
  for (int32_t r = 1; r < 4; r++)
    ck_assert_int_eq(dt_trace_set_template(t, r, 0, NULL, &e), DT_OK);
  ck_assert_msg(dt_trace_validate(t, &e) == DT_OK, "%s", dt_error_format(&e, errbuf, sizeof errbuf));
  return t;
}

static dt_trace *merge2(dt_trace *a, dt_trace *b, int32_t *first)
{
  dt_trace *jobs[2] = {a, b}, *m = NULL;
  const char *names[2] = {"a", "b"};
  dt_error e;
  dt_error_clear(&e);
  ck_assert_msg(dt_trace_merge(jobs, names, 2, first, &m, &e) == DT_OK, "%s", dt_error_format(&e, errbuf, sizeof errbuf));
  return m;
}

START_TEST(test_ring_peers_wrap_in_their_job)
{
  dt_trace *a = ring_job(1), *b = ring_job(1);
  int32_t first[3];
  dt_trace *m = merge2(a, b, first);
  ck_assert_int_eq(first[0], 0);
  ck_assert_int_eq(first[1], 4);
  ck_assert_int_eq(first[2], 8);
  ck_assert_int_eq(m->nranks, 8);
  ck_assert_uint_eq(m->ngroups, 2);
  ck_assert_str_eq(m->groups[0].name, "a/dp");
  ck_assert_str_eq(m->groups[1].name, "b/dp");
  ck_assert_int_eq(m->groups[1].ranks[0], 4);
  ck_assert_int_eq(m->groups[1].ranks[3], 7);
  for (int32_t r = 0; r < 8; r++) {
    int32_t j = r / 4, local = r % 4;
    const dt_stream *st = &dt_trace_rank_body(m, r)->streams[0];
    ck_assert_uint_eq(st->nops, 4);
    ck_assert_int_eq(dt_trace_op_peer(m, r, &st->ops[0]), 4 * j + (local + 1) % 4);
    ck_assert_int_eq(dt_trace_op_peer(m, r, &st->ops[1]), 4 * j + (local + 3) % 4);
    ck_assert_int_eq(dt_trace_op_group(m, r, &st->ops[2]), j);
  }
  /* the pairs and instances of both jobs, counted by validation */
  ck_assert_int_eq(m->npairs, 8);
  ck_assert_int_eq(m->ninstances, 2);
  dt_trace_free(m);
  dt_trace_free(a);
  dt_trace_free(b);
}
END_TEST

START_TEST(test_templates_kept_without_wrap)
{
  dt_trace *a = ring_job(0), *b = ring_job(0);
  int32_t first[3];
  dt_trace *m = merge2(a, b, first);
  for (int32_t r = 1; r < 8; r++) {
    if (r == 4) {
      ck_assert_int_eq(m->ranks[r].template_rank, -1); /* b's owner */
      continue;
    }
    ck_assert_int_eq(m->ranks[r].template_rank, r < 4 ? 0 : 4);
    const dt_op *op = &dt_trace_rank_body(m, r)->streams[0].ops[0];
    ck_assert_int_eq(dt_trace_op_group(m, r, op), r < 4 ? 0 : 1);
  }
  ck_assert_uint_eq(dt_trace_op_count(m), 16);
  dt_trace_free(m);
  dt_trace_free(a);
  dt_trace_free(b);
}
END_TEST

/* Template users with group maps: rank 0 owns an all-reduce on tp0 = {0, 1}; ranks 2 and 3 map it to tp1. */
START_TEST(test_group_maps_offset)
{
  dt_trace *t = dt_trace_new(4);
  dt_error e;
  int32_t g0[2] = {0, 1}, g1[2] = {2, 3};
  ck_assert_int_eq(dt_trace_add_group(t, "tp0", g0, 2, 0, 0, &e), 0);
  ck_assert_int_eq(dt_trace_add_group(t, "tp1", g1, 2, 0, 0, &e), 1);
  dt_op *a = dt_trace_append(t, 0, 0);
  a->kind = DT_OP_ALLREDUCE, a->group = 0, a->bytes = 64;
  int32_t map[2] = {1, 1};
  ck_assert_int_eq(dt_trace_set_template(t, 1, 0, NULL, &e), DT_OK);
  ck_assert_int_eq(dt_trace_set_template(t, 2, 0, map, &e), DT_OK);
  ck_assert_int_eq(dt_trace_set_template(t, 3, 0, map, &e), DT_OK);
  ck_assert_int_eq(dt_trace_validate(t, &e), DT_OK);
  int32_t first[3];
  dt_trace *m = merge2(t, t, first);
  const dt_op *op = &dt_trace_rank_body(m, 6)->streams[0].ops[0];
  ck_assert_int_eq(dt_trace_op_group(m, 6, op), dt_trace_find_group(m, "b/tp1"));
  ck_assert_int_eq(dt_trace_op_group(m, 5, op), dt_trace_find_group(m, "b/tp0"));
  const dt_op *op_a = &dt_trace_rank_body(m, 3)->streams[0].ops[0]; /* job a's template, rank 0 */
  ck_assert_int_eq(dt_trace_op_group(m, 3, op_a), dt_trace_find_group(m, "a/tp1"));
  ck_assert_int_eq(m->ranks[6].template_rank, 4);
  ck_assert_int_eq(m->ninstances, 4);
  dt_trace_free(m);
  dt_trace_free(t);
}
END_TEST

START_TEST(test_job_count_bounds)
{
  dt_trace *a = ring_job(0);
  dt_trace *jobs[DT_MERGE_MAX_JOBS + 1];
  const char *names[DT_MERGE_MAX_JOBS + 1];
  for (int i = 0; i <= DT_MERGE_MAX_JOBS; i++)
    jobs[i] = a, names[i] = "x";
  int32_t first[DT_MERGE_MAX_JOBS + 2];
  dt_trace *m = NULL;
  dt_error e;
  dt_error_clear(&e);
  ck_assert_int_eq(dt_trace_merge(jobs, names, 0, first, &m, &e), DT_ERR);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(dt_trace_merge(jobs, names, DT_MERGE_MAX_JOBS + 1, first, &m, &e), DT_ERR);
  ck_assert_ptr_nonnull(strstr(e.msg, "expected 1 to 16 jobs"));
  ck_assert_ptr_null(m);
  dt_trace_free(a);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"ring_peers_wrap_in_their_job", test_ring_peers_wrap_in_their_job, 1},
      {"templates_kept_without_wrap", test_templates_kept_without_wrap, 1},
      {"group_maps_offset", test_group_maps_offset, 1},
      {"job_count_bounds", test_job_count_bounds, 1},
  };
  return dt_test_run(dt_test_suite("merge", cases, sizeof cases / sizeof cases[0], 0));
}
