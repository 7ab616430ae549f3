/* An exact evaluator of SimGrid's flow sharing (dt_coll_solve.h): a small event-driven simulation of a set of
 * flows and the gates that start them, with SimGrid 3.32's CM02 rules as dtsim configures them
 * (dt_sg_platform.cpp), read in its sources (src/surf/network_cm02.cpp, src/kernel/lmm/maxmin.cpp,
 * src/kernel/resource/Model.cpp):
 *   - a communication is created when both sides have posted it; during its route latency it takes no bandwidth
 *     (its max-min variable has penalty 0), then it shares with penalty 1, every flow alike: CM02's penalty is the
 *     latency a route reports (weight-S is 0), and dtsim's routes all report the same one and get their real
 *     latency through the latency factor (dt_sg_platform.cpp: InfiniBand's credit-based flow control and NVLink's
 *     arbitration share a link equally, not in inverse proportion to path length as TCP does);
 *   - no rate bound: with TCP-gamma 0 the bound min(route bandwidth, gamma / (2 latency)) is 0, which the solver
 *     reads as "no bound";
 *   - the sharing is max-min with weights: repeatedly, the link with the least remaining / usage (usage = the sum
 *     of 1 / penalty over its unfixed flows) is full; each of its unfixed flows gets that ratio / its penalty, and
 *     the links of those flows lose what they take; a link left with less than maxmin/precision of its capacity is
 *     full;
 *   - a flow's remaining bytes decrease at its rate; it ends when they reach 0, at now + remains / rate;
 *   - the clock jumps to the earliest event; every event less than surf/precision after it happens then too.
 * The cost is O(rounds x (active flows x route length + links)), rounds being the distinct event times. */
#include "dt_coll_solve.h"

#include "../common/dt_util.h"
#include "dt_coll.h"
#include "dt_linkload.h"
#include "dt_timeline.h"

#include <simgrid/engine.h>
#include <xbt/config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { F_WAIT, F_LAT, F_SHARE, F_DONE };

typedef struct ev {
  double t;
  int32_t kind; /* 0: a gate fires, 1: a flow's latency is paid */
  int32_t idx;
} ev;

struct rp_solver {
  /* links */
  double *cap;
  size_t nlinks, cap_links;
  /* gates */
  double *delay, *gtime;
  int32_t *ginputs, *gpred;
  size_t ngates, cap_gates;
  /* flows */
  double *bytes, *lat, *start, *finish;
  double *mult;     /* identical flows the flow stands for */
  int32_t *gate[4]; /* start a, start b, end a, end b */
  int32_t *lk_off;  /* [nflows + 1] into lk */
  int32_t *lk;
  double *coef;     /* per incidence: the flow's consumption weight on the link (1; |flow orbit| / |link orbit|
                       in a quotient problem) */
  size_t nflows, cap_flows, nlk, cap_lk;
  size_t rounds, solved_flows;
  /* symmetries (rp_solver_symmetry) and the quotient problem built from them */
  int ngen;
  int32_t **gen_flow, **gen_gate;
  int fold_state;   /* 0: not checked since the problem changed; 1: quotient built; -1: no symmetry holds */
  rp_solver *quo;   /* the quotient: one flow per flow orbit, one link per link orbit, one gate per gate orbit */
  int32_t *forb, *gorb; /* per flow / gate: its orbit's flow / gate in quo */
  int32_t *qflow, *qgate; /* per quotient flow / gate: its representative (the orbit's smallest index) */
};

rp_solver *rp_solver_new(void)
{
  rp_solver *s = dt_xcalloc(1, sizeof *s);
  s->lk_off = dt_xcalloc(1, sizeof *s->lk_off);
  return s;
}

void rp_solver_free(rp_solver *s)
{
  if (!s)
    return;
  free(s->cap);
  free(s->delay);
  free(s->gtime);
  free(s->ginputs);
  free(s->gpred);
  free(s->bytes);
  free(s->lat);
  free(s->start);
  free(s->finish);
  free(s->mult);
  for (int k = 0; k < 4; k++)
    free(s->gate[k]);
  free(s->lk_off);
  free(s->lk);
  free(s->coef);
  for (int k = 0; k < s->ngen; k++) {
    free(s->gen_flow[k]);
    free(s->gen_gate[k]);
  }
  free(s->gen_flow);
  free(s->gen_gate);
  rp_solver_free(s->quo);
  free(s->forb);
  free(s->gorb);
  free(s->qflow);
  free(s->qgate);
  free(s);
}

static size_t grow(size_t cap)
{
  return cap ? cap * 2 : 64;
}

int32_t rp_solver_link(rp_solver *s, double bandwidth)
{
  if (s->nlinks == s->cap_links) {
    s->cap_links = grow(s->cap_links);
    s->cap = dt_xrealloc(s->cap, sizeof *s->cap * s->cap_links);
  }
  s->cap[s->nlinks] = bandwidth;
  s->fold_state = 0;
  return (int32_t)s->nlinks++;
}

int32_t rp_solver_gate_after(rp_solver *s, double delay, int32_t pred)
{
  if (s->ngates == s->cap_gates) {
    s->cap_gates = grow(s->cap_gates);
    s->delay = dt_xrealloc(s->delay, sizeof *s->delay * s->cap_gates);
    s->gtime = dt_xrealloc(s->gtime, sizeof *s->gtime * s->cap_gates);
    s->ginputs = dt_xrealloc(s->ginputs, sizeof *s->ginputs * s->cap_gates);
    s->gpred = dt_xrealloc(s->gpred, sizeof *s->gpred * s->cap_gates);
  }
  size_t g = s->ngates++;
  s->fold_state = 0;
  s->delay[g] = delay > 0 ? delay : 0;
  s->gtime[g] = NAN;
  s->gpred[g] = pred >= 0 && (size_t)pred < g ? pred : -1;
  s->ginputs[g] = s->gpred[g] >= 0;
  return (int32_t)g;
}

int32_t rp_solver_gate(rp_solver *s, double delay)
{
  return rp_solver_gate_after(s, delay, -1);
}

int32_t rp_solver_flow(rp_solver *s, double bytes, double latency, const int32_t *links, int nlinks, int32_t start_a,
                       int32_t start_b, int32_t end_a, int32_t end_b)
{
  if (s->nflows == s->cap_flows) {
    s->cap_flows = grow(s->cap_flows);
    s->bytes = dt_xrealloc(s->bytes, sizeof *s->bytes * s->cap_flows);
    s->lat = dt_xrealloc(s->lat, sizeof *s->lat * s->cap_flows);
    s->start = dt_xrealloc(s->start, sizeof *s->start * s->cap_flows);
    s->finish = dt_xrealloc(s->finish, sizeof *s->finish * s->cap_flows);
    s->mult = dt_xrealloc(s->mult, sizeof *s->mult * s->cap_flows);
    for (int k = 0; k < 4; k++)
      s->gate[k] = dt_xrealloc(s->gate[k], sizeof *s->gate[k] * s->cap_flows);
    s->lk_off = dt_xrealloc(s->lk_off, sizeof *s->lk_off * (s->cap_flows + 1));
  }
  while (s->nlk + (size_t)nlinks > s->cap_lk) {
    s->cap_lk = grow(s->cap_lk);
    s->lk = dt_xrealloc(s->lk, sizeof *s->lk * s->cap_lk);
    s->coef = dt_xrealloc(s->coef, sizeof *s->coef * s->cap_lk);
  }
  size_t f = s->nflows;
  s->fold_state = 0;
  s->bytes[f] = bytes > 0 ? bytes : 0;
  s->lat[f] = latency > 0 ? latency : 0;
  s->start[f] = s->finish[f] = NAN;
  s->mult[f] = 1;
  int32_t g[4] = {start_a, start_b, end_a, end_b};
  for (int k = 0; k < 4; k++)
    s->gate[k][f] = g[k] >= 0 && (size_t)g[k] < s->ngates ? g[k] : -1;
  for (int k = 2; k < 4; k++)
    if (s->gate[k][f] >= 0 && (k == 2 || s->gate[3][f] != s->gate[2][f]))
      s->ginputs[s->gate[k][f]]++;
  for (int i = 0; i < nlinks; i++)
    if (links[i] >= 0 && (size_t)links[i] < s->nlinks) {
      s->coef[s->nlk] = 1;
      s->lk[s->nlk++] = links[i];
    }
  s->lk_off[f + 1] = (int32_t)s->nlk;
  s->nflows++;
  return (int32_t)f;
}

