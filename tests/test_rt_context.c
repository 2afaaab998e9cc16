/* The context and launch path on a stand-in driver (tests/fake): device
 * discovery, the JIT order (memory -> AOT -> disk -> compile), launch
 * geometry and the kernel argument block, context handling, failures. */
#include <math.h>

#include "fault_util.h" /* fake, root, seen; fu_setup, fu_ctx, fu_args, fu_stats */
#include "rt_key.h"
#include "rt_nvrtc.h"
#include "rt_paths.h"

TestSuite(rt_context, .init = fu_setup, .fini = fu_teardown);

/* The backward's caller-owned workspace (a fake address). */
#define WORKSPACE ((void *)0xa000000)

Test(rt_context, no_driver_fails_cleanly) {
  rt_cuda_set_library_for_tests("/nonexistent/libcuda.so.1");
  fa2_context *ctx = (fa2_context *)0x1;
  cr_expect_eq(fa2_create(&ctx, NULL), FA2_ERR_NO_DRIVER);
  cr_expect_null(ctx);
  cr_expect(strstr(fa2_last_error(), "fa2_create: cannot load the CUDA driver "
                                     "(/nonexistent/libcuda.so.1)") == fa2_last_error(),
            "%s", fa2_last_error());
  cr_expect(strstr(fa2_last_error(), "is an NVIDIA driver installed?") != NULL);
  cr_expect_str_eq(fa2_status_name(FA2_ERR_NO_DRIVER), "FA2_ERR_NO_DRIVER");
}

Test(rt_context, device_properties) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_str_eq(s.arch, "sm_90");
  cr_expect_str_eq(s.device_name, "Fake GPU");
  cr_expect_eq(s.disk_cache, 1);
  char expect[500];
  snprintf(expect, sizeof expect, "%s/kernels", fu_path(0, "cache"));
  cr_expect_str_eq(s.cache_dir, expect);
  cr_expect_eq(fake->retains, 1);
  fa2_destroy(ctx);
  cr_expect_eq(fake->releases, 1);
}

Test(rt_context, bad_options) {
  fa2_context *ctx;
  fa2_options o = {0};
  o.device = -1;
  cr_expect_eq(fa2_create(&ctx, &o), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "options.device is -1: must be a CUDA device ordinal >= 0");
  o.device = 1;
  cr_expect_eq(fa2_create(&ctx, &o), FA2_ERR_NO_DRIVER);
  cr_expect_str_eq(fa2_last_error(), "options.device is 1 but this machine has 1 CUDA device(s)");
  cr_expect_null(ctx);
  o.device = 0;
  o.log_level = 9;
  cr_expect_eq(fa2_create(&ctx, &o), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "options.log_level is 9: allowed 0 (default) to 5 (debug)");
  cr_expect_eq(fa2_create(NULL, &o), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_eq(fake->retains, 0);
}

Test(rt_context, old_gpu_is_unsupported) {
  fake->cc_major = 7;
  fake->cc_minor = 5;
  fa2_context *ctx;
  cr_expect_eq(fa2_create(&ctx, NULL), FA2_ERR_UNSUPPORTED);
  cr_expect_str_eq(fa2_last_error(), "device 0 (Fake GPU) has compute capability 7.5: fa2gen "
                                     "needs 8.0 or newer (Ampere, mma.sync bf16)");
  cr_expect_eq(fake->retains, fake->releases);
}

Test(rt_context, launch_geometry_and_arguments) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(3, 200, 12, 4, 128);
  a.q.seq_stride = 3 * 12 * 128; /* packed QKV: rows 3x wider */
  a.q.batch_stride = 200LL * 3 * 12 * 128;
  a.causal = 1;
  cr_assert_eq(fa2_forward(ctx, &a, (void *)0xabc), FA2_OK, "%s", fa2_last_error());
  fake_launch *l = &fake->last;
  cr_expect_eq(fake->launches, 1);
  cr_expect_str_eq(l->fn_name, "fa2_fwd");
  cr_expect_eq(l->grid[0], 4); /* ceil(200 / 64) */
  cr_expect_eq(l->grid[1], 12);
  cr_expect_eq(l->grid[2], 3);
  cr_expect_eq(l->block[0], 128);
  cr_expect_eq(l->block[1], 1);
  cr_expect_eq(l->smem, 2 * (128 + 8) * (64 + 2 * 2 * 64));
  cr_expect_eq(l->stream, (void *)0xabc);
  cr_expect_eq(l->params.q, a.q.data);
  cr_expect_eq(l->params.k, a.k.data);
  cr_expect_eq(l->params.v, a.v.data);
  cr_expect_eq(l->params.o, a.o.data);
  cr_expect_eq(l->params.lse, a.lse);
  cr_expect_eq(l->params.q_batch_stride, 200LL * 3 * 12 * 128);
  cr_expect_eq(l->params.q_row_stride, 3 * 12 * 128);
  cr_expect_eq(l->params.q_head_stride, 128);
  cr_expect_eq(l->params.k_row_stride, 4 * 128);
  cr_expect_eq(l->params.v_batch_stride, 200LL * 4 * 128);
  cr_expect_eq(l->params.o_row_stride, 12 * 128);
  cr_expect_eq(l->params.batch, 3);
  cr_expect_eq(l->params.seqlen_q, 200);
  cr_expect_eq(l->params.seqlen_k, 200);
  cr_expect_eq(l->params.heads_q, 12);
  cr_expect_eq(l->params.heads_kv, 4);
  cr_expect_float_eq(l->params.scale, 1.0f / sqrtf(128.f), 1e-7);
  /* 87040 bytes > 48 KiB: the opt-in attribute was raised for it. */
  cr_expect_eq(fake->attr_sets, 1);
  cr_expect_eq(fake->last_attr, RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  cr_expect_eq(fake->last_attr_value, 87040);
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d128_causal_m64n64w4s2_robust_b2_e0.001");
  a.scale = 0.5f;
  a.seqlen_q = 64;
  a.seqlen_k = 1000;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_eq(l->grid[0], 1);
  cr_expect_eq(l->params.seqlen_k, 1000);
  cr_expect_float_eq(l->params.scale, 0.5f, 0);
  fa2_destroy(ctx);
  cr_expect_eq(fake->live_modules, 0);
}

Test(rt_context, small_shared_memory_needs_no_attribute) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(1, 10, 1, 1, 64); /* 46080 bytes */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->last.smem, 46080);
  cr_expect_eq(fake->attr_sets, 0);
  fa2_destroy(ctx);
}

