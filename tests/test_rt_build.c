/* fa2 build and the library's build code: cubins, build.json, the spill
 * gate, and the full check that compiles every variant of specs/full.lua
 * (specs/default.lua's among them) and specs/padded.lua for sm_80 and sm_90
 * (skipped with FA2_TEST_QUICK=1). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"
#include "rt_build.h"
#include "gen_test_util.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static char *path_in(const char *dir, const char *rel) {
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

#define SMALL_SPEC                                                                         \
  "return { dtype = {'bf16'}, head_dim = {64}, causal = {true}, arch = {'sm_80', 'sm_90'},\n" \
  "  stab = {{ mode = 'robust' }} }\n"
#define SMALL_NAME "fwd_bf16_d64_causal_m128n64w4s1_robust_b2_e1em3"
#define SMALL_WGMMA "fwd_bf16_d64_causal_m64n128w4s2wg_robust_b2_e1em3" /* auto on sm_90 */

/* 1 when the resource table has a row for name on arch. */
static int has_row(const char *out, const char *name, const char *arch) {
  for (const char *p = strstr(out, name); p; p = strstr(p + 1, name)) {
    const char *eol = strchr(p, '\n'), *a = strstr(p, arch);
    if (a && (!eol || a < eol)) return 1;
  }
  return 0;
}

