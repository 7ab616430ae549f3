/* The trace model (DESIGN.md §4): per global rank, a set of streams of ops; communicators (groups) list
 * their global ranks. Built by the native reader, the importers and (later) the generator through the
 * dt_trace_* builder calls, then validated once (dt_trace_validate) before replay. After validation the
 * struct is read-only; consumers may read the fields directly. */
#ifndef DT_TRACE_H
#define DT_TRACE_H

#include "../common/dt_error.h"
#include "../common/dt_strtab.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
  DT_OP_COMPUTE = 0,
  DT_OP_ALLREDUCE,
  DT_OP_REDUCESCATTER,
  DT_OP_BROADCAST,
  DT_OP_REDUCE,
  DT_OP_ALLGATHER,
  DT_OP_ALLTOALL,
  DT_OP_BARRIER,
  DT_OP_SEND,
  DT_OP_RECV,
  DT_OP_MARK,
  DT_OP_DELAY,
  DT_OP_OTHER,
  DT_OP_COUNT
} dt_op_kind;

/* Native op name ("allreduce", "send", ...) of a kind; NULL for an out-of-range value. */
const char *dt_op_kind_name(dt_op_kind kind);
/* Kind of a native op name; returns DT_OK or DT_ERR for an unknown name. */
int dt_op_kind_from_name(const char *name, dt_op_kind *kind);
/* Whether a kind is a collective (runs on a group, matched by issue order): allreduce, reducescatter,
 * broadcast, reduce, allgather, alltoall, barrier, other. */
int dt_op_is_collective(dt_op_kind kind);

/* An `after=` edge: wait for op `index` (0-based position within that stream) of stream `stream`
 * (the stream's position in the rank's streams[] array, not its sN number) of the same rank. */
typedef struct dt_dep {
  int32_t stream;
  int32_t index;
} dt_dep;

/* Number formats a compute kernel runs in (`--dtype`, the platform's per-dtype peaks). */
typedef enum { DT_DTYPE_BF16 = 0, DT_DTYPE_FP16, DT_DTYPE_FP8, DT_DTYPE_FP32, DT_DTYPE_COUNT } dt_dtype;
/* "bf16", "fp16", "fp8", "fp32" (static), NULL out of range; and back: -1 for an unknown name. */
const char *dt_dtype_name(dt_dtype d);
int dt_dtype_from_name(const char *name);

/* One kernel of a compute op's shape (docs/compute.md): what the compute model (platforms/dt_compute.h) times.
 *   GEMM: C[m x n] = A[m x k] B[k x n], `batch` independent products of that shape (batched GEMM).
 *   ATTN: fused (flash) attention, `batch` = micro-batch x heads on this rank, m = query length, n = key length,
 *         k = head dimension; `causal` skips the masked half; `bwd` marks a backward kernel (recomputes the
 *         scores: 5 products of the forward's 2, FlashAttention-2 §3.1.2).
 *   ELEM: element-wise / norm work bound by memory traffic only.
 * flop is this kernel's FLOP as counted in the op's flop= (GEMM 2 m n k batch; ATTN 4 m n k batch, x2 in the
 * backward; ELEM 0); bytes the HBM traffic it moves (reads + writes). */
typedef enum { DT_KERN_GEMM = 0, DT_KERN_ATTN, DT_KERN_ELEM, DT_KERN_COUNT } dt_kernel_kind;
typedef struct dt_kernel {
  uint8_t kind;   /* dt_kernel_kind */
  uint8_t dtype;  /* dt_dtype of the inputs (GEMM: fp8 under --dtype fp8; ATTN, ELEM: the activation dtype) */
  uint8_t causal; /* ATTN: causal mask */
  uint8_t bwd;    /* ATTN: backward kernel */
  int64_t m, n, k, batch;
  double flop;    /* FLOP */
  double bytes;   /* bytes of HBM traffic */
} dt_kernel;
/* Name of a kernel kind ("gemm", "attn", "elem"; static), NULL out of range. */
const char *dt_kernel_kind_name(dt_kernel_kind k);

