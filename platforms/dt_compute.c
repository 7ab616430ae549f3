/* The shape-following compute model (docs/compute.md, dt_compute.h). */
#include "dt_compute.h"

#include <math.h>

double dt_compute_peak(const dt_platform *p, int dtype)
{
  const dt_compute_model *c = &p->compute;
  double v = 0;
  switch (dtype) {
  case DT_DTYPE_BF16:
    v = c->peak_bf16;
    break;
  case DT_DTYPE_FP16:
    v = c->peak_fp16;
    break;
  case DT_DTYPE_FP8:
    v = c->peak_fp8;
    break;
  case DT_DTYPE_FP32:
    v = c->peak_fp32;
    break;
  default:
    break;
  }
  return v > 0 ? v : p->gpu_peak;
}

/* ceil(a / b) for positive a, b */
static double cdiv(double a, double b)
{
  return ceil(a / b);
}

/* The tile edge T of p's GEMM and attention kernels. */
static double tile_edge(const dt_compute_model *c)
{
  return c->tile > 0 ? c->tile : 128;
}

/* min(1, tiles / SMs): the share of the SMs that `tiles` tiles keep busy. */
static double sm_fill(const dt_compute_model *c, double tiles)
{
  double sms = c->sms > 0 ? c->sms : 1;
  return tiles < sms ? tiles / sms : 1;
}

/* d / (d + half): the rate a tile pipeline reaches along a dimension of d elements. */
static double ramp(double d, double half)
{
  return d > 0 ? d / (d + half) : 1;
}

double dt_compute_tile_efficiency(const dt_platform *p, int64_t m, int64_t n, int64_t k, int64_t batch)
{
  const dt_compute_model *c = &p->compute;
  if (m <= 0 || n <= 0 || k <= 0)
    return 1;
  double T = tile_edge(c);
  double tm = cdiv((double)m, T), tn = cdiv((double)n, T);
  double pad = ((double)m * (double)n) / (tm * T * tn * T);
  double b = batch > 0 ? (double)batch : 1;
  double fill = sm_fill(c, tm * tn * b);
  return pad * fill * ramp((double)m, c->dim_half) * ramp((double)n, c->dim_half) * ramp((double)k, c->k_half);
}

double dt_compute_gemm_rate(const dt_platform *p, int dtype, int64_t m, int64_t n, int64_t k, int64_t batch)
{
  const dt_compute_model *c = &p->compute;
  double e = dtype == DT_DTYPE_FP8 && c->gemm_efficiency_fp8 > 0 ? c->gemm_efficiency_fp8 : c->gemm_efficiency;
  return dt_compute_peak(p, dtype) * e * dt_compute_tile_efficiency(p, m, n, k, batch);
}

static double attn_rate(const dt_platform *p, const dt_kernel *k)
{
  const dt_compute_model *c = &p->compute;
  /* attention runs in bf16 or fp16 (FP8 training keeps it in bf16) */
  int d = k->dtype == DT_DTYPE_FP16 ? DT_DTYPE_FP16 : k->dtype == DT_DTYPE_FP32 ? DT_DTYPE_FP32 : DT_DTYPE_BF16;
  double T = tile_edge(c);
  double q = (double)(k->m > 0 ? k->m : 1);
  double tm = cdiv(q, T), b = k->batch > 0 ? (double)k->batch : 1;
  double fill = sm_fill(c, tm * b);
  double dh = (double)(k->k > 0 ? k->k : 128);
  double head = ramp(dh, c->k_half) / ramp(128, c->k_half);
  return dt_compute_peak(p, d) * c->attn_efficiency * q / (tm * T) * fill * ramp(q, c->dim_half) * head;
}

double dt_compute_kernel_seconds(const dt_platform *p, const dt_kernel *k)
{
  const dt_compute_model *c = &p->compute;
  double t = 0;
  if (k->kind == DT_KERN_GEMM) {
    double r = dt_compute_gemm_rate(p, k->dtype, k->m, k->n, k->k, k->batch);
    t = r > 0 ? k->flop / r : 0;
  } else if (k->kind == DT_KERN_ATTN) {
    double executed = k->flop * (k->causal ? 0.5 : 1) * (k->bwd ? 1.25 : 1);
    double r = attn_rate(p, k);
    t = r > 0 ? executed / r : 0;
  }
  double bw = c->hbm_bandwidth * (c->hbm_efficiency > 0 ? c->hbm_efficiency : 1);
  double tm = bw > 0 ? k->bytes / bw : 0;
  if (tm > t)
    t = tm;
  return p->gpu_efficiency > 0 ? t / p->gpu_efficiency : t;
}

double dt_compute_op_seconds(const dt_platform *p, const dt_op *op)
{
  if (op->dur > 0)
    return op->dur;
  if (p->compute.present && op->nkernels > 0) {
    double t = 0;
    for (uint32_t i = 0; i < op->nkernels; i++)
      t += dt_compute_kernel_seconds(p, &op->kernels[i]);
    return t;
  }
  double rate = p->gpu_peak * p->gpu_efficiency;
  return op->flop > 0 && rate > 0 ? op->flop / rate : 0;
}
