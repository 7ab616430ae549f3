/* Check suite for replay/dt_coll_solve.c, the evaluator of SimGrid's CM02 flow sharing: hand-computed max-min
 * cases (two flows of different latencies on one link, two joining at once: equal shares whatever the latency, a
 * bottleneck shared by three flows with one ending early, gates and delays, identical flows as one, zero latency
 * and zero bytes, the time precision, a gate waiting for itself), problems re-run with new bytes and delays,
 * and symmetries: folded problems whose quotient must weigh a flow orbit against a smaller link orbit, a flow
 * crossing two links of one orbit, gates in orbits, and declared symmetries that do not hold (different
 * latencies, routes no link permutation maps, bytes or delays that differ in one run). Pure C, no SimGrid. */
#include "replay/dt_coll_solve.h"

#include "dt_test.h"

#include <math.h>

#define TP 1e-9 /* SimGrid's default surf/precision */
#define RP 1e-5 /* and maxmin/precision */

static void close_to(double got, double want)
{
  ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "got %.15g, want %.15g", got, want);
}

/* One link of 100 B/s. Flow a (300 B, latency 1 s) shares alone from 1 to 2 (100 B); flow b (150 B, latency
 * 2 s) joins at 2, and from then on the link is split evenly whatever the latencies (every flow has penalty 1):
 * 50 B/s each. b's 150 B take 3 s: b ends at 5; a has 50 B left then, 0.5 s alone: a ends at 5.5. (Shares in
 * proportion to 1 / latency, CM02's own rule, would end a at 5 and b at 5.5.) */
START_TEST(test_two_latencies)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t a = rp_solver_flow(s, 300, 1, &l, 1, -1, -1, -1, -1);
  int32_t b = rp_solver_flow(s, 150, 2, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_start(s, a), 0);
  close_to(rp_solver_flow_finish(s, a), 5.5);
  close_to(rp_solver_flow_finish(s, b), 5);
  rp_solver_free(s);
}
END_TEST

/* Both flows join at 2 (f1 starts at 1, after a gate's delay, with latency 1; f2 at 0 with latency 2) on a link
 * of 90 B/s: equal penalties give each 45 B/s. f2's 90 B end at 4; f1 has sent 90 B by then, its 30 B left take
 * 30/90 s alone: 4.3333. (Weights 1/1 and 1/2 would swap them: f1 at 4, f2 at 4.3333.) */
START_TEST(test_equal_join)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 90);
  int32_t g = rp_solver_gate(s, 1);
  int32_t f1 = rp_solver_flow(s, 120, 1, &l, 1, g, -1, -1, -1);
  int32_t f2 = rp_solver_flow(s, 90, 2, &l, 1, -1, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_gate_time(s, g), 1);
  close_to(rp_solver_flow_start(s, f1), 1);
  close_to(rp_solver_flow_finish(s, f1), 4 + 30.0 / 90);
  close_to(rp_solver_flow_finish(s, f2), 4);
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

/* Re-running a problem with new bytes and delays gives the new answer: one flow of 100 B (latency 1, 100 B/s)
 * after a gate of delay 1 ends at 3; with 300 B and delay 0.5, at 0.5 + 1 + 3 = 4.5. */
START_TEST(test_rerun)
{
  rp_solver *s = rp_solver_new();
  int32_t l = rp_solver_link(s, 100);
  int32_t g = rp_solver_gate(s, 1);
  int32_t f = rp_solver_flow(s, 100, 1, &l, 1, g, -1, -1, -1);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_finish(s, f), 3);
  rp_solver_set_bytes(s, f, 300);
  rp_solver_set_delay(s, g, 0.5);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  close_to(rp_solver_flow_start(s, f), 0.5);
  close_to(rp_solver_flow_finish(s, f), 4.5);
  rp_solver_free(s);
}
END_TEST

