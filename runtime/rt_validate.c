/* rt_validate: argument checks for the forward (see rt_validate.h). */
#include "rt_validate.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rt_dropout.h"
#include "rt_error.h"
#include "rt_head_dim.h"
#include "rt_tma.h"

const char *rt_dtype_name(int dtype) {
  return dtype == FA2_BF16 ? "bf16" : dtype == FA2_FP16 ? "fp16" : "?";
}

static const char *dtype_enum(int dtype) {
  return dtype == FA2_BF16 ? "FA2_BF16" : dtype == FA2_FP16 ? "FA2_FP16" : "an unknown dtype";
}

int rt_fwd_is_noop(const fa2_fwd_args *a) { return a->batch == 0 || a->seqlen_q == 0; }

static int check_size(const char *name, int value, int min) {
  if (value < min)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s is %d: must be >= %d", name, value, min);
  return FA2_OK;
}

static int check_tensor_dtype(const char *name, const fa2_tensor *t, int q_dtype) {
  if ((int)t->dtype != q_dtype)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "%s.dtype is %d (%s) but q.dtype is %s: q, k, v and o must have the "
                        "same dtype",
                        name, (int)t->dtype, dtype_enum(t->dtype), dtype_enum(q_dtype));
  return FA2_OK;
}

/* Messages are formatted only on failure: this runs on every launch. */
static int check_pointer(const char *name, const char *suffix, const void *p, unsigned align,
                         const char *what) {
  if (!p)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s%s is NULL: %s", name, suffix, what);
  if ((uintptr_t)p % align)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "%s%s %p is not %u-byte aligned: %s%s must start on a %u-byte boundary",
                        name, suffix, p, align, name, suffix, align);
  return FA2_OK;
}

/* A stride matters only when its dimension has more than one index. */
static int check_stride(const char *tname, const char *sname, long long stride, int size,
                        int written) {
  if (size <= 1) return FA2_OK;
  if (stride < 0)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s.%s is %lld: strides must be >= 0", tname,
                        sname, stride);
  if (written && stride == 0)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "%s.%s is 0: rows of the output would overlap", tname, sname);
  if (stride % 8)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "%s.%s %lld breaks 16-byte alignment: strides are in elements and "
                        "must be multiples of 8 (16 bytes of bf16/fp16)",
                        tname, sname, stride);
  return FA2_OK;
}

static int check_tensor(const char *name, const fa2_tensor *t, int batch, int seqlen,
                        int heads, int written) {
  int rc;
  if (!t->data)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s.data is NULL: %s needs a device pointer",
                        name, name);
  if ((rc = check_pointer(name, ".data", t->data, 16, ""))) return rc;
  if ((rc = check_stride(name, "batch_stride", t->batch_stride, batch, written))) return rc;
  if ((rc = check_stride(name, "seq_stride", t->seq_stride, seqlen, written))) return rc;
  if ((rc = check_stride(name, "head_stride", t->head_stride, heads, written))) return rc;
  return FA2_OK;
}

/* Both offset arrays or neither; the totals they end at. Their contents stay
 * unchecked: they live on the device (fa2.h). */
static int check_varlen(const int *cu_q, const int *cu_k, int total_q, int total_k) {
  int rc;
  if (!cu_q && !cu_k) return FA2_OK;
  if (!cu_q || !cu_k)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "cu_seqlens_%s is NULL but cu_seqlens_%s is not: a variable-length "
                        "call gives both (batch + 1 int32 offsets each), a fixed-length one "
                        "neither",
                        cu_q ? "k" : "q", cu_q ? "q" : "k");
  if ((rc = check_pointer("cu_seqlens_q", "", cu_q, 4, "")) ||
      (rc = check_pointer("cu_seqlens_k", "", cu_k, 4, "")) ||
      (rc = check_size("total_q", total_q, 0)) || (rc = check_size("total_k", total_k, 0)))
    return rc;
  return FA2_OK;
}

