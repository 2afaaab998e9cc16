/* Every check fa2_forward makes before a launch, with its exact message.
 * fa2_check_forward runs them without a context or a GPU. */
#include <criterion/criterion.h>
#include <math.h>

#include "fa2.h"
#include "gen.h"
#include "rt_head_dim.h"
#include "rt_validate.h"

static fa2_fwd_args good(void) {
  fa2_fwd_args a = {0};
  int n = 100, h = 8, hkv = 2, d = 64;
  a.q = (fa2_tensor){(void *)0x10000, FA2_BF16, (long long)n * h * d, h * d, d};
  a.k = (fa2_tensor){(void *)0x20000, FA2_BF16, (long long)n * hkv * d, hkv * d, d};
  a.v = (fa2_tensor){(void *)0x30000, FA2_BF16, (long long)n * hkv * d, hkv * d, d};
  a.o = (fa2_tensor){(void *)0x40000, FA2_BF16, (long long)n * h * d, h * d, d};
  a.lse = (float *)0x50000;
  a.batch = 2;
  a.seqlen_q = a.seqlen_k = n;
  a.heads_q = h;
  a.heads_kv = hkv;
  a.head_dim = d;
  a.stab = FA2_STAB_ROBUST;
  return a;
}

#define EXPECT_ERROR(a, status, message)                                  \
  do {                                                                    \
    cr_expect_eq(fa2_check_forward(&(a)), status, "status for: %s", message); \
    cr_expect_str_eq(fa2_last_error(), message);                          \
  } while (0)

Test(rt_validate, good_arguments_pass) {
  fa2_fwd_args a = good();
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = FA2_FP16;
  a.causal = 1;
  a.stab = FA2_STAB_PAPER;
  a.beta = 8;
  a.eps = 1e-4;
  a.scale = -0.125f; /* unusual, but finite */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  for (int d = 32; d <= 256; d += 32) {
    a.head_dim = d;
    cr_expect_eq(fa2_check_forward(&a), FA2_OK, "head_dim %d: %s", d, fa2_last_error());
  }
}

Test(rt_validate, null_args) {
  cr_expect_eq(fa2_check_forward(NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "args is NULL");
  fa2_fwd_args a = good();
  cr_expect_eq(fa2_forward(NULL, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "ctx is NULL");
}

Test(rt_validate, null_pointers) {
  fa2_fwd_args a = good();
  a.q.data = NULL;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "q.data is NULL: q needs a device pointer");
  a = good();
  a.k.data = NULL;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "k.data is NULL: k needs a device pointer");
  a = good();
  a.v.data = NULL;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "v.data is NULL: v needs a device pointer");
  a = good();
  a.o.data = NULL;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "o.data is NULL: o needs a device pointer");
  a = good();
  a.lse = NULL;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "lse is NULL: the forward writes LSE, (batch, heads_q, seqlen_q) fp32, for the "
               "backward");
}

Test(rt_validate, misaligned_pointers) {
  fa2_fwd_args a = good();
  a.q.data = (void *)0x10008;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "q.data 0x10008 is not 16-byte aligned: q.data must start on a 16-byte boundary");
  a = good();
  a.v.data = (void *)0x30002;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "v.data 0x30002 is not 16-byte aligned: v.data must start on a 16-byte boundary");
  a = good();
  a.o.data = (void *)0x40001;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "o.data 0x40001 is not 16-byte aligned: o.data must start on a 16-byte boundary");
  a = good();
  a.lse = (float *)0x50002;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "lse 0x50002 is not 4-byte aligned: lse must start on a 4-byte boundary");
  a = good();
  a.lse = (float *)0x50004; /* fp32 alignment is enough for LSE */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK);
}

Test(rt_validate, strides_that_break_alignment) {
  fa2_fwd_args a = good();
  a.q.seq_stride = 8 * 64 + 4;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "q.seq_stride 516 breaks 16-byte alignment: strides are in elements and must be "
               "multiples of 8 (16 bytes of bf16/fp16)");
  a = good();
  a.k.head_stride = 60;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "k.head_stride 60 breaks 16-byte alignment: strides are in elements and must be "
               "multiples of 8 (16 bytes of bf16/fp16)");
  a = good();
  a.v.batch_stride = 12801;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "v.batch_stride 12801 breaks 16-byte alignment: strides are in elements and must "
               "be multiples of 8 (16 bytes of bf16/fp16)");
  a = good();
  a.o.seq_stride = -512;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "o.seq_stride is -512: strides must be >= 0");
  a = good();
  a.o.head_stride = 0;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "o.head_stride is 0: rows of the output would overlap");
  a = good();
  a.k.batch_stride = 0; /* broadcast K over the batch: allowed for inputs */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  /* A dimension of size 1 has no stride to respect (PyTorch leaves any value there). */
  a = good();
  a.batch = 1;
  a.q.batch_stride = 3;
  a.o.batch_stride = 1;
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
}