Test(rt_context, cache_levels_memory_disk_compile) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(2, 100, 4, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  a.beta = FA2_DEFAULT_BETA; /* the default spelled out: the same kernel */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.misses, 1);
  cr_expect_eq(s.memory_hits, 2);
  cr_expect_eq(s.disk_hits, 0);
  cr_expect_eq(s.launches, 3);
  cr_expect_eq(atomic_load(&fg_compiles), 1);
  cr_expect(strstr(seen.last, "from NVRTC") != NULL, "%s", seen.last);
  a.causal = 1; /* another variant */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_eq(fu_stats(ctx).misses, 2);
  fa2_destroy(ctx);

  /* A second process (context) finds both on disk. */
  ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  a.causal = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  s = fu_stats(ctx);
  cr_expect_eq(s.disk_hits, 2);
  cr_expect_eq(s.misses, 0);
  cr_expect_eq(atomic_load(&fg_compiles), 2);
  cr_expect(strstr(seen.last, "from disk cache") != NULL, "%s", seen.last);
  cr_expect_eq(s.compile_ms, 0);
  fa2_destroy(ctx);

  /* A new fa2gen renders other sources: other keys, compiled again. */
  snprintf(fg_salt, sizeof fg_salt, " v2");
  ctx = fu_ctx(fu_path(0, "cache"), 0);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_eq(fu_stats(ctx).misses, 1);
  fa2_destroy(ctx);
}

Test(rt_context, unwritable_cache_dir_warns_once_and_works) {
  char file[300];
  snprintf(file, sizeof file, "%s/file", root);
  fclose(fopen(file, "w"));
  fa2_context *ctx = fu_ctx(file, 0);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  a.causal = 1;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.misses, 2);
  cr_expect_eq(s.disk_cache, 0);
  cr_expect_str_eq(s.cache_dir, "");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1);
  cr_expect(strstr(seen.last, "kept in memory only") != NULL, "%s", seen.last);
  fa2_destroy(ctx);
}

Test(rt_context, no_disk_cache_option) {
  fa2_options o = {0};
  o.no_disk_cache = 1;
  o.log_fn = tu_log_fn;
  o.log_user = &seen;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_eq(fu_stats(ctx).disk_cache, 0);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0);
  fa2_destroy(ctx);
}

Test(rt_context, missing_nvrtc_is_a_clear_error) {
  rt_nvrtc_fail_load_for_tests(1);
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_NO_NVRTC);
  cr_expect_str_eq(fa2_last_error(), "fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001 needs compiling "
                                     "for sm_90, but NVRTC not found (disabled by a test)");
  cr_expect_eq(fake->launches, 0);
  fa2_destroy(ctx);
}

Test(rt_context, restores_the_callers_context) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  void *h = dlopen(getenv("FA2_FAKE_CUDA") ? getenv("FA2_FAKE_CUDA") : "build/libfakecuda.so",
                   RTLD_NOW);
  void *(*other)(void) = (void *(*)(void))dlsym(h, "fake_cuda_other_context");
  const rt_cuda_api *cu = rt_cuda_load(NULL, 0);
  cu->cuCtxSetCurrent((CUcontext)other());
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  CUcontext cur;
  cu->cuCtxGetCurrent(&cur);
  cr_expect_eq((void *)cur, other());
  cr_expect_neq(fake->last.current_ctx, other(), "launched in the primary context");
  cr_expect_not_null(fake->last.current_ctx);
  fa2_destroy(ctx);
}

Test(rt_context, launch_failure_names_the_kernel) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  fake->launch_result = 700;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_CUDA);
  cr_expect_str_eq(fa2_last_error(),
                   "cuLaunchKernel(fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001, grid 1 x 2 x 1, 128 "
                   "threads, 46080 bytes shared memory) failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): "
                   "fake driver error");
  cr_expect_eq(fu_stats(ctx).launches, 0);
  fa2_destroy(ctx);
}

Test(rt_context, module_load_failure_is_not_cached) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  fake->module_load_result = 218;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_CUDA);
  cr_expect(strstr(fa2_last_error(), "cuModuleLoadData(fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001 "
                                     "for sm_90) failed: CUDA_ERROR_INVALID_PTX") != NULL,
            "%s", fa2_last_error());
  fake->module_load_result = 0;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->launches, 1);
  fa2_destroy(ctx);
}

Test(rt_context, too_much_shared_memory_is_unsupported) {
  fake->smem_optin = 101376; /* an sm_86-class limit */
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 256); /* 2 * 264 * 320 = 168960 bytes */
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_UNSUPPORTED);
  cr_expect_str_eq(fa2_last_error(), "fwd_bf16_d256_m64n64w4s2_robust_b2_e0.001 needs 168960 "
                                     "bytes of shared memory; Fake GPU (sm_90) allows 101376 per "
                                     "block");
  fa2_destroy(ctx);
}

Test(rt_context, seqlen_zero_is_a_noop) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(2, 0, 2, 2, 64);
  a.q.data = a.o.data = NULL; /* empty tensors may have no storage */
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  a = fu_args(0, 10, 2, 2, 64);
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_eq(fake->launches, 0);
  cr_expect_eq(fu_stats(ctx).misses, 0);
  fa2_destroy(ctx);
}

