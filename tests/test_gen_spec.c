/* Spec files: defaults, the cartesian product, exclude, and every class of
 * error (code 2, message naming file, key path, bad value, what is allowed).
 * test_gen_cli.c checks the same errors through `fa2` (exit 2, nothing written). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_spec_cases.h"
#include "gen_test_util.h"

static gen_state *g;
static char *dir;
static void setup(void) {
  g = tu_open(NULL);
  dir = tu_tmpdir();
}
static void teardown(void) { gen_close(g); }
TestSuite(spec, .init = setup, .fini = teardown);

static int load(const char *text, gen_spec *s, gen_err *err, char **path) {
  *path = tu_write(dir, "s.lua", text);
  return gen_spec_load(g, *path, s, err);
}

Test(spec, minimal_spec_gets_the_defaults) {
  gen_spec s;
  gen_err err;
  char *path;
  cr_assert_eq(load("return { dtype = {\"bf16\"}, head_dim = {64} }", &s, &err, &path), GEN_OK, "%s",
               err.msg);
  cr_expect_str_eq(s.path, path);
  /* causal {false, true} x (sm_80's and sm_90's "auto" tiles) x 3 stab modes */
  cr_assert_eq(s.n_variants, 12);
  cr_assert_eq(s.n_arch, 2);
  cr_expect_str_eq(s.arch[0], "sm_80");
  cr_expect_str_eq(s.arch[1], "sm_90");
  cr_expect_eq(s.allow_spills, 0);
  const char *names[] = {"fwd_bf16_d64_m128n64w4s1_none",
                         "fwd_bf16_d64_m128n64w4s1_paper_b2_e1em3",
                         "fwd_bf16_d64_m128n64w4s1_robust_b2_e1em3",
                         "fwd_bf16_d64_m64n128w4s2wg_none",
                         "fwd_bf16_d64_m64n128w4s2wg_paper_b2_e1em3",
                         "fwd_bf16_d64_m64n128w4s2wg_robust_b2_e1em3",
                         "fwd_bf16_d64_causal_m128n64w4s1_none",
                         "fwd_bf16_d64_causal_m128n64w4s1_paper_b2_e1em3",
                         "fwd_bf16_d64_causal_m128n64w4s1_robust_b2_e1em3",
                         "fwd_bf16_d64_causal_m64n128w4s2wg_none",
                         "fwd_bf16_d64_causal_m64n128w4s2wg_paper_b2_e1em3",
                         "fwd_bf16_d64_causal_m64n128w4s2wg_robust_b2_e1em3"};
  for (int i = 0; i < 12; i++) cr_expect_str_eq(s.variants[i].name, names[i]);
  for (int i = 0; i < 12; i++) cr_expect_eq(s.variants[i].wgmma, i % 6 >= 3, "%s", names[i]);
  gen_spec_free(&s);
  free(path);
}

Test(spec, product_order_exclude_and_dedup) {
  gen_spec s;
  gen_err err;
  char *path;
  const char *text =
      "local dims = { 128, 64, 64 }  -- a duplicate is dropped\n"
      "return {\n"
      "  dtype = { 'fp16', 'bf16' }, head_dim = dims, causal = { true },\n"
      "  tiles = { 'auto', { block_m = 64, block_n = 32, warps = 2, stages = 1 } },\n"
      "  stab = { { mode = 'paper' }, { mode = 'paper', beta = 2, eps = 1e-3 } },\n"
      "  arch = { 'sm_90', 'sm_90' }, allow_spills = true,\n"
      "  exclude = function(v) return v.dtype == 'fp16' and v.head_dim == 64 end,\n"
      "}\n";
  cr_assert_eq(load(text, &s, &err, &path), GEN_OK, "%s", err.msg);
  /* "auto" on sm_90: the ws tile of gen/defaults.lua TILES_SM90_WS (d = 128), else
   * the wgmma tiles of TILES_SM90 */
  const char *names[] = {"fwd_fp16_d128_causal_m128n128w12s2ws_paper_b2_e1em3",
                         "fwd_fp16_d128_causal_m64n32w2s1_paper_b2_e1em3",
                         "fwd_bf16_d128_causal_m128n128w12s2ws_paper_b2_e1em3",
                         "fwd_bf16_d128_causal_m64n32w2s1_paper_b2_e1em3",
                         "fwd_bf16_d64_causal_m64n128w4s2wg_paper_b2_e1em3",
                         "fwd_bf16_d64_causal_m64n32w2s1_paper_b2_e1em3"};
  cr_assert_eq(s.n_variants, 6);
  for (int i = 0; i < 6; i++) cr_expect_str_eq(s.variants[i].name, names[i]);
  cr_expect_eq(s.n_arch, 1);
  cr_expect_eq(s.allow_spills, 1);
  gen_spec_free(&s);
  free(path);
}

