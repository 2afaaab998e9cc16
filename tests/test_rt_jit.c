/* The JIT path with the real NVRTC (no GPU needed): a small kernel over the
 * shared argument block compiles to a cubin, lands in the disk cache and is
 * read back; NVRTC's search order. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "gen_embed.h"
#include "rt_fake_gen.h"
#include "rt_jit.h"
#include "rt_nvrtc.h"
#include "rt_paths.h"
#include "rt_test_util.h"

static const char *params_header(void) {
  for (const gen_embedded_file *f = gen_embedded_files; f->name; f++)
    if (!strcmp(f->name, "templates/fa2_params.h")) return f->data;
  return NULL;
}

static int real_render(const gen_variant *v, char **src, size_t *len, char *err, size_t n) {
  const char *hdr = params_header();
  const char *body =
      "extern \"C\" __global__ void fa2_fwd(fa2_fwd_params p) {\n"
      "  if (p.o) ((unsigned short *)p.o)[blockIdx.x * blockDim.x + threadIdx.x] = 0;\n"
      "}\n";
  size_t k = strlen(hdr) + strlen(body) + 1;
  *src = malloc(k);
  snprintf(*src, k, "%s%s", hdr, body);
  *len = strlen(*src);
  return 0;
}

static const rt_source_ops real_ops = {fg_complete, fg_from_name, real_render, fg_opts};

Test(rt_jit, nvrtc_then_disk_cache) {
  rt_source_set_ops_for_tests(&real_ops);
  char root[256];
  tu_tmpdir(root, sizeof root);
  rt_log log = {FA2_LOG_QUIET, NULL, NULL};
  rt_diskcache dc;
  cr_assert_eq(rt_dc_open(&dc, root, &log), 1);
  rt_source src;
  rt_source_init(&src);
  rt_jit_env env = {"sm_90", &src, NULL, &dc, NULL, &log};
  gen_variant v = {0};
  v.head_dim = 64;
  char err[2048];
  cr_assert_eq(fg_complete(&v, "sm_90", err, sizeof err), 0);
  rt_blob a, b;
  int origin = -1;
  double ms = -1;
  int rc = rt_jit_cubin(&env, &v, &a, &origin, &ms, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_expect_eq(origin, RT_FROM_NVRTC);
  cr_expect_gt(ms, 0);
  cr_assert_gt(a.size, 64);
  cr_expect_eq(memcmp(a.data, "\177ELF", 4), 0, "a cubin is an ELF file");
  rc = rt_jit_cubin(&env, &v, &b, &origin, &ms, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_expect_eq(origin, RT_FROM_DISK);
  cr_expect_eq(ms, 0);
  cr_expect_eq(a.size, b.size);
  cr_expect_eq(memcmp(a.data, b.data, a.size), 0);
  rt_blob_free(&a);
  rt_blob_free(&b);
  rt_source_free(&src);
  tu_rmtree(root);
}

Test(rt_jit, compile_errors_name_the_variant) {
  rt_source_set_ops_for_tests(&fg_ops); /* fg_render's source is fine; break the options */
  static const char *const bad_opts[] = {"--no-such-option", NULL};
  static rt_source_ops ops;
  ops = fg_ops;
  ops.nvrtc_options = bad_opts;
  rt_source_set_ops_for_tests(&ops);
  rt_log log = {FA2_LOG_QUIET, NULL, NULL};
  rt_diskcache dc;
  rt_dc_open(&dc, NULL, &log);
  rt_source src;
  rt_source_init(&src);
  rt_jit_env env = {"sm_90", &src, NULL, &dc, NULL, &log};
  gen_variant v = {0};
  v.head_dim = 64;
  char err[2048];
  fg_complete(&v, NULL, err, sizeof err);
  rt_blob a;
  int origin;
  double ms;
  cr_expect_eq(rt_jit_cubin(&env, &v, &a, &origin, &ms, err, sizeof err), FA2_ERR_COMPILE);
  cr_expect(strstr(err, "NVRTC failed to compile fwd_bf16_d64_m64n64w4s2_none.cu for sm_90") ==
                err,
            "%s", err);
  cr_expect_null(a.data);
  rt_source_free(&src);
}

Test(rt_nvrtc, explicit_path_is_final) {
  setenv("FA2_NVRTC", "/nonexistent/libnvrtc.so.13", 1);
  char err[2048];
  cr_expect_eq(rt_nvrtc_load(NULL, err, sizeof err), -1);
  cr_expect_str_eq(err, "NVRTC not found (tried /nonexistent/libnvrtc.so.13); install the CUDA "
                        "toolkit, or set FA2_NVRTC to the path of libnvrtc.so");
}

Test(rt_nvrtc, cuda_home_comes_before_the_loader_path) {
  unsetenv("FA2_NVRTC");
  /* A CUDA_HOME whose lib64 holds NVRTC (a link to the real one). */
  char root[256], lib64[300], link[400];
  tu_tmpdir(root, sizeof root);
  snprintf(lib64, sizeof lib64, "%s/lib64", root);
  cr_assert_eq(rt_mkdirs(lib64), 0);
  const char *real = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (access(real, R_OK) != 0) cr_skip_test("no %s on this machine", real);
  snprintf(link, sizeof link, "%s/libnvrtc.so.13", lib64);
  cr_assert_eq(symlink(real, link), 0);
  setenv("CUDA_HOME", root, 1);
  char err[2048];
  cr_assert_eq(rt_nvrtc_load(NULL, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(rt_nvrtc_path(), link);
  int major, minor;
  rt_nvrtc_version(&major, &minor);
  cr_expect_geq(major, 12);
  tu_rmtree(root);
}

Test(rt_nvrtc, disabled_for_tests) {
  rt_nvrtc_fail_load_for_tests(1);
  char err[256];
  cr_expect_eq(rt_nvrtc_load(NULL, err, sizeof err), -1);
  cr_expect_str_eq(err, "NVRTC not found (disabled by a test)");
}
