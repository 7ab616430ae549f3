/* The GPT workload generator's emission (DESIGN.md §5, docs/generator.md): the ops one rank runs in one
 * training iteration — compute from FLOPs, TP / PP / DP / ZeRO / MoE communication in Megatron-LM's order —
 * written for one template rank per pipeline stage, which the stage's other ranks run through group maps. */
#include "dt_gen.h"

#include "../common/dt_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stream ids: compute + TP + PP + EP on s0, DP / ZeRO / embedding grads on s1; with tp_overlap the TP collectives
 * on s2, with p2p_overlap the pipeline sends to the next stage on s3 and to the previous one on s4 (one stream
 * per direction, so that the two sends of an exchange still run together) and, on the interleaved schedule, the
 * receives from the previous stage on s5 and from the next one on s6 (posted early, as Megatron posts them) */
enum { S_MAIN = 0, S_GRAD = 1, S_TP = 2, S_PP_NEXT = 3, S_PP_PREV = 4, S_PP_RPREV = 5, S_PP_RNEXT = 6, S_COUNT = 7 };
/* how a TP collective on s2 (tp_overlap) meets the compute on s0 */
enum { TPW_NEXT = 0, TPW_WITH_NEXT, TPW_WITH_LAST };
#define PEND_MAX 8
#define WAIT_MAX 32 /* waits (ops on other streams) pending for the next s0 op: p2p handles and parameter gathers */
enum { TAG_FWD = 0, TAG_BWD = 1 }; /* activations go down the pipeline with tag 0, gradients up with tag 1 */

/* Groups of one rank (-1 when it has none of that kind). */
typedef struct rank_groups {
  int32_t tp, dp, emb, ep, edp, cp;
} rank_groups;

/* Group indices of the whole world, filled once. */
typedef struct world_groups {
  int32_t *tp;  /* [stage * dp + dpi] */
  int32_t *dp;  /* [stage * tp + tpi] */
  int32_t *emb; /* [dpi * tp + tpi] */
  int32_t *ep;  /* [(stage * tp + tpi) * (dp / ep) + dpi / ep] */
  int32_t *edp; /* [(stage * tp + tpi) * ep + dpi % ep] */
  int32_t *cpg; /* [(stage * tp + tpi) * (dp / cp) + dpi / cp], CP groups (cp > 1) */
  int32_t cp;   /* context parallel size; the layout's dp counts dp * cp */
} world_groups;

/* Kernels of one compute op (docs/compute.md). */
#define KSET_MAX 16
typedef struct kset {
  uint32_t n;
  dt_kernel k[KSET_MAX];
} kset;

typedef struct gen {
  const dt_gen_config *c;
  dt_trace *t;
  int32_t rank, stage, dpi, tpi;
  rank_groups g;
  uint32_t seq;     /* running line number: the issue order across streams */
  int64_t batch;    /* running batch id */
  size_t n[S_COUNT]; /* ops per stream so far */
  int tp_mode;      /* TPW_*: how the next TP collective overlaps (tp_overlap) */
  int64_t pend_next[PEND_MAX], pend_after[PEND_MAX]; /* s2 ops the next (the one after) s0 op waits for */
  int npend_next, npend_after;
  /* ops on other streams that the next s0 op waits for (wait_next), and with tp_overlap the next s2 op too: the
   * handles Megatron waits before a forward or backward (p2p_overlap) and the parameter gathers (overlap_param_
   * gather) */
  int8_t wait_stream[WAIT_MAX], wait_tp_stream[WAIT_MAX];
  int64_t wait_index[WAIT_MAX], wait_tp_index[WAIT_MAX];
  int nwait, nwait_tp;
  /* sizes */
  int64_t m;        /* micro-batches per pipeline */
  int32_t lpc;      /* layers per model chunk */
  int32_t layer0;   /* first layer of the stage (1F1B) */
  int64_t vocab_p;  /* vocabulary padded to a multiple of 128 * tp (Megatron) */
  uint64_t tp_msg;  /* b*s*h*e */
  uint64_t pp_msg;  /* b*s*h*e, / tp with SP */
  uint64_t loss_bytes; /* b*s*4: one fp32 per token */
  uint64_t a2a_bytes;  /* MoE dispatch/combine send buffer per rank */
  double f_attn, f_mlp, f_logits, f_core; /* forward FLOP per TP rank per micro-batch */
  int32_t cp;       /* context parallel size (the layout's dp holds dp * cp, see dt_gen_build) */
  int32_t cp_group; /* this rank's CP group, -1 without CP */
  uint64_t cp_kv;   /* bytes of the K and V chunk a CP rank holds (b s/cp 2 kv dh / tp e) */
  /* the kernels of each compute op (docs/compute.md), copied into the ops */
  kset k_attn, k_attn_bwd, k_core, k_mlp, k_mlp_bwd, k_router, k_experts, k_experts_bwd, k_logits, k_logits_bwd,
      k_embed;
  int64_t p_layer, p_expert, p_emb, p_norm; /* parameters per TP rank */
  /* DP buckets */
  int64_t bucket_elems, bucket_acc;
  int nbucket;
  int64_t *deferred; /* buckets waiting for the end of backward (overlap off) */
  size_t ndeferred, deferred_cap;
  int64_t *done_buckets; /* every bucket (for the ZeRO-1/2 parameter all-gathers) */
  size_t ndone, done_cap;
  /* ZeRO-3 prefetch */
  int64_t anchor; /* s0 op count when the previous parameter unit started */
  /* overlap_param_gather (ZeRO-1): the buckets the last backward fills, in its order (pg_elems, padded to dp);
   * pg_bucket[unit] is the bucket whose first unit in forward order is unit (0 the embedding, 1 + l layer l,
   * layers + 1 the output layer), else -1; pg_next the next bucket the forward reaches (they are reached from the
   * last to the first) */
  int32_t *pg_bucket;
  int64_t *pg_elems;
  int32_t *pg_chunk; /* model chunk of each bucket */
  int64_t *pg_s1;    /* s1 index of each bucket's all-gather once issued */
  int32_t pg_n, pg_next, pg_issued, pg_plan_chunk;
  size_t pg_cap;
} gen;

/* ---- sizes and FLOPs ---- */

static int64_t pad_vocab(const dt_gen_config *c)
{
  int64_t mult = 128LL * c->tp; /* Megatron: make-vocab-size-divisible-by 128, times tp */
  return (c->vocab + mult - 1) / mult * mult;
}

static int32_t kv_heads(const dt_gen_config *c)
{
  return c->kv_heads > 0 ? c->kv_heads : c->heads;
}

/* Parameters of one layer's attention block per TP rank: QKV h x (h + 2 kv dh), output h x h (biases left out). */
static int64_t attn_params(const dt_gen_config *c)
{
  int64_t h = c->hidden, dh = h / c->heads;
  return (h * (h + 2 * kv_heads(c) * dh) + h * h) / c->tp;
}

/* One MLP (or one expert) per TP rank: 2 h x f matmuls, 3 with SwiGLU. */
static int64_t mlp_params(const dt_gen_config *c)
{
  return (c->swiglu ? 3 : 2) * (int64_t)c->hidden * c->ffn / c->tp;
}

/* Norm weights of a layer (replicated across TP): two LayerNorms of weight and bias (GPT), two RMSNorm weights
 * (Llama, the SwiGLU presets). */
static int64_t norm_params(const dt_gen_config *c)
{
  return (c->swiglu ? 2 : 4) * (int64_t)c->hidden;
}

/* Dense (DP-reduced) parameters of one layer per TP rank: attention, norms, and the MLP or the MoE router. */
static int64_t layer_params(const dt_gen_config *c)
{
  int64_t mlp = c->experts > 0 ? (int64_t)c->hidden * c->experts : mlp_params(c);
  return attn_params(c) + mlp + norm_params(c);
}

int32_t dt_gen_stage_layers(const dt_gen_config *c, int32_t stage, int32_t *first)
{
  int32_t n = c->layers / c->pp, f = stage * n;
  if (c->embed_as_layers && c->virtual_stages == 1 && c->pp > 1 && (c->layers + 2) % c->pp == 0) {
    /* DeepSpeed's type:transformer|embedding partition: the embedding and the output layer count as layers */
    n = (c->layers + 2) / c->pp;
    f = stage * n - 1;
    if (stage == 0) {
      n--;
      f = 0;
    }
    if (stage == c->pp - 1)
      n--;
  }
  if (first)
    *first = f;
  return n;
}

int64_t dt_gen_stage_params(const dt_gen_config *c, int32_t stage)
{
  int64_t layers = dt_gen_stage_layers(c, stage, NULL);
  int64_t p = layers * layer_params(c);
  int64_t emb = pad_vocab(c) * c->hidden / c->tp;
  if (stage == 0)
    p += emb;
  if (stage == c->pp - 1) {
    p += (c->swiglu ? 1 : 2) * (int64_t)c->hidden; /* final norm */
    if (!c->tied_embeddings || c->pp > 1)
      p += emb; /* output layer, or the last stage's copy of the tied embedding */
  }
  return p;
}

int64_t dt_gen_stage_expert_params(const dt_gen_config *c, int32_t stage)
{
  if (c->experts == 0)
    return 0;
  return (int64_t)dt_gen_stage_layers(c, stage, NULL) * (c->experts / c->ep) * mlp_params(c);
}

int64_t dt_gen_total_params(const dt_gen_config *c)
{
  dt_gen_config one = *c;
  one.tp = one.pp = one.ep = 1;
  one.virtual_stages = 1;
  one.embed_as_layers = 0;
  return dt_gen_stage_params(&one, 0) + dt_gen_stage_expert_params(&one, 0);
}

