/* rt_launch: fa2_forward and fa2_backward, the launch path.
 *
 * Hot path: validate, pack the request, one lock-free memory-cache lookup,
 * fill the kernel's argument block, cuLaunchKernel. Everything slow (Lua,
 * disk, NVRTC, module loads) happens only on a memory-cache miss. */
#include <math.h>
#include <string.h>

#include "fa2_params.h"
#include "rt_context.h"
#include "rt_dropout.h"
#include "rt_error.h"
#include "rt_kernel.h"
#include "rt_head_dim.h"
#include "rt_validate.h"

/* The fields the forward's and the backward's argument blocks share by name: the
 * scale (0: 1/sqrt(d)) and the reciprocals the kernels multiply by (an IEEE division
 * there compiles to a call whose saved registers spill), varlen, score modifiers. */
#define SHARED_PARAMS(p, a)                                                              \
  do {                                                                                   \
    (p)->scale = (a)->scale != 0 ? (a)->scale : 1.0f / sqrtf((float)(a)->head_dim);      \
    (p)->inv_scale = 1.0f / (p)->scale;                                                  \
    (p)->cu_seqlens_q = (a)->cu_seqlens_q, (p)->cu_seqlens_k = (a)->cu_seqlens_k;        \
    (p)->total_q = (a)->total_q;                                                         \
    (p)->window_left = (a)->window ? (a)->window_left : -1;                              \
    (p)->window_right = (a)->window ? (a)->window_right : -1;                            \
    (p)->alibi_slopes = (a)->alibi_slopes, (p)->alibi_batch_stride = (a)->alibi_batch_stride; \
    (p)->softcap = (a)->softcap;                                                         \
    (p)->cap_in = (a)->softcap > 0 ? (p)->scale * (1.0f / (a)->softcap) : 0.0f;          \
    (p)->cap_out = (a)->softcap > 0 ? (a)->softcap * (p)->inv_scale : 0.0f;              \
    RT_DROPOUT_PARAMS(p, a);                                                             \
    (p)->sinks = (a)->sinks;                                                             \
  } while (0)

static void fill_params(const fa2_fwd_args *a, fa2_fwd_params *p) {
  memset(p, 0, sizeof *p);
  p->q = a->q.data;
  p->k = a->k.data;
  p->v = a->v.data;
  p->o = a->o.data;
  p->lse = a->lse;
  p->q_batch_stride = a->q.batch_stride;
  p->q_row_stride = a->q.seq_stride;
  p->q_head_stride = a->q.head_stride;
  p->k_batch_stride = a->k.batch_stride;
  p->k_row_stride = a->k.seq_stride;
  p->k_head_stride = a->k.head_stride;
  p->v_batch_stride = a->v.batch_stride;
  p->v_row_stride = a->v.seq_stride;
  p->v_head_stride = a->v.head_stride;
  p->o_batch_stride = a->o.batch_stride;
  p->o_row_stride = a->o.seq_stride;
  p->o_head_stride = a->o.head_stride;
  p->batch = a->batch;
  p->seqlen_q = a->seqlen_q;
  p->seqlen_k = a->seqlen_k;
  p->heads_q = a->heads_q;
  p->heads_kv = a->heads_kv;
  p->o_f32 = a->o_fp32;
  SHARED_PARAMS(p, a);
}

fa2_status fa2_forward(fa2_context *ctx, const fa2_fwd_args *a, void *stream) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  int rc = rt_validate_fwd(a);
  if (rc != FA2_OK) return (fa2_status)rc;
  if (rt_fwd_is_noop(a)) return FA2_OK;

  rt_request req;
  rt_request_fwd(a, rt_tuning_has_lengths(ctx->tuning), &req);
  rt_kernel *k = rt_mc_get(&ctx->mc, &req, sizeof req);
  if (k)
    atomic_fetch_add_explicit(&ctx->memory_hits, 1, memory_order_relaxed);
  else if ((rc = rt_kernel_for_request(ctx, &req, stream, 1, &k)) != FA2_OK)
    return (fa2_status)rc;

  return (fa2_status)rt_launch_fwd(ctx, k, a, stream);
}

/* The persistent forward's tile counter (fwd_ws.cu.tpl) for `stream`: one int per
 * stream, 0 between launches (each launch's last block resets it; launches on one
 * stream run in order). Made on a stream's first persistent launch, never while it
 * captures a graph; 0 when there is none, and the launch takes a full grid instead
 * (slower at short lengths, not wrong). */
