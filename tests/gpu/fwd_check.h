/* Forward-kernel correctness on the GPU against the float64 reference. */
#ifndef FWD_CHECK_H
#define FWD_CHECK_H
#include "fa2_params.h"
#include "gpu_util.h"

typedef struct fwd_variant {
  char name[160];
  int bf16, head_dim, causal, block_m, block_n, threads, smem_bytes;
  int ws;        /* warp-specialized: launched with its TMA maps (gpu_launch_fwd) */
  int persistent; /* ... and a block per SM off a tile counter (FA2_PERSISTENT=0: a full grid) */
  int balanced;   /* mode balanced: O's bits are checked against the lab's rounding of its fp32 O */
  CUfunction fn; /* loaded, dynamic smem limit already raised */
} fwd_variant;

typedef struct fwd_shape {
  int batch, heads_q, heads_kv, seqlen_q, seqlen_k;
  int packed; /* Q, K, V as strided views of one (B, N, Hq + 2 Hkv, d) buffer */
} fwd_shape;

typedef struct fwd_result {
  double max_err, plain_err, lse_err;
  long long bad_values; /* NaN/Inf/unwritten outputs, wrong LSE infinities */
  int same_bits;        /* a second launch on re-poisoned outputs wrote the same O and LSE */
  long long unbalanced; /* balanced: elements whose bits differ from lab_round_row_bisect of
                           the kernel's own fp32 O on the row's draw (-1: not checked) */
  int pass;
} fwd_result;

typedef void (*fwd_report_fn)(void *ctx, const fwd_variant *v, const fwd_shape *s,
                              const fwd_result *r);

/* Launches a forward variant on p's shape (grid (ceil(seqlen_q / block_m),
 * heads_q, batch)), with the TMA maps of p's tensors for a ws variant. Returns
 * 0, or -1 with the failure printed. */
int gpu_launch_fwd(gpu *g, const fwd_variant *v, const fa2_fwd_params *p, CUstream stream);

/* Runs every variant on every shape; returns the number of failed checks,
 * or -1 when a CUDA call failed (already reported). */
int fwd_check(gpu *g, const fwd_variant *vars, int n_vars, const fwd_shape *shapes, int n_shapes,
              fwd_report_fn report, void *ctx);

/* Compiles and loads every DIR/fwd_*.cu (file names are canonical variant
 * names); returns how many loaded, or -1. */
int gpu_load_variants(gpu *g, const char *dir, fwd_variant **out);

/* Renders, compiles and loads every forward variant of a spec file with the
 * embedded generator; returns how many loaded, or -1. */
int gpu_render_variants(gpu *g, const char *spec_path, fwd_variant **out);

/* The module of tests/gpu/ref_attention.cu for (head_dim, dtype), compiled on
 * first use (run from the repository root). */
CUmodule gpu_ref_module(gpu *g, int head_dim, int bf16);

/* Fills n 16-bit values of x with a reproducible pattern in [lo, hi). */
int gpu_fill_uniform(gpu *g, int head_dim, int bf16, CUdeviceptr x, long long n, unsigned seed,
                     float lo, float hi);

#endif