/* Forward FLOP per micro-batch of one layer, per TP rank (matmuls count 2 FLOP per multiply-add; Narayanan et
 * al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", §5.1, which
 * gives 24 b s h^2 + 4 b s^2 h for f = 4h and multi-head attention). General form:
 *   QKV projection   2 b s h (h + 2 kv dh)      (dh = h / heads; GQA shrinks K and V to kv heads)
 *   scores QK^T      2 b s^2 h
 *   attention x V    2 b s^2 h
 *   output proj.     2 b s h^2
 *   MLP              2 b s h f x 2 (GPT) or x 3 (SwiGLU: gate, up, down)
 * With f = 4h and kv = heads: 6 + 2 + 16 = 24 b s h^2 and 4 b s^2 h. Logits 2 b s h V. Backward is 2x forward,
 * full recompute adds one forward in the backward, selective recompute the core attention (4 b s^2 h). MoE: each
 * token runs top_k experts' MLPs (uniform routing: each EP rank gets b s top_k tokens) plus a router 2 b s h E.
 * With context parallelism a rank holds s / cp of the tokens and attends them to the whole sequence: every term
 * is divided by cp.
 *
 * The same work as kernels (docs/compute.md), each GEMM C[m x n] = A[m x k] B[k x n] with m the rank's tokens
 * b s / cp: QKV (m, (h + 2 kv dh) / tp, h), output (m, h, h / tp), MLP up (m, f / tp x (2 with SwiGLU), h) and
 * down (m, h, f / tp), logits (m, V / tp, h); attention fused (batch b heads / tp, queries s / cp, keys s, dh,
 * causal) or, without flash attention, two batched GEMMs and the softmax in memory. The backward of a GEMM is
 * its data gradient (m, k, n) and weight gradient (k, n, m), each as many FLOP as the forward. Element-wise work
 * by bytes (activation bytes a, tokens t = m, / tp for the norms and residuals with SP): two norms 4 t h a, two
 * residual adds 6 t h a, the activation 2 t f/tp a (GeLU) or 3 t f/tp a (SwiGLU), rotary embedding 2 t (h + kv
 * dh)/tp a (SwiGLU presets: Llama), and with FP8 the casts of the four GEMM inputs (a + 1 bytes per element);
 * the backward moves twice the forward's bytes. */
static void kadd(kset *s, dt_kernel_kind kind, int dtype, double m, double n, double k, double batch, double flop,
                 double bytes)
{
  if (s->n >= KSET_MAX)
    return;
  dt_kernel *x = &s->k[s->n++];
  memset(x, 0, sizeof *x);
  x->kind = (uint8_t)kind;
  x->dtype = (uint8_t)dtype;
  x->m = (int64_t)(m > 0 ? m : 0);
  x->n = (int64_t)(n > 0 ? n : 0);
  x->k = (int64_t)(k > 0 ? k : 0);
  x->batch = (int64_t)(batch > 1 ? batch : 1);
  x->flop = flop;
  x->bytes = bytes;
}

/* A forward GEMM (and, into bwd, its data and weight gradients): in dtype gd with inputs of ib bytes per element,
 * output of ob; flop overrides 2 m n k batch when >= 0 (MoE experts with fractional tokens per expert). */
static void kgemm(kset *fwd, kset *bwd, int gd, double ib, double ob, double m, double n, double k, double batch,
                  double flop)
{
  double f = flop >= 0 ? flop : 2 * m * n * k * batch;
  kadd(fwd, DT_KERN_GEMM, gd, m, n, k, batch, f, batch * ((m * k + k * n) * ib + m * n * ob));
  if (bwd) {
    kadd(bwd, DT_KERN_GEMM, gd, m, k, n, batch, f, batch * ((m * n + n * k) * ib + m * k * ob));
    kadd(bwd, DT_KERN_GEMM, gd, k, n, m, batch, f, batch * ((k * m + m * n) * ib + k * n * 4));
  }
}

static double ksum(const kset *s)
{
  double f = 0;
  for (uint32_t i = 0; i < s->n; i++)
    f += s->k[i].flop;
  return f;
}

static void kelem(kset *s, int dtype, double bytes)
{
  if (bytes > 0)
    kadd(s, DT_KERN_ELEM, dtype, 0, 0, 0, 1, 0, bytes);
}

static void flops(gen *G)
{
  const dt_gen_config *c = G->c;
  double b = c->microbatch, s = c->seq, h = c->hidden, t = c->tp, cp = G->cp;
  double dh = h / c->heads, kv = kv_heads(c), f = c->ffn, V = (double)G->vocab_p;
  int fp8 = strcmp(c->dtype, "fp8") == 0;
  int ad = strcmp(c->dtype, "fp16") == 0   ? DT_DTYPE_FP16
           : strcmp(c->dtype, "fp32") == 0 ? DT_DTYPE_FP32
                                           : DT_DTYPE_BF16; /* activations: bf16 under fp8 */
  int gd = fp8 ? DT_DTYPE_FP8 : ad;
  double a = c->elem_bytes, ib = fp8 ? 1 : a, ob = a;
  double m = b * s / cp;                 /* tokens of this rank */
  double mr = c->sp && c->tp > 1 ? m / t : m; /* tokens of the norms and residuals (SP splits them over TP) */
  double heads_r = c->heads / t, qkv_n = (h + 2 * kv * dh) / t;
  double cast = fp8 ? a + 1 : 0;         /* read the bf16 input, write its FP8 copy */
  kset *A = &G->k_attn, *AB = &G->k_attn_bwd, *M = &G->k_mlp, *MB = &G->k_mlp_bwd;
  memset(A, 0, sizeof *A);
  memset(AB, 0, sizeof *AB);
  memset(M, 0, sizeof *M);
  memset(MB, 0, sizeof *MB);
  memset(&G->k_core, 0, sizeof G->k_core);
  /* attention block: norm, QKV, (rotary), core attention, output projection, residual */
  double e_attn = 2 * mr * h * a + 3 * mr * h * a + cast * m * (h + h / t);
  if (c->swiglu)
    e_attn += 2 * m * (h + kv * dh) / t * a;
  kelem(A, ad, e_attn);
  kgemm(A, AB, gd, ib, ob, m, qkv_n, h, 1, -1);
  double core = 4 * b * (s / cp) * s * h / t;
  double scores = b * heads_r * (s / cp) * s; /* score elements */
  if (c->flash_attention) {
    kadd(A, DT_KERN_ATTN, ad, s / cp, s, dh, b * heads_r, core, 4 * m * heads_r * dh * a);
    dt_kernel *k = &A->k[A->n - 1];
    k->causal = 1;
    kadd(AB, DT_KERN_ATTN, ad, s / cp, s, dh, b * heads_r, 2 * core, 8 * m * heads_r * dh * a);
    AB->k[AB->n - 1].causal = 1;
    AB->k[AB->n - 1].bwd = 1;
    G->k_core.k[0] = *k;
    G->k_core.n = 1;
  } else {
    kset tmp;
    memset(&tmp, 0, sizeof tmp);
    kgemm(A, AB, ad, a, a, s / cp, s, dh, b * heads_r, -1);
    kelem(A, ad, 2 * scores * a);
    kgemm(A, AB, ad, a, a, s / cp, dh, s, b * heads_r, -1);
    kelem(AB, ad, 3 * scores * a);
    kgemm(&tmp, NULL, ad, a, a, s / cp, s, dh, b * heads_r, -1);
    kelem(&tmp, ad, 2 * scores * a);
    kgemm(&tmp, NULL, ad, a, a, s / cp, dh, s, b * heads_r, -1);
    G->k_core = tmp;
  }
  kgemm(A, AB, gd, ib, ob, m, h, h / t, 1, -1);
  kelem(AB, ad, 2 * e_attn);
  G->f_core = core;
  G->f_attn = ksum(A);
  /* MLP block (or one MoE layer's experts): norm, up (gate), activation, down, residual */
  double e_mlp = 2 * mr * h * a + 3 * mr * h * a + (c->swiglu ? 3 : 2) * m * f / t * a + cast * m * (h + f / t);
  double up_n = f / t * (c->swiglu ? 2 : 1);
  memset(&G->k_router, 0, sizeof G->k_router);
  memset(&G->k_experts, 0, sizeof G->k_experts);
  memset(&G->k_experts_bwd, 0, sizeof G->k_experts_bwd);
  if (c->experts > 0) {
    double router = 2 * b * s / cp * h * c->experts;
    kgemm(&G->k_router, NULL, ad, a, a, m, c->experts, h, 1, router);
    double local = (double)c->experts / c->ep, tok = m * c->top_k / local; /* tokens per local expert */
    kset *X = &G->k_experts, *XB = &G->k_experts_bwd;
    kelem(X, ad, e_mlp * c->top_k);
    kgemm(X, XB, gd, ib, ob, tok, up_n, h, local, 2 * m * c->top_k * up_n * h);
    kgemm(X, XB, gd, ib, ob, tok, h, f / t, local, 2 * m * c->top_k * h * f / t);
    kelem(XB, ad, 2 * e_mlp * c->top_k);
    /* one op holds router and experts when ep is 1 (mlp_fwd) */
    for (uint32_t i = 0; i < G->k_router.n; i++)
      M->k[M->n++] = G->k_router.k[i];
    for (uint32_t i = 0; i < X->n && M->n < KSET_MAX; i++)
      M->k[M->n++] = X->k[i];
    *MB = *XB;
    G->f_mlp = ksum(M);
  } else {
    kelem(M, ad, e_mlp);
    kgemm(M, MB, gd, ib, ob, m, up_n, h, 1, -1);
    kgemm(M, MB, gd, ib, ob, m, h, f / t, 1, -1);
    kelem(MB, ad, 2 * e_mlp);
    G->f_mlp = ksum(M);
  }
  /* logits and the vocab-parallel cross entropy (fp32 logits read and written) */
  memset(&G->k_logits, 0, sizeof G->k_logits);
  memset(&G->k_logits_bwd, 0, sizeof G->k_logits_bwd);
  kgemm(&G->k_logits, &G->k_logits_bwd, gd, ib, ob, m, V / t, h, 1, -1);
  kelem(&G->k_logits, DT_DTYPE_FP32, 3 * m * V / t * 4);
  kelem(&G->k_logits_bwd, DT_DTYPE_FP32, 2 * m * V / t * 4);
  G->f_logits = ksum(&G->k_logits);
  memset(&G->k_embed, 0, sizeof G->k_embed);
  kelem(&G->k_embed, ad, 2 * mr * h * a);
}

