/* The GPT training workload generator (DESIGN.md §5, docs/generator.md): from a model shape and a parallel
 * configuration, the trace Megatron-LM / DeepSpeed would run for one training iteration — TP, PP, DP / ZeRO
 * and MoE communication in the schedule's real order, compute as FLOPs. One template rank per pipeline stage
 * holds the ops; every other rank of the stage runs it through a group map (dt_trace_set_template), so memory
 * grows with the stages, not with the ranks. */
#ifndef DT_GEN_H
#define DT_GEN_H

#include "../common/dt_error.h"
#include "dt_trace.h"

#include <stddef.h>
#include <stdint.h>

typedef enum { DT_RECOMPUTE_NONE = 0, DT_RECOMPUTE_FULL, DT_RECOMPUTE_SELECTIVE } dt_gen_recompute;
typedef enum { DT_SCHEDULE_1F1B = 0, DT_SCHEDULE_INTERLEAVED } dt_gen_schedule;

/* Where a key's value came from: line and column (1-based) of the workload-file key that set it; 0 when a flag,
 * a default or a preset named outside a file set it. */
typedef struct dt_gen_pos {
  int32_t line, col;
} dt_gen_pos;
#define DT_GEN_MAX_KEYS 40 /* room for the dt_gen_set keys and the workload sections */
#define DT_GEN_GIVEN_FFN 1u /* ffn was set: a new hidden size does not rescale it */
#define DT_GEN_GIVEN_KV 2u  /* kv_heads was set: new heads do not derive it */

/* Model and parallel configuration. Counts are plain numbers; sizes in bytes. Fill with dt_gen_config_init
 * or dt_gen_preset, change with dt_gen_set (the one entry point shared by flags and workload files). */
typedef struct dt_gen_config {
  char name[64];        /* preset or workload name, for reports */
  /* model */
  int32_t layers;       /* L transformer layers */
  int32_t hidden;       /* h */
  int32_t heads;        /* attention heads a */
  int32_t kv_heads;     /* key/value heads (GQA); = heads for multi-head attention */
  int32_t ffn;          /* f, MLP inner size */
  int32_t vocab;        /* V */
  int32_t seq;          /* s, sequence length */
  int swiglu;           /* 1: gated MLP with three h x f matmuls (Llama), 0: two (GPT) */
  int tied_embeddings;  /* 1: output layer shares the input embedding (GPT-3 / Megatron GPT) */
  int32_t experts;      /* MoE experts per layer, 0 = dense */
  int32_t top_k;        /* experts per token (MoE) */
  /* training */
  int32_t microbatch;   /* b */
  int64_t global_batch; /* sequences per iteration; micro-batches per pipeline m = global / (b * dp) */
  int32_t elem_bytes;   /* e: 2 for bf16/fp16, 4 for fp32 */
  char dtype[8];        /* "bf16", "fp16", "fp32", "fp8" (FP8 GEMMs as Transformer Engine runs them: activations,
                           attention and communication stay bf16, so elem_bytes is 2) */
  /* parallelism */
  int32_t tp, pp, dp;
  int zero;             /* ZeRO stage 0-3 */
  int sp;               /* sequence parallelism (Megatron), needs tp > 1 to matter */
  dt_gen_recompute recompute;
  dt_gen_schedule schedule;
  int32_t virtual_stages; /* model chunks per pipeline stage (interleaved schedule); 1 for 1F1B */
  int64_t bucket_bytes;   /* DP gradient bucket size; < 0 (the default) = Megatron's max(40M, 1M * dp) elements;
                             below one layer's gradients (0 included) = one bucket per layer */
  int dp_overlap;       /* 1: buckets issued during the last backward as gradients are ready; 0: after it */
  int32_t ep;           /* expert parallel size (divides dp), 1 without MoE */
  int32_t cp;           /* context parallel size (Megatron / NeMo): the sequence split over cp ranks that hold the
                           same parameters; world = tp * cp * pp * dp, gradients reduced over dp * cp */
  int flash_attention;  /* 1 (default): fused attention kernel; 0: scores as batched GEMMs + softmax in memory */
  int tp_overlap;       /* 1: TP collectives overlap the GEMMs beside them (Megatron/TE userbuffers; with SP) */
  int p2p_overlap;      /* 1: pipeline sends do not hold the compute stream (Megatron's overlap_p2p_comm); on the
                           interleaved schedule the receives are posted early, as Megatron posts them */
  int overlap_param_gather; /* 1: ZeRO-1's parameter all-gathers run under the next iteration's forward, each
                               bucket waited before its first layer (Megatron's overlap_param_gather); zero 1 only */
  int param_gather_chunk;   /* how they are prefetched: 0 one bucket ahead (Megatron), 1 a whole model chunk's
                               buckets one chunk ahead, the first chunk's at the start (MegaScale, NSDI'24 §3.2) */
  int embed_as_layers;  /* 1: DeepSpeed's transformer|embedding pipeline partition (dt_gen_stage_layers) */
  unsigned given;       /* DT_GEN_GIVEN_* bits: keys set explicitly, which a shape override leaves alone */
  /* provenance, for error positions */
  char source[512];                /* workload file read into this configuration, "" when none */
  dt_gen_pos pos[DT_GEN_MAX_KEYS]; /* per key; read with dt_gen_key_pos */
} dt_gen_config;

