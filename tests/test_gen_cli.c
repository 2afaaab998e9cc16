/* The fa2 command (binary from env FA2_BIN): gen's output tree, manifest
 * contents, determinism, atomicity, list, usage errors, and every spec
 * error class: exit 2, message names key and value, nothing written. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "gen_out.h"
#include "gen_spec_cases.h"
#include "gen_test_util.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static char *path_in(const char *dir, const char *rel) {
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

/* Runs fa2 gen SPEC -o DIR and asserts success. */
static void gen_ok(const char *cwd, const char *spec, const char *out) {
  tu_run r = spec ? tu_fa2(cwd, ARGS("gen", spec, "-o", out)) : tu_fa2(cwd, ARGS("gen", "-o", out));
  cr_assert_eq(r.status, 0, "fa2 gen failed (%d): %s", r.status, r.err);
  tu_run_free(&r);
}

Test(cli, gen_twice_gives_byte_identical_trees) {
  char *t = tu_tmpdir(), *spec = tu_repo_path("specs/default.lua");
  char *a = path_in(t, "a"), *b = path_in(t, "b");
  gen_ok(NULL, spec, a);
  gen_ok(NULL, spec, b);
  char *da = tu_tree_digest(a), *db = tu_tree_digest(b);
  cr_expect_gt(strlen(da), 0);
  cr_expect_str_eq(da, db);
  gen_ok(NULL, spec, a); /* over an earlier output: same bytes again */
  char *da2 = tu_tree_digest(a);
  cr_expect_str_eq(da, da2);
  tu_expect_dir(t, "a b"); /* no temporary folders left behind */
  free(da), free(db), free(da2), free(a), free(b), free(spec), free(t);
}

