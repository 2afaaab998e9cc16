/* rt_smoke: fa2_forward end to end on a real GPU against a float64 CPU
 * attention, through the public API only (JIT, caches, launch on a stream,
 * strides, GQA, causal, bf16/fp16). With --bench it also times start-up:
 * cold JIT per variant, warm disk-cache load, launch overhead, and
 * fa2_prepare_spec of the default spec, cold and warm. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fa2.h"
#include "rt_cuda.h"
#include "rt_smoke.h"

#define CK(call)                                                                        \
  do {                                                                                  \
    CUresult r_ = (call);                                                               \
    if (r_ != RT_CUDA_SUCCESS) {                                                        \
      char b_[256];                                                                     \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                         \
             rt_cuda_strerror(r_, b_, sizeof b_));                                      \
      return -1;                                                                        \
    }                                                                                   \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t to_fp16(float f) {
  _Float16 h = (_Float16)f;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}
static float from_fp16(uint16_t u) {
  _Float16 h;
  memcpy(&h, &u, 2);
  return (float)h;
}

typedef struct smoke_case {
  const char *what;
  fa2_dtype dtype;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, causal;
  fa2_stab stab;
  int packed_qkv; /* q, k, v as views of one (B, N, 3, H, d) buffer */
} smoke_case;

/* float64 softmax(scale q k^T) v on the dtype-rounded inputs. */
static void reference(const smoke_case *c, const float *q, const float *k, const float *v,
                      long long qs[3], long long ks[3], double scale, double *o, double *lse) {
  int g = c->heads_q / c->heads_kv, d = c->head_dim;
  double *s = malloc(sizeof(double) * (size_t)(c->seqlen_k ? c->seqlen_k : 1));
  for (int b = 0; b < c->batch; b++)
    for (int h = 0; h < c->heads_q; h++)
      for (int i = 0; i < c->seqlen_q; i++) {
        const float *qi = q + b * qs[0] + i * qs[1] + h * qs[2];
        double m = -INFINITY;
        for (int j = 0; j < c->seqlen_k; j++) {
          s[j] = -INFINITY;
          if (c->causal && j > i + c->seqlen_k - c->seqlen_q) continue;
          const float *kj = k + b * ks[0] + j * ks[1] + (h / g) * ks[2];
          double dot = 0;
          for (int x = 0; x < d; x++) dot += (double)qi[x] * kj[x];
          s[j] = scale * dot;
          if (s[j] > m) m = s[j];
        }
        double l = 0;
        double *oi = o + (((size_t)b * c->seqlen_q + i) * c->heads_q + h) * d;
        memset(oi, 0, sizeof(double) * d);
        for (int j = 0; j < c->seqlen_k; j++) {
          if (s[j] == -INFINITY) continue;
          double p = exp(s[j] - m);
          l += p;
          const float *vj = v + b * ks[0] + j * ks[1] + (h / g) * ks[2];
          for (int x = 0; x < d; x++) oi[x] += p * vj[x];
        }
        for (int x = 0; x < d; x++) oi[x] = l > 0 ? oi[x] / l : 0;
        lse[((size_t)b * c->heads_q + h) * c->seqlen_q + i] = l > 0 ? m + log(l) : INFINITY;
      }
  free(s);
}