/* Three launches in order: delta (FA2_ROW_LANES lanes per row), dK/dV per key block,
 * dQ conversion; the workspace holds the fp32 dQ accumulator, delta, then (for ws tiles)
 * LSE and delta in rows padded to 64 (200 -> 256). */
Test(rt_context, backward_launches_and_arguments) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_bwd_args a = fu_bwd_args(3, 200, 12, 4, 128, WORKSPACE);
  const size_t accum = 3 * 200 * 12 * 128 * 4; /* a multiple of 256 */
  cr_expect_eq(fa2_backward_workspace_size(&a),
               accum + (3 * 200 * 12 * 4 + 255) / 256 * 256 + 2 * 3 * 12 * 256 * 4);
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &a, (void *)0xabc), FA2_OK, "%s", fa2_last_error());
  cr_assert_eq(fake->n_log, 3);
  const char *names[] = {"fa2_bwd_pre", "fa2_bwd", "fa2_bwd_dq"};
  const unsigned gx[] = {25, 4, 25}, gy[] = {12, 4, 12}; /* ceil(200/(4 warps x 2 rows)), ceil(200/64) */
  const unsigned smem[] = {0, 2 * 136 * (128 + 256) + 8 * 2 * 64 + 2 * 64 * 72, 0};
  for (int i = 0; i < 3; i++) {
    fake_launch *l = &fake->log[i];
    cr_expect_str_eq(l->fn_name, names[i]);
    cr_expect_eq(l->grid[0], gx[i], "%s grid x %u", names[i], l->grid[0]);
    cr_expect_eq(l->grid[1], gy[i]);
    cr_expect_eq(l->grid[2], 3);
    cr_expect_eq(l->block[0], 128);
    cr_expect_eq(l->smem, smem[i], "%s smem %u", names[i], l->smem);
    cr_expect_eq(l->stream, (void *)0xabc);
    cr_expect_eq(l->bwd.dq_accum, (float *)0xa000000);
    cr_expect_eq(l->bwd.delta, (float *)(0xa000000 + accum));
    cr_expect_eq(l->bwd.dout, a.dout.data);
    cr_expect_eq(l->bwd.dk, a.dk.data);
    cr_expect_eq(l->bwd.o_f32, NULL);
    cr_expect_eq(l->bwd.dv_row_stride, 4 * 128);
    cr_expect_eq(l->bwd.heads_kv, 4);
    cr_expect_float_eq(l->bwd.scale, 1.0f / sqrtf(128.f), 1e-7);
    cr_expect_eq(l->bwd.deterministic, 0);
  }
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// bwd_bf16_d128_m64n64w4s2_none");
  /* the precise delta reads the fp32 O */
  a.delta = FA2_DELTA_FP32;
  a.o_fp32 = (const float *)0xb000000;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->last.bwd.o_f32, (const float *)0xb000000);
  /* no query rows: only the dK/dV kernel runs (it writes zeros) */
  fake->n_log = 0;
  a.seqlen_q = 0;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 1);
  cr_expect_str_eq(fake->log[0].fn_name, "fa2_bwd");
  fa2_destroy(ctx);
}

/* The row kernels (fa2_bwd_pre, fa2_bwd_dq) give each row the fewest lanes, a
 * power of two, whose 8 elements each cover head_dim; a block of 4 or 8 warps
 * takes 32 / lanes rows per warp, and the runtime's grid covers every row. */
Test(rt_context, row_kernel_lanes_cover_every_head_dim) {
  for (int d = 8; d <= 256; d += 8) {
    const int lanes = FA2_ROW_LANES(d);
    cr_expect(lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0, "d %d: %d lanes", d, lanes);
    cr_expect(8 * lanes >= d && (lanes == 1 || 4 * lanes < d), "d %d: %d lanes, 8 elements each", d, lanes);
    for (int threads = 128; threads <= 256; threads *= 2)
      cr_expect_eq(FA2_ROW_BLOCK(threads, d), threads / 32 * (32 / lanes), "d %d, %d threads", d, threads);
  }
}

/* The backward after a `robust` forward is the backward after `none` (issue 21
 * asked why it timed 0.80-0.89x at d = 64, N <= 1k): one kernel for every mode,
 * the same three launches with the same arguments, one memory-cache entry. */
Test(rt_context, backward_does_not_depend_on_the_mode) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fake_launch runs[2][3];
  for (int m = 0; m < 2; m++) {
    fa2_bwd_args a = fu_bwd_args(8, 1024, 12, 12, 64, WORKSPACE);
    a.causal = 1;
    a.stab = m ? FA2_STAB_ROBUST : FA2_STAB_NONE;
    fake->n_log = 0;
    cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
    cr_assert_eq(fake->n_log, 3);
    memcpy(runs[m], fake->log, sizeof runs[m]);
  }
  for (int i = 0; i < 3; i++) {
    cr_expect_eq(runs[0][i].fn, runs[1][i].fn, "launch %d: the same function", i);
    cr_expect(!memcmp(runs[0][i].grid, runs[1][i].grid, sizeof runs[0][i].grid));
    cr_expect_eq(runs[0][i].smem, runs[1][i].smem);
    cr_expect(!memcmp(&runs[0][i].bwd, &runs[1][i].bwd, sizeof runs[0][i].bwd), "launch %d", i);
  }
  fa2_cache_stats st = fu_stats(ctx);
  cr_expect_eq(st.misses, 1, "one backward variant compiled");
  fa2_destroy(ctx);
}

/* Deterministic mode: the dQ conversion makes way for fa2_bwd_dq_det, one
 * block per 64 query rows (16 per warp) with the variant's shared memory. */