Test(build, cli_writes_cubins_and_build_json) {
  char *t = tu_tmpdir(), *spec = tu_write(t, "s.lua", SMALL_SPEC), *out = path_in(t, "out");
  tu_run r = tu_fa2(NULL, ARGS("build", spec, "-o", out, "-j", "2"));
  cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
  /* "auto" picks per arch: each built for its arch only (sm_90's is a wgmma tile) */
  cr_expect(has_row(r.out, SMALL_NAME, "sm_80"), "%s", r.out);
  cr_expect(!has_row(r.out, SMALL_NAME, "sm_90"), "%s", r.out);
  cr_expect(has_row(r.out, SMALL_WGMMA, "sm_90"), "%s", r.out);
  cr_expect(!has_row(r.out, SMALL_WGMMA, "sm_80"), "%s", r.out);
  cr_expect(strstr(r.out, "2 variants x 2 arches: 2 compiles (wgmma tiles on sm_90 only)"), "%s", r.out);
  cr_expect(strstr(r.out, "/sm_80/: 1 cubins, build.json") && strstr(r.out, "/sm_90/: 1 cubins, build.json"),
            "%s", r.out);
  cr_expect(strstr(r.out, "36864+0"), "smem column: %s", r.out);
  cr_expect(strstr(r.out, "0 failed, 0 with spills"), "%s", r.out);
  cr_expect(strstr(r.out, "wrote") && strstr(r.out, "manifest.json"), "sources written: %s", r.out);
  tu_expect_dir(out, "manifest.json sm_80 sm_90 src");

  char *mpath = path_in(out, "manifest.json");
  json_t *m = json_load_file(mpath, 0, NULL);
  cr_assert_not_null(m);
  const char *src_hash[2] = {NULL, NULL}; /* the manifest's, of SMALL_NAME and SMALL_WGMMA */
  json_t *mv = json_object_get(m, "variants");
  for (size_t i = 0; i < json_array_size(mv); i++) {
    const char *n = json_string_value(json_object_get(json_array_get(mv, i), "name"));
    const char *h = json_string_value(json_object_get(json_array_get(mv, i), "source_hash"));
    if (n && !strcmp(n, SMALL_NAME)) src_hash[0] = h;
    if (n && !strcmp(n, SMALL_WGMMA)) src_hash[1] = h;
  }
  cr_assert(src_hash[0] && src_hash[1], "manifest.json lacks a variant");
  for (int a = 0; a < 2; a++) {
    const char *arch = a ? "sm_90" : "sm_80";
    char rel[300];
    snprintf(rel, sizeof rel, "%s/build.json", arch);
    char *bpath = path_in(out, rel);
    json_error_t jerr;
    json_t *b = json_load_file(bpath, 0, &jerr);
    cr_assert_not_null(b, "%s: %s", bpath, jerr.text);
    cr_expect_str_eq(json_string_value(json_object_get(b, "arch")), arch);
    cr_expect_str_eq(json_string_value(json_object_get(b, "fa2gen_version")), gen_version());
    int major, minor;
    rt_nvrtc_version(&major, &minor);
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", major, minor);
    if (major) cr_expect_str_eq(json_string_value(json_object_get(b, "nvrtc_version")), ver);
    const char *name = a ? SMALL_WGMMA : SMALL_NAME, *other = a ? SMALL_NAME : SMALL_WGMMA;
    json_t *k = json_object_get(json_object_get(b, "kernels"), name);
    cr_assert_not_null(k, "%s not in %s/build.json", name, arch);
    cr_expect_null(json_object_get(json_object_get(b, "kernels"), other), "%s in %s/build.json", other, arch);
    cr_expect_str_eq(json_string_value(json_object_get(k, "source_hash")), src_hash[a]);
    char cubin_name[200];
    snprintf(cubin_name, sizeof cubin_name, "%s.cubin", name);
    cr_expect_str_eq(json_string_value(json_object_get(k, "cubin")), cubin_name);
    snprintf(rel, sizeof rel, "%s/%s.cubin", arch, name);
    char *cpath = path_in(out, rel), h[GEN_HASH_LEN];
    size_t len;
    char *cubin = tu_read(cpath, &len);
    cr_assert_not_null(cubin, "%s missing", cpath);
    cr_expect(len > 1000 && !memcmp(cubin, "\x7f" "ELF", 4), "a cubin is an ELF file");
    gen_hash(cubin, len, h);
    cr_expect_str_eq(json_string_value(json_object_get(k, "cubin_hash")), h);
    cr_expect_gt(json_integer_value(json_object_get(k, "registers")), 0);
    cr_expect_eq(json_integer_value(json_object_get(k, "spill_store_bytes")), 0);
    cr_expect_eq(json_integer_value(json_object_get(k, "stack_bytes")), 0);
    cr_expect_eq(json_integer_value(json_object_get(k, "smem_bytes")), a ? 74752 : 36864);
    cr_expect_eq(json_integer_value(json_object_get(k, "threads")), 128);
    cr_expect_not_null(json_object_get(json_object_get(k, "entries"), "fa2_fwd"));
    json_decref(b);
    free(cubin), free(cpath), free(bpath);
  }
  json_decref(m);
  tu_run_free(&r);

  /* Again for one arch only: sources are current (not rewritten), the other
   * arch's folder stays, and the bytes are the same. */
  char *before = tu_tree_digest(out);
  r = tu_fa2(NULL, ARGS("build", spec, "-o", out, "--arch", "sm_90"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(!strstr(r.out, "manifest.json"), "sources rewritten: %s", r.out);
  char *after = tu_tree_digest(out);
  cr_expect_str_eq(after, before, "a rebuild changed bytes (NVRTC not deterministic?)");
  tu_run_free(&r);
  free(before), free(after), free(mpath), free(out), free(spec), free(t);
}

/* A kernel with a stack frame fails the build unless the spec allows it. */
/* --arch with an arch the spec does not name builds that arch's "auto" picks: d = 96's
 * forward with ALiBi on sm_86 is TILES_MODIFIED's tile (sm_80's), not sm_90's. */
Test(build, cli_arch_outside_the_spec_builds_its_own_picks) {
  char *t = tu_tmpdir(), *out = path_in(t, "out");
  char *spec = tu_write(t, "s.lua",
                        "return { dtype = {'bf16'}, head_dim = {96}, causal = {false}, alibi = {true},\n"
                        "  stab = {{ mode = 'none' }}, arch = {'sm_80', 'sm_90'} }\n");
  tu_run r = tu_fa2(NULL, ARGS("build", spec, "--arch", "sm_86", "-o", out, "-j", "1"));
  cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
  cr_expect(has_row(r.out, "fwd_bf16_d96_alibi_m128n32w4s2_none", "sm_86"), "%s", r.out);
  cr_expect(!strstr(r.out, "m128n48w4s2"), "sm_90's pick built for sm_86: %s", r.out);
  cr_expect(strstr(r.out, "2 variants x 1 arches: 1 compiles"), "%s", r.out);
  tu_run_free(&r);
  free(spec), free(out), free(t);
}

Test(build, spills_fail_unless_allowed) {
  char *t = tu_tmpdir(), *tpl = path_in(t, "tpl"), *out = path_in(t, "out");
  cr_assert_eq(mkdir(tpl, 0777), 0);
  free(tu_write(tpl, "fa2_params.h", "struct fa2_fwd_params { float *o; int n; };\n"));
  free(tu_write(tpl, "fwd.cu.tpl",
                "{% include \"fa2_params.h\" %}\n"
                "extern \"C\" __global__ void fa2_fwd(fa2_fwd_params p) {\n"
                "  float a[256];  // indexed at run time: lives on the stack\n"
                "  for (int i = 0; i < 256; i++) a[i] = p.o[i * p.n + threadIdx.x];\n"
                "  float s = 0;\n"
                "  for (int i = 0; i < p.n; i++) s += a[(i * 7 + p.n) & 255];\n"
                "  p.o[threadIdx.x] = s;\n"
                "}\n"));
  char *spec = tu_write(t, "s.lua", "return { dtype = {'bf16'}, head_dim = {64}, causal = {false},\n"
                                    "  stab = {{ mode = 'none' }}, arch = {'sm_80'} }\n");
  tu_run r = tu_fa2(NULL, ARGS("build", spec, "-o", out, "--templates", tpl));
  cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "<- spills"), "%s", r.out);
  cr_expect(strstr(r.err, "spill registers or use a stack frame") && strstr(r.err, "allow_spills"),
            "%s", r.err);
  cr_expect(!tu_exists(out), "nothing written");
  tu_run_free(&r);
  free(tu_write(NULL, spec, "return { dtype = {'bf16'}, head_dim = {64}, causal = {false},\n"
                            "  stab = {{ mode = 'none' }}, arch = {'sm_80'}, allow_spills = true }\n"));
  r = tu_fa2(NULL, ARGS("build", spec, "-o", out, "--templates", tpl));
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "(allowed by the spec)"), "%s", r.out);
  cr_expect(tu_exists(out), "written");
  tu_run_free(&r);
  free(spec), free(out), free(tpl), free(t);
}