void rp_solver_flow_count(rp_solver *s, int32_t f, int count)
{
  if (f >= 0 && (size_t)f < s->nflows && count >= 1) {
    s->mult[f] = count;
    s->fold_state = 0;
  }
}

void rp_solver_set_bytes(rp_solver *s, int32_t f, double bytes)
{
  if (f >= 0 && (size_t)f < s->nflows)
    s->bytes[f] = bytes > 0 ? bytes : 0;
}

void rp_solver_set_delay(rp_solver *s, int32_t g, double delay)
{
  if (g >= 0 && (size_t)g < s->ngates)
    s->delay[g] = delay > 0 ? delay : 0;
}

double rp_solver_gate_time(const rp_solver *s, int32_t g)
{
  return g >= 0 && (size_t)g < s->ngates ? s->gtime[g] : NAN;
}

double rp_solver_flow_start(const rp_solver *s, int32_t f)
{
  return f >= 0 && (size_t)f < s->nflows ? s->start[f] : NAN;
}

double rp_solver_flow_finish(const rp_solver *s, int32_t f)
{
  return f >= 0 && (size_t)f < s->nflows ? s->finish[f] : NAN;
}

size_t rp_solver_rounds(const rp_solver *s)
{
  return s->rounds;
}

size_t rp_solver_solved_flows(const rp_solver *s)
{
  return s->solved_flows;
}

/* ---- the event heap (gate fires and latencies paid), earliest first ---- */

typedef struct evheap {
  ev *a;
  size_t n, cap;
} evheap;

static void heap_push(evheap *h, double t, int32_t kind, int32_t idx)
{
  if (h->n == h->cap) {
    h->cap = grow(h->cap);
    h->a = dt_xrealloc(h->a, sizeof *h->a * h->cap);
  }
  size_t i = h->n++;
  while (i > 0 && h->a[(i - 1) / 2].t > t) {
    h->a[i] = h->a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->a[i] = (ev){t, kind, idx};
}

static ev heap_pop(evheap *h)
{
  ev top = h->a[0], last = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->a[c + 1].t < h->a[c].t)
      c++;
    if (!(h->a[c].t < last.t))
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n > 0)
    h->a[i] = last;
  return top;
}

/* SimGrid's double_update: subtract, and snap to 0 below the precision */
static void dupdate(double *x, double d, double prec)
{
  *x -= d;
  if (*x < prec)
    *x = 0;
}

/* State of one run. */
typedef struct run {
  rp_solver *s;
  double tp, rp;
  uint8_t *state;
  int32_t *pending;           /* per flow: start gates not fired yet */
  int32_t *left;              /* per gate: end flows not finished yet */
  int32_t *gf_off, *gf;       /* per gate: the flows it starts (CSR) */
  int32_t *gs_off, *gsucc;    /* per gate: the gates waiting for it (CSR) */
  int32_t *lf_off, *lf;       /* per link: the sharing flows crossing it, lf[lf_off[l] .. lf_off[l] + ln[l]) as
                                 incidences (indices into s->lk), room for every flow crossing it */
  int32_t *ln, *where, *inc_flow; /* per link: sharing flows; per incidence: its place in lf, its flow */
  double *pen, *w, *remains, *rate, *last, *fdate; /* pen: SimGrid's penalty, w = 1 / pen */
  int32_t *share;             /* flows sharing now */
  size_t nshare;
  uint8_t *open;              /* per flow, during a solve: sharing and not fixed yet */
  double *usage, *rem, *ratio, *cap_rp; /* per link, during a solve; cap_rp: capacity x maxmin precision */
  int32_t *light;             /* links still to fill */
  int32_t *lpos;              /* position in light, -2: full (valid when stamp is the solve's epoch) */
  uint32_t *stamp, epoch;
  int32_t *fire;              /* gates firing now (a stack) */
  size_t nfire;
  int32_t *sat;               /* links full at one step of a solve */
  int32_t *ended;             /* flows ending in one round */
  ev *evs;                    /* heap events of one round */
  size_t evcap;
  evheap heap;
} run;

/* Weighted max-min over the sharing flows, as SimGrid's MaxMin::maxmin_solve: the links with the least
 * remaining / usage are full, their unfixed flows get that ratio x weight, and so on. */
static void solve(run *r)
{
  const rp_solver *s = r->s;
  const int32_t *lk = s->lk, *lk_off = s->lk_off;
  const double *coef = s->coef;
  uint32_t ep = ++r->epoch; /* a link's lpos is valid in this solve when stamp == ep */
  size_t nl = 0;
  for (size_t k = 0; k < r->nshare; k++) {
    int32_t f = r->share[k];
    double w = r->w[f] * s->mult[f];
    r->open[f] = 1;
    r->rate[f] = 0;
    for (int32_t j = lk_off[f]; j < lk_off[f + 1]; j++) {
      int32_t l = lk[j];
      if (r->stamp[l] != ep) {
        r->stamp[l] = ep;
        r->lpos[l] = (int32_t)nl;
        r->light[nl++] = l;
        r->usage[l] = w * coef[j];
        r->rem[l] = s->cap[l];
      } else {
        r->usage[l] += w * coef[j];
      }
    }
  }
  for (size_t i = 0; i < nl; i++)
    r->ratio[r->light[i]] = r->rem[r->light[i]] / r->usage[r->light[i]];
  while (nl > 0) {
    double m = r->ratio[r->light[0]];
    for (size_t i = 1; i < nl; i++)
      if (r->ratio[r->light[i]] < m)
        m = r->ratio[r->light[i]];
    /* every link at the minimum is full: fix its unfixed flows (collected first: fixing moves links in light) */
    size_t nsat = 0;
    for (size_t i = 0; i < nl; i++)
      if (r->ratio[r->light[i]] == m)
        r->sat[nsat++] = r->light[i];
    for (size_t i = 0; i < nsat; i++) {
      int32_t l = r->sat[i];
      for (int32_t j = r->lf_off[l], je = r->lf_off[l] + r->ln[l]; j < je; j++) {
        int32_t f = r->inc_flow[r->lf[j]];
        if (!r->open[f])
          continue;
        r->open[f] = 0;
        double w = r->w[f] * s->mult[f], v = m / r->pen[f]; /* as SimGrid divides */
        r->rate[f] = v;
        v *= s->mult[f];
        for (int32_t q = lk_off[f]; q < lk_off[f + 1]; q++) {
          int32_t k = lk[q];
          if (r->lpos[k] < 0)
            continue;
          dupdate(&r->rem[k], v * coef[q], r->cap_rp[k]);
          dupdate(&r->usage[k], w * coef[q], r->rp);
          if (!(r->usage[k] > r->rp) || !(r->rem[k] > r->cap_rp[k])) {
            int32_t p = r->lpos[k];
            r->light[p] = r->light[--nl];
            r->lpos[r->light[p]] = p;
            r->lpos[k] = -2; /* full */
          } else {
            r->ratio[k] = r->rem[k] / r->usage[k];
          }
        }
      }
      if (r->lpos[l] >= 0) { /* precision left it in: it is full all the same */
        int32_t p = r->lpos[l];
        r->light[p] = r->light[--nl];
        r->lpos[r->light[p]] = p;
        r->lpos[l] = -2;
      }
    }
  }
  for (size_t k = 0; k < r->nshare; k++)
    r->open[r->share[k]] = 0;
}