/* Runs one case; returns 0 (pass), 1 (mismatch) or -1 (error). */
static int run_case(const rt_cuda_api *cu, fa2_context *ctx, CUstream stream,
                    const smoke_case *c) {
  int B = c->batch, Nq = c->seqlen_q, Nk = c->seqlen_k, H = c->heads_q, Hk = c->heads_kv;
  int d = c->head_dim;
  /* Host copies in dtype and float (rounded). */
  long long qs[3], ks[3];
  size_t nq, nk;
  if (c->packed_qkv) { /* one buffer (B, N, 3, H, d); requires Nq == Nk and H == Hk */
    qs[0] = ks[0] = (long long)Nq * 3 * H * d;
    qs[1] = ks[1] = 3LL * H * d;
    qs[2] = ks[2] = d;
    nq = nk = (size_t)B * Nq * 3 * H * d;
  } else {
    qs[0] = (long long)Nq * H * d, qs[1] = (long long)H * d, qs[2] = d;
    ks[0] = (long long)Nk * Hk * d, ks[1] = (long long)Hk * d, ks[2] = d;
    nq = (size_t)B * Nq * H * d;
    nk = (size_t)B * Nk * Hk * d;
  }
  size_t no = (size_t)B * Nq * H * d, nl = (size_t)B * H * Nq;
  uint16_t *hq = malloc(2 * nq), *hk = malloc(2 * (nk ? nk : 1)), *hv = malloc(2 * (nk ? nk : 1));
  float *fq = malloc(4 * nq), *fk = malloc(4 * (nk ? nk : 1)), *fv = malloc(4 * (nk ? nk : 1));
  uint16_t *ho = malloc(2 * no);
  float *hl = malloc(4 * nl);
  double *ro = malloc(8 * no), *rl = malloc(8 * nl);
  srand(1234);
  for (size_t i = 0; i < nq; i++) {
    float x = (float)rand() / RAND_MAX * 2 - 1;
    hq[i] = c->dtype == FA2_BF16 ? to_bf16(x) : to_fp16(x);
    fq[i] = c->dtype == FA2_BF16 ? from_bf16(hq[i]) : from_fp16(hq[i]);
  }
  for (size_t i = 0; i < nk; i++) {
    float x = (float)rand() / RAND_MAX * 2 - 1, y = (float)rand() / RAND_MAX * 2 - 1;
    hk[i] = c->dtype == FA2_BF16 ? to_bf16(x) : to_fp16(x);
    hv[i] = c->dtype == FA2_BF16 ? to_bf16(y) : to_fp16(y);
    fk[i] = c->dtype == FA2_BF16 ? from_bf16(hk[i]) : from_fp16(hk[i]);
    fv[i] = c->dtype == FA2_BF16 ? from_bf16(hv[i]) : from_fp16(hv[i]);
  }
  const float *rq = fq, *rk = fk, *rv = fv;
  if (c->packed_qkv) { /* q, k, v: heads blocks 0, 1, 2 of the same rows */
    rk = fq + H * d;
    rv = fq + 2 * H * d;
  }
  double scale = 1.0 / sqrt((double)d);
  reference(c, rq, rk, rv, qs, ks, scale, ro, rl);

  CUdeviceptr dq = 0, dk = 0, dv = 0, dO = 0, dl = 0;
  CK(cu->cuMemAlloc(&dq, 2 * nq));
  CK(cu->cuMemcpyHtoD(dq, hq, 2 * nq));
  if (!c->packed_qkv && nk) {
    CK(cu->cuMemAlloc(&dk, 2 * nk));
    CK(cu->cuMemAlloc(&dv, 2 * nk));
    CK(cu->cuMemcpyHtoD(dk, hk, 2 * nk));
    CK(cu->cuMemcpyHtoD(dv, hv, 2 * nk));
  }
  CK(cu->cuMemAlloc(&dO, 2 * no));
  CK(cu->cuMemAlloc(&dl, 4 * nl));
  CK(cu->cuMemsetD16(dO, 0x7fff, no)); /* NaN in bf16 and fp16: unwritten output shows */
  CK(cu->cuMemsetD32(dl, 0x7fc00000u, nl));

  fa2_fwd_args a = {0};
  void *pk = c->packed_qkv ? (void *)(uintptr_t)(dq + 2ULL * H * d) : (void *)(uintptr_t)dk;
  void *pv = c->packed_qkv ? (void *)(uintptr_t)(dq + 4ULL * H * d) : (void *)(uintptr_t)dv;
  a.q = (fa2_tensor){(void *)(uintptr_t)dq, c->dtype, qs[0], qs[1], qs[2]};
  a.k = (fa2_tensor){pk, c->dtype, ks[0], ks[1], ks[2]};
  a.v = (fa2_tensor){pv, c->dtype, ks[0], ks[1], ks[2]};
  a.o = (fa2_tensor){(void *)(uintptr_t)dO, c->dtype, (long long)Nq * H * d, (long long)H * d, d};
  a.lse = (float *)(uintptr_t)dl;
  a.batch = B;
  a.seqlen_q = Nq;
  a.seqlen_k = Nk;
  a.heads_q = H;
  a.heads_kv = Hk;
  a.head_dim = d;
  a.causal = c->causal;
  a.stab = c->stab;
  int rc = 0;
  fa2_status st = fa2_forward(ctx, &a, stream);
  if (st != FA2_OK) {
    printf("FAIL %-44s fa2_forward: %s\n", c->what, fa2_last_error());
    rc = -1;
  } else {
    CK(cu->cuStreamSynchronize(stream));
    CK(cu->cuMemcpyDtoH(ho, dO, 2 * no));
    CK(cu->cuMemcpyDtoH(hl, dl, 4 * nl));
    double max_err = 0, max_lse = 0;
    long nan = 0;
    for (size_t i = 0; i < no; i++) {
      float x = c->dtype == FA2_BF16 ? from_bf16(ho[i]) : from_fp16(ho[i]);
      if (!isfinite(x)) nan++;
      else if (fabs(x - ro[i]) > max_err) max_err = fabs(x - ro[i]);
    }
    for (size_t i = 0; i < nl; i++) {
      if (isinf(rl[i]) ? !(isinf(hl[i]) && hl[i] > 0) : !isfinite(hl[i])) nan++;
      else if (!isinf(rl[i]) && fabs(hl[i] - rl[i]) > max_lse) max_lse = fabs(hl[i] - rl[i]);
    }
    /* O in [-1, 1]: a few units of the dtype's rounding (P rounded, O rounded). */
    double tol = c->dtype == FA2_BF16 ? 2e-2 : 4e-3;
    rc = (nan || max_err > tol || max_lse > 1e-3) ? 1 : 0;
    printf("%s %-44s max|O-ref| %.2e (tol %.0e)  max|LSE-ref| %.2e  bad %ld\n",
           rc ? "FAIL" : "ok  ", c->what, max_err, tol, max_lse, nan);
  }
  cu->cuMemFree(dq);
  if (dk) cu->cuMemFree(dk);
  if (dv) cu->cuMemFree(dv);
  cu->cuMemFree(dO);
  cu->cuMemFree(dl);
  free(hq), free(hk), free(hv), free(fq), free(fk), free(fv), free(ho), free(hl), free(ro), free(rl);
  return rc;
}