/* A and B (100 B, latency 1) cross the shared link S (150 B/s) and their own links PA, PB (1000 B/s); C (100 B,
 * latency 0.5) crosses S alone. Swapping A and B (PA and PB) is a symmetry; its quotient has one flow for {A, B},
 * which loads S twice per unit of rate (orbit of 2 flows on an orbit of 1 link). By hand: C shares S alone from
 * 0.5 to 1 (75 B); from 1 the three share S evenly, 50 B/s each; C's 25 B left end at 1.5; A and B then have 75 B
 * left at 75 B/s each: they end at 2.5. With a load of one (no factor 2) the quotient's flow and C would get 75 B/s
 * each from 1, and A and B would end at 11/6. */
START_TEST(test_fold_shared)
{
  rp_solver *s = rp_solver_new();
  int32_t S = rp_solver_link(s, 150), PA = rp_solver_link(s, 1000), PB = rp_solver_link(s, 1000);
  int32_t ra[2] = {PA, S}, rb[2] = {PB, S};
  int32_t a = rp_solver_flow(s, 100, 1, ra, 2, -1, -1, -1, -1);
  int32_t b = rp_solver_flow(s, 100, 1, rb, 2, -1, -1, -1, -1);
  int32_t c = rp_solver_flow(s, 100, 0.5, &S, 1, -1, -1, -1, -1);
  int32_t swap[3] = {b, a, c};
  ck_assert_int_eq(rp_solver_symmetry(s, swap, NULL), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 2);
  close_to(rp_solver_flow_finish(s, c), 1.5);
  close_to(rp_solver_flow_finish(s, a), 2.5);
  close_to(rp_solver_flow_finish(s, b), 2.5);
  /* B twice as large: no symmetry in this run, every flow is simulated. A ends at 2.5 as before; B has 100 B
   * left then, alone on S: 2.5 + 100/150. */
  rp_solver_set_bytes(s, b, 200);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 3);
  close_to(rp_solver_flow_finish(s, a), 2.5);
  close_to(rp_solver_flow_finish(s, b), 2.5 + 100.0 / 150);
  rp_solver_free(s);
}
END_TEST

/* A declared permutation that is no symmetry is ignored: swapping A and C above (latencies 1 and 0.5), A and B
 * when their own links differ in bandwidth, or a
 * rotation of three flows whose routes no link permutation maps onto each other (f0 on L0 L1, f1 on L1 L2, f2 on
 * L0 L2: f0 -> f1 needs L1 -> L2, f1 -> f2 needs L1 -> L0). Not a permutation at all: refused. */