Test(cli, gen_writes_sources_and_exact_manifest) {
  char *t = tu_tmpdir(), *spec = tu_repo_path("specs/default.lua"), *out = path_in(t, "out");
  gen_ok(NULL, spec, out);
  char *mpath = path_in(out, "manifest.json");
  json_error_t jerr;
  json_t *m = json_load_file(mpath, 0, &jerr);
  cr_assert_not_null(m, "manifest.json: %s", jerr.text);
  cr_expect_str_eq(json_string_value(json_object_get(m, "fa2gen_version")), gen_version());
  json_t *opts = json_object_get(m, "nvrtc_options");
  const char *const *want_opts = gen_nvrtc_options();
  size_t n_opts = 0;
  while (want_opts[n_opts]) n_opts++;
  cr_assert_eq(json_array_size(opts), n_opts);
  for (size_t i = 0; i < n_opts; i++)
    cr_expect_str_eq(json_string_value(json_array_get(opts, i)), want_opts[i]);
  json_t *arch = json_object_get(m, "arch");
  cr_assert_eq(json_array_size(arch), 2);
  cr_expect_str_eq(json_string_value(json_array_get(arch, 0)), "sm_80");
  cr_expect_str_eq(json_string_value(json_array_get(arch, 1)), "sm_90");
  cr_expect(json_is_false(json_object_get(m, "allow_spills")));
  json_t *vs = json_object_get(m, "variants");
  cr_assert_eq(json_array_size(vs), 32); /* fwd: 12 on mma.sync, 12 on wgmma for sm_90; bwd: 4 + 4 */

  /* The sm_90 pick of the same key: a ws tile (warp-specialized, on wgmma). */
  json_t *w = json_array_get(vs, 23);
  cr_expect_str_eq(json_string_value(json_object_get(w, "name")),
                   "fwd_bf16_d128_causal_m128n128w12s2ws_robust_b2_e1em3");
  cr_expect(json_is_true(json_object_get(w, "wgmma")) && json_is_true(json_object_get(w, "ws")));
  cr_expect_eq(json_integer_value(json_object_get(w, "smem_bytes")), 1024 + 2 * 128 * (2 * 128 + 4 * 128) + 256);

  /* One variant, every field. */
  json_t *v = json_array_get(vs, 20);
  const char *name = "fwd_bf16_d128_causal_m128n48w4s1_robust_b2_e1em3";
  cr_expect_str_eq(json_string_value(json_object_get(v, "name")), name);
  cr_expect_str_eq(json_string_value(json_object_get(v, "pass")), "fwd");
  cr_assert_eq(json_array_size(json_object_get(v, "entries")), 1);
  cr_expect_str_eq(json_string_value(json_array_get(json_object_get(v, "entries"), 0)), "fa2_fwd");
  cr_expect_str_eq(json_string_value(json_object_get(v, "dtype")), "bf16");
  cr_expect_eq(json_integer_value(json_object_get(v, "head_dim")), 128);
  cr_expect(json_is_true(json_object_get(v, "causal")));
  cr_expect_eq(json_integer_value(json_object_get(v, "block_m")), 128);
  cr_expect_eq(json_integer_value(json_object_get(v, "block_n")), 48);
  cr_expect_eq(json_integer_value(json_object_get(v, "warps")), 4);
  cr_expect_eq(json_integer_value(json_object_get(v, "stages")), 1);
  cr_expect(json_is_false(json_object_get(v, "wgmma")));
  cr_expect(json_is_false(json_object_get(v, "ws")));
  cr_expect_str_eq(json_string_value(json_object_get(v, "stab")), "robust");
  cr_expect_eq(json_real_value(json_object_get(v, "beta")), 2.0);
  cr_expect_eq(json_real_value(json_object_get(v, "eps")), 1e-3);
  cr_expect_eq(json_integer_value(json_object_get(v, "threads")), 128);
  cr_expect_eq(json_integer_value(json_object_get(v, "smem_bytes")), 60928);
  cr_expect_str_eq(json_string_value(json_object_get(v, "source")),
                   "src/fwd_bf16_d128_causal_m128n48w4s1_robust_b2_e1em3.cu");
  cr_expect_eq(json_object_size(v), 19, "no fields beyond the documented ones");

  /* Every source exists and hashes to its manifest entry and to what the
   * library renders for that name. */
  gen_state *g = tu_open(NULL);
  for (size_t i = 0; i < json_array_size(vs); i++) {
    json_t *e = json_array_get(vs, i);
    char *src_path = path_in(out, json_string_value(json_object_get(e, "source")));
    size_t len;
    char *text = tu_read(src_path, &len), h[GEN_HASH_LEN], *mine;
    cr_assert_not_null(text, "%s missing", src_path);
    gen_hash(text, len, h);
    const char *mh = json_string_value(json_object_get(e, "source_hash"));
    cr_expect_str_eq(mh, h);
    cr_expect_eq(strlen(mh), strlen("xxh3_128:") + 32);
    gen_variant gv;
    gen_err err;
    cr_assert_eq(gen_variant_from_name(g, json_string_value(json_object_get(e, "name")), &gv, &err), 0);
    cr_assert_eq(gen_render(g, &gv, &mine, &len, &err), 0, "%s", err.msg);
    cr_expect_str_eq(mine, text);
    free(mine), free(text), free(src_path);
  }
  gen_close(g);
  tu_expect_dir(out, "manifest.json src");
  json_decref(m);
  free(mpath), free(out), free(spec), free(t);
}

/* No SPEC and no specs/default.lua where fa2 runs: the embedded default. */
Test(cli, gen_without_spec_uses_the_embedded_default) {
  char *t = tu_tmpdir();
  tu_run r = tu_fa2(t, ARGS("gen"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "32 variants of specs/default.lua -> out/"), "%s", r.out);
  char *m = path_in(t, "out/manifest.json");
  cr_expect(tu_exists(m));
  tu_run_free(&r), free(m), free(t);
}

static void expect_untouched(const char *t, const char *out, const char *before, const char *what) {
  char *after = tu_tree_digest(out);
  cr_expect_str_eq(after, before, "%s: out/ changed", what);
  char *ls = tu_list_dir(t);
  cr_expect(!strstr(ls, ".tmp-") && !strstr(ls, ".old-"), "%s: leftovers: %s", what, ls);
  free(after), free(ls);
}

Test(cli, every_spec_error_exits_2_and_writes_nothing) {
  char *t = tu_tmpdir(), *out = path_in(t, "out");
  gen_ok(NULL, "specs/default.lua", out);
  char *before = tu_tree_digest(out);
  char *spec = tu_write(t, "s.lua", "");
  for (size_t i = 0; i < N_SPEC_CASES; i++) {
    free(tu_write(NULL, spec, spec_cases[i].text));
    const char *cmds[][6] = {{"gen", spec, "-o", out, NULL},
                             {"list", spec, NULL},
                             {"build", spec, "-o", out, NULL}};
    for (int c = 0; c < 3; c++) {
      if (c > 0 && i % 8) continue; /* list and build: every 8th case is enough */
      tu_run r = tu_fa2(NULL, cmds[c]);
      cr_expect_eq(r.status, 2, "case %zu (fa2 %s): exit %d, stderr: %s", i, cmds[c][0], r.status,
                   r.err);
      for (int k = 0; k < 3 && spec_cases[i].want[k]; k++)
        cr_expect(strstr(r.err, spec_cases[i].want[k]), "case %zu: '%s' not in: %s", i,
                  spec_cases[i].want[k], r.err);
      cr_expect(strstr(r.err, spec), "case %zu: file not named: %s", i, r.err);
      tu_run_free(&r);
    }
    expect_untouched(t, out, before, spec_cases[i].text);
  }
  free(before), free(spec), free(out), free(t);
}