/* Flow f starts sharing: it enters its links' lists of sharing flows, and the list of all. */
static void share_add(run *r, int32_t f)
{
  const rp_solver *s = r->s;
  r->state[f] = F_SHARE;
  r->share[r->nshare++] = f;
  for (int32_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++) {
    int32_t l = s->lk[j], p = r->lf_off[l] + r->ln[l]++;
    r->lf[p] = j;
    r->where[j] = p;
  }
}

/* Flow f ends: it leaves its links' lists (the caller takes it out of the list of all). */
static void share_leave(run *r, int32_t f)
{
  const rp_solver *s = r->s;
  r->state[f] = F_DONE;
  for (int32_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++) {
    int32_t l = s->lk[j], p = r->where[j], last = r->lf_off[l] + --r->ln[l];
    r->lf[p] = r->lf[last];
    r->where[r->lf[p]] = p;
  }
}

static void gate_done(run *r, int32_t g, double now)
{
  if (g < 0 || --r->left[g] > 0)
    return;
  if (r->s->delay[g] > 0)
    heap_push(&r->heap, now + r->s->delay[g], 0, g);
  else
    r->fire[r->nfire++] = g;
}

/* Gate g fires at `now`: the flows it was the last to wait for start. Returns 1 when one of them shares at once
 * (latency 0). */
static int gate_fire(run *r, int32_t g, double now)
{
  rp_solver *s = r->s;
  int joined = 0;
  s->gtime[g] = now;
  for (int32_t j = r->gs_off[g]; j < r->gs_off[g + 1]; j++)
    gate_done(r, r->gsucc[j], now);
  for (int32_t j = r->gf_off[g]; j < r->gf_off[g + 1]; j++) {
    int32_t f = r->gf[j];
    if (--r->pending[f] > 0)
      continue;
    s->start[f] = now;
    if (s->lat[f] > 0) {
      r->state[f] = F_LAT;
      heap_push(&r->heap, now + s->lat[f], 1, f);
    } else {
      r->remains[f] = s->bytes[f];
      r->last[f] = now;
      r->rate[f] = 0;
      share_add(r, f);
      joined = 1;
    }
  }
  return joined;
}

/* The simulation of every flow (rp_solver_run without a symmetry). */
static int run_flows(rp_solver *s, double time_precision, double rate_precision)
{
  size_t nf = s->nflows, ng = s->ngates, nl = s->nlinks;
  s->solved_flows = nf;
  run r = {0};
  r.s = s;
  r.tp = time_precision > 0 ? time_precision : 0;
  r.rp = rate_precision > 0 ? rate_precision : 0;
  r.state = dt_xcalloc(nf + 1, 1);
  r.open = dt_xcalloc(nf + 1, 1);
  r.pending = dt_xcalloc(nf + 1, sizeof *r.pending);
  r.left = dt_xcalloc(ng + 1, sizeof *r.left);
  r.gf_off = dt_xcalloc(ng + 2, sizeof *r.gf_off);
  r.gf = dt_xmalloc(sizeof *r.gf * (2 * nf + 1));
  r.gs_off = dt_xcalloc(ng + 2, sizeof *r.gs_off);
  r.gsucc = dt_xmalloc(sizeof *r.gsucc * (ng + 1));
  r.lf_off = dt_xcalloc(nl + 2, sizeof *r.lf_off);
  r.lf = dt_xmalloc(sizeof *r.lf * (s->nlk + 1));
  r.ln = dt_xcalloc(nl + 1, sizeof *r.ln);
  r.where = dt_xmalloc(sizeof *r.where * (s->nlk + 1));
  r.inc_flow = dt_xmalloc(sizeof *r.inc_flow * (s->nlk + 1));
  r.w = dt_xmalloc(sizeof *r.w * (nf + 1));
  r.pen = dt_xmalloc(sizeof *r.pen * (nf + 1));
  r.remains = dt_xcalloc(nf + 1, sizeof *r.remains);
  r.rate = dt_xcalloc(nf + 1, sizeof *r.rate);
  r.last = dt_xcalloc(nf + 1, sizeof *r.last);
  r.fdate = dt_xcalloc(nf + 1, sizeof *r.fdate);
  r.share = dt_xmalloc(sizeof *r.share * (nf + 1));
  r.usage = dt_xcalloc(nl + 1, sizeof *r.usage);
  r.rem = dt_xcalloc(nl + 1, sizeof *r.rem);
  r.ratio = dt_xcalloc(nl + 1, sizeof *r.ratio);
  r.cap_rp = dt_xmalloc(sizeof *r.cap_rp * (nl + 1));
  r.light = dt_xmalloc(sizeof *r.light * (nl + 1));
  r.lpos = dt_xmalloc(sizeof *r.lpos * (nl + 1));
  r.stamp = dt_xcalloc(nl + 1, sizeof *r.stamp);
  r.fire = dt_xmalloc(sizeof *r.fire * (ng + 1));
  r.sat = dt_xmalloc(sizeof *r.sat * (nl + 1));
  r.ended = dt_xmalloc(sizeof *r.ended * (nf + 1));
  for (size_t l = 0; l < nl; l++) {
    r.lpos[l] = -1;
    r.cap_rp[l] = s->cap[l] * r.rp;
  }

  /* CSR: the flows each gate starts, the flows on each link */
  for (size_t f = 0; f < nf; f++) {
    r.pen[f] = 1.0; /* SimGrid's penalty: the latency each route reports, the same for all (dt_sg_platform.cpp) */
    r.w[f] = 1.0 / r.pen[f];
    for (int k = 0; k < 2; k++)
      if (s->gate[k][f] >= 0 && (k == 0 || s->gate[1][f] != s->gate[0][f])) {
        r.gf_off[s->gate[k][f] + 1]++;
        r.pending[f]++;
      }
    for (int32_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++)
      r.lf_off[s->lk[j] + 1]++;
  }
  for (size_t g = 0; g < ng; g++)
    if (s->gpred[g] >= 0)
      r.gs_off[s->gpred[g] + 1]++;
  for (size_t g = 0; g < ng; g++) {
    r.gf_off[g + 1] += r.gf_off[g];
    r.gs_off[g + 1] += r.gs_off[g];
  }
  for (size_t l = 0; l < nl; l++)
    r.lf_off[l + 1] += r.lf_off[l];
  {
    int32_t *at = dt_xmalloc(sizeof *at * (ng + nl + 1));
    memcpy(at, r.gf_off, sizeof *at * ng);
    for (size_t f = 0; f < nf; f++)
      for (int k = 0; k < 2; k++)
        if (s->gate[k][f] >= 0 && (k == 0 || s->gate[1][f] != s->gate[0][f]))
          r.gf[at[s->gate[k][f]]++] = (int32_t)f;
    memcpy(at, r.gs_off, sizeof *at * ng);
    for (size_t g = 0; g < ng; g++)
      if (s->gpred[g] >= 0)
        r.gsucc[at[s->gpred[g]]++] = (int32_t)g;
    for (size_t f = 0; f < nf; f++)
      for (int32_t j = s->lk_off[f]; j < s->lk_off[f + 1]; j++)
        r.inc_flow[j] = (int32_t)f;
    free(at);
  }

  /* time 0: flows without start gates start, gates without inputs are scheduled */
  int changed = 0;
  for (size_t g = 0; g < ng; g++) {
    s->gtime[g] = NAN;
    r.left[g] = s->ginputs[g];
    if (r.left[g] == 0) {
      r.left[g] = 1;
      gate_done(&r, (int32_t)g, 0);
    }
  }
  for (size_t f = 0; f < nf; f++) {
    r.state[f] = F_WAIT;
    s->start[f] = s->finish[f] = NAN;
    if (r.pending[f] == 0) {
      s->start[f] = 0;
      if (s->lat[f] > 0) {
        r.state[f] = F_LAT;
        heap_push(&r.heap, s->lat[f], 1, (int32_t)f);
      } else {
        r.remains[f] = s->bytes[f];
        share_add(&r, (int32_t)f);
        changed = 1;
      }
    }
  }
  double now = 0;
  s->rounds = 0;
  for (;;) {
    while (r.nfire > 0)
      changed |= gate_fire(&r, r.fire[--r.nfire], now);
    if (changed) {
      /* the sharing changed: remaining bytes at the old rates up to now, then the new rates */
      for (size_t k = 0; k < r.nshare; k++) {
        int32_t f = r.share[k];
        if (r.remains[f] > 0)
          dupdate(&r.remains[f], r.rate[f] * (now - r.last[f]), r.rp * r.tp);
        r.last[f] = now;
      }
      solve(&r);
      for (size_t k = 0; k < r.nshare; k++) {
        int32_t f = r.share[k];
        r.fdate[f] = r.remains[f] > 0 ? (r.rate[f] > 0 ? now + r.remains[f] / r.rate[f] : INFINITY) : now;
      }
      changed = 0;
    }
    /* the next event: a flow ending, a latency paid, a gate's delay over */
    double next = INFINITY;
    for (size_t k = 0; k < r.nshare; k++)
      if (r.fdate[r.share[k]] < next)
        next = r.fdate[r.share[k]];
    if (r.heap.n > 0 && r.heap.a[0].t < next)
      next = r.heap.a[0].t;
    if (!isfinite(next))
      break;
    now = next > now ? next : now;
    s->rounds++;
    double until = now + r.tp;
    /* flows ending now (within the precision): they leave the sharing, and the gates they end may fire */
    size_t keep = 0, nended = 0;
    for (size_t k = 0; k < r.nshare; k++) {
      int32_t f = r.share[k];
      if (r.fdate[f] < until) {
        share_leave(&r, f);
        s->finish[f] = now;
        r.ended[nended++] = f;
        changed = 1;
      } else {
        r.share[keep++] = f;
      }
    }
    r.nshare = keep;
    /* collect the heap's events of now before handling the ends: what they cause happens after */
    size_t nev = 0;
    while (r.heap.n > 0 && r.heap.a[0].t < until) {
      if (nev == r.evcap) {
        r.evcap = grow(r.evcap);
        r.evs = dt_xrealloc(r.evs, sizeof *r.evs * r.evcap);
      }
      r.evs[nev++] = heap_pop(&r.heap);
    }
    for (size_t k = 0; k < nended; k++) {
      int32_t f = r.ended[k];
      gate_done(&r, s->gate[2][f], now);
      if (s->gate[3][f] != s->gate[2][f])
        gate_done(&r, s->gate[3][f], now);
    }
    for (size_t e = 0; e < nev; e++) {
      if (r.evs[e].kind == 1) {
        int32_t f = r.evs[e].idx;
        r.remains[f] = s->bytes[f];
        r.last[f] = now;
        r.rate[f] = 0;
        share_add(&r, f);
        changed = 1;
      } else {
        r.fire[r.nfire++] = r.evs[e].idx;
      }
    }
  }
  int ok = 1;
  for (size_t f = 0; f < nf && ok; f++)
    ok = r.state[f] == F_DONE;
  free(r.state);
  free(r.open);
  free(r.pending);
  free(r.left);
  free(r.gf_off);
  free(r.gf);
  free(r.gs_off);
  free(r.gsucc);
  free(r.lf_off);
  free(r.lf);
  free(r.ln);
  free(r.where);
  free(r.inc_flow);
  free(r.w);
  free(r.pen);
  free(r.remains);
  free(r.rate);
  free(r.last);
  free(r.fdate);
  free(r.share);
  free(r.usage);
  free(r.rem);
  free(r.ratio);
  free(r.cap_rp);
  free(r.light);
  free(r.lpos);
  free(r.stamp);
  free(r.fire);
  free(r.sat);
  free(r.ended);
  free(r.evs);
  free(r.heap.a);
  return ok ? 0 : -1;
}

