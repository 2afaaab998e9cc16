/* fa2 bias --gpu: the same inputs through the generated kernels. The device
 * work goes through libfa2rt (fa2_forward picks, JIT-compiles and caches the
 * variant) and the driver table it loads; the scoring is the lab's. Cases may
 * run on several threads: the device work holds the handle's lock, the float64
 * reference and the scores (most of the time) run beside it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bias.h"
#include "fa2.h"
#include "rt_cuda.h"

struct cli_bias_gpu {
  const rt_cuda_api *cu;
  fa2_context *ctx;
  CUcontext cuctx;
  char name[256];
  char arch[16]; /* "sm_90" */
  int varlen;    /* sequences of a varlen batch the heads are split over; 0: fixed length */
  unsigned long long seed; /* balanced's draws (the lab's num.seed) */
  pthread_mutex_t lock;    /* the device work of one case and mode at a time */
};

#define CU_TRY(g, call)                                                                  \
  do {                                                                                   \
    CUresult r_ = (call);                                                                \
    if (r_ != RT_CUDA_SUCCESS) {                                                         \
      char b_[160];                                                                      \
      snprintf(err, errlen, "%s: %s", #call, rt_cuda_strerror(r_, b_, sizeof b_));      \
      goto fail;                                                                         \
    }                                                                                    \
  } while (0)

int cli_bias_gpu_open(cli_bias_gpu **out, const char *tuning_db, char *err, size_t errlen) {
  *out = NULL;
  cli_bias_gpu *g = calloc(1, sizeof *g);
  if (!g) return snprintf(err, errlen, "out of memory"), -1;
  int n = 0;
  CUdevice dev;
  if (!(g->cu = rt_cuda_load(err, errlen)) || g->cu->cuDeviceGetCount(&n) != RT_CUDA_SUCCESS || n == 0) {
    if (g->cu) snprintf(err, errlen, "no CUDA device");
    free(g);
    return 1;
  }
  CU_TRY(g, g->cu->cuDeviceGet(&dev, 0));
  CU_TRY(g, g->cu->cuDeviceGetName(g->name, sizeof g->name, dev));
  CU_TRY(g, g->cu->cuDevicePrimaryCtxRetain(&g->cuctx, dev));
  CU_TRY(g, g->cu->cuCtxSetCurrent(g->cuctx));
  fa2_options opt = {0};
  opt.tuning_db = tuning_db;
  fa2_cache_stats st;
  if (fa2_create(&g->ctx, &opt) != FA2_OK) {
    snprintf(err, errlen, "%s", fa2_last_error());
    goto fail;
  }
  if (fa2_stats(g->ctx, &st) != FA2_OK) {
    snprintf(err, errlen, "%s", fa2_last_error());
    fa2_destroy(g->ctx);
    goto fail;
  }
  snprintf(g->arch, sizeof g->arch, "%s", st.arch);
  pthread_mutex_init(&g->lock, NULL);
  *out = g;
  return 0;
fail:
  free(g);
  return -1;
}

void cli_bias_gpu_close(cli_bias_gpu *g) {
  if (!g) return;
  fa2_destroy(g->ctx);
  pthread_mutex_destroy(&g->lock);
  free(g);
}

const char *cli_bias_gpu_name(const cli_bias_gpu *g) { return g->name; }
void cli_bias_gpu_set_varlen(cli_bias_gpu *g, int sequences) { g->varlen = sequences; }
void cli_bias_gpu_set_seed(cli_bias_gpu *g, unsigned long long seed) { g->seed = seed; }
const char *cli_bias_gpu_arch(const cli_bias_gpu *g) { return g->arch; }

static void to_half(const float *x, unsigned short *h, long long n, lab_dtype t) {
  for (long long i = 0; i < n; i++) h[i] = t == LAB_FP16 ? lab_f32_to_fp16(x[i]) : lab_f32_to_bf16(x[i]);
}

/* Index of element (row r, head h, column x) of a (1, N, H, d) tensor in its
 * varlen layout over `seqs` sequences: sequence h / (H / seqs) is rows
 * (h / (H / seqs)) * N.. of a (seqs * N, H / seqs, d) tensor. */
static long long varlen_index(long long i, const lab_shape *s, int seqs) {
  const int d = s->head_dim, hs = s->heads_q / seqs;
  const long long x = i % d, h = i / d % s->heads_q, r = i / d / s->heads_q;
  return ((h / hs * s->seqlen_q + r) * hs + h % hs) * d + x;
}

int cli_bias_gpu_run(cli_bias_gpu *g, const lab_case *c, const lab_inputs *in,
                     const lab_mode *modes, int n_modes, const double *betas, int n_betas,
                     double eps, lab_result *results, char *err, size_t errlen) {
  const lab_shape *s = &in->shape;
  const long long n = lab_q_elems(s), bytes = n * 2, rows = lab_rows(s);
  const rt_cuda_api *cu = g->cu;
  CUdeviceptr dq = 0, dk = 0, dv = 0, dout = 0, dlse = 0, do32 = 0, dalibi = 0, dsinks = 0, dcu = 0;
  /* --varlen splits the heads over sequences; sinks are one per query head of a call,
   * which such a split cannot give each sequence: a sinks case runs fixed-length. */
  const int seqs = s->sinks ? 0 : g->varlen;
  unsigned short *h = malloc(sizeof(unsigned short) * n), *hv = seqs ? malloc(sizeof(unsigned short) * n) : NULL;
  float *o = malloc(sizeof(float) * n), *o32 = malloc(sizeof(float) * n);
  double *o_ref = malloc(sizeof(double) * n), *lse_ref = malloc(sizeof(double) * rows);
  int rc = -1, locked = 0;
  if (!h || !o || !o32 || !o_ref || !lse_ref || (seqs && !hv)) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (seqs && (s->batch != 1 || s->seqlen_q != s->seqlen_k || s->heads_q % seqs || s->heads_kv != s->heads_q)) {
    snprintf(err, errlen, "--varlen: the suite's %d heads do not split over %d sequences", s->heads_q, seqs);
    goto fail;
  }
  /* the float64 reference and its scores, beside the other threads' device work */
  lab_ref_forward(s, in->q, in->k, in->v, o_ref, lse_ref);
  const double tied = lab_tied_rate(s, in->q, in->k);
  lab_reference_score ref;
  lab_score_reference(in, o_ref, &ref);
  pthread_mutex_lock(&g->lock), locked = 1;
  CU_TRY(g, cu->cuCtxSetCurrent(g->cuctx));
  CU_TRY(g, cu->cuMemAlloc(&dq, bytes));
  CU_TRY(g, cu->cuMemAlloc(&dk, bytes));
  CU_TRY(g, cu->cuMemAlloc(&dv, bytes));
  CU_TRY(g, cu->cuMemAlloc(&dout, bytes));
  CU_TRY(g, cu->cuMemAlloc(&dlse, rows * 4));
  CU_TRY(g, cu->cuMemAlloc(&do32, n * 4)); /* the precise-delta option's fp32 O */
  if (seqs) { /* offsets 0, N, 2N, ... on the device */
    int cu_seqlens[CLI_BIAS_VARLEN_SEQS + 1];
    for (int i = 0; i <= seqs && i <= CLI_BIAS_VARLEN_SEQS; i++) cu_seqlens[i] = i * s->seqlen_q;
    CU_TRY(g, cu->cuMemAlloc(&dcu, sizeof cu_seqlens));
    CU_TRY(g, cu->cuMemcpyHtoD(dcu, cu_seqlens, sizeof cu_seqlens));
  }
  const float *src[3] = {in->q, in->k, in->v};
  const CUdeviceptr dst[3] = {dq, dk, dv};
  for (int i = 0; i < 3; i++) {
    to_half(src[i], h, n, in->dtype);
    for (long long j = 0; seqs && j < n; j++) hv[varlen_index(j, s, seqs)] = h[j];
    CU_TRY(g, cu->cuMemcpyHtoD(dst[i], seqs ? hv : h, bytes));
  }
  /* the case's modifiers: ALiBi slopes and sinks, heads_q fp32 each */
  if (s->alibi) {
    CU_TRY(g, cu->cuMemAlloc(&dalibi, s->heads_q * 4));
    CU_TRY(g, cu->cuMemcpyHtoD(dalibi, s->alibi, s->heads_q * 4));
  }
  if (s->sinks) {
    CU_TRY(g, cu->cuMemAlloc(&dsinks, s->heads_q * 4));
    CU_TRY(g, cu->cuMemcpyHtoD(dsinks, s->sinks, s->heads_q * 4));
  }
  pthread_mutex_unlock(&g->lock), locked = 0;
  const long long rs = (long long)s->heads_q / (seqs ? seqs : 1) * s->head_dim; /* row stride, elements */
  for (int b = 0; b < n_betas; b++) {
    for (int m = 0; m < n_modes; m++) {
      const double beta = betas[b];
      const fa2_dtype dt = in->dtype == LAB_FP16 ? FA2_FP16 : FA2_BF16;
      fa2_fwd_args a = {0};
      a.q = (fa2_tensor){(void *)dq, dt, s->seqlen_q * rs, rs, s->head_dim};
      a.k = (fa2_tensor){(void *)dk, dt, s->seqlen_k * rs, rs, s->head_dim};
      a.v = (fa2_tensor){(void *)dv, dt, s->seqlen_k * rs, rs, s->head_dim};
      a.o = (fa2_tensor){(void *)dout, dt, s->seqlen_q * rs, rs, s->head_dim};
      a.lse = (float *)dlse;
      a.batch = s->batch;
      a.seqlen_q = s->seqlen_q;
      a.seqlen_k = s->seqlen_k;
      a.heads_q = s->heads_q;
      a.heads_kv = s->heads_kv;
      if (seqs) { /* seqs sequences of N rows, H / seqs heads each */
        a.batch = seqs;
        a.heads_q = a.heads_kv = s->heads_q / seqs;
        a.cu_seqlens_q = a.cu_seqlens_k = (const int *)dcu;
        a.total_q = a.total_k = seqs * s->seqlen_q;
      }
      a.head_dim = s->head_dim;
      a.causal = s->causal;
      a.stab = modes[m] == LAB_PAPER      ? FA2_STAB_PAPER
               : modes[m] == LAB_ROBUST   ? FA2_STAB_ROBUST
               : modes[m] == LAB_BALANCED ? FA2_STAB_BALANCED
                                          : FA2_STAB_NONE;
      a.dropout_seed = g->seed; /* balanced's draws, as the lab's */
      a.beta = beta;
      a.eps = eps;
      a.o_fp32 = (float *)do32;
      a.window = s->window, a.window_left = s->window_left, a.window_right = s->window_right;
      a.softcap = (float)s->softcap;
      a.alibi_slopes = (const float *)dalibi;
      if (seqs) a.alibi_batch_stride = a.heads_q; /* sequence b's heads are b * H / seqs.. */
      a.sinks = (const float *)dsinks;
      pthread_mutex_lock(&g->lock), locked = 1;
      CU_TRY(g, cu->cuMemsetD16(dout, 0x7fc1, n)); /* poison: NaN where nothing is written */
      if (fa2_forward(g->ctx, &a, NULL) != FA2_OK) {
        snprintf(err, errlen, "fa2_forward: %s", fa2_last_error());
        goto fail;
      }
      CU_TRY(g, cu->cuCtxSynchronize());
      CU_TRY(g, cu->cuMemcpyDtoH(seqs ? hv : h, dout, bytes));
      CU_TRY(g, cu->cuMemcpyDtoH(seqs ? o : o32, do32, n * 4)); /* (o: scratch until below) */
      pthread_mutex_unlock(&g->lock), locked = 0;
      for (long long i = 0; seqs && i < n; i++) {
        h[i] = hv[varlen_index(i, s, seqs)];
        o32[i] = o[varlen_index(i, s, seqs)];
      }
      for (long long i = 0; i < n; i++) o[i] = in->dtype == LAB_FP16 ? lab_fp16_to_f32(h[i]) : lab_bf16_to_f32(h[i]);
      lab_result *res = &results[b * n_modes + m];
      lab_score(c, in, modes[m], beta, eps, o, o32, o_ref, &ref, res);
      res->tied_rate = tied;
    }
  }
  rc = 0;
fail:
  if (!locked) pthread_mutex_lock(&g->lock);
  if (dq) cu->cuMemFree(dq);
  if (dk) cu->cuMemFree(dk);
  if (dv) cu->cuMemFree(dv);
  if (dout) cu->cuMemFree(dout);
  if (dlse) cu->cuMemFree(dlse);
  if (do32) cu->cuMemFree(do32);
  if (dalibi) cu->cuMemFree(dalibi);
  if (dsinks) cu->cuMemFree(dsinks);
  if (dcu) cu->cuMemFree(dcu);
  pthread_mutex_unlock(&g->lock);
  free(h);
  free(hv);
  free(o);
  free(o32);
  free(o_ref);
  free(lse_ref);
  return rc;
}
