/* fa2 build and the library's build code: cubins, build.json, the spill
 * gate, and the spill check of every variant of specs/full.lua (specs/default.lua's
 * among them) and specs/padded.lua for sm_80 and sm_90: compiled, or recorded in
 * tests/golden/ (spill_record.h) with a sample compiled (skipped with FA2_TEST_QUICK=1). */
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
#include "spill_record.h"

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
 * spills or stack frames. Compiling all of specs/full.lua takes about 30 min
 * on CI's two cores, so a spill record (spill_record.h) keeps what ptxas said
 * for each variant's source with this compiler: the check compiles every
 * variant whose source or compiler the record does not know, and of the rest
 * the most register-hungry of each class (pass, head dim, dtype, causal, tile
 * family, arch), whose resources must equal the record's. FA2_FULL_SPILL_CHECK=1 compiles
 * everything; FA2_UPDATE_GOLDEN=1 rewrites the record from this run. */
typedef struct check_item {
  int variant, arch;  /* arch: 0 sm_80, 1 sm_90 */
  const sr_row *row;  /* the record's, for this source and compiler; or NULL */
  int compile;        /* compiled in this run */
  rt_build_item got;  /* its result (compiled items) */
} check_item;

static const char *const CHECK_ARCH[] = {"sm_80", "sm_90"};

/* The sample's class of a variant: pass, head dim, dtype, causal or not, tile family (the
 * arch is compared by the caller). */
static int same_class(const gen_variant *a, const gen_variant *b) {
  return a->pass == b->pass && a->head_dim == b->head_dim && a->dtype == b->dtype && a->causal == b->causal &&
         a->wgmma == b->wgmma && a->ws == b->ws;
}

/* Compiles the items marked `compile` of one arch (a sub-spec of their variants). */
static void compile_marked(const gen_spec *s, const gen_rendered *r, check_item *items, int n, int arch) {
  gen_spec sub = *s;
  gen_rendered sr = {0};
  int *of = calloc((size_t)n + 1, sizeof *of);
  sub.variants = calloc((size_t)n + 1, sizeof *sub.variants);
  sub.arch_picks = calloc((size_t)n + 1, sizeof *sub.arch_picks);
  sr.src = calloc((size_t)n + 1, sizeof *sr.src);
  sr.len = calloc((size_t)n + 1, sizeof *sr.len);
  sr.hash = calloc((size_t)n + 1, sizeof *sr.hash);
  cr_assert(of && sub.variants && sub.arch_picks && sr.src && sr.len && sr.hash);
  sub.n_variants = 0;
  for (int i = 0; i < n; i++) {
    if (!items[i].compile || items[i].arch != arch) continue;
    int v = items[i].variant, k = sub.n_variants++;
    of[k] = i;
    sub.variants[k] = s->variants[v];
    memcpy(sub.arch_picks[k], s->arch_picks[v], sizeof sub.arch_picks[k]);
    sr.src[k] = r->src[v], sr.len[k] = r->len[v];
    memcpy(sr.hash[k], r->hash[v], sizeof sr.hash[k]);
  }
  sr.n = sub.n_variants;
  if (sub.n_variants) {
    rt_build b;
    gen_err err;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_eq(rt_build_run(&sub, &sr, &CHECK_ARCH[arch], 1, ncpu > 0 ? (int)ncpu : 2, NULL, NULL, &b, &err),
                 GEN_OK, "%s", err.msg);
    cr_assert_eq(b.n_items, sub.n_variants, "%s: every marked variant built", CHECK_ARCH[arch]);
    for (int j = 0; j < b.n_items; j++) {
      items[of[b.items[j].variant]].got = b.items[j];
      items[of[b.items[j].variant]].got.cubin = (rt_blob){0};
    }
    rt_build_free(&b);
  }
  free(of), free(sub.variants), free(sub.arch_picks), free(sr.src), free(sr.len), free(sr.hash);
}

/* The check's pairs (variant, arch) of s in items (room for 2 per variant), each with its
 * record row (rec's, for this source, when rec was made with `compiler`) and whether it
 * compiles: every pair the record does not know (all with `everything`) and, of the rest,
 * each class's most register-hungry (the first of equals). Returns the pair count;
 * *changed: pairs not in the record, *sampled: recorded pairs that compile. */
