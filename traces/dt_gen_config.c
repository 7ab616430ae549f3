/* The generator's inputs: presets, the key table shared by command-line flags and workload files, the
 * workload YAML reader (libyaml document API, errors at file:line:col) and the checks that reject
 * configurations Megatron-LM / DeepSpeed would refuse. */
#include "dt_gen.h"

#include "../common/dt_units.h"
#include "../common/dt_util.h"
#include "../common/dt_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

void dt_gen_config_init(dt_gen_config *c)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "custom");
  c->top_k = 2;
  c->microbatch = 1;
  c->elem_bytes = 2;
  snprintf(c->dtype, sizeof c->dtype, "bf16");
  c->tp = c->pp = c->dp = 1;
  c->virtual_stages = 1;
  c->bucket_bytes = -1;
  c->dp_overlap = 1;
  c->ep = 1;
  c->cp = 1;
  c->flash_attention = 1;
}

/* ---- presets ---- */

typedef struct preset {
  const char *name, *about;
  int32_t layers, hidden, heads, kv_heads, ffn, vocab, seq;
  int swiglu, tied;
  int32_t microbatch;
  int64_t global_batch;
  const char *dtype;
} preset;

/* Sources:
 * - neox-*: EleutherAI/gpt-neox configs/19M.yml, 125M.yml, 1-3B.yml, 13B.yml (the configurations the seed
 *   study, HOTI 2024 "Demystifying the Communication Characteristics for Distributed Transformer Models",
 *   runs; the same shapes as Pythia-70M/160M/1.4B/12B, whose first names were 19M/125M/1.3B/13B): f = 4h,
 *   "no-weight-tying": true, fp16, train_micro_batch_size_per_gpu 4; the GPT-NeoX tokenizer's 50277 tokens
 *   (padded as Megatron does, to a multiple of 128 x tp: 50304 at tp 1); global batch 1024 sequences (Pythia's
 *   2M tokens at s = 2048).
 * - gpt3-175b: Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads, n_ctx 2048, vocab 50257,
 *   tied input/output embeddings); global batch 1536 as Narayanan et al. 2021 (Megatron-LM, SC21) Table 1
 *   for 175B on 1,024 GPUs, micro-batch 1.
 * - llama2-*: Touvron et al. 2023 and the released config.json (7B: 32 layers, h 4096, 32 heads, f 11008;
 *   70B: 80 layers, h 8192, 64 heads, 8 KV heads (GQA), f 28672; SwiGLU, vocab 32000, s 4096, untied);
 *   4M tokens per batch = 1024 sequences.
 * - gpt3-5b, gpt3-20b: NVIDIA NeMo's megatron_gpt_config presets gpt3/5b.yaml (24 layers, h 4096, 32 heads, f
 *   16384) and gpt3/20b.yaml (44 layers, h 6144, 48 heads, f 24576); GPT-2 BPE vocabulary 50257, s 2048, shared
 *   input/output embeddings, bf16; global batch 2048 (5B) and 256 (20B) as NeMo's performance summary runs them.
 * - llama3-*: Meta's released config.json (8B: 32 layers, h 4096, 32 heads, 8 KV heads, f 14336; 70B: 80 layers,
 *   h 8192, 64 heads, 8 KV heads, f 28672; vocabulary 128256, SwiGLU, untied), s 8192, global batch 128 as NeMo's
 *   performance summary.
 * - bloom-176b: BigScience's tr11-176B-ml README (70 layers, h 14336, 112 heads, f 4h, vocabulary 250,680, s 2048,
 *   tied embeddings, bf16, global batch 2048). ALiBi and the embedding LayerNorm are not modelled. */
