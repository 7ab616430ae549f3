/* `dtsim run --explain`: the replay's explain rows (replay/dt_explain.c) turned into plain words with this run's
 * numbers. Formulas: the alpha-beta closed forms of docs/replay.md (DESIGN.md §6), their numbers priced by the
 * replay's plan table (dt_explain_textbook_of), the NCCL tuner model of replay/dt_coll_select.c, algbw and busbw
 * as nccl-tests' PERFORMANCE.md defines them. */
#include "dt_explain.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../replay/dt_linkload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SHAPES 12
#define JSON_SHAPES 500

static int same_shape(const dt_explain_row *a, const dt_explain_row *b)
{
  return a->kind == b->kind && a->bytes == b->bytes && a->algo == b->algo && a->proto == b->proto && a->n == b->n &&
         a->nnodes == b->nnodes && a->est_s == b->est_s && a->alpha_s == b->alpha_s && a->bw_Bps == b->bw_Bps;
}

static int cmp_shape(const void *pa, const void *pb)
{
  const dt_explain_shape *a = pa, *b = pb;
  if (a->time_s != b->time_s)
    return a->time_s < b->time_s ? 1 : -1;
  if (a->row->kind != b->row->kind)
    return (int)a->row->kind - (int)b->row->kind;
  return (a->row->bytes > b->row->bytes) - (a->row->bytes < b->row->bytes);
}

void dt_explain_shapes(const dt_stats *s, dt_explain_shape **out, size_t *n)
{
  dt_explain_shape *v = NULL;
  size_t nv = 0, cap = 0;
  for (size_t i = 0; i < s->nexplain; i++) {
    const dt_explain_row *r = &s->explain[i];
    if (r->count == 0)
      continue;
    size_t k = 0;
    while (k < nv && !same_shape(v[k].row, r))
      k++; /* shapes are few (sizes x kinds x group shapes): a linear search is enough */
    if (k == nv) {
      v = dt_grow(v, &cap, nv, sizeof *v);
      v[nv++] = (dt_explain_shape){r, 0, 0, 0, r->min_s, r->max_s};
    }
    v[k].ngroups++;
    v[k].count += r->count;
    v[k].time_s += r->time_s;
    v[k].min_s = fmin(v[k].min_s, r->min_s);
    v[k].max_s = fmax(v[k].max_s, r->max_s);
  }
  if (nv)
    qsort(v, nv, sizeof *v, cmp_shape);
  *out = v;
  *n = nv;
}

/* ---- numbers in words ---- */

static const char *t_str(double s, char *buf, size_t size)
{
  double a = fabs(s);
  if (a == 0)
    snprintf(buf, size, "0 s");
  else if (a < 1e-6)
    snprintf(buf, size, "%.3g ns", s * 1e9);
  else if (a < 1e-3)
    snprintf(buf, size, "%.4g us", s * 1e6);
  else if (a < 1)
    snprintf(buf, size, "%.4g ms", s * 1e3);
  else
    snprintf(buf, size, "%.4g s", s);
  return buf;
}

static const char *choice_str(int algo, int proto, char *buf, size_t size)
{
  snprintf(buf, size, "%s%s%s", dt_algo_name((dt_algo)algo), proto >= 0 ? "/" : "",
           proto >= 0 ? dt_proto_name((dt_proto)proto) : "");
  return buf;
}

/* The textbook alpha-beta closed form of a collective (docs/replay.md): latency and bandwidth terms (s), the
 * formula, the substituted coefficients, and the alpha and B used. The numbers are the plan table's: the replay
 * prices the kind's textbook plan on a textbook shape (dt_explain_textbook_of, replay/dt_explain.c); only the
 * formula's words are written here. */
typedef struct textbook {
  double lat, bw, alpha, B;
  double ka, kb; /* lat = ka alpha, bw = kb S / B */
  const char *formula;
} textbook;

static textbook textbook_of(const dt_explain_row *r)
{
  textbook tb;
  double S = (double)r->bytes;
  dt_explain_textbook p = dt_explain_textbook_of(r);
  tb.alpha = p.alpha, tb.B = p.B, tb.ka = p.ka, tb.kb = p.kb;
  switch (r->kind) {
  case DT_OP_ALLGATHER:
    tb.formula = "(n-1)a + (n-1) S/B";
    break;
  case DT_OP_REDUCESCATTER:
    tb.formula = "(n-1)a + (n-1)/n S/B";
    break;
  case DT_OP_BROADCAST:
  case DT_OP_REDUCE:
    tb.formula = "(n-1)a + S/B";
    break;
  case DT_OP_ALLTOALL: /* the bytes that leave the node go through the member's NIC share, unless those inside
                          the node take longer */
    tb.formula = p.net ? "a + (n-m)/n S/B" : r->nnodes > 1 ? "a + (m-1)/n S/B" : "a + (n-1)/n S/B";
    break;
  default: /* all-reduce, and barrier and `other`, which run as all-reduces */
    tb.formula = "2(n-1)a + 2(n-1)/n S/B";
    break;
  }
  tb.lat = tb.ka * tb.alpha;
  tb.bw = tb.B > 0 ? tb.kb * S / tb.B : 0;
  return tb;
}

