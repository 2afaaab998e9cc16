/* fa2_bench: forward TFLOP/s of generated variants on the shape table
 * (B*N = 16k tokens, H*d = 2048, N = 512..16k), timed with CUDA events.
 *
 *   fa2_bench (--src DIR | --spec FILE) [--json FILE] [--reps N] [--rounds R]
 *             [--only TEXT] [--seqlen N] [--deterministic] [--fp32-delta]
 *
 * DIR holds fwd_*.cu sources named by canonical variant name, or is an out/
 * tree of `fa2 build` (src/ and <arch>/ cubins); --spec renders a spec's
 * variants with the generator, backward ones included. Forward FLOPs =
 * 4*B*H*N^2*d, halved when causal; a backward (its three kernels) counts
 * 2.5 times that. For each N, R rounds go over every variant in turn (one
 * warm-up launch, then --reps timed launches each; odd rounds in reverse
 * order, so no variant always follows the same one), so slow drifts of the
 * clock hit all variants alike; the figure is the median of all R*reps
 * launches. --only keeps the variants whose name contains TEXT; --seqlen
 * times one N (with --reps 1 --rounds 1, a clean target for a profiler).
 * --fp32-delta: the forward also writes O in fp32 and the backward's delta
 * reads it (the precise-delta option): its cost in time. With FA2_TEMPLATES=DIR,
 * --spec renders from DIR's templates (`fa2 build --templates`): an experiment's
 * template variant timed by the same harness. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_check.h"
#include "fa2_params.h"
#include "fwd_check.h"

enum { MAX_SAMPLES = 4096 };

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

typedef struct bench_buffers {
  CUdeviceptr q, k, v, o, lse;
  CUdeviceptr o_f32; /* --fp32-delta: O in fp32; else 0 */
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
  p.o_f32 = (float *)b->o_f32;
  for (int r = -1; r < reps; r++) {
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r], NULL))) return -1;
    if (gpu_launch_fwd(g, var, &p, NULL) != 0) return -1;
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r + 1], NULL))) return -1;
  }
  if (gpu_sync(g, 60, var->name) != 0) return -1;
  for (int r = 0; r < reps && *n < MAX_SAMPLES; r++)
    if (!GPU_OK(g, cu->cuEventElapsedTime(&ms[(*n)++], ev[2 * r], ev[2 * r + 1]))) return -1;
  return 0;
}

/* The same for a backward variant: its three kernels per timed launch, on
 * random Q, K, V, O, dO and a constant LSE (speed does not depend on it).
 * --deterministic times the deterministic mode (fa2_bwd_dq_det for dQ). */
static int deterministic;

static int time_bwd(gpu *g, const bwd_variant *var, const bench_buffers *b, CUdeviceptr dout,
                    CUdeviceptr grads, CUdeviceptr work, int N, int reps, CUevent *ev, float *ms,
                    int *n) {
  const rt_cuda_api *cu = g->cu;
  const long long width = 2048;
  const int d = var->head_dim, H = (int)(width / d), B = 16384 / N;
  const long long row = (long long)H * d, tokens = 16384;
  fa2_bwd_params p;
  memset(&p, 0, sizeof p);
  p.q = (const void *)b->q, p.k = (const void *)b->k, p.v = (const void *)b->v;
  p.o = (const void *)b->o, p.dout = (const void *)dout;
  p.o_f32 = (const float *)b->o_f32;
  p.dq = (void *)grads, p.dk = (void *)(grads + tokens * width * 2), p.dv = (void *)(grads + tokens * width * 4);
  p.lse = (const float *)b->lse;
  /* dQ's accumulator has the tiles' columns (H * tile_dim <= 2 * width: d = 8 on 16's) */
  p.dq_accum = (float *)work, p.delta = (float *)(work + tokens * H * var->tile_dim * 4);
  p.q_batch_stride = p.k_batch_stride = p.v_batch_stride = p.o_batch_stride = N * row;
  p.do_batch_stride = p.dq_batch_stride = p.dk_batch_stride = p.dv_batch_stride = N * row;
  p.q_row_stride = p.k_row_stride = p.v_row_stride = p.o_row_stride = row;
  p.do_row_stride = p.dq_row_stride = p.dk_row_stride = p.dv_row_stride = row;
  p.q_head_stride = p.k_head_stride = p.v_head_stride = p.o_head_stride = d;
  p.do_head_stride = p.dq_head_stride = p.dk_head_stride = p.dv_head_stride = d;
  p.batch = B, p.seqlen_q = p.seqlen_k = N, p.heads_q = p.heads_kv = H;
  p.scale = 1.f / sqrtf((float)d), p.inv_scale = 1.f / p.scale;
  p.deterministic = deterministic;
  for (int r = -1; r < reps; r++) {
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r], NULL))) return -1;
    if (gpu_launch_bwd(g, var, &p, 0, NULL)) return -1;
    if (r >= 0 && !GPU_OK(g, cu->cuEventRecord(ev[2 * r + 1], NULL))) return -1;
  }
  if (gpu_sync(g, 60, var->name) != 0) return -1;
  for (int r = 0; r < reps && *n < MAX_SAMPLES; r++)
    if (!GPU_OK(g, cu->cuEventElapsedTime(&ms[(*n)++], ev[2 * r], ev[2 * r + 1]))) return -1;
  return 0;
}

