/* The shape-following compute model (platforms/dt_compute.h, docs/compute.md): hand-computed roofline cases, the
 * published GEMM throughput each shipped GPU's constants were fitted on, the plain model's fallbacks, and the
 * `gpu.compute` section's parsing. */
#include "dt_test.h"
#include "platforms/dt_compute.h"

#include <math.h>
#include <stdio.h>

/* A platform with a compute model: peaks 1000 / 2000 TFLOPS (bf16 / fp8), HBM 2 TB/s at 0.9, GEMMs at 0.8, fused
 * attention at 0.5, 100 SMs, tile 128, ramps of 64. */
static dt_platform model_platform(void)
{
  dt_platform p = dt_test_platform(1, 8);
  p.gpu_peak = 1000e12;
  p.gpu_efficiency = 1.0;
  dt_compute_model *c = &p.compute;
  c->present = 1;
  c->peak_bf16 = 1000e12;
  c->peak_fp8 = 2000e12;
  c->hbm_bandwidth = 2e12;
  c->hbm_efficiency = 0.9;
  c->gemm_efficiency = 0.8;
  c->attn_efficiency = 0.5;
  c->sms = 100;
  c->tile = 128;
  c->k_half = 64;
  c->dim_half = 64;
  return p;
}

static dt_kernel gemm(int dtype, int64_t m, int64_t n, int64_t k, double bytes)
{
  dt_kernel x;
  memset(&x, 0, sizeof x);
  x.kind = DT_KERN_GEMM;
  x.dtype = (uint8_t)dtype;
  x.m = m;
  x.n = n;
  x.k = k;
  x.batch = 1;
  x.flop = 2.0 * (double)m * (double)n * (double)k;
  x.bytes = bytes;
  return x;
}

