/* What the collective algorithms share: mailboxes per (instance, member, tag), the exchange primitive that
 * applies the protocol's efficiency, the per-group shape (members per node, ring orders per channel, PXN
 * relays) built once per group, and the record of the algorithms chosen, for the report's notes. */
#include "dt_coll.h"
#include "dt_coll_solve.h"

#include "../common/dt_util.h"
#include "dt_linkload.h"
#include "dt_timeline.h"
#include "dt_sg_flight.h"
#include "dt_sg_platform.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/comm.h>
#include <simgrid/mailbox.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per (kind, algorithm, protocol): instances and their byte range, for the notes. */
typedef struct choice_stat {
  uint64_t count, min_bytes, max_bytes;
} choice_stat;

/* Mailboxes already looked up, by (instance id, member, tag): sg_mailbox_by_name is a simcall behind a name
 * built with snprintf, so each is looked up once and kept (SimGrid keeps every mailbox for the run anyway). */
typedef struct mbox_cache {
  uint64_t *keys;       /* key + 1, 0: empty slot */
  sg_mailbox_t *boxes;
  size_t cap, n;        /* open addressing, linear probing, cap a power of two */
} mbox_cache;

typedef struct rp_coll {
  rp_gshape **shape; /* per group, NULL until used */
  uint8_t *exclusive; /* per group (rp_closed_exclusive: 0, 1 every instance, 2 some), NULL with --exact */
  uint64_t **busy;    /* per group, the instances of a group with exclusive 2 that are not (rp_closed_busy) */
  rp_gshape **shared; /* per group with exclusive 2: its shape without shortcuts, for those instances */
  rp_sep_need need;   /* what those instances wait for to be separated at run time (rp_closed_ready) */
  mbox_cache boxes;
  uint32_t *link_count; /* rp_link_scratch, allocated on first use */
  choice_stat choices[DT_OP_COUNT][DT_ALGO_COUNT][DT_PROTO_COUNT + 1]; /* last protocol column: none */
} rp_coll;

/* Flows carry no data; every put sends the address of this byte and nobody frees it. */
static char payload_token;

void rp_coll_init(rp_ctx *c)
{
  c->coll = dt_xcalloc(1, sizeof *c->coll);
  c->coll->shape = dt_xcalloc(c->t->ngroups + 1, sizeof *c->coll->shape);
  c->comm_active = dt_xcalloc((size_t)(c->t->nranks > 0 ? c->t->nranks : 1), sizeof *c->comm_active);
  if (!c->exact)
    c->coll->exclusive = rp_closed_exclusive(c, &c->coll->busy, &c->coll->need);
}

static void gshape_free(rp_gshape *s)
{
  if (!s)
    return;
  free(s->node_of);
  free(s->local);
  free(s->node_first);
  free(s->by_node);
  free(s->order);
  free(s->pos);
  free(s->pxn_proxy);
  free(s->relay);
  free(s);
}

uint32_t *rp_link_scratch(const rp_ctx *c)
{
  if (!c->coll->link_count)
    c->coll->link_count = dt_xcalloc(dt_topology_link_count(c->topo) * 2 + 1, sizeof *c->coll->link_count);
  return c->coll->link_count;
}

int rp_group_exclusive(const rp_ctx *c, int32_t g)
{
  return c->coll && c->coll->exclusive && g >= 0 && (size_t)g < c->t->ngroups && c->coll->exclusive[g] == 1;
}

/* Whether some instances of group g are exclusive (exclusive 1 or 2). */
static int group_exclusive_some(const rp_ctx *c, int32_t g)
{
  return c->coll && c->coll->exclusive && g >= 0 && (size_t)g < c->t->ngroups && c->coll->exclusive[g] != 0;
}