static int check_window(int window, int left, int right, int causal) {
  if (window != 0 && window != 1)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "window is %d: allowed 0 (none) or 1", window);
  if (!window) return FA2_OK;
  if (left < -1 || right < -1)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "window_%s is %d: must be >= 0, or -1 for an unbounded side",
                        left < -1 ? "left" : "right", left < -1 ? left : right);
  if (causal)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "causal is 1 with a window: give the causal edge as window_right = 0 "
                        "(and causal = 0)");
  return FA2_OK;
}

static int check_stab(const fa2_fwd_args *a) {
  if ((int)a->stab < FA2_STAB_NONE || (int)a->stab > FA2_STAB_BALANCED)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "stab is %d: allowed FA2_STAB_NONE (0), FA2_STAB_PAPER (1), "
                        "FA2_STAB_ROBUST (2), FA2_STAB_TUNED (3), FA2_STAB_BALANCED (4)",
                        (int)a->stab);
  if (a->stab == FA2_STAB_NONE || a->stab == FA2_STAB_BALANCED) return FA2_OK; /* no beta, eps */
  /* The kernels take beta and eps as float32: they must stay > 1 and > 0,
   * and finite, after that rounding. */
  if (a->beta != 0 && !(a->beta > 1 && a->beta <= FLT_MAX && (float)a->beta > 1.0f))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "beta is %g: must be a finite number > 1 (0 picks %g)", a->beta,
                        FA2_DEFAULT_BETA);
  if (a->eps != 0 && !(a->eps > 0 && a->eps <= FLT_MAX && (float)a->eps > 0.0f))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "eps is %g: must be a finite number > 0 (0 picks %g)", a->eps,
                        FA2_DEFAULT_EPS);
  return FA2_OK;
}

int rt_validate_fwd(const fa2_fwd_args *a) {
  int rc;
  if (!a) return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "args is NULL");
  if ((rc = check_size("batch", a->batch, 0)) || (rc = check_size("seqlen_q", a->seqlen_q, 0)) ||
      (rc = check_size("seqlen_k", a->seqlen_k, 0)) ||
      (rc = check_size("heads_q", a->heads_q, 1)) ||
      (rc = check_size("heads_kv", a->heads_kv, 1)))
    return rc;
  if ((int)a->q.dtype != FA2_BF16 && (int)a->q.dtype != FA2_FP16)
    return rt_set_error(FA2_ERR_UNSUPPORTED,
                        "q.dtype is %d: allowed FA2_BF16 (0) or FA2_FP16 (1)", (int)a->q.dtype);
  if ((rc = check_tensor_dtype("k", &a->k, a->q.dtype)) ||
      (rc = check_tensor_dtype("v", &a->v, a->q.dtype)) ||
      (rc = check_tensor_dtype("o", &a->o, a->q.dtype)))
    return rc;
  if (!rt_head_dim_supported(a->head_dim))
    return rt_set_error(FA2_ERR_UNSUPPORTED,
                        "head_dim %d is not supported: allowed " RT_HEAD_DIMS_ALLOWED,
                        a->head_dim);
  if (a->heads_q % a->heads_kv)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "heads_q %d is not a multiple of heads_kv %d (GQA/MQA share each K/V "
                        "head among heads_q / heads_kv query heads)",
                        a->heads_q, a->heads_kv);
  if (a->heads_q > RT_GRID_YZ_MAX)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "heads_q %d exceeds the CUDA grid limit %d (grid y is heads_q)",
                        a->heads_q, RT_GRID_YZ_MAX);
  if (a->batch > RT_GRID_YZ_MAX)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "batch %d exceeds the CUDA grid limit %d (grid z is batch)", a->batch,
                        RT_GRID_YZ_MAX);
  if (!isfinite(a->scale))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "scale is %g: must be finite (0 picks 1/sqrt(head_dim))", a->scale);
  if ((rc = check_stab(a))) return rc;
  if ((rc = check_varlen(a->cu_seqlens_q, a->cu_seqlens_k, a->total_q, a->total_k))) return rc;
  if ((rc = check_window(a->window, a->window_left, a->window_right, a->causal))) return rc;
  if (!(a->softcap >= 0 && a->softcap <= FLT_MAX))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "softcap is %g: must be a finite number > 0, or 0 for none", a->softcap);
  if ((rc = rt_validate_dropout(a->dropout, a->dropout_p, a->dropout_rng))) return rc;
  if (a->alibi_slopes && a->alibi_batch_stride < 0)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "alibi_batch_stride is %lld: must be >= 0 (0: one slope per head, "
                        "heads_q: a slope per batch and head)",
                        a->alibi_batch_stride);
  if (a->sinks && (rc = check_pointer("sinks", "", a->sinks, 4, ""))) return rc;
  if (rt_fwd_is_noop(a)) return FA2_OK;

  /* varlen: the tensors are (total, heads, head_dim), one "batch" of rows */
  const int varlen = a->cu_seqlens_q != NULL, tb = varlen ? 1 : a->batch;
  const int tq = varlen ? a->total_q : a->seqlen_q, tk = varlen ? a->total_k : a->seqlen_k;
  if ((rc = check_tensor("q", &a->q, tb, tq, a->heads_q, 0)) ||
      (rc = check_tensor("o", &a->o, tb, tq, a->heads_q, 1)))
    return rc;
  if (tk > 0 && ((rc = check_tensor("k", &a->k, tb, tk, a->heads_kv, 0)) ||
                 (rc = check_tensor("v", &a->v, tb, tk, a->heads_kv, 0))))
    return rc;
  if (a->alibi_slopes && (rc = check_pointer("alibi_slopes", "", a->alibi_slopes, 4, "")))
    return rc;
  return check_pointer("lse", "", a->lse, 4,
                       "the forward writes LSE, (batch, heads_q, seqlen_q) fp32, for the "
                       "backward");
}

