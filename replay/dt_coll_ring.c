/* Rings (DESIGN.md §6, docs/replay.md): all-reduce (reduce-scatter then all-gather, 2(n-1) steps of S/n),
 * reduce-scatter and all-gather ((n-1) steps), the bytes split evenly over the platform's channels, each
 * channel its own ring (dt_coll_common.c builds them so that the channels use every NIC of a node). A hop
 * between nodes whose NICs are on different rails goes through a PXN relay when the shape has one. */
#include "dt_coll.h"

#include "../common/dt_util.h"

#include <stdlib.h>

/* Largest per-step protocol latency over the channels' hops. */
static double ring_hop(const rp_inst *x)
{
  const rp_gshape *s = x->gs;
  return s->nnodes > 1 ? (x->net_hop > x->hop ? x->net_hop : x->hop) : x->hop;
}

/* One exchange of `bytes` per channel: this member's sends (to its successor, or to the relay of its hop), the
 * sends it relays, and the receives (from its predecessor and of the hops it relays). closed: wait for it in
 * closed form (the group's ring_cf) instead, together with x->lead before it and `rest` after it. */
static void ring_exchange(const rp_inst *x, double bytes, int closed, double rest)
{
  const rp_gshape *s = x->gs;
  int32_t n = s->n, C = s->nchannels;
  rp_send *sends = dt_xmalloc(sizeof *sends * (size_t)C * 2);
  int32_t *tags = dt_xmalloc(sizeof *tags * (size_t)C * 2);
  size_t ns = 0, nr = 0;
  for (int32_t ch = 0; ch < C; ch++) {
    size_t base = (size_t)ch * n;
    int32_t k = s->pos[base + x->i];
    int32_t next = s->order[base + (k + 1) % n];
    int32_t px = s->pxn_proxy[base + k];
    if (px >= 0)
      sends[ns++] = (rp_send){px, C + ch, bytes};
    else
      sends[ns++] = (rp_send){next, ch, bytes};
    tags[nr++] = ch;
    int32_t rk = s->relay[base + x->i];
    if (rk >= 0) { /* relay: receive the hop's data over NVLink, send it on over this member's NIC */
      tags[nr++] = C + ch;
      sends[ns++] = (rp_send){s->order[base + (rk + 1) % n], ch, bytes};
    }
  }
  if (closed)
    rp_closed_wait(x, sends, ns, s->ring_cf_lat, s->ring_cf_rate, x->lead, rest);
  else
    rp_xfer(x, sends, ns, tags, nr);
  free(sends);
  free(tags);
}

size_t rp_ring_inter_steps(const rp_gshape *gs, int allreduce)
{
  if (gs->nnodes <= 1)
    return 0;
  return (size_t)(allreduce ? 2 * (gs->nnodes - 1) : gs->nnodes - 1);
}

void rp_ring_run(const rp_inst *x, rp_ring_plan plan)
{
  size_t steps = plan.steps;
  double per_channel = plan.chunk / x->gs->nchannels;
  if (x->fid == DT_FIDELITY_STEP) {
    /* the teaching model: every step waits for its slowest hop, and pays the largest per-step latency */
    double h = ring_hop(x);
    for (size_t s = 0; s < steps; s++) {
      ring_exchange(x, per_channel, 0, 0);
      rp_sleep(h);
    }
    return;
  }
  /* flow: one aggregated flow per channel and neighbour carrying every step's bytes (its own route latency is
   * the first step's), then the latency of the other steps (rp_ring_rest, the same charge as auto's estimate).
   * Textbook: the largest hop latency of the rings. NCCL model: NCCL pipelines a ring, a chunk's latency is the
   * sum of the hops it crosses, so each step costs the mean hop latency; the protocol's per-step costs split as
   * NCCL's tuner splits them, `inter` network steps and the rest NVLink (src/graph/tuning.cc). Both are exact
   * when all hops are alike. */
  rp_costs k = {x->fixed, x->hop, x->net_hop, x->eff};
  double rest = rp_ring_rest(x->gs, plan, k, x->c->p->nccl);
  if (x->gs->ring_cf) {
    /* exact shortcut: nothing else shares the ring's links and every flow has the same share. The latency paid
     * once (x->lead, not slept by rp_collective_run), the exchange and the other steps' latency are one wait. */
    ring_exchange(x, per_channel * (double)steps, 1, rest);
    if (x->i == 0)
      x->c->closed_instances[x->op->kind]++;
    return;
  }
  ring_exchange(x, per_channel * (double)steps, 0, 0);
  rp_sleep(rest);
}

void rp_subring_run(const rp_inst *x, const int32_t *members, int32_t m, int32_t self, size_t steps, double chunk,
                    int32_t tag)
{
  if (m <= 1 || steps == 0)
    return;
  int32_t next = members[(self + 1) % m];
  double amax = 0, h = 0;
  for (int32_t k = 0; k < m; k++) {
    double a = rp_alpha(x, members[k], members[(k + 1) % m]), hk = rp_hop(x, members[k], members[(k + 1) % m]);
    if (a > amax)
      amax = a;
    if (hk > h)
      h = hk;
  }
  rp_send snd = {next, tag, chunk};
  if (x->fid == DT_FIDELITY_STEP) {
    for (size_t s = 0; s < steps; s++) {
      rp_xfer(x, &snd, 1, &tag, 1);
      rp_sleep(h);
    }
    return;
  }
  snd.bytes = chunk * (double)steps;
  rp_xfer(x, &snd, 1, &tag, 1);
  rp_sleep((double)(steps - 1) * amax + (double)steps * h);
}