static int plan_check(const gen_spec *s, const gen_rendered *r, const sr_record *rec, const char *compiler,
                      int everything, check_item *items, int *changed, int *sampled) {
  const int known = !strcmp(rec->compiler, compiler);
  int n = 0;
  *changed = *sampled = 0;
  for (int v = 0; v < s->n_variants; v++)
    for (int a = 0; a < 2; a++) {
      if (!gen_spec_runs_on(s, v, CHECK_ARCH[a])) continue;
      check_item *it = &items[n++];
      memset(it, 0, sizeof *it);
      it->variant = v, it->arch = a;
      it->row = known ? sr_find(rec, s->variants[v].name, CHECK_ARCH[a], r->hash[v]) : NULL;
      it->compile = everything || !it->row;
      *changed += !it->row;
    }
  for (int i = 0; i < n; i++) {
    if (!items[i].row) continue;
    int best = 1;
    for (int j = 0; j < n && best; j++)
      if (j != i && items[j].row && items[j].arch == items[i].arch &&
          same_class(&s->variants[items[j].variant], &s->variants[items[i].variant]))
        best = items[j].row->registers < items[i].row->registers ||
               (items[j].row->registers == items[i].row->registers && j > i);
    if (best && !items[i].compile) items[i].compile = 1, ++*sampled;
  }
  return n;
}

static void full_check(const char *spec_path, const char *record_path) {
  if (tu_quick())
    cr_skip_test("FA2_TEST_QUICK=1: NVRTC check of %s skipped (the plain `make test` run does it)",
                 spec_path);
  gen_state *g = tu_open(NULL);
  gen_spec s;
  gen_rendered r;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, spec_path, &s, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render_all(g, &s, &r, &err), GEN_OK, "%s", err.msg);
  char why[1024], compiler[256];
  cr_assert_eq(rt_nvrtc_load(NULL, why, sizeof why), 0, "%s", why);
  sr_compiler(compiler, sizeof compiler);
  sr_record rec = {0};
  const char *full = getenv("FA2_FULL_SPILL_CHECK"), *update = getenv("FA2_UPDATE_GOLDEN");
  if (record_path && sr_read(record_path, &rec, why, sizeof why) != 0)
    cr_log_warn("%s: no spill record (%s): every variant is compiled", spec_path, why);
  else if (record_path && strcmp(rec.compiler, compiler))
    cr_log_warn("%s: recorded with %s, this machine has %s: every variant is compiled", record_path,
                rec.compiler, compiler);
  check_item *items = calloc((size_t)s.n_variants * 2 + 1, sizeof *items);
  cr_assert(items);
  int changed, sampled;
  const int n = plan_check(&s, &r, &rec, compiler, full && !strcmp(full, "1"), items, &changed, &sampled);
  int wgmma = 0;
  for (int i = 0; i < n; i++) {
    const gen_variant *v = &s.variants[items[i].variant];
    wgmma += v->wgmma;
    cr_expect(!v->wgmma || items[i].arch == 1, "%s built for %s", v->name, CHECK_ARCH[items[i].arch]);
  }
  cr_expect_gt(wgmma, 0, "%s: no wgmma variant for sm_90", spec_path);
  compile_marked(&s, &r, items, n, 0);
  compile_marked(&s, &r, items, n, 1);

  int compiled = 0;
  sr_row *rows = calloc((size_t)n + 1, sizeof *rows);
  cr_assert(rows);
  for (int i = 0; i < n; i++) {
    const check_item *it = &items[i];
    const char *name = s.variants[it->variant].name, *a = CHECK_ARCH[it->arch];
    sr_row *w = &rows[i];
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->arch, sizeof w->arch, "%s", a);
    memcpy(w->hash, r.hash[it->variant], sizeof w->hash);
    if (it->compile) {
      compiled++;
      cr_expect(it->got.ok, "%s %s: %s", name, a, it->got.err);
      cr_expect(it->got.ok && it->got.registers > 0, "%s %s: no register count", name, a);
      w->registers = it->got.registers, w->stack = it->got.stack_bytes;
      w->spill_stores = it->got.spill_store_bytes, w->spill_loads = it->got.spill_load_bytes;
      if (it->row)
        cr_expect(it->row->registers == w->registers && it->row->stack == w->stack &&
                      it->row->spill_stores == w->spill_stores && it->row->spill_loads == w->spill_loads,
                  "%s %s: compiled to %d registers, %d/%d spill bytes, %d stack; %s records %d, %d/%d, %d",
                  name, a, w->registers, w->spill_stores, w->spill_loads, w->stack, record_path,
                  it->row->registers, it->row->spill_stores, it->row->spill_loads, it->row->stack);
    } else {
      *w = *it->row;
    }
    cr_expect_eq(w->spill_stores + w->spill_loads, 0, "%s %s spills %d/%d bytes%s", name, a, w->spill_stores,
                 w->spill_loads, it->compile ? "" : " (recorded)");
    cr_expect_eq(w->stack, 0, "%s %s has a %d-byte stack frame%s", name, a, w->stack,
                 it->compile ? "" : " (recorded)");
  }
  cr_log_info("%s: %d variant-arch pairs, %d compiled (%d not in the record, %d sampled)", spec_path, n,
              compiled, changed, sampled);
  if (changed && record_path && !(update && *update))
    cr_log_warn("%s: %d pairs not in %s: CUDA_CACHE_DISABLE=1 FA2_UPDATE_GOLDEN=1 bin/fa2_tests "
                "--filter 'build/*spec*' records them (CI compiles them every run until then)",
                spec_path, changed, record_path);
  if (record_path && update && *update)
    cr_assert_eq(sr_write(record_path, compiler, rows, n), 0, "cannot write %s", record_path);
  free(rows);
  free(items);
  sr_free(&rec);
  gen_rendered_free(&r);
  gen_spec_free(&s);
  gen_close(g);
}