#define REL_EQ(a, b, tol)                                                                                              \
  ck_assert_msg(fabs((a) - (b)) <= (tol)*fabs(b), "%s = %.15g, want %.15g", #a, (double)(a), (double)(b))

/* Compute-bound GEMM 4096^3: 2 4096^3 FLOP at 1000e12 x 0.8 x (4096/4160)^3 (aligned: no tile loss, 1024 tiles fill
 * 100 SMs). */
START_TEST(test_gemm_compute_bound)
{
  dt_platform p = model_platform();
  dt_kernel k = gemm(DT_DTYPE_BF16, 4096, 4096, 4096, 3.0 * 4096 * 4096 * 2);
  double r = 4096.0 / 4160.0;
  double want = 2.0 * 4096 * 4096 * 4096 / (1000e12 * 0.8 * r * r * r);
  REL_EQ(dt_compute_kernel_seconds(&p, &k), want, 1e-12);
  /* fp8 runs at its own peak */
  k.dtype = DT_DTYPE_FP8;
  REL_EQ(dt_compute_kernel_seconds(&p, &k), want / 2, 1e-12);
  /* gpu.efficiency is a plain multiplier */
  p.gpu_efficiency = 0.5;
  REL_EQ(dt_compute_kernel_seconds(&p, &k), want, 1e-12);
}
END_TEST

/* Tile quantization and fill: m = n = 192 pads to 256 x 256 (4 tiles of 100 SMs): 192^2/256^2 x 4/100. */
START_TEST(test_gemm_tiles)
{
  dt_platform p = model_platform();
  double want =
      (192.0 * 192.0) / (256.0 * 256.0) * (4.0 / 100.0) * (192.0 / 256.0) * (192.0 / 256.0) * (4096.0 / 4160.0);
  REL_EQ(dt_compute_tile_efficiency(&p, 192, 192, 4096, 1), want, 1e-12);
  /* 25 batches of 4 tiles fill the 100 SMs */
  want = (192.0 * 192.0) / (256.0 * 256.0) * (192.0 / 256.0) * (192.0 / 256.0) * (4096.0 / 4160.0);
  REL_EQ(dt_compute_tile_efficiency(&p, 192, 192, 4096, 25), want, 1e-12);
}
END_TEST

/* Memory-bound: an outer product 8192 x 8192 x 1 moves 8192^2 x 2 bytes of output (plus its inputs) for 2 8192^2
 * FLOP: its time is bytes / (2e12 x 0.9), exactly. Element-wise kernels likewise. */
START_TEST(test_roofline_memory_bound)
{
  dt_platform p = model_platform();
  double bytes = (8192.0 + 8192.0) * 2 + 8192.0 * 8192.0 * 2;
  dt_kernel k = gemm(DT_DTYPE_BF16, 8192, 8192, 1, bytes);
  double compute = k.flop / dt_compute_gemm_rate(&p, DT_DTYPE_BF16, 8192, 8192, 1, 1);
  double memory = bytes / (2e12 * 0.9);
  ck_assert(memory > compute);
  REL_EQ(dt_compute_kernel_seconds(&p, &k), memory, 1e-12);
  dt_kernel e;
  memset(&e, 0, sizeof e);
  e.kind = DT_KERN_ELEM;
  e.bytes = 1e9;
  REL_EQ(dt_compute_kernel_seconds(&p, &e), 1e9 / 1.8e12, 1e-12);
}
END_TEST

/* Fused attention: causal forward at half its counted FLOP, backward at 5/4 of its; b heads = 32 x 2048/128 = 512
 * query tiles fill the SMs; head dimension 128 is the reference. */
START_TEST(test_attention)
{
  dt_platform p = model_platform();
  dt_kernel a;
  memset(&a, 0, sizeof a);
  a.kind = DT_KERN_ATTN;
  a.m = 2048;
  a.n = 2048;
  a.k = 128;
  a.batch = 32;
  a.flop = 4.0 * 2048 * 2048 * 128 * 32;
  a.causal = 1;
  double rate = 1000e12 * 0.5 * (2048.0 / 2112.0);
  REL_EQ(dt_compute_kernel_seconds(&p, &a), 0.5 * a.flop / rate, 1e-12);
  a.bwd = 1;
  a.flop *= 2;
  REL_EQ(dt_compute_kernel_seconds(&p, &a), 0.5 * 1.25 * a.flop / rate, 1e-12);
}
END_TEST

/* An op: dur= wins; its kernels under the model; without gpu.compute (or without kernels) flop / (peak x eff). */
START_TEST(test_op_fallbacks)
{
  dt_platform p = model_platform();
  dt_kernel ks[2] = {gemm(DT_DTYPE_BF16, 4096, 4096, 4096, 0), gemm(DT_DTYPE_BF16, 4096, 4096, 4096, 0)};
  dt_op op;
  memset(&op, 0, sizeof op);
  op.kind = DT_OP_COMPUTE;
  op.flop = ks[0].flop + ks[1].flop;
  op.kernels = ks;
  op.nkernels = 2;
  REL_EQ(dt_compute_op_seconds(&p, &op), 2 * dt_compute_kernel_seconds(&p, &ks[0]), 1e-12);
  p.gpu_efficiency = 0.45;
  p.compute.present = 0;
  REL_EQ(dt_compute_op_seconds(&p, &op), op.flop / (1000e12 * 0.45), 1e-12);
  p.compute.present = 1;
  op.nkernels = 0;
  REL_EQ(dt_compute_op_seconds(&p, &op), op.flop / (1000e12 * 0.45), 1e-12);
  op.dur = 1e-3;
  REL_EQ(dt_compute_op_seconds(&p, &op), 1e-3, 0);
  /* a dtype without its peak runs at gpu.peak */
  p.compute.peak_fp8 = 0;
  p.gpu_peak = 700e12;
  REL_EQ(dt_compute_peak(&p, DT_DTYPE_FP8), 700e12, 0);
}
END_TEST

/* Each shipped GPU reproduces the maximum achievable matmul throughput its gemm_efficiency was fitted on within 5 %
 * (S. Bekman, ml-engineering, compute/accelerator, "Maximum Achievable Matmul FLOPS comparison table"; the
 * platform files cite the rows). */
static const struct {
  const char *file;
  int dtype;
  int64_t m, n, k;
  double tflops;
} published[] = {
    {"platforms/dgx-a100.yaml", DT_DTYPE_BF16, 1024, 10240, 5120, 271.2},
    {"platforms/azure-ndmv4.yaml", DT_DTYPE_BF16, 1024, 10240, 5120, 271.2},
    {"platforms/dgx-h100.yaml", DT_DTYPE_BF16, 2048, 2048, 13312, 794.5},
    {"platforms/dgx-h100.yaml", DT_DTYPE_FP8, 1024, 9216, 14336, 1402.6},
    {"platforms/dgx-h100-4node.yaml", DT_DTYPE_BF16, 2048, 2048, 13312, 794.5},
    {"platforms/hgx-h200.yaml", DT_DTYPE_BF16, 2048, 2048, 13312, 794.5},
    {"platforms/hgx-h200.yaml", DT_DTYPE_FP8, 1280, 4096, 12032, 1453.4},
    {"platforms/dgx-b200.yaml", DT_DTYPE_BF16, 1792, 16128, 3072, 1745.0},
    {"platforms/dgx-b200.yaml", DT_DTYPE_FP8, 15360, 4096, 3072, 3432.5},
    {"platforms/frontier-like.yaml", DT_DTYPE_BF16, 1024, 14080, 19968, 147.0},
};

START_TEST(test_published_gemm)
{
  dt_platform *p = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_platform_load(published[_i].file, &p, &err) == DT_OK, "%s: %s", published[_i].file, err.msg);
  ck_assert_msg(p->compute.present, "%s has no gpu.compute", published[_i].file);
  double got = dt_compute_gemm_rate(p, published[_i].dtype, published[_i].m, published[_i].n, published[_i].k, 1);
  double want = published[_i].tflops * 1e12;
  ck_assert_msg(fabs(got - want) <= 0.05 * want, "%s %s %lldx%lldx%lld: model %.1f TFLOPS, published %.1f",
                published[_i].file, dt_dtype_name((dt_dtype)published[_i].dtype), (long long)published[_i].m,
                (long long)published[_i].n, (long long)published[_i].k, got / 1e12, published[_i].tflops);
  dt_platform_free(p);
}
END_TEST

