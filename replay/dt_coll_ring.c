/* The ring pattern (DESIGN.md §6, docs/replay.md): every channel its own ring over the group (dt_coll_common.c
 * builds them so that the channels use every NIC of a node), the bytes of a step split evenly over the channels.
 * A hop between nodes whose NICs are on different rails goes through a PXN relay when the shape has one. The
 * ring plans (dt_coll_plan.c) run it 2(n-1) steps of S/n (all-reduce) or n-1 steps (reduce-scatter, all-gather). */
#include "dt_coll.h"

#include "../common/dt_util.h"

size_t rp_ring_inter_steps(const rp_gshape *gs, int allreduce)
{
  if (gs->nnodes <= 1)
    return 0;
  return (size_t)(allreduce ? gs->ring_ar_inter : gs->nnodes - 1);
}

/* One step per channel: this member's send (to its successor, or to the relay of its hop), the send it relays,
 * and the receives (from its predecessor and of the hop it relays). Flow fidelity charges each later step the
 * rings' largest hop latency on a textbook platform and their mean on the NCCL model (NCCL pipelines a ring: a
 * chunk's latency is the sum of the hops it crosses), step fidelity the largest per-step latency. */
int rp_closed_ring(const rp_gshape *gs)
{
  return gs->ring_cf;
}

void rp_list_ring(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t n = s->n, C = s->nchannels;
  double bytes = ph->bytes / C;
  for (int32_t ch = 0; ch < C; ch++) {
    size_t base = (size_t)ch * n;
    int32_t k = s->pos[base + x->i];
    int32_t next = s->order[base + (k + 1) % n];
    int32_t px = s->pxn_proxy[base + k];
    if (px >= 0)
      L->sends[L->ns++] = (rp_send){px, ph->tag + C + ch, bytes};
    else
      L->sends[L->ns++] = (rp_send){next, ph->tag + ch, bytes};
    L->tags[L->nr++] = ph->tag + ch;
    int32_t rk = s->relay[base + x->i];
    if (rk >= 0) { /* relay: receive the hop's data over NVLink, send it on over this member's NIC */
      L->tags[L->nr++] = ph->tag + C + ch;
      L->sends[L->ns++] = (rp_send){s->order[base + (rk + 1) % n], ph->tag + ch, bytes};
    }
  }
  L->alpha = x->c->p->nccl ? s->ring_alpha_mean : s->ring_alpha;
  L->h = s->nnodes > 1 ? (x->net_hop > x->hop ? x->net_hop : x->hop) : x->hop;
  /* exact shortcut (dt_coll_closed.c): nothing else shares the ring's links and every flow has the same share;
   * the fixed latency, the exchange and the other steps' latency are one wait */
  if (x->fid == DT_FIDELITY_FLOW && rp_closed_ring(s)) {
    L->closed = L->merge = 1;
    L->cf_lat = s->ring_cf_lat;
    L->cf_rate = s->ring_cf_rate;
    L->cf_bytes = bytes;
  }
}

void rp_ring_flows(const rp_gshape *gs, int32_t **src, int32_t **dst, size_t *nflows)
{
  int32_t n = gs->n;
  size_t nf = (size_t)n * gs->nchannels;
  *src = dt_xmalloc(sizeof **src * (nf + 1));
  *dst = dt_xmalloc(sizeof **dst * (nf + 1));
  for (size_t k = 0; k < nf; k++) {
    size_t ch = k / (size_t)n, q = k % (size_t)n;
    (*src)[k] = gs->order[ch * n + q];
    (*dst)[k] = gs->order[ch * n + (q + 1) % n];
  }
  *nflows = nf;
}