int rp_closed_ready(const rp_ctx *c, int32_t g, int64_t k)
{
  if (!c->coll || !c->coll->exclusive || !c->stream_done || g < 0 || (size_t)g >= c->t->ngroups ||
      c->coll->exclusive[g] != 2 || !rp_closed_busy(c->coll->busy[g], k) || !c->coll->need.off)
    return 0;
  const rp_sep_need *nd = &c->coll->need;
  const dt_group *gr = &c->t->groups[g];
  for (size_t i = 0; i < gr->nranks; i++) {
    int32_t r = gr->ranks[i];
    size_t lo = nd->off[r], hi = nd->off[r + 1];
    while (lo < hi) { /* the member's first entry of (g, k) */
      size_t mid = lo + (hi - lo) / 2;
      const struct rp_need *e = &nd->e[mid];
      if (e->g < g || (e->g == g && e->k < k))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (; lo < nd->off[r + 1] && nd->e[lo].g == g && nd->e[lo].k == k; lo++)
      if (c->stream_done[c->rank_stream0[r] + (size_t)nd->e[lo].q] < nd->e[lo].need)
        return 0;
  }
  return 1;
}

const rp_gshape *rp_gshape_inst(rp_ctx *c, int32_t g, int64_t match)
{
  const rp_gshape *s = rp_gshape_of(c, g);
  if (!c->coll->exclusive || c->coll->exclusive[g] != 2 || !rp_closed_busy(c->coll->busy[g], match))
    return s;
  if (!c->coll->shared)
    c->coll->shared = dt_xcalloc(c->t->ngroups + 1, sizeof *c->coll->shared);
  if (!c->coll->shared[g]) { /* the same arrays (owned by the group's shape), no shortcut */
    rp_gshape *v = dt_xmalloc(sizeof *v);
    *v = *s;
    v->excl = v->ring_cf = v->a2a_cf = v->tree_cf[0] = v->tree_cf[1] = 0;
    c->coll->shared[g] = v;
  }
  return c->coll->shared[g];
}

void rp_coll_free(rp_ctx *c)
{
  rp_solve_free(c);
  free(c->fold_cls);
  free(c->fold_idx);
  free(c->fold_gimg);
  c->fold_cls = c->fold_idx = c->fold_gimg = NULL;
  if (c->coll) {
    for (size_t g = 0; g < c->t->ngroups; g++)
      gshape_free(c->coll->shape[g]);
    free(c->coll->shape);
    free(c->coll->exclusive);
    for (size_t g = 0; c->coll->busy && g < c->t->ngroups; g++)
      free(c->coll->busy[g]);
    free(c->coll->busy);
    for (size_t g = 0; c->coll->shared && g < c->t->ngroups; g++)
      free(c->coll->shared[g]);
    free(c->coll->shared);
    rp_sep_need_free(&c->coll->need);
    free(c->coll->link_count);
    free(c->coll->boxes.keys);
    free(c->coll->boxes.boxes);
    free(c->coll);
    c->coll = NULL;
  }
  free(c->comm_active);
  c->comm_active = NULL;
}

int32_t rp_gpu_of_member(const rp_ctx *c, int32_t g, int32_t i)
{
  return c->gpu_of_rank[c->t->groups[g].ranks[i]];
}

static double route(const rp_ctx *c, int32_t gpu_a, int32_t gpu_b, double *bw)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  double lat = 0, b = 0;
  if (dt_topology_route(c->topo, gpu_a, gpu_b, hops, &lat, &b) < 0)
    lat = 0;
  if (bw)
    *bw = b;
  return lat;
}

double rp_alpha(const rp_inst *x, int32_t a, int32_t b)
{
  return route(x->c, rp_gpu_of_member(x->c, x->g, a), rp_gpu_of_member(x->c, x->g, b), NULL);
}

double rp_hop(const rp_inst *x, int32_t a, int32_t b)
{
  return x->gs->node_of[a] != x->gs->node_of[b] ? x->net_hop : x->hop;
}

void rp_sleep(double d)
{
  rp_wait(d); /* dt_replay.c: a SimGrid sleep, or the stream's own clock while it runs ahead (coalescing) */
}

/* Mailbox on which member `member` of live instance `inst` receives messages tagged `tag`: per instance,
 * destination and tag, so that concurrent instances and the phases of one never exchange messages. Ids are
 * recycled only once every member of the previous holder has completed, so its mailboxes are empty again. */
static sg_mailbox_t mailbox_lookup(int64_t inst, int32_t member, int32_t tag)
{
  char name[64];
  snprintf(name, sizeof name, "c%lld.%d.%d", (long long)inst, (int)member, (int)tag);
  return sg_mailbox_by_name(name);
}

/* The same mailbox, from the cache when it was looked up before (ids, members and tags that do not fit the
 * 64-bit key are looked up every time). */