static const preset presets[] = {
    {"neox-19m", "GPT-NeoX 19M (seed study): L 6, h 512, 8 heads, s 2048", 6, 512, 8, 8, 2048, 50277, 2048, 0, 0, 4,
     1024, "fp16"},
    {"neox-125m", "GPT-NeoX 125M (seed study): L 12, h 768, 12 heads, s 2048", 12, 768, 12, 12, 3072, 50277, 2048, 0,
     0, 4, 1024, "fp16"},
    {"neox-1.3b", "GPT-NeoX 1.3B (seed study): L 24, h 2048, 16 heads, s 2048", 24, 2048, 16, 16, 8192, 50277, 2048,
     0, 0, 4, 1024, "fp16"},
    {"neox-13b", "GPT-NeoX 13B (seed study): L 40, h 5120, 40 heads, s 2048", 40, 5120, 40, 40, 20480, 50277, 2048, 0,
     0, 4, 1024, "fp16"},
    {"gpt3-175b", "GPT-3 175B: L 96, h 12288, 96 heads, s 2048, V 50257, tied embeddings", 96, 12288, 96, 96, 49152,
     50257, 2048, 0, 1, 1, 1536, "bf16"},
    {"llama2-7b", "Llama-2 7B: L 32, h 4096, 32 heads, SwiGLU f 11008, s 4096, V 32000", 32, 4096, 32, 32, 11008,
     32000, 4096, 1, 0, 1, 1024, "bf16"},
    {"llama2-70b", "Llama-2 70B: L 80, h 8192, 64 heads, 8 KV heads (GQA), SwiGLU f 28672, s 4096", 80, 8192, 64, 8,
     28672, 32000, 4096, 1, 0, 1, 1024, "bf16"},
    {"gpt3-5b", "GPT-3 5B (NeMo): L 24, h 4096, 32 heads, f 16384, s 2048, tied embeddings", 24, 4096, 32, 32, 16384,
     50257, 2048, 0, 1, 4, 2048, "bf16"},
    {"gpt3-20b", "GPT-3 20B (NeMo): L 44, h 6144, 48 heads, f 24576, s 2048, tied embeddings", 44, 6144, 48, 48, 24576,
     50257, 2048, 0, 1, 2, 256, "bf16"},
    {"llama3-8b", "Llama-3 8B: L 32, h 4096, 32 heads, 8 KV heads, SwiGLU f 14336, s 8192, V 128256", 32, 4096, 32, 8,
     14336, 128256, 8192, 1, 0, 1, 128, "bf16"},
    {"llama3-70b", "Llama-3 70B: L 80, h 8192, 64 heads, 8 KV heads, SwiGLU f 28672, s 8192, V 128256", 80, 8192, 64,
     8, 28672, 128256, 8192, 1, 0, 1, 128, "bf16"},
    {"bloom-176b", "BLOOM 176B: L 70, h 14336, 112 heads, f 57344, s 2048, V 250680, tied embeddings", 70, 14336, 112,
     112, 57344, 250680, 2048, 0, 1, 2, 2048, "bf16"},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

size_t dt_gen_preset_count(void)
{
  return NPRESETS;
}

const char *dt_gen_preset_name(size_t i)
{
  return i < NPRESETS ? presets[i].name : NULL;
}

const char *dt_gen_preset_about(size_t i)
{
  return i < NPRESETS ? presets[i].about : NULL;
}

/* Keys a preset sets (dt_gen_preset): a preset named in a workload file gives them its position. */
static const char *const preset_keys[] = {"name",       "layers",       "hidden", "heads",  "kv_heads",
                                          "ffn",        "vocab",        "seq",    "swiglu", "tied_embeddings",
                                          "microbatch", "global_batch", "dtype"};
#define NPRESET_KEYS (sizeof preset_keys / sizeof preset_keys[0])

static void set_pos(dt_gen_config *c, const char *key, int32_t line, int32_t col);

static void clear_preset_pos(dt_gen_config *c)
{
  for (size_t i = 0; i < NPRESET_KEYS; i++)
    set_pos(c, preset_keys[i], 0, 0);
}

int dt_gen_preset(const char *name, dt_gen_config *c, dt_error *err)
{
  for (size_t i = 0; i < NPRESETS; i++) {
    const preset *p = &presets[i];
    if (strcmp(name, p->name) != 0)
      continue;
    clear_preset_pos(c);
    c->given = 0;
    snprintf(c->name, sizeof c->name, "%s", p->name);
    c->layers = p->layers;
    c->hidden = p->hidden;
    c->heads = p->heads;
    c->kv_heads = p->kv_heads;
    c->ffn = p->ffn;
    c->vocab = p->vocab;
    c->seq = p->seq;
    c->swiglu = p->swiglu;
    c->tied_embeddings = p->tied;
    c->microbatch = p->microbatch;
    c->global_batch = p->global_batch;
    return dt_gen_set(c, "dtype", p->dtype, err);
  }
  const char *names[NPRESETS];
  for (size_t i = 0; i < NPRESETS; i++)
    names[i] = presets[i].name;
  const char *near = dt_nearest_word(name, names, NPRESETS);
  if (near)
    return dt_error_set(err, "", 0, 0, "unknown preset '%s' (did you mean '%s'?)", name, near);
  return dt_error_set(err, "", 0, 0, "unknown preset '%s' (known: neox-19m, neox-125m, neox-1.3b, neox-13b, "
                                     "gpt3-175b, llama2-7b, llama2-70b, gpt3-5b, gpt3-20b, llama3-8b, llama3-70b, "
                                     "bloom-176b)", name);
}

char *dt_gen_shape_name(const dt_gen_config *c, char *buf, size_t size)
{
  dt_gen_config p;
  dt_gen_config_init(&p);
  int same = 0;
  if (dt_gen_preset(c->name, &p, NULL) == DT_OK)
    same = p.layers == c->layers && p.hidden == c->hidden && p.heads == c->heads &&
           (p.kv_heads > 0 ? p.kv_heads : p.heads) == (c->kv_heads > 0 ? c->kv_heads : c->heads) && p.ffn == c->ffn &&
           p.vocab == c->vocab && p.seq == c->seq && p.swiglu == c->swiglu && p.experts == c->experts;
  if (same)
    snprintf(buf, size, "%s", c->name);
  else
    snprintf(buf, size, "%s shape L %d h %d heads %d/%d f %d V %d s %d%s", c->name, c->layers, c->hidden, c->heads,
             c->kv_heads > 0 ? c->kv_heads : c->heads, c->ffn, c->vocab, c->seq, c->swiglu ? " swiglu" : "");
  return buf;
}

/* ---- keys ---- */

typedef enum { K_COUNT, K_COUNT64, K_BOOL, K_BYTES, K_DTYPE, K_ZERO, K_RECOMPUTE, K_SCHEDULE, K_PREFETCH, K_NAME } key_type;

typedef struct key_spec {
  const char *key;
  const char *section; /* workload file section: model, training, parallel */
  key_type type;
  size_t offset;
  long lo; /* smallest accepted count */
} key_spec;

#define F(field) offsetof(dt_gen_config, field)
static const key_spec keys[] = {
    {"name", "model", K_NAME, F(name), 0},
    {"layers", "model", K_COUNT, F(layers), 1},
    {"hidden", "model", K_COUNT, F(hidden), 1},
    {"heads", "model", K_COUNT, F(heads), 1},
    {"kv_heads", "model", K_COUNT, F(kv_heads), 1},
    {"ffn", "model", K_COUNT, F(ffn), 1},
    {"vocab", "model", K_COUNT, F(vocab), 1},
    {"seq", "model", K_COUNT, F(seq), 1},
    {"swiglu", "model", K_BOOL, F(swiglu), 0},
    {"tied_embeddings", "model", K_BOOL, F(tied_embeddings), 0},
    {"experts", "model", K_COUNT, F(experts), 0},
    {"top_k", "model", K_COUNT, F(top_k), 1},
    {"microbatch", "training", K_COUNT, F(microbatch), 1},
    {"global_batch", "training", K_COUNT64, F(global_batch), 1},
    {"dtype", "training", K_DTYPE, 0, 0},
    {"tp", "parallel", K_COUNT, F(tp), 1},
    {"pp", "parallel", K_COUNT, F(pp), 1},
    {"dp", "parallel", K_COUNT, F(dp), 1},
    {"zero", "parallel", K_ZERO, F(zero), 0},
    {"sp", "parallel", K_BOOL, F(sp), 0},
    {"recompute", "parallel", K_RECOMPUTE, F(recompute), 0},
    {"schedule", "parallel", K_SCHEDULE, F(schedule), 0},
    {"virtual_stages", "parallel", K_COUNT, F(virtual_stages), 1},
    {"bucket", "parallel", K_BYTES, F(bucket_bytes), 0},
    {"dp_overlap", "parallel", K_BOOL, F(dp_overlap), 0},
    {"ep", "parallel", K_COUNT, F(ep), 1},
    {"cp", "parallel", K_COUNT, F(cp), 1},
    {"flash_attention", "training", K_BOOL, F(flash_attention), 0},
    {"embed_as_layers", "parallel", K_BOOL, F(embed_as_layers), 0},
    {"tp_overlap", "parallel", K_BOOL, F(tp_overlap), 0},
    {"p2p_overlap", "parallel", K_BOOL, F(p2p_overlap), 0},
    {"overlap_param_gather", "parallel", K_BOOL, F(overlap_param_gather), 0},
    {"param_gather_prefetch", "parallel", K_PREFETCH, F(param_gather_chunk), 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Workload file sections; their positions follow the keys' in dt_gen_config.pos. */
static const char *const sections[] = {"preset", "model", "training", "parallel"};
#define NSECTIONS (sizeof sections / sizeof sections[0])
_Static_assert(NKEYS + NSECTIONS <= DT_GEN_MAX_KEYS, "dt_gen_config.pos holds every key and section");

static const key_spec *find_key(const char *key)
{
  for (size_t i = 0; i < NKEYS; i++)
    if (strcmp(keys[i].key, key) == 0)
      return &keys[i];
  return NULL;
}

/* Index of a key or section in dt_gen_config.pos, -1 for neither. */
static int pos_index(const char *name)
{
  const key_spec *k = find_key(name);
  if (k)
    return (int)(k - keys);
  for (size_t i = 0; i < NSECTIONS; i++)
    if (strcmp(sections[i], name) == 0)
      return (int)(NKEYS + i);
  return -1;
}

static void set_pos(dt_gen_config *c, const char *key, int32_t line, int32_t col)
{
  int i = pos_index(key);
  if (i >= 0)
    c->pos[i] = (dt_gen_pos){line, col};
}

int dt_gen_key_pos(const dt_gen_config *c, const char *key, long *line, long *col)
{
  int i = pos_index(key);
  if (i < 0 || c->pos[i].line <= 0 || !c->source[0])
    return 0;
  *line = c->pos[i].line;
  *col = c->pos[i].col;
  return 1;
}

int dt_gen_is_key(const char *key)
{
  return find_key(key) != NULL;
}

int dt_gen_key_numeric(const char *key)
{
  const key_spec *ks = find_key(key);
  return ks && (ks->type == K_COUNT || ks->type == K_COUNT64 || ks->type == K_BOOL); /* as walk_section refuses */
}

size_t dt_gen_key_count(void)
{
  return NKEYS;
}

const char *dt_gen_key_name(size_t i)
{
  return i < NKEYS ? keys[i].key : NULL;
}

/* Largest accepted counts: 32-bit keys stay far below INT32_MAX so products of a few fit 64 bits; the global batch
 * is 64-bit. */
#define COUNT_MAX 100000000LL
#define COUNT64_MAX (1LL << 50)

static int parse_count(const char *v, long lo, long long hi, long long *out)
{
  if (!*v || !isdigit((unsigned char)*v))
    return -1;
  errno = 0;
  char *end;
  long long x = strtoll(v, &end, 10);
  if (errno || *end || x < lo || x > hi)
    return -1;
  *out = x;
  return 0;
}

/* true or false: one spelling of a boolean, as platform files take them (yes, on, 1 ... are errors). */
static int parse_bool(const char *v, int *out)
{
  if (strcmp(v, "true") == 0)
    return *out = 1, 0;
  if (strcmp(v, "false") == 0)
    return *out = 0, 0;
  return -1;
}

/* "25M", "512K" (powers of 1024, as `dtsim bench` and nccl-tests), "80MB" (powers of 1000), "64MiB", "1048576"
 * into bytes (rounded to the nearest); "default" into -1. The number is a plain decimal (no hex: "0x10M" was 16
 * MiB). Returns -1 when v is not a size, -2 when it is above DT_BYTES_MAX (a bucket is one all-reduce, at most what
 * one op may move), -3 when it is nonzero but below half a byte (it would read as 0). */
static int parse_size(const char *v, int64_t *out)
{
  static const struct {
    const char *unit;
    double mult;
  } units[] = {{"", 1},
               {"B", 1},
               {"K", 1024.0},
               {"k", 1024.0},
               {"M", 1048576.0},
               {"m", 1048576.0},
               {"G", 1073741824.0},
               {"g", 1073741824.0},
               {"T", 1099511627776.0},
               {"t", 1099511627776.0},
               {"kB", 1e3},
               {"KB", 1e3},
               {"MB", 1e6},
               {"GB", 1e9},
               {"TB", 1e12},
               {"KiB", 1024.0},
               {"MiB", 1048576.0},
               {"GiB", 1073741824.0},
               {"TiB", 1099511627776.0}};
  if (strcmp(v, "default") == 0)
    return *out = -1, 0;
  if (!isdigit((unsigned char)*v))
    return -1;
  size_t n = strspn(v, "0123456789.eE+-");
  char num[64];
  double x;
  if (n >= sizeof num)
    return -2; /* 64 digits: far above any size */
  memcpy(num, v, n);
  num[n] = '\0';
  int rc = dt_parse_real(num, &x);
  if (rc == -2)
    return -3;
  if (rc != 0 || x < 0)
    return -1;
  const char *end = v + n;
  while (*end == ' ')
    end++;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(end, units[i].unit) == 0) {
      double b = x * units[i].mult; /* infinite past a double's range */
      if (!(b <= (double)DT_BYTES_MAX))
        return -2;
      if (b < 0.5 && x != 0)
        return -3;
      *out = (int64_t)(b + 0.5);
      return 0;
    }
  return -1;
}

/* What depends on a model key changing to v (before it is stored): a new hidden size rescales an FFN of 4h
 * (GPT presets) unless ffn was given; new heads keep the attention kind unless kv_heads was given (multi-head
 * stays multi-head; grouped-query keeps its heads per KV head). Giving ffn or kv_heads marks them given. */
static void derive(dt_gen_config *c, const char *key, int32_t v)
{
  if (strcmp(key, "ffn") == 0) {
    c->given |= DT_GEN_GIVEN_FFN;
  } else if (strcmp(key, "kv_heads") == 0) {
    c->given |= DT_GEN_GIVEN_KV;
  } else if (strcmp(key, "hidden") == 0) {
    if (!(c->given & DT_GEN_GIVEN_FFN) && c->hidden > 0 && c->ffn == 4 * c->hidden && v <= INT32_MAX / 4)
      c->ffn = 4 * v;
  } else if (strcmp(key, "heads") == 0) {
    if (!(c->given & DT_GEN_GIVEN_KV) && c->heads > 0 && c->kv_heads > 0) {
      if (c->kv_heads == c->heads)
        c->kv_heads = v;
      else if (c->heads % c->kv_heads == 0 && v % (c->heads / c->kv_heads) == 0)
        c->kv_heads = v / (c->heads / c->kv_heads);
    }
  }
}

int dt_gen_set(dt_gen_config *c, const char *key, const char *value, dt_error *err)
{
  const key_spec *k = find_key(key);
  if (!k) {
    const char *names[NKEYS];
    for (size_t i = 0; i < NKEYS; i++)
      names[i] = keys[i].key;
    const char *near = dt_nearest_word(key, names, NKEYS);
    if (near)
      return dt_error_set(err, "", 0, 0, "unknown key '%s' (did you mean '%s'?)", key, near);
    return dt_error_set(err, "", 0, 0, "unknown key '%s'", key);
  }
  set_pos(c, key, 0, 0); /* a workload file sets it again after this call */
  char *field = (char *)c + k->offset;
  long long n;
  int b;
  switch (k->type) {
  case K_NAME:
    if (!*value)
      return dt_error_set(err, "", 0, 0, "'%s' expects a non-empty name", key);
    snprintf(c->name, sizeof c->name, "%s", value);
    return DT_OK;
  case K_COUNT:
  case K_ZERO:
    if (parse_count(value, k->lo, k->type == K_ZERO ? 3 : COUNT_MAX, &n) != 0) {
      if (k->type == K_ZERO)
        return dt_error_set(err, "", 0, 0, "'%s' expects a ZeRO stage 0-3, found '%s'", key, value);
      return dt_error_set(err, "", 0, 0, "'%s' expects a whole number from %ld to %lld, found '%s'", key, k->lo,
                          COUNT_MAX, value);
    }
    if (k->type == K_ZERO) {
      *(int *)field = (int)n;
      return DT_OK;
    }
    derive(c, key, (int32_t)n);
    *(int32_t *)field = (int32_t)n;
    return DT_OK;
  case K_COUNT64:
    if (parse_count(value, k->lo, COUNT64_MAX, &n) != 0)
      return dt_error_set(err, "", 0, 0, "'%s' expects a whole number from %ld to %lld, found '%s'", key, k->lo,
                          COUNT64_MAX, value);
    *(int64_t *)field = n;
    return DT_OK;
  case K_BOOL:
    if (parse_bool(value, &b) != 0)
      return dt_error_set(err, "", 0, 0, "'%s' expects true or false, found '%s'", key, value);
    *(int *)field = b;
    return DT_OK;
  case K_BYTES: {
    int64_t x;
    int rc = parse_size(value, &x);
    if (rc == -2)
      return dt_error_set(err, "", 0, 0, "'%s' is out of range: at most 2^53 bytes (%llu, what one op may move), "
                          "found '%s'", key, (unsigned long long)DT_BYTES_MAX, value);
    if (rc == -3)
      return dt_error_set(err, "", 0, 0, "'%s' is out of range: a nonzero size is at least 1 byte (write 0 for "
                          "none), found '%s'", key, value);
    if (rc != 0)
      return dt_error_set(err, "", 0, 0,
                          "'%s' expects a size such as 25M or 512K (K, M, G, T are powers of 1024), 80MB (powers of "
                          "1000), 64MiB, 1048576 or 'default', found '%s'",
                          key, value);
    *(int64_t *)field = x;
    return DT_OK;
  }
  case K_DTYPE:
    if (strcmp(value, "bf16") == 0 || strcmp(value, "fp16") == 0 || strcmp(value, "fp8") == 0)
      c->elem_bytes = 2; /* fp8: GEMM inputs in FP8, activations, gradients and communication in bf16 */
    else if (strcmp(value, "fp32") == 0)
      c->elem_bytes = 4;
    else
      return dt_error_set(err, "", 0, 0, "'dtype' expects bf16, fp16, fp8 or fp32, found '%s'", value);
    snprintf(c->dtype, sizeof c->dtype, "%s", value);
    return DT_OK;
  case K_RECOMPUTE:
    if (strcmp(value, "none") == 0)
      c->recompute = DT_RECOMPUTE_NONE;
    else if (strcmp(value, "full") == 0)
      c->recompute = DT_RECOMPUTE_FULL;
    else if (strcmp(value, "selective") == 0)
      c->recompute = DT_RECOMPUTE_SELECTIVE;
    else
      return dt_error_set(err, "", 0, 0, "'recompute' expects none, full or selective, found '%s'", value);
    return DT_OK;
  case K_SCHEDULE:
    if (strcmp(value, "1f1b") == 0)
      c->schedule = DT_SCHEDULE_1F1B;
    else if (strcmp(value, "interleaved") == 0)
      c->schedule = DT_SCHEDULE_INTERLEAVED;
    else
      return dt_error_set(err, "", 0, 0, "'schedule' expects 1f1b or interleaved, found '%s'", value);
    return DT_OK;
  case K_PREFETCH:
    if (strcmp(value, "bucket") == 0)
      c->param_gather_chunk = 0;
    else if (strcmp(value, "chunk") == 0)
      c->param_gather_chunk = 1;
    else
      return dt_error_set(err, "", 0, 0, "'param_gather_prefetch' expects bucket or chunk, found '%s'", value);
    return DT_OK;
  }
  return DT_ERR;
}

int dt_gen_value_canon(const char *key, const char *value, char *canon, size_t size)
{
  const key_spec *k = find_key(key);
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error e;
  dt_error_clear(&e);
  if (!k || dt_gen_set(&c, key, value, &e) != DT_OK)
    return -1;
  const char *field = (const char *)&c + k->offset;
  switch (k->type) {
  case K_COUNT:
    snprintf(canon, size, "%ld", (long)*(const int32_t *)field);
    break;
  case K_ZERO:
  case K_BOOL:
    snprintf(canon, size, "%d", *(const int *)field);
    break;
  case K_COUNT64:
    snprintf(canon, size, "%lld", (long long)*(const int64_t *)field);
    break;
  case K_BYTES:
    snprintf(canon, size, "%lld bytes", (long long)*(const int64_t *)field);
    break;
  default: /* names and words: as written */
    snprintf(canon, size, "%s", value);
    break;
  }
  return 0;
}

/* ---- checks ---- */

int64_t dt_gen_world(const dt_gen_config *c)
{
  return (int64_t)c->tp * c->pp * c->dp * (c->cp > 0 ? c->cp : 1);
}

int64_t dt_gen_microbatches(const dt_gen_config *c)
{
  int64_t per = (int64_t)c->microbatch * c->dp;
  return per > 0 ? c->global_batch / per : 0;
}

int32_t dt_gen_rank(const dt_gen_config *c, int32_t pp_index, int32_t dp_index, int32_t tp_index)
{
  return pp_index * (c->tp * c->dp * (c->cp > 0 ? c->cp : 1)) + dp_index * c->tp + tp_index;
}

/* A rejection at the workload-file position of the first of `involved` (space-separated keys, the culprit
 * first) that a file set; without one, at the file alone when whole_file, else without a position. */
static int reject(dt_error *err, const dt_gen_config *c, const char *involved, int whole_file, const char *fmt, ...)
    DT_PRINTF(5, 6);
static int reject(dt_error *err, const dt_gen_config *c, const char *involved, int whole_file, const char *fmt, ...)
{
  const char *file = whole_file ? c->source : "";
  long line = 0, col = 0;
  char key[32];
  for (const char *p = involved; *p;) {
    size_t n = strcspn(p, " ");
    snprintf(key, sizeof key, "%.*s", (int)n, p);
    if (dt_gen_key_pos(c, key, &line, &col)) {
      file = c->source;
      break;
    }
    p += n;
    while (*p == ' ')
      p++;
  }
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(err, file, line, col, fmt, ap);
  va_end(ap);
  return DT_ERR;
}

/* Appends one note line (with the file position of key when it came from a file) to note. */
static void add_note(const dt_gen_config *c, const char *key, char *note, size_t note_size, const char *text)
{
  long line, col;
  char at[600] = "";
  if (dt_gen_key_pos(c, key, &line, &col))
    snprintf(at, sizeof at, "%s:%ld:%ld: ", c->source, line, col);
  size_t used = strlen(note);
  if (used < note_size)
    snprintf(note + used, note_size - used, "%s%s%s", used ? "\n" : "", at, text);
}

int dt_gen_resolve(dt_gen_config *c, char *note, size_t note_size)
{
  if (note_size)
    note[0] = '\0';
  int n = 0;
  if (c->sp && c->tp == 1) {
    add_note(c, "sp", note, note_size, "sequence parallelism turned off: tp is 1 (Megatron-LM does the same)");
    c->sp = 0;
    set_pos(c, "sp", 0, 0);
    n++;
  }
  /* with one stage there are no pipeline sends: the trace is the same, say so */
  if (c->p2p_overlap && c->pp == 1) {
    add_note(c, "p2p_overlap", note, note_size, "p2p_overlap has no effect: pp is 1 (no pipeline sends)");
    n++;
  }
  return n;
}

int dt_gen_validate(const dt_gen_config *c, int64_t gpus, dt_error *err)
{
  static const char *const model_keys[] = {"layers", "hidden", "heads", "ffn", "seq", "vocab"};
  const int32_t model_vals[] = {c->layers, c->hidden, c->heads, c->ffn, c->seq, c->vocab};
  char missing[96] = "";
  size_t nmissing = 0;
  for (size_t i = 0; i < 6; i++)
    if (model_vals[i] < 1) {
      size_t len = strlen(missing);
      snprintf(missing + len, sizeof missing - len, "%s%s", nmissing++ ? ", " : "", model_keys[i]);
    }
  if (nmissing)
    return reject(err, c, "model preset", 1,
                  "no model: %s %s not set (give a preset or all of layers, hidden, heads, "
                  "ffn, seq and vocab)",
                  missing, nmissing > 1 ? "are" : "is");
  int32_t kv = c->kv_heads > 0 ? c->kv_heads : c->heads;
  if (c->hidden % c->heads)
    return reject(err, c, "heads hidden", 0, "heads (%d) does not divide hidden (%d)", c->heads, c->hidden);
  if (c->heads % kv)
    return reject(err, c, "kv_heads heads", 0, "kv_heads (%d) does not divide heads (%d)", kv, c->heads);
  if (c->heads % c->tp)
    return reject(err, c, "tp heads", 0, "tensor parallel size %d does not divide the %d attention heads", c->tp,
                  c->heads);
  if (kv % c->tp)
    return reject(err, c, "tp kv_heads", 0, "tensor parallel size %d does not divide the %d key/value heads", c->tp,
                  kv);
  if (c->ffn % c->tp)
    return reject(err, c, "tp ffn", 0, "tensor parallel size %d does not divide the FFN size %d", c->tp, c->ffn);
  if (c->schedule == DT_SCHEDULE_INTERLEAVED && c->virtual_stages < 2)
    return reject(err, c, "schedule virtual_stages", 0,
                  "the interleaved schedule needs --virtual-stages of at least 2");
  if (c->schedule == DT_SCHEDULE_1F1B && c->virtual_stages != 1)
    return reject(err, c, "virtual_stages schedule", 0,
                  "%d virtual stages need the interleaved schedule (--schedule interleaved)", c->virtual_stages);
  if (c->schedule == DT_SCHEDULE_INTERLEAVED && c->pp < 2)
    return reject(err, c, "schedule pp", 0, "the interleaved schedule needs pipeline parallelism (pp >= 2)");
  int64_t chunks = (int64_t)c->pp * c->virtual_stages;
  if (c->embed_as_layers && (c->virtual_stages != 1 || c->pp < 2 || (c->layers + 2) % c->pp))
    return reject(err, c, "embed_as_layers pp layers", 0,
                  "embed_as_layers (DeepSpeed's transformer|embedding partition) needs the 1F1B schedule and pp (%d) "
                  "dividing the %d layers + 2",
                  c->pp, c->layers);
  if (c->layers % chunks && !c->embed_as_layers) {
    if (c->virtual_stages > 1)
      return reject(err, c, "pp virtual_stages layers", 0,
                    "pp (%d) x virtual stages (%d) = %lld does not divide the %d layers", c->pp, c->virtual_stages,
                    (long long)chunks, c->layers);
    return reject(err, c, "pp layers", 0, "pipeline parallel size %d does not divide the %d layers", c->pp, c->layers);
  }
  if (c->cp > 1 && c->seq % (2 * c->cp))
    return reject(err, c, "cp seq", 0,
                  "context parallelism needs 2 x cp (%d) to divide the sequence length %d (Megatron splits it into "
                  "2 cp chunks for causal load balance)",
                  2 * c->cp, c->seq);
  if (c->cp > 1 && c->experts > 0)
    return reject(err, c, "cp experts", 0, "context parallelism with MoE experts is not modelled yet");
  if (c->seq % c->tp && c->sp)
    return reject(err, c, "sp tp seq", 0, "sequence parallelism needs tp (%d) to divide the sequence length %d", c->tp,
                  c->seq);
  if (c->global_batch < 1)
    return reject(err, c, "training preset", 1, "no global batch: give --global-batch");
  int64_t per = (int64_t)c->microbatch * c->dp;
  if (c->global_batch % per)
    return reject(err, c, "global_batch microbatch dp", 0,
                  "global batch %lld is not a multiple of micro-batch %d x data parallel size %d = %lld",
                  (long long)c->global_batch, c->microbatch, c->dp, (long long)per);
  int64_t m = c->global_batch / per;
  if (c->schedule == DT_SCHEDULE_INTERLEAVED && m % c->pp)
    return reject(err, c, "schedule global_batch pp", 0,
                  "the interleaved schedule needs the %lld micro-batches per pipeline to be a multiple of pp (%d)",
                  (long long)m, c->pp);
  if (m > 1000000)
    return reject(err, c, "global_batch microbatch dp", 0,
                  "%lld micro-batches per pipeline is too many (at most 1000000)", (long long)m);
  if (c->zero >= 2 && c->pp > 1)
    return reject(err, c, "zero pp", 0,
                  "ZeRO stage %d with pipeline parallelism (pp %d) is not supported (DeepSpeed refuses it; use "
                  "ZeRO-1, Megatron's distributed optimizer)",
                  c->zero, c->pp);
  /* as overlap_param_gather without ZeRO-1 below, and as Megatron-LM's arguments.py asserts (tp_comm_overlap needs
   * sequence_parallel); it was a silent change of trace: the TP all-reduces moved to s2, each waited by the next op */
  if (c->tp_overlap && !c->sp)
    return reject(err, c, "tp_overlap sp tp", 0,
                  "tp_overlap needs sp: it overlaps sequence parallelism's all-gathers and reduce-scatters with their "
                  "GEMMs (%s)", c->tp == 1 ? "sp is off: tp is 1" : "give --sp, or sp: true under parallel");
  if (c->overlap_param_gather && c->zero != 1)
    return reject(err, c, "overlap_param_gather zero", 0,
                  "overlap_param_gather needs ZeRO stage 1, Megatron's distributed optimizer (found zero %d; "
                  "Megatron-LM's arguments.py: '--overlap-param-gather only supported with distributed optimizer')",
                  c->zero);
  if (c->experts > 0) {
    if (c->top_k < 1 || c->top_k > c->experts)
      return reject(err, c, "top_k experts", 0, "top_k (%d) must be between 1 and the %d experts", c->top_k,
                    c->experts);
    if (c->experts % c->ep)
      return reject(err, c, "ep experts", 0, "expert parallel size %d does not divide the %d experts", c->ep,
                    c->experts);
  }
  if (c->ep > 1 && c->experts == 0)
    return reject(err, c, "ep", 0, "expert parallelism (ep %d) needs MoE experts (--experts)", c->ep);
  if (c->dp % c->ep)
    return reject(err, c, "ep dp", 0, "expert parallel size %d does not divide the data parallel size %d", c->ep,
                  c->dp);
  int64_t world = dt_gen_world(c);
  if (world > INT32_MAX / 2)
    return reject(err, c, "tp pp dp", 0, "world size tp x pp x dp = %lld is too large", (long long)world);
  if (gpus > 0 && world > gpus) {
    if (c->cp > 1)
      return reject(err, c, "tp pp dp cp", 0,
                    "world size tp %d x cp %d x pp %d x dp %d = %lld needs more GPUs than the platform's %lld", c->tp,
                    c->cp, c->pp, c->dp, (long long)world, (long long)gpus);
    return reject(err, c, "tp pp dp", 0,
                  "world size tp %d x pp %d x dp %d = %lld needs more GPUs than the platform's %lld", c->tp, c->pp,
                  c->dp, (long long)world, (long long)gpus);
  }
  return DT_OK;
}

/* ---- workload YAML ---- */

static int yaml_fail(dt_error *err, const char *file, const yaml_node_t *n, const char *fmt, const char *a,
                     const char *b)
{
  return dt_error_set(err, file, n ? (long)n->start_mark.line + 1 : 0, n ? (long)n->start_mark.column + 1 : 0, fmt,
                      a, b ? b : "");
}

/* Puts a position-less message from dt_gen_set / dt_gen_preset at node n. */
static int at_node(dt_error *err, const char *file, const yaml_node_t *n)
{
  if (!err)
    return DT_ERR;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%s", err->msg);
  return dt_error_set(err, file, (long)n->start_mark.line + 1, (long)n->start_mark.column + 1, "%s", msg);
}

static const char *scalar(const yaml_node_t *n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int32_t line_of(const yaml_node_t *n)
{
  return (int32_t)n->start_mark.line + 1;
}

static int32_t col_of(const yaml_node_t *n)
{
  return (int32_t)n->start_mark.column + 1;
}

/* The key node of an earlier pair of map with the same name as pair pr's key, NULL when there is none. libyaml's
 * document loader keeps repeated keys, so `{tp: 2, tp: 4}` would silently take the last. */
static yaml_node_t *earlier_key(yaml_document_t *doc, yaml_node_t *map, yaml_node_pair_t *pr)
{
  const char *k = scalar(yaml_document_get_node(doc, pr->key));
  for (yaml_node_pair_t *q = map->data.mapping.pairs.start; k && q < pr; q++) {
    yaml_node_t *qn = yaml_document_get_node(doc, q->key);
    if (scalar(qn) && strcmp(scalar(qn), k) == 0)
      return qn;
  }
  return NULL;
}

static int duplicate(dt_error *err, const char *file, const yaml_node_t *kn, const yaml_node_t *first,
                     const char *where)
{
  return dt_error_set(err, file, line_of(kn), col_of(kn), "duplicate key '%s' %s (first given at line %ld)", scalar(kn),
                      where, (long)line_of(first));
}

static int walk_section(yaml_document_t *doc, yaml_node_t *map, const char *section, const char *file,
                        dt_gen_config *c, dt_error *err)
{
  if (map->type != YAML_MAPPING_NODE)
    return yaml_fail(err, file, map, "'%s' must be a mapping of keys%s", section, NULL);
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *kn = yaml_document_get_node(doc, pr->key), *vn = yaml_document_get_node(doc, pr->value);
    const char *k = scalar(kn);
    const key_spec *ks = k ? find_key(k) : NULL;
    if (!ks || strcmp(ks->section, section) != 0) {
      const char *names[NKEYS];
      size_t n = 0;
      for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0)
          names[n++] = keys[i].key;
      const char *near = k ? dt_nearest_word(k, names, n) : NULL;
      if (ks)
        return dt_error_set(err, file, line_of(kn), col_of(kn), "key '%s' belongs in section '%s', not '%s'", k,
                            ks->section, section);
      if (near)
        return dt_error_set(err, file, line_of(kn), col_of(kn), "unknown key '%s' in '%s' (did you mean '%s'?)",
                            k ? k : "?", section, near);
      char list[1024] = "";
      for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                 names[i]);
      return dt_error_set(err, file, kn ? line_of(kn) : 0, kn ? col_of(kn) : 0, "unknown key '%s' in '%s' (expected %s)",
                          k ? k : "?", section, list);
    }
    const yaml_node_t *first = earlier_key(doc, map, pr);
    if (first) {
      char where[64];
      snprintf(where, sizeof where, "in '%s'", section);
      return duplicate(err, file, kn, first, where);
    }
    const char *v = scalar(vn);
    if (!v)
      return yaml_fail(err, file, vn, "'%s' expects a value, not a list or mapping%s", k, NULL);
    char tagbuf[160];
    const char *not_plain = dt_yaml_not_plain(vn, tagbuf, sizeof tagbuf);
    if (not_plain == tagbuf || (not_plain && (ks->type == K_COUNT || ks->type == K_COUNT64 || ks->type == K_BOOL)))
      return dt_error_set(err, file, line_of(vn), col_of(vn), "'%s' expects %s, found %s '%s' (%s)", k,
                          ks->type == K_BOOL ? "true or false" : ks->type == K_NAME ? "a name" : "a whole number",
                          not_plain, v,
                          not_plain == tagbuf ? "workload files use no YAML tags"
                                              : "numbers and booleans are written unquoted, as 'tp: 8'");
    if (dt_gen_set(c, k, v, err) != DT_OK)
      return at_node(err, file, vn);
    set_pos(c, k, line_of(kn), col_of(kn));
  }
  return DT_OK;
}