/* ---- symmetries: the quotient problem ---- */

int rp_solver_symmetry(rp_solver *s, const int32_t *flow_perm, const int32_t *gate_perm)
{
  size_t nf = s->nflows, ng = s->ngates;
  if ((!flow_perm && nf > 0) || (!gate_perm && ng > 0))
    return -1;
  uint8_t *seen = dt_xcalloc((nf > ng ? nf : ng) + 1, 1);
  int ok = 1;
  for (size_t f = 0; f < nf && ok; f++) {
    ok = flow_perm[f] >= 0 && (size_t)flow_perm[f] < nf && !seen[flow_perm[f]];
    if (ok)
      seen[flow_perm[f]] = 1;
  }
  memset(seen, 0, (nf > ng ? nf : ng) + 1);
  for (size_t g = 0; g < ng && ok; g++) {
    ok = gate_perm[g] >= 0 && (size_t)gate_perm[g] < ng && !seen[gate_perm[g]];
    if (ok)
      seen[gate_perm[g]] = 1;
  }
  free(seen);
  if (!ok)
    return -1;
  s->gen_flow = dt_xrealloc(s->gen_flow, sizeof *s->gen_flow * (size_t)(s->ngen + 1));
  s->gen_gate = dt_xrealloc(s->gen_gate, sizeof *s->gen_gate * (size_t)(s->ngen + 1));
  s->gen_flow[s->ngen] = dt_xmalloc(sizeof **s->gen_flow * (nf + 1));
  s->gen_gate[s->ngen] = dt_xmalloc(sizeof **s->gen_gate * (ng + 1));
  if (nf > 0)
    memcpy(s->gen_flow[s->ngen], flow_perm, sizeof *flow_perm * nf);
  if (ng > 0)
    memcpy(s->gen_gate[s->ngen], gate_perm, sizeof *gate_perm * ng);
  s->ngen++;
  s->fold_state = 0;
  return 0;
}

/* Union-find with the smallest index as the root. */
static int32_t uf_find(int32_t *up, int32_t x)
{
  while (up[x] != x) {
    up[x] = up[up[x]];
    x = up[x];
  }
  return x;
}

static void uf_join(int32_t *up, int32_t a, int32_t b)
{
  a = uf_find(up, a);
  b = uf_find(up, b);
  if (a < b)
    up[b] = a;
  else if (b < a)
    up[a] = b;
}

static int32_t gate_image(const int32_t *gp, int32_t g)
{
  return g >= 0 ? gp[g] : -1;
}

/* Whether generator k maps the problem's structure onto itself (gates' waits, flows' gates, counts, latencies
 * and routes, capacities; bytes and delays are checked per run); its permutation of the links into pi. */
static int symmetric(const rp_solver *s, int k, int32_t *pi, int32_t *pinv)
{
  const int32_t *F = s->gen_flow[k], *G = s->gen_gate[k];
  for (size_t l = 0; l < s->nlinks; l++)
    pi[l] = pinv[l] = -1;
  for (size_t g = 0; g < s->ngates; g++)
    if (s->gpred[G[g]] != gate_image(G, s->gpred[g]) || s->ginputs[G[g]] != s->ginputs[g])
      return 0;
  for (size_t f = 0; f < s->nflows; f++) {
    int32_t h = F[f];
    if (s->lat[h] != s->lat[f] || s->mult[h] != s->mult[f] ||
        s->lk_off[h + 1] - s->lk_off[h] != s->lk_off[f + 1] - s->lk_off[f])
      return 0;
    for (int q = 0; q < 4; q++)
      if (s->gate[q][h] != gate_image(G, s->gate[q][f]))
        return 0;
    for (int32_t j = s->lk_off[f], jh = s->lk_off[h]; j < s->lk_off[f + 1]; j++, jh++) {
      int32_t a = s->lk[j], b = s->lk[jh];
      if (pi[a] < 0) {
        if (pinv[b] >= 0 || s->cap[a] != s->cap[b])
          return 0;
        pi[a] = b;
        pinv[b] = a;
      } else if (pi[a] != b) {
        return 0;
      }
    }
  }
  return 1;
}