static CUdeviceptr tile_counter(fa2_context *ctx, void *stream) {
  CUdeviceptr c = 0;
  pthread_mutex_lock(&ctx->ws_lock);
  for (int i = 0; i < ctx->n_tile_counters && !c; i++)
    if (ctx->tile_counters[i].stream == stream) c = ctx->tile_counters[i].counter;
  int capturing = 1;
  CUcontext saved;
  if (!c && ctx->n_tile_counters < RT_TILE_COUNTERS && rt_stream_capturing(ctx, stream, &capturing) == FA2_OK &&
      !capturing && rt_ctx_enter(ctx, &saved) == FA2_OK) {
    if (ctx->cu->cuMemAlloc(&c, sizeof(int)) != RT_CUDA_SUCCESS || ctx->cu->cuMemsetD32(c, 0, 1) != RT_CUDA_SUCCESS ||
        ctx->cu->cuCtxSynchronize() != RT_CUDA_SUCCESS) { /* 0 before the stream's first launch */
      if (c) ctx->cu->cuMemFree(c);
      c = 0;
    } else {
      ctx->tile_counters[ctx->n_tile_counters].stream = stream;
      ctx->tile_counters[ctx->n_tile_counters++].counter = c;
    }
    rt_ctx_leave(ctx, saved);
  }
  pthread_mutex_unlock(&ctx->ws_lock);
  return c;
}

int rt_launch_fwd(fa2_context *ctx, const rt_kernel *k, const fa2_fwd_args *a, void *stream) {
  fa2_fwd_params p;
  fill_params(a, &p);
  unsigned grid_x = (unsigned)((a->seqlen_q + k->block_m - 1) / k->block_m);
  unsigned grid_y = (unsigned)a->heads_q, grid_z = (unsigned)a->batch;
  /* A persistent kernel with more work items than SMs: one block per SM, taking
   * items from the counter (its loads for the next item overlap the last one's end). */
  if (k->persistent && (long long)grid_x * grid_y * grid_z > ctx->sm_count && ctx->sm_count > 0) {
    CUdeviceptr c = tile_counter(ctx, stream);
    if (c) p.tile_counter = (int *)c, grid_x = (unsigned)ctx->sm_count, grid_y = grid_z = 1;
  }
  rt_fwd_maps maps; /* ws: the TMA maps, the kernel's second parameter */
  void *params[] = {&p, &maps};
  CUcontext saved;
  int rc;
  if (k->ws && (rc = rt_tma_fwd_maps(ctx->cu, &ctx->tma, &p, a->total_k, a->q.dtype == FA2_BF16,
                                     a->head_dim, k->block_n, &maps)) != FA2_OK)
    return rc;
  if ((rc = rt_ctx_enter(ctx, &saved)) != FA2_OK) return rc;
  CUresult r = ctx->cu->cuLaunchKernel(k->fn[0], grid_x, grid_y, grid_z, (unsigned)k->threads, 1, 1,
                                       (unsigned)k->smem_bytes, (CUstream)stream, params, NULL);
  rt_ctx_leave(ctx, saved);
  if (r != RT_CUDA_SUCCESS)
    return rt_cuda_fail(r, "cuLaunchKernel(%s, grid %u x %u x %u, %d threads, %d bytes shared "
                           "memory)",
                        k->name, grid_x, grid_y, grid_z, k->threads, k->smem_bytes);
  atomic_fetch_add_explicit(&ctx->launches, 1, memory_order_relaxed);
  return FA2_OK;
}

static void set_strides(const fa2_tensor *t, long long *batch, long long *row, long long *head) {
  *batch = t->batch_stride;
  *row = t->seq_stride;
  *head = t->head_stride;
}