/* Copies a kernel set into a compute op (the op owns its copy). */
static void set_kernels(dt_op *op, const kset *s)
{
  if (s->n == 0)
    return;
  op->kernels = dt_xmalloc(sizeof *op->kernels * s->n);
  memcpy(op->kernels, s->k, sizeof *op->kernels * s->n);
  op->nkernels = s->n;
}

/* ---- op emission ---- */

static int stream_pos(gen *G, int stream)
{
  return dt_trace_stream(G->t, G->rank, stream, 1);
}

static dt_op *emit(gen *G, int stream, dt_op_kind kind, const char *fmt, ...) DT_PRINTF(4, 5);
static dt_op *emit(gen *G, int stream, dt_op_kind kind, const char *fmt, ...)
{
  char name[96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  stream_pos(G, stream);
  dt_op *op = dt_trace_append(G->t, G->rank, stream);
  op->kind = kind;
  op->name = dt_xstrdup(name);
  op->line = ++G->seq;
  G->n[stream]++;
  if (stream == S_MAIN) {
    /* TP collectives on s2 that this op waits for, then those that wait until the op after it */
    for (int i = 0; i < G->npend_next; i++) {
      op->deps = dt_xrealloc(op->deps, sizeof *op->deps * (op->ndeps + 1));
      op->deps[op->ndeps].stream = stream_pos(G, S_TP);
      op->deps[op->ndeps].index = (int32_t)G->pend_next[i];
      op->ndeps++;
    }
    memcpy(G->pend_next, G->pend_after, sizeof G->pend_after);
    G->npend_next = G->npend_after;
    G->npend_after = 0;
    /* what Megatron waits before this point (p2p handles, parameter gathers) */
    for (int i = 0; i < G->nwait; i++) {
      op->deps = dt_xrealloc(op->deps, sizeof *op->deps * (op->ndeps + 1));
      op->deps[op->ndeps].stream = stream_pos(G, G->wait_stream[i]);
      op->deps[op->ndeps].index = (int32_t)G->wait_index[i];
      op->ndeps++;
    }
    G->nwait = 0;
  }
  return op;
}

/* The next s0 op (and, with tp_overlap, the next TP collective on s2, which may run beside that op) waits for op
 * `index` of stream `stream`: a wait Megatron places at this point of the program (a p2p handle's wait(), a
 * parameter bucket's forward pre-hook). */
static void wait_next(gen *G, int stream, int64_t index)
{
  if (index < 0)
    return;
  if (G->nwait < WAIT_MAX) {
    G->wait_stream[G->nwait] = (int8_t)stream;
    G->wait_index[G->nwait++] = index;
  }
  if (G->c->tp_overlap && G->c->tp > 1 && G->nwait_tp < WAIT_MAX) {
    G->wait_tp_stream[G->nwait_tp] = (int8_t)stream;
    G->wait_tp_index[G->nwait_tp++] = index;
  }
}

static void add_dep(gen *G, dt_op *op, int stream, int64_t index)
{
  if (index < 0)
    return;
  op->deps = dt_xrealloc(op->deps, sizeof *op->deps * (op->ndeps + 1));
  op->deps[op->ndeps].stream = stream_pos(G, stream);
  op->deps[op->ndeps].index = (int32_t)index;
  op->ndeps++;
}

static void compute(gen *G, double flop, const kset *k, const char *name)
{
  dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "%s", name);
  op->flop = flop;
  set_kernels(op, k);
}

static int64_t last_main(const gen *G);

/* A collective on s0 (TP, EP) or s1 (DP, ZeRO, embedding). With tp_overlap a TP collective goes to s2 instead
 * (Megatron / Transformer Engine's userbuffers overlap, docs/generator.md): it starts after the last s0 op
 * (TPW_WITH_LAST: after the one before it, so it runs beside the last compute, as a reduce-scatter pipelined
 * with the GEMM producing it), and the next s0 op waits for it (TPW_WITH_NEXT: the op after the next, so it runs
 * beside the next compute, as an all-gather pipelined with the GEMM consuming it). */
static dt_op *coll(gen *G, int stream, dt_op_kind kind, int32_t group, uint64_t bytes, const char *name)
{
  int async = stream == S_MAIN && G->c->tp_overlap && group >= 0 && group == G->g.tp;
  if (async)
    stream = S_TP;
  dt_op *op = emit(G, stream, kind, "%s", name);
  op->group = group;
  op->bytes = bytes;
  if (async) {
    int64_t self = (int64_t)G->n[S_TP] - 1, after = last_main(G);
    if (G->tp_mode == TPW_WITH_LAST)
      after--;
    add_dep(G, op, S_MAIN, after);
    for (int i = 0; i < G->nwait_tp; i++)
      add_dep(G, op, G->wait_tp_stream[i], G->wait_tp_index[i]);
    G->nwait_tp = 0;
    if (G->tp_mode == TPW_WITH_NEXT && G->npend_after < PEND_MAX)
      G->pend_after[G->npend_after++] = self;
    else if (G->npend_next < PEND_MAX)
      G->pend_next[G->npend_next++] = self;
  }
  return op;
}

static int64_t last_main(const gen *G)
{
  return (int64_t)G->n[0] - 1;
}

/* ---- tensor parallel ---- */

/* Forward TP collective around a block ("attn", "mlp", "embed", "logits"): without SP an all-reduce of the
 * block output (b s h e); with SP an all-gather of the input shard before (b s h e / t per rank) and a
 * reduce-scatter of the output after (the whole b s h e input). pre = 1 for the part before the compute. */
static void tp_fwd(gen *G, int pre, const char *phase, const char *block, int layer)
{
  if (G->c->tp < 2)
    return;
  char name[96];
  if (layer >= 0)
    snprintf(name, sizeof name, "tp.%s.l%d.%s", phase, layer, block);
  else
    snprintf(name, sizeof name, "tp.%s.%s", phase, block);
  if (G->c->sp) {
    G->tp_mode = pre ? TPW_WITH_NEXT : TPW_WITH_LAST;
    if (pre)
      coll(G, S_MAIN, DT_OP_ALLGATHER, G->g.tp, G->tp_msg / G->c->tp, name);
    else
      coll(G, S_MAIN, DT_OP_REDUCESCATTER, G->g.tp, G->tp_msg, name);
    G->tp_mode = TPW_NEXT;
  } else if (!pre) {
    coll(G, S_MAIN, DT_OP_ALLREDUCE, G->g.tp, G->tp_msg, name);
  }
}

/* Backward TP collectives of a block: without SP one all-reduce of the input gradient after the compute; with
 * SP an all-gather of the output gradient and one re-gathering the input (for the weight gradient) before, a
 * reduce-scatter of the input gradient after (DESIGN.md §5: 4 all-gathers + 2 reduce-scatters per layer). */
static void tp_bwd(gen *G, int pre, const char *block, int layer)
{
  if (G->c->tp < 2)
    return;
  char name[96];
  if (layer >= 0)
    snprintf(name, sizeof name, "tp.bwd.l%d.%s", layer, block);
  else
    snprintf(name, sizeof name, "tp.bwd.%s", block);
  if (G->c->sp) {
    G->tp_mode = pre ? TPW_WITH_NEXT : TPW_WITH_LAST;
    if (pre) {
      coll(G, S_MAIN, DT_OP_ALLGATHER, G->g.tp, G->tp_msg / G->c->tp, name);
      coll(G, S_MAIN, DT_OP_ALLGATHER, G->g.tp, G->tp_msg / G->c->tp, name);
    } else {
      coll(G, S_MAIN, DT_OP_REDUCESCATTER, G->g.tp, G->tp_msg, name);
    }
    G->tp_mode = TPW_NEXT;
  } else if (!pre) {
    coll(G, S_MAIN, DT_OP_ALLREDUCE, G->g.tp, G->tp_msg, name);
  }
}

/* ---- data parallel and ZeRO ---- */

static int use_dp(const gen *G)
{
  return G->c->dp > 1;
}

/* ZeRO-3: all-gather a parameter unit's shard before it is used (prefetch one unit ahead: the gather may start
 * once the previous unit started). Makes the next s0 op wait for it. Returns the s1 op index. */
static int64_t zero3_gather(gen *G, int64_t params, const char *name)
{
  if (!use_dp(G) || G->c->zero != 3 || params <= 0)
    return -1;
  int64_t d = G->c->dp;
  dt_op *op = coll(G, S_GRAD, DT_OP_ALLGATHER, G->g.dp, (uint64_t)((params + d - 1) / d) * G->c->elem_bytes, name);
  add_dep(G, op, S_MAIN, G->anchor);
  G->anchor = last_main(G);
  return (int64_t)G->n[1] - 1;
}

