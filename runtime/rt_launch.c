/* rt_launch: fa2_forward and fa2_backward, the launch path.
 *
 * Hot path: validate, pack the request, one lock-free memory-cache lookup,
 * fill the kernel's argument block, cuLaunchKernel. Everything slow (Lua,
 * disk, NVRTC, module loads) happens only on a memory-cache miss. */
#include <math.h>
#include <string.h>

#include "fa2_params.h"
#include "rt_context.h"
#include "rt_error.h"
#include "rt_validate.h"

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
  p->scale = a->scale != 0 ? a->scale : 1.0f / sqrtf((float)a->head_dim);
}

fa2_status fa2_forward(fa2_context *ctx, const fa2_fwd_args *a, void *stream) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  int rc = rt_validate_fwd(a);
  if (rc != FA2_OK) return (fa2_status)rc;
  if (rt_fwd_is_noop(a)) return FA2_OK;

  rt_request req;
  rt_request_fwd(a, &req);
  rt_kernel *k = rt_mc_get(&ctx->mc, &req, sizeof req);
  if (k)
    atomic_fetch_add_explicit(&ctx->memory_hits, 1, memory_order_relaxed);
  else if ((rc = rt_kernel_for_request(ctx, &req, &k)) != FA2_OK)
    return (fa2_status)rc;

  fa2_fwd_params p;
  fill_params(a, &p);
  unsigned grid_x = (unsigned)((a->seqlen_q + k->block_m - 1) / k->block_m);
  void *params[] = {&p};
  CUcontext saved;
  if ((rc = rt_ctx_enter(ctx, &saved)) != FA2_OK) return (fa2_status)rc;
  CUresult r = ctx->cu->cuLaunchKernel(k->fn[0], grid_x, (unsigned)a->heads_q,
                                       (unsigned)a->batch, (unsigned)k->threads, 1, 1,
                                       (unsigned)k->smem_bytes, (CUstream)stream, params, NULL);
  rt_ctx_leave(ctx, saved);
  if (r != RT_CUDA_SUCCESS)
    return (fa2_status)rt_cuda_fail(r, "cuLaunchKernel(%s, grid %u x %d x %d, %d threads, %d "
                                       "bytes shared memory)",
                                    k->name, grid_x, a->heads_q, a->batch, k->threads,
                                    k->smem_bytes);
  atomic_fetch_add_explicit(&ctx->launches, 1, memory_order_relaxed);
  return FA2_OK;
}

fa2_status fa2_backward(fa2_context *ctx, const fa2_bwd_args *args, void *stream) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  if (!args) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "args is NULL");
  return (fa2_status)rt_set_error(FA2_ERR_NOT_AVAILABLE,
                                  "fa2_backward is not available yet: this fa2gen (%s) has "
                                  "forward kernels only; the backward kernels are issue 6",
                                  fa2_version());
}
