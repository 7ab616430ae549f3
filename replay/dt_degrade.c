/* Slow, failed and flapping links (dt_degrade.h, docs/whatif.md): option parsing, name resolution with
 * did-you-mean hints, the static part applied to the topology's link table, the reachability check, and the
 * daemon actors that fail or flap a link during the run. */
#include "dt_degrade.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "dt_sg_platform.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/link.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dt_faults_init(dt_faults *f)
{
  f->n = 0;
  f->v = NULL;
  f->has_end = 0;
  f->end_s = 0;
}

void dt_faults_clear(dt_faults *f)
{
  if (!f)
    return;
  for (size_t i = 0; i < f->n; i++)
    free(f->v[i].target);
  free(f->v);
  dt_faults_init(f);
}

/* A time with a unit, or a bare 0 (fail from the start). */
static int parse_time0(const char *s, double *out, char *why, size_t n)
{
  if (strcmp(s, "0") == 0) {
    *out = 0;
    return 0;
  }
  return dt_parse_time(s, out, why, n);
}

/* Per dt_fault_kind: its option and the form of its argument, for messages. */
static const struct {
  const char *opt, *form;
} kinds[] = {{"--degrade", "TARGET=FACTOR (e.g. leaf-spine=0.5)"},
             {"--fail", "LINK@TIME (e.g. leaf0-spine3@10ms, @0 for failed from the start)"},
             {"--flap", "LINK=PERIOD,DOWNTIME[,START] (e.g. leaf0-spine3=10ms,1ms)"}};

int dt_faults_parse(dt_faults *f, dt_fault_kind kind, const char *arg, char *why, size_t why_size)
{
  dt_fault x;
  memset(&x, 0, sizeof x);
  x.kind = kind;
  const char *sep = strrchr(arg, kind == DT_FAULT_FAIL ? '@' : '=');
  if (!sep || sep == arg || !sep[1]) {
    snprintf(why, why_size, "%s expects %s, found '%s'", kinds[kind].opt, kinds[kind].form, arg);
    return -1;
  }
  const char *val = sep + 1;
  char sub[256];
  if (kind == DT_FAULT_DEGRADE) {
    char *end;
    errno = 0;
    x.factor = strtod(val, &end);
    if (end == val || *end || errno || !(x.factor >= DT_DEGRADE_FACTOR_MIN && x.factor <= 1)) {
      snprintf(why, why_size, "%s: the factor multiplies the bandwidth: expected a number from %g to 1, found '%s' "
               "(a failed link is --fail LINK@0)", kinds[kind].opt, DT_DEGRADE_FACTOR_MIN, val);
      return -1;
    }
  } else if (kind == DT_FAULT_FAIL) {
    if (parse_time0(val, &x.at_s, sub, sizeof sub) != 0) {
      snprintf(why, why_size, "%s %s: the failure time: %s", kinds[kind].opt, arg, sub);
      return -1;
    }
  } else {
    char buf[3][64];
    size_t nf = 0;
    const char *p = val;
    while (nf < 4) {
      size_t len = strcspn(p, ",");
      if (nf < 3) {
        if (len >= sizeof buf[0])
          len = sizeof buf[0] - 1;
        memcpy(buf[nf], p, len);
        buf[nf][len] = '\0';
      }
      nf++;
      p += strcspn(p, ",");
      if (!*p)
        break;
      p++;
    }
    double *dst[3] = {&x.period_s, &x.down_s, &x.start_s};
    if (nf < 2 || nf > 3) {
      snprintf(why, why_size, "%s expects %s, found '%s'", kinds[kind].opt, kinds[kind].form, arg);
      return -1;
    }
    for (size_t i = 0; i < nf; i++)
      if (parse_time0(buf[i], dst[i], sub, sizeof sub) != 0) {
        snprintf(why, why_size, "%s %s: %s: %s", kinds[kind].opt, arg, i == 0 ? "the period" : i == 1 ? "the downtime"
                 : "the start", sub);
        return -1;
      }
    if (!(x.down_s > 0 && x.down_s < x.period_s)) {
      snprintf(why, why_size, "%s %s: the downtime must be above 0 and below the period", kinds[kind].opt, arg);
      return -1;
    }
    if (!(x.period_s >= DT_FLAP_PERIOD_MIN * (1 - 1e-12))) {
      snprintf(why, why_size, "%s %s: the period must be at least %g s (each outage re-solves the sharing of "
               "every flow on the link: shorter periods make the run crawl)", kinds[kind].opt, arg, DT_FLAP_PERIOD_MIN);
      return -1;
    }
  }
  x.target = dt_xstrndup(arg, (size_t)(sep - arg));
  f->v = dt_xrealloc(f->v, sizeof *f->v * (f->n + 1));
  f->v[f->n++] = x;
  return 0;
}