static const smoke_case cases[] = {
    {"bf16 d64 B2 N128 H4/2 (GQA)", FA2_BF16, 2, 128, 128, 4, 2, 64, 0, FA2_STAB_NONE, 0},
    {"bf16 d64 B2 N128 H4/2 causal robust", FA2_BF16, 2, 128, 128, 4, 2, 64, 1, FA2_STAB_ROBUST, 0},
    {"bf16 d128 B1 Nq17 Nk100 H2 causal paper", FA2_BF16, 1, 17, 100, 2, 2, 128, 1, FA2_STAB_PAPER, 0},
    {"bf16 d128 B3 N1 H2 robust", FA2_BF16, 3, 1, 1, 2, 2, 128, 0, FA2_STAB_ROBUST, 0},
    {"fp16 d64 B1 N200 H3 robust", FA2_FP16, 1, 200, 200, 3, 3, 64, 0, FA2_STAB_ROBUST, 0},
    {"bf16 d64 B2 N77 H2 packed QKV causal", FA2_BF16, 2, 77, 77, 2, 2, 64, 1, FA2_STAB_NONE, 1},
    {"bf16 d64 causal Nq100 > Nk20 (empty rows)", FA2_BF16, 1, 100, 20, 1, 1, 64, 1, FA2_STAB_NONE, 0},
};

/* Time of one forward at a training shape (B*N = 16k tokens, H*d = 2048),
 * median of 10 after a warm-up; inputs are zeros (timing only). */
