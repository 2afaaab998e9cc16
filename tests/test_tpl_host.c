/* Template device code run on the CPU: the balanced rounding of O
 * (templates/round_balanced.cuh.tpl) as a rendered kernel has it, compiled with the
 * host's C++ compiler around tests/host/balanced_quad.cpp (a quad of threads in lock
 * step) and compared with the lab's lab_round_row_bisect bit for bit, bf16 and fp16,
 * d = 64 and 128. The GPU test of the compiled kernels (tests/gpu/balanced_spec.lua)
 * needs a device; this one lets the rounding's text change on any machine. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_test_util.h"

/* src's function that starts at `start` (its signature) through its closing brace,
 * appended to out; 0 when src has no such function. */
static int cut_function(const char *src, const char *start, char *out, size_t cap) {
  const char *b = strstr(src, start), *p;
  if (!b || !(p = strchr(b, '{'))) return 0;
  int depth = 0;
  for (; *p; p++) {
    if (*p == '{') depth++;
    if (*p == '}' && --depth == 0) break;
  }
  if (!*p) return 0;
  size_t used = strlen(out), n = (size_t)(p + 1 - b);
  if (used + n + 2 > cap) return 0;
  memcpy(out + used, b, n);
  memcpy(out + used + n, "\n", 2);
  return 1;
}

/* src's line that starts with `start`, appended to out. */
static int cut_line(const char *src, const char *start, char *out, size_t cap) {
  const char *b = strstr(src, start), *e;
  if (!b || !(e = strchr(b, '\n'))) return 0;
  size_t used = strlen(out), n = (size_t)(e + 1 - b);
  if (used + n + 1 > cap) return 0;
  memcpy(out + used, b, n);
  out[used + n] = 0;
  return 1;
}

static char *compiler(const char *env, const char *fallback) {
  const char *c = getenv(env);
  return strdup(c && *c ? c : fallback);
}

Test(tpl_host, balanced_rounding_matches_the_lab, .timeout = 120) {
  if (tu_quick()) cr_skip_test("FA2_TEST_QUICK=1: runs in the plain `make test`");
  char *cxx = compiler("CXX", "c++"), *cc = compiler("CC", "cc");
  const char *probe[] = {cxx, "--version", NULL};
  tu_run r = tu_exec(NULL, probe);
  if (r.status != 0) {
    tu_run_free(&r);
    /* said on stderr too: make test's summary counts a skip as a pass */
    fprintf(stderr, "tpl_host: skipped: no C++ compiler (%s; set CXX); the template's rounding is checked on a GPU only\n",
            cxx);
    cr_skip_test("no C++ compiler (%s; set CXX): the template's rounding is checked on a GPU only", cxx);
  }
  tu_run_free(&r);

  gen_state *g = tu_open(NULL);
  gen_variant v;
  memset(&v, 0, sizeof v);
  v.pass = GEN_PASS_FWD;
  v.dtype = GEN_DTYPE_BF16;
  v.head_dim = 64;
  v.stab = GEN_STAB_BALANCED;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  char *src;
  size_t len;
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  gen_close(g);

  /* What balanced_quad.cpp expects from the kernel, in this order. */
  static char inc[16384];
  inc[0] = 0;
  cr_assert(cut_function(src, "__device__ __forceinline__ float quad_max(float x)", inc, sizeof inc) &&
                cut_function(src, "__device__ __forceinline__ float quad_sum(float x)", inc, sizeof inc) &&
                cut_line(src, "constexpr int kBalanceScans", inc, sizeof inc) &&
                cut_line(src, "constexpr float kBalanceCapT", inc, sizeof inc) &&
                cut_function(src, "__device__ __forceinline__ float inv_pow2(float g)", inc, sizeof inc) &&
                cut_function(src, "__device__ __forceinline__ void round_row_balanced(", inc, sizeof inc),
            "%s's source lacks a function balanced_quad.cpp needs (renamed? update the cut list here)", v.name);
  free(src);

  char *dir = tu_tmpdir();
  free(tu_write(dir, "balanced_quad.inc", inc));
  char *lab_c = tu_repo_path("lab/lab_round.c"), *lab_inc = tu_repo_path("lab"), *harness =
      tu_repo_path("tests/host/balanced_quad.cpp");
  char inc_opt[4096], lab_opt[4096];
  snprintf(inc_opt, sizeof inc_opt, "-I%s", dir);
  snprintf(lab_opt, sizeof lab_opt, "-I%s", lab_inc);
  const char *cc_args[] = {cc, "-std=c11", "-O1", lab_opt, "-c", lab_c, "-o", "lab_round.o", NULL};
  r = tu_exec(dir, cc_args);
  cr_assert_eq(r.status, 0, "%s on lab_round.c: %s", cc, r.err);
  tu_run_free(&r);

  const struct {
    const char *head_dim, *fp16;
  } cases[] = {{"-DHEAD_DIM=64", NULL}, {"-DHEAD_DIM=128", NULL}, {"-DHEAD_DIM=64", "-DFA2_FP16"},
               {"-DHEAD_DIM=128", "-DFA2_FP16"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *args[] = {cxx, "-std=c++17", "-O1", "-Wall", "-Wno-unknown-pragmas", cases[i].head_dim, inc_opt,
                          lab_opt, harness, "lab_round.o", "-pthread", "-lm", "-o", "balanced_quad",
                          cases[i].fp16, NULL};
    r = tu_exec(dir, args);
    cr_assert_eq(r.status, 0, "%s %s %s: %s", cxx, cases[i].head_dim, cases[i].fp16 ? cases[i].fp16 : "", r.err);
    tu_run_free(&r);
    const char *run[] = {"./balanced_quad", "2000", "1", NULL};
    r = tu_exec(dir, run);
    long rows = 0, elements = 0, crossed = 0, mismatches = -1;
    const char *last = strstr(r.out, "rows ");
    cr_assert(last && sscanf(last, "rows %ld elements %ld crossed %ld mismatches %ld", &rows, &elements, &crossed,
                             &mismatches) == 4,
              "%s: %s%s", cases[i].head_dim, r.out, r.err);
    cr_expect_eq(r.status, 0, "%s %s: the template differs from the lab: %s", cases[i].head_dim,
                 cases[i].fp16 ? "fp16" : "bf16", r.out);
    cr_expect_eq(mismatches, 0);
    cr_expect_eq(rows, 2000);
    /* the rows must leave rounding to nearest somewhere, or nothing was compared */
    cr_expect(crossed > elements / 100, "%s: only %ld of %ld elements crossed", cases[i].head_dim, crossed, elements);
    tu_run_free(&r);
  }
  free(lab_c);
  free(lab_inc);
  free(harness);
  free(dir);
  free(cxx);
  free(cc);
}