/* Whether x acts during the run (a flap, or a failure after the start): a daemon actor of dt_faults_start. */
static int fault_dynamic(const dt_fault *x)
{
  return x->kind == DT_FAULT_FLAP || (x->kind == DT_FAULT_FAIL && x->at_s > 0);
}

/* When a dynamic fault first changes its link (s). */
static double fault_time(const dt_fault *x)
{
  return x->kind == DT_FAULT_FLAP ? x->start_s : x->at_s;
}

int dt_faults_dynamic(const dt_faults *f)
{
  int any = 0, moot = f && f->has_end; /* moot: every fault a change at or after the natural end */
  for (size_t i = 0; f && i < f->n; i++) {
    const dt_fault *x = &f->v[i];
    any |= fault_dynamic(x);
    moot &= fault_dynamic(x) && fault_time(x) >= f->end_s;
  }
  return any && !moot;
}

void dt_faults_set_natural_end(dt_faults *f, double end_s)
{
  f->has_end = 1;
  f->end_s = end_s;
}

/* A degraded link keeps at least the platform's smallest bandwidth (DT_BANDWIDTH_MIN): below it, SimGrid's
 * sharing loses the flows' rates and the run would end as a false deadlock. Degrades of one link multiply. */
static int check_floor(dt_topology *topo, size_t k, const dt_fault *x, dt_error *err)
{
  double bw = dt_topology_link(topo, k)->bandwidth;
  if (bw >= DT_BANDWIDTH_MIN)
    return DT_OK;
  char name[128];
  dt_topology_link_name(topo, k, name, sizeof name);
  return dt_error_set(err, "", 0, 0, "--degrade %s=%g leaves link %s at %.3g B/s, below the smallest bandwidth a "
                      "link may have (%g B/s; degrades of one link multiply); a failed link is --fail %s@0",
                      x->target, x->factor, name, bw, DT_BANDWIDTH_MIN, name);
}

/* The link named name (with or without the "cable:" prefix), or (size_t)-1. Linear in the links. */
static size_t find_link(const dt_topology *topo, const char *name)
{
  char buf[128];
  size_t n = dt_topology_link_count(topo);
  int bare = strncmp(name, "cable:", 6) != 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = dt_topology_link_name(topo, i, buf, sizeof buf);
    if (strcmp(s, name) == 0 || (bare && strncmp(s, "cable:", 6) == 0 && strcmp(s + 6, name) == 0))
      return i;
  }
  return (size_t)-1;
}

/* Up to 3 names near `name` among the platform's classes and link names, into buf ("'a', 'b'"). The links are
 * searched in chunks, each chunk's nearest kept, then the nearest of those: no table of every name. */