typedef struct dt_op {
  dt_op_kind kind;
  int32_t group;     /* index in trace->groups for collectives, else -1 */
  int32_t peer;      /* global peer rank for send/recv, else -1 */
  int32_t root;      /* group-local root for broadcast/reduce (default 0) */
  int64_t tag;       /* send/recv tag (default 0) */
  uint64_t bytes;    /* per-rank input bytes (DESIGN.md §4 conventions per op) */
  double dur;        /* s: compute `dur=` / delay; 0 when compute is given in flop */
  double flop;       /* FLOP: compute `flop=` (0 when dur= is used) */
  int64_t batch;     /* `batch=` id, -1 when none */
  uint32_t ndeps;
  dt_dep *deps;      /* owned, ndeps entries */
  uint32_t nsplits;
  uint64_t *splits;  /* alltoall `splits=`: bytes to each member in group order, owned; NULL when absent */
  char *name;        /* `name=`, owned, may be NULL */
  char *dtype;       /* `dtype=`, owned, may be NULL */
  uint32_t nkernels;
  dt_kernel *kernels; /* compute `kernels=`: the op's shape, owned, NULL when absent (the op is then timed as
                         flop / (peak x efficiency), docs/compute.md) */
  uint32_t file;     /* index in trace->files of the file it came from */
  uint32_t line;     /* 1-based line in that file (0 when generated). Ops imported from a capture that is not
                        line-based (Kineto JSON) carry an issue-order sequence number here, not a position: their
                        position is `event` */
  uint32_t event;    /* imported captures: 1 + the index of the source event in the file's event list (Kineto
                        traceEvents[event - 1]); 0 for ops read from lines or generated */
  int64_t match;     /* set by dt_trace_validate: a per-rank sequence number, the same for every rank that runs
                        this op (template users share it). Collectives: k when this is the k-th (0-based)
                        collective the rank issues on its group in issue order (dt_trace_rank_order), so the
                        instance is (the rank's group, k). Send (recv): k when this is the rank's k-th send to
                        (recv from) the same peer offset (peer - rank) mod nranks with the same tag, so the pair
                        is (src, dst, tag, k). -1 for other ops */
} dt_op;

typedef struct dt_stream {
  int32_t id;        /* the N of `sN` */
  size_t nops, cap;
  dt_op *ops;
} dt_stream;

typedef struct dt_rank {
  size_t nstreams, cap;
  dt_stream *streams; /* in order of first appearance; empty when the rank runs a template */
  /* Template ranks (single-rank expansion, generated traces): a rank may run another rank's streams instead
   * of owning ops, so that thousands of ranks with the same schedule share one op array. Its collectives
   * use group_map[template's group] and its peers keep their offset: peer' = (rank + peer - template_rank)
   * mod nranks. Set with dt_trace_set_template; read through dt_trace_rank_body / dt_trace_op_group /
   * dt_trace_op_peer, never through streams directly. */
  int32_t template_rank; /* -1 when the rank owns its streams (dt_trace_new sets -1 for every rank) */
  int32_t *group_map;    /* owned; template's group index -> this rank's group index; NULL = identity */
  size_t ngroup_map;     /* entries in group_map (t->ngroups when it was set); template groups at or past it map
                            to themselves */
  int32_t *stream_slot;  /* owned by dt_trace_stream: open-addressing table of stream id -> position + 1 (0 empty)
                            once the rank has more than a few streams, so that a lookup is O(1), not O(streams) */
  size_t stream_slots;   /* its capacity, a power of two (0: no table yet) */
} dt_rank;

/* Parallelism dimension of a group (docs/report.md): which kind of parallelism its traffic serves. Set by the
 * generator; inferred from the group's name for other traces (dt_dim_from_group_name). */
typedef enum { DT_DIM_NONE = 0, DT_DIM_TP, DT_DIM_PP, DT_DIM_DP, DT_DIM_EP, DT_DIM_SP, DT_DIM_CP, DT_DIM_COUNT } dt_dim;

/* Label of a dimension: "-", "TP", "PP", "DP", "EP", "SP", "CP" (static; "?" when out of range). */
const char *dt_dim_name(dt_dim d);
/* Dimension a group name says: the first of its tokens (split at non-alphanumerics, trailing digits dropped,
 * case ignored) that names one: tp/tensor, pp/pipeline/emb/embedding (the tied-embedding group joins the
 * first and last pipeline stages), dp/data/edp/zero (edp: the data-parallel group of experts), ep/expert,
 * sp/sequence, cp/context. DT_DIM_NONE when none does ("world", "default_pg"). */
dt_dim dt_dim_from_group_name(const char *name);

typedef struct dt_group {
  char *name;
  dt_dim dim;         /* parallelism dimension (dt_trace_add_group infers it from the name; builders may set it) */
  size_t nranks;
  int32_t *ranks;     /* global ranks in group order (group-local rank i = ranks[i]) */
  uint32_t file, line; /* where it was declared (0 line when generated) */
} dt_group;