int dt_gen_parse_yaml(const char *text, size_t len, const char *source_name, dt_gen_config *c, dt_error *err)
{
  static const char *const top[] = {"dtsim_workload", "preset", "model", "training", "parallel"};
  yaml_parser_t parser;
  yaml_document_t doc;
  int rc = DT_ERR, have_doc = 0, have_version = 0;
  if (dt_yaml_check(text, len, source_name, err) != DT_OK)
    return DT_ERR;
  if (!yaml_parser_initialize(&parser))
    return dt_error_set(err, source_name, 0, 0, "cannot initialise the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &doc)) {
    dt_error_set(err, source_name, (long)parser.problem_mark.line + 1, (long)parser.problem_mark.column + 1,
                 "YAML syntax error: %s", parser.problem ? parser.problem : "unknown problem");
    goto done;
  }
  have_doc = 1;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    yaml_fail(err, source_name, root, "a workload file is a mapping with 'dtsim_workload: 1' at the top%s%s", "",
              NULL);
    goto done;
  }
  snprintf(c->source, sizeof c->source, "%s", source_name);
  /* pass 0: known and unrepeated top-level keys, the version and the preset (first, whatever its position, so
   * that the other keys override it); pass 1: the sections */
  for (int pass = 0; pass < 2; pass++)
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
      yaml_node_t *kn = yaml_document_get_node(&doc, pr->key), *vn = yaml_document_get_node(&doc, pr->value);
      const char *k = scalar(kn);
      size_t which = 0;
      while (which < 5 && (!k || strcmp(k, top[which]) != 0))
        which++;
      if (which == 5) {
        const char *near = k ? dt_nearest_word(k, top, 5) : NULL;
        if (near)
          dt_error_set(err, source_name, line_of(kn), col_of(kn), "unknown key '%s' (did you mean '%s'?)", k ? k : "?",
                       near);
        else
          dt_error_set(err, source_name, line_of(kn), col_of(kn),
                       "unknown key '%s' (known: dtsim_workload, preset, model, training, parallel)", k ? k : "?");
        goto done;
      }
      const yaml_node_t *first = pass == 0 ? earlier_key(&doc, root, pr) : NULL;
      if (first) {
        duplicate(err, source_name, kn, first, "at the top level");
        goto done;
      }
      if (pass == 0 && which >= 1)
        set_pos(c, top[which], line_of(kn), col_of(kn));
      if (pass == 0 && which == 1) {
        if (!scalar(vn) || dt_gen_preset(scalar(vn), c, err) != DT_OK) {
          if (!scalar(vn))
            dt_error_set(err, "", 0, 0, "'preset' expects a preset name");
          at_node(err, source_name, vn);
          goto done;
        }
        for (size_t i = 0; i < NPRESET_KEYS; i++)
          set_pos(c, preset_keys[i], line_of(kn), col_of(kn));
      } else if (pass == 0 && which == 0) {
        if (!scalar(vn) || strcmp(scalar(vn), "1") != 0) {
          yaml_fail(err, source_name, vn, "unsupported workload version '%s': this dtsim reads 'dtsim_workload: 1'%s",
                    scalar(vn) ? scalar(vn) : "?", NULL);
          goto done;
        }
        have_version = 1;
      } else if (pass == 1 && which >= 2) {
        if (walk_section(&doc, vn, top[which], source_name, c, err) != DT_OK)
          goto done;
      }
    }
  if (!have_version) {
    dt_error_set(err, source_name, 1, 1, "missing 'dtsim_workload: 1' (the workload schema version)");
    goto done;
  }
  rc = DT_OK;
done:
  if (have_doc)
    yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  return rc;
}

int dt_gen_load_yaml(const char *path, dt_gen_config *c, dt_error *err)
{
  dt_phase("reading the workload %s", path);
  char *buf;
  size_t len;
  if (dt_read_config(path, "workload file", &buf, &len, err) != DT_OK)
    return DT_ERR;
  int rc = dt_gen_parse_yaml(buf, len, path, c, err);
  free(buf);
  return rc;
}