/* Defaults: no model (layers 0 until a preset or keys set it), b 1, bf16, tp = pp = dp = 1, ZeRO 0, no SP,
 * no recompute, 1F1B, 1 virtual stage, default bucket, DP overlap on, dense, ep 1; no source, no positions. */
void dt_gen_config_init(dt_gen_config *c);

/* Position of the workload-file key that set `key` (a dt_gen_set key, or a section name "preset", "model",
 * "training", "parallel"): returns 1 and fills *line, *col (1-based; the file is c->source), or 0 when the
 * value did not come from a file (flag, default, preset named on the command line). */
int dt_gen_key_pos(const dt_gen_config *c, const char *key, long *line, long *col);

/* Megatron-LM's argument adjustments, applied once the configuration is complete: sequence parallelism is
 * turned off when tp is 1 (megatron/training/arguments.py: "Disabling sequence parallelism because tensor model
 * parallelism is disabled"); p2p_overlap with pp 1 is noted as having no effect (left as given). Returns the
 * number of notes (0 to 2) and writes them into note (size note_size, one a line, joined by '\n'; "" when
 * none), each with the file position when its key came from one. */
int dt_gen_resolve(dt_gen_config *c, char *note, size_t note_size);

/* Presets (docs/generator.md lists their sources): "neox-19m", "neox-125m", "neox-1.3b", "neox-13b",
 * "gpt3-175b", "llama2-7b", "llama2-70b". */
size_t dt_gen_preset_count(void);
/* Name and one-line description of preset i (< dt_gen_preset_count()), NULL when out of range. */
const char *dt_gen_preset_name(size_t i);
const char *dt_gen_preset_about(size_t i);
/* Fills c (after dt_gen_config_init) with preset name's model and its default global batch. Returns DT_OK,
 * or DT_ERR naming the nearest preset. */
int dt_gen_preset(const char *name, dt_gen_config *c, dt_error *err);

/* Sets one key from its text value: the keys of docs/generator.md (layers, hidden, heads, kv_heads, ffn,
 * vocab, seq, swiglu, tied_embeddings, experts, top_k, microbatch, global_batch, dtype, tp, pp, dp, zero,
 * sp, recompute, schedule, virtual_stages, bucket, dp_overlap, ep). Counts are whole numbers within a range
 * the message states. "bucket" takes a byte size: bare suffixes K, M, G, T are powers of 1024 as in `dtsim
 * bench` ("25M", "512K"), units kB, MB, GB powers of 1000 and KiB, MiB, GiB powers of 1024, or "default";
 * booleans take true or false. The key loses any file position (dt_gen_key_pos): the caller
 * that read it from a file sets it again. Returns DT_OK, or DT_ERR with a message (no position; callers add
 * it) for an unknown key (with the nearest) or a bad value. */
int dt_gen_set(dt_gen_config *c, const char *key, const char *value, dt_error *err);
/* What value converts to as key's value, as a string two values of the key are equal by (a sweep refuses an axis
 * that lists one value twice): the number for counts, sizes (bytes: "25M" and "26214400" are both "26214400") and
 * booleans (1 or 0), else the text itself. Returns 0 with canon (size bytes) filled, or -1 for a bad key or value. */
