/* The runtime with the real generator and NVRTC on the stand-in driver:
 * a forward call renders, compiles, caches and launches the real variant;
 * `fa2 gen` + `fa2 build` output is used as AOT and refused when stale;
 * the default spec prepares cold, then warm from the disk cache. */
#include <criterion/criterion.h>
#include <dlfcn.h>

#include "fa2.h"
#include "gen.h"
#include "fake_driver.h"
#include "rt_cuda.h"
#include "rt_jit.h"
#include "rt_test_util.h"

static fake_cuda_state *fake;
static char root[256], cache[300];

static void setup(void) {
  fake = tu_fake_driver();
  tu_tmpdir(root, sizeof root);
  snprintf(cache, sizeof cache, "%s/cache", root);
}
static void teardown(void) { tu_rmtree(root); }
TestSuite(rt_gen, .init = setup, .fini = teardown);

static fa2_context *make_ctx(const char *aot) {
  fa2_options o = {0};
  o.cache_dir = cache;
  o.aot_dir = aot;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK, "%s", fa2_last_error());
  return ctx;
}

static fa2_fwd_args args(int n, int d) {
  fa2_fwd_args a = {0};
  a.q = (fa2_tensor){(void *)0x100000, FA2_BF16, (long long)n * 4 * d, 4 * d, d};
  a.k = a.v = a.q;
  a.o = (fa2_tensor){(void *)0x400000, FA2_BF16, (long long)n * 4 * d, 4 * d, d};
  a.lse = (float *)0x500000;
  a.batch = 2;
  a.seqlen_q = a.seqlen_k = n;
  a.heads_q = a.heads_kv = 4;
  a.head_dim = d;
  a.stab = FA2_STAB_ROBUST;
  return a;
}

static fa2_cache_stats stats(fa2_context *ctx) {
  fa2_cache_stats s;
  fa2_stats(ctx, &s);
  return s;
}

Test(rt_gen, forward_compiles_the_real_variant) {
  fa2_context *ctx = make_ctx(NULL);
  fa2_fwd_args a = args(300, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(memcmp(fake->last_image_head, "\177ELF", 4), 0, "a real cubin was loaded");
  cr_expect_str_eq(fake->last.fn_name, "fa2_fwd");
  /* Geometry from the generator's own choice of tiles for this variant. */
  gen_state *g;
  gen_err ge;
  cr_assert_eq(gen_open(&g, NULL, &ge), 0, "%s", ge.msg);
  gen_variant v = {0};
  v.head_dim = 64;
  v.stab = GEN_STAB_ROBUST;
  v.beta = 2;
  v.eps = 1e-3;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &ge), 0, "%s", ge.msg);
  gen_close(g);
  cr_expect_eq(fake->last.grid[0], (unsigned)((300 + v.block_m - 1) / v.block_m));
  cr_expect_eq(fake->last.grid[1], 4);
  cr_expect_eq(fake->last.grid[2], 2);
  cr_expect_eq(fake->last.block[0], (unsigned)v.threads);
  cr_expect_eq(fake->last.smem, (unsigned)v.smem_bytes);
  if (v.smem_bytes > 48 * 1024) cr_expect_eq(fake->last_attr_value, v.smem_bytes);
  cr_expect_eq(stats(ctx).misses, 1);
  cr_expect_gt(stats(ctx).compile_ms, 0);
  fa2_destroy(ctx);
  ctx = make_ctx(NULL);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(stats(ctx).disk_hits, 1);
  cr_expect_eq(stats(ctx).misses, 0);
  fa2_destroy(ctx);
}

