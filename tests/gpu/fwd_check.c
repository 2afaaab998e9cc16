/* Forward kernels against the float64 reference on the GPU.
 *
 * For each (head_dim, dtype, causal) and shape: fill Q, K, V with random
 * 16-bit values, compute the float64 reference and the plain same-precision
 * attention (tests/gpu/ref_attention.cu), then for every stabilization mode:
 * poison O and LSE, launch, and apply FlashAttention's rule:
 *   max|O - O_ref| <= 2 * max|O_plain - O_ref|, no NaN, every element written,
 *   LSE within 1e-3 of the reference (+inf exactly where no key is visible).
 */
#include "fwd_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2.h"
#include "fa2_params.h"
#include "lab.h"
#include "rt_tma.h"

#define FA2_PHILOX_FN static inline
#include "fa2_philox.h"

enum { BALANCE_SEED = 0x5eed }; /* balanced's draws: a seed that is not 0 */

typedef struct ref_params {
  CUdeviceptr q, k, v, o64, lse64, o_plain;
  long long q_batch_stride, q_row_stride, q_head_stride;
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  float scale;
} ref_params;

/* The reference module for one (head_dim, dtype), compiled on first use (one slot
 * per multiple of 8: head dims 32 and 48 once shared the slot of head_dim / 32). */
CUmodule gpu_ref_module(gpu *g, int head_dim, int bf16) {
  static CUmodule cache[2][256 / 8 + 1];
  if (head_dim < 8 || head_dim > 256 || head_dim % 8) {
    fprintf(stderr, "gpu_ref_module: head_dim %d: allowed multiples of 8 from 8 to 256\n", head_dim);
    return NULL;
  }
  CUmodule *slot = &cache[bf16][head_dim / 8];
  if (*slot) return *slot;
  char *src = gpu_read_file("tests/gpu/ref_attention.cu");
  if (!src) {
    fprintf(stderr, "cannot read tests/gpu/ref_attention.cu (run from the repository root)\n");
    return NULL;
  }
  char d1[32], d2[32];
  snprintf(d1, sizeof d1, "-DHEAD_DIM=%d", head_dim);
  snprintf(d2, sizeof d2, "-DDTYPE_BF16=%d", bf16);
  const char *defs[] = {"--std=c++17", d1, d2, NULL};
  if (gpu_module(g, src, "ref_attention.cu", NULL, defs, slot) != 0) *slot = NULL;
  free(src);
  return *slot;
}

static int launch_ref(gpu *g, CUmodule mod, const char *entry, ref_params *rp) {
  CUfunction fn;
  if (!GPU_OK(g, g->cu->cuModuleGetFunction(&fn, mod, entry))) return -1;
  long long rows = (long long)rp->batch * rp->heads_q * rp->seqlen_q;
  unsigned blocks = (unsigned)((rows * 32 + 127) / 128);
  void *args[] = {rp};
  if (!GPU_OK(g, g->cu->cuLaunchKernel(fn, blocks ? blocks : 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL)))
    return -1;
  return gpu_sync(g, 60, entry);
}

int gpu_fill_uniform(gpu *g, int head_dim, int bf16, CUdeviceptr x, long long n, unsigned seed,
                     float lo, float hi) {
  CUmodule mod = gpu_ref_module(g, head_dim, bf16);
  CUfunction fn;
  if (!mod) return -1;
  if (!GPU_OK(g, g->cu->cuModuleGetFunction(&fn, mod, "fill_uniform"))) return -1;
  void *args[] = {&x, &n, &seed, &lo, &hi};
  return GPU_OK(g, g->cu->cuLaunchKernel(fn, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL)) ? 0 : -1;
}

/* Device copy of one shape's inputs and references. */
typedef struct case_data {
  CUdeviceptr qkv, o64, lse64, o_plain, o, lse;
  fa2_fwd_params p; /* pointers and strides into qkv, o, lse */
  long long n_out, n_lse;
  double *h_o64, *h_lse64;
  unsigned short *h_plain, *h_o;
  float *h_lse;
  double plain_err;
} case_data;

static void case_free(gpu *g, case_data *c) {
  gpu_free(g, c->qkv);
  gpu_free(g, c->o64);
  gpu_free(g, c->lse64);
  gpu_free(g, c->o_plain);
  gpu_free(g, c->o);
  gpu_free(g, c->lse);
  free(c->h_o64);
  free(c->h_lse64);
  free(c->h_plain);
  free(c->h_o);
  free(c->h_lse);
  memset(c, 0, sizeof *c);
}