/* ZeRO-3: reduce-scatter a unit's gradients once its backward is done. */
static void zero3_reduce(gen *G, int64_t params, const char *name)
{
  if (!use_dp(G) || G->c->zero != 3 || params <= 0)
    return;
  int64_t d = G->c->dp;
  dt_op *op =
      coll(G, S_GRAD, DT_OP_REDUCESCATTER, G->g.dp, (uint64_t)((params + d - 1) / d * d) * G->c->elem_bytes, name);
  add_dep(G, op, S_MAIN, last_main(G));
}

static void emit_bucket(gen *G, int64_t elems, int64_t after)
{
  int64_t d = G->c->dp;
  elems = (elems + d - 1) / d * d; /* Megatron pads buckets to a multiple of dp */
  char name[48];
  snprintf(name, sizeof name, "%s.bucket%d", G->c->zero ? "zero.rs" : "dp", G->nbucket++);
  dt_op *op = coll(G, S_GRAD, G->c->zero ? DT_OP_REDUCESCATTER : DT_OP_ALLREDUCE, G->g.dp,
                   (uint64_t)elems * G->c->elem_bytes, name);
  add_dep(G, op, S_MAIN, after);
  G->done_buckets = dt_grow(G->done_buckets, &G->done_cap, G->ndone, sizeof *G->done_buckets);
  G->done_buckets[G->ndone++] = elems;
}

static void bucket_flush(gen *G)
{
  if (G->bucket_acc <= 0)
    return;
  if (G->c->dp_overlap) {
    emit_bucket(G, G->bucket_acc, last_main(G));
  } else {
    G->deferred = dt_grow(G->deferred, &G->deferred_cap, G->ndeferred, sizeof *G->deferred);
    G->deferred[G->ndeferred++] = G->bucket_acc;
  }
  G->bucket_acc = 0;
}

/* Gradients of `params` elements are ready (the last s0 op produced them): into the current bucket, which is
 * issued once it holds bucket_elems. ZeRO-3 reduces per unit instead (zero3_reduce). */
static void grads_ready(gen *G, int64_t params, int last_mb)
{
  if (!use_dp(G) || G->c->zero == 3 || params <= 0)
    return;
  if (!last_mb && G->c->zero != 2)
    return; /* gradient accumulation: Megatron and ZeRO-1 reduce once, in the last micro-batch's backward */
  G->bucket_acc += params;
  if (G->bucket_acc >= G->bucket_elems)
    bucket_flush(G);
}

/* MoE expert gradients: all-reduce over the expert-data-parallel group (same expert shard) when ready. */
static void expert_grads(gen *G, int layer, int last_mb)
{
  if (!last_mb || G->g.edp < 0 || G->p_expert <= 0)
    return;
  char name[48];
  snprintf(name, sizeof name, "dp.expert.l%d", layer);
  dt_op *op = coll(G, S_GRAD, DT_OP_ALLREDUCE, G->g.edp, (uint64_t)G->p_expert * G->c->elem_bytes, name);
  add_dep(G, op, S_MAIN, last_main(G));
}

/* ---- forward and backward of one model chunk for one micro-batch ---- */

static int chunk_layer0(const gen *G, int chunk)
{
  if (G->c->virtual_stages == 1)
    return G->layer0;
  return (chunk * G->c->pp + G->stage) * G->lpc;
}

static int is_vfirst(const gen *G, int chunk)
{
  return G->stage == 0 && chunk == 0;
}

static int is_vlast(const gen *G, int chunk)
{
  return G->stage == G->c->pp - 1 && chunk == G->c->virtual_stages - 1;
}

static int64_t output_params(const gen *G)
{
  const dt_gen_config *c = G->c;
  return (!c->tied_embeddings || c->pp > 1) ? G->p_emb : 0;
}

/* ---- overlap_param_gather: ZeRO-1's parameter all-gathers under the next forward ---- */

/* Closes the bucket being planned (pg_plan). */
static void pg_close(gen *G, int64_t *acc, int32_t *lo)
{
  if (*acc <= 0)
    return;
  int64_t d = G->c->dp;
  size_t cap = G->pg_cap;
  G->pg_elems = dt_grow(G->pg_elems, &G->pg_cap, (size_t)G->pg_n, sizeof *G->pg_elems);
  if (G->pg_cap != cap) {
    G->pg_chunk = dt_xrealloc(G->pg_chunk, sizeof *G->pg_chunk * G->pg_cap);
    G->pg_s1 = dt_xrealloc(G->pg_s1, sizeof *G->pg_s1 * G->pg_cap);
  }
  G->pg_elems[G->pg_n] = (*acc + d - 1) / d * d; /* padded as emit_bucket pads it */
  G->pg_chunk[G->pg_n] = G->pg_plan_chunk;
  G->pg_s1[G->pg_n] = -1;
  G->pg_bucket[*lo] = G->pg_n++;
  *acc = 0;
  *lo = -1;
}

/* A gradient unit of `params` elements joins the bucket being planned, as grads_ready adds it. */
static void pg_add(gen *G, int64_t *acc, int32_t *lo, int32_t unit, int64_t params)
{
  if (params <= 0)
    return;
  *acc += params;
  *lo = unit; /* units come in backward order: the last one added is the first in forward order */
  if (*acc >= G->bucket_elems)
    pg_close(G, acc, lo);
}

/* The ZeRO-1 buckets this rank's last backward will fill, in the order it fills them (the same walk as backward
 * and grads_ready: the model chunks from the last, each from its output layer down to its embedding, a bucket
 * closing when full and at the end of each chunk), so that the forward knows which bucket each unit belongs to.
 * Only with overlap_param_gather, ZeRO-1 and dp > 1. */
static void pg_plan(gen *G)
{
  const dt_gen_config *c = G->c;
  if (!c->overlap_param_gather || c->zero != 1 || !use_dp(G))
    return;
  int32_t nunits = c->layers + 2;
  G->pg_bucket = dt_xmalloc(sizeof *G->pg_bucket * (size_t)nunits);
  for (int32_t u = 0; u < nunits; u++)
    G->pg_bucket[u] = -1;
  int64_t acc = 0;
  int32_t lo = -1;
  for (int ch = c->virtual_stages - 1; ch >= 0; ch--) {
    G->pg_plan_chunk = ch;
    if (is_vlast(G, ch))
      pg_add(G, &acc, &lo, c->layers + 1, output_params(G) + (c->swiglu ? 1 : 2) * (int64_t)c->hidden);
    int l0 = chunk_layer0(G, ch);
    for (int i = G->lpc - 1; i >= 0; i--)
      pg_add(G, &acc, &lo, 1 + l0 + i, G->p_layer);
    if (is_vfirst(G, ch))
      pg_add(G, &acc, &lo, 0, G->p_emb);
    pg_close(G, &acc, &lo);
  }
  G->pg_next = G->pg_n - 1;
  G->pg_issued = 0;
}

/* Issues bucket k's parameter all-gather on s1 (bytes = its shard, bucket / dp) after s0 op `after` (-1: at the
 * start of the window). Named after the bucket (zero.ag.bucketK pairs with zero.rs.bucketK). */
static void pg_issue(gen *G, int32_t k, int64_t after)
{
  char name[48];
  snprintf(name, sizeof name, "zero.ag.bucket%d", k);
  dt_op *op = coll(G, S_GRAD, DT_OP_ALLGATHER, G->g.dp, (uint64_t)(G->pg_elems[k] / G->c->dp) * G->c->elem_bytes,
                   name);
  add_dep(G, op, S_MAIN, after);
  G->pg_s1[k] = (int64_t)G->n[S_GRAD] - 1;
  G->pg_issued++;
}

/* param_gather_prefetch chunk: issues the all-gathers of bucket k and the chunk's other buckets after it in forward
 * order (k - 1, ... while in k's chunk), after s0 op `after`. Returns the next chunk's first bucket (-1: none). */
static int32_t pg_issue_chunk(gen *G, int32_t k, int64_t after)
{
  int32_t j = k;
  for (; j >= 0 && G->pg_chunk[j] == G->pg_chunk[k]; j--)
    pg_issue(G, j, after);
  return j;
}

/* The forward reaches gradient unit `unit` (before its first op). When it is the first unit of the next bucket in
 * forward order, Megatron's forward pre-hook (finish_param_sync) waits for that bucket's all-gather and dispatches
 * the next bucket's: the next s0 op waits for it, the next all-gather starts after the s0 op before (one bucket
 * ahead: with CUDA_DEVICE_MAX_CONNECTIONS=1 an all-gather dispatched earlier would be queued behind the compute,
 * Megatron's reason for the chain). Once per bucket: later micro-batches find the parameters gathered. */
static void pg_unit(gen *G, int32_t unit)
{
  if (G->pg_n == 0 || G->pg_next < 0 || G->pg_bucket[unit] != G->pg_next)
    return;
  int32_t k = G->pg_next;
  if (G->c->param_gather_chunk) {
    /* MegaScale (NSDI'24 §3.2): a model chunk's parameters are gathered together, the next chunk's prefetched
     * when this one starts; the chunk's first forward op waits for its last all-gather (s1 runs them in order) */
    int32_t j = k;
    while (j >= 0 && G->pg_chunk[j] == G->pg_chunk[k])
      j--;
    int64_t wait = G->pg_s1[j + 1];
    if (j >= 0)
      pg_issue_chunk(G, j, last_main(G));
    wait_next(G, S_GRAD, wait);
    G->pg_next = j;
    return;
  }
  int64_t wait = G->pg_s1[k];
  if (k > 0)
    pg_issue(G, k - 1, last_main(G));
  wait_next(G, S_GRAD, wait);
  G->pg_next = k - 1;
}

