/* fa2_bench: forward TFLOP/s of generated variants on the shape table
 * (B*N = 16k tokens, H*d = 2048, N = 512..16k), timed with CUDA events.
 *
 *   fa2_bench --src DIR [--json FILE] [--reps N] [--only TEXT] [--seqlen N]
 *
 * --only keeps the variants whose name contains TEXT; --seqlen times one N
 * (with --reps 1, a clean target for a profiler).
 * Every DIR/fwd_*.cu variant runs on each N; FLOPs = 4*B*H*N^2*d, halved
 * when causal. Median of --reps launches after two warm-up launches. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "fa2_params.h"
#include "fwd_check.h"

static int seqlens[] = {512, 1024, 2048, 4096, 8192, 16384};
static int n_seqlens = 6;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *src = NULL, *json = NULL, *only = NULL;
  int reps = 10;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--src") && i + 1 < argc) src = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--seqlen") && i + 1 < argc) {
      seqlens[0] = atoi(argv[++i]);
      n_seqlens = 1;
      if (seqlens[0] < 1 || 16384 % seqlens[0]) {
        fprintf(stderr, "fa2_bench: --seqlen must divide 16384\n");
        return 2;
      }
    }
    else {
      printf("usage: fa2_bench --src DIR [--json FILE] [--reps N] [--only TEXT] [--seqlen N]\n");
      return !strcmp(argv[i], "--help") ? 0 : 2;
    }
  }
  if (!src || reps < 1 || reps > 1000) {
    fprintf(stderr, "fa2_bench: --src DIR is required; --reps in 1..1000\n");
    return 2;
  }
  gpu g;
  char err[512];
  int rc = gpu_open(&g, err, sizeof err);
  if (rc) {
    printf("fa2_bench: %s\n", rc == 1 ? err : "CUDA failure");
    return rc == 1 ? 0 : 1;
  }
  fwd_variant *vars;
  int n_vars = gpu_load_variants(&g, src, &vars);
  if (n_vars <= 0) return 1;
  FILE *out = json ? fopen(json, "w") : NULL;
  if (json && !out) {
    perror(json);
    return 1;
  }
  if (out) fprintf(out, "[\n");
  const rt_cuda_api *cu = g.cu;
  const long long tokens = 16384, width = 2048; /* B*N and H*d */
  CUdeviceptr q = gpu_alloc(&g, tokens * width * 2), k = gpu_alloc(&g, tokens * width * 2);
  CUdeviceptr v = gpu_alloc(&g, tokens * width * 2), o = gpu_alloc(&g, tokens * width * 2);
  CUdeviceptr lse = gpu_alloc(&g, tokens * width * 4);
  CUevent ev[2 * 1000 + 2];
  for (int i = 0; i < 2 * reps; i++)
    if (!GPU_OK(&g, cu->cuEventCreate(&ev[i], RT_CU_EVENT_DEFAULT))) return 1;
  int first = 1;
  printf("%-52s %6s %9s %8s\n", "variant", "N", "ms", "TFLOP/s");
  for (int vi = 0; vi < n_vars; vi++) {
    const fwd_variant *var = &vars[vi];
    if (only && !strstr(var->name, only)) continue;
    const int d = var->head_dim, H = (int)(width / d);
    for (int pass = 0; pass < 3; pass++) /* q, k, v: distinct data */
      if (gpu_fill_uniform(&g, d, var->bf16, pass == 0 ? q : pass == 1 ? k : v, tokens * width,
                           (unsigned)(vi * 3 + pass + 1), -2.f, 2.f))
        return 1;
    for (int si = 0; si < n_seqlens; si++) {
      const int N = seqlens[si], B = (int)(tokens / N);
      fa2_fwd_params p = {(const void *)q, (const void *)k, (const void *)v, (void *)o, (float *)lse,
                          (long long)N * width, width, d, (long long)N * width, width, d,
                          (long long)N * width, width, d, (long long)N * width, width, d,
                          B, N, N, H, H, 0.f};
      p.scale = 1.f / sqrtf((float)d);
      void *args[] = {&p};
      unsigned gx = (unsigned)((N + var->block_m - 1) / var->block_m);
      float ms[1000];
      for (int r = -2; r < reps; r++) {
        if (r >= 0 && !GPU_OK(&g, cu->cuEventRecord(ev[2 * r], NULL))) return 1;
        if (!GPU_OK(&g, cu->cuLaunchKernel(var->fn, gx, (unsigned)H, (unsigned)B,
                                           (unsigned)var->threads, 1, 1,
                                           (unsigned)var->smem_bytes, NULL, args, NULL)))
          return 1;
        if (r >= 0 && !GPU_OK(&g, cu->cuEventRecord(ev[2 * r + 1], NULL))) return 1;
      }
      if (gpu_sync(&g, 60, var->name) != 0) return 1;
      for (int r = 0; r < reps; r++)
        if (!GPU_OK(&g, cu->cuEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]))) return 1;
      qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
      const float med = ms[reps / 2];
      const double flops = 4.0 * B * H * (double)N * N * d / (var->causal ? 2 : 1);
      const double tflops = flops / (med * 1e-3) / 1e12;
      printf("%-52s %6d %9.3f %8.1f\n", var->name, N, med, tflops);
      fflush(stdout);
      if (out)
        fprintf(out, "%s  {\"variant\": \"%s\", \"head_dim\": %d, \"causal\": %s, \"seqlen\": %d, "
                     "\"batch\": %d, \"heads\": %d, \"ms\": %.5f, \"tflops\": %.2f}",
                first ? "" : ",\n", var->name, d, var->causal ? "true" : "false", N, B, H, med,
                tflops);
      first = 0;
    }
  }
  if (out) {
    fprintf(out, "\n]\n");
    fclose(out);
  }
  printf("fa2_bench: %s (%s, %d SMs)\n", g.name, g.arch, g.sms);
  return 0;
}