/* Lays out Q, K, V either as separate (B, N, H, d) tensors or packed in one
 * (B, N, Hq + 2 Hkv, d) buffer (strided views, as a fused QKV projection
 * gives), fills them and computes the references. */
static int case_setup(gpu *g, const fwd_shape *s, int head_dim, int bf16, int causal, unsigned seed,
                      case_data *c) {
  memset(c, 0, sizeof *c);
  const rt_cuda_api *cu = g->cu;
  CUmodule mod = gpu_ref_module(g, head_dim, bf16);
  if (!mod) return -1;
  const long long d = head_dim, B = s->batch, Hq = s->heads_q, Hk = s->heads_kv;
  const long long nq = s->seqlen_q, nk = s->seqlen_k;
  long long elems;
  fa2_fwd_params *p = &c->p;
  if (s->packed) { /* requires nq == nk */
    const long long row = (Hq + 2 * Hk) * d;
    elems = B * nq * row;
    p->q_batch_stride = p->k_batch_stride = p->v_batch_stride = nq * row;
    p->q_row_stride = p->k_row_stride = p->v_row_stride = row;
    p->q_head_stride = p->k_head_stride = p->v_head_stride = d;
  } else {
    elems = B * nq * Hq * d + 2 * B * nk * Hk * d;
    p->q_batch_stride = nq * Hq * d, p->q_row_stride = Hq * d, p->q_head_stride = d;
    p->k_batch_stride = p->v_batch_stride = nk * Hk * d;
    p->k_row_stride = p->v_row_stride = Hk * d;
    p->k_head_stride = p->v_head_stride = d;
  }
  c->n_out = B * nq * Hq * d;
  c->n_lse = B * Hq * nq;
  c->qkv = gpu_alloc(g, (size_t)elems * 2);
  c->o64 = gpu_alloc(g, (size_t)c->n_out * 8);
  c->lse64 = gpu_alloc(g, (size_t)c->n_lse * 8);
  c->o_plain = gpu_alloc(g, (size_t)c->n_out * 2);
  c->o = gpu_alloc(g, (size_t)c->n_out * 2);
  c->lse = gpu_alloc(g, (size_t)c->n_lse * 4);
  c->h_o64 = malloc((size_t)c->n_out * 8);
  c->h_lse64 = malloc((size_t)c->n_lse * 8);
  c->h_plain = malloc((size_t)c->n_out * 2);
  c->h_o = malloc((size_t)c->n_out * 2);
  c->h_lse = malloc((size_t)c->n_lse * 4);
  if (!c->qkv || !c->o64 || !c->lse64 || !c->o_plain || !c->o || !c->lse || !c->h_o64 ||
      !c->h_lse64 || !c->h_plain || !c->h_o || !c->h_lse)
    return -1;
  CUdeviceptr q = c->qkv, k, v;
  if (s->packed) {
    k = q + (size_t)(Hq * d) * 2;
    v = k + (size_t)(Hk * d) * 2;
  } else {
    k = q + (size_t)(B * nq * Hq * d) * 2;
    v = k + (size_t)(B * nk * Hk * d) * 2;
  }
  if (gpu_fill_uniform(g, head_dim, bf16, c->qkv, elems, seed, -2.f, 2.f) != 0) return -1;
  p->q = (const void *)q, p->k = (const void *)k, p->v = (const void *)v;
  p->o = (void *)c->o, p->lse = (float *)c->lse;
  p->o_batch_stride = nq * Hq * d, p->o_row_stride = Hq * d, p->o_head_stride = d;
  p->batch = (int)B, p->seqlen_q = (int)nq, p->seqlen_k = (int)nk;
  p->heads_q = (int)Hq, p->heads_kv = (int)Hk;
  p->scale = (float)(1.0 / sqrt((double)d)), p->inv_scale = 1.f / p->scale;

  ref_params rp = {q, k, v, c->o64, c->lse64, c->o_plain,
                   p->q_batch_stride, p->q_row_stride, p->q_head_stride,
                   p->k_batch_stride, p->k_row_stride, p->k_head_stride,
                   p->v_batch_stride, p->v_row_stride, p->v_head_stride,
                   p->batch, p->seqlen_q, p->seqlen_k, p->heads_q, p->heads_kv, causal, p->scale};
  if (launch_ref(g, mod, "ref_f64", &rp) || launch_ref(g, mod, "ref_plain", &rp)) return -1;
  if (!GPU_OK(g, cu->cuMemcpyDtoH(c->h_o64, c->o64, (size_t)c->n_out * 8)) ||
      !GPU_OK(g, cu->cuMemcpyDtoH(c->h_lse64, c->lse64, (size_t)c->n_lse * 8)) ||
      !GPU_OK(g, cu->cuMemcpyDtoH(c->h_plain, c->o_plain, (size_t)c->n_out * 2)))
    return -1;
  c->plain_err = 0;
  for (long long i = 0; i < c->n_out; i++) {
    double e = fabs(gpu_half_to_float(c->h_plain[i], bf16) - c->h_o64[i]);
    if (!(e <= c->plain_err)) c->plain_err = e; /* NaN propagates as failure later */
  }
  return 0;
}

