/* Fault injection on the driver side (stand-in driver, tests/fake): device
 * out of memory at context creation, module load, launch and workspace
 * allocation; NVRTC missing. Each failure is a clear status, leaves no
 * half-made kernel behind, and the next call (or context) works. */
#include "fault_util.h"
#include "rt_nvrtc.h"

TestSuite(fault_driver, .init = fu_setup, .fini = fu_teardown);

Test(fault_driver, oom_creating_the_context_then_it_works) {
  fake->retain_result = 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  fa2_context *ctx = (fa2_context *)0x1;
  cr_expect_eq(fa2_create(&ctx, NULL), FA2_ERR_OUT_OF_MEMORY);
  cr_expect_null(ctx);
  cr_expect_str_eq(fa2_last_error(), "cuDevicePrimaryCtxRetain(device 0) failed: "
                                     "CUDA_ERROR_OUT_OF_MEMORY (2): fake driver error");
  cr_expect_eq(fake->retains, 0);
  cr_expect_eq(fake->releases, 0, "nothing to release: the retain failed");
  fake->retain_result = 0;
  ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_destroy(ctx);
  cr_expect_eq(fake->retains, 1);
  cr_expect_eq(fake->releases, 1);
}

/* The cubin was compiled and stored before the load failed: the retry
 * loads it from the disk cache, with no second compile. */
Test(fault_driver, oom_loading_the_module_then_it_works) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  fake->module_load_result = 2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_OUT_OF_MEMORY);
  cr_expect_str_eq(fa2_last_error(), "cuModuleLoadData(fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001 "
                                     "for sm_90) failed: CUDA_ERROR_OUT_OF_MEMORY (2): fake "
                                     "driver error");
  cr_expect_eq(fake->launches, 0);
  cr_expect_eq(fake->live_modules, 0);
  fake->module_load_result = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.disk_hits, 1);
  cr_expect_eq(s.misses, 0);
  cr_expect_eq(atomic_load(&fg_compiles), 1);
  cr_expect_eq(fake->launches, 1);
  cr_expect_eq(fake->live_modules, 1);
  fa2_destroy(ctx);
  cr_expect_eq(fake->live_modules, 0);
}

/* A launch that fails keeps the loaded kernel: the retry is a memory hit. */
Test(fault_driver, oom_at_launch_then_it_works) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  fake->launch_result = 2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_OUT_OF_MEMORY);
  cr_expect(strstr(fa2_last_error(), "cuLaunchKernel(fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001,") ==
                fa2_last_error(),
            "%s", fa2_last_error());
  cr_expect(strstr(fa2_last_error(), "CUDA_ERROR_OUT_OF_MEMORY (2)"), "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).launches, 0);
  fake->launch_result = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.launches, 1);
  cr_expect_eq(s.memory_hits, 1);
  cr_expect_eq(fake->module_loads, 1);
  fa2_destroy(ctx);
}

/* fa2_backward without a caller workspace allocates the context's own. */
Test(fault_driver, oom_allocating_the_backward_workspace_then_it_works) {
  fa2_context *ctx = fu_ctx(fu_path(0, "cache"), FA2_LOG_INFO);
  fa2_bwd_args a = fu_bwd_args(1, 64, 2, 2, 64, NULL);
  size_t need = fa2_backward_workspace_size(&a);
  cr_assert_gt(need, 0);
  fake->n_log = 0;
  cr_expect_eq(fa2_backward(ctx, &a, NULL), FA2_ERR_OUT_OF_MEMORY);
  char want[200];
  snprintf(want, sizeof want, "cuMemAlloc(%zu bytes of backward workspace) failed: "
                              "CUDA_ERROR_OUT_OF_MEMORY", need);
  cr_expect(strstr(fa2_last_error(), want), "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 0, "nothing launched without a workspace");
  fake->alloc_ok = 1;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 3);
  cr_expect_eq((unsigned long long)(uintptr_t)fake->last.bwd.dq_accum, fake->last_alloc);
  cr_expect_eq(fake->last_alloc_bytes, need);
  /* A larger problem needs a larger workspace; out of memory again, then
   * the retry allocates afresh (the old buffer is not kept half-freed). */
  fa2_bwd_args big = fu_bwd_args(4, 256, 2, 2, 64, NULL);
  fake->alloc_ok = 0;
  cr_expect_eq(fa2_backward(ctx, &big, NULL), FA2_ERR_OUT_OF_MEMORY);
  cr_expect_eq(fake->live_allocs, 0, "the smaller buffer was freed before growing");
  fake->alloc_ok = 1;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &big, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->n_log, 3);
  cr_expect_eq(fake->last_alloc_bytes, fa2_backward_workspace_size(&big));
  cr_expect_eq(fake->live_allocs, 1);
  fa2_destroy(ctx);
  cr_expect_eq(fake->live_allocs, 0, "fa2_destroy frees the workspace");
}

/* NVRTC missing: a clear status, nothing stored, and the same context
 * compiles once NVRTC can be found. */
Test(fault_driver, nvrtc_missing_then_found) {
  const char *cache = fu_path(0, "cache");
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  rt_nvrtc_fail_load_for_tests(1);
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_NO_NVRTC);
  cr_expect(strstr(fa2_last_error(), "needs compiling for sm_90, but NVRTC not found"), "%s",
            fa2_last_error());
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_NO_NVRTC, "failure is not cached as success");
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", cache);
  cr_expect_eq(fu_count_suffix(dir, NULL), 0);
  cr_expect_eq(fake->module_loads, 0);
  rt_nvrtc_fail_load_for_tests(0);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 1);
  cr_expect_eq(fu_count_suffix(dir, ".fa2k"), 1);
  cr_expect_eq(fake->launches, 1);
  fa2_destroy(ctx);
}