static sg_mailbox_t mailbox(rp_ctx *c, int64_t inst, int32_t member, int32_t tag)
{
  if (inst < 0 || inst >= (1 << 24) || member < 0 || member >= (1 << 24) || tag < 0 || tag >= (1 << 15))
    return mailbox_lookup(inst, member, tag);
  mbox_cache *mc = &c->coll->boxes;
  uint64_t key = ((uint64_t)inst << 39 | (uint64_t)member << 15 | (uint64_t)tag) + 1;
  if (mc->cap) {
    for (size_t i = dt_mix64(key) & (mc->cap - 1); mc->keys[i]; i = (i + 1) & (mc->cap - 1))
      if (mc->keys[i] == key)
        return mc->boxes[i];
  }
  /* first the lookup: it is a simcall, during which other actors run and may grow the cache */
  sg_mailbox_t box = mailbox_lookup(inst, member, tag);
  if ((mc->n + 1) * 2 > mc->cap) {
    size_t old_cap = mc->cap;
    uint64_t *ok = mc->keys;
    sg_mailbox_t *ob = mc->boxes;
    mc->cap = old_cap ? old_cap * 2 : 1024;
    mc->keys = dt_xcalloc(mc->cap, sizeof *mc->keys);
    mc->boxes = dt_xcalloc(mc->cap, sizeof *mc->boxes);
    for (size_t j = 0; j < old_cap; j++)
      if (ok[j]) {
        size_t i = dt_mix64(ok[j]) & (mc->cap - 1);
        while (mc->keys[i])
          i = (i + 1) & (mc->cap - 1);
        mc->keys[i] = ok[j];
        mc->boxes[i] = ob[j];
      }
    free(ok);
    free(ob);
  }
  size_t i = dt_mix64(key) & (mc->cap - 1);
  while (mc->keys[i] && mc->keys[i] != key) /* another actor may have added it during the lookup */
    i = (i + 1) & (mc->cap - 1);
  if (!mc->keys[i])
    mc->n++;
  mc->keys[i] = key;
  mc->boxes[i] = box;
  return box;
}

static long whole_bytes(double bytes)
{
  return bytes > 0 ? (long)llround(bytes) : 0;
}

double rp_closed_time(const rp_inst *x, double bytes, double lat, double rate)
{
  double eff = x->eff > 0 ? x->eff : 1.0;
  return lat + (double)whole_bytes(bytes / eff) / rate;
}

void rp_closed_wait(const rp_inst *x, const rp_send *sends, size_t nsends, double lat, double rate, double before,
                    double after)
{
  double start = rp_now() + (before > 0 ? before : 0);
  double wait = nsends > 0 ? rp_closed_time(x, sends[0].bytes, lat, rate) : 0;
  if (x->c->linkload) { /* per-link accounting: the transfers are the same, only not simulated */
    int32_t from = rp_gpu_of_member(x->c, x->g, x->i);
    for (size_t s = 0; s < nsends; s++)
      dt_linkload_add(x->c->linkload, from, rp_gpu_of_member(x->c, x->g, sends[s].to), sends[s].bytes, start,
                      start + wait, x->op->kind, x->g);
  }
  rp_sleep((before > 0 ? before : 0) + wait + (after > 0 ? after : 0));
}

void rp_flight_push(rp_ctx *c, rp_flight *f)
{
  if (!c->linkload || c->stopped)
    return;
  f->prev = NULL;
  f->next = c->flights;
  if (c->flights)
    c->flights->prev = f;
  c->flights = f;
}

void rp_flight_pop(rp_ctx *c, rp_flight *f)
{
  if (!c->linkload || c->stopped)
    return;
  if (f->prev)
    f->prev->next = f->next;
  else
    c->flights = f->next;
  if (f->next)
    f->next->prev = f->prev;
}

void rp_flights_cut(rp_ctx *c, double now)
{
  if (c->stopped)
    return;
  c->stopped = 1;
  for (rp_flight *f = c->flights; f; f = f->next)
    for (size_t k = 0; k < f->n; k++) {
      double t0, t1, left;
      if (!dt_sg_comm_progress(f->comms[k], &t0, &t1, &left) || !(t0 < now))
        continue;
      if (t1 >= t0) { /* complete, its waiter blocked on others (a deadlock) or not resumed yet: all of it */
        f->cut(f->arg, k, 0, t0, t1);
        if (t1 > c->reached)
          c->reached = t1;
      } else if (left > 0) /* moving: what it moved until now */
        f->cut(f->arg, k, left, t0, now);
    }
  c->flights = NULL;
}