/* Builds the quotient of the structure under the generators that hold (fold_state 1), or sets fold_state -1. Flow
 * orbit O crossing link orbit L (|L| links of one capacity) loads each link of L by |O| / |L| times a flow's rate
 * per crossing of its representative: in the symmetric solution every flow of O has one rate and every link of L
 * one load, so the quotient's max-min steps are the full problem's. */
static void build_quotient(rp_solver *s)
{
  size_t nf = s->nflows, ng = s->ngates, nl = s->nlinks;
  s->fold_state = -1;
  rp_solver_free(s->quo);
  s->quo = NULL;
  int32_t *fup = dt_xmalloc(sizeof *fup * (nf + 1)), *gup = dt_xmalloc(sizeof *gup * (ng + 1));
  int32_t *lup = dt_xmalloc(sizeof *lup * (nl + 1));
  int32_t *pi = dt_xmalloc(sizeof *pi * (nl + 1)), *pinv = dt_xmalloc(sizeof *pinv * (nl + 1));
  for (size_t f = 0; f < nf; f++)
    fup[f] = (int32_t)f;
  for (size_t g = 0; g < ng; g++)
    gup[g] = (int32_t)g;
  for (size_t l = 0; l < nl; l++)
    lup[l] = (int32_t)l;
  int held = 0;
  for (int k = 0; k < s->ngen; k++) {
    if (!symmetric(s, k, pi, pinv))
      continue;
    held++;
    for (size_t f = 0; f < nf; f++)
      uf_join(fup, (int32_t)f, s->gen_flow[k][f]);
    for (size_t g = 0; g < ng; g++)
      uf_join(gup, (int32_t)g, s->gen_gate[k][g]);
    for (size_t l = 0; l < nl; l++)
      if (pi[l] >= 0)
        uf_join(lup, (int32_t)l, pi[l]);
  }
  free(pi);
  free(pinv);
  size_t qf = 0;
  for (size_t f = 0; f < nf; f++)
    qf += uf_find(fup, (int32_t)f) == (int32_t)f;
  if (!held || qf == nf) {
    free(fup);
    free(gup);
    free(lup);
    return;
  }
  rp_solver *q = rp_solver_new();
  s->forb = dt_xrealloc(s->forb, sizeof *s->forb * (nf + 1));
  s->gorb = dt_xrealloc(s->gorb, sizeof *s->gorb * (ng + 1));
  s->qflow = dt_xrealloc(s->qflow, sizeof *s->qflow * (qf + 1));
  s->qgate = dt_xrealloc(s->qgate, sizeof *s->qgate * (ng + 1));
  /* gates, in order of their representatives (a gate's predecessor has a smaller index, so has its orbit's) */
  size_t nqg = 0;
  for (size_t g = 0; g < ng; g++) {
    int32_t rg = uf_find(gup, (int32_t)g);
    if (rg == (int32_t)g) {
      s->qgate[nqg] = rg;
      s->gorb[g] = rp_solver_gate_after(q, s->delay[g], s->gpred[g] >= 0 ? s->gorb[uf_find(gup, s->gpred[g])] : -1);
      nqg++;
    } else {
      s->gorb[g] = s->gorb[rg];
    }
  }
  /* links: one per orbit, with its size */
  int32_t *lorb = dt_xmalloc(sizeof *lorb * (nl + 1));
  double *lsize = dt_xcalloc(nl + 1, sizeof *lsize);
  for (size_t l = 0; l < nl; l++) {
    int32_t rl = uf_find(lup, (int32_t)l);
    lorb[l] = rl == (int32_t)l ? rp_solver_link(q, s->cap[l]) : lorb[rl];
    lsize[lorb[l]]++;
  }
  double *fsize = dt_xcalloc(nf + 1, sizeof *fsize);
  for (size_t f = 0; f < nf; f++)
    fsize[uf_find(fup, (int32_t)f)]++;
  int32_t *links = NULL;
  size_t lcap = 0;
  size_t nqf = 0;
  for (size_t f = 0; f < nf; f++) {
    int32_t rf = uf_find(fup, (int32_t)f);
    if (rf != (int32_t)f) {
      s->forb[f] = s->forb[rf];
      continue;
    }
    size_t nh = (size_t)(s->lk_off[f + 1] - s->lk_off[f]);
    if (nh > lcap) {
      lcap = nh;
      links = dt_xrealloc(links, sizeof *links * lcap);
    }
    for (size_t h = 0; h < nh; h++)
      links[h] = lorb[s->lk[s->lk_off[f] + (int32_t)h]];
    int32_t g4[4];
    for (int k = 0; k < 4; k++)
      g4[k] = s->gate[k][f] >= 0 ? s->gorb[s->gate[k][f]] : -1;
    int32_t qfl = rp_solver_flow(q, s->bytes[f], s->lat[f], links, (int)nh, g4[0], g4[1], g4[2], g4[3]);
    q->mult[qfl] = s->mult[f];
    for (size_t h = 0; h < nh; h++)
      q->coef[q->lk_off[qfl] + (int32_t)h] = fsize[f] / lsize[links[h]];
    s->forb[f] = qfl;
    s->qflow[nqf++] = (int32_t)f;
  }
  free(links);
  free(lorb);
  free(lsize);
  free(fsize);
  free(fup);
  free(gup);
  free(lup);
  s->quo = q;
  s->fold_state = 1;
}

int rp_solver_run(rp_solver *s, double time_precision, double rate_precision)
{
  if (s->ngen > 0 && s->fold_state == 0)
    build_quotient(s);
  int fold = s->fold_state == 1;
  /* bytes and delays (set per run) must be the same over each orbit */
  for (size_t f = 0; f < s->nflows && fold; f++)
    fold = s->bytes[f] == s->bytes[s->qflow[s->forb[f]]];
  for (size_t g = 0; g < s->ngates && fold; g++)
    fold = s->delay[g] == s->delay[s->qgate[s->gorb[g]]];
  if (!fold)
    return run_flows(s, time_precision, rate_precision);
  rp_solver *q = s->quo;
  for (size_t k = 0; k < q->nflows; k++)
    q->bytes[k] = s->bytes[s->qflow[k]];
  for (size_t k = 0; k < q->ngates; k++)
    q->delay[k] = s->delay[s->qgate[k]];
  int rc = run_flows(q, time_precision, rate_precision);
  for (size_t f = 0; f < s->nflows; f++) {
    s->start[f] = q->start[s->forb[f]];
    s->finish[f] = q->finish[s->forb[f]];
  }
  for (size_t g = 0; g < s->ngates; g++)
    s->gtime[g] = q->gtime[s->gorb[g]];
  s->rounds = q->rounds;
  s->solved_flows = q->nflows;
  return rc;
}

/* ---- a collective instance of an exclusive group, evaluated ---- */

/* At most this many flows per instance are evaluated; larger instances are simulated. */
#define SOLVE_MAX_FLOWS (1u << 22)
/* Results kept for instances that repeat them (the same op on the same group). */
#define SOLVED_KEEP 8

/* What an instance's flows depend on besides its group: the plan (op kind, algorithm, bytes) and the costs. */
typedef struct solve_key {
  int32_t g; /* + 1, 0: empty */
  int kind, algo, proto;
  double S, eff, hop, net_hop, fixed;
} solve_key;

/* One evaluated instance: per member its end, and its sends (CSR by member: receiver, payload bytes, start and
 * finish), all relative to the members' common start. */
typedef struct solved {
  solve_key key;
  uint64_t stamp; /* last use, for replacement */
  int ok;         /* 0: not evaluated (it does not apply, or failed): simulate */
  int32_t n;
  double *end;    /* [n] */
  int32_t *off;   /* [n + 1] into dst, bytes, t0, t1 */
  int32_t *dst;
  double *bytes, *t0, *t1;
} solved;