Test(rt_validate, unsupported_head_dim_and_dtype) {
  fa2_fwd_args a = good();
  a.head_dim = 100;
  EXPECT_ERROR(a, FA2_ERR_UNSUPPORTED, "head_dim 100 is not supported: allowed multiples of 8 from 8 to 256");
  a.head_dim = 512;
  EXPECT_ERROR(a, FA2_ERR_UNSUPPORTED, "head_dim 512 is not supported: allowed multiples of 8 from 8 to 256");
  a.head_dim = 0;
  EXPECT_ERROR(a, FA2_ERR_UNSUPPORTED, "head_dim 0 is not supported: allowed multiples of 8 from 8 to 256");
  a.head_dim = 40; /* a multiple of 8: the tiles of 48, the columns past 40 masked */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a.head_dim = 112; /* not a kernel head dim (its own backward tiles spilled): those of 128 */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a = good();
  a.q.dtype = a.k.dtype = a.v.dtype = a.o.dtype = (fa2_dtype)2;
  EXPECT_ERROR(a, FA2_ERR_UNSUPPORTED, "q.dtype is 2: allowed FA2_BF16 (0) or FA2_FP16 (1)");
}

Test(rt_validate, mismatched_dtypes) {
  fa2_fwd_args a = good();
  a.k.dtype = FA2_FP16;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "k.dtype is 1 (FA2_FP16) but q.dtype is FA2_BF16: q, k, v and o must have the "
               "same dtype");
  a = good();
  a.q.dtype = a.k.dtype = a.v.dtype = FA2_FP16;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "o.dtype is 0 (FA2_BF16) but q.dtype is FA2_FP16: q, k, v and o must have the "
               "same dtype");
  a = good();
  a.v.dtype = (fa2_dtype)7;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "v.dtype is 7 (an unknown dtype) but q.dtype is FA2_BF16: q, k, v and o must have "
               "the same dtype");
}

Test(rt_validate, heads) {
  fa2_fwd_args a = good();
  a.heads_q = 12;
  a.heads_kv = 5;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "heads_q 12 is not a multiple of heads_kv 5 (GQA/MQA share each K/V head among "
               "heads_q / heads_kv query heads)");
  a.heads_kv = 0;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "heads_kv is 0: must be >= 1");
  a.heads_kv = 1;
  a.heads_q = 0;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "heads_q is 0: must be >= 1");
}

Test(rt_validate, grid_limits) {
  fa2_fwd_args a = good();
  a.heads_q = 65536;
  a.heads_kv = 1;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "heads_q 65536 exceeds the CUDA grid limit 65535 (grid y is heads_q)");
  a.heads_q = 65535;
  a.q.head_stride = a.o.head_stride = 64;
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a = good();
  a.batch = 70000;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "batch 70000 exceeds the CUDA grid limit 65535 (grid z is batch)");
}

Test(rt_validate, negative_sizes) {
  fa2_fwd_args a = good();
  a.batch = -1;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "batch is -1: must be >= 0");
  a = good();
  a.seqlen_q = -5;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "seqlen_q is -5: must be >= 0");
  a = good();
  a.seqlen_k = -2;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "seqlen_k is -2: must be >= 0");
  a = good();
  a.heads_q = -8;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "heads_q is -8: must be >= 1");
}

