/* The shape-following compute model (docs/compute.md): how long a compute op takes on a platform's GPU. An op
 * that carries its kernels (generated traces: GEMMs with m, n, k; fused attention with sequence lengths, heads
 * and head dimension; element-wise and norm work by bytes) runs each kernel at
 *   min(dtype peak x gemm_efficiency x tile efficiency, bytes / (HBM bandwidth x hbm_efficiency))
 * (a roofline), summed, over gpu.efficiency; an op without kernels, or any op on a platform without
 * `gpu.compute`, runs flop / (gpu.peak x gpu.efficiency) as before. */
#ifndef DT_COMPUTE_H
#define DT_COMPUTE_H

#include "../traces/dt_trace.h"
#include "dt_platform.h"

/* FLOP/s dense peak of dtype d on p: its `gpu.compute` peak, or gpu.peak when that dtype has none. */
double dt_compute_peak(const dt_platform *p, int dtype);

/* Tile efficiency of a GEMM C[m x n] = A[m x k] B[k x n] repeated `batch` times, in (0, 1]: the product of
 *   tile quantization  m n / (ceil(m/T) T ceil(n/T) T)     (partial edge tiles do full work; NVIDIA, "Matrix
 *                                                           Multiplication Background User's Guide")
 *   fill               min(1, tiles / SMs)                 (too few tiles leave SMs idle)
 *   dimension ramps    m/(m + d) n/(n + d) k/(k + k_half)  (d = dim_half: a tile's prologue, epilogue and
 *                                                           launch are amortised over longer dimensions)
 * with T = gpu.compute.tile. Wave quantization is left out: cuBLAS's stream-K and split-K schedules spread the
 * last wave (docs/compute.md). Needs p->compute.present. */
double dt_compute_tile_efficiency(const dt_platform *p, int64_t m, int64_t n, int64_t k, int64_t batch);

/* Achieved FLOP/s of that GEMM in dtype d without the memory roofline and without gpu.efficiency:
 * peak(d) x gemm_efficiency (gemm_efficiency_fp8 for fp8 when given) x tile efficiency. */
double dt_compute_gemm_rate(const dt_platform *p, int dtype, int64_t m, int64_t n, int64_t k, int64_t batch);

/* Seconds kernel k takes on p (p->compute.present): max(compute time, k->bytes / (hbm_bandwidth x
 * hbm_efficiency)) / gpu.efficiency. GEMM compute time: flop / gemm rate. ATTN: the executed FLOP (half with a
 * causal mask; the backward's 5 products against the 4 its flop counts: x 1.25) at bf16-or-fp16 peak x
 * attention_efficiency x the tile quantization, fill and ramp of its query tiles (length m, batch tiles) x the
 * head-dimension factor (dh / (dh + k_half)) / (128 / (128 + k_half)) (attention_efficiency is quoted at head
 * dimension 128). ELEM: memory time only. */
double dt_compute_kernel_seconds(const dt_platform *p, const dt_kernel *k);

/* Seconds compute op `op` takes on p: dur= when given; the sum over its kernels when p has `gpu.compute` and the
 * op has kernels; else flop / (gpu.peak x gpu.efficiency). 0 when nothing applies (zero flop, zero rate). */
double dt_compute_op_seconds(const dt_platform *p, const dt_op *op);

#endif