typedef struct built built;
/* Problems kept for the other sizes of an instance (evaluate). */
#define BUILT_KEEP 4

typedef struct rp_solved {
  solved keep[SOLVED_KEEP];
  built *built; /* [BUILT_KEEP] */
  uint64_t clock;
} rp_solved;

static void solved_clear(solved *e)
{
  free(e->end);
  free(e->off);
  free(e->dst);
  free(e->bytes);
  free(e->t0);
  free(e->t1);
  memset(e, 0, sizeof *e);
}

static long whole(double bytes)
{
  return bytes > 0 ? (long)llround(bytes) : 0;
}

/* One send of the instance, as listed by its sender. */
typedef struct send_rec {
  int32_t from, to, phase, tag;
  double bytes; /* payload, before the efficiency */
} send_rec;

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* qsort's context for cmp_same (one evaluation at a time: no simcall while it runs) */
static const send_rec *sort_sends;
static double sort_eff;

/* Sends that are the same flow: same sender, receiver, phase and whole bytes. */
static int cmp_same(const void *a, const void *b)
{
  const send_rec *x = &sort_sends[*(const size_t *)a], *y = &sort_sends[*(const size_t *)b];
  if (x->from != y->from)
    return (x->from > y->from) - (x->from < y->from);
  if (x->to != y->to)
    return (x->to > y->to) - (x->to < y->to);
  if (x->phase != y->phase)
    return (x->phase > y->phase) - (x->phase < y->phase);
  long bx = whole(x->bytes / sort_eff), by = whole(y->bytes / sort_eff);
  return (bx > by) - (bx < by);
}

/* Lists every member's sends of every phase (each member's own plan, as rp_plan_run runs it) and the latency
 * each member waits after each phase (tail[k * n + i]). 0 when the instance cannot be evaluated: plans of
 * different lengths, or a receiver's mailbox (member, tag) used in two phases (then a fast member's send could
 * match a slow one's receive of the phase before: only SimGrid knows). */
static int list_instance(const rp_inst *x, const rp_algo_row *row, send_rec **out, size_t *nout, double **tail,
                         int *nphases)
{
  const rp_gshape *gs = x->gs;
  int32_t n = gs->n;
  dt_op_kind k = rp_algo_kind(x->op->kind);
  size_t cap = 1024, ns = 0;
  send_rec *sr = dt_xmalloc(sizeof *sr * cap);
  double *tl = NULL;
  int P = -1, ok = 1;
  rp_plan pl;
  size_t rcap = 64, nrt = 0;
  int64_t *rt = dt_xmalloc(sizeof *rt * rcap); /* this member's receive tags, (tag << 8 | phase) */
  rp_send *lsends = NULL;
  int32_t *ltags = NULL;
  size_t lbuf_cap = 0;
  for (int32_t i = 0; i < n && ok; i++) {
    rp_inst xi = *x;
    xi.i = i;
    nrt = 0;
    pl.nphases = 0;
    row->plan(gs, k, x->S, i, &pl);
    if (P < 0) {
      P = pl.nphases;
      tl = dt_xcalloc((size_t)(P > 0 ? P : 1) * (size_t)n, sizeof *tl);
    }
    if (pl.nphases != P) {
      ok = 0;
      break;
    }
    for (int q = 0; q < P; q++) {
      const rp_phase *ph = &pl.ph[q];
      if (ph->steps <= 0)
        continue; /* the executor skips it: no transfer, no latency */
      size_t lc = rp_plan_listing_cap(gs, ph);
      if (lc + 1 > lbuf_cap) { /* the listing's buffers, reused from member to member */
        lbuf_cap = lc + 1;
        lsends = dt_xrealloc(lsends, sizeof *lsends * lbuf_cap);
        ltags = dt_xrealloc(ltags, sizeof *ltags * lbuf_cap);
      }
      rp_listing L = {0};
      L.sends = lsends;
      L.tags = ltags;
      tl[(size_t)q * n + i] = rp_plan_flow_list(&xi, ph, &L);
      for (size_t j = 0; j < L.ns; j++) {
        if (ns == cap) {
          cap *= 2;
          sr = dt_xrealloc(sr, sizeof *sr * cap);
        }
        sr[ns++] = (send_rec){i, L.sends[j].to, q, L.sends[j].tag, L.sends[j].bytes};
      }
      for (size_t j = 0; j < L.nr; j++) {
        if (nrt == rcap) {
          rcap *= 2;
          rt = dt_xrealloc(rt, sizeof *rt * rcap);
        }
        rt[nrt++] = (int64_t)L.tags[j] << 8 | q;
      }
      if (ns > SOLVE_MAX_FLOWS)
        ok = 0;
    }
    /* every receive tag of this member in one phase only (its mailbox of that tag serves one phase) */
    if (nrt > 64) {
      qsort(rt, nrt, sizeof *rt, cmp_i64);
    } else { /* a few per member (a tree's 2C children and parents): insertion */
      for (size_t u = 1; u < nrt; u++) {
        int64_t v = rt[u];
        size_t w = u;
        for (; w > 0 && rt[w - 1] > v; w--)
          rt[w] = rt[w - 1];
        rt[w] = v;
      }
    }
    for (size_t j = 1; j < nrt && ok; j++)
      ok = !(rt[j] >> 8 == rt[j - 1] >> 8 && rt[j] != rt[j - 1]);
  }
  free(rt);
  free(lsends);
  free(ltags);
  if (P > 255)
    ok = 0;
  if (!ok || P < 0) {
    free(sr);
    free(tl);
    return 0;
  }
  *out = sr;
  *nout = ns;
  *tail = tl;
  *nphases = P;
  return 1;
}

/* An instance's problem less its bytes and latencies, kept for the instances of other sizes of the same op and
 * algorithm on the same group (their listings differ only in bytes and latencies: checked send by send). */
typedef struct built {
  int32_t g; /* + 1, 0: empty */
  int kind, algo, P;
  int32_t n;
  uint64_t stamp;
  int ok;        /* 0: some flow has no route (not evaluated) */
  size_t ns, nf;
  send_rec *sr;  /* [ns] the listing it was built from (bytes not used) */
  size_t *ord;   /* [ns] the sends sorted by flow */
  int32_t *fbeg; /* [nf + 1] flow u's sends are ord[fbeg[u] .. fbeg[u + 1]) */
  int32_t *flow_of; /* [ns] */
  rp_solver *s;
} built;

static void built_clear(built *b)
{
  free(b->sr);
  free(b->ord);
  free(b->fbeg);
  free(b->flow_of);
  rp_solver_free(b->s);
  memset(b, 0, sizeof *b);
}

/* Flow u's key (sender, receiver, phase) against (a, b, q). */
static int flow_cmp(const built *b, int32_t u, int32_t a, int32_t to, int32_t q)
{
  const send_rec *k = &b->sr[b->ord[b->fbeg[u]]];
  if (k->from != a)
    return (k->from > a) - (k->from < a);
  if (k->to != to)
    return (k->to > to) - (k->to < to);
  return (k->phase > q) - (k->phase < q);
}