/* A template error at render time fails the run and leaves out/ as it was. */
Test(cli, failed_gen_leaves_the_previous_output) {
  char *t = tu_tmpdir(), *out = path_in(t, "out"), *tpl = path_in(t, "tpl");
  gen_ok(NULL, "specs/default.lua", out);
  char *before = tu_tree_digest(out);
  cr_assert_eq(mkdir(tpl, 0777), 0);
  free(tu_write(tpl, "fwd.cu.tpl", "ok\n{% if stab == 'robust' %}\n{{ nosuch }}\n{% end %}\n"));
  free(tu_write(tpl, "bwd.cu.tpl", "// the default spec has backward variants too\n"));
  tu_run r = tu_fa2(NULL, ARGS("gen", "specs/default.lua", "-o", out, "--templates", tpl));
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "fwd.cu.tpl:3: 'nosuch' is not available in templates"), "%s", r.err);
  expect_untouched(t, out, before, "template error");
  tu_run_free(&r);
  free(before), free(out), free(tpl), free(t);
}

Test(cli, gen_refuses_to_replace_a_folder_that_is_not_an_output) {
  char *t = tu_tmpdir();
  free(tu_write(t, "precious.txt", "keep me\n"));
  char *before = tu_tree_digest(t);
  tu_run r = tu_fa2(NULL, ARGS("gen", "specs/default.lua", "-o", t));
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "not an fa2gen output folder") && strstr(r.err, "refusing"), "%s", r.err);
  char *after = tu_tree_digest(t);
  cr_expect_str_eq(after, before);
  tu_run_free(&r);
  /* An empty folder is fine. */
  char *empty = tu_tmpdir();
  r = tu_fa2(NULL, ARGS("gen", "specs/default.lua", "-o", empty));
  cr_expect_eq(r.status, 0, "%s", r.err);
  tu_run_free(&r);
  free(before), free(after), free(empty), free(t);
}

Test(cli, list_prints_the_table_and_names) {
  tu_run r = tu_fa2(NULL, ARGS("list", "specs/default.lua"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "specs/default.lua: 32 variants; arch sm_80, sm_90; spills not allowed"),
            "%s", r.out);
  cr_expect(strstr(r.out, "VARIANT"));
  const char *row = "fwd_bf16_d128_causal_m128n48w4s1_paper_b2_e1em3        128  yes         128 "
                    "      48      4       1  paper     2       0.001         128   60928";
  cr_expect(strstr(r.out, "fwd_bf16_d128_causal_m128n128w12s2ws_paper_b2_e1em3    128  yes    "
                          "     128      128     12       2  paper     2       0.001         384  197888"),
            "the sm_90 pick not found in:\n%s", r.out);
  cr_expect(strstr(r.out, row), "row not found in:\n%s", r.out);
  tu_run_free(&r);
  r = tu_fa2(NULL, ARGS("list", "--names", "specs/full.lua"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  int lines = 0;
  for (const char *p = r.out; (p = strchr(p, '\n')); p++) lines++;
  cr_expect_eq(lines, 3072); /* 288 plain (176 + sm_90's wgmma picks: forward d 48, 64, 128, 160,
                               192, 224, 256 x dtypes x causal x modes, backward the same head
                               dims x dtypes x causal), each modifier's and COMBOS', and 392 of
                               mode balanced (tests/test_gen_spec.c) */
  cr_expect(!strncmp(r.out, "fwd_bf16_d16_m128n64w4s1_none\n", 30), "%s", r.out);
  tu_run_free(&r);
}

Test(cli, help_for_every_command) {
  const char *cmds[] = {"gen", "list", "build"};
  for (int i = 0; i < 3; i++) {
    tu_run r = tu_fa2(NULL, ARGS(cmds[i], "--help"));
    char want[64];
    snprintf(want, sizeof want, "usage: fa2 %s", cmds[i]);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, want), "%s", r.out);
    tu_run_free(&r);
    r = tu_fa2(NULL, ARGS(cmds[i], "-h"));
    cr_expect_eq(r.status, 0);
    tu_run_free(&r);
  }
  tu_run r = tu_fa2(NULL, ARGS("--help"));
  cr_expect_eq(r.status, 0);
  cr_expect(strstr(r.out, "gen") && strstr(r.out, "build") && strstr(r.out, "list"));
  tu_run_free(&r);
}