static int time_forward(const rt_cuda_api *cu, fa2_context *ctx, CUstream stream, int d,
                        int causal, fa2_stab stab, double *ms, double *tflops) {
  int B = 8, N = 2048, H = 2048 / d;
  size_t n = (size_t)B * N * H * d;
  CUdeviceptr buf;
  CK(cu->cuMemAlloc(&buf, 2 * n * 4 + 4 * (size_t)B * H * N));
  CK(cu->cuMemsetD8(buf, 0, 2 * n * 4));
  char *p = (char *)(uintptr_t)buf;
  fa2_fwd_args a = {0};
  long long st[3] = {(long long)N * H * d, (long long)H * d, d};
  a.q = (fa2_tensor){p, FA2_BF16, st[0], st[1], st[2]};
  a.k = (fa2_tensor){p + 2 * n, FA2_BF16, st[0], st[1], st[2]};
  a.v = (fa2_tensor){p + 4 * n, FA2_BF16, st[0], st[1], st[2]};
  a.o = (fa2_tensor){p + 6 * n, FA2_BF16, st[0], st[1], st[2]};
  a.lse = (float *)(p + 8 * n);
  a.batch = B;
  a.seqlen_q = a.seqlen_k = N;
  a.heads_q = a.heads_kv = H;
  a.head_dim = d;
  a.causal = causal;
  a.stab = stab;
  CUevent e0, e1;
  CK(cu->cuEventCreate(&e0, RT_CU_EVENT_DEFAULT));
  CK(cu->cuEventCreate(&e1, RT_CU_EVENT_DEFAULT));
  float t[10];
  int rc = fa2_forward(ctx, &a, stream) == FA2_OK ? 0 : -1;
  for (int i = 0; rc == 0 && i < 10; i++) {
    CK(cu->cuEventRecord(e0, stream));
    if (fa2_forward(ctx, &a, stream) != FA2_OK) rc = -1;
    CK(cu->cuEventRecord(e1, stream));
    CK(cu->cuEventSynchronize(e1));
    CK(cu->cuEventElapsedTime(&t[i], e0, e1));
  }
  if (rc) printf("FAIL timing d%d: %s\n", d, fa2_last_error());
  for (int i = 0; i < 10; i++) /* insertion sort: median */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      float x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  *ms = (t[4] + t[5]) / 2;
  *tflops = 4.0 * B * H * (double)N * N * d / (causal ? 2 : 1) / (*ms * 1e-3) / 1e12;
  cu->cuEventDestroy(e0);
  cu->cuEventDestroy(e1);
  cu->cuMemFree(buf);
  return rc;
}

/* What a GPT-style trainer uses (specs/default.lua): bf16, d 64 and 128,
 * causal or not, none / paper / robust: correctness and speed, one row each. */
