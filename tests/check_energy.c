/* Unit tests for replay/dt_energy.c: energy and cost per iteration from hand-made replay statistics (no
 * simulation), each expected value computed by hand in the comments. */
#include "dt_test.h"
#include "platforms/dt_topology.h"
#include "replay/dt_energy.h"
#include "replay/dt_linkload.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define REL_EQ(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-12 * fabs(b), "%s = %.17g, expected %.17g", #a, (a), (b))

/* Statistics of a run of n ranks with the given compute times and makespan, one iteration (no marks). */
typedef struct fake_run {
  dt_stats s;
  dt_rank_stats ranks[8];
  double iters[4];
  dt_linkstats links;
  dt_link_load load[8];
} fake_run;

static void fake(fake_run *f, int n, const double *compute, double makespan)
{
  memset(f, 0, sizeof *f);
  f->s.makespan_s = makespan;
  f->s.nranks = n;
  f->s.per_rank = f->ranks;
  for (int r = 0; r < n; r++)
    f->ranks[r].compute_s = compute[r];
  f->iters[0] = makespan;
  f->s.niterations = 1;
  f->s.iterations_s = f->iters;
}

static void add_link(fake_run *f, dt_link_class cls, double bytes, double bandwidth)
{
  dt_link_load *l = &f->load[f->links.nlinks++];
  l->cls = cls;
  l->bytes = bytes;
  l->bandwidth = bandwidth;
  f->links.links = f->load;
  f->s.links = &f->links;
}

/* One node of 4 GPUs, 3 ranks computing 1, 2 and 3 ms in a 4 ms run, idle 60 W, busy 700 W:
 * compute 700 x 6e-3 = 4.2 J; idle 60 x (4 x 4e-3 - 6e-3) = 0.6 J (GPU 3 has no rank: idle all 4 ms). */
START_TEST(test_compute_only)
{
  dt_platform p = dt_test_platform(1, 4);
  p.gpu_power = (dt_power_figures){1, 60, 700, 60, 0};
  dt_trace *t = dt_trace_new(3);
  fake_run f;
  fake(&f, 3, (double[]){1e-3, 2e-3, 3e-3}, 4e-3);
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.present, 1);
  ck_assert_int_eq(e.gpus, 4);
  ck_assert_int_eq(e.gpus_without_rank, 1);
  ck_assert_int_eq(e.nics, 0);
  ck_assert_int_eq(e.switches, 0);
  REL_EQ(e.gpu_busy_s, 6e-3);
  REL_EQ(e.gpu_compute_J, 4.2);
  REL_EQ(e.gpu_idle_J, 0.6);
  REL_EQ(e.iteration_J, 4.8);
  REL_EQ(e.run_J, 4.8);
  REL_EQ(e.mean_power_W, 4.8 / 4e-3); /* 1200 W */
  ck_assert(e.tokens == 0 && e.token_J == 0);
  ck_assert_int_eq(e.nic_figures, 0);
  ck_assert_int_eq(e.switch_figures, 0);

  /* two marked iterations of 1 ms and 3 ms: the mean iteration, 2 ms, is half the run */
  f.iters[0] = 1e-3;
  f.iters[1] = 3e-3;
  f.s.niterations = 2;
  dt_energy_compute(&p, t, &f.s, &e);
  REL_EQ(e.run_J, 4.8);
  REL_EQ(e.iteration_J, 2.4);
  REL_EQ(e.gpu_compute_J, 2.1);

  /* no gpu.power: nothing */
  p.gpu_power.present = 0;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.present, 0);
  ck_assert(e.iteration_J == 0);
  dt_trace_free(t);
}
END_TEST

/* Two nodes of 1 GPU, one NIC each, one switch (2 ports: one per NIC). NICs idle 10 W busy 30 W, the switch
 * idle 100 W busy 300 W, makespan 0.2 s. GPU 0 sends 1e9 bytes to GPU 1 at 1e10 B/s: nic0.0 up and nic1.0 down
 * 0.1 s each at full rate, and the two NIC cables' directions into and out of the switch 0.1 s each.
 *   NIC static 2 x 10 x 0.2 = 4 J, NIC load (30 - 10) x (0.1 + 0.1) / 2 = 2 J,
 *   switch static 100 x 0.2 = 20 J, switch load (300 - 100) x (0.1 + 0.1) / (2 x 2 ports) = 10 J. */