static void near_names(const dt_topology *topo, const char *name, char *buf, size_t size)
{
  enum { CHUNK = 1024 };
  char (*names)[64] = dt_xmalloc(sizeof *names * CHUNK);
  const char **cands = dt_xmalloc(sizeof *cands * CHUNK);
  char (*win)[64] = NULL;
  size_t nwin = 0, cap = 0;
  const char *bare = strncmp(name, "cable:", 6) == 0 ? name + 6 : name;
  size_t total = dt_topology_link_count(topo);
  int present[DT_LC_COUNT] = {0};
  for (size_t i = 0; i < total; i++)
    present[dt_topology_link_class(topo, i)] = 1;
  /* first the classes, then the links */
  size_t nc = 0;
  for (int c = 0; c < DT_LC_COUNT; c++)
    if (present[c])
      snprintf(names[nc++], sizeof names[0], "%s", dt_link_class_name((dt_link_class)c));
  size_t i = 0;
  for (;;) {
    while (nc < CHUNK && i < total) {
      char tmp[128];
      const char *s = dt_topology_link_name(topo, i++, tmp, sizeof tmp);
      snprintf(names[nc++], sizeof names[0], "%s", strncmp(s, "cable:", 6) == 0 ? s + 6 : s);
    }
    for (size_t k = 0; k < nc; k++)
      cands[k] = names[k];
    for (int pick = 0; pick < 3 && nc > 0; pick++) { /* the chunk's 3 nearest */
      const char *best = dt_nearest_word(bare, cands, nc);
      if (!best)
        break;
      win = dt_grow(win, &cap, nwin, sizeof *win);
      snprintf(win[nwin++], sizeof win[0], "%s", best);
      for (size_t k = 0; k < nc; k++)
        if (cands[k] == best) { /* keep the order: ties go to the first name */
          memmove(&cands[k], &cands[k + 1], sizeof *cands * (nc - k - 1));
          nc--;
          break;
        }
    }
    nc = 0;
    if (i >= total)
      break;
  }
  buf[0] = '\0';
  size_t len = 0;
  for (int shown = 0; shown < 3 && nwin > 0; shown++) {
    const char **wc = dt_xmalloc(sizeof *wc * nwin);
    for (size_t k = 0; k < nwin; k++)
      wc[k] = win[k];
    const char *best = dt_nearest_word(bare, wc, nwin);
    free(wc);
    if (!best)
      break;
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s'%s'", shown ? ", " : "", best);
    size_t k = (size_t)((const char(*)[64])best - (const char(*)[64])win);
    memmove(win[k], win[k + 1], sizeof win[0] * (nwin - k - 1));
    nwin--;
    if (len >= size)
      break;
  }
  free(win);
  free(cands);
  free(names);
}

static int resolve_error(const dt_topology *topo, const dt_fault *x, dt_error *err)
{
  char near[512];
  near_names(topo, x->target, near, sizeof near);
  const dt_platform *p = dt_topology_platform(topo);
  return dt_error_set(err, "", 0, 0, "%s: no link or link class '%s' on platform '%s'%s%s%s (list them: dtsim "
                      "platform show %s --links)", kinds[x->kind].opt, x->target, p->name ? p->name : "",
                      near[0] ? " (did you mean " : "", near, near[0] ? "?)" : "", p->source ? p->source : "PLATFORM");
}

int dt_faults_apply(dt_faults *f, dt_topology *topo, dt_error *err)
{
  size_t total = dt_topology_link_count(topo);
  for (size_t i = 0; f && i < f->n; i++) {
    dt_fault *x = &f->v[i];
    int cls = -1;
    for (int c = 0; c < DT_LC_COUNT; c++)
      if (strcmp(x->target, dt_link_class_name((dt_link_class)c)) == 0)
        cls = c;
    if (cls >= 0) {
      if (x->kind != DT_FAULT_DEGRADE)
        return dt_error_set(err, "", 0, 0, "%s expects one link, found the link class '%s' (a class can be "
                            "degraded: --degrade %s=FACTOR)", x->kind == DT_FAULT_FAIL ? "--fail" : "--flap",
                            x->target, x->target);
      x->nlinks = 0;
      for (size_t k = 0; k < total; k++)
        if (dt_topology_link_class(topo, k) == (dt_link_class)cls) {
          dt_topology_scale_bandwidth(topo, k, x->factor);
          if (check_floor(topo, k, x, err) != DT_OK)
            return DT_ERR;
          x->nlinks++;
        }
      if (x->nlinks == 0) {
        const dt_platform *p = dt_topology_platform(topo);
        return dt_error_set(err, "", 0, 0, "--degrade: platform '%s' has no link of class '%s' (list them: dtsim "
                            "platform show %s --links)", p->name ? p->name : "", x->target,
                            p->source ? p->source : "PLATFORM");
      }
      continue;
    }
    size_t k = find_link(topo, x->target);
    if (k == (size_t)-1)
      return resolve_error(topo, x, err);
    x->link = k;
    x->nlinks = 1;
    if (x->kind == DT_FAULT_FLAP) /* one profile per link: a second one's 'up' would end the first's outage */
      for (size_t j = 0; j < i; j++)
        if (f->v[j].kind == DT_FAULT_FLAP && f->v[j].link == k)
          return dt_error_set(err, "", 0, 0, "--flap %s is given twice: a link has one flapping profile (give one "
                              "PERIOD,DOWNTIME[,START])", x->target);
    if (x->kind == DT_FAULT_DEGRADE) {
      dt_topology_scale_bandwidth(topo, k, x->factor);
      if (check_floor(topo, k, x, err) != DT_OK)
        return DT_ERR;
    } else if (x->kind == DT_FAULT_FAIL && x->at_s == 0)
      dt_topology_set_down(topo, k, 1);
  }
  return DT_OK;
}