/* rp_xfer's sends sends[0, nsends) of instance x, whose SimGrid flows are comms[0, nsends) (the flight's arg). */
typedef struct xfer_flight {
  const rp_inst *x;
  const rp_send *sends;
  size_t nsends;
} xfer_flight;

/* Per-link accounting of send s of x: `bytes` of payload from t0 to t1 (s), and the folded ranks' same transfers
 * on their own links. */
static void xfer_count(const rp_inst *x, const rp_send *snd, double bytes, double t0, double t1)
{
  rp_ctx *c = x->c;
  dt_linkload_add(c->linkload, rp_gpu_of_member(c, x->g, x->i), rp_gpu_of_member(c, x->g, snd->to), bytes, t0, t1,
                  x->op->kind, x->g);
  for (int32_t f = 1; f < c->fold; f++) { /* the folded ranks' same transfers, on their own links */
    int32_t gf = c->fold_gimg[(size_t)x->g * c->fold + f];
    dt_linkload_add(c->linkload, rp_gpu_of_member(c, gf, x->i), rp_gpu_of_member(c, gf, snd->to), bytes, t0, t1,
                    x->op->kind, gf);
  }
}

/* rp_flight's cut for rp_xfer: a send cut by the stop counts the share of its payload it moved. */
static void xfer_cut(void *arg, size_t k, double remaining, double t0, double t1)
{
  const xfer_flight *xf = arg;
  if (k >= xf->nsends)
    return;
  double eff = xf->x->eff > 0 ? xf->x->eff : 1.0, size = (double)whole_bytes(xf->sends[k].bytes / eff);
  if (size > 0 && remaining < size)
    xfer_count(xf->x, &xf->sends[k], xf->sends[k].bytes * (1 - remaining / size), t0, t1);
}

void rp_xfer(const rp_inst *x, const rp_send *sends, size_t nsends, const int32_t *recv_tags, size_t nrecvs)
{
  size_t total = nsends + nrecvs;
  if (total == 0)
    return;
  sg_comm_t stack_comms[16];
  void *stack_got[16];
  sg_comm_t *comms = total <= 16 ? stack_comms : dt_xmalloc(sizeof *comms * total);
  void **got = total <= 16 ? stack_got : dt_xmalloc(sizeof *got * total);
  double eff = x->eff > 0 ? x->eff : 1.0;
  size_t k = 0;
  for (size_t s = 0; s < nsends; s++)
    comms[k++] = sg_mailbox_put_async(mailbox(x->c, x->id, sends[s].to, sends[s].tag), &payload_token,
                                      whole_bytes(sends[s].bytes / eff));
  for (size_t r = 0; r < nrecvs; r++) {
    comms[k] = sg_mailbox_get_async(mailbox(x->c, x->id, x->i, recv_tags[r]), &got[k]);
    k++;
  }
  if (x->c->linkload && nsends > 0) { /* per-link accounting: each send's own start and completion */
    double stack_t[32], *tm = 2 * k <= 32 ? stack_t : dt_xmalloc(sizeof *tm * 2 * k);
    xfer_flight xf = {x, sends, nsends};
    rp_flight fl = {.comms = comms, .n = nsends, .cut = xfer_cut, .arg = &xf};
    rp_flight_push(x->c, &fl);
    dt_sg_comm_wait_all_times(comms, k, tm, tm + k);
    rp_flight_pop(x->c, &fl);
    for (size_t s = 0; s < nsends && !x->c->stopped; s++) /* (after the stop, rp_flights_cut counted them) */
      xfer_count(x, &sends[s], sends[s].bytes, tm[s], tm[k + s]);
    if (tm != stack_t)
      free(tm);
  } else {
    sg_comm_wait_all(comms, k);
  }
  if (rp_now() > x->c->reached)
    x->c->reached = rp_now();
  if (comms != stack_comms) {
    free(comms);
    free(got);
  }
}

/* ---- group shapes ---- */

typedef struct member_key {
  int32_t node, lgpu, member;
} member_key;

static int cmp_member_key(const void *a, const void *b)
{
  const member_key *x = a, *y = b;
  if (x->node != y->node)
    return (x->node > y->node) - (x->node < y->node);
  return (x->lgpu > y->lgpu) - (x->lgpu < y->lgpu);
}