int rt_validate_kernel(fa2_dtype dtype, int head_dim, int causal, fa2_stab stab, double beta,
                       double eps) {
  fa2_fwd_args a = {0};
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = dtype;
  a.heads_q = a.heads_kv = 1;
  a.head_dim = head_dim;
  a.causal = causal;
  a.stab = stab, a.beta = beta, a.eps = eps;
  return rt_validate_fwd(&a);
}

fa2_status fa2_check_forward(const fa2_fwd_args *args) { return (fa2_status)rt_validate_fwd(args); }

int rt_bwd_is_noop(const fa2_bwd_args *a) { return a->batch == 0; }

/* Sinks and their gradient go together: the backward of a sinks call writes dsinks
 * (even for an empty batch: zeros). */
static int check_dsinks(const fa2_bwd_args *a) {
  if (a->sinks && !a->dsinks)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "dsinks is NULL with sinks set: the backward of a sinks call writes "
                        "their gradient there (heads_q fp32 on the device)");
  if (!a->sinks && a->dsinks)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "dsinks is set but sinks is NULL: dsinks is the gradient of the sinks; "
                        "give both or neither");
  return a->dsinks ? check_pointer("dsinks", "", a->dsinks, 4, "") : FA2_OK;
}

/* The backward's checks: the forward's on q, k, v, o and the sizes, plus the
 * gradients, dO, LSE and the delta mode. */