START_TEST(test_nic_switch_load)
{
  dt_platform p = dt_test_platform(2, 1);
  p.nics_per_node = 1;
  p.nic_bandwidth = 1e10;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 1e10;
  p.gpu_power = (dt_power_figures){1, 0, 0, 0, 0};
  p.nic_power = (dt_power_figures){1, 10, 30, 10, 0};
  p.switch_power = (dt_power_figures){1, 100, 300, 100, 0};
  dt_trace *t = dt_trace_new(2);
  fake_run f;
  fake(&f, 2, (double[]){0, 0}, 0.2);
  add_link(&f, DT_LC_GPU_NIC, 1e9, 1e10);
  add_link(&f, DT_LC_NIC_SWITCH, 1e9, 1e10);
  add_link(&f, DT_LC_NIC_SWITCH, 1e9, 1e10);
  add_link(&f, DT_LC_GPU_NIC, 1e9, 1e10);
  add_link(&f, DT_LC_NVSWITCH_PORT, 5e9, 1e10); /* inside a node: neither a NIC nor a switch port */
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.nics, 2);
  ck_assert_int_eq(e.switches, 1);
  ck_assert_int_eq(e.switch_ports, 2);
  ck_assert_int_eq(e.load_terms, 1);
  REL_EQ(e.nic_static_J, 4.0);
  REL_EQ(e.nic_load_J, 2.0);
  REL_EQ(e.switch_static_J, 20.0);
  REL_EQ(e.switch_load_J, 10.0);
  REL_EQ(e.iteration_J, 36.0);

  /* a direction's time at full rate is capped at the makespan: 1e10 bytes would be 1 s */
  f.load[0].bytes = 1e10;
  dt_energy_compute(&p, t, &f.s, &e);
  REL_EQ(e.nic_load_J, 20 * (0.2 + 0.1) / 2);

  /* without the per-link accounting (--no-links) the load terms are left out and said to be */
  f.s.links = NULL;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.load_terms, 0);
  ck_assert(e.nic_load_J == 0 && e.switch_load_J == 0);
  REL_EQ(e.iteration_J, 24.0);

  /* constant powers need no accounting */
  p.nic_power = (dt_power_figures){1, 25, 25, 25, 0};
  p.switch_power = (dt_power_figures){1, 1700, 1700, 1700, 0};
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.load_terms, 1);
  REL_EQ(e.iteration_J, 2 * 25 * 0.2 + 1700 * 0.2);
  dt_trace_free(t);
}
END_TEST

/* A 2-level fat-tree of radix 4 (1:1: 2 down, 2 up ports), 4 nodes of one NIC: 2 leaves, 2 spines, 4 switches of 4
 * ports. One leaf-spine direction busy 0.1 s at full rate leaves one switch and enters another: 2 port directions,
 * (busy - idle) x 2 x 0.1 / (2 x 4) = 200 x 0.025 = 5 J. */
START_TEST(test_fat_tree_ports)
{
  dt_platform p = dt_test_platform(4, 1);
  p.nics_per_node = 1;
  p.nic_bandwidth = 1e10;
  p.topology = DT_NET_FAT_TREE;
  p.levels = 2;
  p.radix = 4;
  p.oversubscription = 1;
  p.link_bandwidth = 1e10;
  p.gpu_power = (dt_power_figures){1, 0, 0, 0, 0};
  p.switch_power = (dt_power_figures){1, 100, 300, 100, 0};
  dt_trace *t = dt_trace_new(4);
  fake_run f;
  fake(&f, 4, (double[]){0, 0, 0, 0}, 1.0);
  add_link(&f, DT_LC_LEAF_SPINE, 1e9, 1e10);
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.switches, 4);
  ck_assert_int_eq(e.switch_ports, 4);
  ck_assert_int_eq(e.nic_figures, 0);
  ck_assert_int_eq(e.nics, 0); /* no NIC figures: not counted */
  REL_EQ(e.switch_static_J, 400.0);
  REL_EQ(e.switch_load_J, 5.0);
  dt_trace_free(t);
}
END_TEST

/* gpu.power.comm: 2 GPUs in a 10 ms run; rank 0 computes 4 ms and communicates 3 ms beside no compute
 * (exposed_comm_s), rank 1 computes 2 ms and communicates 9 ms exposed (capped at 10 - 2 = 8 ms). idle 50 W, comm
 * 150 W, busy 400 W: compute 400 x 6e-3 = 2.4 J, comm 150 x (3 + 8) ms = 1.65 J, idle 50 x (20 - 6 - 11) ms =
 * 0.15 J. Without comm figures the 11 ms are idle: 50 x 14 ms = 0.7 J. */
START_TEST(test_gpu_comm)
{
  dt_platform p = dt_test_platform(1, 2);
  p.gpu_power = (dt_power_figures){1, 50, 400, 150, 1};
  dt_trace *t = dt_trace_new(2);
  fake_run f;
  fake(&f, 2, (double[]){4e-3, 2e-3}, 10e-3);
  f.ranks[0].exposed_comm_s = 3e-3;
  f.ranks[1].exposed_comm_s = 9e-3;
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.gpu_comm, 1);
  REL_EQ(e.gpu_comm_s, 11e-3);
  REL_EQ(e.gpu_compute_J, 2.4);
  REL_EQ(e.gpu_comm_J, 1.65);
  REL_EQ(e.gpu_idle_J, 0.15);
  REL_EQ(e.iteration_J, 4.2);
  p.gpu_power = (dt_power_figures){1, 50, 400, 50, 0};
  dt_energy_compute(&p, t, &f.s, &e);
  ck_assert_int_eq(e.gpu_comm, 0);
  REL_EQ(e.gpu_comm_s, 11e-3); /* still reported */
  ck_assert(e.gpu_comm_J == 0);
  REL_EQ(e.gpu_idle_J, 0.7);
  dt_trace_free(t);
}
END_TEST