/* Channel c's ring: without the NCCL model, group order (DESIGN.md §6); with it, node by node (ascending), each
 * node's members rotated to start at the first one on the (c mod k)-th of the k distinct NICs its members use
 * (ascending) -- so that the channels alternate evenly over those NICs, as NCCL's connectRings alternates its rings
 * over the NICs, and channel c enters every node of a regular group on the same rail. A group with members on
 * every NIC gets rail c mod nics; one with GPUs i and i + 4 of 8 (TP 4's data-parallel group, 8 NICs) gets its
 * two NICs alternately, 4 channels of 8 each, not 5 and 3 as "rail c, else member c mod m" gave. */
static void build_rings(rp_ctx *c, int32_t g, rp_gshape *s)
{
  const dt_platform *p = c->p;
  int32_t n = s->n, C = s->nchannels;
  s->order = dt_xmalloc(sizeof *s->order * (size_t)C * n);
  s->pos = dt_xmalloc(sizeof *s->pos * (size_t)C * n);
  s->pxn_proxy = dt_xmalloc(sizeof *s->pxn_proxy * (size_t)C * n);
  s->relay = dt_xmalloc(sizeof *s->relay * (size_t)C * n);
  int G = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
  for (int ch = 0; ch < C; ch++) {
    int32_t *ord = s->order + (size_t)ch * n;
    if (!p->nccl) {
      for (int32_t i = 0; i < n; i++)
        ord[i] = i;
    } else {
      int32_t k = 0;
      for (int32_t nd = 0; nd < s->nnodes; nd++) {
        int32_t f = s->node_first[nd], m = s->node_first[nd + 1] - f, start = 0;
        /* the members are sorted by local GPU, and NICs grow with it: a new NIC is a change from the previous */
        int nics = 0, last = -1;
        for (int32_t j = 0; j < m; j++) {
          int nic = dt_platform_nic_of_gpu(p, rp_gpu_of_member(c, g, s->by_node[f + j]) % G);
          nics += nic != last;
          last = nic;
        }
        int want = ch % nics, seen = -1;
        last = -1;
        for (int32_t j = 0; j < m; j++) {
          int nic = dt_platform_nic_of_gpu(p, rp_gpu_of_member(c, g, s->by_node[f + j]) % G);
          seen += nic != last;
          last = nic;
          if (seen == want) {
            start = j;
            break;
          }
        }
        for (int32_t j = 0; j < m; j++)
          ord[k++] = s->by_node[f + (start + j) % m];
      }
    }
    for (int32_t k = 0; k < n; k++) {
      s->pos[(size_t)ch * n + ord[k]] = k;
      s->relay[(size_t)ch * n + k] = -1;
    }
  }
  /* PXN: a hop between nodes whose NICs are on different rails is relayed by a member on the sender's node
   * and on the receiver's rail, when the group has one */
  double amax = 0, asum = 0;
  for (int ch = 0; ch < C; ch++) {
    const int32_t *ord = s->order + (size_t)ch * n;
    for (int32_t k = 0; k < n; k++) {
      int32_t a = ord[k], b = ord[(k + 1) % n], px = -1;
      int32_t ga = rp_gpu_of_member(c, g, a), gb = rp_gpu_of_member(c, g, b);
      if (p->nccl && p->pxn && s->node_of[a] != s->node_of[b] && p->nics_per_node > 1) {
        int rb = dt_platform_nic_of_gpu(p, gb % G);
        if (dt_platform_nic_of_gpu(p, ga % G) != rb) {
          int32_t f = s->node_first[s->node_of[a]], m = s->node_first[s->node_of[a] + 1] - f;
          for (int32_t j = 0; j < m && px < 0; j++) {
            int32_t cand = s->by_node[f + j];
            if (cand != a && dt_platform_nic_of_gpu(p, rp_gpu_of_member(c, g, cand) % G) == rb &&
                s->relay[(size_t)ch * n + cand] < 0)
              px = cand;
          }
        }
      }
      s->pxn_proxy[(size_t)ch * n + k] = px;
      double lat;
      if (px >= 0) {
        s->relay[(size_t)ch * n + px] = k;
        lat = route(c, ga, rp_gpu_of_member(c, g, px), NULL) + route(c, rp_gpu_of_member(c, g, px), gb, NULL);
      } else {
        lat = n > 1 ? route(c, ga, gb, NULL) : 0;
      }
      if (lat > amax)
        amax = lat;
      asum += lat;
    }
  }
  s->ring_alpha = amax;
  s->ring_alpha_mean = n > 0 && C > 0 ? asum / ((double)C * n) : 0;
}

