/* Kineto import speed and memory (not a test): writes a synthetic PyTorch-profiler capture of about SIZE MB of
 * JSON with the event mix of the shipped captures (CPU ops, cuda_runtime launches, ac2g flows, kernels on a
 * compute and an NCCL stream, nccl:all_reduce annotations with record_param_comms, a profiler step per 10,000
 * kernels), then imports it with dt_kineto_import and prints the CPU seconds, MB/s of uncompressed input and
 * the peak resident memory of the process (getrusage). Build and run after configuring build/ (Release):
 *   cmake --build build --target kineto_import && build/kineto_import [SIZE_MB] [file.json]
 * SIZE_MB defaults to 1024; the file (default /tmp/dtsim_bench_kineto.json) is left in place and reused when it
 * exists with the right size class. */
#include "traces/dt_trace_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One "unit": a CPU op, its launch, two flow events and the kernel (~1.3 kB); every 50th unit is an all-reduce
 * with its record_param_comms and nccl: annotation. */
static long write_capture(const char *path, long target_bytes)
{
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, "
             "\"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"pg_size\": 8, \"ranks\": [0, 1, 2, "
             "3, 4, 5, 6, 7]}]},\n\"traceEvents\": [\n");
  long units = 0;
  double ts = 1e9, gpu = 1e9 + 20;
  double step_start = ts;
  int first = 1;
  while (ftell(f) < target_bytes) {
    long corr = 1000 + units;
    const char *sep = first ? "" : ",\n";
    first = 0;
    if (units % 10000 == 0 && units > 0) {
      fprintf(f,
              "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", \"pid\": 11, "
              "\"tid\": 11, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %ld}}",
              sep, units / 10000, step_start, ts - step_start, corr);
      step_start = ts;
      sep = ",\n";
    }
    if (units % 50 == 49) {
      fprintf(f,
              "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 11, \"tid\": 11, "
              "\"ts\": %.3f, \"dur\": 30.5, \"args\": {\"External id\": %ld, \"Collective name\": \"allreduce\", "
              "\"dtype\": \"Float\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, \"Group size\": 8}},\n"
              "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 11, "
              "\"tid\": 11, \"ts\": %.3f, \"dur\": 28.0, \"args\": {\"External id\": %ld}},\n"
              "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernelExC\", \"pid\": 11, "
              "\"tid\": 11, \"ts\": %.3f, \"dur\": 9.1, \"args\": {\"External id\": %ld, \"cbid\": 430, "
              "\"correlation\": %ld}},\n"
              "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
              "unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": 40, \"ts\": %.3f, \"dur\": 120.5, \"args\": "
              "{\"External id\": %ld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 40, "
              "\"correlation\": %ld, \"registers per thread\": 96, \"shared memory\": 87568, \"grid\": [8, 1, 1], "
              "\"block\": [544, 1, 1], \"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, "
              "\"Out msg nelems\": 1048576, \"Group size\": 8, \"dtype\": \"Float\", \"In split size\": \"[]\", "
              "\"Out split size\": \"[]\", \"Process Group Name\": \"0\", \"Process Group Description\": "
              "\"default_pg\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\"}}",
              sep, ts, corr, ts + 1, corr, ts + 2, corr, corr, gpu, corr, corr);
    } else {
      fprintf(f,
              "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_\", \"pid\": 11, \"tid\": 11, "
              "\"ts\": %.3f, \"dur\": 12.25, \"args\": {\"External id\": %ld, \"Record function id\": 0, "
              "\"Sequence number\": %ld, \"Fwd thread id\": 0, \"Ev Idx\": %ld}},\n"
              "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 11, \"tid\": 11, "
              "\"ts\": %.3f, \"dur\": 5.5, \"args\": {\"External id\": %ld, \"cbid\": 211, \"correlation\": %ld}},\n"
              "{\"ph\": \"s\", \"id\": %ld, \"pid\": 11, \"tid\": 11, \"ts\": %.3f, \"cat\": \"ac2g\", "
              "\"name\": \"ac2g\"},\n"
              "{\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"cat\": \"ac2g\", "
              "\"name\": \"ac2g\", \"bp\": \"e\"},\n"
              "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::vectorized_elementwise_kernel<4, "
              "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
              "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)\", \"pid\": 0, \"tid\": 7, "
              "\"ts\": %.3f, \"dur\": 4.5, \"args\": {\"External id\": %ld, \"queued\": 0, \"device\": 0, "
              "\"context\": 1, \"stream\": 7, \"correlation\": %ld, \"registers per thread\": 16, "
              "\"shared memory\": 0, \"blocks per SM\": 2.5, \"warps per SM\": 10.0, \"grid\": [270, 1, 1], "
              "\"block\": [128, 1, 1], \"est. achieved occupancy %%\": 16}}",
              sep, ts, corr, units, units, ts + 3, corr, corr, corr, ts + 3, corr, gpu, gpu, corr, corr);
    }
    units++;
    ts += 14.0;
    gpu += units % 50 == 0 ? 125.0 : 6.0;
    if (gpu < ts + 10)
      gpu = ts + 10;
  }
  fprintf(f, "\n]}\n");
  long size = ftell(f);
  fclose(f);
  return size;
}

int main(int argc, char **argv)
{
  long mb = argc > 1 ? atol(argv[1]) : 1024;
  const char *path = argc > 2 ? argv[2] : "/tmp/dtsim_bench_kineto.json";
  struct stat st;
  long size;
  if (stat(path, &st) == 0 && st.st_size >= mb * 1000000L && st.st_size < mb * 1000000L + 100000L)
    size = (long)st.st_size;
  else {
    double g0 = cpu_now();
    size = write_capture(path, mb * 1000000L);
    if (size < 0) {
      perror(path);
      return 1;
    }
    fprintf(stderr, "wrote %s: %.1f MB in %.2f CPU s\n", path, (double)size / 1e6, cpu_now() - g0);
  }
  dt_import_opts o;
  dt_import_opts_init(&o);
  o.expand = 8;
  dt_trace *t = NULL;
  dt_error err;
  dt_error_clear(&err);
  double c0 = cpu_now();
  if (dt_kineto_import(path, &o, &t, &err) != DT_OK) {
    char msg[1024];
    fprintf(stderr, "import failed: %s\n", dt_error_format(&err, msg, sizeof msg));
    return 1;
  }
  double c1 = cpu_now();
  size_t ops = dt_trace_op_count(t);
  dt_trace_free(t);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("kineto import: %.1f MB of JSON, %.2f CPU s, %.1f MB/s, %zu ops (8 ranks, template-shared), peak RSS "
         "%.1f MiB\n",
         (double)size / 1e6, c1 - c0, (double)size / 1e6 / (c1 - c0), ops, (double)ru.ru_maxrss / 1024.0);
  return 0;
}