Test(spec, exclude_sees_every_field) {
  gen_spec s;
  gen_err err;
  char *path;
  const char *text =
      "return { dtype = {'bf16'}, head_dim = {64}, causal = {false}, arch = {'sm_80'},\n"
      "  stab = {{ mode = 'robust', beta = 3, eps = 0.01 }},\n"
      "  exclude = function(v)\n"
      "    assert(v.pass == 'fwd' and v.dtype == 'bf16' and v.head_dim == 64 and v.causal == false)\n"
      "    assert(v.block_m == 128 and v.block_n == 64 and v.warps == 4 and v.stages == 1)\n"
      "    assert(v.stab == 'robust' and v.beta == 3 and v.eps == 0.01 and v.threads == 128)\n"
      "    assert(v.smem_bytes == 36864 and v.name == 'fwd_bf16_d64_m128n64w4s1_robust_b3_e1em2')\n"
      "    return false\n"
      "  end }\n";
  cr_assert_eq(load(text, &s, &err, &path), GEN_OK, "%s", err.msg);
  cr_expect_eq(s.n_variants, 1);
  gen_spec_free(&s);
  free(path);
}

Test(spec, the_shipped_specs_load) {
  gen_spec s;
  gen_err err;
  /* default: 2 head dims x 2 causal x 3 modes forward, on mma.sync tiles and
   * on sm_90's wgmma tiles; 2 x 2 backward, on each too */
  cr_assert_eq(gen_spec_load(g, "specs/default.lua", &s, &err), GEN_OK, "%s", err.msg);
  cr_expect_eq(s.n_variants, 2 * 12 + 2 * 4);
  gen_spec_free(&s);
  cr_assert_eq(gen_spec_load(g, NULL, &s, &err), GEN_OK, "%s", err.msg); /* embedded */
  cr_expect_eq(s.n_variants, 2 * 12 + 2 * 4);
  cr_expect_str_eq(s.path, "specs/default.lua");
  gen_spec_free(&s);
  /* full, plain: 11 head dims x 2 dtypes x 2 causal x 3 modes forward (head dims
   * 48, 64, 128, 160, 192, 224 and 256 also on sm_90's wgmma tiles: 48 on 64's, 160 on
   * 192's, 224 on 256's); the backward (mode-independent) for the 11 head dims x 2 dtypes
   * x 2 causal (the same 7 also on sm_90's).
   * Each plain variant again with softcap, ALiBi, dropout, sinks and varlen; with a
   * window when not causal; each modifier's d = 96 forward twice (2 dtypes x 2 causal x
   * 3 modes; a window: not causal): TILES_MODIFIED's tile off sm_90 and TILES' on it.
   * The pairs of COMBOS: a window with varlen, sinks or softcap (not causal; with softcap
   * not the mma.sync backward at d = 64 and 128: 2 x 2), ALiBi with softcap but
   * the d = 128 wgmma backward's 2 x 2. Mode balanced apart: the forward at the 7 head
   * dims up to 128 (48, 64 and 128 also on sm_90's tiles), with the same modifiers and pairs. */
  cr_assert_eq(gen_spec_load(g, "specs/full.lua", &s, &err), GEN_OK, "%s", err.msg);
  const int plain = (11 + 7) * 2 * 2 * 3 + (11 + 7) * 2 * 2;
  const int each = plain + 2 * 2 * 3; /* with one modifier */
  const int b_plain = (7 + 3) * 2 * 2, b_each = b_plain + 2 * 2;
  const int b_all = b_plain + b_each * 5 + b_each / 2 * 4 + b_each;
  cr_expect_eq(s.n_variants, plain + each * 5 + each / 2 + each / 2 * 2 + (each / 2 - 4) + (each - 4) + b_all);
  int fp16 = 0, causal = 0, robust = 0, bwd = 0, wgmma = 0, bwd_wgmma = 0, balanced = 0;
  int n_window = 0, n_varlen = 0, n_alibi = 0, n_softcap = 0, n_dropout = 0, n_sinks = 0;
  int window_varlen = 0, window_sinks = 0, window_softcap = 0, alibi_softcap = 0;
  for (int i = 0; i < s.n_variants; i++) {
    const gen_variant *v = &s.variants[i];
    if (v->stab == GEN_STAB_BALANCED) {
      balanced++;
      cr_expect(v->pass == GEN_PASS_FWD && v->head_dim <= 128, "%s", v->name);
      continue;
    }
    const int mods = v->window + v->varlen + v->alibi + v->softcap + v->dropout + v->sinks;
    cr_expect(!(v->window && v->causal), "%s", v->name);
    cr_expect_leq(mods, 2, "%s", v->name);
    if (mods == 2) {
      window_varlen += v->window && v->varlen, window_sinks += v->window && v->sinks;
      window_softcap += v->window && v->softcap, alibi_softcap += v->alibi && v->softcap;
      continue;
    }
    n_window += v->window, n_varlen += v->varlen, n_alibi += v->alibi;
    n_softcap += v->softcap, n_dropout += v->dropout, n_sinks += v->sinks;
    if (mods) continue;
    if (s.variants[i].pass == GEN_PASS_BWD) {
      bwd++;
      bwd_wgmma += s.variants[i].wgmma;
      cr_expect_eq(s.variants[i].stab, GEN_STAB_NONE, "%s", s.variants[i].name);
      continue;
    }
    fp16 += s.variants[i].dtype == GEN_DTYPE_FP16;
    causal += s.variants[i].causal;
    robust += s.variants[i].stab == GEN_STAB_ROBUST;
    wgmma += s.variants[i].wgmma;
  }
  cr_expect_eq(bwd, 72);
  cr_expect_eq(bwd_wgmma, 7 * 2 * 2);
  cr_expect_eq(fp16, 108);
  cr_expect_eq(causal, 108);
  cr_expect_eq(robust, 72);
  cr_expect_eq(wgmma, 7 * 2 * 2 * 3); /* forward ones */
  cr_expect_eq(n_softcap, each);
  cr_expect_eq(n_sinks, each);
  cr_expect_eq(n_window, each / 2);
  cr_expect_eq(n_alibi, each);
  cr_expect_eq(n_dropout, each);
  cr_expect_eq(n_varlen, each);
  cr_expect_eq(window_varlen, each / 2);
  cr_expect_eq(window_sinks, each / 2);
  cr_expect_eq(window_softcap, each / 2 - 4);
  cr_expect_eq(alibi_softcap, each - 4);
  cr_expect_eq(balanced, b_all);
  gen_spec_free(&s);
}