Test(rt_context, backward_deterministic_launches) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_bwd_args a = fu_bwd_args(3, 200, 12, 4, 128, WORKSPACE);
  a.deterministic = 1;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_assert_eq(fake->n_log, 3);
  const char *names[] = {"fa2_bwd_pre", "fa2_bwd", "fa2_bwd_dq_det"};
  const unsigned gx[] = {25, 4, 4}, gy[] = {12, 4, 12}; /* ceil(200/(4 x 2)), ceil(200/64), ceil(200/64) */
  const unsigned smem = 2 * 136 * (128 + 256) + 8 * 2 * 64 + 2 * 64 * 72;
  for (int i = 0; i < 3; i++) {
    fake_launch *l = &fake->log[i];
    cr_expect_str_eq(l->fn_name, names[i]);
    cr_expect_eq(l->grid[0], gx[i], "%s grid x %u", names[i], l->grid[0]);
    cr_expect_eq(l->grid[1], gy[i]);
    cr_expect_eq(l->smem, i ? smem : 0, "%s smem %u", names[i], l->smem);
    cr_expect_eq(l->bwd.deterministic, 1);
  }
  a.deterministic = 2;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "deterministic is 2: allowed 0 or 1");
  fa2_destroy(ctx);
}

Test(rt_context, backward_validation) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_bwd_args a;
  a = fu_bwd_args(1, 64, 2, 2, 100, WORKSPACE);
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_UNSUPPORTED);
  cr_expect(strstr(fa2_last_error(), "head_dim 100 is not supported: allowed multiples of 8 from 8 to 256"),
            "%s", fa2_last_error());
  a = fu_bwd_args(1, 64, 2, 2, 64, WORKSPACE);
  a.delta = FA2_DELTA_FP32;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "o_fp32 is NULL: FA2_DELTA_FP32 reads O in fp32"), "%s",
            fa2_last_error());
  a = fu_bwd_args(1, 64, 2, 2, 64, WORKSPACE);
  a.workspace_bytes -= 1;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "is too small: these sizes need"), "%s", fa2_last_error());
  a = fu_bwd_args(1, 64, 2, 2, 64, WORKSPACE);
  a.dq.dtype = FA2_FP16;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dq.dtype is 1 (FA2_FP16)"), "%s", fa2_last_error());
  a = fu_bwd_args(1, 64, 2, 2, 64, WORKSPACE);
  a.dk.seq_stride = 0;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dk.seq_stride is 0"), "%s", fa2_last_error());
  cr_expect_eq(fa2_backward(NULL, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_eq(fa2_backward(ctx, NULL, NULL), FA2_ERR_INVALID_ARGUMENT);
  fa2_destroy(ctx);
}

Test(rt_context, prepare_compiles_ahead) {
  fa2_options o = {0};
  o.cache_dir = fu_path(0, "cache");
  o.jobs = 3;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK);
  fa2_kernel_desc k[4] = {
      {NULL, FA2_BF16, 64, 0, FA2_STAB_ROBUST, 0, 0},
      {NULL, FA2_BF16, 64, 1, FA2_STAB_NONE, 0, 0},
      {NULL, FA2_FP16, 128, 0, FA2_STAB_PAPER, 4, 1e-3},
      {"fwd_bf16_d32_m128n32w8s1_none", 0, 0, 0, 0, 0, 0},
  };
  cr_assert_eq(fa2_prepare(ctx, k, 4), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 4);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  a.causal = 1;
  a.stab = FA2_STAB_NONE;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.misses, 4, "the forward calls found the prepared kernels");
  cr_expect_eq(s.memory_hits, 2);
  /* Preparing again costs nothing. */
  cr_assert_eq(fa2_prepare(ctx, k, 4), FA2_OK);
  cr_expect_eq(fu_stats(ctx).misses, 4);
  cr_expect_eq(fu_stats(ctx).memory_hits, 6);
  fa2_destroy(ctx);
}

/* CUDA graphs: on a capturing stream a call only launches. A kernel not
 * loaded yet is FA2_ERR_CAPTURING naming the variant and how to prepare it,
 * with nothing compiled, loaded or launched; once prepared (or called
 * eagerly) the same call launches while capturing. */
Test(rt_context, capturing_stream_never_loads) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(2, 100, 4, 4, 64);
  fake->capturing = 1;
  int loads = fake->module_loads;
  cr_assert_eq(fa2_forward(ctx, &a, (void *)0xabc), FA2_ERR_CAPTURING);
  cr_expect(strstr(fa2_last_error(), "kernel fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001 (sm_90) is "
                                     "not loaded and the stream is capturing a CUDA graph"),
            "%s", fa2_last_error());
  cr_expect(strstr(fa2_last_error(), "fa2gen.prepare([\"fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001\"])"),
            "%s", fa2_last_error());
  cr_expect_eq(fake->module_loads, loads);
  cr_expect_eq(fake->launches, 0);
  cr_expect_eq(fu_stats(ctx).misses, 0);
  /* prepared by name outside the capture: the capturing call launches */
  fake->capturing = 0;
  fa2_kernel_desc k = {"fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001", 0, 0, 0, 0, 0, 0, 0};
  cr_assert_eq(fa2_prepare(ctx, &k, 1), FA2_OK, "%s", fa2_last_error());
  fake->capturing = 1;
  cr_assert_eq(fa2_forward(ctx, &a, (void *)0xabc), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->launches, 1);
  cr_expect_eq(fake->last.stream, (void *)0xabc);
  /* the backward: its kernel missing, then its workspace (none given) */
  fa2_bwd_args b = fu_bwd_args(2, 100, 4, 4, 64, NULL);
  cr_assert_eq(fa2_backward(ctx, &b, (void *)0xabc), FA2_ERR_CAPTURING);
  cr_expect(strstr(fa2_last_error(), "kernel bwd_bf16_d64_"), "%s", fa2_last_error());
  fake->capturing = 0;
  b.workspace = WORKSPACE; /* loads the kernel, allocates nothing */
  b.workspace_bytes = fa2_backward_workspace_size(&b);
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  fake->capturing = 1;
  int allocs = fake->allocs;
  b.workspace = NULL, b.workspace_bytes = 0;
  cr_assert_eq(fa2_backward(ctx, &b, (void *)0xabc), FA2_ERR_CAPTURING);
  cr_expect(strstr(fa2_last_error(), "the backward's workspace must grow to"), "%s",
            fa2_last_error());
  cr_expect_eq(fake->allocs, allocs);
  b.workspace = WORKSPACE, b.workspace_bytes = fa2_backward_workspace_size(&b);
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, (void *)0xabc), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 3);
  fake->capturing = 0;
  fa2_destroy(ctx);
}

