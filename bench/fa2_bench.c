/* fa2_bench: forward TFLOP/s of generated variants on the shape table
 * (B*N = 16k tokens, H*d = 2048, N = 512..16k), timed with CUDA events.
 *
 *   fa2_bench --src DIR [--json FILE] [--reps N] [--rounds R] [--only TEXT] [--seqlen N]
 *
 * DIR holds fwd_*.cu sources named by canonical variant name, or is an out/
 * tree of `fa2 build` (src/ and <arch>/ cubins). FLOPs = 4*B*H*N^2*d, halved
 * when causal. For each N, R rounds go over every variant in turn (one
 * warm-up launch, then --reps timed launches each), so slow drifts of the
 * clock hit all variants alike; the figure is the median of all R*reps
 * launches. --only keeps the variants whose name contains TEXT; --seqlen
 * times one N (with --reps 1 --rounds 1, a clean target for a profiler). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2_params.h"
#include "fwd_check.h"

enum { MAX_SAMPLES = 4096 };

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

typedef struct bench_buffers {
  CUdeviceptr q, k, v, o, lse;
} bench_buffers;

/* Times `reps` launches of one variant at sequence length N; appends the
 * milliseconds of each to ms[*n]. */
static int time_variant(gpu *g, const fwd_variant *var, const bench_buffers *b, int N, int reps,
                        CUevent *ev, float *ms, int *n) {
  const rt_cuda_api *cu = g->cu;
  const long long width = 2048;
  const int d = var->head_dim, H = (int)(width / d), B = 16384 / N;
  const long long row = (long long)H * d;
  fa2_fwd_params p = {(const void *)b->q, (const void *)b->k, (const void *)b->v, (void *)b->o,
                      (float *)b->lse, N * row, row, d, N * row, row, d, N * row, row, d,
                      N * row, row, d, B, N, N, H, H, 1.f / sqrtf((float)d)};
  void *args[] = {&p};
  const unsigned gx = (unsigned)((N + var->block_m - 1) / var->block_m);
  for (int r = -1; r < reps; r++) {
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r], NULL))) return -1;
    if (!GPU_OK(g, cu->cuLaunchKernel(var->fn, gx, (unsigned)H, (unsigned)B, (unsigned)var->threads,
                                      1, 1, (unsigned)var->smem_bytes, NULL, args, NULL)))
      return -1;
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r + 1], NULL))) return -1;
  }
  if (gpu_sync(g, 60, var->name) != 0) return -1;
  for (int r = 0; r < reps && *n < MAX_SAMPLES; r++)
    if (!GPU_OK(g, cu->cuEventElapsedTime(&ms[(*n)++], ev[2 * r], ev[2 * r + 1]))) return -1;
  return 0;
}

int main(int argc, char **argv) {
  const char *src = NULL, *json = NULL, *only = NULL;
  int reps = 5, rounds = 4;
  int seqlens[] = {512, 1024, 2048, 4096, 8192, 16384}, n_seqlens = 6;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--src") && i + 1 < argc) src = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--seqlen") && i + 1 < argc) {
      seqlens[0] = atoi(argv[++i]);
      n_seqlens = 1;
    } else {
      int help = !strcmp(argv[i], "--help");
      fprintf(help ? stdout : stderr, "usage: fa2_bench --src DIR [--json FILE] [--reps N] "
                                      "[--rounds R] [--only TEXT] [--seqlen N]\n");
      return help ? 0 : 2;
    }
  }
  if (!src || reps < 1 || reps > 100 || rounds < 1 || rounds * reps > MAX_SAMPLES ||
      seqlens[0] < 1 || 16384 % seqlens[0]) {
    fprintf(stderr, "fa2_bench: --src DIR is required; --reps 1..100, --rounds >= 1, "
                    "--seqlen must divide 16384\n");
    return 2;
  }
  gpu g;
  char err[512];
  int rc = gpu_open(&g, err, sizeof err);
  if (rc) {
    printf("fa2_bench: %s\n", rc == 1 ? err : "CUDA failure");
    return rc == 1 ? 0 : 1;
  }
  fwd_variant *all;
  int n_all = gpu_load_variants(&g, src, &all), n_vars = 0;
  if (n_all <= 0) return 1;
  for (int i = 0; i < n_all; i++) /* keep the selected ones, in order */
    if (!only || strstr(all[i].name, only)) all[n_vars++] = all[i];

  const rt_cuda_api *cu = g.cu;
  const size_t elems = 16384 * 2048; /* B*N tokens x H*d, the same for every shape */
  bench_buffers b = {gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 2),
                     gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 4)};
  if (!b.q || !b.k || !b.v || !b.o || !b.lse) return 1;
  /* Random data (never zeros: they run faster than real data). The values
   * are 16-bit patterns valid for both dtypes. */
  if (gpu_fill_uniform(&g, 64, 1, b.q, (long long)elems, 1, -2.f, 2.f) ||
      gpu_fill_uniform(&g, 64, 1, b.k, (long long)elems, 2, -2.f, 2.f) ||
      gpu_fill_uniform(&g, 64, 1, b.v, (long long)elems, 3, -2.f, 2.f))
    return 1;
  CUevent ev[200];
  for (int i = 0; i < 2 * reps; i++)
    if (!GPU_OK(&g, cu->cuEventCreate(&ev[i], RT_CU_EVENT_DEFAULT))) return 1;
  float *ms = malloc(sizeof(float) * (size_t)n_vars * MAX_SAMPLES);
  int *n_ms = calloc((size_t)n_vars, sizeof(int));
  FILE *out = json ? fopen(json, "w") : NULL;
  if (!ms || !n_ms || (json && !out)) return 1;
  if (out) fprintf(out, "[\n");
  int first = 1;
  printf("%-52s %6s %9s %8s\n", "variant", "N", "ms", "TFLOP/s");
  for (int si = 0; si < n_seqlens; si++) {
    const int N = seqlens[si];
    memset(n_ms, 0, sizeof(int) * (size_t)n_vars);
    for (int round = 0; round < rounds; round++)
      for (int vi = 0; vi < n_vars; vi++)
        if (time_variant(&g, &all[vi], &b, N, reps, ev, ms + (size_t)vi * MAX_SAMPLES, &n_ms[vi]))
          return 1;
    for (int vi = 0; vi < n_vars; vi++) {
      const fwd_variant *var = &all[vi];
      float *s = ms + (size_t)vi * MAX_SAMPLES;
      qsort(s, (size_t)n_ms[vi], sizeof *s, cmp_float);
      const float med = s[n_ms[vi] / 2];
      const int d = var->head_dim, H = 2048 / d, B = 16384 / N;
      const double flops = 4.0 * B * H * (double)N * N * d / (var->causal ? 2 : 1);
      const double tflops = flops / (med * 1e-3) / 1e12;
      printf("%-52s %6d %9.4f %8.1f\n", var->name, N, med, tflops);
      if (out)
        fprintf(out, "%s  {\"variant\": \"%s\", \"head_dim\": %d, \"causal\": %s, \"seqlen\": %d, "
                     "\"batch\": %d, \"heads\": %d, \"ms\": %.5f, \"tflops\": %.2f, \"samples\": %d}",
                first ? "" : ",\n", var->name, d, var->causal ? "true" : "false", N, B, H, med,
                tflops, n_ms[vi]);
      first = 0;
    }
    fflush(stdout);
  }
  if (out) {
    fprintf(out, "\n]\n");
    fclose(out);
  }
  printf("fa2_bench: %s (%s, %d SMs)\n", g.name, g.arch, g.sms);
  return 0;
}