static int unreachable(const dt_topology *topo, int32_t ga, int32_t gb)
{
  dt_hop hops[DT_ROUTE_MAX_HOPS];
  return dt_topology_route(topo, ga, gb, hops, NULL, NULL) == DT_ROUTE_UNREACHABLE;
}

int dt_faults_unreachable(const dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank, int32_t *a,
                          int32_t *b)
{
  for (size_t g = 0; g < t->ngroups; g++) {
    const dt_group *gr = &t->groups[g];
    for (size_t i = 0; i < gr->nranks; i++)
      for (size_t j = 0; j < gr->nranks; j++)
        if (i != j && unreachable(topo, gpu_of_rank[gr->ranks[i]], gpu_of_rank[gr->ranks[j]])) {
          *a = gr->ranks[i];
          *b = gr->ranks[j];
          return 1;
        }
  }
  for (int32_t r = 0; r < t->nranks; r++) {
    const dt_rank *body = dt_trace_rank_body(t, r);
    for (size_t s = 0; s < body->nstreams; s++)
      for (size_t i = 0; i < body->streams[s].nops; i++) {
        const dt_op *op = &body->streams[s].ops[i];
        if (op->kind != DT_OP_SEND && op->kind != DT_OP_RECV)
          continue;
        int32_t peer = dt_trace_op_peer(t, r, op);
        if (peer < 0 || peer >= t->nranks)
          continue;
        int32_t src = op->kind == DT_OP_SEND ? r : peer, dst = op->kind == DT_OP_SEND ? peer : r;
        if (unreachable(topo, gpu_of_rank[src], gpu_of_rank[dst])) {
          *a = src;
          *b = dst;
          return 1;
        }
      }
  }
  return 0;
}

int dt_faults_partition_error(const dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank, dt_error *err)
{
  int32_t a, b;
  if (!dt_faults_unreachable(topo, t, gpu_of_rank, &a, &b))
    return DT_OK;
  char failed[512] = "", name[128];
  size_t len = 0, nd = 0;
  for (size_t i = 0; i < dt_topology_link_count(topo); i++)
    if (dt_topology_is_down(topo, i) && nd++ < 4 && len < sizeof failed)
      len += (size_t)snprintf(failed + len, sizeof failed - len, "%s%s", nd > 1 ? ", " : "",
                              nd > 3 ? "..." : dt_topology_link_name(topo, i, name, sizeof name));
  return dt_error_set(err, "", 0, 0, "the failed links partition the fabric: ranks %d and %d (gpu%d and gpu%d) "
                      "communicate but every route between them crosses a failed link (failed: %s)", (int)a, (int)b,
                      (int)gpu_of_rank[a], (int)gpu_of_rank[b], failed);
}