/* The estimate the explanation compares with (s) and its size-independent part: the NCCL tuner model's on an
 * NCCL-model platform; the textbook closed form otherwise (what the replay runs there, exact when contention-free). */
static double estimate_of(const dt_report_input *in, const dt_explain_row *r, double *lat)
{
  if (in->platform->nccl) {
    *lat = r->est_lat_s;
    return r->est_s;
  }
  textbook tb = textbook_of(r);
  *lat = tb.lat;
  return tb.lat + tb.bw;
}

static const char *group_name(const dt_trace *t, int32_t g)
{
  return g >= 0 && (size_t)g < t->ngroups ? t->groups[g].name : "?";
}

/* The busiest link direction that carried bytes of group g, or NULL. */
static const dt_link_load *busiest_link_of(const dt_stats *s, int32_t g)
{
  if (!s->links)
    return NULL;
  for (size_t i = 0; i < s->links->nlinks; i++) {
    const dt_link_load *l = &s->links->links[i];
    for (size_t k = 0; k < l->ngroups; k++)
      if (l->groups[k].group == g)
        return l;
  }
  return NULL;
}

static double mean_of(const dt_explain_shape *sh)
{
  return sh->count ? sh->time_s / (double)sh->count : 0;
}

/* Link direction l's busy share of the run: over the makespan, or the time a run that stopped reached. */
static double busy_share(const dt_stats *s, const dt_link_load *l)
{
  double span = dt_stats_link_span(s);
  return span > 0 ? l->busy_s / span : 0;
}

/* nccl-tests' size: all-gather counts the gathered n x shard */
static double nccl_size(const dt_explain_row *r)
{
  return r->kind == DT_OP_ALLGATHER ? (double)r->n * (double)r->bytes : (double)r->bytes;
}