/* plan_check without NVRTC, on a record made here for tests/gpu/short_causal_spec.lua (24
 * variants on sm_90, 8 classes: 4 head dims x 2 dtypes, 3 modes each): a complete record
 * compiles each class's most register-hungry pair only; a changed source compiles that
 * pair too (and the class's next one, if it was the sample); another compiler line, or
 * `everything`, compiles all. */
Test(build, the_check_compiles_what_the_record_does_not_know_and_a_sample) {
  gen_state *g = tu_open(NULL);
  gen_spec s;
  gen_rendered r;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, "tests/gpu/short_causal_spec.lua", &s, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render_all(g, &s, &r, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(s.n_variants, 24);
  sr_row rows[24];
  sr_record rec = {"C", 24, rows};
  for (int v = 0; v < 24; v++) {
    memset(&rows[v], 0, sizeof rows[v]);
    snprintf(rows[v].name, sizeof rows[v].name, "%s", s.variants[v].name);
    snprintf(rows[v].arch, sizeof rows[v].arch, "sm_90");
    memcpy(rows[v].hash, r.hash[v], sizeof rows[v].hash);
    rows[v].registers = 100 + (v * 7) % 24; /* distinct: one most register-hungry a class */
  }
  check_item items[48];
  int changed, sampled, n = plan_check(&s, &r, &rec, "C", 0, items, &changed, &sampled);
  cr_assert_eq(n, 24, "sm_90 only");
  cr_expect_eq(changed, 0);
  cr_expect_eq(sampled, 8, "one a class");
  for (int i = 0; i < n; i++) {
    int top = 1; /* the class's most registers */
    for (int j = 0; j < n; j++)
      if (same_class(&s.variants[j], &s.variants[i]) && rows[j].registers > rows[i].registers) top = 0;
    cr_expect_eq(items[i].compile, top, "%s (%d registers)", s.variants[i].name, rows[i].registers);
    cr_expect_eq(items[i].row, &rows[i]);
  }
  int sample = 0; /* a sampled pair's source changes: it compiles, and its class's next one too */
  while (!items[sample].compile) sample++;
  rows[sample].hash[10] ^= 1;
  n = plan_check(&s, &r, &rec, "C", 0, items, &changed, &sampled);
  cr_expect_eq(changed, 1);
  cr_expect_eq(sampled, 8);
  cr_expect(items[sample].compile && !items[sample].row, "the changed source compiles, unrecorded");
  int compiled = 0;
  for (int i = 0; i < n; i++) compiled += items[i].compile;
  cr_expect_eq(compiled, 9);
  n = plan_check(&s, &r, &rec, "D", 0, items, &changed, &sampled);
  cr_expect(changed == 24 && sampled == 0, "another compiler: %d changed, %d sampled", changed, sampled);
  for (int i = 0; i < n; i++) cr_expect(items[i].compile && !items[i].row);
  n = plan_check(&s, &r, &rec, "C", 1, items, &changed, &sampled);
  for (int i = 0; i < n; i++) cr_expect(items[i].compile, "everything");
  cr_expect(changed == 1 && sampled == 0);
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
Test(build, full_spec_compiles_without_spills) {
  full_check("specs/full.lua", "tests/golden/full_spec_resources.txt");
}
/* Head dims on the tiles of the next kernel head dim: their masks cost registers. */
Test(build, padded_spec_compiles_without_spills) {
  full_check("specs/padded.lua", "tests/golden/padded_spec_resources.txt");
}
/* ws tiles at their register budgets (240 per consumer with two consumer
 * warpgroups, 160 with three): no spills (bench/gpu_run.sh ws builds all of
 * tests/gpu/ws_spec.lua, 60 variants, with the same check). */
Test(build, ws_tiles_compile_without_spills) { full_check("tests/gpu/ws_sanitize_spec.lua", NULL); }
/* the ws backward's windowed variants, which no default selects yet (specs/full.lua has
 * the plain ones) */
Test(build, ws_backward_tiles_compile_without_spills) { full_check("tests/gpu/ws_bwd_sanitize_spec.lua", NULL); }
/* the ws backward past d = 128 (bwd_ws_wide.cuh.tpl), which no default selects yet */
Test(build, ws_wide_backward_tiles_compile_without_spills) { full_check("tests/gpu/ws_wide_bwd_spec.lua", NULL); }
/* The tile of the causal forward's length rule below N = 1k (rt_select.c) at the head dims on 64's tiles. */
Test(build, short_causal_tiles_compile_without_spills) { full_check("tests/gpu/short_causal_spec.lua", NULL); }