int dt_faults_check(dt_faults *f, const dt_platform *p, const dt_trace *t, const int32_t *placement, dt_error *err)
{
  dt_topology *topo = NULL;
  if (dt_topology_build(p, &topo, err) != DT_OK)
    return DT_ERR;
  int rc = dt_faults_apply(f, topo, err);
  if (rc == DT_OK) {
    size_t n = t->nranks > 0 ? (size_t)t->nranks : 0;
    int32_t *gpu = dt_xmalloc(sizeof *gpu * (n + 1));
    int ngpus = dt_platform_gpu_count(p);
    for (size_t r = 0; r < n; r++) {
      gpu[r] = placement ? placement[r] : (int32_t)r;
      if (gpu[r] < 0 || gpu[r] >= ngpus) /* the run reports it */
        gpu[r] = 0;
    }
    rc = dt_faults_partition_error(topo, t, gpu, err);
    free(gpu);
  }
  dt_topology_free(topo);
  return rc;
}

const char *dt_fault_describe(const dt_fault *x, const dt_topology *topo, char *buf, size_t size)
{
  char name[128], t1[64], t2[64], t3[64];
  const char *ln = x->nlinks == 1 && topo ? dt_topology_link_name(topo, x->link, name, sizeof name) : x->target;
  switch (x->kind) {
  case DT_FAULT_DEGRADE:
    snprintf(buf, size, "degrade %s x%g: bandwidth of %zu link%s multiplied by %g", x->target, x->factor, x->nlinks,
             x->nlinks == 1 ? "" : "s", x->factor);
    break;
  case DT_FAULT_FAIL:
    if (x->at_s == 0)
      snprintf(buf, size, "fail %s from the start: routes avoid it where the fabric has another path", ln);
    else
      snprintf(buf, size, "fail %s at %s: flows started later avoid it; a flow crossing it then stops the run "
               "(NCCL aborts)", ln, dt_format_time(x->at_s, t1, sizeof t1));
    break;
  case DT_FAULT_FLAP:
    snprintf(buf, size, "flap %s: down %s every %s from %s (flows on it stall, routes unchanged)", ln,
             dt_format_time(x->down_s, t1, sizeof t1), dt_format_time(x->period_s, t2, sizeof t2),
             dt_format_time(x->start_s, t3, sizeof t3));
    break;
  }
  return buf;
}

/* ---- the runtime part ---- */

typedef struct fault_actor {
  const dt_fault *x;
  dt_topology *topo;
  const dt_trace *t;
  const int32_t *gpu_of_rank;
  dt_fault_abort_fn abort_fn;
  void *data;
  sg_link_t sg[2];  /* the SimGrid link's _UP and _DOWN members */
  double bw;        /* their bandwidth after the degrades */
} fault_actor;

static fault_actor *actors;
static size_t nactors;

static void fail_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sg_actor_daemonize(sg_actor_self());
  fault_actor *a = sg_actor_self_get_data();
  sg_actor_sleep_until(a->x->at_s);
  char name[128], why[512], at[32];
  dt_topology_link_name(a->topo, a->x->link, name, sizeof name);
  dt_format_time(a->x->at_s, at, sizeof at); /* as the report writes times */
  if (dt_sg_link_in_use(a->sg[0]) || dt_sg_link_in_use(a->sg[1])) {
    snprintf(why, sizeof why, "link %s failed at %s while flows crossed it: NCCL has no retransmission over "
             "another path, its communicator reports a transport error and the job stops (the ops listed were "
             "running or waiting)", name, at);
    a->abort_fn(a->data, simgrid_get_clock(), why);
    return;
  }
  dt_topology_set_down(a->topo, a->x->link, 1);
  a->abort_fn(a->data, simgrid_get_clock(), NULL);
  int32_t ra, rb;
  if (dt_faults_unreachable(a->topo, a->t, a->gpu_of_rank, &ra, &rb)) {
    snprintf(why, sizeof why, "link %s failed at %s: ranks %d and %d can no longer reach each other (every "
             "route between gpu%d and gpu%d crosses a failed link)", name, at, (int)ra, (int)rb,
             (int)a->gpu_of_rank[ra], (int)a->gpu_of_rank[rb]);
    a->abort_fn(a->data, simgrid_get_clock(), why);
  }
}

