/* The chain pattern of broadcast and reduce (DESIGN.md §6): each channel's ring order rotated to start at the
 * root (group order without the NCCL model), the bytes split over the channels, every hop streaming at once.
 * Its plan (dt_coll_plan.c) is one step pipelined over the n - 1 hops:
 *   flow: the hops' flows, then (n-2) alpha + (n-1) h of pipeline fill              -> (n-1) (alpha + h) + S/B
 *   step: the hops' flows, h, then the last chunk's latency walks the chain as zero-byte messages over the real
 *         routes, n-2 hops
 * alpha is the largest hop latency of the chain (flow) or each hop's own (step). */
#include "dt_coll.h"

#define TAG_WALK 1800

/* The member at chain position q of channel ch (position 0 is the root). */
static int32_t at(const rp_inst *x, int ch, int32_t root, int32_t q)
{
  const rp_gshape *s = x->gs;
  int32_t n = s->n;
  int32_t k0 = s->pos[(size_t)ch * n + root];
  return s->order[(size_t)ch * n + (k0 + q) % n];
}

static int32_t root_of(const rp_inst *x)
{
  return x->op->root >= 0 && x->op->root < x->n ? x->op->root : 0;
}

/* arg 0: broadcast, q -> q+1; arg 1: reduce, q+1 -> q, ending at the root. */
void rp_list_chain(const rp_inst *x, const rp_phase *ph, rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t n = x->n, C = s->nchannels, root = root_of(x);
  int toward_root = ph->arg;
  double bytes = ph->bytes / C;
  double amax = 0, h = 0;
  for (int ch = 0; ch < C; ch++) {
    int32_t k0 = s->pos[(size_t)ch * n + root];
    int32_t q = (s->pos[(size_t)ch * n + x->i] - k0 + n) % n;
    if (!toward_root) {
      if (q < n - 1)
        L->sends[L->ns++] = (rp_send){at(x, ch, root, q + 1), ph->tag + ch, bytes};
      if (q > 0)
        L->tags[L->nr++] = ph->tag + ch;
    } else {
      if (q > 0)
        L->sends[L->ns++] = (rp_send){at(x, ch, root, q - 1), ph->tag + ch, bytes};
      if (q < n - 1)
        L->tags[L->nr++] = ph->tag + ch;
    }
  }
  for (int32_t q = 0; q + 1 < n; q++) { /* channel 0's hops (all channels' are alike in the estimates) */
    int32_t a = at(x, 0, root, q), b = at(x, 0, root, q + 1);
    double l = toward_root ? rp_alpha(x, b, a) : rp_alpha(x, a, b), hh = rp_hop(x, a, b);
    if (l > amax)
      amax = l;
    if (hh > h)
      h = hh;
  }
  L->alpha = amax;
  L->h = h;
}

/* step: the walk from the chain's start to its end over channel 0, n-2 hops after the first (h already paid). */
void rp_walk_chain(const rp_inst *x, const rp_phase *ph, const rp_listing *L)
{
  const rp_gshape *s = x->gs;
  int32_t n = x->n, root = root_of(x);
  int toward_root = ph->arg;
  double amax = L->alpha, h = L->h;
  int32_t q = (s->pos[x->i] - s->pos[root] + n) % n;
  int32_t hop = toward_root ? n - 1 - q : q; /* distance from the start of the walk */
  if (n <= 2)
    return;
  if (hop >= 2) {
    int32_t t = TAG_WALK;
    rp_xfer(x, NULL, 0, &t, 1);
  }
  if (hop >= 1 && hop < n - 1) {
    rp_sleep(h);
    int32_t next = toward_root ? at(x, 0, root, q - 1) : at(x, 0, root, q + 1);
    rp_send snd = {next, TAG_WALK, 0};
    rp_xfer(x, &snd, 1, NULL, 0);
  }
  /* members the walk has passed are held for its remaining hops, so that every member completes with the
   * last chunk (DESIGN.md §7 times an instance by its last member) */
  int32_t covered = hop < 1 ? 0 : hop < n - 2 ? hop : n - 2;
  rp_sleep((double)(n - 2 - covered) * (amax + h));
}