START_TEST(test_fold_refused)
{
  rp_solver *s = rp_solver_new();
  int32_t S = rp_solver_link(s, 150), PA = rp_solver_link(s, 1000), PB = rp_solver_link(s, 1000);
  int32_t ra[2] = {PA, S}, rb[2] = {PB, S};
  int32_t a = rp_solver_flow(s, 100, 1, ra, 2, -1, -1, -1, -1);
  int32_t b = rp_solver_flow(s, 100, 1, rb, 2, -1, -1, -1, -1);
  int32_t c = rp_solver_flow(s, 100, 0.5, &S, 1, -1, -1, -1, -1);
  int32_t swap_ac[3] = {c, b, a}, twice[3] = {a, a, c};
  ck_assert_int_eq(rp_solver_symmetry(s, twice, NULL), -1);
  ck_assert_int_eq(rp_solver_symmetry(s, swap_ac, NULL), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 3);
  close_to(rp_solver_flow_finish(s, c), 1.5);
  close_to(rp_solver_flow_finish(s, a), 2.5);
  rp_solver_free(s);

  /* the same with PB at 20 B/s: swapping A and B would map PA onto a slower link, so it is refused. By hand: B is
   * held to 20 B/s from 1 (its 100 B end at 6); at 1 S's 130 B/s left go to A and C evenly (65 each), C's 25 B
   * left end at 1 + 5/13; A's 75 B left then take 75/130: A ends at 1 + 25/26. */
  s = rp_solver_new();
  S = rp_solver_link(s, 150), PA = rp_solver_link(s, 1000), PB = rp_solver_link(s, 20);
  ra[0] = PA, rb[0] = PB, ra[1] = rb[1] = S;
  a = rp_solver_flow(s, 100, 1, ra, 2, -1, -1, -1, -1);
  b = rp_solver_flow(s, 100, 1, rb, 2, -1, -1, -1, -1);
  c = rp_solver_flow(s, 100, 0.5, &S, 1, -1, -1, -1, -1);
  int32_t swap_ab[3] = {b, a, c};
  ck_assert_int_eq(rp_solver_symmetry(s, swap_ab, NULL), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 3);
  close_to(rp_solver_flow_finish(s, b), 6);
  close_to(rp_solver_flow_finish(s, c), 1 + 5.0 / 13);
  close_to(rp_solver_flow_finish(s, a), 1 + 25.0 / 26);
  rp_solver_free(s);

  s = rp_solver_new();
  int32_t L[3];
  for (int k = 0; k < 3; k++)
    L[k] = rp_solver_link(s, 90);
  int32_t r0[2] = {L[0], L[1]}, r1[2] = {L[1], L[2]}, r2[2] = {L[0], L[2]};
  int32_t f0 = rp_solver_flow(s, 90, 1, r0, 2, -1, -1, -1, -1);
  int32_t f1 = rp_solver_flow(s, 90, 1, r1, 2, -1, -1, -1, -1);
  int32_t f2 = rp_solver_flow(s, 90, 1, r2, 2, -1, -1, -1, -1);
  int32_t rot[3] = {f1, f2, f0};
  ck_assert_int_eq(rp_solver_symmetry(s, rot, NULL), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 3);
  close_to(rp_solver_flow_finish(s, f2), 3); /* every link carries two flows: 45 B/s each */
  rp_solver_free(s);
}
END_TEST

/* Three links in a ring (90 B/s) and three flows (90 B, latency 1), f_i on L_i and L_{i+1}: the rotation is a
 * symmetry with one flow orbit and one link orbit of 3, and the quotient's one flow crosses the one link twice.
 * Every link carries two flows, 45 B/s each: all end at 1 + 2 = 3 (one crossing counted: 1 + 1 = 2). */
START_TEST(test_fold_ring)
{
  rp_solver *s = rp_solver_new();
  int32_t L[3], f[3];
  for (int k = 0; k < 3; k++)
    L[k] = rp_solver_link(s, 90);
  for (int k = 0; k < 3; k++) {
    int32_t r[2] = {L[k], L[(k + 1) % 3]};
    f[k] = rp_solver_flow(s, 90, 1, r, 2, -1, -1, -1, -1);
  }
  int32_t rot[3] = {f[1], f[2], f[0]};
  ck_assert_int_eq(rp_solver_symmetry(s, rot, NULL), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 1);
  for (int k = 0; k < 3; k++)
    close_to(rp_solver_flow_finish(s, f[k]), 3);
  rp_solver_free(s);
}
END_TEST

/* Gates in orbits, as two members of a collective: g0, g1 (delay 1) start f0, f1 (100 B, latency 1, sharing S of
 * 100 B/s), which end into g2, g3 (delay 0.5); those start f2, f3 (the same, on S), which end into g4, g5 (delay
 * 0). Swapping the members (f0 f1, f2 f3, g0 g1, g2 g3, g4 g5) is a symmetry: f0 and f1 share S from 2 at 50 B/s
 * and end at 4, g2 and g3 fire at 4.5, f2 and f3 share from 5.5 and end at 7.5. With g1's delay 2 (no symmetry in
 * that run): f0 alone on S from 2 ends at 3, f1 from 3 at 4; g2 at 3.5, g3 at 4.5; f2 alone from 4.5 ends at 5.5,
 * f3 from 5.5 at 6.5. */