int gpu_launch_fwd(gpu *g, const fwd_variant *v, const fa2_fwd_params *p, CUstream stream) {
  static rt_tma_cache cache; /* one process, one thread: maps by shape, re-addressed */
  static int cache_ready;
  rt_fwd_maps maps;
  fa2_fwd_params args = *p;
  void *params[] = {&args, &maps};
  if (!cache_ready) cache_ready = rt_tma_cache_init(&cache) == 0;
  if (v->ws && rt_tma_fwd_maps(g->cu, cache_ready ? &cache : NULL, p, 0, v->bf16, v->head_dim,
                               v->block_n, &maps) != FA2_OK) {
    fprintf(stderr, "%s: %s\n", v->name, fa2_last_error());
    return -1;
  }
  unsigned gx = (unsigned)((p->seqlen_q + v->block_m - 1) / v->block_m), gy = (unsigned)p->heads_q,
           gz = (unsigned)p->batch;
  /* A persistent kernel takes one block per SM and a tile counter, as the runtime
   * launches it (rt_launch.c); FA2_PERSISTENT=0 gives it the full grid instead. */
  static CUdeviceptr counter;
  const char *env = getenv("FA2_PERSISTENT");
  if (v->persistent && (long long)gx * gy * gz > g->sms && !(env && !strcmp(env, "0"))) {
    if (!counter && (!GPU_OK(g, g->cu->cuMemAlloc(&counter, sizeof(int))) ||
                     !GPU_OK(g, g->cu->cuMemsetD32(counter, 0, 1)) || !GPU_OK(g, g->cu->cuCtxSynchronize())))
      return -1;
    args.tile_counter = (int *)counter, gx = (unsigned)g->sms, gy = gz = 1;
  }
  return GPU_OK(g, g->cu->cuLaunchKernel(v->fn, gx, gy, gz, (unsigned)v->threads, 1, 1, (unsigned)v->smem_bytes,
                                         stream, params, NULL))
             ? 0
             : -1;
}

/* Poisons O and LSE, launches the variant once and reads both back. */
static int launch_once(gpu *g, const fwd_variant *v, case_data *c) {
  const rt_cuda_api *cu = g->cu;
  if (!GPU_OK(g, cu->cuMemsetD16(c->o, 0xFFFF, (size_t)c->n_out)) || /* NaN in bf16 and fp16 */
      !GPU_OK(g, cu->cuMemsetD32(c->lse, 0x7FC00001u, (size_t)c->n_lse)))
    return -1;
  if (gpu_launch_fwd(g, v, &c->p, NULL) != 0 || gpu_sync(g, 20, v->name) != 0 ||
      !GPU_OK(g, cu->cuMemcpyDtoH(c->h_o, c->o, (size_t)c->n_out * 2)) ||
      !GPU_OK(g, cu->cuMemcpyDtoH(c->h_lse, c->lse, (size_t)c->n_lse * 4)))
    return -1;
  return 0;
}

/* Balanced rounding (round_balanced.cuh.tpl): launched once more with its fp32 O
 * written, each row of O must be lab_round_row_bisect of that row, bit for bit.
 * Returns the elements that differ, or -1. */
