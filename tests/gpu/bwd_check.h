/* Backward-kernel correctness on the GPU against float64 reference gradients. */
#ifndef BWD_CHECK_H
#define BWD_CHECK_H
#include "fwd_check.h"

typedef struct bwd_variant {
  char name[160];
  int bf16, head_dim, causal, block_n, threads, smem_bytes;
  int tile_dim; /* the tiles' head dim (dQ's fp32 accumulator has that many columns) */
  int ws;       /* a warp-specialized tile: fa2_bwd takes TMA maps (runtime/rt_tma.h) */
  int persistent; /* ... whose grid walks the key blocks (gpu_launch_bwd's walk_blocks) */
  CUfunction pre, main, dq, dq_det; /* loaded; dynamic smem limits of main, dq_det raised */
} bwd_variant;

typedef struct bwd_result {
  double err[3], plain[3]; /* dQ, dK, dV: max error of the kernel and of the plain baseline */
  long long bad_values;
  int fp32_delta;    /* delta from the fp32 O */
  int deterministic; /* dQ by fa2_bwd_dq_det, run twice ... */
  int bit_identical; /* ... with the same bits both times */
  int pass;
} bwd_result;

typedef void (*bwd_report_fn)(void *ctx, const bwd_variant *v, const fwd_shape *s,
                              const bwd_result *r);

/* Runs every variant on every shape, in the default and the deterministic
 * mode (and the precise-delta option on the last shape); returns the number
 * of failed checks, or -1 on a CUDA failure. */
int bwd_check(gpu *g, const bwd_variant *vars, int n_vars, const fwd_shape *shapes, int n_shapes,
              bwd_report_fn report, void *ctx);

/* One backward as the runtime launches it (rt_launch.c): fa2_bwd_pre, fa2_bwd (with its
 * TMA maps for a ws tile), then fa2_bwd_dq, or fa2_bwd_dq_det when p->deterministic;
 * a grid with no rows or keys is skipped. A persistent fa2_bwd on walk_blocks blocks at
 * most (0: one an SM, as the runtime). 0, or -1 on a CUDA failure (printed). */
int gpu_launch_bwd(gpu *g, const bwd_variant *v, const fa2_bwd_params *p, int walk_blocks, CUstream stream);

/* Renders, compiles and loads every backward variant of a spec file. */
int gpu_render_bwd_variants(gpu *g, const char *spec_path, bwd_variant **out);

#endif