static void fa2_cmd(const char *args_fmt, const char *a1, const char *a2) {
  const char *bin = getenv("FA2_BIN") ? getenv("FA2_BIN") : "bin/fa2";
  char cmd[2048], tail[1500];
  snprintf(tail, sizeof tail, args_fmt, a1, a2);
  snprintf(cmd, sizeof cmd, "%s %s >/dev/null", bin, tail);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(rt_gen, aot_from_fa2_build) {
  char spec[300], out[300];
  snprintf(spec, sizeof spec, "%s/one.lua", root);
  snprintf(out, sizeof out, "%s/out", root);
  FILE *fp = fopen(spec, "w");
  fputs("return { dtype = {'bf16'}, head_dim = {64}, causal = {false}, stab = {{mode = 'robust', "
        "beta = 2, eps = 1e-3}}, pass = {'fwd'}, arch = {'sm_90'} }\n",
        fp);
  fclose(fp);
  fa2_cmd("gen %s -o %s", spec, out);
  fa2_cmd("build %s -o %s", spec, out);
  fa2_context *ctx = make_ctx(out);
  fa2_fwd_args a = args(300, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_cache_stats s = stats(ctx);
  cr_expect_eq(s.aot_hits, 1);
  cr_expect_eq(s.misses + s.disk_hits, 0);
  a.causal = 1; /* not built ahead of time: compiled */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(stats(ctx).misses, 1);
  fa2_destroy(ctx);

  /* A stale manifest (another generator's source): not used. */
  char path[400], cmd[900];
  snprintf(path, sizeof path, "%s/manifest.json", out);
  snprintf(cmd, sizeof cmd, "sed -i 's/\"xxh3_128:[0-9a-f]\\{8\\}/\"xxh3_128:00000000/' %s", path);
  cr_assert_eq(system(cmd), 0);
  ctx = make_ctx(out);
  a.causal = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  s = stats(ctx);
  cr_expect_eq(s.aot_hits, 0);
  cr_expect_eq(s.misses, 1);
  fa2_destroy(ctx);
}

Test(rt_gen, default_spec_cold_then_warm) {
  if (getenv("FA2_TEST_QUICK")) cr_skip_test("quick mode: the plain run compiles the spec");
  fa2_context *ctx = make_ctx(NULL);
  double t0 = rt_now_ms();
  cr_assert_eq(fa2_prepare_spec(ctx, NULL), FA2_OK, "%s", fa2_last_error());
  double cold = rt_now_ms() - t0;
  fa2_cache_stats s = stats(ctx);
  cr_expect_eq(s.misses, 12); /* 12 keys, each with this device's (sm_90's) pick only */
  cr_expect_eq(fake->module_loads, 12);
  fa2_destroy(ctx);
  ctx = make_ctx(NULL);
  t0 = rt_now_ms();
  cr_assert_eq(fa2_prepare_spec(ctx, NULL), FA2_OK, "%s", fa2_last_error());
  double warm = rt_now_ms() - t0;
  s = stats(ctx);
  cr_expect_eq(s.disk_hits, 12);
  cr_expect_eq(s.misses, 0);
  /* A forward call of a prepared variant finds it in memory. */
  fa2_fwd_args a = args(300, 128);
  a.causal = 1;
  a.stab = FA2_STAB_PAPER;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(stats(ctx).disk_hits + stats(ctx).misses, 12);
  fa2_destroy(ctx);
  cr_log_info("default spec on the fake driver: cold %.0f ms, warm %.1f ms", cold, warm);
  fprintf(stderr, "default spec (12 forward variants on sm_90, fake driver): cold %.0f ms, warm %.1f ms\n",
          cold, warm);
}

/* On an sm_80 device the spec's wgmma picks (sm_90 only) are skipped, and a
 * call takes the mma.sync tile; on sm_90 the same call takes the wgmma one. */
Test(rt_gen, prepare_spec_skips_wgmma_tiles_off_hopper) {
  char spec[400];
  snprintf(spec, sizeof spec, "%s/s.lua", root);
  FILE *f = fopen(spec, "w");
  cr_assert_not_null(f);
  fputs("return { dtype = {'bf16'}, head_dim = {64}, causal = {false}, stab = {{ mode = 'robust' }},\n"
        "  arch = {'sm_80', 'sm_90'} }\n", f);
  fclose(f);
  fake->cc_major = 8;
  fa2_context *ctx = make_ctx(NULL);
  cr_assert_eq(fa2_prepare_spec(ctx, spec), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(stats(ctx).misses, 1);
  fa2_fwd_args a = args(300, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(stats(ctx).misses, 1, "the prepared mma.sync variant");
  cr_expect_eq(fake->last.smem, 2 * (64 + 8) * (128 + 2 * 64), "m128n64w4s1's shared memory");
  fa2_destroy(ctx);
  fake->cc_major = 9;
  ctx = make_ctx(NULL);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last.fn_name, "fa2_fwd");
  cr_expect_eq(stats(ctx).misses, 1, "the wgmma pick compiled for sm_90a");
  cr_expect_eq(fake->last.smem, 1024 + 2 * 64 * (64 + 4 * 128), "m64n128w4s2wg's shared memory");
  fa2_destroy(ctx);
}
