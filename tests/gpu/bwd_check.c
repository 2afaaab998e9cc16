/* Backward kernels against float64 reference gradients on the GPU.
 *
 * For each (head_dim, dtype, causal) and shape: random Q, K, V, dO; the
 * float64 forward (O, LSE) and gradients, and FlashAttention's baseline (the
 * gradients PyTorch autograd gives through the plain same-precision
 * attention), all computed by tests/gpu/ref_attention.cu. The kernel under
 * test gets the correctly rounded O and the fp32 LSE, as a forward would hand
 * it. Pass: for each of dQ, dK, dV, max|dX - dX_ref| <= 2 max|dX_plain -
 * dX_ref|, and no NaN or unwritten value. With delta_fp32, the kernel reads
 * O in fp32 for delta (the precise-delta option) instead. In the
 * deterministic mode (dQ by fa2_bwd_dq_det) the kernels run twice, and the
 * second run must give the first one's bits. */
#include "bwd_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2.h"
#include "fa2_params.h"
#include "rt_tma.h"

typedef struct ref_fwd_params { /* ref_params of ref_attention.cu */
  CUdeviceptr q, k, v, o64, lse64, o_plain;
  long long q_batch_stride, q_row_stride, q_head_stride;
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  float scale;
} ref_fwd_params;

typedef struct ref_bwd_params {
  CUdeviceptr q, k, v, dout, o64, lse64, delta64, dq64, dk64, dv64, row_m, row_l, row_pdp;
  CUdeviceptr dq_plain, dk_plain, dv_plain;
  long long q_batch_stride, q_row_stride, q_head_stride;
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  float scale;
} ref_bwd_params;

static int launch_rows(gpu *g, CUmodule mod, const char *entry, void *params, long long rows) {
  CUfunction fn;
  if (!GPU_OK(g, g->cu->cuModuleGetFunction(&fn, mod, entry))) return -1;
  unsigned blocks = (unsigned)((rows * 32 + 127) / 128);
  void *args[] = {params};
  if (!GPU_OK(g, g->cu->cuLaunchKernel(fn, blocks ? blocks : 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL)))
    return -1;
  return gpu_sync(g, 120, entry);
}

/* max |x - ref| over n values; bad counts NaN/Inf (poison left behind). */
static double max_err(const unsigned short *x, const double *ref, long long n, int bf16, long long *bad) {
  double m = 0;
  for (long long i = 0; i < n; i++) {
    float f = gpu_half_to_float(x[i], bf16);
    if (isnan(f) || isinf(f)) {
      (*bad)++;
      continue;
    }
    double e = fabs(f - ref[i]);
    if (e > m) m = e;
  }
  return m;
}