START_TEST(test_fold_gates)
{
  rp_solver *s = rp_solver_new();
  int32_t S = rp_solver_link(s, 100);
  int32_t g0 = rp_solver_gate(s, 1), g1 = rp_solver_gate(s, 1);
  int32_t g2 = rp_solver_gate_after(s, 0.5, g0), g3 = rp_solver_gate_after(s, 0.5, g1);
  int32_t g4 = rp_solver_gate_after(s, 0, g2), g5 = rp_solver_gate_after(s, 0, g3);
  int32_t f0 = rp_solver_flow(s, 100, 1, &S, 1, g0, -1, g2, -1);
  int32_t f1 = rp_solver_flow(s, 100, 1, &S, 1, g1, -1, g3, -1);
  int32_t f2 = rp_solver_flow(s, 100, 1, &S, 1, g2, -1, g4, -1);
  int32_t f3 = rp_solver_flow(s, 100, 1, &S, 1, g3, -1, g5, -1);
  int32_t fp[4] = {f1, f0, f3, f2}, gp[6] = {g1, g0, g3, g2, g5, g4};
  ck_assert_int_eq(rp_solver_symmetry(s, fp, gp), 0);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 2);
  close_to(rp_solver_flow_finish(s, f1), 4);
  close_to(rp_solver_gate_time(s, g3), 4.5);
  close_to(rp_solver_flow_start(s, f3), 4.5);
  close_to(rp_solver_flow_finish(s, f3), 7.5);
  close_to(rp_solver_gate_time(s, g5), 7.5);
  rp_solver_set_delay(s, g1, 2);
  ck_assert_int_eq(rp_solver_run(s, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(s), 4);
  close_to(rp_solver_flow_finish(s, f0), 3);
  close_to(rp_solver_flow_finish(s, f1), 4);
  close_to(rp_solver_gate_time(s, g2), 3.5);
  close_to(rp_solver_gate_time(s, g3), 4.5);
  close_to(rp_solver_flow_finish(s, f2), 5.5);
  close_to(rp_solver_flow_finish(s, f3), 6.5);
  rp_solver_free(s);
}
END_TEST

/* A two-node problem with the symmetry the evaluator finds on NCCL channels: 2 nodes x 4 GPUs, every GPU with an
 * out and an in port (100 B/s) and a rail link each way between the nodes (40 B/s); three phases of flows between
 * members (node d, GPU j) gated per member: inside the node to j + 1 (200 B, latency 1) and to j + 2 (two
 * identical flows of 100 B), then across the nodes on rail j (150 B, latency 3), back to GPU j + 1 of node 0 on the
 * other rail, and inside node 0 to j + 3 (80 B, latency 0.5), then once more inside the node. Rotating every
 * node's GPUs (j -> j + 1) is a symmetry: solved with it (a quarter of the flows), every time equals the whole
 * problem's solved without it. */
enum { SYM_G = 4, SYM_M = 8, SYM_P = 3 };

static int32_t sym_member(int d, int j)
{
  return d * SYM_G + (j % SYM_G);
}