void dt_explain_shape_text(FILE *f, const dt_report_input *in, const dt_explain_shape *sh)
{
  const dt_explain_row *r = sh->row;
  const dt_stats *s = in->stats;
  char a[64], b[64], c[64], d[64], e[64], ch[64];
  double mean = mean_of(sh);
  fprintf(f, "%s of %s (%llu bytes) on %d ranks, %d node%s, %zu group%s (%s%s), %llu instance%s, %s in all\n",
          dt_op_kind_name(r->kind), dt_format_bytes((double)r->bytes, a, sizeof a), (unsigned long long)r->bytes,
          (int)r->n, (int)r->nnodes, r->nnodes == 1 ? "" : "s", sh->ngroups, sh->ngroups == 1 ? "" : "s",
          group_name(in->trace, r->group), sh->ngroups > 1 ? ", ..." : "", (unsigned long long)sh->count,
          sh->count == 1 ? "" : "s", t_str(sh->time_s, b, sizeof b));
  /* what ran, and why */
  choice_str(r->algo, r->proto, ch, sizeof ch);
  if (in->platform->nccl) {
    fprintf(f, "  ran            %s over %d channel%s\n", ch, (int)r->nchannels, r->nchannels == 1 ? "" : "s");
    /* the candidates in estimate order */
    dt_explain_cand v[DT_EXPLAIN_MAX_CANDS];
    size_t nc = r->ncand;
    memcpy(v, r->cand, nc * sizeof *v);
    for (size_t i = 1; i < nc; i++)
      for (size_t j = i; j > 0 && v[j].est_s < v[j - 1].est_s; j--) {
        dt_explain_cand tmp = v[j];
        v[j] = v[j - 1];
        v[j - 1] = tmp;
      }
    int least = nc > 0 && v[0].algo == r->algo && v[0].proto == r->proto;
    fprintf(f, "  why            NCCL's tuner model: %s of %zu estimates (latency + size / bandwidth):",
            least ? "the least" : "forced (--algo/--proto), not the least", nc);
    for (size_t i = 0; i < nc && i < 5; i++)
      fprintf(f, "%s %s %s", i ? "," : "", choice_str(v[i].algo, v[i].proto, a, sizeof a),
              t_str(v[i].est_s, b, sizeof b));
    fprintf(f, "%s\n", nc > 5 ? ", ..." : "");
    /* the protocol: against the same algorithm with the next-best protocol */
    const dt_explain_cand *alt = NULL;
    for (size_t i = 0; i < nc; i++)
      if (v[i].algo == r->algo && v[i].proto != r->proto && (!alt || v[i].est_s < alt->est_s))
        alt = &v[i];
    if (alt)
      fprintf(f, "  protocol       %s over %s: latency %s vs %s, bandwidth term %s vs %s (protocol efficiency)\n",
              dt_proto_name((dt_proto)r->proto), dt_proto_name((dt_proto)alt->proto), t_str(r->est_lat_s, a, sizeof a),
              t_str(alt->lat_s, b, sizeof b), t_str(r->est_s - r->est_lat_s, c, sizeof c),
              t_str(alt->est_s - alt->lat_s, d, sizeof d));
  } else {
    fprintf(f, "  ran            %s (a textbook platform, no nccl: section: every %s runs %s)\n", ch,
            dt_op_kind_name(r->kind), dt_algo_name((dt_algo)r->algo));
  }
  /* the alpha-beta closed form with this run's numbers */
  textbook tb = textbook_of(r);
  fprintf(f, "  alpha-beta     %s, a = %s, B = %.4g GB/s: %.4g x %s + %.4g x %s / %.4g GB/s = %s + %s = %s\n",
          tb.formula, t_str(tb.alpha, a, sizeof a), tb.B / 1e9, tb.ka, t_str(tb.alpha, b, sizeof b), tb.kb,
          dt_format_bytes((double)r->bytes, c, sizeof c), tb.B / 1e9, t_str(tb.lat, d, sizeof d),
          t_str(tb.bw, e, sizeof e), t_str(tb.lat + tb.bw, ch, sizeof ch));
  if (in->platform->nccl)
    fprintf(f, "  NCCL model     %s: latency %s (of it fixed %s: protocol + algorithm) + bandwidth %s (efficiency "
               "%.3g) = %s\n",
            choice_str(r->algo, r->proto, ch, sizeof ch), t_str(r->est_lat_s, a, sizeof a),
            t_str(r->fixed_s, b, sizeof b), t_str(r->est_s - r->est_lat_s, c, sizeof c), r->eff,
            t_str(r->est_s, d, sizeof d));
  /* what the simulation gave, in nccl-tests' terms */
  double size = nccl_size(r), factor = dt_busbw_factor(r->kind, (size_t)r->n);
  double algbw = mean > 0 ? size / mean : 0, busbw = algbw * factor;
  fprintf(f, "  simulated      mean %s (least %s, most %s); algbw = size / time = %s / %s = %.4g GB/s; busbw = "
             "algbw x %.4g = %.4g GB/s",
          t_str(mean, a, sizeof a), t_str(sh->min_s, b, sizeof b), t_str(sh->max_s, c, sizeof c),
          dt_format_bytes(size, d, sizeof d), t_str(mean, e, sizeof e), algbw / 1e9, factor, busbw / 1e9);
  if (tb.B > 0 && factor > 0)
    fprintf(f, ", %.0f %% of B%s", 100 * busbw / tb.B,
            busbw > tb.B * 1.001 ? " (above B: the algorithm moves less per rank than a ring, NVLS reducing in the "
                                   "switch, a tree over fewer hops)" : "");
  fputc('\n', f);
  /* why it differs from the estimate */
  double est_lat, est = estimate_of(in, r, &est_lat), dev = est > 0 ? mean / est - 1 : 0;
  if (fabs(dev) < 5e-4)
    dev = 0; /* no "-0.0 %" */
  fprintf(f, "  difference     ");
  if (fabs(dev) <= 0.01)
    fprintf(f, "%+.1f %% from the estimate: contention-free, nothing else shared the group's links while it ran", 100 * dev);
  else if (dev > 0) {
    fprintf(f, "%+.1f %% over the contention-free estimate: its flows shared links with concurrent traffic", 100 * dev);
    const dt_link_load *l = busiest_link_of(s, r->group);
    if (l)
      fprintf(f, " (the busiest link it crossed: %s, %s, busy %.0f %% of the run)", l->name, dt_link_class_name(l->cls),
              100 * busy_share(s, l));
  } else
    fprintf(f, "%+.1f %% under the estimate: the tuner's estimate charges the worst hop's latency for every step, the "
               "replay each hop its own", 100 * dev);
  if (sh->max_s > sh->min_s * 1.05)
    fprintf(f, "; instances range from %s to %s (contention differs between them)", t_str(sh->min_s, a, sizeof a),
            t_str(sh->max_s, b, sizeof b));
  double lat_share = est > 0 ? est_lat / est : 0;
  if (lat_share > 0.5)
    fprintf(f, "; latency-bound at this size: the latency term is %.0f %% of the estimate, so busbw stays far below "
               "the links' bandwidth\n", 100 * lat_share);
  else
    fprintf(f, "; bandwidth-bound: the latency term is %.0f %% of the estimate\n", 100 * lat_share);
}

/* ---- send/recv pairs ---- */