/* Variable-length batches: the varlen variant of the request's kernel, the
 * grid of the longest sequence, the offsets and total rows in the argument
 * block; the workspace of total_q rows; argument errors. */
Test(rt_context, varlen_launch_and_checks) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(3, 700, 4, 2, 64); /* 3 sequences, the longest 700 rows */
  a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o.batch_stride = 0;
  a.cu_seqlens_q = (const int *)0xc00000, a.cu_seqlens_k = (const int *)0xd00000;
  a.total_q = 1000, a.total_k = 900;
  a.causal = 1;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_causal_varlen_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.grid[0], 11); /* ceil(700 / 64): the longest sequence */
  cr_expect_eq(fake->last.grid[2], 3);
  cr_expect_eq(fake->last.params.cu_seqlens_q, (const int *)0xc00000);
  cr_expect_eq(fake->last.params.cu_seqlens_k, (const int *)0xd00000);
  cr_expect_eq(fake->last.params.total_q, 1000);
  /* fixed length after varlen: its own kernel, no offsets */
  fa2_fwd_args f = fu_args(3, 700, 4, 2, 64);
  f.causal = 1;
  cr_assert_eq(fa2_forward(ctx, &f, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_causal_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.cu_seqlens_q, NULL);
  /* the backward: accumulator and delta for total_q rows, then a ws tile's LSE and delta
   * again, each head (1000 + 3 x 3 + 3) & ~3 = 1012 rows (rt_tma.h RT_BWD_WS_SPAN) */
  fa2_bwd_args b = fu_bwd_args(3, 700, 4, 2, 64, NULL);
  b.cu_seqlens_q = a.cu_seqlens_q, b.cu_seqlens_k = a.cu_seqlens_k;
  b.total_q = 1000, b.total_k = 900, b.causal = 1;
  const size_t accum = 1000 * 4 * 64 * 4;
  cr_expect_eq(fa2_backward_workspace_size(&b), accum + (1000 * 4 * 4 + 255) / 256 * 256 + 2 * 4 * 1012 * 4);
  b.workspace = WORKSPACE, b.workspace_bytes = fa2_backward_workspace_size(&b);
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 3);
  cr_expect_eq(fake->log[1].bwd.total_q, 1000);
  cr_expect_eq(fake->log[1].bwd.delta, (float *)(0xa000000 + accum));
  cr_expect_eq(fake->log[1].bwd.cu_seqlens_k, (const int *)0xd00000);
  /* errors */
  a.cu_seqlens_k = NULL;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "cu_seqlens_k is NULL but cu_seqlens_q is not: a "
                                     "variable-length call gives both (batch + 1 int32 offsets "
                                     "each), a fixed-length one neither");
  a.cu_seqlens_k = (const int *)0xd00002;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "cu_seqlens_k 0xd00002 is not 4-byte aligned"), "%s",
            fa2_last_error());
  a.cu_seqlens_k = (const int *)0xd00000, a.total_q = -1;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "total_q is -1: must be >= 0");
  fa2_destroy(ctx);
}

/* Sliding windows and ALiBi: each its variant, its run-time values in the
 * argument block (window edges -1 for every other variant), and the checks. */
Test(rt_context, window_and_alibi_launch_and_checks) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(2, 500, 4, 4, 64);
  a.window = 1, a.window_left = 127, a.window_right = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_window_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.window_left, 127);
  cr_expect_eq(fake->last.params.window_right, 0);
  a.window = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->last.params.window_left, -1);
  cr_expect_eq(fake->last.params.window_right, -1);
  fa2_bwd_args b = fu_bwd_args(2, 500, 4, 4, 64, WORKSPACE);
  b.window = 1, b.window_left = -1, b.window_right = 5;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->log[1].bwd.window_left, -1);
  cr_expect_eq(fake->log[1].bwd.window_right, 5);
  a.window = 1, a.window_left = -2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "window_left is -2: must be >= 0, or -1 for an unbounded side");
  a.window_left = 10, a.causal = 1;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "give the causal edge as window_right = 0"), "%s",
            fa2_last_error());
  a.causal = 0, a.window = 2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "window is 2: allowed 0 (none) or 1");
  /* ALiBi: its own variant, the slopes and their batch stride passed along */
  a.window = 0, a.alibi_slopes = (const float *)0xe00000, a.alibi_batch_stride = 4;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_alibi_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.alibi_slopes, (const float *)0xe00000);
  cr_expect_eq(fake->last.params.alibi_batch_stride, 4);
  a.alibi_batch_stride = -4;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "alibi_batch_stride is -4: must be >= 0"), "%s",
            fa2_last_error());
  a.alibi_batch_stride = 0, a.alibi_slopes = (const float *)0xe00002;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "alibi_slopes 0xe00002 is not 4-byte aligned"), "%s",
            fa2_last_error());
  /* softcap: its variant and value */
  a.alibi_slopes = NULL, a.softcap = 30.f;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_softcap_m64n64w4s2_robust_b2_e0.001");
  cr_expect_float_eq(fake->last.params.softcap, 30.f, 0);
  /* the factors the kernels multiply by (no division in a kernel), in both blocks:
   * 1 / scale, and softcap's scale / cap and cap / scale, each rounded as the kernels
   * used to round them (scale * (1 / cap), cap * (1 / scale)) */
  volatile float scale = 0.125f, cap = 30.f, inv_cap = 1.f / cap;
  cr_expect_float_eq(fake->last.params.cap_in, scale * inv_cap, 0);
  cr_expect_float_eq(fake->last.params.cap_out, cap * 8.f, 0);
  cr_expect_float_eq(fake->last.params.inv_scale, 8.f, 0); /* 1 / (1 / sqrt(64)) */
  b.window = 0, b.softcap = 30.f, b.scale = 0.25f;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  scale = 0.25f;
  cr_expect_float_eq(fake->log[1].bwd.cap_in, scale * inv_cap, 0);
  cr_expect_float_eq(fake->log[1].bwd.cap_out, cap * 4.f, 0);
  cr_expect_float_eq(fake->log[1].bwd.inv_scale, 4.f, 0);
  a.softcap = 0.f;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect(fake->last.params.cap_in == 0.f && fake->last.params.cap_out == 0.f, "no softcap: 0");
  a.softcap = -1.f;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "softcap is -1: must be a finite number > 0, or 0 for none");
  fa2_destroy(ctx);
}