int rt_validate_bwd(const fa2_bwd_args *a) {
  int rc;
  if (!a) return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "args is NULL");
  fa2_fwd_args f;
  memset(&f, 0, sizeof f);
  f.q = a->q, f.k = a->k, f.v = a->v, f.o = a->o, f.lse = (float *)a->lse;
  f.batch = a->batch, f.seqlen_q = a->seqlen_q, f.seqlen_k = a->seqlen_k;
  f.heads_q = a->heads_q, f.heads_kv = a->heads_kv, f.head_dim = a->head_dim;
  f.scale = a->scale, f.causal = a->causal, f.stab = a->stab, f.beta = a->beta, f.eps = a->eps;
  f.cu_seqlens_q = a->cu_seqlens_q, f.cu_seqlens_k = a->cu_seqlens_k;
  f.total_q = a->total_q, f.total_k = a->total_k;
  f.window = a->window, f.window_left = a->window_left, f.window_right = a->window_right;
  f.alibi_slopes = a->alibi_slopes, f.alibi_batch_stride = a->alibi_batch_stride;
  f.softcap = a->softcap;
  f.dropout = a->dropout, f.dropout_p = a->dropout_p, f.dropout_rng = a->dropout_rng;
  f.sinks = a->sinks;
  if ((rc = rt_validate_fwd(&f))) return rc;
  if ((rc = check_tensor_dtype("dout", &a->dout, a->q.dtype)) ||
      (rc = check_tensor_dtype("dq", &a->dq, a->q.dtype)) ||
      (rc = check_tensor_dtype("dk", &a->dk, a->q.dtype)) ||
      (rc = check_tensor_dtype("dv", &a->dv, a->q.dtype)))
    return rc;
  if ((int)a->delta != FA2_DELTA_LOWP && (int)a->delta != FA2_DELTA_FP32)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "delta is %d: allowed FA2_DELTA_LOWP (0) or FA2_DELTA_FP32 (1)",
                        (int)a->delta);
  if (a->deterministic != 0 && a->deterministic != 1)
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT, "deterministic is %d: allowed 0 or 1",
                        a->deterministic);
  if ((rc = check_dsinks(a))) return rc;
  if (rt_bwd_is_noop(a)) return FA2_OK;
  const int varlen = a->cu_seqlens_q != NULL, tb = varlen ? 1 : a->batch;
  const int tq = varlen ? a->total_q : a->seqlen_q, tk = varlen ? a->total_k : a->seqlen_k;
  if (tq > 0 && ((rc = check_tensor("dout", &a->dout, tb, tq, a->heads_q, 0)) ||
                 (rc = check_tensor("dq", &a->dq, tb, tq, a->heads_q, 1))))
    return rc;
  if (tk > 0 && ((rc = check_tensor("dk", &a->dk, tb, tk, a->heads_kv, 1)) ||
                 (rc = check_tensor("dv", &a->dv, tb, tk, a->heads_kv, 1))))
    return rc;
  if (a->delta == FA2_DELTA_FP32 && a->seqlen_q > 0 &&
      (rc = check_pointer("o_fp32", "", a->o_fp32, 8,
                          "FA2_DELTA_FP32 reads O in fp32 (the forward writes it when "
                          "fa2_fwd_args.o_fp32 is set)")))
    return rc;
  if (a->workspace && a->workspace_bytes < fa2_backward_workspace_size(a))
    return rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                        "workspace_bytes %zu is too small: these sizes need %zu "
                        "(fa2_backward_workspace_size)",
                        a->workspace_bytes, fa2_backward_workspace_size(a));
  if (a->workspace && (rc = check_pointer("workspace", "", a->workspace, 16, "")))
    return rc;
  return FA2_OK;
}

fa2_status fa2_check_backward(const fa2_bwd_args *args) { return (fa2_status)rt_validate_bwd(args); }

size_t rt_bwd_rows(const fa2_bwd_args *a) {
  const size_t q_rows = a->cu_seqlens_q ? (size_t)(a->total_q > 0 ? a->total_q : 0)
                                        : (size_t)a->batch * (size_t)a->seqlen_q;
  return q_rows * (size_t)a->heads_q;
}

size_t rt_bwd_accum_bytes(const fa2_bwd_args *a) {
  return (rt_bwd_rows(a) * (size_t)rt_widest_tile_head_dim(a->head_dim) * 4 + 255) / 256 * 256;
}

size_t fa2_backward_workspace_size(const fa2_bwd_args *a) {
  if (!a || a->batch <= 0 || a->seqlen_q <= 0 || a->heads_q <= 0 || a->head_dim <= 0) return 0;
  /* dQ's accumulator, delta, and for ws tiles LSE and delta again in padded rows (rt_tma.h) */
  const size_t ws_pad = 2 * 4 * (size_t)RT_BWD_WS_PAD_ROWS(a->cu_seqlens_q != NULL, a->batch, a->heads_q, a->seqlen_q,
                                                           a->total_q > 0 ? a->total_q : 0);
  return rt_bwd_accum_bytes(a) + (rt_bwd_rows(a) * 4 + 255) / 256 * 256 + ws_pad;
}