int main(int argc, char **argv) {
  const char *src = NULL, *json = NULL, *only = NULL, *spec = NULL;
  int reps = 5, rounds = 4, fp32_delta = 0;
  int seqlens[] = {512, 1024, 2048, 4096, 8192, 16384}, n_seqlens = 6;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--src") && i + 1 < argc) src = argv[++i];
    else if (!strcmp(argv[i], "--spec") && i + 1 < argc) spec = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--deterministic")) deterministic = 1;
    else if (!strcmp(argv[i], "--fp32-delta")) fp32_delta = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--seqlen") && i + 1 < argc) {
      seqlens[0] = atoi(argv[++i]);
      n_seqlens = 1;
    } else {
      int help = !strcmp(argv[i], "--help");
      fprintf(help ? stdout : stderr, "usage: fa2_bench (--src DIR | --spec FILE) [--json FILE] "
                                      "[--reps N] [--rounds R] [--only TEXT] [--seqlen N] [--deterministic] "
                                      "[--fp32-delta]\n");
      return help ? 0 : 2;
    }
  }
  if (!src == !spec || reps < 1 || reps > 100 || rounds < 1 || rounds * reps > MAX_SAMPLES ||
      seqlens[0] < 1 || 16384 % seqlens[0]) {
    fprintf(stderr, "fa2_bench: one of --src DIR or --spec FILE; --reps 1..100, --rounds >= 1, "
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
  bwd_variant *ball = NULL;
  int n_all = src ? gpu_load_variants(&g, src, &all) : gpu_render_variants(&g, spec, &all);
  int n_ball = spec ? gpu_render_bwd_variants(&g, spec, &ball) : 0, n_vars = 0, n_bwd = 0;
  if (n_all < 0 || n_ball < 0 || n_all + n_ball == 0) return 1;
  for (int i = 0; i < n_all; i++) /* keep the selected ones, in order */
    if (!only || strstr(all[i].name, only)) all[n_vars++] = all[i];
  for (int i = 0; i < n_ball; i++)
    if (!only || strstr(ball[i].name, only)) ball[n_bwd++] = ball[i];

  const rt_cuda_api *cu = g.cu;
  const size_t elems = 16384 * 2048; /* B*N tokens x H*d, the same for every shape */
  bench_buffers b = {gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 2),
                     gpu_alloc(&g, elems * 2), gpu_alloc(&g, elems * 4),
                     fp32_delta ? gpu_alloc(&g, elems * 4) : 0};
  CUdeviceptr dout = gpu_alloc(&g, elems * 2), grads = n_bwd ? gpu_alloc(&g, elems * 6) : 0;
  /* dQ's accumulator (up to twice the elements: d = 8 on the tiles of 16) and delta (up to
   * 2048 / 8 heads a token) */
  CUdeviceptr work = n_bwd ? gpu_alloc(&g, 2 * elems * 4 + 16384 * 256 * 4) : 0;
  if (!b.q || !b.k || !b.v || !b.o || !b.lse || !dout || (n_bwd && (!grads || !work)) ||
      (fp32_delta && !b.o_f32))
    return 1;
  /* Random data (never zeros: they run faster than real data). The values
   * are 16-bit patterns valid for both dtypes. */
  if (gpu_fill_uniform(&g, 64, 1, b.q, (long long)elems, 1, -2.f, 2.f) ||
      gpu_fill_uniform(&g, 64, 1, b.k, (long long)elems, 2, -2.f, 2.f) ||
      gpu_fill_uniform(&g, 64, 1, b.v, (long long)elems, 3, -2.f, 2.f) ||
      gpu_fill_uniform(&g, 64, 1, b.o, (long long)elems, 4, -1.f, 1.f) ||
      gpu_fill_uniform(&g, 64, 1, dout, (long long)elems, 5, -1.f, 1.f) ||
      !GPU_OK(&g, cu->cuMemsetD32(b.lse, 0x41200000u, elems)) || /* LSE = 10 */
      (fp32_delta && !GPU_OK(&g, cu->cuMemsetD32(b.o_f32, 0x3f000000u, elems)))) /* O = 0.5 */
    return 1;
  CUevent ev[200];
  for (int i = 0; i < 2 * reps; i++)
    if (!GPU_OK(&g, cu->cuEventCreate(&ev[i], RT_CU_EVENT_DEFAULT))) return 1;
  const int n_timed = n_vars + n_bwd;
  float *ms = malloc(sizeof(float) * (size_t)n_timed * MAX_SAMPLES);
  int *n_ms = calloc((size_t)n_timed, sizeof(int));
  FILE *out = json ? fopen(json, "w") : NULL;
  if (!ms || !n_ms || (json && !out)) return 1;
  if (out) fprintf(out, "[\n");
  int first = 1;
  printf("%-52s %6s %9s %8s\n", "variant", "N", "ms", "TFLOP/s");
  for (int si = 0; si < n_seqlens; si++) {
    const int N = seqlens[si];
    memset(n_ms, 0, sizeof(int) * (size_t)n_timed);
    for (int round = 0; round < rounds; round++)
      for (int k = 0; k < n_timed; k++) {
        const int vi = round % 2 ? n_timed - 1 - k : k; /* odd rounds backwards */
        float *s = ms + (size_t)vi * MAX_SAMPLES;
        if (vi < n_vars ? time_variant(&g, &all[vi], &b, N, reps, ev, s, &n_ms[vi])
                        : time_bwd(&g, &ball[vi - n_vars], &b, dout, grads, work, N, reps, ev, s, &n_ms[vi]))
          return 1;
      }
    for (int vi = 0; vi < n_timed; vi++) {
      const int bwd = vi >= n_vars;
      const char *name = bwd ? ball[vi - n_vars].name : all[vi].name;
      const int d = bwd ? ball[vi - n_vars].head_dim : all[vi].head_dim;
      const int causal = bwd ? ball[vi - n_vars].causal : all[vi].causal;
      float *s = ms + (size_t)vi * MAX_SAMPLES;
      qsort(s, (size_t)n_ms[vi], sizeof *s, cmp_float);
      const float med = s[n_ms[vi] / 2];
      const int H = 2048 / d, B = 16384 / N;
      const double flops = (bwd ? 2.5 : 1.0) * 4.0 * B * H * (double)N * N * d / (causal ? 2 : 1);
      const double tflops = flops / (med * 1e-3) / 1e12;
      printf("%-52s %6d %9.4f %8.1f\n", name, N, med, tflops);
      if (out)
        fprintf(out, "%s  {\"variant\": \"%s\", \"pass\": \"%s\", \"head_dim\": %d, \"causal\": %s, "
                     "\"seqlen\": %d, \"batch\": %d, \"heads\": %d, \"ms\": %.5f, \"tflops\": %.2f, "
                     "\"samples\": %d}",
                first ? "" : ",\n", name, bwd ? "bwd" : "fwd", d, causal ? "true" : "false", N, B,
                H, med, tflops, n_ms[vi]);
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