/* Emits the MLP or MoE block's forward (phase "fwd" or "recompute"). */
static void mlp_fwd(gen *G, const char *phase, int l)
{
  const dt_gen_config *c = G->c;
  tp_fwd(G, 1, phase, "mlp", l);
  if (c->experts > 0 && c->ep > 1) {
    char name[64];
    double router = 2.0 * c->microbatch * c->seq * c->hidden * c->experts;
    snprintf(name, sizeof name, "%s.l%d.router", phase, l);
    compute(G, router, &G->k_router, name);
    snprintf(name, sizeof name, "ep.%s.l%d.dispatch", phase, l);
    coll(G, S_MAIN, DT_OP_ALLTOALL, G->g.ep, G->a2a_bytes, name);
    snprintf(name, sizeof name, "%s.l%d.experts", phase, l);
    compute(G, G->f_mlp - router, &G->k_experts, name);
    snprintf(name, sizeof name, "ep.%s.l%d.combine", phase, l);
    coll(G, S_MAIN, DT_OP_ALLTOALL, G->g.ep, G->a2a_bytes, name);
  } else {
    dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "%s.l%d.mlp", phase, l);
    op->flop = G->f_mlp;
    set_kernels(op, &G->k_mlp);
  }
  tp_fwd(G, 0, phase, "mlp", l);
}

/* Context parallelism (Megatron / Transformer Engine ring attention): each CP rank's queries meet every rank's
 * keys and values, which travel around the CP group in cp - 1 steps: the volume of an all-gather of the rank's
 * K, V chunk before the forward attention (and again before the backward), and of a reduce-scatter of the K, V
 * gradients after it. Issued on s0 before (after) the attention op: not overlapped with it, an upper bound on its
 * cost (docs/generator.md). */
static void cp_comm(gen *G, int grad, const char *phase, int l)
{
  if (G->cp < 2 || G->cp_group < 0)
    return;
  char name[64];
  snprintf(name, sizeof name, "cp.%s.l%d.%s", phase, l, grad ? "dkv" : "kv");
  if (grad)
    coll(G, S_MAIN, DT_OP_REDUCESCATTER, G->cp_group, G->cp_kv * (uint64_t)G->cp, name);
  else
    coll(G, S_MAIN, DT_OP_ALLGATHER, G->cp_group, G->cp_kv, name);
}

static void layer_fwd(gen *G, const char *phase, int l)
{
  tp_fwd(G, 1, phase, "attn", l);
  cp_comm(G, 0, phase, l);
  dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "%s.l%d.attn", phase, l);
  op->flop = G->f_attn;
  set_kernels(op, &G->k_attn);
  tp_fwd(G, 0, phase, "attn", l);
  mlp_fwd(G, phase, l);
}

/* Makes the most recent s0 op wait for s1 op index (ZeRO-3 gathers). */
static void wait_s1(gen *G, int64_t s1)
{
  if (s1 < 0)
    return;
  const dt_rank *rk = &G->t->ranks[G->rank];
  dt_stream *st = &rk->streams[stream_pos(G, S_MAIN)];
  add_dep(G, &st->ops[st->nops - 1], S_GRAD, s1);
}

static void forward(gen *G, int chunk, int64_t mb)
{
  (void)mb;
  const dt_gen_config *c = G->c;
  if (is_vfirst(G, chunk)) {
    pg_unit(G, 0);
    int64_t z = zero3_gather(G, G->p_emb, "zero.ag.fwd.embed");
    /* embedding lookup: no matmul FLOP; a zero-FLOP compute op anchors the TP collective and ZeRO-3 gather */
    compute(G, 0, &G->k_embed, "fwd.embed");
    wait_s1(G, z);
    if (c->tp > 1) {
      /* vocab-parallel embedding: all-reduce of the output (reduce-scatter with SP) */
      coll(G, S_MAIN, c->sp ? DT_OP_REDUCESCATTER : DT_OP_ALLREDUCE, G->g.tp, G->tp_msg, "tp.fwd.embed");
    }
  }
  int l0 = chunk_layer0(G, chunk);
  for (int i = 0; i < G->lpc; i++) {
    char name[48];
    snprintf(name, sizeof name, "zero.ag.fwd.l%d", l0 + i);
    int64_t z = zero3_gather(G, G->p_layer, name);
    pg_unit(G, 1 + l0 + i);
    size_t before = G->n[0];
    layer_fwd(G, "fwd", l0 + i);
    if (z >= 0) {
      dt_stream *st = &G->t->ranks[G->rank].streams[stream_pos(G, S_MAIN)];
      add_dep(G, &st->ops[before], S_GRAD, z);
    }
  }
  if (is_vlast(G, chunk)) {
    pg_unit(G, c->layers + 1);
    int64_t z = zero3_gather(G, output_params(G), "zero.ag.fwd.output");
    tp_fwd(G, 1, "fwd", "logits", -1);
    size_t before = G->n[0];
    dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "fwd.logits");
    op->flop = G->f_logits;
    set_kernels(op, &G->k_logits);
    if (z >= 0)
      add_dep(G, &G->t->ranks[G->rank].streams[stream_pos(G, S_MAIN)].ops[before], S_GRAD, z);
    if (c->tp > 1) /* vocab-parallel cross entropy: max logit, target logit, sum of exponentials (fp32) */
      for (int k = 0; k < 3; k++)
        coll(G, S_MAIN, DT_OP_ALLREDUCE, G->g.tp, G->loss_bytes, "tp.fwd.loss");
  }
}

static void backward(gen *G, int chunk, int64_t mb)
{
  const dt_gen_config *c = G->c;
  int last_mb = mb == G->m - 1;
  if (is_vlast(G, chunk)) {
    int64_t z = zero3_gather(G, output_params(G), "zero.ag.bwd.output");
    tp_bwd(G, 1, "logits", -1);
    size_t before = G->n[0];
    dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "bwd.logits");
    op->flop = 2 * G->f_logits;
    set_kernels(op, &G->k_logits_bwd);
    if (z >= 0)
      add_dep(G, &G->t->ranks[G->rank].streams[stream_pos(G, S_MAIN)].ops[before], S_GRAD, z);
    tp_bwd(G, 0, "logits", -1);
    zero3_reduce(G, output_params(G), "zero.rs.output");
    grads_ready(G, output_params(G) + (c->swiglu ? 1 : 2) * (int64_t)c->hidden, last_mb);
  }
  int l0 = chunk_layer0(G, chunk);
  for (int i = G->lpc - 1; i >= 0; i--) {
    int l = l0 + i;
    char name[48];
    snprintf(name, sizeof name, "zero.ag.bwd.l%d", l);
    int64_t z = zero3_gather(G, G->p_layer, name);
    size_t before = G->n[0];
    if (c->recompute == DT_RECOMPUTE_FULL)
      layer_fwd(G, "recompute", l);
    /* MLP block backward */
    tp_bwd(G, 1, "mlp", l);
    if (c->experts > 0 && c->ep > 1) {
      snprintf(name, sizeof name, "ep.bwd.l%d.combine", l);
      coll(G, S_MAIN, DT_OP_ALLTOALL, G->g.ep, G->a2a_bytes, name);
      dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "bwd.l%d.experts", l);
      op->flop = 2 * G->f_mlp;
      set_kernels(op, &G->k_experts_bwd);
      expert_grads(G, l, last_mb);
      snprintf(name, sizeof name, "ep.bwd.l%d.dispatch", l);
      coll(G, S_MAIN, DT_OP_ALLTOALL, G->g.ep, G->a2a_bytes, name);
    } else {
      dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "bwd.l%d.mlp", l);
      op->flop = 2 * G->f_mlp;
      set_kernels(op, &G->k_mlp_bwd);
      expert_grads(G, l, last_mb);
    }
    tp_bwd(G, 0, "mlp", l);
    /* attention block backward */
    tp_bwd(G, 1, "attn", l);
    if (c->recompute == DT_RECOMPUTE_SELECTIVE) {
      dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "recompute.l%d.core_attn", l);
      op->flop = G->f_core;
      set_kernels(op, &G->k_core);
    }
    cp_comm(G, 0, "bwd", l);
    dt_op *op = emit(G, S_MAIN, DT_OP_COMPUTE, "bwd.l%d.attn", l);
    op->flop = 2 * G->f_attn;
    set_kernels(op, &G->k_attn_bwd);
    cp_comm(G, 1, "bwd", l);
    tp_bwd(G, 0, "attn", l);
    if (z >= 0)
      add_dep(G, &G->t->ranks[G->rank].streams[stream_pos(G, S_MAIN)].ops[before], S_GRAD, z);
    snprintf(name, sizeof name, "zero.rs.l%d", l);
    zero3_reduce(G, G->p_layer, name);
    grads_ready(G, G->p_layer, last_mb);
  }
  if (is_vfirst(G, chunk)) {
    int64_t z = zero3_gather(G, G->p_emb, "zero.ag.bwd.embed");
    size_t before = G->n[0];
    if (c->tp > 1 && c->sp)
      coll(G, S_MAIN, DT_OP_ALLGATHER, G->g.tp, G->tp_msg / c->tp, "tp.bwd.embed");
    compute(G, 0, &G->k_embed, "bwd.embed");
    if (z >= 0)
      add_dep(G, &G->t->ranks[G->rank].streams[stream_pos(G, S_MAIN)].ops[before], S_GRAD, z);
    zero3_reduce(G, G->p_emb, "zero.rs.embed");
    grads_ready(G, G->p_emb, last_mb);
  }
  /* a chunk's buckets close with its backward (Megatron keeps buckets per model chunk); ZeRO-2 every
   * micro-batch */
  if (last_mb || c->zero == 2)
    bucket_flush(G);
}

/* ---- pipeline point-to-point ---- */

static int32_t next_rank(const gen *G)
{
  int32_t s = (G->stage + 1) % G->c->pp;
  return dt_gen_rank(G->c, s, G->dpi, G->tpi);
}

