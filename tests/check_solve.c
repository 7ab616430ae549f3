/* Check suite for replay/dt_coll_solve.c, the evaluator of SimGrid's CM02 flow sharing: hand-computed max-min
 * cases (two flows of different latencies on one link, flows joining at once with different weights, a
 * bottleneck shared by three flows with one ending early, gates and delays, identical flows as one, zero latency
 * and zero bytes, the time precision, a gate waiting for itself). Pure C, no SimGrid. */
#include "replay/dt_coll_solve.h"

#include "dt_test.h"

#include <math.h>

#define TP 1e-9 /* SimGrid's default surf/precision */
#define RP 1e-5 /* and maxmin/precision */

static void close_to(double got, double want)
{
  ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "got %.15g, want %.15g", got, want);
}

/* One link of 100 B/s. Flow a (300 B, latency 1 s) shares alone from 1 to 2 (100 B); flow b (200 B, latency
 * 2 s) joins at 2, and from then on the link is split in proportion to 1/latency: a 100 * 1 / 1.5 = 66.67 B/s,
 * b 33.33 B/s. a's 200 B left take 3 s: a ends at 5; b has sent 100 B by then, its 100 B left take 1 s alone:
 * b ends at 6. */
START_TEST(test_two_latencies)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t a = rp_solver_flow(s, 300, 1, &l, 1, -1, -1, -1, -1);
  int32_t b = rp_solver_flow(s, 200, 2, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_start(s, a), 0);
  close_to(rp_solver_flow_finish(s, a), 5);
  close_to(rp_solver_flow_finish(s, b), 6);
  rp_solver_free(s);
}
END_TEST

/* Both flows join at 2 (f1 starts at 1, after a gate's delay, with latency 1; f2 at 0 with latency 2) on a link
 * of 90 B/s: weights 1/1 and 1/2 give f1 60 B/s and f2 30 B/s. f1's 120 B end at 4; f2 has sent 60 B by then,
 * its 60 B left take 60/90 s alone: 4.6667. */
START_TEST(test_weighted_join)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 90);
  int32_t g = rp_solver_gate(s, 1);
  int32_t f1 = rp_solver_flow(s, 120, 1, &l, 1, g, -1, -1, -1);
  int32_t f2 = rp_solver_flow(s, 120, 2, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_gate_time(s, g), 1);
  close_to(rp_solver_flow_start(s, f1), 1);
  close_to(rp_solver_flow_finish(s, f1), 4);
  close_to(rp_solver_flow_finish(s, f2), 4 + 60.0 / 90);
  rp_solver_free(s);
}
END_TEST

/* Three flows on L1 (90 B/s), the third also on L2 (10 B/s), all of latency 1: L2 is the first bottleneck (10
 * per unit of weight, against 30 on L1), so f3 gets 10 B/s and f1, f2 share the 80 B/s left: 40 each. f3's 50 B
 * end at 1 + 5 = 6; then f1 and f2 have 400 - 200 = 200 B left each at 45 B/s: they end at 6 + 200/45. */
START_TEST(test_three_share)
{
  rp_solver *s = rp_solver_new();
  int32_t l1 = rp_solver_link(s, 90), l2 = rp_solver_link(s, 10);
  int32_t both[2] = {l1, l2};
  int32_t f1 = rp_solver_flow(s, 400, 1, &l1, 1, -1, -1, -1, -1);
  int32_t f2 = rp_solver_flow(s, 400, 1, &l1, 1, -1, -1, -1, -1);
  int32_t f3 = rp_solver_flow(s, 50, 1, both, 2, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_finish(s, f3), 6);
  close_to(rp_solver_flow_finish(s, f1), 6 + 200.0 / 45);
  close_to(rp_solver_flow_finish(s, f2), 6 + 200.0 / 45);
  rp_solver_free(s);
}
END_TEST

/* Gates: A (100 B, latency 1, 100 B/s) ends at 2 into g1 (delay 0.5): g1 fires at 2.5. B starts when both g1
 * and g0 (no input, delay 3) have fired: at 3; it ends at 3 + 1 + 1 = 5 into g2 (named twice, counted once),
 * which fires at once (delay 0). */