static const char base_yaml[] = "dtsim_platform: 1\nname: c\ngpu:\n  model: X\n  peak: 100TFLOPS\n%s"
                                "nodes: 1\ngpus_per_node: 2\nintra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: "
                                "1us}\n";

static int parse(const char *compute, dt_platform **p, dt_error *err)
{
  char text[2048];
  snprintf(text, sizeof text, base_yaml, compute);
  return dt_platform_parse(text, strlen(text), "c.yaml", p, err);
}

/* `gpu.compute` parses with its defaults; a missing required key and an unknown one are errors at their place. */
START_TEST(test_yaml)
{
  dt_platform *p = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(parse("", &p, &err) == DT_OK, "%s", err.msg);
  ck_assert_int_eq(p->compute.present, 0);
  dt_platform_free(p);
  ck_assert_msg(
      parse("  compute: {fp8: 200TFLOPS, hbm_bandwidth: 2TB/s, gemm_efficiency: 0.8, sms: 100}\n", &p, &err) == DT_OK,
      "%s", err.msg);
  ck_assert_int_eq(p->compute.present, 1);
  REL_EQ(p->compute.peak_fp8, 200e12, 1e-12);
  REL_EQ(p->compute.hbm_bandwidth, 2e12, 1e-12);
  REL_EQ(p->compute.hbm_efficiency, 0.9, 0);
  REL_EQ(p->compute.attn_efficiency, 0.5, 0);
  ck_assert_int_eq(p->compute.tile, 128);
  ck_assert_int_eq(p->compute.k_half, 64);
  ck_assert_int_eq(p->compute.dim_half, 64);
  REL_EQ(dt_compute_peak(p, DT_DTYPE_BF16), 100e12, 0); /* no bf16 peak given: gpu.peak */
  dt_platform_free(p);
  p = NULL;
  ck_assert_int_eq(parse("  compute: {hbm_bandwidth: 2TB/s, gemm_efficiency: 0.8}\n", &p, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "missing required key 'sms'") != NULL, "%s", err.msg);
  ck_assert_int_eq(err.line, 6);
  ck_assert_int_eq(parse("  compute: {hbm_bandwith: 2TB/s, gemm_efficiency: 0.8, sms: 1}\n", &p, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "did you mean 'hbm_bandwidth'") != NULL, "%s", err.msg);
  ck_assert_int_eq(err.line, 6);
  ck_assert_int_eq(err.col, 13);
  ck_assert_int_eq(parse("  compute: {hbm_bandwidth: 2TB/s, gemm_efficiency: 1.5, sms: 1}\n", &p, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "gpu.compute.gemm_efficiency") != NULL, "%s", err.msg);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"gemm_compute_bound", test_gemm_compute_bound, 0},
      {"gemm_tiles", test_gemm_tiles, 0},
      {"roofline_memory_bound", test_roofline_memory_bound, 0},
      {"attention", test_attention, 0},
      {"op_fallbacks", test_op_fallbacks, 0},
      {"published_gemm", test_published_gemm, (int)(sizeof published / sizeof published[0])},
      {"yaml", test_yaml, 0},
  };
  return dt_test_run(dt_test_suite("compute", cases, sizeof cases / sizeof cases[0], 0));
}