int dt_gen_value_canon(const char *key, const char *value, char *canon, size_t size);
/* Whether key is a dt_gen_set key. */
int dt_gen_is_key(const char *key);
/* Whether key takes a whole number or a boolean, which workload files write unquoted ('tp: 8', never
 * 'tp: "8"'): a sweep applies the same rule. 0 for an unknown key. */
int dt_gen_key_numeric(const char *key);
/* The dt_gen_set keys, for i below dt_gen_key_count() (a static string; NULL past the end). */
size_t dt_gen_key_count(void);
const char *dt_gen_key_name(size_t i);

/* Reads a workload YAML file (libyaml):
 *   dtsim_workload: 1
 *   preset: gpt3-175b        # optional base
 *   model: {layers: ..., hidden: ...}
 *   training: {microbatch: 1, global_batch: 1536, dtype: bf16}
 *   parallel: {tp: 8, pp: 16, dp: 8, zero: 1, sp: true, ...}
 * into c (on top of what c holds), recording c->source and each key's position. Unknown or repeated keys and
 * sections are errors at file:line:col (with the nearest known key, or the line of the first occurrence);
 * values are checked as dt_gen_set does. A directory or unreadable path is an error naming it. */
int dt_gen_load_yaml(const char *path, dt_gen_config *c, dt_error *err);
int dt_gen_parse_yaml(const char *text, size_t len, const char *source_name, dt_gen_config *c, dt_error *err);

/* Checks that the configuration can run: a model is given, tp divides heads and kv_heads, pp * virtual
 * stages divides layers, the global batch is a multiple of b * dp, the interleaved schedule has at least two
 * virtual stages and a micro-batch count that is a multiple of pp, ep divides dp and experts, ZeRO 2-3 is
 * not combined with pp > 1 (DeepSpeed refuses it), sizes fit 64 bits. gpus > 0 also checks world = tp*pp*dp
 * <= gpus. Returns DT_OK or DT_ERR with a message that names the values, at the file:line:col of the first
 * key involved that a workload file set (c->source alone for a missing model or global batch). */
int dt_gen_validate(const dt_gen_config *c, int64_t gpus, dt_error *err);

/* The shape that runs, for reports: the preset or workload name when the model keys are the preset's
 * ("gpt3-175b"), else the name with the shape ("gpt3-175b shape L 48 h 8192 heads 64/8 f 28672 V 50257 s 2048").
 * Writes into buf (size bytes) and returns it. */
char *dt_gen_shape_name(const dt_gen_config *c, char *buf, size_t size);

/* World size tp * cp * pp * dp and micro-batches per pipeline global_batch / (microbatch * dp). */
int64_t dt_gen_world(const dt_gen_config *c);
int64_t dt_gen_microbatches(const dt_gen_config *c);

/* Megatron rank layout: rank = pp * (tp * cp * dp) + dp_index * tp + tp_index (TP innermost, then CP, then DP,
 * then PP), where dp_index runs over dp * cp: its cp consecutive values are one DP replica's context ranks. */
int32_t dt_gen_rank(const dt_gen_config *c, int32_t pp_index, int32_t dp_index, int32_t tp_index);

/* Transformer layers of pipeline stage `stage` (1F1B) and, into *first (may be NULL), its first layer: L / pp
 * each, or, with embed_as_layers (pp divides L + 2), DeepSpeed's type:transformer|embedding partition (the
 * embedding and the output layer count as one layer each: the first and last stage hold one layer fewer;
 * BLOOM-176B's 70 layers on 12 stages). */
int32_t dt_gen_stage_layers(const dt_gen_config *c, int32_t stage, int32_t *first);

/* Parameters (elements) one GPU of pipeline stage `stage` holds and reduces over data parallelism: its TP shard
 * of the stage's layers, embeddings and norms (expert parameters excluded, see expert_params). */
int64_t dt_gen_stage_params(const dt_gen_config *c, int32_t stage);
/* Expert parameters (elements) one GPU of a stage holds (MoE; 0 when dense). */
int64_t dt_gen_stage_expert_params(const dt_gen_config *c, int32_t stage);
/* The model's parameters (elements) in all, dense and expert, as one GPU would hold them without any parallelism
 * (tp = pp = ep = 1): what "a 7B model" counts. */
int64_t dt_gen_total_params(const dt_gen_config *c);