/* The ring's and the all-to-all's exchanges of an exclusive group, when uniform (dt_coll_closed.c). */
static void closed_forms(rp_ctx *c, int32_t g, rp_gshape *s)
{
  int32_t n = s->n;
  int32_t *src, *dst;
  size_t nf;
  rp_ring_flows(s, &src, &dst, &nf);
  int pxn = 0;
  for (size_t k = 0; k < nf; k++)
    pxn |= s->pxn_proxy[k] >= 0;
  s->ring_cf = !pxn && rp_closed_uniform(c, g, nf, src, dst, &s->ring_cf_lat, &s->ring_cf_rate);
  free(src);
  free(dst);
  /* the tree's phases: every flow of a phase starts at once when the phase before ended at once */
  if (c->p->nccl || c->algo == DT_ALGO_TREE)
    for (int up = 0; up < 2; up++) {
      rp_tree_flows(s, up, &src, &dst, &nf);
      s->tree_cf[up] = rp_closed_uniform(c, g, nf, src, dst, &s->tree_cf_lat[up], &s->tree_cf_rate[up]);
      free(src);
      free(dst);
    }
  /* all-to-all: direct flows, or aggregated per node pair with one member per node (the same flows) */
  if ((rp_alltoall_aggregated(s) && s->max_per_node > 1) || (double)n * (n - 1) > 16e6)
    return;
  nf = (size_t)n * (n - 1);
  src = dt_xmalloc(sizeof *src * nf);
  dst = dt_xmalloc(sizeof *dst * nf);
  size_t k = 0;
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < n; j++)
      if (i != j) {
        src[k] = i;
        dst[k++] = j;
      }
  s->a2a_cf = rp_closed_uniform(c, g, nf, src, dst, &s->a2a_cf_lat, &s->a2a_cf_rate);
  free(src);
  free(dst);
}

const rp_gshape *rp_gshape_of(rp_ctx *c, int32_t g)
{
  if (c->coll->shape[g])
    return c->coll->shape[g];
  const dt_group *gr = &c->t->groups[g];
  const dt_platform *p = c->p;
  int G = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
  rp_gshape *s = dt_xcalloc(1, sizeof *s);
  int32_t n = (int32_t)gr->nranks;
  s->n = n;
  size_t nn = n > 0 ? (size_t)n : 1;
  member_key *keys = dt_xmalloc(sizeof *keys * nn);
  for (int32_t i = 0; i < n; i++) {
    int32_t gpu = rp_gpu_of_member(c, g, i);
    keys[i] = (member_key){gpu / G, gpu % G, i};
  }
  qsort(keys, (size_t)n, sizeof *keys, cmp_member_key);
  s->node_of = dt_xmalloc(sizeof *s->node_of * nn);
  s->local = dt_xmalloc(sizeof *s->local * nn);
  s->by_node = dt_xmalloc(sizeof *s->by_node * nn);
  s->node_first = dt_xmalloc(sizeof *s->node_first * (nn + 1));
  int32_t nd = -1;
  for (int32_t k = 0; k < n; k++) {
    if (k == 0 || keys[k].node != keys[k - 1].node)
      s->node_first[++nd] = k;
    s->by_node[k] = keys[k].member;
    s->node_of[keys[k].member] = nd;
    s->local[keys[k].member] = k - s->node_first[nd];
  }
  s->nnodes = nd + 1;
  s->node_first[s->nnodes] = n;
  s->min_per_node = n;
  s->nics_used = p->nics_per_node > 0 ? p->nics_per_node : 1;
  /* ncclTopoTuneModel's nInterSteps for a ring all-reduce (src/graph/tuning.cc): 2 nNodes up to 2.22.3, 2 (nNodes -
   * 1) from 2.23.4 */
  s->ring_ar_inter = s->nnodes <= 1 ? 0 : p->nccl && p->nccl_version < 22300 ? 2 * s->nnodes : 2 * (s->nnodes - 1);
  for (int32_t d = 0; d < s->nnodes; d++) {
    int32_t f = s->node_first[d], m = s->node_first[d + 1] - f;
    if (m < s->min_per_node)
      s->min_per_node = m;
    if (m > s->max_per_node)
      s->max_per_node = m;
    /* distinct NICs of the node's members (they are sorted by local GPU, and NICs grow with it) */
    int nics = 0, last = -1;
    for (int32_t j = 0; j < m; j++) {
      int nic = dt_platform_nic_of_gpu(p, keys[f + j].lgpu);
      if (nic != last)
        nics++;
      last = nic;
    }
    if (nics < s->nics_used)
      s->nics_used = nics;
  }
  /* latencies and bandwidths the estimates use: neighbours inside a node, first members of adjacent nodes */
  s->bw_intra = INFINITY;
  s->bw_net = INFINITY;
  for (int32_t d = 0; d < s->nnodes; d++) {
    int32_t f = s->node_first[d], m = s->node_first[d + 1] - f;
    for (int32_t j = 0; j + 1 < m; j++) {
      double bw, lat = route(c, rp_gpu_of_member(c, g, s->by_node[f + j]), rp_gpu_of_member(c, g, s->by_node[f + j + 1]), &bw);
      if (lat > s->alpha_intra)
        s->alpha_intra = lat;
      if (bw < s->bw_intra)
        s->bw_intra = bw;
    }
    if (s->nnodes > 1) {
      int32_t other = s->by_node[s->node_first[(d + 1) % s->nnodes]];
      for (int32_t j = 0; j < m; j++) {
        double bw, lat = route(c, rp_gpu_of_member(c, g, s->by_node[f + j]), rp_gpu_of_member(c, g, other), &bw);
        /* members of this node on the same NIC share it */
        int nic = dt_platform_nic_of_gpu(p, keys[f + j].lgpu), share = 0;
        for (int32_t q = 0; q < m; q++)
          share += dt_platform_nic_of_gpu(p, keys[f + q].lgpu) == nic;
        if (lat > s->alpha_net)
          s->alpha_net = lat;
        if (bw / share < s->bw_net)
          s->bw_net = bw / share;
      }
    }
  }
  if (!isfinite(s->bw_intra))
    s->bw_intra = s->bw_net;
  if (!isfinite(s->bw_net))
    s->bw_net = s->bw_intra;
  free(keys);
  s->nchannels = dt_platform_channels(p);
  build_rings(c, g, s);
  s->excl = group_exclusive_some(c, g);
  if (s->excl)
    closed_forms(c, g, s);
  c->coll->shape[g] = s;
  return s;
}