int bwd_check(gpu *g, const bwd_variant *vars, int n_vars, const fwd_shape *shapes, int n_shapes,
              bwd_report_fn report, void *ctx) {
  const rt_cuda_api *cu = g->cu;
  int failures = 0;
  unsigned seed = 1000;
  for (int a = 0; a < n_vars; a++)
    for (int si = 0; si < n_shapes; si++)
      for (int mode = 0; mode < 3; mode++) { /* atomics, precise delta, deterministic */
        const bwd_variant *v = &vars[a];
        const fwd_shape *s = &shapes[si];
        const int fp32_delta = mode == 1, det = mode == 2;
        if (fp32_delta && si != n_shapes - 1) continue; /* the precise delta on the last shape */
        CUmodule mod = gpu_ref_module(g, v->head_dim, v->bf16);
        if (!mod) return -1;
        const long long d = v->head_dim, B = s->batch, Hq = s->heads_q, Hk = s->heads_kv;
        const long long nq = s->seqlen_q, nk = s->seqlen_k;
        const long long nQ = B * nq * Hq * d, nK = B * nk * Hk * d, nL = B * Hq * nq;
        /* Q, K, V, dO contiguous; dO like Q. */
        CUdeviceptr buf = gpu_alloc(g, (size_t)(2 * nQ + 2 * nK) * 2);
        CUdeviceptr q = buf, k = q + nQ * 2, vv = k + nK * 2, dout = vv + nK * 2;
        CUdeviceptr o64 = gpu_alloc(g, nQ * 8), lse64 = gpu_alloc(g, nL * 8), oplain = gpu_alloc(g, nQ * 2);
        CUdeviceptr delta64 = gpu_alloc(g, nL * 8), dq64 = gpu_alloc(g, nQ * 8);
        CUdeviceptr dk64 = gpu_alloc(g, nK * 8), dv64 = gpu_alloc(g, nK * 8);
        CUdeviceptr rstat = gpu_alloc(g, nL * 12);
        CUdeviceptr plain = gpu_alloc(g, (size_t)(nQ + 2 * nK) * 2);
        CUdeviceptr o = gpu_alloc(g, nQ * 2), of32 = gpu_alloc(g, nQ * 4), lse = gpu_alloc(g, nL * 4);
        CUdeviceptr grads = gpu_alloc(g, (size_t)(nQ + 2 * nK) * 2);
        const long long nA = B * nq * Hq * v->tile_dim; /* dQ's accumulator: the tiles' columns */
        /* accumulator, delta, and (ws tiles) padded LSE and delta: fa2_backward_workspace_size's layout */
        const long long nPad = (nL + 63) / 64 * 64 + 2 * B * Hq * ((nq + 63) / 64 * 64);
        CUdeviceptr work = gpu_alloc(g, (size_t)(nA + nPad) * 4);
        double *h64 = malloc((size_t)(nQ + 2 * nK) * 8);
        unsigned short *hp = malloc((size_t)(nQ + 2 * nK) * 2), *hg = malloc((size_t)(nQ + 2 * nK) * 2);
        if (!buf || !o64 || !lse64 || !oplain || !delta64 || !dq64 || !dk64 || !dv64 || !rstat ||
            !plain || !o || !of32 || !lse || !grads || !work || !h64 || !hp || !hg)
          return -1;
        if (gpu_fill_uniform(g, v->head_dim, v->bf16, buf, 2 * nQ + 2 * nK, seed++, -2.f, 2.f)) return -1;
        const float scale = (float)(1.0 / sqrt((double)d));
        ref_fwd_params fp = {q, k, vv, o64, lse64, oplain, nq * Hq * d, Hq * d, d, nk * Hk * d,
                             Hk * d, d, nk * Hk * d, Hk * d, d, (int)B, (int)nq, (int)nk, (int)Hq,
                             (int)Hk, v->causal, scale};
        ref_bwd_params bp = {q, k, vv, dout, o64, lse64, delta64, dq64, dk64, dv64, rstat,
                             rstat + nL * 4, rstat + nL * 8, plain, plain + nQ * 2,
                             plain + (nQ + nK) * 2, fp.q_batch_stride, fp.q_row_stride,
                             fp.q_head_stride, fp.k_batch_stride, fp.k_row_stride, fp.k_head_stride,
                             fp.v_batch_stride, fp.v_row_stride, fp.v_head_stride, (int)B, (int)nq,
                             (int)nk, (int)Hq, (int)Hk, v->causal, scale};
        CUfunction round_fn;
        long long n_round = nQ, n_lse = nL;
        CUdeviceptr zero = 0;
        void *ra[] = {&o64, &o, &of32, &n_round}, *rl[] = {&lse64, &zero, &lse, &n_lse};
        if (launch_rows(g, mod, "ref_f64", &fp, B * Hq * nq) ||
            launch_rows(g, mod, "ref_bwd_rows_f64", &bp, B * Hq * nq) ||
            launch_rows(g, mod, "ref_bwd_cols_f64", &bp, B * Hk * nk) ||
            launch_rows(g, mod, "ref_bwd_rows_plain", &bp, B * Hq * nq) ||
            launch_rows(g, mod, "ref_bwd_cols_plain", &bp, B * Hk * nk) ||
            !GPU_OK(g, cu->cuModuleGetFunction(&round_fn, mod, "round_f64")) ||
            !GPU_OK(g, cu->cuLaunchKernel(round_fn, 256, 1, 1, 256, 1, 1, 0, NULL, ra, NULL)) ||
            !GPU_OK(g, cu->cuLaunchKernel(round_fn, 256, 1, 1, 256, 1, 1, 0, NULL, rl, NULL)) ||
            gpu_sync(g, 60, "round_f64"))
          return -1;

        /* The kernel under test: poisoned outputs, three launches (twice when
         * deterministic: the first run's bits go to hfirst). */
        unsigned short *hfirst = NULL;
      again:
        if (!GPU_OK(g, cu->cuMemsetD16(grads, 0xFFFF, (size_t)(nQ + 2 * nK)))) return -1;
        fa2_bwd_params p;
        memset(&p, 0, sizeof p);
        p.q = (const void *)q, p.k = (const void *)k, p.v = (const void *)vv;
        p.o = (const void *)o, p.dout = (const void *)dout;
        p.dq = (void *)grads, p.dk = (void *)(grads + nQ * 2), p.dv = (void *)(grads + (nQ + nK) * 2);
        p.lse = (const float *)lse;
        p.o_f32 = fp32_delta ? (const float *)of32 : NULL;
        p.dq_accum = (float *)work, p.delta = (float *)(work + nA * 4);
        p.q_batch_stride = p.o_batch_stride = p.do_batch_stride = p.dq_batch_stride = nq * Hq * d;
        p.q_row_stride = p.o_row_stride = p.do_row_stride = p.dq_row_stride = Hq * d;
        p.q_head_stride = p.o_head_stride = p.do_head_stride = p.dq_head_stride = d;
        p.k_batch_stride = p.v_batch_stride = p.dk_batch_stride = p.dv_batch_stride = nk * Hk * d;
        p.k_row_stride = p.v_row_stride = p.dk_row_stride = p.dv_row_stride = Hk * d;
        p.k_head_stride = p.v_head_stride = p.dk_head_stride = p.dv_head_stride = d;
        p.batch = (int)B, p.seqlen_q = (int)nq, p.seqlen_k = (int)nk;
        p.heads_q = (int)Hq, p.heads_kv = (int)Hk, p.scale = scale, p.inv_scale = 1.f / scale;
        p.deterministic = det;
        /* (persistent: the atomics mode on 13 blocks, so each walks several items) */
        if (gpu_launch_bwd(g, v, &p, mode == 0 ? 13 : 0, NULL) || gpu_sync(g, 30, v->name)) return -1;
        if (!GPU_OK(g, cu->cuMemcpyDtoH(h64, dq64, nQ * 8)) ||
            !GPU_OK(g, cu->cuMemcpyDtoH(h64 + nQ, dk64, nK * 8)) ||
            !GPU_OK(g, cu->cuMemcpyDtoH(h64 + nQ + nK, dv64, nK * 8)) ||
            !GPU_OK(g, cu->cuMemcpyDtoH(hp, plain, (size_t)(nQ + 2 * nK) * 2)) ||
            !GPU_OK(g, cu->cuMemcpyDtoH(hg, grads, (size_t)(nQ + 2 * nK) * 2)))
          return -1;
        if (det && !hfirst) {
          hfirst = malloc((size_t)(nQ + 2 * nK) * 2);
          if (!hfirst) return -1;
          memcpy(hfirst, hg, (size_t)(nQ + 2 * nK) * 2);
          goto again;
        }
        bwd_result r;
        memset(&r, 0, sizeof r);
        long long ignore = 0;
        const long long off[3] = {0, nQ, nQ + nK}, len[3] = {nQ, nK, nK};
        r.pass = 1;
        for (int x = 0; x < 3; x++) {
          r.err[x] = max_err(hg + off[x], h64 + off[x], len[x], v->bf16, &r.bad_values);
          r.plain[x] = max_err(hp + off[x], h64 + off[x], len[x], v->bf16, &ignore);
          /* 4e-6: fp32 rounding where the plain attention is exact. With one key
           * per row (seqlen 1) dS = P (dP - delta) is 0 in exact arithmetic, and
           * the plain attention gets 0, but dP (tensor cores) and delta (the
           * preprocess) add the same ~16-sized products in different orders: a
           * few ulps, 1.3e-6 in dQ and dK on the H200 for the unchanged
           * mma.sync fa2_bwd_dq_det and the wgmma fa2_bwd alike (the inputs'
           * seed decides). dK sums such a residual over every query row that
           * sees the key (dQ over every key): with one key and 239 rows, 1.3e-5
           * in dK on the H100, so the allowance grows with the root of the
           * count, random-signed ulps. dP and delta each sum d products, so it
           * grows with the root of d / 64 too: 4.05e-6 in dQ at d = 128 (fp16,
           * seqlen 1, the m64n128w8s3wg tile; main's templates on an H100 and
           * an H200 alike, session 18), over the 4e-6 d = 64 allows. */
          const double slack = 4e-6 * sqrt((double)(x == 0 ? nk : nq) * (double)d / 64);
          if (!(r.err[x] <= 2 * r.plain[x] + slack)) r.pass = 0;
        }
        if (r.bad_values) r.pass = 0;
        r.fp32_delta = fp32_delta;
        r.deterministic = det;
        r.bit_identical = det && !memcmp(hfirst, hg, (size_t)(nQ + 2 * nK) * 2);
        if (det && !r.bit_identical) r.pass = 0;
        free(hfirst);
        failures += !r.pass;
        report(ctx, v, s, &r);
        CUdeviceptr all[] = {buf, o64, lse64, oplain, delta64, dq64, dk64, dv64, rstat, plain, o, of32, lse, grads, work};
        for (size_t x = 0; x < sizeof all / sizeof *all; x++) gpu_free(g, all[x]);
        free(h64);
        free(hp);
        free(hg);
      }
  return failures;
}