/* Builds the iteration's trace (validates c first). With materialize = 0 (the normal case) every pipeline
 * stage has one template rank (tp 0, dp 0) and every other rank runs it through dt_trace_set_template;
 * materialize = 1 writes every rank's ops out (small worlds only: tests compare both forms). Ops carry
 * `name=` (fwd.l3.mlp, tp.fwd.l3.attn, pp.send_fwd, dp.bucket4 ...) and op->line is a running sequence
 * number per rank that fixes the issue order across streams. Returns DT_OK and *out (caller frees), or
 * DT_ERR. The trace is not validated. */
int dt_gen_build(const dt_gen_config *c, int materialize, dt_trace **out, dt_error *err);

/* Communication scheme of a generated op, from its name prefix. */
typedef enum {
  DT_SCHEME_DP = 0, DT_SCHEME_ZERO, DT_SCHEME_TP, DT_SCHEME_PP, DT_SCHEME_EP, DT_SCHEME_EMB, DT_SCHEME_CP,
  DT_SCHEME_COUNT
} dt_gen_scheme;
/* Label of a scheme in the summary tables ("DP", "ZeRO", ..., "embedding", "CP"; static), NULL when out of range. */
const char *dt_gen_scheme_name(dt_gen_scheme s);
/* Scheme of op name (prefix "dp.", "zero.", "tp.", "pp.", "ep.", "emb.", "cp."), -1 for compute and others. */
int dt_gen_scheme_of(const char *name);

#define DT_GEN_HIST 48
/* Volumes of one generated iteration, per GPU and in total (docs/generator.md). "bytes" is the sum of the
 * ops' `bytes=` (DESIGN.md §4 convention: all-gather the shard, reduce-scatter the whole input, a send/recv
 * pair counted at the sender); "wire" is what one GPU sends with ring algorithms: all-reduce 2(n-1)/n S,
 * all-gather (n-1) S, reduce-scatter and all-to-all (n-1)/n S, send S. */
typedef struct dt_gen_volume {
  int32_t stages;
  int32_t ranks_per_stage;              /* tp * dp */
  /* per GPU of each stage (stages entries) */
  double *stage_bytes[DT_SCHEME_COUNT];
  double *stage_wire[DT_SCHEME_COUNT];
  double *stage_ops[DT_SCHEME_COUNT];
  double *stage_flop;
  /* totals over all GPUs */
  double total_bytes[DT_SCHEME_COUNT], total_wire[DT_SCHEME_COUNT], total_ops[DT_SCHEME_COUNT];
  double kind_ops[DT_OP_COUNT], kind_bytes[DT_OP_COUNT]; /* over all GPUs; send/recv pairs under send */
  uint64_t max_msg[DT_SCHEME_COUNT];   /* largest `bytes` per scheme */
  double hist[DT_GEN_HIST];            /* ops over all GPUs by `bytes`: bucket k holds [2^(k-1), 2^k), 0 holds 0 */
  /* closed forms of the seed study (HOTI 2024), computed from the configuration alone */
  double cf_tp_msg;     /* b*s*h*e */
  double cf_pp_msg;     /* b*s*h*e, / tp with SP */
  double cf_dp_m;       /* per GPU of stage 0: dense gradient bytes m = dense params * e (dt_gen_stage_params) */
  double cf_dp_volume;  /* 2m (ring all-reduce on the DP group; ZeRO-1 reduce-scatter m + all-gather m), ZeRO-2
                           m * (microbatches + 1), ZeRO-3 1.5 * 2m * microbatches */
  double cf_expert_m;   /* per GPU of stage 0: expert gradient bytes m_x = expert params * e (0 when dense) */
  double cf_expert_volume; /* 2 m_x: the expert gradients' all-reduce on the expert-data-parallel group */
  int32_t expert_dp;       /* that group's size dp / ep (1 when dense: no expert all-reduce) */
  double cf_dp_ring;       /* what a stage-0 GPU sends for both with ring algorithms: cf_dp_volume (dp-1)/dp +
                              cf_expert_volume (dp/ep-1)/(dp/ep); compare with stage_wire DP + ZeRO */
} dt_gen_volume;

/* Computes the volumes of trace t built by dt_gen_build from c (template or materialized). Returns DT_OK
 * and fills v (free with dt_gen_volume_free). */
int dt_gen_volume_compute(const dt_gen_config *c, const dt_trace *t, dt_gen_volume *v, dt_error *err);
void dt_gen_volume_free(dt_gen_volume *v);

#endif