static int32_t prev_rank(const gen *G)
{
  int32_t s = (G->stage + G->c->pp - 1) % G->c->pp;
  return dt_gen_rank(G->c, s, G->dpi, G->tpi);
}

/* One batch_isend_irecv as Megatron's p2p_communication._communicate posts it: send to prev, recv from prev,
 * send to next, recv from next (activations forward with tag 0, gradients backward with tag 1). Each flag is
 * the micro-batch number carried (for the op name), or -1 when that part is absent. */
static void p2p(gen *G, int64_t send_prev, int64_t recv_prev, int64_t send_next, int64_t recv_next)
{
  if (G->c->pp < 2)
    return;
  int64_t id = G->batch;
  int any = 0;
  struct {
    int64_t mb;
    dt_op_kind kind;
    int next;
    int tag;
    const char *what;
  } parts[4] = {{send_prev, DT_OP_SEND, 0, TAG_BWD, "pp.send_bwd"},
                {recv_prev, DT_OP_RECV, 0, TAG_FWD, "pp.recv_fwd"},
                {send_next, DT_OP_SEND, 1, TAG_FWD, "pp.send_fwd"},
                {recv_next, DT_OP_RECV, 1, TAG_BWD, "pp.recv_bwd"}};
  int64_t after = last_main(G); /* the compute that produced what this exchange sends */
  for (int i = 0; i < 4; i++) {
    if (parts[i].mb < 0)
      continue;
    /* p2p_overlap on the 1F1B schedule: a send is posted on s3 / s4 after the compute that produced it and s0
     * goes on; receives stay on s0, where the data is needed (the interleaved schedule posts them early instead,
     * p2p_post) */
    int async = G->c->p2p_overlap && parts[i].kind == DT_OP_SEND;
    int st = !async ? S_MAIN : parts[i].next ? S_PP_NEXT : S_PP_PREV;
    dt_op *op = emit(G, st, parts[i].kind, "%s.mb%lld", parts[i].what, (long long)parts[i].mb);
    op->peer = parts[i].next ? next_rank(G) : prev_rank(G);
    op->tag = parts[i].tag;
    op->bytes = G->pp_msg;
    if (async) {
      add_dep(G, op, S_MAIN, after);
      continue;
    }
    op->batch = id;
    any = 1;
  }
  if (any)
    G->batch++;
}

/* The handles of p2p ops posted without waiting (p2p_post): what Megatron's wait_handles hold. */
typedef struct p2p_handles {
  int n;
  int stream[4];
  int64_t index[4];
} p2p_handles;

/* p2p_overlap on the interleaved schedule: Megatron's p2p_communication._communicate with overlap_p2p_comm (and
 * batch_p2p_comm off, which Megatron requires with it) posts each isend / irecv on its own and returns their
 * handles; the schedule waits them where the data is needed. Each part goes to its own stream (send to the next
 * stage s3, to the previous s4, receive from the previous s5, from the next s6), posted after the compute before
 * it (as the NCCL stream waits for the compute stream at launch); *h gets the handles (p2p_wait makes the next s0
 * op wait for them). Arguments as p2p's. */
static void p2p_post(gen *G, int64_t send_prev, int64_t recv_prev, int64_t send_next, int64_t recv_next,
                     p2p_handles *h)
{
  h->n = 0;
  if (G->c->pp < 2)
    return;
  struct {
    int64_t mb;
    dt_op_kind kind;
    int next, tag, stream;
    const char *what;
  } parts[4] = {{send_prev, DT_OP_SEND, 0, TAG_BWD, S_PP_PREV, "pp.send_bwd"},
                {recv_prev, DT_OP_RECV, 0, TAG_FWD, S_PP_RPREV, "pp.recv_fwd"},
                {send_next, DT_OP_SEND, 1, TAG_FWD, S_PP_NEXT, "pp.send_fwd"},
                {recv_next, DT_OP_RECV, 1, TAG_BWD, S_PP_RNEXT, "pp.recv_bwd"}};
  int64_t after = last_main(G);
  for (int i = 0; i < 4; i++) {
    if (parts[i].mb < 0)
      continue;
    dt_op *op = emit(G, parts[i].stream, parts[i].kind, "%s.mb%lld", parts[i].what, (long long)parts[i].mb);
    op->peer = parts[i].next ? next_rank(G) : prev_rank(G);
    op->tag = parts[i].tag;
    op->bytes = G->pp_msg;
    add_dep(G, op, S_MAIN, after);
    h->stream[h->n] = parts[i].stream;
    h->index[h->n++] = (int64_t)G->n[parts[i].stream] - 1;
  }
}

/* req.wait() on every handle of h: the next s0 op waits for them all (sends included, as Megatron waits them). */
static void p2p_wait(gen *G, p2p_handles *h)
{
  for (int i = 0; i < h->n; i++)
    wait_next(G, h->stream[i], h->index[i]);
  h->n = 0;
}

/* A blocking exchange with p2p_overlap on the interleaved schedule (recv_forward before the first forward, the
 * cool-down's send_backward_recv_backward, which Megatron calls without overlap_p2p_comm): posted on the p2p
 * streams like the others, so that each direction keeps its order, and waited at once. */
static void p2p_sync(gen *G, int64_t send_prev, int64_t recv_prev, int64_t send_next, int64_t recv_next)
{
  p2p_handles h;
  p2p_post(G, send_prev, recv_prev, send_next, recv_next, &h);
  p2p_wait(G, &h);
}

/* ---- schedules ---- */

/* Megatron-LM forward_backward_pipelining_without_interleaving (schedules.py): warm-up of p - stage - 1
 * forwards, steady 1F1B with send_forward_recv_backward / send_backward_recv_forward, cool-down backwards. */
static void schedule_1f1b(gen *G)
{
  int64_t p = G->c->pp, m = G->m;
  int first = G->stage == 0, last = G->stage == p - 1;
  int64_t warmup = p - G->stage - 1;
  if (warmup > m)
    warmup = m;
  int64_t remaining = m - warmup;
  int64_t fwd = 0, bwd = 0;
  for (int64_t i = 0; i < warmup; i++) {
    if (!first)
      p2p(G, -1, fwd, -1, -1); /* recv_forward */
    forward(G, 0, fwd);
    if (!last)
      p2p(G, -1, -1, fwd, -1); /* send_forward */
    fwd++;
  }
  if (remaining > 0 && !first)
    p2p(G, -1, fwd, -1, -1);
  for (int64_t i = 0; i < remaining; i++) {
    int last_iter = i == remaining - 1;
    forward(G, 0, fwd);
    if (!last)
      p2p(G, -1, -1, fwd, bwd); /* send_forward_recv_backward */
    fwd++;
    backward(G, 0, bwd);
    if (!first) {
      if (last_iter)
        p2p(G, bwd, -1, -1, -1); /* send_backward */
      else
        p2p(G, bwd, fwd, -1, -1); /* send_backward_recv_forward */
    }
    bwd++;
  }
  for (int64_t i = 0; i < warmup; i++) {
    if (!last)
      p2p(G, -1, -1, -1, bwd); /* recv_backward */
    backward(G, 0, bwd);
    if (!first)
      p2p(G, bwd, -1, -1, -1); /* send_backward */
    bwd++;
  }
}

/* Megatron-LM forward_backward_pipelining_with_interleaving (schedules.py): model chunks v per stage, micro-batches
 * taken in groups of p per chunk; warm-up (p - stage - 1) * 2 + (v - 1) * p forwards; without overlap_p2p_comm
 * every communication is one batch of up to four p2p ops, with it (p2p_overlap) the warm-up and steady-state
 * exchanges are posted without waiting and waited before the next compute of their direction (p2p_post). */
static int64_t chunk_of(const gen *G, int64_t k, int forward)
{
  int64_t p = G->c->pp, v = G->c->virtual_stages;
  int64_t r = k % (p * v);
  if (r < 0)
    r += p * v; /* Python's modulo: Megatron evaluates the chunk of negative iteration numbers too */
  int64_t c = r / p;
  return forward ? c : v - c - 1;
}

static int64_t mb_of(const gen *G, int64_t k)
{
  int64_t p = G->c->pp, v = G->c->virtual_stages;
  return (k / (p * v)) * p + k % p;
}