/* ---- choices ---- */

void rp_choice_record(rp_ctx *c, dt_op_kind kind, dt_algo a, dt_proto p, uint64_t bytes)
{
  int col = c->p->nccl ? (int)p : DT_PROTO_COUNT;
  choice_stat *st = &c->coll->choices[kind][a][col];
  if (st->count == 0 || bytes < st->min_bytes)
    st->min_bytes = bytes;
  if (st->count == 0 || bytes > st->max_bytes)
    st->max_bytes = bytes;
  st->count++;
}

static void human_bytes(uint64_t b, char *buf, size_t size)
{
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = (double)b;
  while (v >= 1024 && u < 4 && fmod(v, 1024) == 0) {
    v /= 1024;
    u++;
  }
  snprintf(buf, size, "%.0f %s", v, units[u]);
}

int rp_coll_fallback_note(const rp_ctx *c, int k, char *buf, size_t size)
{
  buf[0] = '\0';
  if (k < 0 || k >= DT_OP_COUNT || !c->forced_fallback[k])
    return 0;
  const dt_platform *p = c->p;
  char where[300];
  if (!p->nccl) /* what is missing, said plainly (was: "op, group shape or platform") */
    snprintf(where, sizeof where, "platform '%s' has no 'nccl:' section, so dtsim uses its textbook model (ring, "
             "chain, direct; docs/platform.md says what the section holds)", p->name ? p->name : "?");
  else {
    int v = p->nccl_version, vp = v % 100;
    char ver[32];
    snprintf(ver, sizeof ver, vp ? "%d.%d.%d" : "%d.%d", v / 10000, v / 100 % 100, vp);
    snprintf(where, sizeof where, "platform '%s' follows NCCL %s ('nccl.version'), which falls back to the op's "
             "default; from 2.24 on, NCCL refuses it", p->name ? p->name : "?", ver);
  }
  snprintf(buf, size, "%s: the forced algorithm '%s' cannot run %llu instance%s: %s; %s; they ran with the algorithm "
           "listed instead", dt_op_kind_name((dt_op_kind)k), dt_algo_name(c->algo),
           (unsigned long long)c->forced_fallback[k], c->forced_fallback[k] == 1 ? "" : "s",
           c->forced_why[k] ? c->forced_why[k] : "it cannot run here", where);
  return 1;
}