static rp_solver *sym_problem(int declare, size_t *nflows)
{
  rp_solver *s = rp_solver_new();
  int32_t out[SYM_M], in[SYM_M], rail[SYM_G], back[SYM_G], G[SYM_P + 1][SYM_M];
  for (int m = 0; m < SYM_M; m++) {
    out[m] = rp_solver_link(s, 100);
    in[m] = rp_solver_link(s, 100);
  }
  for (int j = 0; j < SYM_G; j++) {
    rail[j] = rp_solver_link(s, 40);
    back[j] = rp_solver_link(s, 40);
  }
  for (int m = 0; m < SYM_M; m++)
    G[0][m] = rp_solver_gate(s, 0.5);
  for (int q = 1; q <= SYM_P; q++)
    for (int m = 0; m < SYM_M; m++)
      G[q][m] = rp_solver_gate_after(s, 0.25 * q, G[q - 1][m]);
  /* flows in an order where flow k of GPU j is index base + j * per + k, so the rotation is known */
  int32_t fperm[256], gperm[(SYM_P + 1) * SYM_M];
  size_t nf = 0;
  for (int q = 0; q < SYM_P; q++)
    for (int d = 0; d < 2; d++) {
      int per = q == 1 ? (d == 0 ? 2 : 1) : 2;
      size_t base = nf;
      for (int j = 0; j < SYM_G; j++) {
        int32_t a = sym_member(d, j);
        for (int k = 0; k < per; k++) {
          int32_t b, r[3], nh = 2;
          double bytes, lat;
          if (q != 1) {
            b = sym_member(d, j + 1 + k);
            r[0] = out[a];
            r[1] = in[b];
            bytes = k == 0 ? 200 : 100;
            lat = 1;
          } else if (d == 0 && k == 0) {
            b = sym_member(1, j);
            r[0] = out[a], r[1] = rail[j], r[2] = in[b], nh = 3;
            bytes = 150;
            lat = 3;
          } else if (d == 0) {
            b = sym_member(0, j + 3);
            r[0] = out[a], r[1] = in[b];
            bytes = 80;
            lat = 0.5;
          } else {
            b = sym_member(0, j + 1);
            r[0] = out[a], r[1] = back[(j + 1) % SYM_G], r[2] = in[b], nh = 3;
            bytes = 150;
            lat = 3;
          }
          int32_t f = rp_solver_flow(s, bytes, lat, r, nh, G[q][a], G[q][b], G[q + 1][a], G[q + 1][b]);
          if (q != 1 && k == 1)
            rp_solver_flow_count(s, f, 2);
          fperm[f] = (int32_t)(base + (size_t)((j + 1) % SYM_G) * (size_t)per + (size_t)k);
          nf++;
        }
      }
    }
  for (int q = 0; q <= SYM_P; q++)
    for (int d = 0; d < 2; d++)
      for (int j = 0; j < SYM_G; j++)
        gperm[G[q][sym_member(d, j)]] = G[q][sym_member(d, j + 1)];
  if (declare)
    ck_assert_int_eq(rp_solver_symmetry(s, fperm, gperm), 0);
  *nflows = nf;
  return s;
}

START_TEST(test_fold_matches_whole)
{
  size_t nf, nf2;
  rp_solver *folded = sym_problem(1, &nf), *whole = sym_problem(0, &nf2);
  ck_assert_int_eq(rp_solver_run(folded, TP, RP), 0);
  ck_assert_int_eq(rp_solver_run(whole, TP, RP), 0);
  ck_assert_uint_eq(rp_solver_solved_flows(folded), nf / SYM_G);
  ck_assert_uint_eq(rp_solver_solved_flows(whole), nf);
  for (size_t f = 0; f < nf; f++) {
    close_to(rp_solver_flow_start(folded, (int32_t)f), rp_solver_flow_start(whole, (int32_t)f));
    close_to(rp_solver_flow_finish(folded, (int32_t)f), rp_solver_flow_finish(whole, (int32_t)f));
  }
  for (int32_t g = 0; g < (SYM_P + 1) * SYM_M; g++)
    close_to(rp_solver_gate_time(folded, g), rp_solver_gate_time(whole, g));
  /* the last gate is later than the phases' latencies alone: the flows shared their links */
  ck_assert(rp_solver_gate_time(whole, SYM_P * SYM_M) > 0.5 + 0.25 * (1 + 2 + 3) + 1 + 3 + 1);
  rp_solver_free(folded);
  rp_solver_free(whole);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {{"two_latencies", test_two_latencies, 0}, {"equal_join", test_equal_join, 0},
                                {"three_share", test_three_share, 0},     {"gates", test_gates, 0},
                                {"gate_chain", test_gate_chain, 0},       {"count", test_count, 0},
                                {"zero", test_zero, 0},                   {"precision", test_precision, 0},
                                {"cycle", test_cycle, 0},                 {"rerun", test_rerun, 0},
                                {"fold_shared", test_fold_shared, 0},     {"fold_refused", test_fold_refused, 0},
                                {"fold_ring", test_fold_ring, 0},         {"fold_gates", test_fold_gates, 0},
                                {"fold_matches_whole", test_fold_matches_whole, 0}};
  return dt_test_run(dt_test_suite("solve", cases, sizeof cases / sizeof cases[0], 60));
}