Test(rt_validate, stabilization_and_scale) {
  fa2_fwd_args a = good();
  a.stab = (fa2_stab)9;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "stab is 9: allowed FA2_STAB_NONE (0), FA2_STAB_PAPER (1), FA2_STAB_ROBUST (2), "
               "FA2_STAB_TUNED (3), FA2_STAB_BALANCED (4)");
  a.stab = FA2_STAB_BALANCED; /* takes no beta or eps: a bad one is ignored, as with none */
  a.beta = -3;
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a = good();
  a.beta = 1;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "beta is 1: must be a finite number > 1 (0 picks 2)");
  a.beta = NAN;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "beta is nan: must be a finite number > 1 (0 picks 2)");
  /* the kernels hold beta and eps in float32: 1.00000001 would be 1.0f, 1e-50 0.0f */
  a.beta = 1.00000001;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "beta is 1: must be a finite number > 1 (0 picks 2)");
  a.beta = 1e300;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "beta is 1e+300: must be a finite number > 1 (0 picks 2)");
  a.beta = 1.0000002; /* 1 + 2^-22.3: > 1 in float32 too */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a = good();
  a.eps = 1e-50;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT, "eps is 1e-50: must be a finite number > 0 (0 picks 0.001)");
  a = good();
  a.eps = -1e-3;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "eps is -0.001: must be a finite number > 0 (0 picks 0.001)");
  a = good();
  a.stab = FA2_STAB_NONE;
  a.beta = -3; /* ignored without stabilization */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK);
  a = good();
  a.scale = INFINITY;
  EXPECT_ERROR(a, FA2_ERR_INVALID_ARGUMENT,
               "scale is inf: must be finite (0 picks 1/sqrt(head_dim))");
}

Test(rt_validate, empty_problems_are_noops) {
  fa2_fwd_args a = good();
  a.seqlen_q = 0;
  a.q.data = a.o.data = NULL;
  a.lse = NULL;
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a = good();
  a.batch = 0;
  a.q.data = (void *)0x3; /* nothing is read: pointers are not looked at */
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
  a.head_dim = 44; /* but the problem itself must still make sense */
  EXPECT_ERROR(a, FA2_ERR_UNSUPPORTED, "head_dim 44 is not supported: allowed multiples of 8 from 8 to 256");
  /* No keys: every row gets O = 0 and LSE = +inf; K and V are never read. */
  a = good();
  a.seqlen_k = 0;
  a.k.data = a.v.data = NULL;
  cr_expect_eq(fa2_check_forward(&a), FA2_OK, "%s", fa2_last_error());
}

/* The runtime's head dims are the generator's: every multiple of 8 up to 264 is
 * accepted by both or refused by both, and both run it on the same tiles (the
 * generator's tile_dim, the runtime's rt_tile_head_dim); dQ's accumulator holds the
 * widest tiles any arch's "auto" tiles take (rt_widest_tile_head_dim: sm_90's wgmma
 * tiles take 33-48 on 64's). */
Test(rt_validate, head_dims_match_the_generator) {
  gen_state *g;
  gen_err err;
  cr_assert_eq(gen_open(&g, NULL, &err), GEN_OK, "%s", err.msg);
  int n = 0, tiles = 0;
  for (int d = 8; d <= 264; d += 8) {
    gen_variant v = {.pass = GEN_PASS_FWD, .dtype = GEN_DTYPE_BF16, .head_dim = d};
    const int gen_ok = gen_variant_complete(g, &v, NULL, &err) == GEN_OK;
    cr_expect_eq(rt_head_dim_supported(d), gen_ok, "head_dim %d: runtime %d, generator %d (%s)", d,
                 rt_head_dim_supported(d), gen_ok, gen_ok ? "" : err.msg);
    if (gen_ok)
      cr_expect_eq(rt_tile_head_dim(d), v.tile_dim, "head_dim %d: runtime's tiles %d, generator's %d", d,
                   rt_tile_head_dim(d), v.tile_dim);
    for (int pass = GEN_PASS_FWD; gen_ok && pass <= GEN_PASS_BWD; pass++) {
      gen_variant h = {.pass = pass, .dtype = GEN_DTYPE_BF16, .head_dim = d};
      cr_assert_eq(gen_variant_complete(g, &h, "sm_90", &err), GEN_OK, "%s", err.msg);
      const int widest = h.tile_dim > v.tile_dim ? h.tile_dim : v.tile_dim;
      cr_expect_eq(rt_widest_tile_head_dim(d), widest, "head_dim %d pass %d: runtime's widest tiles %d, sm_90's %d",
                   d, pass, rt_widest_tile_head_dim(d), h.tile_dim);
    }
    n += gen_ok;
    tiles += gen_ok && rt_tile_head_dim(d) == d;
  }
  cr_expect_eq(n, 32, "call head dims: %d", n);
  cr_expect_eq(tiles, 11, "kernel head dims: %d", tiles);
  cr_expect_eq(rt_tile_head_dim(8), 16);
  cr_expect_eq(rt_tile_head_dim(40), 48);
  cr_expect_eq(rt_widest_tile_head_dim(40), 64);
  cr_expect_eq(rt_tile_head_dim(104), 128);
  cr_expect_eq(rt_tile_head_dim(200), 224);
  cr_expect_eq(rt_tile_head_dim(44), 0);
  gen_close(g);
}