/* "auto" tiles that differ per arch are built for the arches that pick them, the
 * spec's or others (d = 96's forward with ALiBi: TILES_MODIFIED off sm_90, sm_86 too,
 * TILES on sm_90); one pick for all: every arch; an explicit tile: every arch. */
Test(spec, auto_picks_are_built_for_their_arch) {
  gen_spec s;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, "specs/full.lua", &s, &err), GEN_OK, "%s", err.msg);
  struct {
    const char *name;
    int sm80, sm90, sm86;
  } cases[] = {
      {"fwd_bf16_d96_alibi_m128n32w4s2_none", 1, 0, 1},
      {"fwd_bf16_d96_alibi_m128n48w4s2_none", 0, 1, 0}, /* sm_86: not a spec arch */
      {"fwd_bf16_d96_m128n48w4s2_none", 1, 1, 1},
      {"fwd_bf16_d64_m64n128w4s2wg_none", 0, 1, 0},
      {"fwd_bf16_d128_m128n128w12s2ws_none", 0, 1, 0},
      {"fwd_bf16_d128_m128n48w4s1_none", 1, 0, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int i = 0;
    while (i < s.n_variants && strcmp(s.variants[i].name, cases[c].name)) i++;
    cr_assert_lt(i, s.n_variants, "%s is not in specs/full.lua", cases[c].name);
    cr_expect_eq(gen_spec_runs_on(&s, i, "sm_80"), cases[c].sm80, "%s on sm_80", cases[c].name);
    cr_expect_eq(gen_spec_runs_on(&s, i, "sm_90"), cases[c].sm90, "%s on sm_90", cases[c].name);
    cr_expect_eq(gen_spec_runs_on(&s, i, "sm_86"), cases[c].sm86, "%s on sm_86", cases[c].name);
  }
  gen_spec_free(&s);
  /* explicit tiles: every arch */
  const char *text = "return { dtype = { 'bf16' }, head_dim = { 96 }, alibi = { true }, "
                     "tiles = { { block_m = 128, block_n = 48, warps = 4, stages = 2 } } }\n";
  char *path;
  cr_assert_eq(load(text, &s, &err, &path), GEN_OK, "%s", err.msg);
  for (int i = 0; i < s.n_variants; i++)
    cr_expect(gen_spec_runs_on(&s, i, "sm_80") && gen_spec_runs_on(&s, i, "sm_90"), "%s", s.variants[i].name);
  gen_spec_free(&s);
  free(path);
}

Test(spec, every_error_class) {
  for (size_t i = 0; i < N_SPEC_CASES; i++) {
    gen_spec s;
    gen_err err;
    char *path;
    int rc = load(spec_cases[i].text, &s, &err, &path);
    cr_expect_eq(rc, GEN_ESPEC, "case %zu (%s): rc %d, %s", i, spec_cases[i].text, rc,
                 rc ? err.msg : "loaded");
    if (rc != GEN_ESPEC) continue;
    cr_expect(!strncmp(err.msg, path, strlen(path)), "case %zu: message does not start with %s: %s",
              i, path, err.msg);
    cr_expect(!strpbrk(err.msg, "\n\r"), "case %zu: message is not one line: %s", i, err.msg);
    for (int k = 0; k < 3 && spec_cases[i].want[k]; k++)
      cr_expect(strstr(err.msg, spec_cases[i].want[k]), "case %zu: '%s' not in: %s", i,
                spec_cases[i].want[k], err.msg);
    free(path);
  }
}

