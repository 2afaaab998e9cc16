/* rt_dropout: attention dropout's host side (see rt_dropout.h). The mask is
 * templates/fa2_philox.h's, the file the kernels paste, read here as C. */
#include "rt_dropout.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fa2_params.h"
#include "rt_context.h"
#include "rt_error.h"
#include "rt_kernel.h"

#define FA2_PHILOX_FN static inline
#include "fa2_philox.h"

void rt_dropout_fields_of(float p, rt_dropout_fields *f) {
  const double keep = 1.0 - (double)p;
  long keep16 = lrint(keep * 65536.0);
  if (keep16 < 1) keep16 = 1; /* p within 2^-17 of 1 keeps 1 in 65536 */
  if (keep16 > 65536) keep16 = 65536;
  f->limit = fa2_dropout_limit((unsigned)keep16);
  f->keep = (float)keep;
  f->scale = (float)(1.0 / keep);
}

int rt_validate_dropout(int dropout, float p, const unsigned long long *rng) {
  if (dropout != 0 && dropout != 1)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "dropout is %d: allowed 0 (none) or 1", dropout);
  if (!(p >= 0 && p < 1))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "dropout_p is %g: must be >= 0 and < 1 (the probability of dropping an "
                        "attention weight)",
                        p);
  if (!dropout && p != 0)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "dropout_p is %g but dropout is 0: set dropout = 1 to drop (with 0, "
                        "dropout_p must be 0)",
                        p);
  if (rng && (uintptr_t)rng % 8)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "dropout_rng %p is not 8-byte aligned: it points to two 8-byte words "
                        "{seed, offset}",
                        (const void *)rng);
  return FA2_OK;
}

/* The mask call's own checks: sizes, p, the output. */
static int check_mask_args(const fa2_fwd_args *a, const unsigned char *mask) {
  if (!a) return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "args is NULL");
  static const char *const names[] = {"batch", "heads_q", "seqlen_q", "seqlen_k"};
  const int sizes[] = {a->batch, a->heads_q, a->seqlen_q, a->seqlen_k};
  for (int i = 0; i < 4; i++)
    if (sizes[i] < 0)
      return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s is %d: must be >= 0", names[i], sizes[i]);
  int rc = rt_validate_dropout(1, a->dropout_p, a->dropout_rng);
  if (rc) return rc;
  if (!mask) return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "mask is NULL: it receives the keep bytes");
  return FA2_OK;
}

static unsigned long long mask_bytes(const fa2_fwd_args *a) {
  return (unsigned long long)a->batch * (unsigned long long)a->heads_q *
         (unsigned long long)a->seqlen_q * (unsigned long long)a->seqlen_k;
}

fa2_status fa2_dropout_mask_host(const fa2_fwd_args *a, unsigned char *mask) {
  int rc = check_mask_args(a, mask);
  if (rc) return (fa2_status)rc;
  if (a->dropout_rng)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "dropout_rng is set: the host cannot read device memory; "
                                    "give dropout_seed and dropout_offset");
  rt_dropout_fields f;
  rt_dropout_fields_of(a->dropout_p, &f);
  unsigned long long x = 0;
  for (long long bh = 0; bh < (long long)a->batch * a->heads_q; bh++)
    for (int i = 0; i < a->seqlen_q; i++)
      for (int j = 0; j < a->seqlen_k; j++, x++)
        mask[x] = (unsigned char)fa2_dropout_kept(a->dropout_seed, a->dropout_offset,
                                                  (unsigned long long)bh, (unsigned)i, (unsigned)j,
                                                  f.limit);
  return FA2_OK;
}

fa2_status fa2_dropout_mask(fa2_context *ctx, const fa2_fwd_args *a, unsigned char *mask,
                            void *stream) {
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  int rc = check_mask_args(a, mask);
  if (rc) return (fa2_status)rc;
  const unsigned long long n = mask_bytes(a);
  if (n == 0) return FA2_OK;
  /* The mask kernel of one variant serves every call: it reads nothing else. */
  rt_request req;
  memset(&req, 0, sizeof req);
  req.pass = GEN_PASS_FWD, req.dtype = FA2_BF16, req.head_dim = 64, req.dropout = 1;
  req.stab = FA2_STAB_NONE;
  rt_kernel *k = rt_mc_get(&ctx->mc, &req, sizeof req);
  if (!k && (rc = rt_kernel_for_request(ctx, &req, stream, 1, &k)) != FA2_OK)
    return (fa2_status)rc;
  if (k->n_fn < 2)
    return (fa2_status)rt_set_error(FA2_ERR_INTERNAL, "%s has no fa2_dropout_mask entry", k->name);
  fa2_fwd_params p;
  memset(&p, 0, sizeof p);
  p.o = mask;
  p.batch = a->batch, p.heads_q = a->heads_q, p.seqlen_q = a->seqlen_q, p.seqlen_k = a->seqlen_k;
  RT_DROPOUT_PARAMS(&p, a);
  const unsigned long long blocks = (n + (unsigned)k->threads - 1) / (unsigned)k->threads;
  const unsigned grid = blocks < (1u << 20) ? (unsigned)blocks : 1u << 20; /* grid-stride beyond */
  void *params[] = {&p};
  CUcontext saved;
  if ((rc = rt_ctx_enter(ctx, &saved)) != FA2_OK) return (fa2_status)rc;
  CUresult r = ctx->cu->cuLaunchKernel(k->fn[1], grid, 1, 1, (unsigned)k->threads, 1, 1, 0,
                                       (CUstream)stream, params, NULL);
  rt_ctx_leave(ctx, saved);
  if (r != RT_CUDA_SUCCESS)
    return (fa2_status)rt_cuda_fail(r, "cuLaunchKernel(%s fa2_dropout_mask, grid %u)", k->name, grid);
  return FA2_OK;
}