static long long unbalanced_elements(gpu *g, const fwd_variant *v, case_data *c) {
  const rt_cuda_api *cu = g->cu;
  const int d = v->head_dim;
  CUdeviceptr o32 = gpu_alloc(g, (size_t)c->n_out * 4);
  float *h32 = malloc((size_t)c->n_out * 4), *row = malloc(sizeof(float) * (size_t)d);
  long long bad = -1;
  if (o32 && h32 && row) {
    c->p.o_f32 = (float *)o32;
    if (launch_once(g, v, c) == 0 && GPU_OK(g, cu->cuMemcpyDtoH(h32, o32, (size_t)c->n_out * 4))) {
      bad = 0;
      const long long rows = c->n_out / d; /* (batch, seqlen_q, heads_q) */
      for (long long i = 0; i < rows; i++) {
        const long long h = i % c->p.heads_q, t = i / c->p.heads_q % c->p.seqlen_q;
        const long long bh = i / c->p.heads_q / c->p.seqlen_q * c->p.heads_q + h;
        const unsigned draw = fa2_round_draw(BALANCE_SEED, 0, (unsigned long long)bh, (unsigned)t);
        lab_round_row_bisect(h32 + i * d, d, v->bf16 ? LAB_BF16 : LAB_FP16, draw, row);
        for (int j = 0; j < d; j++) bad += gpu_half_to_float(c->h_o[i * d + j], v->bf16) != row[j];
      }
    }
    c->p.o_f32 = NULL;
  }
  gpu_free(g, o32);
  free(h32);
  free(row);
  return bad;
}

/* Launches one variant twice on one case and applies the pass rule. */
static int check_one(gpu *g, const fwd_variant *v, case_data *c, fwd_result *res) {
  memset(res, 0, sizeof *res);
  c->p.dropout_seed = BALANCE_SEED;
  /* Twice on freshly poisoned outputs: a value that is left unwritten or
   * raced over shows as NaN or as bits that differ between the runs. */
  unsigned short *first_o = malloc((size_t)c->n_out * 2);
  float *first_lse = malloc((size_t)c->n_lse * 4);
  int rc = first_o && first_lse ? 0 : -1;
  for (int run = 0; rc == 0 && run < 2; run++) {
    if (run == 1) {
      memcpy(first_o, c->h_o, (size_t)c->n_out * 2);
      memcpy(first_lse, c->h_lse, (size_t)c->n_lse * 4);
    }
    rc = launch_once(g, v, c);
  }
  res->same_bits = rc == 0 && !memcmp(first_o, c->h_o, (size_t)c->n_out * 2) &&
                   !memcmp(first_lse, c->h_lse, (size_t)c->n_lse * 4);
  free(first_o);
  free(first_lse);
  if (rc != 0) return -1;
  for (long long i = 0; i < c->n_out; i++) {
    float o = gpu_half_to_float(c->h_o[i], v->bf16);
    if (isnan(o) || isinf(o)) {
      res->bad_values++;
      continue;
    }
    double e = fabs(o - c->h_o64[i]);
    if (e > res->max_err) res->max_err = e;
  }
  for (long long i = 0; i < c->n_lse; i++) {
    double ref = c->h_lse64[i], got = c->h_lse[i];
    if (isinf(ref) || isinf(got) || isnan(got)) {
      if (!(isinf(ref) && isinf(got) && got > 0)) res->bad_values++;
      continue;
    }
    double e = fabs(got - ref);
    if (e > res->lse_err) res->lse_err = e;
  }
  res->plain_err = c->plain_err;
  res->unbalanced = v->balanced ? unbalanced_elements(g, v, c) : 0;
  res->pass = res->bad_values == 0 && res->same_bits && res->max_err <= 2 * c->plain_err &&
              res->lse_err <= 1e-3 && res->unbalanced == 0;
  return 0;
}

int fwd_check(gpu *g, const fwd_variant *vars, int n_vars, const fwd_shape *shapes, int n_shapes,
              fwd_report_fn report, void *ctx) {
  int failures = 0;
  unsigned seed = 1;
  /* Group the variants by what the reference depends on. */
  for (int a = 0; a < n_vars; a++) {
    int first = 1;
    for (int b = 0; b < a; b++)
      if (vars[b].head_dim == vars[a].head_dim && vars[b].bf16 == vars[a].bf16 &&
          vars[b].causal == vars[a].causal)
        first = 0;
    if (!first) continue;
    for (int si = 0; si < n_shapes; si++) {
      case_data c;
      if (case_setup(g, &shapes[si], vars[a].head_dim, vars[a].bf16, vars[a].causal, seed++, &c)) {
        case_free(g, &c);
        return -1;
      }
      for (int b = a; b < n_vars; b++) {
        const fwd_variant *v = &vars[b];
        if (v->head_dim != vars[a].head_dim || v->bf16 != vars[a].bf16 || v->causal != vars[a].causal)
          continue;
        fwd_result r;
        if (check_one(g, v, &c, &r) != 0) {
          case_free(g, &c);
          return -1;
        }
        failures += !r.pass;
        report(ctx, v, &shapes[si], &r);
      }
      case_free(g, &c);
    }
  }
  return failures;
}