Test(build, compile_errors_are_reported_and_nothing_written) {
  char *t = tu_tmpdir(), *tpl = path_in(t, "tpl"), *out = path_in(t, "out");
  cr_assert_eq(mkdir(tpl, 0777), 0);
  free(tu_write(tpl, "fwd.cu.tpl", "extern \"C\" __global__ void fa2_fwd() { undeclared(); }\n"));
  char *spec = tu_write(t, "s.lua", "return { dtype = {'bf16'}, head_dim = {64}, causal = {false},\n"
                                    "  stab = {{ mode = 'none' }}, arch = {'sm_80'} }\n");
  tu_run r = tu_fa2(NULL, ARGS("build", spec, "-o", out, "--templates", tpl));
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "NVRTC failed to compile fwd_bf16_d64_m128n64w4s1_none.cu for sm_80"),
            "%s", r.err);
  cr_expect(strstr(r.err, "undeclared"), "%s", r.err);
  cr_expect(!tu_exists(out));
  tu_run_free(&r);
  free(spec), free(out), free(tpl), free(t);
}

/* Every variant of the shipped specs compiles for sm_80 and sm_90 without
 * spills or stack frames, through the library's parallel build. */
static void full_check(const char *spec_path) {
  if (getenv("FA2_TEST_QUICK") && !strcmp(getenv("FA2_TEST_QUICK"), "1"))
    cr_skip_test("FA2_TEST_QUICK=1: NVRTC check of %s skipped (the plain `make test` run does it)",
                 spec_path);
  gen_state *g = tu_open(NULL);
  gen_spec s;
  gen_rendered r;
  rt_build b;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, spec_path, &s, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render_all(g, &s, &r, &err), GEN_OK, "%s", err.msg);
  const char *arch[] = {"sm_80", "sm_90"};
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  cr_assert_eq(rt_build_run(&s, &r, arch, 2, ncpu > 0 ? (int)ncpu : 2, NULL, NULL, &b, &err), GEN_OK,
               "%s", err.msg);
  int wgmma = 0, one_arch = 0; /* wgmma: built for sm_90 only; one_arch: either arch's pick */
  for (int i = 0; i < s.n_variants; i++) {
    wgmma += s.variants[i].wgmma;
    one_arch += gen_spec_runs_on(&s, i, "sm_80") + gen_spec_runs_on(&s, i, "sm_90") == 1;
  }
  cr_expect_gt(wgmma, 0, "%s: no wgmma variant for sm_90", spec_path);
  cr_expect_eq(b.n_items, 2 * s.n_variants - one_arch);
  for (int i = 0; i < b.n_items; i++) {
    const rt_build_item *it = &b.items[i];
    const char *name = s.variants[it->variant].name, *a = b.arch[it->arch];
    cr_expect(!s.variants[it->variant].wgmma || !strcmp(a, "sm_90"), "%s built for %s", name, a);
    cr_expect(gen_spec_runs_on(&s, it->variant, a), "%s built for %s, not its pick there", name, a);
    cr_expect(it->ok, "%s %s: %s", name, a, it->err);
    cr_expect(it->ok && it->registers > 0, "%s %s: no register count", name, a);
    cr_expect_eq(it->spill_store_bytes + it->spill_load_bytes, 0, "%s %s spills %d/%d bytes", name, a,
                 it->spill_store_bytes, it->spill_load_bytes);
    cr_expect_eq(it->stack_bytes, 0, "%s %s has a %d-byte stack frame", name, a, it->stack_bytes);
  }
  cr_expect_eq(b.failed, 0);
  cr_expect_eq(b.spilling, 0);
  cr_log_info("%s: %d compiles in %.1f s", spec_path, b.n_items, b.wall_ms / 1e3);
  rt_build_free(&b);
  gen_rendered_free(&r);
  gen_spec_free(&s);
  gen_close(g);
}