/* SimGrid ignores a bandwidth of 0 (the flows keep their rate): an outage is 1 byte/s. */
#define FLAP_DOWN_BW 1.0

/* Seconds of wall time after which, and between which, a flapping run says it is still running (stderr). */
#define FLAP_PROGRESS_S 10.0
static double flap_wall0, flap_said; /* when the run started, when the last line was printed */

static void flap_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sg_actor_daemonize(sg_actor_self());
  fault_actor *a = sg_actor_self_get_data();
  unsigned long epoch = 0;
  int quiet = 0;
  for (double k = 0;; k++) {
    double t0 = a->x->start_s + k * a->x->period_s;
    sg_actor_sleep_until(t0);
    /* the other actors blocked for good (a deadlock): stop flapping so that the run ends and says so, instead of
     * outages forever (SimGrid sees no deadlock while a daemon has events) */
    unsigned long e;
    if (dt_sg_activity_quiet(&e)) {
      if (quiet && e == epoch)
        return;
      quiet = 1;
      epoch = e;
    } else
      quiet = 0;
    double w = dt_wall_now();
    if (w - flap_said >= FLAP_PROGRESS_S) { /* one line for all the flapping links, rate-limited */
      char name[128], st[32];
      dt_topology_link_name(a->topo, a->x->link, name, sizeof name);
      fprintf(stderr, "dtsim: still running after %.0f s of wall time: simulated %s so far, link %s down %.0f times "
              "(each outage re-solves the sharing: a short --flap period over a long run costs time)\n",
              w - flap_wall0, dt_format_time(simgrid_get_clock(), st, sizeof st), name, k);
      flap_said = w;
    }
    sg_link_set_bandwidth(a->sg[0], FLAP_DOWN_BW);
    sg_link_set_bandwidth(a->sg[1], FLAP_DOWN_BW);
    sg_actor_sleep_until(t0 + a->x->down_s);
    sg_link_set_bandwidth(a->sg[0], a->bw);
    sg_link_set_bandwidth(a->sg[1], a->bw);
  }
}

void dt_faults_stop(void)
{
  free(actors);
  actors = NULL;
  nactors = 0;
}

int dt_faults_start(const dt_faults *f, dt_topology *topo, const dt_trace *t, const int32_t *gpu_of_rank,
                    sg_host_t host, dt_fault_abort_fn abort_fn, void *data, dt_error *err)
{
  dt_faults_stop();
  if (!f || !dt_faults_dynamic(f))
    return DT_OK;
  actors = dt_xcalloc(f->n, sizeof *actors);
  for (size_t i = 0; i < f->n; i++)
    if (f->v[i].kind == DT_FAULT_FLAP) {
      dt_sg_activity_watch(); /* a flap's outages never end: it stops when nothing else can act (a deadlock) */
      flap_wall0 = flap_said = dt_wall_now();
      break;
    }
  for (size_t i = 0; i < f->n; i++) {
    const dt_fault *x = &f->v[i];
    if (!fault_dynamic(x))
      continue;
    fault_actor *a = &actors[nactors++];
    *a = (fault_actor){x, topo, t, gpu_of_rank, abort_fn, data, {NULL, NULL}, dt_topology_link(topo, x->link)->bandwidth};
    char name[128], sgname[160];
    dt_topology_link_name(topo, x->link, name, sizeof name);
    for (int d = 0; d < 2; d++) {
      snprintf(sgname, sizeof sgname, "%s%s", name, d ? "_DOWN" : "_UP");
      a->sg[d] = sg_link_by_name(sgname);
      if (!a->sg[d])
        return dt_error_set(err, "", 0, 0, "the SimGrid platform has no link '%s'", sgname);
    }
    sg_actor_t act = sg_actor_init(x->kind == DT_FAULT_FAIL ? "fail" : "flap", host);
    sg_actor_set_data(act, a);
    dt_sg_activity_ignore(act);
    sg_actor_start(act, x->kind == DT_FAULT_FAIL ? fail_actor : flap_actor, 0, NULL);
  }
  return DT_OK;
}