typedef struct dt_trace {
  int32_t nranks;
  size_t ngroups, groups_cap;
  dt_group *groups;
  dt_strtab group_index; /* group names for dt_trace_find_group, numbered as groups[] (groups are only
                           added), kept by dt_trace_add_group */
  dt_rank *ranks;     /* nranks entries */
  size_t nfiles, files_cap;
  char **files;       /* source files, for error positions; files[0] exists ("" when built in memory) */
  size_t nmeta, meta_cap;
  char **meta_keys, **meta_values; /* `meta key=value` lines, in order */
  size_t nnotes, notes_cap;
  char **notes;       /* assumptions and warnings for the report's `notes` */
  struct dt_note_kinds *note_kinds; /* per kind of note, how many were given (dt_trace_add_note), private */
  double captured_step_s; /* captured step time (meta `captured_step_time`), 0 when unknown */
  uint64_t measured_n[DT_OP_COUNT]; /* per op kind: calls whose time the capture measured (NCCL Inspector,
                                       DeepSpeed); reported beside the simulated times, never used as cost */
  double measured_s[DT_OP_COUNT];     /* s: their summed measured times */
  const char *measured_what;          /* static: what was measured, for the report; NULL when nothing */
  const char *format; /* name of the importer that built it (dt_trace_load sets it; static, not owned), NULL
                         when built in memory */
  int64_t ninstances; /* collective instances, set by dt_trace_validate */
  int64_t npairs;     /* send/recv pairs, set by dt_trace_validate */
  dt_dim p2p_dim;     /* dimension of send/recv pairs: DT_DIM_NONE unless a builder knows (the generator: PP);
                         read through dt_trace_p2p_dim */
} dt_trace;

/* Dimension of the trace's send/recv pairs: t->p2p_dim when set, else PP when some group is labelled PP
 * (pipeline traffic is the point-to-point kind), else DT_DIM_NONE. */
dt_dim dt_trace_p2p_dim(const dt_trace *t);

/* Most bytes one op may move (readers and importers refuse more with a positioned error): 2^53, so that every
 * byte count is exact as a double and sums of a few thousand of them stay inside uint64. */
#define DT_TRACE_MAX_BYTES ((uint64_t)1 << 53)

/* Most ranks a trace may have (readers and importers refuse more with a positioned error, before allocating):
 * 2^20 ranks keep the per-rank tables of an empty trace under ~100 MB. */
#define DT_TRACE_MAX_RANKS (1 << 20)
/* Largest `meta tokens_per_iteration=N` (global batch x sequence length; 1e15 is far above any run's). */
#define DT_TOKENS_PER_ITERATION_MAX 1000000000000000LL

/* New empty trace with nranks ranks (no streams, no groups); files[0] = "". Free with dt_trace_free. */
dt_trace *dt_trace_new(int32_t nranks);
/* Frees a trace and everything it owns; NULL is a no-op. */
void dt_trace_free(dt_trace *t);

/* Registers a source file path and returns its index (the same index for the same path). */
uint32_t dt_trace_add_file(dt_trace *t, const char *path);

/* Adds a group with its global ranks (copied). Returns the group index, or DT_ERR with err set
 * (position file/line given) when the name exists already, the list is empty, a rank is out of range or
 * repeated. */
int dt_trace_add_group(dt_trace *t, const char *name, const int32_t *ranks, size_t n, uint32_t file, uint32_t line,
                       dt_error *err);
/* Index of the group named name, or -1. O(1): a hash of the names (readers look a group up per op line). */
int dt_trace_find_group(const dt_trace *t, const char *name);

/* Stream position of stream id `sN` in rank's streams, creating it when create is non-zero; -1 when
 * absent and not created. */
int dt_trace_stream(dt_trace *t, int32_t rank, int32_t stream_id, int create);

/* Appends a new op to stream id stream_id of rank (creating the stream) and returns it, zeroed with the
 * defaults group = -1, peer = -1, batch = -1, match = -1. The pointer is valid until the next append to the
 * same stream. rank must be in range. */
dt_op *dt_trace_append(dt_trace *t, int32_t rank, int32_t stream_id);

/* Appends to stream id stream_id of rank a deep copy of op (of this trace or another): every field as op has it,
 * its deps, splits, kernels, name and dtype duplicated (owned by t), match reset to -1. group, peer and file keep
 * op's values, which are the caller's to re-home when op comes from another trace. Returns the copy, valid until
 * the next append to the same stream. op must not point into that stream (an append may move it). */
dt_op *dt_trace_append_copy(dt_trace *t, int32_t rank, int32_t stream_id, const dt_op *op);