int gpu_launch_bwd(gpu *g, const bwd_variant *v, const fa2_bwd_params *p, int walk_blocks, CUstream stream) {
  static rt_tma_cache cache; /* one process, one thread: maps by shape, re-addressed */
  static int cache_ready;
  const rt_cuda_api *cu = g->cu;
  const long long nq = p->seqlen_q, nk = p->seqlen_k;
  fa2_bwd_params args = *p;
  rt_bwd_maps maps;
  memset(&maps, 0, sizeof maps);
  void *params[] = {&args, &maps}; /* (fa2_bwd alone takes the maps) */
  if (!cache_ready) cache_ready = rt_tma_cache_init(&cache) == 0;
  if (v->ws && nq > 0 && nk > 0 && p->batch > 0 &&
      rt_tma_bwd_maps(cu, cache_ready ? &cache : NULL, p, (int)nk, v->bf16, v->head_dim, v->block_n, &maps) != FA2_OK) {
    fprintf(stderr, "%s: %s\n", v->name, fa2_last_error());
    return -1;
  }
  const unsigned B = (unsigned)p->batch, Hq = (unsigned)p->heads_q, Hk = (unsigned)p->heads_kv;
  const unsigned t = (unsigned)v->threads, det_t = (unsigned)RT_BWD_DET_THREADS(v->threads);
  const unsigned row_block = (unsigned)FA2_ROW_BLOCK(v->threads, v->tile_dim);
  const unsigned rows_grid = (unsigned)((nq + row_block - 1) / row_block);
  const long long nq_pre = v->ws ? (nq + 63) / 64 * 64 : nq; /* ws: fa2_bwd_pre also fills the padded rows */
  const unsigned pre_grid = (unsigned)((nq_pre + row_block - 1) / row_block);
  const unsigned det_grid = (unsigned)((nq + det_t / 2 - 1) / (det_t / 2)); /* 16 rows a warp */
  const unsigned key_grid = (unsigned)((nk + v->block_n - 1) / v->block_n);
  /* persistent: the walk over items of two key blocks (bwd_ws.cuh.tpl ws_walk_at), one block an SM
   * (walk_blocks: fewer); the others: one block a key block */
  const unsigned items = (key_grid + 1) / 2 * Hk * B, walk_max = (unsigned)(walk_blocks ? walk_blocks : g->sms);
  const unsigned walk_grid = items < walk_max ? items : walk_max;
  const unsigned smem = (unsigned)v->smem_bytes;
  const int det = p->deterministic;
  return (nq > 0 && !GPU_OK(g, cu->cuLaunchKernel(v->pre, pre_grid, Hq, B, t, 1, 1, 0, stream, params, NULL))) ||
                 (nk > 0 && /* no keys: no key blocks (as rt_launch) */
                  !GPU_OK(g, v->persistent
                                 ? cu->cuLaunchKernel(v->main, walk_grid, 1, 1, t, 1, 1, smem, stream, params, NULL)
                                 : cu->cuLaunchKernel(v->main, key_grid, Hk, B, t, 1, 1, smem, stream, params, NULL))) ||
                 (nq > 0 && !det &&
                  !GPU_OK(g, cu->cuLaunchKernel(v->dq, rows_grid, Hq, B, t, 1, 1, 0, stream, params, NULL))) ||
                 (nq > 0 && det &&
                  !GPU_OK(g, cu->cuLaunchKernel(v->dq_det, det_grid, Hq, B, det_t, 1, 1, smem, stream, params, NULL)))
             ? -1
             : 0;
}
