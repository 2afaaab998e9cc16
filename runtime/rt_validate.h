/* rt_validate: every check fa2_forward makes before it selects or launches
 * a kernel. Each failure names the bad value and what is allowed. */
#ifndef RT_VALIDATE_H
#define RT_VALIDATE_H
#include "fa2.h"

/* The CUDA grid limit of dimensions y (heads_q) and z (batch). */
enum { RT_GRID_YZ_MAX = 65535 };

/* FA2_OK or an error status with fa2_last_error set. A no-op problem
 * (batch or seqlen_q 0) is FA2_OK once its sizes, dtypes and options are
 * valid; pointers and strides are not looked at then. */
int rt_validate_fwd(const fa2_fwd_args *a);

/* The checks of a forward call that selects a kernel with these fields and
 * has nothing to compute: for kernel descriptions (fa2_prepare, the tuning
 * database's stabilization). */
int rt_validate_kernel(fa2_dtype dtype, int head_dim, int causal, fa2_stab stab, double beta,
                       double eps);

/* 1 when fa2_forward has nothing to compute. */
int rt_fwd_is_noop(const fa2_fwd_args *a);

/* The same for the backward (seqlen_q == 0 still writes zero dK, dV). */
int rt_validate_bwd(const fa2_bwd_args *a);
int rt_bwd_is_noop(const fa2_bwd_args *a);

/* Rows of the backward's fp32 dQ accumulator and delta: batch * seqlen_q (varlen:
 * total_q) times heads_q. */
size_t rt_bwd_rows(const fa2_bwd_args *a);
/* Bytes of the workspace's first part, dQ's fp32 accumulator (rt_bwd_rows rows of the
 * widest tiles' head dim, rounded up to 256); delta follows it. */
size_t rt_bwd_accum_bytes(const fa2_bwd_args *a);

const char *rt_dtype_name(int dtype); /* "bf16", "fp16", "?" */

#endif