static int default_spec_table(const rt_cuda_api *cu, fa2_context *ctx, CUstream stream) {
  static const char *const modes[] = {"none", "paper", "robust"};
  int failures = 0;
  printf("\n%-44s %-10s %s\n", "default spec through fa2_forward", "check",
         "time at B8 N2048 H*d=2048");
  for (int d = 64; d <= 128; d += 64)
    for (int causal = 0; causal < 2; causal++)
      for (int m = 0; m < 3; m++) {
        char what[64];
        snprintf(what, sizeof what, "bf16 d%d%s %s B2 N300 H4/2", d, causal ? " causal" : "",
                 modes[m]);
        smoke_case c = {what, FA2_BF16, 2, 300, 300, 4, 2, d, causal, (fa2_stab)m, 0};
        int r = run_case(cu, ctx, stream, &c);
        double ms = 0, tf = 0;
        if (time_forward(cu, ctx, stream, d, causal, (fa2_stab)m, &ms, &tf) != 0) r = -1;
        printf("     %-44s %.3f ms  %.0f TFLOP/s\n", "", ms, tf);
        failures += r != 0;
      }
  return failures;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int bench(const rt_cuda_api *cu, CUstream stream) {
  char dir[] = "/tmp/fa2bench.XXXXXX";
  if (!mkdtemp(dir)) return -1;
  fa2_options o = {0};
  o.cache_dir = dir;
  fa2_context *ctx;
  fa2_cache_stats s;
  /* Trainer start-up, cold: every forward variant of the default spec. */
  double t0 = now_ms();
  if (fa2_create(&ctx, &o) != FA2_OK || fa2_prepare_spec(ctx, NULL) != FA2_OK) {
    printf("bench: %s\n", fa2_last_error());
    return -1;
  }
  double cold = now_ms() - t0;
  fa2_stats(ctx, &s);
  unsigned long long n = s.misses;
  printf("default spec, cold start (%llu variants compiled in parallel): %.0f ms; NVRTC %.0f ms "
         "in all, %.0f ms per variant (target <= 2000)\n",
         n, cold, s.compile_ms, n ? s.compile_ms / n : 0);
  fa2_destroy(ctx);
  /* Warm start-up, as a trainer's second run: five times, since one sample
   * moved from 17 to 53 ms between two machines of the same kind. */
  enum { WARM_RUNS = 5 };
  double warm[WARM_RUNS];
  for (int w = 0; w < WARM_RUNS; w++) {
    t0 = now_ms();
    if (fa2_create(&ctx, &o) != FA2_OK || fa2_prepare_spec(ctx, NULL) != FA2_OK) return -1;
    warm[w] = now_ms() - t0;
    fa2_stats(ctx, &s);
    if (w < WARM_RUNS - 1) fa2_destroy(ctx);
  }
  qsort(warm, WARM_RUNS, sizeof *warm, cmp_double);
  printf("default spec, warm start (%llu from disk cache), %d runs: median %.1f ms (target <= 50 ms), "
         "min %.1f, max %.1f; %.2f ms per variant\n", s.disk_hits, WARM_RUNS, warm[WARM_RUNS / 2],
         warm[0], warm[WARM_RUNS - 1], s.disk_hits ? warm[WARM_RUNS / 2] / s.disk_hits : 0);
  /* Launch overhead: tiny problem, many calls, host time per call. */
  CUdeviceptr buf;
  CK(cu->cuMemAlloc(&buf, 1 << 20));
  fa2_fwd_args a = {0};
  void *p = (void *)(uintptr_t)buf;
  a.q = a.k = a.v = a.o = (fa2_tensor){p, FA2_BF16, 64 * 64, 64, 64};
  a.o.data = (char *)p + 65536;
  a.lse = (float *)((char *)p + 131072);
  a.batch = a.heads_q = a.heads_kv = 1;
  a.seqlen_q = a.seqlen_k = 64;
  a.head_dim = 64;
  a.stab = FA2_STAB_ROBUST;
  if (fa2_forward(ctx, &a, stream) != FA2_OK) return -1;
  CK(cu->cuStreamSynchronize(stream));
  enum { N = 20000 };
  t0 = now_ms();
  for (int i = 0; i < N; i++) fa2_forward(ctx, &a, stream);
  double per = (now_ms() - t0) / N * 1e3;
  CK(cu->cuStreamSynchronize(stream));
  printf("fa2_forward host time per call (warm, in-memory hit, incl. cuLaunchKernel): %.2f us\n",
         per);
  cu->cuMemFree(buf);
  fa2_destroy(ctx);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return -1;
  return 0;
}

int rt_smoke(const rt_cuda_api *cu, int with_bench) {
  fa2_options o = {0};
  o.log_level = FA2_LOG_INFO; /* where each kernel came from, and how long it took */
  fa2_context *ctx;
  if (fa2_create(&ctx, &o) != FA2_OK) {
    printf("FAIL fa2_create: %s\n", fa2_last_error());
    return 1;
  }
  fa2_cache_stats s;
  fa2_stats(ctx, &s);
  printf("runtime smoke test on %s (%s), cache %s\n", s.device_name, s.arch, s.cache_dir);
  CUstream stream;
  CK(cu->cuStreamCreate(&stream, 0));
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    failures += run_case(cu, ctx, stream, &cases[i]) != 0;
  if (with_bench) failures += default_spec_table(cu, ctx, stream);
  fa2_stats(ctx, &s);
  printf("stats: %llu launches, %llu memory hits, %llu AOT, %llu disk, %llu compiled "
         "(%.0f ms NVRTC)\n",
         s.launches, s.memory_hits, s.aot_hits, s.disk_hits, s.misses, s.compile_ms);
  fa2_destroy(ctx);
  if (with_bench && bench(cu, stream) != 0) failures++;
  cu->cuStreamDestroy(stream);
  return failures;
}