/* Appends a `meta key=value` pair (copied). */
void dt_trace_add_meta(dt_trace *t, const char *key, const char *value);
/* Most notes of one kind a trace keeps: the rest are counted in one closing note. */
#define DT_NOTES_PER_KIND 20
/* Most kinds of notes a trace keeps (a hostile capture can make a kind per kernel name, a native trace one per
 * distinct `meta note=` line): notes of further kinds are counted in one closing note "… and K more notes of
 * kinds past the first 100 (the first of them: "TEXT")", one for the notes and one for the `meta note=` lines. */
#define DT_NOTE_KINDS_MAX 100

/* Appends a note (printf-style) for the report. Notes of one kind (the same text once every run of digits and
 * every 'quoted name' is blanked: one warning per step, per group, per stream) are kept up to
 * DT_NOTES_PER_KIND; past that one note "… and K more like "LAST KEPT"" stands for the rest, its K counted
 * as they come. `meta note=` lines (dt_trace_add_meta) are capped the same way. */
void dt_trace_add_note(dt_trace *t, const char *fmt, ...) DT_PRINTF(2, 3);
/* Non-zero when note is already one of t's notes, or a `meta note=` pair read from a file (notes written with a
 * trace come back as meta pairs): a note said twice is said once, and a trace written, read and written again
 * is the same text. */
int dt_trace_has_note(const dt_trace *t, const char *note);

/* Validates the whole trace before replay (DESIGN.md §4): groups and peers exist, every `after=` edge
 * points at an existing op, collectives match by issue order per group (op, bytes, root, splits must agree
 * on every member), sends and recvs pair in order per (src, dst, tag) with equal bytes, batches are
 * consecutive; template users run an owning template, map its groups to distinct groups they belong to
 * and have no ops of their own. Fills op->match (sequence numbers, see dt_op), t->ninstances and t->npairs
 * (global counts). A group used from two streams of one rank adds a warning note. On a mismatch returns
 * DT_ERR with err naming both ranks, both ops and their file:line positions. Time O(total ops: template
 * users are walked through their template's per-group summaries); memory O(owning ranks' ops + group
 * members + (src, dst, tag) channels). Members are compared by a 64-bit hash of their sequences; on a
 * difference the two ranks are walked again to name the first differing ops. */
int dt_trace_validate(dt_trace *t, dt_error *err);

/* Where op came from, for messages: "FILE:LINE", "FILE: traceEvents[N]" for an event of an imported capture,
 * "line N" without a file name, or "" when the op has no source position (generated). Writes into buf (size
 * bytes) and returns it. */
const char *dt_trace_op_where(const dt_trace *t, const dt_op *op, char *buf, size_t size);

/* Total ops over all ranks and streams; a template user counts its template's ops (the ops it runs). */
size_t dt_trace_op_count(const dt_trace *t);

/* Issue order of rank's ops across its streams (DESIGN.md §4: line order of the rank section), the order
 * in which collectives and sends/recvs are matched: ops sorted by (file, line), ties (ops without a line,
 * e.g. generated ones) broken by stream position, then position in the stream. Fills order[i] with
 * (stream position, op index) pairs; order must hold the rank's op count. Builders that want a particular
 * interleaving across streams set op->line to a sequence number. */
void dt_trace_rank_order(const dt_trace *t, int32_t rank, dt_dep *order);

/* Makes rank run template_rank's streams (DESIGN.md §4 single-rank expansion, generated traces). The
 * template must own its streams (not be a template user itself); rank must own no ops. group_map (copied, may
 * be NULL for identity) has t->ngroups entries at the time of the call: the template's group index -> this
 * rank's group index; every mapped group must contain rank wherever the template's group contains the
 * template. Returns DT_OK or DT_ERR (err set) for a bad rank, a template that is itself templated, or a rank
 * that already has ops. */
int dt_trace_set_template(dt_trace *t, int32_t rank, int32_t template_rank, const int32_t *group_map,
                          dt_error *err);

/* The rank whose streams rank runs: &t->ranks[rank] itself, or its template's. */
const dt_rank *dt_trace_rank_body(const dt_trace *t, int32_t rank);

/* Group of op (an op of dt_trace_rank_body(t, rank)) as seen by rank: op->group mapped through rank's
 * group_map; -1 when the op has no group. */
int32_t dt_trace_op_group(const dt_trace *t, int32_t rank, const dt_op *op);

/* Peer of a send/recv op as seen by rank: op->peer shifted by rank - template_rank modulo nranks (the
 * peer itself when rank owns its ops); -1 when the op has no peer. */
int32_t dt_trace_op_peer(const dt_trace *t, int32_t rank, const dt_op *op);

/* Number of ops of one rank over its streams. */
size_t dt_trace_rank_op_count(const dt_trace *t, int32_t rank);

#endif