#define TEXT_P2P 8
#define JSON_P2P 500

/* A row's entry: a pair, or a batch queue of N pairs moving DT_BATCH_PAIR_WINDOW at a time, in ceil(N / 8) rounds
 * of a latency each (docs/replay.md, Batches): its rounds, and its bytes in all. */
static double p2p_rounds(const dt_explain_p2p *r)
{
  return r->batch_pairs ? ceil((double)r->batch_pairs / DT_BATCH_PAIR_WINDOW) : 1;
}

static double p2p_total_bytes(const dt_explain_p2p *r)
{
  return r->batch_pairs ? (double)r->batch_bytes : (double)r->bytes;
}

/* The alpha-beta prediction of an entry (s): a + S/B over its route for a pair, ceil(N/8) a + N S/B for a batch
 * queue of N pairs of S; with the NCCL model's terms (estimate_of_p2p) the flows carry S / eff and both sides of
 * the (last) pair then wait the protocol's fixed cost. */
static double p2p_alphabeta(const dt_explain_p2p *r)
{
  return p2p_rounds(r) * r->alpha_s + (r->bw_Bps > 0 ? p2p_total_bytes(r) / r->bw_Bps : 0);
}

static double p2p_estimate(const dt_explain_p2p *r)
{
  return p2p_rounds(r) * r->alpha_s + (r->bw_Bps > 0 ? p2p_total_bytes(r) / r->eff / r->bw_Bps : 0) + r->cost_s;
}

static double p2p_mean(const dt_explain_p2p *r)
{
  return r->count ? r->time_s / (double)r->count : 0;
}

/* The busiest direction (largest busy_s) of the per-link accounting on r's route, or NULL. */
static const dt_link_load *p2p_busiest(const dt_stats *s, const dt_explain_p2p *r)
{
  const dt_link_load *best = NULL;
  for (size_t i = 0; s->links && i < s->links->nlinks; i++) {
    const dt_link_load *l = &s->links->links[i];
    for (int h = 0; h < r->nhops; h++)
      if (l->link == r->hop_link[h] && l->dir == r->hop_dir[h] && (!best || l->busy_s > best->busy_s))
        best = l;
  }
  return best;
}