static void fill_bwd_params(const fa2_bwd_args *a, void *ws, fa2_bwd_params *p) {
  memset(p, 0, sizeof *p);
  p->q = a->q.data, p->k = a->k.data, p->v = a->v.data, p->o = a->o.data;
  p->dout = a->dout.data, p->dq = a->dq.data, p->dk = a->dk.data, p->dv = a->dv.data;
  p->lse = a->lse;
  p->o_f32 = a->delta == FA2_DELTA_FP32 ? a->o_fp32 : NULL;
  p->dq_accum = (float *)ws;
  p->delta = (float *)((char *)ws + rt_bwd_accum_bytes(a));
  set_strides(&a->q, &p->q_batch_stride, &p->q_row_stride, &p->q_head_stride);
  set_strides(&a->k, &p->k_batch_stride, &p->k_row_stride, &p->k_head_stride);
  set_strides(&a->v, &p->v_batch_stride, &p->v_row_stride, &p->v_head_stride);
  set_strides(&a->o, &p->o_batch_stride, &p->o_row_stride, &p->o_head_stride);
  set_strides(&a->dout, &p->do_batch_stride, &p->do_row_stride, &p->do_head_stride);
  set_strides(&a->dq, &p->dq_batch_stride, &p->dq_row_stride, &p->dq_head_stride);
  set_strides(&a->dk, &p->dk_batch_stride, &p->dk_row_stride, &p->dk_head_stride);
  set_strides(&a->dv, &p->dv_batch_stride, &p->dv_row_stride, &p->dv_head_stride);
  p->batch = a->batch, p->seqlen_q = a->seqlen_q, p->seqlen_k = a->seqlen_k;
  p->heads_q = a->heads_q, p->heads_kv = a->heads_kv;
  p->deterministic = a->deterministic;
  SHARED_PARAMS(p, a);
  p->dsinks = a->dsinks;
}

/* The caller's workspace, or the context's (grown under ws_lock; the old
 * buffer is freed only after the device is idle; never while stream captures). */
static int bwd_workspace(fa2_context *ctx, const fa2_bwd_args *a, void *stream, void **ws) {
  if (a->workspace) {
    *ws = a->workspace;
    return FA2_OK;
  }
  size_t need = fa2_backward_workspace_size(a);
  pthread_mutex_lock(&ctx->ws_lock);
  int rc = FA2_OK, capturing = 0;
  if (ctx->ws_bytes < need && (rc = rt_stream_capturing(ctx, stream, &capturing)) == FA2_OK &&
      capturing)
    rc = rt_set_error(FA2_ERR_CAPTURING,
                      "the backward's workspace must grow to %zu bytes while the stream is "
                      "capturing a CUDA graph (allocating would invalidate the capture): pass "
                      "args->workspace (fa2_backward_workspace_size bytes) or run one backward "
                      "of this size before the capture",
                      need);
  if (rc == FA2_OK && ctx->ws_bytes < need) {
    CUcontext saved;
    if ((rc = rt_ctx_enter(ctx, &saved)) == FA2_OK) {
      CUresult r = RT_CUDA_SUCCESS;
      if (ctx->ws) {
        r = ctx->cu->cuCtxSynchronize(); /* in-flight backward passes may still use it */
        if (r == RT_CUDA_SUCCESS) r = ctx->cu->cuMemFree(ctx->ws);
        ctx->ws = 0, ctx->ws_bytes = 0;
      }
      if (r == RT_CUDA_SUCCESS) r = ctx->cu->cuMemAlloc(&ctx->ws, need);
      if (r == RT_CUDA_SUCCESS)
        ctx->ws_bytes = need;
      else
        rc = rt_cuda_fail(r, "cuMemAlloc(%zu bytes of backward workspace)", need);
      rt_ctx_leave(ctx, saved);
    }
  }
  *ws = (void *)ctx->ws;
  pthread_mutex_unlock(&ctx->ws_lock);
  return rc;
}

fa2_status fa2_backward(fa2_context *ctx, const fa2_bwd_args *a, void *stream) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  int rc = rt_validate_bwd(a);
  if (rc != FA2_OK) return (fa2_status)rc;
  if (rt_bwd_is_noop(a) && !a->sinks) return FA2_OK; /* with sinks: dsinks = 0 */

  rt_request req;
  rt_request_bwd(a, rt_tuning_has_lengths(ctx->tuning), &req);
  rt_kernel *k = rt_mc_get(&ctx->mc, &req, sizeof req);
  if (k)
    atomic_fetch_add_explicit(&ctx->memory_hits, 1, memory_order_relaxed);
  else if ((rc = rt_kernel_for_request(ctx, &req, stream, 1, &k)) != FA2_OK)
    return (fa2_status)rc;
  void *ws = NULL;
  if (a->seqlen_q > 0 && (rc = bwd_workspace(ctx, a, stream, &ws)) != FA2_OK) return (fa2_status)rc;

  return (fa2_status)rt_launch_bwd(ctx, k, a, ws, stream);
}