void rp_coll_notes(const rp_ctx *c, void (*note)(void *data, const char *text), void *data)
{
  if (!c->coll)
    return;
  for (int k = 0; k < DT_OP_COUNT; k++) {
    char text[1024];
    size_t len = 0;
    int parts = 0;
    for (int a = 0; a < DT_ALGO_COUNT; a++)
      for (int pr = 0; pr <= DT_PROTO_COUNT; pr++) {
        const choice_stat *st = &c->coll->choices[k][a][pr];
        if (!st->count || len + 200 > sizeof text)
          continue;
        char lo[32], hi[32], range[80];
        human_bytes(st->min_bytes, lo, sizeof lo);
        human_bytes(st->max_bytes, hi, sizeof hi);
        if (st->min_bytes == st->max_bytes)
          snprintf(range, sizeof range, "%s", lo);
        else
          snprintf(range, sizeof range, "%s to %s", lo, hi);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s%s%s for %s (%llu instance%s)",
                                parts ? ", " : "", dt_algo_name((dt_algo)a), pr < DT_PROTO_COUNT ? "/" : "",
                                pr < DT_PROTO_COUNT ? dt_proto_name((dt_proto)pr) : "", range,
                                (unsigned long long)st->count, st->count == 1 ? "" : "s");
        parts++;
      }
    if (parts) {
      char line[1100];
      snprintf(line, sizeof line, "%s: %s", dt_op_kind_name((dt_op_kind)k), text);
      note(data, line);
    }
    char line[700];
    if (rp_coll_fallback_note(c, k, line, sizeof line))
      note(data, line);
  }
  /* how each algorithm that ran works, once each, from its row of the plan table */
  for (int a = 0; a < DT_ALGO_COUNT; a++) {
    const rp_algo_row *row = NULL;
    for (int k = 0; k < DT_OP_COUNT && !row; k++)
      for (int pr = 0; pr <= DT_PROTO_COUNT && !row; pr++)
        if (c->coll->choices[k][a][pr].count)
          row = rp_algo_row_of((dt_op_kind)k, (dt_algo)a);
    if (row) {
      char line[400];
      snprintf(line, sizeof line, "%s: %s", dt_algo_name((dt_algo)a), row->note);
      note(data, line);
    }
  }
}

/* ---- point-to-point on the NCCL model ---- */

/* NCCL's P2P_LL_THRESHOLD default (src/enqueue.cc, addP2pToPlan): a send or receive of at most this many bytes
 * per channel runs with LL, larger ones with Simple; a small p2p op uses one channel. LL needs LL buffers on the
 * connection, and NCCL allocates none on a p2p connection through the network (NCCL_ALLOC_P2P_NET_LL_BUFFERS,
 * default 0, src/init.cc and src/transport/net.cc, 2.17.1 to 2.31): a pair between nodes runs Simple whatever its
 * size. */
#define P2P_LL_THRESHOLD 16384

double rp_p2p_cost(const rp_ctx *c, int32_t src_rank, int32_t dst_rank, uint64_t bytes, double *eff,
                   const char **label)
{
  const dt_platform *p = c->p;
  *eff = 1;
  *label = NULL;
  if (!p->nccl)
    return 0;
  /* p2p has no LL128: a forced LL128 (or Simple) runs Simple, as NCCL's p2p does */
  int G = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
  int32_t ga = c->gpu_of_rank[src_rank], gb = c->gpu_of_rank[dst_rank];
  int net = ga / G != gb / G;
  /* a forced LL runs LL (as NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 would across nodes) */
  dt_proto pr = c->proto == DT_PROTO_LL             ? DT_PROTO_LL
                : c->proto >= 0                     ? DT_PROTO_SIMPLE
                : !net && bytes <= P2P_LL_THRESHOLD ? DT_PROTO_LL
                                                    : DT_PROTO_SIMPLE;
  const dt_proto_model *pm = &p->protocols[pr];
  double h = net ? pm->net_hop_latency : pm->hop_latency;
  *eff = pm->efficiency > 0 ? pm->efficiency : 1;
  *label = rp_proto_label(pr);
  return (pm->latency + h) * p->latency_factor;
}