static void schedule_interleaved(gen *G)
{
  int64_t p = G->c->pp, v = G->c->virtual_stages, total = G->m * v;
  int first = G->stage == 0, last = G->stage == p - 1;
  int O = G->c->p2p_overlap; /* overlap_p2p_comm: the p2p ops of warm-up and steady state posted early */
  p2p_handles fh = {0}, bh = {0}; /* fwd_wait_handles, bwd_wait_handles */
  int64_t warmup = (p - G->stage - 1) * 2 + (v - 1) * p;
  int all_warmup = 0;
  if (warmup >= total) {
    warmup = total;
    all_warmup = 1;
  }
  int64_t remaining = total - warmup;
  /* micro-batch numbers carried by the next recv_forward / recv_backward, for op names only */
  int64_t rf = 0, rb = 0;
  if (!first) { /* recv_forward for chunk 0 (blocking) */
    if (O)
      p2p_sync(G, -1, rf++, -1, -1);
    else
      p2p(G, -1, rf++, -1, -1);
  }
  for (int64_t k = 0; k < warmup; k++) {
    int64_t ch = chunk_of(G, k, 1), mb = mb_of(G, k);
    if (O)
      p2p_wait(G, &fh); /* the previous send_forward_recv_forward: this forward's input */
    forward(G, (int)ch, mb);
    int64_t next_ch = chunk_of(G, k + 1, 1);
    int recv_prev = 1;
    if (first && next_ch == 0)
      recv_prev = 0;
    if (k == total - 1)
      recv_prev = 0;
    int64_t send = is_vlast(G, (int)ch) ? -1 : mb;
    int end_warmup = k == warmup - 1 && !all_warmup;
    if (O) {
      /* send_forward_recv_forward(overlap_p2p_comm=True), and at the end of the warm-up
       * send_backward_recv_backward for the first backward's gradient */
      p2p_post(G, -1, recv_prev ? rf++ : -1, send, -1, &fh);
      if (end_warmup)
        p2p_post(G, -1, -1, -1, !last ? rb++ : -1, &bh);
    } else if (end_warmup) {
      int recv_next = !last;
      p2p(G, -1, recv_prev ? rf++ : -1, send, recv_next ? rb++ : -1);
    } else {
      p2p(G, -1, recv_prev ? rf++ : -1, send, -1);
    }
  }
  for (int64_t k = 0; k < remaining; k++) {
    int64_t fk = k + warmup, bk = k;
    int64_t fch = chunk_of(G, fk, 1), bch = chunk_of(G, bk, 0);
    int64_t send_fwd = is_vlast(G, (int)fch) ? -1 : mb_of(G, fk);
    int64_t send_bwd = is_vfirst(G, (int)bch) ? -1 : mb_of(G, bk);
    int recv_prev = 1, recv_next = 1;
    if (first) {
      if (chunk_of(G, fk - (p - 1), 1) == v - 1)
        recv_prev = 0;
    }
    if (last) {
      if (chunk_of(G, bk - (p - 1), 0) == 0)
        recv_next = 0;
    }
    if (k == remaining - 1)
      recv_prev = 0;
    if (O) {
      /* forward, its send_forward_recv_forward posted, then the backward, its send_backward_recv_backward: each
       * receive waited just before the next compute of its direction, so it runs under the other one */
      p2p_wait(G, &fh);
      forward(G, (int)fch, mb_of(G, fk));
      p2p_post(G, -1, recv_prev ? rf++ : -1, send_fwd, -1, &fh);
      p2p_wait(G, &bh);
      backward(G, (int)bch, mb_of(G, bk));
      p2p_post(G, send_bwd, -1, -1, recv_next ? rb++ : -1, &bh);
      continue;
    }
    forward(G, (int)fch, mb_of(G, fk));
    backward(G, (int)bch, mb_of(G, bk));
    p2p(G, send_bwd, recv_prev ? rf++ : -1, send_fwd, recv_next ? rb++ : -1);
  }
  if (O)
    p2p_wait(G, &bh); /* the cool-down waits the last backward handles (the forward ones are left to finish) */
  if (all_warmup && !last) { /* recv_backward */
    if (O)
      p2p_sync(G, -1, -1, -1, rb++);
    else
      p2p(G, -1, -1, -1, rb++);
  }
  for (int64_t k = remaining; k < total; k++) {
    int64_t ch = chunk_of(G, k, 0);
    backward(G, (int)ch, mb_of(G, k));
    int64_t next_ch = chunk_of(G, k + 1, 0);
    int recv_next = 1;
    if (last && next_ch == v - 1)
      recv_next = 0;
    if (k == total - 1)
      recv_next = 0;
    int64_t send_bwd = is_vfirst(G, (int)ch) ? -1 : mb_of(G, k);
    if (O)
      p2p_sync(G, send_bwd, -1, -1, recv_next ? rb++ : -1);
    else
      p2p(G, send_bwd, -1, -1, recv_next ? rb++ : -1);
  }
}

/* Everything after the last backward: deferred buckets (overlap off), the tied-embedding gradient all-reduce
 * between the first and last stage, and ZeRO-1/2's parameter all-gathers after the optimizer step. */
static void finish(gen *G)
{
  const dt_gen_config *c = G->c;
  int64_t end = last_main(G);
  for (size_t i = 0; i < G->ndeferred; i++)
    emit_bucket(G, G->deferred[i], end);
  if (G->g.emb >= 0) {
    dt_op *op =
        coll(G, S_GRAD, DT_OP_ALLREDUCE, G->g.emb, (uint64_t)G->p_emb * c->elem_bytes, "emb.grad");
    add_dep(G, op, S_MAIN, end);
  }
  if (G->pg_n > 0) {
    /* overlap_param_gather: the gathers ran under this window's forward (the steady state's rotated window: the
     * gathers of the previous step's update, docs/generator.md); any bucket the forward did not reach (none:
     * every unit has a forward) is gathered here */
    for (int32_t k = G->pg_n - 1 - G->pg_issued; k >= 0; k--)
      pg_issue(G, k, end);
  } else if (use_dp(G) && (c->zero == 1 || c->zero == 2)) {
    /* Megatron's distributed optimizer / ZeRO-1: each rank updates its shard, then gathers the parameters; one
     * all-gather per bucket (shard = bucket / dp). ZeRO-2 reduced every micro-batch: gather each parameter
     * once. */
    size_t n = c->zero == 2 ? G->ndone / (size_t)G->m : G->ndone;
    for (size_t i = 0; i < n; i++) {
      char name[48];
      snprintf(name, sizeof name, "zero.ag.bucket%zu", i);
      dt_op *op = coll(G, S_GRAD, DT_OP_ALLGATHER, G->g.dp,
                       (uint64_t)(G->done_buckets[i] / c->dp) * c->elem_bytes, name);
      add_dep(G, op, S_MAIN, end);
    }
  }
}

/* ---- groups and ranks ---- */

static int add_groups(const dt_gen_config *c, dt_trace *t, world_groups *W, dt_error *err)
{
  int32_t T = c->tp, P = c->pp, D = c->dp, E = c->ep;
  int32_t *ranks = dt_xmalloc(sizeof *ranks * (size_t)(T > D ? T : D) * 2 + 8);
  char name[96];
  int rc = DT_ERR;
  W->tp = dt_xmalloc(sizeof *W->tp * (size_t)P * D);
  W->dp = dt_xmalloc(sizeof *W->dp * (size_t)P * T);
  W->emb = dt_xmalloc(sizeof *W->emb * (size_t)D * T);
  W->ep = dt_xmalloc(sizeof *W->ep * (size_t)P * T * (D / E));
  W->edp = dt_xmalloc(sizeof *W->edp * (size_t)P * T * E);
  int32_t C = W->cp;
  W->cpg = dt_xmalloc(sizeof *W->cpg * (size_t)P * T * (D / C));
  for (int32_t s = 0; s < P; s++)
    for (int32_t j = 0; j < D; j++) {
      W->tp[s * D + j] = -1;
      if (T < 2)
        continue;
      for (int32_t i = 0; i < T; i++)
        ranks[i] = dt_gen_rank(c, s, j, i);
      snprintf(name, sizeof name, "tp.pp%d.dp%d", s, j);
      if ((W->tp[s * D + j] = dt_trace_add_group(t, name, ranks, (size_t)T, 0, 0, err)) < 0)
        goto done;
      t->groups[W->tp[s * D + j]].dim = DT_DIM_TP; /* the generator knows each group's dimension */
    }
  for (int32_t s = 0; s < P; s++)
    for (int32_t i = 0; i < T; i++) {
      int32_t base = (s * T + i);
      W->dp[base] = -1;
      if (D >= 2) {
        for (int32_t j = 0; j < D; j++)
          ranks[j] = dt_gen_rank(c, s, j, i);
        snprintf(name, sizeof name, "dp.pp%d.tp%d", s, i);
        if ((W->dp[base] = dt_trace_add_group(t, name, ranks, (size_t)D, 0, 0, err)) < 0)
          goto done;
      t->groups[W->dp[base]].dim = DT_DIM_DP; /* the generator knows each group's dimension */
      }
      for (int32_t k = 0; k < D / C; k++) {
        W->cpg[base * (D / C) + k] = -1;
        if (C < 2)
          continue;
        for (int32_t j = 0; j < C; j++)
          ranks[j] = dt_gen_rank(c, s, k * C + j, i);
        snprintf(name, sizeof name, "cp.pp%d.tp%d.%d", s, i, k);
        if ((W->cpg[base * (D / C) + k] = dt_trace_add_group(t, name, ranks, (size_t)C, 0, 0, err)) < 0)
          goto done;
      }
      for (int32_t k = 0; k < D / E; k++) {
        W->ep[base * (D / E) + k] = -1;
        if (E < 2 || c->experts == 0)
          continue;
        for (int32_t j = 0; j < E; j++)
          ranks[j] = dt_gen_rank(c, s, k * E + j, i);
        snprintf(name, sizeof name, "ep.pp%d.tp%d.%d", s, i, k);
        if ((W->ep[base * (D / E) + k] = dt_trace_add_group(t, name, ranks, (size_t)E, 0, 0, err)) < 0)
          goto done;
      t->groups[W->ep[base * (D / E) + k]].dim = DT_DIM_EP; /* the generator knows each group's dimension */
      }
      for (int32_t r = 0; r < E; r++) {
        W->edp[base * E + r] = -1;
        if (D / E < 2 || c->experts == 0)
          continue;
        for (int32_t j = 0; j < D / E; j++)
          ranks[j] = dt_gen_rank(c, s, j * E + r, i);
        snprintf(name, sizeof name, "edp.pp%d.tp%d.%d", s, i, r);
        if ((W->edp[base * E + r] = dt_trace_add_group(t, name, ranks, (size_t)(D / E), 0, 0, err)) < 0)
          goto done;
      t->groups[W->edp[base * E + r]].dim = DT_DIM_DP; /* the generator knows each group's dimension */
      }
    }
  for (int32_t j = 0; j < D; j++)
    for (int32_t i = 0; i < T; i++) {
      W->emb[j * T + i] = -1;
      if (!c->tied_embeddings || P < 2)
        continue;
      ranks[0] = dt_gen_rank(c, 0, j, i);
      ranks[1] = dt_gen_rank(c, P - 1, j, i);
      snprintf(name, sizeof name, "emb.dp%d.tp%d", j, i);
      if ((W->emb[j * T + i] = dt_trace_add_group(t, name, ranks, 2, 0, 0, err)) < 0)
        goto done;
      t->groups[W->emb[j * T + i]].dim = DT_DIM_PP; /* the generator knows each group's dimension */
    }
  rc = DT_OK;
done:
  free(ranks);
  return rc;
}