int rt_launch_bwd(fa2_context *ctx, const rt_kernel *k, const fa2_bwd_args *a, void *ws,
                  void *stream) {
  int rc;
  fa2_bwd_params p;
  fill_bwd_params(a, ws, &p);
  rt_bwd_maps maps; /* ws: the TMA maps, fa2_bwd's second parameter (the others take one) */
  memset(&maps, 0, sizeof maps);
  void *params[] = {&p, &maps};
  if (k->ws && a->batch > 0 && a->seqlen_q > 0 && a->seqlen_k > 0 &&
      (rc = rt_tma_bwd_maps(ctx->cu, &ctx->tma, &p, a->total_k, a->q.dtype == FA2_BF16, a->head_dim, k->block_n,
                            &maps)) != FA2_OK)
    return rc;
  const unsigned det_threads = (unsigned)RT_BWD_DET_THREADS(k->threads), det_warps = det_threads / 32;
  /* the row kernels cover the tiles' columns (dQ's accumulator has them all) */
  const unsigned row_block = FA2_ROW_BLOCK((unsigned)k->threads, (unsigned)k->tile_dim);
  const unsigned rows_x = (unsigned)((a->seqlen_q + row_block - 1) / row_block);
  /* ws: fa2_bwd_pre also fills the rows of its padded LSE and delta (rt_tma.h) */
  const long long pre_rows = !k->ws ? a->seqlen_q : a->cu_seqlens_q ? a->seqlen_q + 3LL : RT_BWD_WS_ROWS(a->seqlen_q);
  const unsigned pre_x = (unsigned)((pre_rows + row_block - 1) / row_block);
  const unsigned keys_x = (unsigned)((a->seqlen_k + k->block_n - 1) / k->block_n);
  /* a persistent ws backward: one block an SM walking pairs of key blocks (bwd_ws.cuh.tpl ws_walk_at) */
  const long long items = (keys_x + 1) / 2 * (long long)a->heads_kv * a->batch;
  const unsigned walk_x = (unsigned)(ctx->sm_count > 0 && items > ctx->sm_count ? ctx->sm_count : items);
  const unsigned det_x = (unsigned)((a->seqlen_q + 16 * det_warps - 1) / (16 * det_warps));
  /* pre (delta, zeroed accumulator), main (dK, dV, dQ atomics), dq (convert);
   * deterministic: main leaves dQ to dq_det (16 query rows per warp, no
   * atomics). A grid with no rows, keys or batch is skipped: no work. Sinks:
   * fa2_bwd_sink (entry 4) after pre, one block per query head; it runs for an
   * empty batch too, writing dsinks = 0. */
  typedef struct { int fn; unsigned gx, gy, gz, threads, smem; } step;
  const unsigned b = (unsigned)a->batch, t = (unsigned)k->threads, hq = (unsigned)a->heads_q;
  const unsigned smem = (unsigned)k->smem_bytes;
  const step dq = a->deterministic ? (step){3, det_x, hq, b, det_threads, smem} : (step){2, rows_x, hq, b, t, 0};
  const step steps[4] = {
      {0, pre_x, hq, b, t, 0},
      {4, a->sinks ? hq : 0, 1, 1, FA2_BWD_SINK_THREADS, 0},
      k->persistent ? (step){1, walk_x, 1, 1, t, smem} : (step){1, keys_x, (unsigned)a->heads_kv, b, t, smem},
      dq,
  };
  CUcontext saved;
  if ((rc = rt_ctx_enter(ctx, &saved)) != FA2_OK) return rc;
  for (int i = 0; i < 4; i++) {
    if (steps[i].gx == 0 || steps[i].gz == 0) continue;
    CUresult r = ctx->cu->cuLaunchKernel(k->fn[steps[i].fn], steps[i].gx, steps[i].gy,
                                         steps[i].gz, steps[i].threads, 1, 1,
                                         steps[i].smem, (CUstream)stream, params, NULL);
    if (r != RT_CUDA_SUCCESS) {
      rt_ctx_leave(ctx, saved);
      return rt_cuda_fail(r, "cuLaunchKernel(%s entry %d, grid %u x %u x %u)", k->name,
                          steps[i].fn, steps[i].gx, steps[i].gy, steps[i].gz);
    }
  }
  rt_ctx_leave(ctx, saved);
  atomic_fetch_add_explicit(&ctx->launches, 1, memory_order_relaxed);
  return FA2_OK;
}