/* specs/default.lua's variants are full.lua's (the same names, sources and arches), whose
 * check below compiles them: compiling them again cost about a minute of CPU (bench/NOTES.md
 * "Session 23"). A default variant outside full.lua fails here. */
Test(build, default_spec_is_inside_the_full_spec) {
  gen_state *g = tu_open(NULL);
  gen_spec d, f;
  gen_rendered rd, rf;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, "specs/default.lua", &d, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_spec_load(g, "specs/full.lua", &f, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render_all(g, &d, &rd, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render_all(g, &f, &rf, &err), GEN_OK, "%s", err.msg);
  cr_assert_gt(d.n_variants, 0);
  const char *arch[] = {"sm_80", "sm_90"};
  for (int i = 0; i < d.n_variants; i++) {
    int j = 0;
    while (j < f.n_variants && strcmp(f.variants[j].name, d.variants[i].name)) j++;
    cr_assert_lt(j, f.n_variants, "%s (specs/default.lua) is not in specs/full.lua: its spill check "
                 "would not compile it", d.variants[i].name);
    cr_expect_str_eq(rd.hash[i], rf.hash[j], "%s renders differently in the two specs", d.variants[i].name);
    for (int a = 0; a < 2; a++)
      cr_expect_eq(gen_spec_runs_on(&d, i, arch[a]), gen_spec_runs_on(&f, j, arch[a]), "%s on %s",
                   d.variants[i].name, arch[a]);
  }
  gen_rendered_free(&rd), gen_rendered_free(&rf);
  gen_spec_free(&d), gen_spec_free(&f);
  gen_close(g);
}
Test(build, full_spec_compiles_without_spills) { full_check("specs/full.lua"); }
/* Head dims on the tiles of the next kernel head dim: their masks cost registers. */
Test(build, padded_spec_compiles_without_spills) { full_check("specs/padded.lua"); }
/* ws tiles at their register budgets (240 per consumer with two consumer
 * warpgroups, 160 with three): no spills (bench/gpu_run.sh ws builds all of
 * tests/gpu/ws_spec.lua, 60 variants, with the same check). */
Test(build, ws_tiles_compile_without_spills) { full_check("tests/gpu/ws_sanitize_spec.lua"); }