/* fa2 tune --show reads a database without a GPU: the key's tiles and
 * timings, then a line per tuned length with its own tiles. */
Test(cli, tune_show_prints_the_database_with_its_lengths) {
  char *dir = tu_tmpdir();
  char *db = tu_write(dir, "t.json",
                      "{\"format\": \"fa2gen-tuning\", \"version\": 2, \"gpu\": {\"name\": \"NVIDIA "
                      "H100 80GB HBM3\", \"arch\": \"sm_90\", \"sm_count\": 132}, \"made_with\": "
                      "{\"fa2gen\": \"0.1.0\", \"driver\": 13000, \"nvrtc\": \"13.0\"}, \"updated\": "
                      "\"2026-11-23T18:00:00Z\", \"entries\": {\"fwd_bf16_d128_none\": {\"block_m\": "
                      "128, \"block_n\": 64, \"warps\": 4, \"stages\": 1, \"ms\": {\"1024\": 0.455}, "
                      "\"by_seqlen\": {\"1024\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, "
                      "\"stages\": 1}, \"16384\": {\"block_m\": 128, \"block_n\": 176, \"warps\": 8, "
                      "\"stages\": 2, \"wgmma\": true}}}}}");
  tu_run r = tu_fa2(NULL, ARGS("tune", "--show", "--db", db));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "gpu: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"), "%s", r.out);
  cr_expect(strstr(r.out, "fwd_bf16_d128_none             m128n64w4s1    -           0       0  "
                          "1024:0.455"), "%s", r.out);
  cr_expect(strstr(r.out, "  N=1024   m128n64w4s1\n  N=16384  m128n176w8s2wg\n"), "%s", r.out);
  tu_run_free(&r);
  r = tu_fa2(NULL, ARGS("tune", "--finalists", "0", "--show", "--db", db)); /* no second pass */
  cr_expect_eq(r.status, 0, "%s", r.err);
  tu_run_free(&r);
  free(db);
  free(dir);
}

Test(cli, usage_errors_exit_2) {
  struct {
    const char *const *args;
    const char *want;
  } cases[] = {
      {ARGS("gen", "--bogus"), "unknown option '--bogus'"},
      {ARGS("gen", "-q"), "unknown option '-q'"},
      {ARGS("gen", "-o"), "option '-o' needs a value"},
      {ARGS("gen", "--templates"), "option '--templates' needs a value"},
      {ARGS("gen", "a.lua", "b.lua"), "one SPEC at most"},
      {ARGS("gen", "/nonexistent/spec.lua"), "cannot read /nonexistent/spec.lua"},
      {ARGS("gen", "specs/default.lua", "--templates", "/nonexistent"), "--templates /nonexistent"},
      {ARGS("list", "--bogus"), "unknown option"},
      {ARGS("build", "-j", "0"), "-j 0: expected a positive number"},
      {ARGS("build", "-j", "x"), "-j x"},
      {ARGS("build", "--arch", ""), "--arch : expected a comma-separated list"},
      {ARGS("build", "--arch", "sm_80,,sm_90"), "expected a comma-separated list"},
      {ARGS("build", "specs/default.lua", "--arch", "sm_99"), "arch = \"sm_99\""},
      {ARGS("build", "specs/default.lua", "--arch", "sm_80,sm_86"), "sm_86 allows 101376"},
      {ARGS("tune", "--finalists", "1"), "--finalists 1: not allowed; allowed: 0 (no second pass)"},
      {ARGS("tune", "--final-reps", "0"), "--final-reps 0: not allowed; allowed: whole numbers from 1 to 100"},
      {ARGS("frobnicate"), "unknown command 'frobnicate'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tu_run r = tu_fa2(NULL, cases[i].args);
    cr_expect_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err);
    cr_expect(strstr(r.err, cases[i].want), "case %zu: '%s' not in: %s", i, cases[i].want, r.err);
    tu_run_free(&r);
  }
}