/* Tokens: the generator's `meta parallel=` line gives global_batch x seq; `meta tokens_per_iteration=` wins. */
START_TEST(test_tokens)
{
  dt_trace *t = dt_trace_new(1);
  ck_assert(dt_energy_tokens(t) == 0);
  dt_trace_add_meta(t, "parallel", "tp=1 pp=1 dp=1 cp=1 zero=0 sp=0 recompute=none schedule=1f1b virtual_stages=1 "
                                   "microbatch=2 global_batch=16 microbatches=8 seq=2048 dtype=bf16 experts=0 ep=1");
  REL_EQ(dt_energy_tokens(t), 16.0 * 2048);
  dt_platform p = dt_test_platform(1, 1);
  p.gpu_power = (dt_power_figures){1, 100, 500, 100, 0};
  fake_run f;
  fake(&f, 1, (double[]){0.5}, 1.0);
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  /* 500 x 0.5 + 100 x 0.5 = 300 J over 32768 tokens */
  REL_EQ(e.iteration_J, 300.0);
  REL_EQ(e.token_J, 300.0 / 32768);
  dt_trace_add_meta(t, "tokens_per_iteration", "1000");
  REL_EQ(dt_energy_tokens(t), 1000.0);
  dt_trace_free(t);
  t = dt_trace_new(1);
  dt_trace_add_meta(t, "tokens_per_iteration", "many");
  ck_assert(dt_energy_tokens(t) == 0);
  dt_trace_free(t);
}
END_TEST

/* Cost of a 2 s iteration on the single-switch platform of test_nic_switch_load (2 GPUs, 2 NICs, 1 switch) at
 * 2.5 per GPU-hour, 0.1 per NIC-hour, 1 per switch-hour, 0.2 per kWh:
 *   hours = 2 / 3600; GPUs 2 x 2.5 x hours = 10/3600, NICs 2 x 0.1 x hours = 0.4/3600, switch 1 x hours = 2/3600;
 *   energy: 100 W GPUs busy all along -> 2 x 100 x 2 = 400 J = 400 / 3.6e6 kWh x 0.2. */
START_TEST(test_cost)
{
  dt_platform p = dt_test_platform(2, 1);
  p.nics_per_node = 1;
  p.nic_bandwidth = 1e10;
  p.topology = DT_NET_SINGLE_SWITCH;
  p.link_bandwidth = 1e10;
  p.cost = (dt_cost_figures){1, "EUR", 2.5, 0.1, 1.0, 0.2};
  dt_trace *t = dt_trace_new(2);
  fake_run f;
  fake(&f, 2, (double[]){2, 2}, 2.0);
  dt_cost c;
  dt_energy_cost(&p, t, &f.s, NULL, &c); /* no power figures: no energy term */
  ck_assert_int_eq(c.present, 1);
  ck_assert_str_eq(c.currency, "EUR");
  REL_EQ(c.gpu, 10.0 / 3600);
  REL_EQ(c.nic, 0.4 / 3600);
  REL_EQ(c.sw, 2.0 / 3600);
  ck_assert(c.energy == 0);
  REL_EQ(c.iteration, 12.4 / 3600);
  ck_assert(c.million_tokens == 0);

  p.gpu_power = (dt_power_figures){1, 100, 100, 100, 0};
  dt_energy e;
  dt_energy_compute(&p, t, &f.s, &e);
  REL_EQ(e.iteration_J, 400.0);
  dt_trace_add_meta(t, "tokens_per_iteration", "4000");
  dt_energy_cost(&p, t, &f.s, &e, &c);
  REL_EQ(c.energy, 400.0 / 3.6e6 * 0.2);
  REL_EQ(c.iteration, 12.4 / 3600 + 400.0 / 3.6e6 * 0.2);
  REL_EQ(c.million_tokens, c.iteration / 4000 * 1e6);

  p.cost.present = 0;
  dt_energy_cost(&p, t, &f.s, &e, &c);
  ck_assert_int_eq(c.present, 0);
  dt_trace_free(t);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"compute_only", test_compute_only, 1},
      {"nic_switch_load", test_nic_switch_load, 1},
      {"fat_tree_ports", test_fat_tree_ports, 1},
      {"gpu_comm", test_gpu_comm, 1},
      {"tokens", test_tokens, 1},
      {"cost", test_cost, 1},
  };
  return dt_test_run(dt_test_suite("energy", cases, sizeof cases / sizeof cases[0], 0));
}