/* Dropout: its variant (with the mask entry), the derived fields in both argument
 * blocks, the forward's p and seed reaching the backward, the mask kernel's launch
 * and the checks. */
Test(rt_context, dropout_launch_mask_and_checks) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(2, 500, 4, 4, 64);
  a.dropout = 1, a.dropout_p = 0.1f, a.dropout_rng = (const unsigned long long *)0xf00000;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_dropout_m64n64w4s2_robust_b2_e0.001");
  cr_expect_str_eq(fake->last.fn_name, "fa2_fwd");
  cr_expect_eq(fake->last.params.dropout_rng, (const unsigned long long *)0xf00000);
  cr_expect_eq(fake->last.params.dropout_limit, (58982u - 1) << 16 | 0xffff); /* 0.9 * 65536 = 58982.4 */
  cr_expect_float_eq(fake->last.params.dropout_keep, 0.9f, 1e-7);
  cr_expect_float_eq(fake->last.params.dropout_scale, 1 / 0.9f, 1e-6);
  /* p = 0 with dropout = 1: the dropout kernel, keeping everything */
  a.dropout_p = 0.f, a.dropout_rng = NULL, a.dropout_seed = 7, a.dropout_offset = 9;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_dropout_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.dropout_limit, 0xffffffffu);
  cr_expect_eq(fake->last.params.dropout_seed, 7);
  cr_expect_eq(fake->last.params.dropout_offset, 9);
  fa2_bwd_args b = fu_bwd_args(2, 500, 4, 4, 64, WORKSPACE);
  b.dropout = 1, b.dropout_p = 0.25f, b.dropout_seed = 11, b.dropout_offset = 13;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// bwd_bf16_d64_dropout_m64n64w4s2_none");
  cr_expect_eq(fake->log[1].bwd.dropout_limit, (49152u - 1) << 16 | 0xffff);
  cr_expect_float_eq(fake->log[1].bwd.dropout_keep, 0.75f, 0);
  cr_expect_eq(fake->log[1].bwd.dropout_seed, 11);
  cr_expect_eq(fake->log[1].bwd.dropout_offset, 13);
  /* the mask kernel: the bf16 d64 dropout forward's second entry, a grid over the bytes */
  a.dropout_p = 0.5f, a.batch = 3, a.heads_q = 2, a.seqlen_q = 100, a.seqlen_k = 70;
  cr_assert_eq(fa2_dropout_mask(ctx, &a, (unsigned char *)0x900000, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last.fn_name, "fa2_dropout_mask");
  cr_expect_eq(fake->last.grid[0], (3 * 2 * 100 * 70 + 127) / 128);
  cr_expect_eq(fake->last.params.o, (void *)0x900000);
  cr_expect_eq(fake->last.params.seqlen_k, 70);
  cr_expect_eq(fake->last.params.dropout_limit, (32768u - 1) << 16 | 0xffff);
  cr_expect_eq(fa2_dropout_mask(NULL, &a, (unsigned char *)0x900000, NULL), FA2_ERR_INVALID_ARGUMENT);
  /* checks */
  a.batch = 2, a.heads_q = 4, a.seqlen_q = a.seqlen_k = 500;
  a.dropout_p = 1.f;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dropout_p is 1: must be >= 0 and < 1 (the probability of "
                                     "dropping an attention weight)");
  a.dropout_p = -0.1f;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  a.dropout_p = NAN;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  a.dropout_p = 0.1f, a.dropout = 0;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dropout_p is 0.1 but dropout is 0: set dropout = 1 to drop "
                                     "(with 0, dropout_p must be 0)");
  a.dropout = 2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dropout is 2: allowed 0 (none) or 1");
  a.dropout = 1, a.dropout_rng = (const unsigned long long *)0xf00004;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dropout_rng 0xf00004 is not 8-byte aligned"), "%s",
            fa2_last_error());
  b.dropout_p = 2.f;
  cr_expect_eq(fa2_backward(ctx, &b, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dropout_p is 2"), "%s", fa2_last_error());
  fa2_destroy(ctx);
}

/* Attention sinks: their own variants, the pointers passed along, the backward's fifth
 * kernel (dsinks: one block of FA2_BWD_SINK_THREADS per query head, after delta) in both
 * modes and for an empty batch (it writes zeros), and the checks. */
Test(rt_context, sinks_launch_and_checks) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_fwd_args a = fu_args(2, 500, 4, 4, 64);
  a.sinks = (const float *)0xf00000;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_sinks_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.sinks, (const float *)0xf00000);
  a.sinks = NULL;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001");
  cr_expect_eq(fake->last.params.sinks, NULL);
  a.sinks = (const float *)0xf00002;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "sinks 0xf00002 is not 4-byte aligned"), "%s", fa2_last_error());

  fa2_bwd_args b = fu_bwd_args(3, 200, 12, 4, 128, WORKSPACE);
  b.sinks = (const float *)0xf00000, b.dsinks = (float *)0xf10000;
  for (int det = 0; det < 2; det++) {
    b.deterministic = det;
    fake->n_log = 0;
    cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
    cr_assert_eq(fake->n_log, 4);
    const char *names[] = {"fa2_bwd_pre", "fa2_bwd_sink", "fa2_bwd", det ? "fa2_bwd_dq_det" : "fa2_bwd_dq"};
    for (int i = 0; i < 4; i++) {
      cr_expect_str_eq(fake->log[i].fn_name, names[i]);
      cr_expect_eq(fake->log[i].bwd.sinks, (const float *)0xf00000);
      cr_expect_eq(fake->log[i].bwd.dsinks, (float *)0xf10000);
    }
    fake_launch *l = &fake->log[1];
    cr_expect(l->grid[0] == 12 && l->grid[1] == 1 && l->grid[2] == 1, "grid %u x %u x %u", l->grid[0],
              l->grid[1], l->grid[2]);
    cr_expect_eq(l->block[0], FA2_BWD_SINK_THREADS);
    cr_expect_eq(l->smem, 0);
  }
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// bwd_bf16_d128_sinks_m64n64w4s2_none");
  /* an empty batch: only fa2_bwd_sink runs (dsinks = 0); without sinks, nothing */
  b.batch = 0;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  cr_assert_eq(fake->n_log, 1);
  cr_expect_str_eq(fake->log[0].fn_name, "fa2_bwd_sink");
  cr_expect_eq(fake->log[0].bwd.batch, 0);
  b.sinks = NULL, b.dsinks = NULL;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &b, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 0);
  /* sinks and their gradient go together */
  b.batch = 3, b.sinks = (const float *)0xf00000;
  cr_expect_eq(fa2_backward(ctx, &b, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dsinks is NULL with sinks set: the backward of a sinks call "
                                     "writes their gradient there (heads_q fp32 on the device)");
  b.sinks = NULL, b.dsinks = (float *)0xf10000;
  cr_expect_eq(fa2_backward(ctx, &b, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dsinks is set but sinks is NULL"), "%s", fa2_last_error());
  b.sinks = (const float *)0xf00000, b.dsinks = (float *)0xf10001;
  cr_expect_eq(fa2_backward(ctx, &b, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "dsinks 0xf10001 is not 4-byte aligned"), "%s", fa2_last_error());
  b.dsinks = (float *)0xf10000, b.sinks = (const float *)0xf00001;
  cr_expect_eq(fa2_backward(ctx, &b, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "sinks 0xf00001 is not 4-byte aligned"), "%s", fa2_last_error());
  /* a prepared sinks kernel is the one a call then takes */
  fa2_kernel_desc k = {NULL, FA2_BF16, 64, 1, FA2_STAB_NONE, 0, 0};
  k.sinks = 1;
  const unsigned long long misses = fu_stats(ctx).misses;
  cr_assert_eq(fa2_prepare(ctx, &k, 1), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_causal_sinks_m64n64w4s2_none");
  cr_expect_eq(fu_stats(ctx).misses, misses + 1);
  fa2_destroy(ctx);
}

Test(rt_context, prepare_reports_the_first_bad_kernel) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), 0);
  fa2_kernel_desc k[2] = {
      {NULL, FA2_BF16, 64, 0, FA2_STAB_ROBUST, 0, 0},
      {NULL, FA2_BF16, 100, 0, FA2_STAB_ROBUST, 0, 0},
  };
  cr_expect_eq(fa2_prepare(ctx, k, 2), FA2_ERR_UNSUPPORTED);
  cr_expect_str_eq(fa2_last_error(), "kernels[1]: head_dim 100 is not supported: allowed multiples of 8 "
                                     "from 8 to 256");
  fa2_kernel_desc bad_name = {"bwd_nonsense", 0, 0, 0, 0, 0, 0};
  cr_expect_eq(fa2_prepare(ctx, &bad_name, 1), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "kernels[0] \"bwd_nonsense\": unknown variant name "
                                     "'bwd_nonsense'");
  cr_expect_eq(fa2_prepare(ctx, NULL, 1), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_eq(fa2_prepare(ctx, NULL, 0), FA2_OK);
  fa2_destroy(ctx);
}

/* --- AOT: out/manifest.json + out/sm_90/build.json + out/sm_90/<name>.cubin */

static const char *aot_name = "fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001";

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  cr_assert_not_null(fp, "%s", path);
  fputs(text, fp);
  fclose(fp);
}

