/* Energy and cost of one replay (docs/whatif.md "Energy per iteration", "Cost per iteration"): a closed
 * computation from the platform's power and price figures and dtsim's own accounting of the replay -- each rank's
 * compute time (dt_rank_stats.compute_s) and each link direction's bytes (replay/dt_linkload.h). SimGrid's host
 * energy plugin is not used: dtsim's computes are timed waits, not executions at a pstate, so the plugin would see
 * idle hosts; its link energy plugin's formula (power = idle + (busy - idle) x usage / bandwidth) is the one the
 * load terms below integrate, from the same per-link bytes the report shows. */
#ifndef DT_ENERGY_H
#define DT_ENERGY_H

#include "../platforms/dt_platform.h"
#include "../traces/dt_trace.h"
#include "dt_stats.h"

/* The energy of a run and of its mean iteration, in joules; every *_J term is per iteration. */
typedef struct dt_energy {
  int present;              /* 1 when the platform has gpu.power (then the fields below are filled) */
  int nic_figures;          /* nics.power was given (else the NIC terms are 0 and not modelled) */
  int switch_figures;       /* network.switch_power was given */
  int load_terms;           /* 1: the NIC and switch load terms were computed from the per-link accounting; 0: a
                               load term was configured (busy > idle) but the accounting was off (--no-links) */
  long gpus;                /* GPUs of the platform (nodes x gpus_per_node), all of them counted */
  long gpus_without_rank;   /* of them, those the trace leaves idle for the whole run */
  long nics;                /* NICs of the platform (nodes x nics.per_node when nics is given) */
  long switches;            /* switches of the fabric dtsim builds (dt_fabric_shape), 0 on one node */
  int switch_ports;         /* ports per switch used for the switch load term */
  double makespan_s;        /* the run */
  double iteration_s;       /* mean iteration (mean of iterations_s) */
  double gpu_busy_s;        /* sum over ranks of the compute time (union of compute intervals), s */
  int gpu_comm;             /* gpu.power.comm was given: the GPU comm term is split from the idle one */
  double gpu_comm_s;        /* sum over ranks of the communication not covered by compute (exposed_comm_s), s */
  double run_J;             /* whole run, all terms */
  double mean_power_W;      /* run_J / makespan_s */
  double iteration_J;       /* mean_power_W x iteration_s: the energy of one mean iteration */
  double gpu_compute_J;     /* gpu.power.busy x compute time */
  double gpu_comm_J;        /* gpu.power.comm x exposed communication time (0 unless gpu_comm) */
  double gpu_idle_J;        /* gpu.power.idle x (every GPU's makespan - its compute time [- its exposed comm]) */
  double nic_static_J;      /* nics x nics.power.idle x time */
  double nic_load_J;        /* (busy - idle) x the NICs' time at full rate */
  double switch_static_J;   /* switches x switch_power.idle x time */
  double switch_load_J;     /* (busy - idle) x the switch ports' time at full rate / ports per switch */
  double tokens;            /* tokens per iteration (global batch x sequence length), 0 when unknown */
  double token_J;           /* iteration_J / tokens, 0 when tokens is 0 */
} dt_energy;

/* The cost of one mean iteration, in the platform's cost.currency. */
typedef struct dt_cost {
  int present;              /* 1 when the platform has a cost section */
  const char *currency;     /* borrowed from the platform */
  double iteration;         /* per iteration: gpus, NICs, switches at their hourly prices + energy at energy_kwh */
  double gpu, nic, sw, energy; /* its terms */
  double million_tokens;    /* iteration / tokens x 1e6, 0 when tokens are unknown */
} dt_cost;

/* Tokens per iteration of a trace: a `meta tokens_per_iteration=N` line, else the generator's `meta parallel=`
 * line's global_batch x seq (traces/dt_gen.c). Returns 0 when the trace says neither. */
double dt_energy_tokens(const dt_trace *t);

/* Computes the energy of the replay s of trace t on platform p (docs/whatif.md gives every formula):
 *   GPU compute  = busy x sum over ranks of compute_s (each capped at the makespan)
 *   GPU comm     = comm x sum over ranks of exposed_comm_s (capped at the makespan less compute_s), only with
 *                  gpu.power.comm (without it that time is idle)
 *   GPU idle     = idle x (gpus x makespan - those sums): GPUs without a rank are idle all along
 *   NIC static   = nics x idle x makespan; NIC load = (busy - idle) x sum over NIC directions of
 *                  min(bytes / bandwidth, makespan) / 2 (a NIC's load is the mean of its two directions)
 *   switch static = switches x idle x makespan; switch load = (busy - idle) x sum over the switch port directions
 *                  the cables touch of min(bytes / bandwidth, makespan) / (2 x ports per switch)
 * then scales every term to one mean iteration (x iteration_s / makespan_s). Without gpu.power *out is zeroed
 * (present 0). Never fails; a zero makespan gives zeros. */
void dt_energy_compute(const dt_platform *p, const dt_trace *t, const dt_stats *s, dt_energy *out);

/* Cost of one mean iteration of trace t's replay s from the platform's cost section and e (NULL or absent when
 * the platform has no power figures: then energy_kwh is 0, as the loader ensures):
 *   iteration_s / 3600 x (gpus x gpu_hour + nics x nic_hour + switches x switch_hour)
 *   + iteration_J / 3.6e6 x energy_kwh
 * per million tokens: that / t's tokens (dt_energy_tokens) x 1e6. Without a cost section *out is zeroed (present 0). */
void dt_energy_cost(const dt_platform *p, const dt_trace *t, const dt_stats *s, const dt_energy *e, dt_cost *out);

#endif