static rank_groups groups_of(const dt_gen_config *c, const world_groups *W, int32_t s, int32_t j, int32_t i)
{
  int32_t T = c->tp, D = c->dp, E = c->ep, base = s * T + i;
  rank_groups g;
  g.tp = W->tp[s * D + j];
  g.dp = W->dp[base];
  g.ep = W->ep[base * (D / E) + j / E];
  g.edp = W->edp[base * E + j % E];
  g.emb = (s == 0 || s == c->pp - 1) ? W->emb[j * T + i] : -1;
  g.cp = W->cpg[base * (D / W->cp) + j / W->cp];
  return g;
}

static void emit_rank(const dt_gen_config *c, dt_trace *t, const world_groups *W, int32_t s, int32_t j, int32_t i)
{
  gen G;
  memset(&G, 0, sizeof G);
  G.c = c;
  G.t = t;
  G.stage = s;
  G.dpi = j;
  G.tpi = i;
  G.rank = dt_gen_rank(c, s, j, i);
  G.g = groups_of(c, W, s, j, i);
  G.cp = W->cp;
  G.cp_group = G.g.cp;
  G.m = c->global_batch / ((int64_t)c->microbatch * (c->dp / W->cp)); /* c->dp holds dp * cp here */
  G.lpc = c->layers / (c->pp * c->virtual_stages);
  if (c->virtual_stages == 1)
    G.lpc = dt_gen_stage_layers(c, s, &G.layer0);
  G.vocab_p = pad_vocab(c);
  G.tp_msg = (uint64_t)c->microbatch * (c->seq / G.cp) * c->hidden * c->elem_bytes;
  G.cp_kv = (uint64_t)c->microbatch * (c->seq / G.cp) * 2 * (uint64_t)kv_heads(c) * (c->hidden / c->heads) / c->tp *
            c->elem_bytes;
  G.pp_msg = c->sp ? G.tp_msg / c->tp : G.tp_msg;
  G.loss_bytes = (uint64_t)c->microbatch * (c->seq / G.cp) * 4;
  /* dispatch/combine: each token's hidden state to top_k experts (tokens per rank: b s, / tp with SP) */
  G.a2a_bytes = (uint64_t)c->microbatch * c->seq / (c->sp ? c->tp : 1) * c->top_k * c->hidden * c->elem_bytes;
  G.p_layer = layer_params(c);
  G.p_expert = c->experts > 0 ? (int64_t)(c->experts / c->ep) * mlp_params(c) : 0;
  G.p_emb = G.vocab_p * c->hidden / c->tp;
  int64_t def = 40000000LL > 1000000LL * c->dp ? 40000000LL : 1000000LL * c->dp; /* Megatron DDP default */
  G.bucket_elems = c->bucket_bytes >= 0 ? c->bucket_bytes / c->elem_bytes : def;
  if (G.bucket_elems < 1)
    G.bucket_elems = 1; /* a bucket smaller than any unit's gradients: every layer (embedding, output) alone */
  G.anchor = -1;
  flops(&G);
  stream_pos(&G, S_MAIN);
  if (c->dp > 1 || G.g.emb >= 0 || G.g.edp >= 0)
    stream_pos(&G, S_GRAD);
  pg_plan(&G);
  /* the first bucket in forward order (Megatron dispatches it from zero_grad), or the first chunk's (MegaScale),
   * at the start of the window, before the forward */
  if (G.pg_n > 0 && c->param_gather_chunk)
    pg_issue_chunk(&G, G.pg_n - 1, -1);
  else if (G.pg_n > 0)
    pg_issue(&G, G.pg_n - 1, -1);
  if (c->schedule == DT_SCHEDULE_INTERLEAVED)
    schedule_interleaved(&G);
  else
    schedule_1f1b(&G);
  finish(&G);
  free(G.deferred);
  free(G.done_buckets);
  free(G.pg_bucket);
  free(G.pg_elems);
  free(G.pg_chunk);
  free(G.pg_s1);
}

int dt_gen_build(const dt_gen_config *user, int materialize, dt_trace **out, dt_error *err)
{
  *out = NULL;
  if (dt_gen_validate(user, 0, err) != DT_OK)
    return DT_ERR;
  /* Context parallelism: the cp ranks of one DP replica sit between TP and DP (Megatron's order tp-cp-dp-pp), so
   * the layout is that of dp * cp data-parallel ranks; gradients reduce over all of them (Megatron's
   * data-parallel group with context parallelism) and each cp consecutive ones form a CP group. */
  dt_gen_config layout = *user;
  layout.dp = user->dp * user->cp;
  layout.cp = 1;
  const dt_gen_config *c = &layout;
  int64_t world = dt_gen_world(c);
  dt_trace *t = dt_trace_new((int32_t)world);
  world_groups W;
  memset(&W, 0, sizeof W);
  W.cp = user->cp > 0 ? user->cp : 1;
  int rc = DT_ERR;
  int32_t *map = NULL;
  if (add_groups(c, t, &W, err) != DT_OK)
    goto done;
  t->p2p_dim = DT_DIM_PP; /* the generator's sends and receives are the pipeline's activations and gradients */
  for (int32_t s = 0; s < c->pp; s++) {
    if (materialize) {
      for (int32_t j = 0; j < c->dp; j++)
        for (int32_t i = 0; i < c->tp; i++)
          emit_rank(c, t, &W, s, j, i);
      continue;
    }
    emit_rank(c, t, &W, s, 0, 0);
  }
  if (!materialize) {
    map = dt_xmalloc(sizeof *map * (t->ngroups + 1));
    for (int32_t s = 0; s < c->pp; s++) {
      rank_groups tg = groups_of(c, &W, s, 0, 0);
      int32_t tmpl = dt_gen_rank(c, s, 0, 0);
      for (int32_t j = 0; j < c->dp; j++)
        for (int32_t i = 0; i < c->tp; i++) {
          if (j == 0 && i == 0)
            continue;
          rank_groups ug = groups_of(c, &W, s, j, i);
          for (size_t g = 0; g < t->ngroups; g++)
            map[g] = (int32_t)g;
          int32_t from[6] = {tg.tp, tg.dp, tg.emb, tg.ep, tg.edp, tg.cp};
          int32_t to[6] = {ug.tp, ug.dp, ug.emb, ug.ep, ug.edp, ug.cp};
          for (int k = 0; k < 6; k++)
            if (from[k] >= 0)
              map[from[k]] = to[k];
          if (dt_trace_set_template(t, dt_gen_rank(c, s, j, i), tmpl, map, err) != DT_OK)
            goto done;
        }
    }
  }
  char buf[512];
  dt_gen_shape_name(user, buf, sizeof buf);
  dt_trace_add_meta(t, "generator", "dtsim gen (docs/generator.md)");
  dt_trace_add_meta(t, "model", buf);
  snprintf(buf, sizeof buf,
           "tp=%d pp=%d dp=%d cp=%d zero=%d sp=%d recompute=%s schedule=%s virtual_stages=%d microbatch=%d "
           "global_batch=%lld microbatches=%lld seq=%d dtype=%.7s experts=%d ep=%d",
           user->tp, user->pp, user->dp, user->cp, c->zero, c->sp && c->tp > 1,
           c->recompute == DT_RECOMPUTE_FULL        ? "full"
           : c->recompute == DT_RECOMPUTE_SELECTIVE ? "selective"
                                                    : "none",
           c->schedule == DT_SCHEDULE_INTERLEAVED ? "interleaved" : "1f1b", c->virtual_stages, c->microbatch,
           (long long)c->global_batch, (long long)dt_gen_microbatches(user), c->seq, c->dtype, c->experts, c->ep);
  dt_trace_add_meta(t, "parallel", buf);
  snprintf(buf, sizeof buf, "%lld", (long long)dt_gen_total_params(user));
  dt_trace_add_meta(t, "params", buf); /* the model-size band of the report's validated error (docs/report.md) */
  dt_trace_add_note(t, "generated trace: compute ops carry their FLOPs and kernel shapes (timed by the platform's "
                       "gpu.compute model, else at peak x efficiency, docs/compute.md), communication as Megatron-LM "
                       "/ DeepSpeed issue it (docs/generator.md)");
  rc = DT_OK;
done:
  free(map);
  free(W.tp);
  free(W.dp);
  free(W.emb);
  free(W.ep);
  free(W.edp);
  free(W.cpg);
  if (rc != DT_OK)
    dt_trace_free(t);
  else
    *out = t;
  return rc;
}

/* ---- schemes ---- */

static const char *const scheme_names[DT_SCHEME_COUNT] = {"DP", "ZeRO", "TP", "PP", "EP", "embedding", "CP"};
static const char *const scheme_prefix[DT_SCHEME_COUNT] = {"dp.", "zero.", "tp.", "pp.", "ep.", "emb.", "cp."};

const char *dt_gen_scheme_name(dt_gen_scheme s)
{
  return (unsigned)s < DT_SCHEME_COUNT ? scheme_names[s] : NULL;
}

int dt_gen_scheme_of(const char *name)
{
  if (!name)
    return -1;
  for (int i = 0; i < DT_SCHEME_COUNT; i++)
    if (strncmp(name, scheme_prefix[i], strlen(scheme_prefix[i])) == 0)
      return i;
  return -1;
}