/* Writes out/ for aot_name with the source hash of what fg_render gives
 * (salted by manifest_salt / build_salt to make it stale). */
static void write_aot(const char *out, const char *manifest_salt, const char *build_salt,
                      const char *cubin_hash) {
  char path[600], text[2048], src[512], h_manifest[33], h_build[33];
  gen_variant v;
  char err[256];
  fg_from_name(aot_name, &v, err, sizeof err);
  char saved[64];
  snprintf(saved, sizeof saved, "%s", fg_salt);
  snprintf(fg_salt, sizeof fg_salt, "%s", manifest_salt);
  char *s;
  size_t len;
  fg_render(&v, &s, &len, err, sizeof err);
  rt_hash128_hex(s, len, h_manifest);
  free(s);
  snprintf(fg_salt, sizeof fg_salt, "%s", build_salt);
  fg_render(&v, &s, &len, err, sizeof err);
  rt_hash128_hex(s, len, h_build);
  free(s);
  snprintf(fg_salt, sizeof fg_salt, "%s", saved);
  snprintf(src, sizeof src, "%s/sm_90", out);
  cr_assert_eq(rt_mkdirs(src), 0);
  snprintf(path, sizeof path, "%s/manifest.json", out);
  snprintf(text, sizeof text,
           "{\"variants\": [{\"name\": \"other\", \"source_hash\": \"xxh3-128:%032d\"},"
           " {\"name\": \"%s\", \"source\": \"%s.cu\", \"source_hash\": \"xxh3_128:%s\"}]}",
           0, aot_name, aot_name, h_manifest);
  write_text(path, text);
  snprintf(path, sizeof path, "%s/sm_90/build.json", out);
  snprintf(text, sizeof text,
           "{\"arch\": \"sm_90\", \"kernels\": {\"%s\": {\"cubin\": \"x.cubin\", "
           "\"source_hash\": \"xxh3_128:%s\"%s%s%s}}}",
           aot_name, h_build, cubin_hash ? ", \"cubin_hash\": \"" : "",
           cubin_hash ? cubin_hash : "", cubin_hash ? "\"" : "");
  write_text(path, text);
  snprintf(path, sizeof path, "%s/sm_90/x.cubin", out); /* named by build.json */
  write_text(path, "AOTCUBIN");
}