static int cmp_p2p(const void *pa, const void *pb)
{
  const dt_explain_p2p *a = *(const dt_explain_p2p *const *)pa, *b = *(const dt_explain_p2p *const *)pb;
  if (a->time_s != b->time_s)
    return a->time_s < b->time_s ? 1 : -1;
  return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* The rows by total time, largest first (caller frees; pointers into s). */
static const dt_explain_p2p **p2p_sorted(const dt_stats *s)
{
  const dt_explain_p2p **v = dt_xmalloc((s->nexplain_p2p ? s->nexplain_p2p : 1) * sizeof *v);
  for (size_t i = 0; i < s->nexplain_p2p; i++)
    v[i] = &s->explain_p2p[i];
  if (s->nexplain_p2p)
    qsort(v, s->nexplain_p2p, sizeof *v, cmp_p2p);
  return v;
}

void dt_explain_p2p_text(FILE *f, const dt_report_input *in, const dt_explain_p2p *r)
{
  const dt_stats *s = in->stats;
  char a[64], b[64], c[64], d[64], e[64], w[64];
  double S = p2p_total_bytes(r), mean = p2p_mean(r), ab = p2p_alphabeta(r), k = p2p_rounds(r);
  if (r->batch_pairs)
    fprintf(f, "send/recv batches: queues of %llu pairs of %s (%llu bytes in all) %s, %d hop%s, %llu queue%s "
               "(first: rank %d on node %d -> rank %d on node %d), %s in all, each timed as a batch is on the send "
               "row (while one of its pairs had both sides posted and was not complete)\n",
            (unsigned long long)r->batch_pairs, dt_format_bytes((double)r->bytes, a, sizeof a),
            (unsigned long long)r->batch_bytes, r->src_node == r->dst_node ? "inside a node" : "between nodes",
            r->nhops, r->nhops == 1 ? "" : "s", (unsigned long long)r->count, r->count == 1 ? "" : "s", (int)r->src,
            (int)r->src_node, (int)r->dst, (int)r->dst_node, t_str(r->time_s, b, sizeof b));
  else
    fprintf(f, "send/recv of %s (%llu bytes) %s, %d hop%s, %llu pair%s (first: rank %d on node %d -> rank %d on "
               "node %d), %s in all\n",
            dt_format_bytes(S, a, sizeof a), (unsigned long long)r->bytes,
            r->src_node == r->dst_node ? "inside a node" : "between nodes", r->nhops, r->nhops == 1 ? "" : "s",
            (unsigned long long)r->count, r->count == 1 ? "" : "s", (int)r->src, (int)r->src_node, (int)r->dst,
            (int)r->dst_node, t_str(r->time_s, b, sizeof b));
  if (r->batch_pairs)
    fprintf(f, "  alpha-beta     ceil(N/8) a + N S/B (a queue moves 8 pairs at a time, NCCL_STEPS), N = %llu, a = %s "
               "(the route's latencies summed), B = %.4g GB/s (its slowest link, %s): %.0f x %s + %s / %.4g GB/s = "
               "%s + %s = %s\n",
            (unsigned long long)r->batch_pairs, t_str(r->alpha_s, a, sizeof a), r->bw_Bps / 1e9, r->slowest_name, k,
            t_str(r->alpha_s, b, sizeof b), dt_format_bytes(S, c, sizeof c), r->bw_Bps / 1e9,
            t_str(k * r->alpha_s, d, sizeof d), t_str(r->bw_Bps > 0 ? S / r->bw_Bps : 0, e, sizeof e),
            t_str(ab, w, sizeof w));
  else
    fprintf(f, "  alpha-beta     a + S/B, a = %s (the route's latencies summed), B = %.4g GB/s (its slowest link, "
               "%s): %s + %s / %.4g GB/s = %s + %s = %s\n",
            t_str(r->alpha_s, a, sizeof a), r->bw_Bps / 1e9, r->slowest_name, t_str(r->alpha_s, b, sizeof b),
            dt_format_bytes(S, c, sizeof c), r->bw_Bps / 1e9, t_str(r->alpha_s, d, sizeof d),
            t_str(r->bw_Bps > 0 ? S / r->bw_Bps : 0, e, sizeof e), t_str(ab, w, sizeof w));
  if (in->platform->nccl)
    fprintf(f, "  NCCL model     %s protocol: %s + (%s / efficiency %.3g) / B + %s fixed cost %s = %s + %s + %s = %s\n",
            r->proto ? r->proto : "?", r->batch_pairs ? "ceil(N/8) a" : "a", r->batch_pairs ? "N S" : "S", r->eff,
            r->batch_pairs ? "the last pair's" : "its", t_str(r->cost_s, a, sizeof a),
            t_str(k * r->alpha_s, b, sizeof b), t_str(r->bw_Bps > 0 ? S / r->eff / r->bw_Bps : 0, c, sizeof c),
            t_str(r->cost_s, d, sizeof d), t_str(p2p_estimate(r), e, sizeof e));
  fprintf(f, "  simulated      mean %s (least %s, most %s); %s / time = %.4g GB/s, %.0f %% of B\n",
          t_str(mean, a, sizeof a), t_str(r->min_s, b, sizeof b), t_str(r->max_s, c, sizeof c),
          r->batch_pairs ? "N S" : "S", mean > 0 ? S / mean / 1e9 : 0,
          mean > 0 && r->bw_Bps > 0 ? 100 * S / mean / r->bw_Bps : 0);
  double est = p2p_estimate(r), dev = est > 0 ? mean / est - 1 : 0;
  if (fabs(dev) < 5e-4)
    dev = 0;
  fprintf(f, "  difference     ");
  if (fabs(dev) <= 0.01)
    fprintf(f, "%+.1f %% from the %s: contention-free, the %s had its route to itself", 100 * dev,
            in->platform->nccl ? "NCCL model's estimate" : "alpha-beta prediction", r->batch_pairs ? "queue" : "pair");
  else if (dev > 0) {
    fprintf(f, "%+.1f %% over the contention-free %s: its %s shared links with concurrent traffic", 100 * dev,
            in->platform->nccl ? "estimate" : "prediction", r->batch_pairs ? "flows" : "flow");
    const dt_link_load *l = p2p_busiest(s, r);
    if (l && l->peak_flows > 1)
      fprintf(f, " (contention on %s, %s: busy %.0f %% of the run, up to %u flows at once)", l->name,
              dt_link_class_name(l->cls), 100 * busy_share(s, l), l->peak_flows);
    else if (l)
      fprintf(f, " (on other pairs' routes: the first pair's links never carried two flows at once)");
  } else
    fprintf(f, "%+.1f %% under the estimate", 100 * dev);
  if (r->max_s > r->min_s * 1.05) {
    fprintf(f, "; %s range from %s to %s", r->batch_pairs ? "queues" : "pairs", t_str(r->min_s, a, sizeof a),
            t_str(r->max_s, b, sizeof b));
    const dt_link_load *l = p2p_busiest(s, r);
    if (l && dev <= 0.01 && r->max_s > est * 1.01) {
      if (l->peak_flows > 1)
        fprintf(f, " (the slowest shared links with other traffic: the busiest link of the first pair's route is %s, "
                   "busy %.0f %% of the run, up to %u flows at once)", l->name,
                100 * busy_share(s, l), l->peak_flows);
      else
        fprintf(f, " (the slowest shared links with other traffic on other pairs' routes: the first pair's links "
                   "never carried two flows at once)");
    }
  }
  double lat = k * r->alpha_s + r->cost_s;
  if (est > 0 && lat / est > 0.5)
    fprintf(f, "; latency-bound at this size: latency is %.0f %% of the estimate\n", 100 * lat / est);
  else
    fprintf(f, "; bandwidth-bound: latency is %.0f %% of the estimate\n", 100 * (est > 0 ? lat / est : 0));
}

static double cp_comm(const dt_critical *c, int *dim, int *kind)
{
  double total = 0, best = -1;
  for (int d = 0; d < DT_DIM_COUNT; d++)
    for (int k = 0; k < DT_OP_COUNT; k++) {
      total += c->comm_s[d][k];
      if (c->comm_s[d][k] > best) {
        best = c->comm_s[d][k];
        *dim = d;
        *kind = k;
      }
    }
  return total;
}

void dt_explain_text(FILE *f, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  char a[64], b[64], c[64], w[64];
  fprintf(f, "\nexplain            what each collective did (n ranks, S per-rank bytes, a route latency, B the\n"
             "                   ring's bottleneck bandwidth per rank; busbw = algbw x 2(n-1)/n for all-reduce,\n"
             "                   (n-1)/n for all-gather, reduce-scatter, all-to-all, 1 otherwise: nccl-tests)\n\n");
  dt_explain_shape *v;
  size_t n;
  dt_explain_shapes(s, &v, &n);
  for (size_t i = 0; i < n && i < TEXT_SHAPES; i++) {
    dt_explain_shape_text(f, in, &v[i]);
    fputc('\n', f);
  }
  if (n > TEXT_SHAPES) {
    double rest = 0;
    for (size_t i = TEXT_SHAPES; i < n; i++)
      rest += v[i].time_s;
    fprintf(f, "%zu more collective shapes, %s of instance time in all (--json lists them)\n\n", n - TEXT_SHAPES,
            t_str(rest, a, sizeof a));
  }
  if (n == 0)
    fprintf(f, "no collective ran on more than one rank\n\n");
  if (s->explain_dropped)
    fprintf(f, "%llu instances not explained (more distinct shapes than kept)\n\n",
            (unsigned long long)s->explain_dropped);
  const dt_kind_stats *p2p = &s->by_kind[DT_OP_SEND];
  if (s->nexplain_p2p) {
    const dt_explain_p2p **pv = p2p_sorted(s);
    for (size_t i = 0; i < s->nexplain_p2p && i < TEXT_P2P; i++) {
      dt_explain_p2p_text(f, in, pv[i]);
      fputc('\n', f);
    }
    if (s->nexplain_p2p > TEXT_P2P) {
      double rest = 0;
      for (size_t i = TEXT_P2P; i < s->nexplain_p2p; i++)
        rest += pv[i]->time_s;
      fprintf(f, "%zu more send/recv shapes, %s of pair time in all (--json lists them)\n\n",
              s->nexplain_p2p - TEXT_P2P, t_str(rest, a, sizeof a));
    }
    if (s->explain_p2p_dropped)
      fprintf(f, "%llu pairs not explained (more distinct sizes and routes than kept)\n\n",
              (unsigned long long)s->explain_p2p_dropped);
    free(pv);
  } else if (p2p->count)
    fprintf(f,
            "send/recv: %llu pairs, %s, %s in all, mean %s each (each pair is one flow over its route; on the "
            "NCCL model LL up to 16 KiB, else Simple)\n\n",
            (unsigned long long)p2p->count, dt_format_bytes((double)p2p->bytes, a, sizeof a),
            t_str(p2p->time_s, b, sizeof b), t_str(p2p->time_s / (double)p2p->count, c, sizeof c));
  free(v);
  /* what bounds the iteration */
  const dt_critical *cp = s->critical;
  if (!cp || !(s->makespan_s > 0))
    return;
  int dim = 0, kind = 0;
  double comm = cp_comm(cp, &dim, &kind), T = s->makespan_s;
  fprintf(f, "what bounds it     the critical path (the chain of ops, each waiting for the one before, that ends at "
             "the makespan %s) is\n", t_str(T, a, sizeof a));
  fprintf(f, "                   compute %s (%.1f %%), exposed communication %s (%.1f %%), host/launch %s, waiting %s.\n",
          t_str(cp->compute_s, a, sizeof a), 100 * cp->compute_s / T, t_str(comm, b, sizeof b), 100 * comm / T,
          t_str(cp->host_s, c, sizeof c), t_str(cp->wait_s, w, sizeof w));
  double comm_all = 0, exposed_all = 0;
  for (int32_t r = 0; r < s->nranks; r++) {
    comm_all += s->per_rank[r].comm_s;
    exposed_all += s->per_rank[r].exposed_comm_s;
  }
  if (cp->compute_s >= comm && cp->compute_s >= cp->host_s && cp->compute_s >= cp->wait_s)
    fprintf(f, "                   Compute bounds it: faster links could shorten the iteration by at most the exposed "
               "%s;\n                   faster GPUs (or less recompute) shorten it directly.\n",
            t_str(comm, a, sizeof a));
  else if (comm >= cp->host_s && comm >= cp->wait_s)
    fprintf(f, "                   Communication bounds it, the largest part %s %s on the path (%s): overlap it with "
               "compute,\n                   or give its tier more bandwidth (the bound line above names the tier).\n",
            dt_dim_name((dt_dim)dim), dt_op_kind_name((dt_op_kind)kind), t_str(cp->comm_s[dim][kind], a, sizeof a));
  else
    fprintf(f, "                   Host/launch time or waiting bounds it: the GPUs idle on the path.\n");
  if (comm_all > 0)
    fprintf(f, "                   Over all ranks %.0f %% of the communication time was hidden behind compute.\n",
            100 * (1 - exposed_all / comm_all));
}

/* ---- JSON ---- */

static void jkey(yajl_gen g, const char *k)
{
  yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void jnum(yajl_gen g, const char *k, double v)
{
  char buf[40];
  jkey(g, k);
  if (!isfinite(v))
    v = 0;
  int len = snprintf(buf, sizeof buf, "%.17g", v);
  yajl_gen_number(g, buf, (size_t)len);
}

static void jint(yajl_gen g, const char *k, long long v)
{
  jkey(g, k);
  yajl_gen_integer(g, v);
}

static void jstr(yajl_gen g, const char *k, const char *v)
{
  jkey(g, k);
  yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void json_shapes(yajl_gen g, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  dt_explain_shape *v;
  size_t n;
  dt_explain_shapes(s, &v, &n);
  jkey(g, "explain");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n && i < JSON_SHAPES; i++) {
    const dt_explain_row *r = v[i].row;
    textbook tb = textbook_of(r);
    double mean = mean_of(&v[i]), size = nccl_size(r), factor = dt_busbw_factor(r->kind, (size_t)r->n);
    char ch[64];
    yajl_gen_map_open(g);
    jstr(g, "kind", dt_op_kind_name(r->kind));
    jint(g, "bytes", (long long)r->bytes);
    jint(g, "ranks", r->n);
    jint(g, "nodes", r->nnodes);
    jstr(g, "group", group_name(in->trace, r->group));
    jint(g, "groups", (long long)v[i].ngroups);
    jint(g, "count", (long long)v[i].count);
    jstr(g, "choice", choice_str(r->algo, r->proto, ch, sizeof ch));
    jstr(g, "algorithm", dt_algo_name((dt_algo)r->algo));
    if (r->proto >= 0)
      jstr(g, "protocol", dt_proto_name((dt_proto)r->proto));
    jint(g, "channels", r->nchannels);
    jstr(g, "formula", tb.formula);
    jnum(g, "alpha_s", tb.alpha);
    jnum(g, "bandwidth_Bps", tb.B);
    jnum(g, "alphabeta_latency_s", tb.lat);
    jnum(g, "alphabeta_bandwidth_s", tb.bw);
    double est_lat, est = estimate_of(in, r, &est_lat);
    jnum(g, "estimate_s", est);
    jnum(g, "estimate_latency_s", est_lat);
    jnum(g, "fixed_s", r->fixed_s);
    jnum(g, "efficiency", r->eff);
    jnum(g, "time_s", v[i].time_s);
    jnum(g, "mean_s", mean);
    jnum(g, "min_s", v[i].min_s);
    jnum(g, "max_s", v[i].max_s);
    jnum(g, "algbw_GBps", mean > 0 ? size / mean / 1e9 : 0);
    jnum(g, "busbw_GBps", mean > 0 ? size / mean * factor / 1e9 : 0);
    jkey(g, "candidates");
    yajl_gen_array_open(g);
    for (size_t k = 0; k < r->ncand; k++) {
      yajl_gen_map_open(g);
      jstr(g, "choice", choice_str(r->cand[k].algo, r->cand[k].proto, ch, sizeof ch));
      jnum(g, "estimate_s", r->cand[k].est_s);
      jnum(g, "latency_s", r->cand[k].lat_s);
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  free(v);
}

static void json_p2p(yajl_gen g, const dt_report_input *in)
{
  const dt_stats *s = in->stats;
  const dt_explain_p2p **pv = p2p_sorted(s);
  jkey(g, "explain_p2p");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < s->nexplain_p2p && i < JSON_P2P; i++) {
    const dt_explain_p2p *r = pv[i];
    double mean = p2p_mean(r);
    yajl_gen_map_open(g);
    jint(g, "bytes", (long long)r->bytes);
    jint(g, "count", (long long)r->count);
    jint(g, "src", r->src);
    jint(g, "dst", r->dst);
    jint(g, "src_node", r->src_node);
    jint(g, "dst_node", r->dst_node);
    jint(g, "hops", r->nhops);
    if (r->batch_pairs) {
      jint(g, "batch_pairs", (long long)r->batch_pairs);
      jint(g, "batch_bytes", (long long)r->batch_bytes);
    }
    jstr(g, "formula", r->batch_pairs ? "ceil(N/8) a + N S/B" : "a + S/B");
    jnum(g, "alpha_s", r->alpha_s);
    jnum(g, "bandwidth_Bps", r->bw_Bps);
    jstr(g, "slowest_link", r->slowest_name);
    jnum(g, "alphabeta_s", p2p_alphabeta(r));
    if (r->proto)
      jstr(g, "protocol", r->proto);
    jnum(g, "efficiency", r->eff);
    jnum(g, "fixed_s", r->cost_s);
    jnum(g, "estimate_s", p2p_estimate(r));
    jnum(g, "time_s", r->time_s);
    jnum(g, "mean_s", mean);
    jnum(g, "min_s", r->min_s);
    jnum(g, "max_s", r->max_s);
    jnum(g, "GBps", mean > 0 ? p2p_total_bytes(r) / mean / 1e9 : 0);
    const dt_link_load *l = p2p_busiest(s, r);
    if (l) {
      jstr(g, "busiest_link", l->name);
      jstr(g, "busiest_link_class", dt_link_class_name(l->cls));
      jnum(g, "busiest_link_busy", busy_share(s, l));
      jint(g, "busiest_link_peak_flows", l->peak_flows);
    }
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  free(pv);
}

void dt_explain_json(yajl_gen g, const dt_report_input *in)
{
  if (in->stats->explain)
    json_shapes(g, in);
  if (in->stats->nexplain_p2p)
    json_p2p(g, in);
}

void dt_explain_numbers_of(const dt_report_input *in, const dt_explain_shape *sh, dt_explain_numbers *x)
{
  const dt_explain_row *r = sh->row;
  memset(x, 0, sizeof *x);
  textbook tb = textbook_of(r);
  choice_str(r->algo, r->proto, x->choice, sizeof x->choice);
  snprintf(x->formula, sizeof x->formula, "%s", tb.formula);
  x->nccl = in->platform->nccl ? 1 : 0;
  x->alpha_s = tb.alpha;
  x->bw_Bps = tb.B;
  x->ka = tb.ka;
  x->kb = tb.kb;
  x->ab_latency_s = tb.lat;
  x->ab_bandwidth_s = tb.bw;
  x->estimate_s = estimate_of(in, r, &x->estimate_latency_s);
  x->fixed_s = r->fixed_s;
  x->efficiency = r->eff;
  x->mean_s = mean_of(sh);
  double size = nccl_size(r), factor = dt_busbw_factor(r->kind, (size_t)r->n);
  x->algbw_GBps = x->mean_s > 0 ? size / x->mean_s / 1e9 : 0;
  x->busbw_GBps = x->algbw_GBps * factor;
  x->deviation = x->estimate_s > 0 ? x->mean_s / x->estimate_s - 1 : 0;
}

void dt_explain_p2p_numbers(const dt_report_input *in, const dt_explain_p2p *r, dt_explain_numbers *x)
{
  memset(x, 0, sizeof *x);
  snprintf(x->choice, sizeof x->choice, "p2p%s%s", r->proto ? "/" : "", r->proto ? r->proto : "");
  snprintf(x->formula, sizeof x->formula, "%s", r->batch_pairs ? "ceil(N/8) a + N S/B" : "a + S/B");
  x->nccl = in->platform->nccl ? 1 : 0;
  x->alpha_s = r->alpha_s;
  x->bw_Bps = r->bw_Bps;
  x->ka = p2p_rounds(r);
  x->kb = r->batch_pairs ? (double)r->batch_pairs : 1;
  x->ab_latency_s = x->ka * r->alpha_s;
  x->ab_bandwidth_s = r->bw_Bps > 0 ? p2p_total_bytes(r) / r->bw_Bps : 0;
  x->estimate_s = p2p_estimate(r);
  x->estimate_latency_s = x->ab_latency_s + r->cost_s;
  x->fixed_s = r->cost_s;
  x->efficiency = r->eff;
  x->mean_s = p2p_mean(r);
  x->algbw_GBps = x->mean_s > 0 ? p2p_total_bytes(r) / x->mean_s / 1e9 : 0;
  x->busbw_GBps = x->algbw_GBps;
  x->deviation = x->estimate_s > 0 ? x->mean_s / x->estimate_s - 1 : 0;
}