/* The flow of sender a, receiver `to`, phase q (flows are sorted by that key, one flow per key), or -1. */
static int32_t flow_find(const built *b, int32_t a, int32_t to, int32_t q)
{
  int32_t lo = 0, hi = (int32_t)b->nf;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2, c = flow_cmp(b, mid, a, to, q);
    if (c == 0)
      return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

/* Declares the member permutation perm (a member and its image) as a symmetry of b's problem when it maps every
 * flow onto a flow: flow (a, b, phase q) onto (perm[a], perm[b], q), gate G[q][i] onto G[q][perm[i]]. The solver
 * checks the rest (routes, counts, latencies, bytes, delays) and ignores it when it does not hold. */
static void add_symmetry(built *b, const int32_t *perm)
{
  int32_t n = b->n, ident = 1;
  for (int32_t i = 0; i < n && ident; i++)
    ident = perm[i] == i;
  if (ident)
    return;
  int32_t *fp = dt_xmalloc(sizeof *fp * (b->nf + 1));
  size_t ng = (size_t)(b->P + 1) * (size_t)n;
  int32_t *gp = dt_xmalloc(sizeof *gp * (ng + 1));
  int ok = 1;
  for (size_t u = 0; u < b->nf && ok; u++) {
    const send_rec *k = &b->sr[b->ord[b->fbeg[u]]];
    fp[u] = flow_find(b, perm[k->from], perm[k->to], k->phase);
    ok = fp[u] >= 0;
  }
  for (size_t g = 0; g < ng; g++)
    gp[g] = (int32_t)(g / (size_t)n * (size_t)n) + perm[g % (size_t)n];
  if (ok)
    rp_solver_symmetry(b->s, fp, gp);
  free(fp);
  free(gp);
}

/* The symmetries a group's channels suggest (NCCL model, several channels): channel 0's order onto channel 1's
 * (on a node whose channels start on successive GPUs, the rotation of every node's GPUs that maps channel c's
 * rings and trees onto channel c + 1's), and channel 0's order onto itself reversed (the mirror that maps a
 * double binary tree's first tree onto the second of another channel). Each is checked before it is used. */
static void add_symmetries(const rp_gshape *gs, built *b)
{
  int32_t n = gs->n;
  if (gs->nchannels < 2 || n < 2)
    return;
  int32_t *perm = dt_xmalloc(sizeof *perm * (size_t)n);
  for (int32_t p = 0; p < n; p++)
    perm[gs->order[p]] = gs->order[(size_t)n + p];
  add_symmetry(b, perm);
  for (int32_t p = 0; p < n; p++)
    perm[gs->order[p]] = gs->order[n - 1 - p];
  add_symmetry(b, perm);
  free(perm);
}

/* Builds b's problem from the listing sr (sender by sender): identical sends (same members, phase and bytes: the
 * same route and gates) are one flow of that many, routes become the solver's links. Gates G[q][i] = q * n + i:
 * member i done with phase q - 1 and its latency (G[0][i]: the fixed latency). A send of phase q from i to j
 * starts when G[q][i] and G[q][j] have fired and ends into G[q + 1][i] and G[q + 1][j]; G[q + 1][i] also waits
 * for G[q][i] (a member with nothing to send or receive in a phase still waits its latency). Bytes and delays are
 * set per instance (set_sizes). */
static void build(rp_ctx *c, const rp_inst *x, const send_rec *sr, size_t ns, int P, double eff, built *b)
{
  int32_t n = x->gs->n;
  b->n = n;
  b->P = P;
  b->ns = ns;
  b->sr = dt_xmalloc(sizeof *b->sr * (ns + 1));
  memcpy(b->sr, sr, sizeof *sr * ns);
  rp_solver *s = b->s = rp_solver_new();
  for (int32_t i = 0; i < n; i++)
    rp_solver_gate_after(s, 0, -1);
  for (int q = 0; q < P; q++)
    for (int32_t i = 0; i < n; i++)
      rp_solver_gate_after(s, 0, (int32_t)((size_t)q * n + i));
  uint32_t *map = rp_link_scratch(c); /* topology link direction -> local link + 1 */
  size_t ntouched = 0, touched_cap = 256;
  size_t *touched = dt_xmalloc(sizeof *touched * touched_cap);
  size_t *ord = b->ord = dt_xmalloc(sizeof *ord * (ns + 1));
  b->flow_of = dt_xmalloc(sizeof *b->flow_of * (ns + 1));
  b->fbeg = dt_xmalloc(sizeof *b->fbeg * (ns + 2));
  for (size_t k = 0; k < ns; k++)
    ord[k] = k;
  sort_sends = sr;
  sort_eff = eff;
  /* the sends were listed sender by sender: sort each sender's block (small: insertion) */
  for (size_t b0 = 0; b0 < ns;) {
    size_t b1 = b0 + 1;
    while (b1 < ns && sr[b1].from == sr[b0].from)
      b1++;
    if (b1 - b0 > 48) {
      qsort(ord + b0, b1 - b0, sizeof *ord, cmp_same);
    } else {
      for (size_t u = b0 + 1; u < b1; u++) {
        size_t v = ord[u], w = u;
        for (; w > b0 && cmp_same(&ord[w - 1], &v) > 0; w--)
          ord[w] = ord[w - 1];
        ord[w] = v;
      }
    }
    b0 = b1;
  }
  int routed = 1;
  size_t nf = 0;
  for (size_t u = 0; u < ns && routed;) {
    size_t v = u + 1;
    while (v < ns && cmp_same(&ord[u], &ord[v]) == 0)
      v++;
    const send_rec *sk = &sr[ord[u]];
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    int32_t a = sk->from, to = sk->to;
    int nh = dt_topology_route(c->topo, rp_gpu_of_member(c, x->g, a), rp_gpu_of_member(c, x->g, to), hops, NULL,
                               NULL);
    if (nh <= 0) { /* a flow to itself, or no route: SimGrid's loopback or an error, not modelled here */
      routed = 0;
      break;
    }
    int32_t links[DT_ROUTE_MAX_HOPS];
    double lat = 0; /* summed hop by hop in route order, as SimGrid sums it */
    for (int h = 0; h < nh; h++) {
      size_t d = (size_t)hops[h].link * 2 + hops[h].dir;
      const dt_link *l = dt_topology_link(c->topo, hops[h].link);
      lat += l->latency;
      if (map[d] == 0) {
        map[d] = (uint32_t)rp_solver_link(s, l->bandwidth) + 1;
        if (ntouched == touched_cap) {
          touched_cap *= 2;
          touched = dt_xrealloc(touched, sizeof *touched * touched_cap);
        }
        touched[ntouched++] = d;
      }
      links[h] = (int32_t)map[d] - 1;
    }
    int32_t q = sk->phase;
    int32_t f = rp_solver_flow(s, 0, lat, links, nh, (int32_t)((size_t)q * n + a), (int32_t)((size_t)q * n + to),
                               (int32_t)((size_t)(q + 1) * n + a), (int32_t)((size_t)(q + 1) * n + to));
    rp_solver_flow_count(s, f, (int)(v - u));
    b->fbeg[nf++] = (int32_t)u;
    for (size_t w = u; w < v; w++)
      b->flow_of[ord[w]] = f;
    u = v;
  }
  b->fbeg[nf] = (int32_t)ns;
  b->nf = nf;
  for (size_t i = 0; i < ntouched; i++)
    map[touched[i]] = 0;
  free(touched);
  b->ok = routed;
  if (routed)
    add_symmetries(x->gs, b);
}

/* Whether b's problem is this listing's: the same sends (members, phase, tag) in the same order, and each flow's
 * sends of one whole size, different from any other flow of the same members and phase (then sorting and merging
 * them would give b's flows again). */
static int reusable(const built *b, const send_rec *sr, size_t ns, int P, double eff)
{
  if (b->ns != ns || b->P != P)
    return 0;
  for (size_t k = 0; k < ns; k++)
    if (sr[k].from != b->sr[k].from || sr[k].to != b->sr[k].to || sr[k].phase != b->sr[k].phase ||
        sr[k].tag != b->sr[k].tag)
      return 0;
  long prev = -1;
  for (size_t u = 0; u < b->nf; u++) {
    long w = whole(sr[b->ord[b->fbeg[u]]].bytes / eff);
    for (int32_t k = b->fbeg[u] + 1; k < b->fbeg[u + 1]; k++)
      if (whole(sr[b->ord[k]].bytes / eff) != w)
        return 0;
    const send_rec *x = &b->sr[b->ord[b->fbeg[u]]];
    if (u > 0) {
      const send_rec *y = &b->sr[b->ord[b->fbeg[u - 1]]];
      if (x->from == y->from && x->to == y->to && x->phase == y->phase && w <= prev)
        return 0; /* sorted by bytes there: the order would change */
    }
    prev = w;
  }
  return 1;
}

/* This instance's bytes and latencies into b's problem. */
static void set_sizes(built *b, const send_rec *sr, const double *tail, double fixed, double eff)
{
  int32_t n = b->n;
  for (int32_t i = 0; i < n; i++)
    rp_solver_set_delay(b->s, i, fixed);
  for (int q = 0; q < b->P; q++)
    for (int32_t i = 0; i < n; i++)
      rp_solver_set_delay(b->s, (int32_t)((size_t)(q + 1) * n + i), tail[(size_t)q * n + i]);
  for (size_t u = 0; u < b->nf; u++)
    rp_solver_set_bytes(b->s, (int32_t)u, (double)whole(sr[b->ord[b->fbeg[u]]].bytes / eff));
}

void rp_solve_free(rp_ctx *c)
{
  if (!c || !c->solved)
    return;
  for (int k = 0; k < SOLVED_KEEP; k++)
    solved_clear(&c->solved->keep[k]);
  for (int k = 0; k < BUILT_KEEP; k++)
    built_clear(&c->solved->built[k]);
  free(c->solved->built);
  free(c->solved);
  c->solved = NULL;
}

/* Evaluates the instance with its group's kept problem when one fits (the same op and algorithm, another size),
 * else with a new one, kept in place of the least recently used. */
static void evaluate(rp_ctx *c, const rp_inst *x, solved *e)
{
  const rp_gshape *gs = x->gs;
  int32_t n = gs->n;
  e->ok = 0;
  e->n = n;
  const rp_algo_row *row = rp_algo_row_of(rp_algo_kind(x->op->kind), x->algo);
  send_rec *sr = NULL;
  size_t ns = 0;
  double *tail = NULL;
  int P = 0;
  if (!row || !list_instance(x, row, &sr, &ns, &tail, &P))
    return;
  double eff = x->eff > 0 ? x->eff : 1.0;
  rp_solved *sv = c->solved;
  built *b = NULL, *victim = &sv->built[0];
  for (int k = 0; k < BUILT_KEEP && !b; k++) {
    built *q = &sv->built[k];
    if (q->g == x->g + 1 && q->kind == (int)x->op->kind && q->algo == (int)x->algo && q->n == n &&
        reusable(q, sr, ns, P, eff))
      b = q;
    else if (q->stamp < victim->stamp)
      victim = q;
  }
  if (!b) {
    b = victim;
    built_clear(b);
    b->g = x->g + 1;
    b->kind = (int)x->op->kind;
    b->algo = (int)x->algo;
    build(c, x, sr, ns, P, eff, b);
  }
  b->stamp = ++sv->clock;
  if (b->ok) {
    set_sizes(b, sr, tail, x->fixed, eff);
    rp_solver *s = b->s;
    if (rp_solver_run(s, sg_cfg_get_double("surf/precision"), sg_cfg_get_double("maxmin/precision")) == 0) {
      e->ok = 1;
      e->end = dt_xmalloc(sizeof *e->end * (size_t)n);
      e->off = dt_xcalloc((size_t)n + 1, sizeof *e->off);
      e->dst = dt_xmalloc(sizeof *e->dst * (ns + 1));
      e->bytes = dt_xmalloc(sizeof *e->bytes * (ns + 1));
      e->t0 = dt_xmalloc(sizeof *e->t0 * (ns + 1));
      e->t1 = dt_xmalloc(sizeof *e->t1 * (ns + 1));
      for (int32_t i = 0; i < n; i++)
        e->end[i] = rp_solver_gate_time(s, (int32_t)((size_t)P * n + i));
      /* the sends were listed member by member: already grouped by sender, phase by phase */
      for (size_t k = 0; k < ns; k++) {
        e->off[sr[k].from + 1]++;
        e->dst[k] = sr[k].to;
        e->bytes[k] = sr[k].bytes;
        e->t0[k] = rp_solver_flow_start(s, b->flow_of[k]);
        e->t1[k] = rp_solver_flow_finish(s, b->flow_of[k]);
      }
      for (int32_t i = 0; i < n; i++)
        e->off[i + 1] += e->off[i];
    }
  }
  free(sr);
  free(tail);
}

int rp_solve_plan_wait(const rp_inst *x, const rp_plan *pl)
{
  rp_ctx *c = x->c;
  const rp_gshape *gs = x->gs;
  if (x->fid != DT_FIDELITY_FLOW || !gs->excl || gs->n < 2 || x->op->splits ||
      (c->fold && c->fold_cls[c->t->groups[x->g].ranks[0]] == x->g))
    return 0;
  /* a plan whose every phase is uniform is waited in closed form already (rp_plan_run); one without a phase
   * only waits its fixed latency */
  int phases = 0;
  for (int q = 0; q < pl->nphases; q++)
    phases += pl->ph[q].steps > 0;
  if (!phases || rp_plan_closed(gs, pl))
    return 0;
  if (!c->solved) {
    c->solved = dt_xcalloc(1, sizeof *c->solved);
    c->solved->built = dt_xcalloc(BUILT_KEEP, sizeof *c->solved->built);
  }
  rp_solved *sv = c->solved;
  solve_key key = {x->g + 1, (int)x->op->kind, (int)x->algo, (int)x->proto, x->S, x->eff, x->hop, x->net_hop, x->fixed};
  solved *e = NULL, *victim = &sv->keep[0];
  for (int k = 0; k < SOLVED_KEEP && !e; k++) {
    solved *q = &sv->keep[k];
    if (memcmp(&q->key, &key, sizeof key) == 0)
      e = q;
    else if (q->stamp < victim->stamp)
      victim = q;
  }
  if (!e) { /* no simcall in between: no other actor runs while it is evaluated */
    e = victim;
    solved_clear(e);
    e->key = key;
    evaluate(c, x, e);
  }
  e->stamp = ++sv->clock;
  if (!e->ok)
    return 0;
  if (x->i == 0)
    c->closed_instances[x->op->kind]++;
  double now = simgrid_get_clock();
  /* this member's sends, copied: while it sleeps, other instances may replace the entry */
  int32_t nsend = c->linkload ? e->off[x->i + 1] - e->off[x->i] : 0;
  int32_t *to = dt_xmalloc(sizeof *to * (size_t)(nsend + 1));
  double *b = dt_xmalloc(sizeof *b * (size_t)(nsend + 1));
  double *t0 = dt_xmalloc(sizeof *t0 * (size_t)(nsend + 1)), *t1 = dt_xmalloc(sizeof *t1 * (size_t)(nsend + 1));
  for (int32_t k = 0; k < nsend; k++) {
    int32_t j = e->off[x->i] + k;
    to[k] = e->dst[j];
    b[k] = e->bytes[j];
    t0[k] = now + e->t0[j];
    t1[k] = now + e->t1[j];
  }
  rp_sleep(e->end[x->i]);
  /* recorded once done, as rp_xfer records its flows: the accounting folds the intervals that ended */
  int32_t from = rp_gpu_of_member(c, x->g, x->i);
  for (int32_t k = 0; k < nsend; k++) {
    int32_t dst = rp_gpu_of_member(c, x->g, to[k]);
    dt_linkload_add(c->linkload, from, dst, b[k], t0[k], t1[k], x->op->kind, x->g);
    for (int32_t f = 1; f < c->fold; f++) { /* the folded ranks' same transfers, on their own links */
      int32_t gf = c->fold_gimg[(size_t)x->g * c->fold + f];
      dt_linkload_add(c->linkload, rp_gpu_of_member(c, gf, x->i), rp_gpu_of_member(c, gf, to[k]), b[k], t0[k], t1[k],
                      x->op->kind, gf);
    }
  }
  free(to);
  free(b);
  free(t0);
  free(t1);
  return 1;
}