static int run_with_aot(const char *out) {
  fa2_options o = {0};
  o.cache_dir = fu_path(0, "cache");
  o.aot_dir = out;
  o.log_level = FA2_LOG_INFO;
  o.log_fn = tu_log_fn;
  o.log_user = &seen;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_cache_stats s = fu_stats(ctx);
  fa2_destroy(ctx);
  cr_expect_eq(s.aot_hits + s.misses + s.disk_hits, 1);
  return (int)s.aot_hits;
}

Test(rt_context, aot_cubin_used_when_current) {
  char out[300];
  snprintf(out, sizeof out, "%s/out", root);
  write_aot(out, "", "", NULL);
  cr_expect_eq(run_with_aot(out), 1);
  cr_expect_str_eq(fake->last_image_head, "AOTCUBIN");
  cr_expect_eq(atomic_load(&fg_compiles), 0);
}

Test(rt_context, aot_cubin_hash_checked) {
  char out[300], good[42];
  snprintf(out, sizeof out, "%s/out", root);
  rt_hash128_hex("AOTCUBIN", 8, good + 9);
  memcpy(good, "xxh3_128:", 9);
  write_aot(out, "", "", good);
  cr_expect_eq(run_with_aot(out), 1);
  write_aot(out, "", "", "0123456789abcdef0123456789abcdef");
  cr_expect_eq(run_with_aot(out), 0);
  cr_expect(strstr(seen.last, "from NVRTC") != NULL, "%s", seen.last);
}

Test(rt_context, stale_manifest_is_not_used) {
  char out[300];
  snprintf(out, sizeof out, "%s/out", root);
  write_aot(out, " old", " old", NULL); /* out/ from another fa2gen */
  cr_expect_eq(run_with_aot(out), 0);
  cr_expect_eq(atomic_load(&fg_compiles), 1);
  cr_expect_neq(strcmp(fake->last_image_head, "AOTCUBIN"), 0);
}

Test(rt_context, stale_build_is_not_used) {
  char out[300];
  snprintf(out, sizeof out, "%s/out", root);
  write_aot(out, "", " old", NULL); /* fa2 gen re-run, fa2 build not */
  cr_expect_eq(run_with_aot(out), 0);
  cr_expect_eq(atomic_load(&fg_compiles), 1);
}

/* --- tuning database */

Test(rt_context, tuning_database_tiles_and_tuned_beta) {
  char db[300];
  snprintf(db, sizeof db, "%s/tuning.json", root);
  char text[1024];
  snprintf(text, sizeof text,
           "{\"format\": \"fa2gen-tuning\", \"version\": 2, \"gpu\": {\"name\": \"Fake GPU\", "
           "\"arch\": \"sm_90\", \"sm_count\": 132}, \"made_with\": {\"fa2gen\": \"%s\"}, "
           "\"entries\": {\"fwd_bf16_d64\": {\"block_m\": 128, \"block_n\": 32, \"warps\": 8, "
           "\"stages\": 3, \"stab\": \"robust\", \"beta\": 4, \"eps\": 0.002}}}",
           rt_source_version());
  write_text(db, text);
  fa2_options o = {0};
  o.cache_dir = fu_path(0, "cache");
  o.tuning_db = db;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK);
  fa2_fwd_args a = fu_args(1, 300, 2, 2, 64);
  a.stab = FA2_STAB_TUNED;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_m128n32w8s3_robust_b4_e0.002");
  cr_expect_eq(fake->last.grid[0], 3); /* ceil(300 / 128) */
  cr_expect_eq(fake->last.block[0], 256);
  a.stab = FA2_STAB_NONE; /* tiles apply to every mode */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_m128n32w8s3_none");
  a.causal = 1; /* no entry: defaults */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_causal_m64n64w4s2_none");
  fa2_destroy(ctx);
}

Test(rt_context, tuning_database_of_another_arch_is_ignored) {
  char db[300];
  snprintf(db, sizeof db, "%s/tuning.json", root);
  write_text(db, "{\"format\": \"fa2gen-tuning\", \"version\": 2, \"gpu\": {\"name\": \"Fake "
                 "GPU\", \"arch\": \"sm_80\", \"sm_count\": 132}, \"made_with\": {\"fa2gen\": "
                 "\"x\"}, \"entries\": {\"fwd_bf16_d64\": {\"block_m\": 128, "
                 "\"block_n\": 32, \"warps\": 8, \"stages\": 3}}}");
  fa2_options o = {0};
  o.cache_dir = fu_path(0, "cache");
  o.tuning_db = db;
  o.log_fn = tu_log_fn;
  o.log_user = &seen;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1);
  cr_expect(strstr(seen.last, "made for Fake GPU (sm_80, 132 SMs), this is Fake GPU (sm_90, 132 "
                              "SMs)") != NULL, "%s", seen.last);
  fa2_fwd_args a = fu_args(1, 300, 2, 2, 64);
  a.stab = FA2_STAB_TUNED; /* no database: robust with the defaults */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK);
  cr_expect_str_eq(fake->last_image_head, "CUBIN:// fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001");
  fa2_destroy(ctx);
}