/* A value or an error() message holding control characters gives a
 * one-line message, escaped as Lua would write them, otherwise unchanged. */
Test(spec, control_characters_are_escaped_in_one_line) {
  const char *text[] = {"return { dtype = {\"bf16\\nfoo\"}, head_dim = {64} }",
                        "error(\"a\\nb\")",
                        "error('tab\\tcr\\rnul\\0bell\\a', 0)"};
  const char *want[] = {": dtype[1] = \"bf16\\nfoo\": not a supported dtype; allowed: bf16, fp16",
                        ":1: a\\nb",
                        ": tab\\tcr\\rnul\\000bell\\007"};
  for (int i = 0; i < 3; i++) {
    gen_spec s;
    gen_err err;
    char *path;
    cr_assert_eq(load(text[i], &s, &err, &path), GEN_ESPEC, "%s", text[i]);
    char full[1024];
    snprintf(full, sizeof full, "%s%s", path, want[i]);
    cr_expect_str_eq(err.msg, full);
    free(path);
  }
}

Test(spec, missing_file_is_an_io_error) {
  gen_spec s;
  gen_err err;
  cr_expect_eq(gen_spec_load(g, "/nonexistent/spec.lua", &s, &err), GEN_EIO);
  cr_expect(strstr(err.msg, "/nonexistent/spec.lua"), "%s", err.msg);
  cr_expect_eq(gen_spec_load(g, "/tmp", &s, &err), GEN_EIO);
}

/* The backward does not depend on the stabilization mode: every mode of a
 * spec maps to one backward variant per shape, named "none". With a
 * templates folder that lacks bwd.cu.tpl, pass "bwd" is refused. */
Test(spec, backward_pass_is_one_variant_per_shape) {
  gen_spec s;
  gen_err err;
  char *path;
  const char *text = "return { dtype = {'bf16'}, head_dim = {64}, pass = {'fwd', 'bwd'} }";
  cr_assert_eq(load(text, &s, &err, &path), GEN_OK, "%s", err.msg);
  /* 2 causal x 3 modes forward on sm_80's and sm_90's tiles + 2 causal backward on each */
  cr_assert_eq(s.n_variants, 16);
  cr_expect_str_eq(s.variants[12].name, "bwd_bf16_d64_m32n128w4s2_none");
  cr_expect_str_eq(s.variants[13].name, "bwd_bf16_d64_m64n128w12s2ws_none");
  cr_expect_str_eq(s.variants[14].name, "bwd_bf16_d64_causal_m32n128w4s2_none");
  cr_expect_str_eq(s.variants[15].name, "bwd_bf16_d64_causal_m64n128w12s2ws_none");
  cr_expect_eq(s.variants[12].n_entries, 4);
  cr_expect_str_eq(s.variants[12].entries[0], "fa2_bwd_pre");
  cr_expect_str_eq(s.variants[12].entries[1], "fa2_bwd");
  cr_expect_str_eq(s.variants[12].entries[2], "fa2_bwd_dq");
  cr_expect_str_eq(s.variants[12].entries[3], "fa2_bwd_dq_det");
  /* 2 (d+8)(2 block_n + 2 stages block_m) + 8 stages block_m + 2 block_n (block_m + 8) */
  cr_expect_eq(s.variants[12].smem_bytes, 2 * 72 * (2 * 128 + 2 * 2 * 32) + 8 * 2 * 32 + 2 * 128 * (32 + 8));
  /* ws: 1024 + 2 d (2 block_n + 2 stages block_m) + 8 stages block_m + 2 block_n block_m
   * + (block_n / 64) block_m (d + 8) 4 (dQ's staging) + 256 (mbarriers) */
  cr_expect_eq(s.variants[13].smem_bytes,
               1024 + 2 * 64 * (2 * 128 + 2 * 2 * 64) + 8 * 2 * 64 + 2 * 128 * 64 + 2 * 64 * 72 * 4 + 256);
  gen_spec_free(&s);
  char *tdir = tu_tmpdir();
  free(tu_write(tdir, "fwd.cu.tpl", "// fwd\n"));
  gen_state *g2 = tu_open(tdir);
  cr_assert_eq(gen_spec_load(g2, path, &s, &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "pass[2] = \"bwd\": the backward template is not available yet"), "%s",
            err.msg);
  gen_close(g2);
  free(tdir);
  free(path);
}