START_TEST(test_gates)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t g0 = rp_solver_gate(s, 3), g1 = rp_solver_gate(s, 0.5), g2 = rp_solver_gate(s, 0);
  int32_t a = rp_solver_flow(s, 100, 1, &l, 1, -1, -1, g1, -1);
  int32_t b = rp_solver_flow(s, 100, 1, &l, 1, g1, g0, g2, g2);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_finish(s, a), 2);
  close_to(rp_solver_gate_time(s, g1), 2.5);
  close_to(rp_solver_gate_time(s, g0), 3);
  close_to(rp_solver_flow_start(s, b), 3);
  close_to(rp_solver_flow_finish(s, b), 5);
  close_to(rp_solver_gate_time(s, g2), 5);
  rp_solver_free(s);
}
END_TEST

/* A gate after another: g1 waits for g0 (delay 1) and then 2 more seconds, with no flow ending into it (a
 * member with nothing to send in a phase still waits the phase's latency); a flow on g1 starts at 3. */
START_TEST(test_gate_chain)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t g0 = rp_solver_gate(s, 1), g1 = rp_solver_gate_after(s, 2, g0);
  int32_t f = rp_solver_flow(s, 100, 1, &l, 1, g1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_gate_time(s, g1), 3);
  close_to(rp_solver_flow_start(s, f), 3);
  close_to(rp_solver_flow_finish(s, f), 5);
  rp_solver_free(s);
}
END_TEST

/* Three identical flows as one of count 3 next to a fourth of the same weight: the link is split in four, the
 * three end together at 1 + 100/25 = 5, and the fourth, with 200 B, at 5 + 100/100 = 6. */
START_TEST(test_count)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t a = rp_solver_flow(s, 100, 1, &l, 1, -1, -1, -1, -1);
  rp_solver_flow_count(s, a, 3);
  int32_t b = rp_solver_flow(s, 200, 1, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_finish(s, a), 5);
  close_to(rp_solver_flow_finish(s, b), 6);
  rp_solver_free(s);
}
END_TEST

/* Latency 0: the flow shares at once with weight 1 (SimGrid's penalty for a route without latency), so two of
 * them split 100 B/s evenly: 100 B each end at 2. Zero bytes: the flow ends when its latency is paid. */
START_TEST(test_zero)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t a = rp_solver_flow(s, 100, 0, &l, 1, -1, -1, -1, -1);
  int32_t b = rp_solver_flow(s, 100, 0, &l, 1, -1, -1, -1, -1);
  int32_t z = rp_solver_flow(s, 0, 0.25, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_finish(s, a), 2);
  close_to(rp_solver_flow_finish(s, b), 2);
  close_to(rp_solver_flow_finish(s, z), 0.25);
  rp_solver_free(s);
}
END_TEST

/* Events less than the time precision apart happen together, at the earlier one: two independent flows that end
 * 0.5 ns apart end at once with SimGrid's 1 ns, apart with 1 ps. */
START_TEST(test_precision)
{
  for (int k = 0; k < 2; k++) {
    rp_solver *s = rp_solver_new();
    int32_t l1 = rp_solver_link(s, 1e9), l2 = rp_solver_link(s, 1e9);
    int32_t f1 = rp_solver_flow(s, 1000, 1e-6, &l1, 1, -1, -1, -1, -1);
    int32_t f2 = rp_solver_flow(s, 1000, 1.0005e-6, &l2, 1, -1, -1, -1, -1);
    ck_assert_int_eq(rp_solver_run(s, k == 0 ? 1e-9 : 1e-12, RP), 0);
    close_to(rp_solver_flow_finish(s, f1), 2e-6);
    close_to(rp_solver_flow_finish(s, f2), k == 0 ? 2e-6 : 2.0005e-6);
    rp_solver_free(s);
  }
}
END_TEST

/* A flow that starts on the gate its own end feeds never starts: an error, not a hang. */
START_TEST(test_cycle)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t g = rp_solver_gate(s, 0);
  rp_solver_flow(s, 100, 1, &l, 1, g, -1, g, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), -1);
  rp_solver_free(s);
  rp_solver_free(NULL);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {{"two_latencies", test_two_latencies, 0}, {"weighted_join", test_weighted_join, 0},
                                {"three_share", test_three_share, 0},     {"gates", test_gates, 0},
                                {"gate_chain", test_gate_chain, 0},       {"count", test_count, 0},
                                {"zero", test_zero, 0},                   {"precision", test_precision, 0},
                                {"cycle", test_cycle, 0}};
  return dt_test_run(dt_test_suite("solve", cases, sizeof cases / sizeof cases[0], 60));
}
