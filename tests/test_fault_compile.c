/* Fault injection on the compile side, through fa2_forward on the stand-in
 * driver: a template that renders CUDA NVRTC rejects (the real NVRTC), and
 * a template the engine rejects. Nothing is stored or loaded for the bad
 * source; once the template is fixed the same context compiles and runs. */
#include "fault_util.h"
#include "gen_embed.h"
#include "rt_jit.h"

static int broken; /* 1: the "template" renders a compile error; 2: a template error */

static int render(const gen_variant *v, char **src, size_t *len, char *err, size_t n) {
  if (broken == 2) {
    snprintf(err, n, "templates/fwd.cu.tpl:7: 'nosuch' is not available in templates");
    return GEN_ETEMPLATE;
  }
  const char *hdr = NULL;
  for (const gen_embedded_file *f = gen_embedded_files; f->name; f++)
    if (!strcmp(f->name, "templates/fa2_params.h")) hdr = f->data;
  cr_assert_not_null(hdr);
  const char *body = broken ? "extern \"C\" __global__ void fa2_fwd(fa2_fwd_params p) {\n"
                              "  undeclared_helper(p.o);\n"
                              "}\n"
                            : "extern \"C\" __global__ void fa2_fwd(fa2_fwd_params p) {\n"
                              "  if (p.o) ((unsigned short *)p.o)[threadIdx.x] = 0;\n"
                              "}\n";
  size_t k = strlen(hdr) + strlen(body) + 1;
  *src = malloc(k);
  snprintf(*src, k, "%s%s", hdr, body);
  *len = strlen(*src);
  return GEN_OK;
}

static const rt_source_ops ops = {fg_complete, fg_from_name, render, fg_opts};

static void setup(void) {
  fu_setup();
  rt_source_set_ops_for_tests(&ops);
  rt_jit_set_compiler_for_tests(NULL); /* the real NVRTC */
  broken = 0;
}

TestSuite(fault_compile, .init = setup, .fini = fu_teardown);

Test(fault_compile, nvrtc_error_stores_nothing_and_the_fixed_template_compiles) {
  const char *cache = fu_path(0, "cache");
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", cache);
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  broken = 1;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_COMPILE);
  const char *e = fa2_last_error();
  cr_expect(strstr(e, "NVRTC failed to compile fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001.cu for "
                      "sm_90") == e,
            "%s", e);
  cr_expect(strstr(e, "undeclared_helper"), "the compiler's message is kept: %s", e);
  cr_expect_eq(fu_count_suffix(dir, NULL), 0, "no entry, temporary or lock file");
  cr_expect_eq(fake->module_loads, 0);
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_COMPILE, "the failure is not cached as a kernel");

  broken = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(memcmp(fake->last_image_head, "\177ELF", 4), 0, "a cubin was loaded");
  cr_expect_eq(fake->launches, 1);
  cr_expect_eq(fu_count_suffix(dir, NULL), 1);
  cr_expect_eq(fu_count_suffix(dir, ".fa2k"), 1);
  fa2_destroy(ctx);

  ctx = fu_ctx(cache, FA2_LOG_INFO); /* the next process finds it on disk */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).disk_hits, 1);
  fa2_destroy(ctx);
}

Test(fault_compile, template_error_is_a_compile_status_and_recovers) {
  const char *cache = fu_path(0, "cache");
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", cache);
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  broken = 2;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_COMPILE);
  cr_expect_str_eq(fa2_last_error(), "templates/fwd.cu.tpl:7: 'nosuch' is not available in templates");
  cr_expect_eq(fu_count_suffix(dir, NULL), 0);
  broken = 0;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 1);
  fa2_destroy(ctx);
}
