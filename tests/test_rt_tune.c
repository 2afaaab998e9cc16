/* The autotuner and the tuning database: file format, identity matching,
 * fallback, choice rule, journal and resume; fa2_tune end to end on the
 * stand-in driver (tests/fake) with the real generator and a fake NVRTC.
 * On the GPU, bench/gpu_run.sh tune times the real thing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fake_driver.h"
#include "rt_context.h"
#include "rt_fake_gen.h"
#include "rt_paths.h"
#include "rt_select.h"
#include "rt_test_util.h"
#include "rt_tune.h"
#include "rt_tuning.h"

static fake_cuda_state *fake;
static char root[256];
static tu_log seen;

static void setup(void) {
  fake = tu_fake_driver();
  tu_tmpdir(root, sizeof root);
  memset(&seen, 0, sizeof seen);
  rt_jit_set_compiler_for_tests(fg_compile); /* the real generator, a fake NVRTC */
  fake->elapsed_ms = 0;
  fake->alloc_ok = 1;
}

static void teardown(void) {
  rt_jit_set_compiler_for_tests(NULL);
  fake->elapsed_ms = 0;
  tu_rmtree(root);
}

TestSuite(tuning, .init = setup, .fini = teardown);

static const rt_log quiet = {FA2_LOG_QUIET, NULL, NULL};

static rt_identity h100(void) {
  rt_identity id = {"NVIDIA H100 80GB HBM3", "sm_90", 132, 13000, 13, 0, ""};
  snprintf(id.fa2gen, sizeof id.fa2gen, "%s", gen_version());
  return id;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

Test(tuning, identity_slug_and_default_path) {
  rt_identity id = h100();
  char slug[160], path[512];
  rt_identity_slug(&id, slug, sizeof slug);
  cr_expect_str_eq(slug, "nvidia-h100-80gb-hbm3_sm_90_132sm");
  cr_assert_eq(rt_identity_db_path(&id, "/c", path, sizeof path), 0);
  cr_expect_str_eq(path, "/c/tuning/nvidia-h100-80gb-hbm3_sm_90_132sm.json");
  snprintf(id.name, sizeof id.name, "  --  ");
  rt_identity_slug(&id, slug, sizeof slug);
  cr_expect_str_eq(slug, "gpu_sm_90_132sm");
}

Test(tuning, save_writes_the_documented_format_and_reads_back) {
  char db[300];
  snprintf(db, sizeof db, "%s/sub/dir/t.json", root); /* folders are created */
  rt_identity id = h100();
  json_t *e = json_pack("{s:{s:i, s:i, s:i, s:i}}", "fwd_bf16_d64_robust", "block_m", 128,
                        "block_n", 96, "warps", 8, "stages", 2);
  char err[600];
  cr_assert_eq(rt_tuning_save(db, &id, e, err, sizeof err), 0, "%s", err);
  json_decref(e);
  json_t *root_ = json_load_file(db, 0, NULL);
  cr_assert_not_null(root_);
  cr_expect_str_eq(json_string_value(json_object_get(root_, "format")), "fa2gen-tuning");
  cr_expect_eq(json_integer_value(json_object_get(root_, "version")), 2);
  json_t *gpu = json_object_get(root_, "gpu"), *made = json_object_get(root_, "made_with");
  cr_expect_str_eq(json_string_value(json_object_get(gpu, "name")), "NVIDIA H100 80GB HBM3");
  cr_expect_str_eq(json_string_value(json_object_get(gpu, "arch")), "sm_90");
  cr_expect_eq(json_integer_value(json_object_get(gpu, "sm_count")), 132);
  cr_expect_eq(json_integer_value(json_object_get(made, "driver")), 13000);
  cr_expect_str_eq(json_string_value(json_object_get(made, "nvrtc")), "13.0");
  cr_expect_str_eq(json_string_value(json_object_get(made, "fa2gen")), gen_version());
  json_decref(root_);

  /* a second save merges field by field: tiles stay, stab joins */
  e = json_pack("{s:{s:s, s:f}}", "fwd_bf16_d64_robust", "stab", "robust", "beta", 3.0);
  cr_assert_eq(rt_tuning_save(db, &id, e, err, sizeof err), 0, "%s", err);
  json_decref(e);
  rt_tuning *t = rt_tuning_load(db, &id, 0, &quiet);
  cr_assert_not_null(t);
  rt_tuning_entry en;
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_robust", 0, &en));
  cr_expect_eq(en.block_m, 128);
  cr_expect_eq(en.block_n, 96);
  cr_expect_eq(en.warps, 8);
  cr_expect_eq(en.stages, 2);
  cr_expect_eq(en.stab, GEN_STAB_ROBUST);
  cr_expect_eq(en.beta, 3.0);
  cr_expect_not(rt_tuning_find(t, "fwd_bf16_d64", 0, &en));
  rt_tuning_free(t);

  /* new tiles replace the old tile fields together: no stale by_seqlen */
  e = json_pack("{s:{s:i, s:i, s:i, s:i, s:{s:{s:i, s:i, s:i, s:i}}}}", "fwd_bf16_d64_robust",
                "block_m", 128, "block_n", 96, "warps", 8, "stages", 2, "by_seqlen", "1024",
                "block_m", 64, "block_n", 64, "warps", 4, "stages", 2);
  cr_assert_eq(rt_tuning_save(db, &id, e, err, sizeof err), 0, "%s", err);
  json_decref(e);
  e = json_pack("{s:{s:i, s:i, s:i, s:i}}", "fwd_bf16_d64_robust", "block_m", 64, "block_n", 32,
                "warps", 2, "stages", 2);
  cr_assert_eq(rt_tuning_save(db, &id, e, err, sizeof err), 0, "%s", err);
  json_decref(e);
  t = rt_tuning_load(db, &id, 0, &quiet);
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_robust", 1024, &en));
  cr_expect_eq(en.seqlen, 0, "the first run's by_seqlen is gone");
  cr_expect_eq(en.block_n, 32);
  cr_expect_eq(en.stab, GEN_STAB_ROBUST, "the stab fields stay");
  cr_expect_eq(en.beta, 3.0);
  rt_tuning_free(t);
  cr_expect_eq(tu_count(root, ".tmp."), 0);
}

Test(tuning, another_identity_is_ignored_with_one_warning) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  rt_identity id = h100(), other = id;
  json_t *e = json_pack("{s:{s:i, s:i, s:i, s:i}}", "fwd_bf16_d64", "block_m", 128, "block_n",
                        32, "warps", 8, "stages", 3);
  char err[600];
  cr_assert_eq(rt_tuning_save(db, &id, e, err, sizeof err), 0, "%s", err);
  json_decref(e);
  const rt_log log = {FA2_LOG_DEBUG, tu_log_fn, &seen};
  snprintf(other.name, sizeof other.name, "NVIDIA H100 PCIe");
  cr_expect_null(rt_tuning_load(db, &other, 0, &log));
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1);
  cr_expect(strstr(seen.last, "made for NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), this is NVIDIA "
                              "H100 PCIe (sm_90, 132 SMs)"), "%s", seen.last);
  other = id, other.sm_count = 114;
  cr_expect_null(rt_tuning_load(db, &other, 0, &log));
  other = id, snprintf(other.fa2gen, sizeof other.fa2gen, "9.9.9");
  cr_expect_null(rt_tuning_load(db, &other, 0, &log));
  cr_expect(strstr(seen.last, "made with fa2gen") != NULL, "%s", seen.last);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 3);
  /* another driver or NVRTC: used, with a note */
  other = id, other.driver = 12080;
  rt_tuning *t = rt_tuning_load(db, &other, 0, &log);
  cr_expect_not_null(t);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 3);
  rt_tuning_free(t);
  /* a missing default file is normal; a missing named one is not */
  char missing[300];
  snprintf(missing, sizeof missing, "%s/none.json", root);
  cr_expect_null(rt_tuning_load(missing, &id, 1, &log));
  cr_expect_eq(seen.count[FA2_LOG_WARN], 3);
  cr_expect_null(rt_tuning_load(missing, &id, 0, &log));
  cr_expect_eq(seen.count[FA2_LOG_WARN], 4);
}

Test(tuning, bad_tile_values_are_dropped_with_a_warning) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  FILE *f = fopen(db, "w");
  fprintf(f, "{\"format\": \"fa2gen-tuning\", \"version\": 2, \"gpu\": {\"name\": \"X\", \"arch\": "
             "\"sm_90\", \"sm_count\": 1}, \"made_with\": {\"fa2gen\": \"0\"}, \"entries\": {"
             "\"a\": {\"block_m\": 4294967360, \"block_n\": 64, \"warps\": 4, \"stages\": 1, "
             "\"stab\": \"paper\"},"
             "\"b\": {\"block_m\": 64.0, \"block_n\": 64, \"warps\": 4, \"stages\": 1},"
             "\"c\": {\"block_m\": 64}}}");
  fclose(f);
  const rt_log log = {FA2_LOG_WARN, tu_log_fn, &seen};
  rt_tuning *t = rt_tuning_load(db, NULL, 0, &log);
  cr_assert_not_null(t);
  rt_tuning_entry e;
  cr_assert(rt_tuning_find(t, "a", 0, &e));
  cr_expect_eq(e.block_m, 0);
  cr_expect_eq(e.stab, GEN_STAB_PAPER); /* the other fields still apply */
  cr_expect(strstr(seen.last, "entry a: block_m = 4294967360 is not a tile size (integers 1 to "
                              "1024); built-in tiles for it"), "%s", seen.last);
  cr_assert(rt_tuning_find(t, "b", 0, &e));
  cr_expect_eq(e.block_m, 0);
  cr_expect(strstr(seen.last, "entry b: block_m = 64.0 is not a tile size"), "%s", seen.last);
  cr_assert(rt_tuning_find(t, "c", 0, &e));
  cr_expect_eq(e.block_m, 0);
  cr_expect(strstr(seen.last, "go together"), "%s", seen.last);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 3);
  rt_tuning_free(t);
}

/* ---- selection through a context ---- */

static fa2_context *ctx_with_db(const char *db) {
  fa2_options o = {0};
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", root);
  o.cache_dir = cache;
  o.tuning_db = db;
  o.log_fn = tu_log_fn;
  o.log_user = &seen;
  fa2_context *ctx;
  cr_assert_eq(fa2_create(&ctx, &o), FA2_OK, "%s", fa2_last_error());
  return ctx;
}

/* The identity of the stand-in driver (Fake GPU, arch, 132 SMs). */
static void write_fake_db_for(const char *path, const char *arch, const char *entries) {
  FILE *f = fopen(path, "w");
  fprintf(f, "{\"format\": \"fa2gen-tuning\", \"version\": 2, \"gpu\": {\"name\": \"Fake GPU\", "
             "\"arch\": \"%s\", \"sm_count\": 132}, \"made_with\": {\"fa2gen\": \"%s\", "
             "\"driver\": 13000, \"nvrtc\": \"13.0\"}, \"entries\": %s}",
          arch, gen_version(), entries);
  fclose(f);
}
static void write_fake_db(const char *path, const char *entries) {
  write_fake_db_for(path, "sm_90", entries);
}

static fa2_fwd_args fwd_n(int d, int causal, fa2_stab stab, int n) {
  fa2_fwd_args a = {0};
  const long long row = 2 * d;
  a.q = a.k = a.v = a.o = (fa2_tensor){(void *)0x100000, FA2_BF16, n * row, row, d};
  a.o.data = (void *)0x200000;
  a.lse = (float *)0x300000;
  a.batch = 1, a.seqlen_q = a.seqlen_k = n, a.heads_q = a.heads_kv = 2, a.head_dim = d;
  a.causal = causal, a.stab = stab;
  return a;
}

static fa2_fwd_args fwd(int d, int causal, fa2_stab stab) { return fwd_n(d, causal, stab, 300); }

static void expect_launch_of(fa2_context *ctx, fa2_fwd_args a, const char *name) {
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect(strstr(fake->last_image_head, name) != NULL, "launched %s, expected %s",
            fake->last_image_head, name);
}

/* A database with m128n32w8s2 under robust_key and m64n64w4s2, robust beta 4,
 * eps 2e-3 under fwd_bf16_d64; a context that reads it. */
static fa2_context *ctx_with_mode_db(const char *robust_key) {
  char db[300], entries[600];
  snprintf(db, sizeof db, "%s/t.json", root);
  snprintf(entries, sizeof entries,
           "{\"%s\": {\"block_m\": 128, \"block_n\": 32, \"warps\": 8, \"stages\": 2},"
           "\"fwd_bf16_d64\": {\"block_m\": 64, \"block_n\": 64, \"warps\": 4, "
           "\"stages\": 2, \"stab\": \"robust\", \"beta\": 4, \"eps\": 0.002}}", robust_key);
  write_fake_db(db, entries);
  return ctx_with_db(db);
}

Test(tuning, mode_keys_then_the_plain_key_and_tuned_beta) {
  fa2_context *ctx = ctx_with_mode_db("fwd_bf16_d64_robust");
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_ROBUST), "fwd_bf16_d64_m128n32w8s2_robust_b2_e1em3");
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_TUNED), "fwd_bf16_d64_m128n32w8s2_robust_b4_e2em3");
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_NONE), "fwd_bf16_d64_m64n64w4s2_none");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);
}

/* "wgmma": true picks a Hopper tile; anything but a boolean voids the entry
 * (one warning), and a wgmma tile on a device without wgmma falls back to the
 * built-in tiles with a warning naming why. */
Test(tuning, wgmma_entries) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  const char *entries =
      "{\"fwd_bf16_d128_none\": {\"block_m\": 128, \"block_n\": 128, \"warps\": 8, "
      "\"stages\": 3, \"wgmma\": true},"
      "\"fwd_bf16_d64_none\": {\"block_m\": 64, \"block_n\": 64, \"warps\": 4, "
      "\"stages\": 2, \"wgmma\": \"yes\"}}";
  write_fake_db(db, entries);
  fa2_context *ctx = ctx_with_db(db);
  expect_launch_of(ctx, fwd(128, 0, FA2_STAB_NONE), "fwd_bf16_d128_m128n128w8s3wg_none");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_NONE), "fwd_bf16_d64_m64n128w4s2wg_none");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1);
  cr_expect(strstr(seen.last, "entry fwd_bf16_d64_none: wgmma is not true or false"), "%s", seen.last);
  fa2_destroy(ctx);
  fake->cc_major = 8;
  write_fake_db_for(db, "sm_80", entries);
  ctx = ctx_with_db(db);
  expect_launch_of(ctx, fwd(128, 0, FA2_STAB_NONE), "fwd_bf16_d128_m128n48w4s1_none");
  cr_expect(strstr(seen.last, "tiles m128n128w8s3wg ignored for sm_80") &&
                strstr(seen.last, "wgmma tiles run on sm_90 only"),
            "%s", seen.last);
  fa2_destroy(ctx);
  fake->cc_major = 9;
}

/* A context whose database gives d = 128's forward the ws tile m128n128w12s2ws. */
static fa2_context *ctx_with_ws_db(void) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"fwd_bf16_d128_none\": {\"block_m\": 128, \"block_n\": 128, \"warps\": 12, "
                    "\"stages\": 2, \"ws\": true}}");
  return ctx_with_db(db);
}

/* "ws": true picks a warp-specialized tile: launched as fa2_fwd_ws with its
 * block of 384 threads and the four TMA maps as its second parameter; the
 * maps of a second call with other tensors of the same shapes come from the
 * context's cache, re-addressed (no new encode), also while the stream captures
 * a CUDA graph (nothing there allocates or synchronizes). */
Test(tuning, ws_entries_launch_with_tensor_maps) {
  fa2_context *ctx = ctx_with_ws_db();
  fa2_fwd_args a = fwd(128, 0, FA2_STAB_NONE);
  expect_launch_of(ctx, a, "fwd_bf16_d128_m128n128w12s2ws_none");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fake_launch *l = &fake->last;
  cr_expect_str_eq(l->fn_name, "fa2_fwd_ws");
  cr_expect_eq(l->grid[0], 3); /* ceil(300 / 128) */
  cr_expect_eq(l->block[0], 384);
  cr_expect_eq(l->smem, 1024 + 2 * 128 * (2 * 128 + 2 * 2 * 128) + 256); /* persistent: O staged apart */
  cr_expect(l->params.tile_counter == NULL, "6 work items, 132 SMs: a full grid");
  /* Q and O share a key (same shape, strides, box), K and V too: two encodes. */
  cr_expect_eq(fake->tmap_encodes, 2);
  cr_expect_eq(fake->tmap_replaces, 2);
  const unsigned long long row = 2 * 128 * 2; /* bytes: fwd() packs two heads a row */
  for (int i = 0; i < 4; i++) {
    const fake_tmap *t = &l->maps[i];
    cr_expect_eq(t->address, i == 3 ? 0x200000ull : 0x100000ull, "map %d", i);
    cr_expect_eq(t->dtype, 9, "bf16");
    cr_expect_eq(t->rank, 4);
    cr_expect_eq(t->swizzle, 3, "128-byte swizzle");
    cr_expect_eq(t->oob_fill, 0, "zeros out of bounds");
    cr_expect(t->dims[0] == 128 && t->dims[1] == 300 && t->dims[2] == 2 && t->dims[3] == 1);
    cr_expect(t->strides[0] == row && t->strides[1] == 256 && t->strides[2] == 300 * row,
              "map %d: strides %llu %llu %llu (batch 1: dense)", i, t->strides[0], t->strides[1],
              t->strides[2]);
    cr_expect(t->box[0] == 64 && t->box[1] == (i == 1 || i == 2 ? 128u : 64u) && t->box[2] == 1);
  }
  fake->capturing = 1;
  a.q.data = a.k.data = a.v.data = (void *)0x1100000, a.o.data = (void *)0x1200000;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->tmap_encodes, 2, "the same shapes: no new encode");
  cr_expect_eq(fake->tmap_replaces, 6);
  cr_expect_eq(l->maps[0].address, 0x1100000ull);
  cr_expect_eq(l->maps[3].address, 0x1200000ull);
  cr_expect_eq(l->maps[1].dims[1], 300);
  fake->capturing = 0;
  a.seqlen_k = 500; /* K and V change shape, Q and O do not */
  a.k.batch_stride = a.v.batch_stride = 500 * row / 2;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->tmap_encodes, 3, "K's new map; V takes it re-addressed");
  cr_expect_eq(l->maps[2].dims[1], 500);
  fake->tmap_result = 1;
  a.seqlen_k = 700;
  cr_expect_eq(fa2_forward(ctx, &a, NULL), FA2_ERR_CUDA);
  cr_expect(strstr(fa2_last_error(), "cuTensorMapEncodeTiled(k at 0x1100000: 128 x 700 x 2 x 1 "
                                     "elements, strides 512, 256, 358400 bytes, box 64 x 128) failed"),
            "%s", fa2_last_error());
  fa2_destroy(ctx);
}

/* A persistent ws tile (fwd_ws.cu.tpl) with more work items than SMs: one block per
 * SM (the fake has 132) and the stream's tile counter, made on the stream's first such
 * launch (an int, zeroed) and kept; another stream gets its own; a capturing stream
 * without one launches the full grid (nothing allocates during a capture). */
Test(tuning, persistent_ws_launch_takes_one_block_per_sm) {
  fa2_context *ctx = ctx_with_ws_db();
  fa2_fwd_args a = fwd_n(128, 0, FA2_STAB_NONE, 16384); /* 128 query blocks x 2 heads */
  const int allocs = fake->allocs;
  expect_launch_of(ctx, a, "fwd_bf16_d128_m128n128w12s2ws_none");
  fake_launch *l = &fake->last;
  cr_expect(l->grid[0] == 132 && l->grid[1] == 1 && l->grid[2] == 1, "grid %u x %u x %u", l->grid[0],
            l->grid[1], l->grid[2]);
  cr_expect_eq(fake->allocs, allocs + 1);
  int *counter = l->params.tile_counter;
  cr_expect(counter && (unsigned long long)(uintptr_t)counter == fake->last_alloc, "the new int");
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect(fake->allocs == allocs + 1 && l->params.tile_counter == counter, "the stream's counter again");
  cr_assert_eq(fa2_forward(ctx, &a, (void *)0x5), FA2_OK, "%s", fa2_last_error());
  cr_expect(fake->allocs == allocs + 2 && l->params.tile_counter && l->params.tile_counter != counter,
            "another stream, another counter");
  fake->capturing = 1;
  cr_assert_eq(fa2_forward(ctx, &a, (void *)0x6), FA2_OK, "%s", fa2_last_error());
  cr_expect(fake->allocs == allocs + 2 && !l->params.tile_counter && l->grid[0] == 128 && l->grid[1] == 2,
            "capturing, no counter yet: the full grid");
  fake->capturing = 0;
  fa2_destroy(ctx);
}

/* Varlen on the ws tile (sm_90's d = 128 pick): the maps span the total rows as one
 * batch (each block adds its sequence's offset to the row coordinate), the grid the
 * longest sequence's blocks x heads x sequences. */
Test(tuning, ws_varlen_maps_span_the_total_rows) {
  fa2_context *ctx = ctx_with_db("off");
  fa2_fwd_args a = fwd_n(128, 1, FA2_STAB_NONE, 300);
  const unsigned long long row = 2 * 128 * 2; /* bytes: fwd_n() packs two heads a row */
  a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o.batch_stride = 0;
  a.cu_seqlens_q = (const int *)0x400000, a.cu_seqlens_k = (const int *)0x400100;
  a.batch = 3, a.seqlen_q = 300, a.seqlen_k = 280, a.total_q = 700, a.total_k = 650;
  expect_launch_of(ctx, a, "fwd_bf16_d128_causal_varlen_m128n128w12s2ws_none");
  const fake_launch *l = &fake->last;
  cr_expect_str_eq(l->fn_name, "fa2_fwd_ws");
  cr_expect(l->grid[0] == 3 && l->grid[1] == 2 && l->grid[2] == 3, "grid %u x %u x %u", l->grid[0],
            l->grid[1], l->grid[2]);
  for (int i = 0; i < 4; i++) {
    const fake_tmap *t = &l->maps[i];
    const unsigned long long rows = i == 1 || i == 2 ? 650 : 700;
    cr_expect(t->dims[0] == 128 && t->dims[1] == rows && t->dims[2] == 2 && t->dims[3] == 1,
              "map %d: %llu x %llu x %llu x %llu", i, t->dims[0], t->dims[1], t->dims[2], t->dims[3]);
    cr_expect(t->strides[0] == row && t->strides[1] == 256, "map %d", i);
  }
  a.total_k = 0; /* no keys in any sequence: K and V's maps point at Q */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(l->maps[1].address, 0x100000ull);
  fa2_destroy(ctx);
}

/* by_seqlen: a call takes the tiles of the tuned length nearest to its own
 * (log scale), fa2_prepare those of its descriptor's seqlen. */
Test(tuning, by_seqlen_tiles_follow_the_nearest_tuned_length) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"fwd_bf16_d64_none\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, "
                    "\"stages\": 1, \"by_seqlen\": {"
                    "\"1024\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, \"stages\": 1},"
                    "\"4096\": {\"block_m\": 64, \"block_n\": 32, \"warps\": 2, \"stages\": 2}}}}");
  fa2_context *ctx = ctx_with_db(db);
  fa2_kernel_desc d = {NULL, FA2_BF16, 64, 0, FA2_STAB_NONE, 0, 0, 5000};
  cr_assert_eq(fa2_prepare(ctx, &d, 1), FA2_OK, "%s", fa2_last_error());
  cr_expect(strstr(fake->last_image_head, "fwd_bf16_d64_m64n32w2s2_none"), "%s",
            fake->last_image_head);
  d.seqlen = -1;
  cr_expect_eq(fa2_prepare(ctx, &d, 1), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "kernels[0]: seqlen -1: allowed 0 (any length) or a length > 0");
  d.seqlen = 0;
  cr_assert_eq(fa2_prepare(ctx, &d, 1), FA2_OK, "%s", fa2_last_error());
  cr_expect(strstr(fake->last_image_head, "fwd_bf16_d64_m128n64w4s1_none"), "%s",
            fake->last_image_head);
  /* both are loaded now: the launch's block size tells them apart */
  const struct {
    int n, threads;
  } calls[] = {{300, 128}, {3000, 64}, {1900, 128}, {40000, 64}, {1, 128}};
  for (int i = 0; i < 5; i++) {
    fa2_fwd_args a = fwd_n(64, 0, FA2_STAB_NONE, calls[i].n);
    cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
    cr_expect_eq(fake->last.block[0], (unsigned)calls[i].threads, "N = %d", calls[i].n);
  }
  cr_expect_eq(fake->module_loads, 2);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);

  rt_tuning *t = rt_tuning_load(db, NULL, 0, &quiet);
  rt_tuning_entry e;
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_none", 2048, &e));
  cr_expect_eq(e.seqlen, 1024, "halfway on a log scale: the shorter");
  cr_expect_eq(e.block_n, 64);
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_none", 2049, &e));
  cr_expect_eq(e.seqlen, 4096);
  cr_expect_eq(e.block_n, 32);
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_none", 0, &e));
  cr_expect_eq(e.seqlen, 0, "no length: the key's tiles");
  cr_expect_eq(e.block_m, 128);
  rt_tuning_free(t);
}

/* Calls carry their length class only when the database has per-length
 * tiles: otherwise a new length is a memory hit, not a new selection (d = 128:
 * no built-in length rule, next test). */
Test(tuning, lengths_split_requests_only_with_per_length_tiles) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"fwd_bf16_d128_none\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, "
                    "\"stages\": 1}}");
  for (int with = 0; with < 2; with++) {
    if (with)
      write_fake_db(db, "{\"fwd_bf16_d128_none\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, "
                        "\"stages\": 1, \"by_seqlen\": {\"1024\": {\"block_m\": 128, "
                        "\"block_n\": 64, \"warps\": 4, \"stages\": 1}}}}");
    fa2_context *ctx = ctx_with_db(db);
    for (int n = 300; n <= 3000; n *= 10) {
      fa2_fwd_args a = fwd_n(128, 0, FA2_STAB_NONE, n);
      cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
    }
    /* in memory: the kernel by name, and one request (two with length classes) */
    cr_expect_eq(rt_mc_count(&ctx->mc), with ? 3u : 2u, "by_seqlen %s", with ? "present" : "absent");
    fa2_destroy(ctx);
  }
}

/* The built-in length rules (rt_select.c): sm_90's plain d = 64 forward in `none`
 * or `robust` takes, causal, the wgmma tile m64n64w4s2wg from N = 256, the persistent
 * ws tile m128n128w12s2ws from N = 1024 and the ws tile m192n128w16s2ws from N = 2048
 * (8192 causal; their length classes), the built-in wgmma tile below; `paper`, a
 * modifier or a ragged varlen batch keep the built-in tile; a database's tiles
 * come first; off sm_90 the built-in tile stays, without a warning. Each rule is one
 * request a shape: N = 3000 after N = 5000 is a memory hit. */
Test(tuning, d64_forward_takes_the_ws_tiles_from_their_length_rules) {
  fa2_context *ctx = ctx_with_db("");
  const char *wg = "fwd_bf16_d64_m64n128w4s2wg_none", *ws = "fwd_bf16_d64_m192n128w16s2ws_none";
  const char *wg_c = "fwd_bf16_d64_causal_m64n128w4s2wg_none", *ws_c = "fwd_bf16_d64_causal_m192n128w16s2ws_none";
  const char *pers = "fwd_bf16_d64_m128n128w12s2ws_none", *pers_c = "fwd_bf16_d64_causal_m128n128w12s2ws_none";
  const char *short_c = "fwd_bf16_d64_causal_m64n64w4s2wg_none";
  const struct { /* lengths in classes of an eighth of an octave: 2047 is 2048's, 1000 1024's */
    int causal, n;
    const char *name;
  } calls[] = {{0, 300, wg},     {0, 900, wg},     {0, 1000, pers},  {0, 1800, pers},   {0, 2047, ws},
               {0, 5000, ws},    {1, 200, wg_c},   {1, 256, short_c}, {1, 900, short_c}, {1, 1024, pers_c},
               {1, 3000, pers_c}, {1, 7000, pers_c}, {1, 8192, ws_c},  {1, 16384, ws_c}};
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
    expect_launch_of(ctx, fwd_n(64, calls[i].causal, FA2_STAB_NONE, calls[i].n), calls[i].name);
  const unsigned requests = (unsigned)rt_mc_count(&ctx->mc);
  fa2_fwd_args a = fwd_n(64, 0, FA2_STAB_NONE, 3000); /* a memory hit: no module loads */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_str_eq(fake->last.fn_name, "fa2_fwd_ws");
  cr_expect_eq(fake->last.block[0], 512u, "the ws tile's 16 warps");
  cr_expect_eq(rt_mc_count(&ctx->mc), requests, "N = 3000: the request of N = 2048");
  a = fwd_n(64, 0, FA2_STAB_NONE, 1500); /* N = 1500: the request of N = 1024 */
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->last.block[0], 384u, "the persistent ws tile's 12 warps");
  cr_expect_eq(rt_mc_count(&ctx->mc), requests, "N = 1500: the request of N = 1024");
  expect_launch_of(ctx, fwd_n(64, 0, FA2_STAB_ROBUST, 4096), "fwd_bf16_d64_m192n128w16s2ws_robust_b2_e1em3");
  /* d = 56 runs on d = 64's tiles (columns past 56 masked): 64's rules */
  expect_launch_of(ctx, fwd_n(56, 0, FA2_STAB_NONE, 4096), "fwd_bf16_d56_m192n128w16s2ws_none");
  expect_launch_of(ctx, fwd_n(56, 1, FA2_STAB_NONE, 2048), "fwd_bf16_d56_causal_m128n128w12s2ws_none");
  expect_launch_of(ctx, fwd_n(56, 0, FA2_STAB_NONE, 900), "fwd_bf16_d56_m64n128w4s2wg_none");
  /* ... and on sm_90 d 33-48 too (WGMMA_WIDER) */
  expect_launch_of(ctx, fwd_n(40, 0, FA2_STAB_NONE, 4096), "fwd_bf16_d40_m192n128w16s2ws_none");
  expect_launch_of(ctx, fwd_n(48, 1, FA2_STAB_NONE, 2048), "fwd_bf16_d48_causal_m128n128w12s2ws_none");
  expect_launch_of(ctx, fwd_n(40, 0, FA2_STAB_NONE, 900), "fwd_bf16_d40_m64n128w4s2wg_none");
  expect_launch_of(ctx, fwd_n(64, 0, FA2_STAB_PAPER, 4096), "fwd_bf16_d64_m64n128w4s2wg_paper_b2_e1em3");
  /* balanced: none's main loop, so none's length rules and tiles */
  expect_launch_of(ctx, fwd_n(64, 0, FA2_STAB_BALANCED, 4096), "fwd_bf16_d64_m192n128w16s2ws_balanced");
  expect_launch_of(ctx, fwd_n(64, 1, FA2_STAB_BALANCED, 900), "fwd_bf16_d64_causal_m64n64w4s2wg_balanced");
  expect_launch_of(ctx, fwd_n(48, 1, FA2_STAB_ROBUST, 512), "fwd_bf16_d48_causal_m64n64w4s2wg_robust_b2_e1em3");
  expect_launch_of(ctx, fwd_n(64, 1, FA2_STAB_PAPER, 512), "fwd_bf16_d64_causal_m64n128w4s2wg_paper_b2_e1em3");
  a = fwd_n(64, 0, FA2_STAB_NONE, 4096);
  a.softcap = 30.f;
  expect_launch_of(ctx, a, "fwd_bf16_d64_softcap_m64n128w4s2wg_none");
  /* varlen: the rules when the sequences fill 3/4 of batch x seqlen_q rows, not when
   * the batch is ragged (the persistent tile would walk its empty items) */
  a = fwd_n(64, 0, FA2_STAB_NONE, 4096);
  a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o.batch_stride = 0;
  a.cu_seqlens_q = (const int *)0x400000, a.cu_seqlens_k = (const int *)0x400100;
  a.batch = 4, a.total_q = a.total_k = 3 * 4096; /* 3/4 full */
  expect_launch_of(ctx, a, "fwd_bf16_d64_varlen_m192n128w16s2ws_none");
  a.total_q = 3 * 4096 - 1;
  expect_launch_of(ctx, a, "fwd_bf16_d64_varlen_m64n128w4s2wg_none");
  /* a varlen descriptor prepares the ragged batches' tile (it has no lengths; causal at
   * 4096 a full batch would take the persistent ws tile, not loaded so far) */
  fa2_kernel_desc kd = {NULL, FA2_BF16, 64, 1, FA2_STAB_NONE, 0, 0, 4096, 1};
  cr_assert_eq(fa2_prepare(ctx, &kd, 1), FA2_OK, "%s", fa2_last_error());
  cr_expect(strstr(fake->last_image_head, "fwd_bf16_d64_causal_varlen_m64n128w4s2wg_none"), "%s",
            fake->last_image_head);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);

  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"fwd_bf16_d64_none\": {\"block_m\": 64, \"block_n\": 64, \"warps\": 4, "
                    "\"stages\": 2, \"wgmma\": true}}");
  ctx = ctx_with_db(db);
  expect_launch_of(ctx, fwd_n(64, 0, FA2_STAB_NONE, 4096), "fwd_bf16_d64_m64n64w4s2wg_none");
  fa2_destroy(ctx);

  fake->cc_major = 8;
  ctx = ctx_with_db("");
  expect_launch_of(ctx, fwd_n(64, 0, FA2_STAB_NONE, 4096), "fwd_bf16_d64_m128n64w4s1_none");
  expect_launch_of(ctx, fwd_n(64, 1, FA2_STAB_NONE, 512), "fwd_bf16_d64_causal_m128n64w4s1_none");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);
  fake->cc_major = 9;
}

/* fwd_n's shapes for the backward: dO, dQ, dK, dV beside q, o; the context's workspace. */
static fa2_bwd_args bwd_n(int d, int causal, int n) {
  const fa2_fwd_args f = fwd_n(d, causal, FA2_STAB_NONE, n);
  fa2_bwd_args a = {0};
  a.q = f.q, a.k = f.k, a.v = f.v, a.o = f.o, a.lse = f.lse;
  a.dout = a.dq = a.dk = a.dv = f.o;
  a.dq.data = (void *)0x400000, a.dk.data = (void *)0x500000, a.dv.data = (void *)0x600000;
  a.batch = 1, a.seqlen_q = a.seqlen_k = n, a.heads_q = a.heads_kv = 2, a.head_dim = d, a.causal = causal;
  return a;
}

static void expect_bwd_launch_of(fa2_context *ctx, fa2_bwd_args a, const char *name) {
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect(strstr(fake->last_image_head, name) != NULL, "launched %s, expected %s",
            fake->last_image_head, name);
}

/* sm_90's plain backward at d 40-64 and 104-128 takes the warp-specialized tile
 * (gen/defaults.lua BWD_TILES_SM90_WS) at every length: 12 warps, key blocks of 128 (at
 * d <= 64 but with a window a persistent grid: one block an SM walking items of two key blocks), and
 * fa2_bwd_dq_det on 8 warps (rt_tma.h RT_BWD_DET_THREADS), fa2_bwd_pre over the padded
 * rows; every feature too, but a window at d <= 64 or with dropout keeps the wgmma tile, sm_80
 * the mma.sync one. */
Test(tuning, sm90_plain_backward_takes_the_ws_tile) {
  fa2_context *ctx = ctx_with_db("");
  expect_bwd_launch_of(ctx, bwd_n(64, 0, 512), "bwd_bf16_d64_m64n128w12s2ws_none");
  expect_bwd_launch_of(ctx, bwd_n(64, 1, 3000), "bwd_bf16_d64_causal_m64n128w12s2ws_none");
  fake->n_log = 0;
  expect_bwd_launch_of(ctx, bwd_n(64, 1, 16384), "bwd_bf16_d64_causal_m64n128w12s2ws_none");
  cr_assert_eq(fake->n_log, 3, "delta, dK/dV, dQ");
  cr_expect_str_eq(fake->log[1].fn_name, "fa2_bwd");
  cr_expect_eq(fake->log[1].block[0], 384u, "two MMA warpgroups and a producer one");
  cr_expect(fake->log[1].grid[0] == 16384u / 128 / 2 * 2 && fake->log[1].grid[1] == 1 && fake->log[1].grid[2] == 1,
            "persistent: 64 pairs of key blocks x 2 heads, fewer than 132 SMs: grid %u x %u x %u",
            fake->log[1].grid[0], fake->log[1].grid[1], fake->log[1].grid[2]);
  fa2_bwd_args a = bwd_n(64, 0, 16384);
  a.batch = 3; /* 384 items: one block an SM */
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error()); /* (N = 512's kernel, loaded) */
  cr_expect(fake->log[1].grid[0] == 132 && fake->log[1].grid[1] == 1, "grid %u x %u", fake->log[1].grid[0],
            fake->log[1].grid[1]);
  a = bwd_n(128, 0, 1000);
  a.deterministic = 1;
  fake->n_log = 0;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d128_m64n128w12s2ws_none");
  cr_expect(fake->log[1].grid[0] == 8 && fake->log[1].grid[1] == 2, "d = 128: a block a key block, grid %u x %u",
            fake->log[1].grid[0], fake->log[1].grid[1]);
  cr_assert_eq(fake->n_log, 3, "delta, dK/dV, dQ");
  cr_expect_str_eq(fake->log[2].fn_name, "fa2_bwd_dq_det");
  cr_expect_eq(fake->log[2].block[0], 256u, "dq_det on eight warps");
  cr_expect_eq(fake->log[2].grid[0], (1000u + 127) / 128, "16 query rows a warp");
  const unsigned pre_rows = (unsigned)FA2_ROW_BLOCK(384, 128);
  cr_expect_eq(fake->log[0].grid[0], (1024u + pre_rows - 1) / pre_rows, "fa2_bwd_pre over 1024 rows");
  a = bwd_n(64, 0, 8192);
  a.softcap = 30.f;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_softcap_m64n128w12s2ws_none");
  a.softcap = 0.f, a.window = 1, a.window_left = 100, a.window_right = 0;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_window_m64n64w4s3wg_none");
  /* a window of RT_WIDE_WINDOW keys or more (or open on a side): the ws tile (a block a key block) */
  a.window_left = RT_WIDE_WINDOW - 1;
  fake->n_log = 0;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_window_m64n128w12s2ws_none");
  cr_expect_eq(fake->log[1].grid[0], 8192u / 128, "a block a key block, grid %u", fake->log[1].grid[0]);
  a.window_left = RT_WIDE_WINDOW - 2; /* (both kernels loaded: the launch's block size tells them apart) */
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->log[1].block[0], 128u, "one key short of the rule: the wgmma tile's warpgroup");
  a.window_left = 10, a.window_right = -1;
  fake->n_log = 0;
  cr_assert_eq(fa2_backward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->log[1].block[0], 384u, "open to the right: the ws tile");
  a.softcap = 30.f; /* which the ws tile refuses with a window at d <= 64 */
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_window_softcap_m64n64w4s3wg_none");
  a.softcap = 0.f, a.dropout = 1, a.dropout_p = 0.1f; /* likewise */
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_window_dropout_m64n64w4s3wg_none");
  a.window = 0;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_dropout_m64n128w12s2ws_none");
  expect_bwd_launch_of(ctx, bwd_n(56, 0, 8192), "bwd_bf16_d56_m64n128w12s2ws_none"); /* on 64's tiles */
  expect_bwd_launch_of(ctx, bwd_n(40, 0, 2048), "bwd_bf16_d40_m64n128w12s2ws_none"); /* sm_90: 64's too */
  expect_bwd_launch_of(ctx, bwd_n(120, 1, 2048), "bwd_bf16_d120_causal_m64n128w12s2ws_none");
  /* varlen: the ws tile; fa2_bwd_pre over the longest sequence + 3 rows
   * (rt_tma.h RT_BWD_WS_START: each sequence's padded LSE rows start on 4 floats) */
  a = bwd_n(64, 1, 1000);
  a.batch = 2, a.cu_seqlens_q = a.cu_seqlens_k = (const int *)0xc00000, a.total_q = a.total_k = 1500;
  a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o.batch_stride = 0;
  a.dout.batch_stride = a.dq.batch_stride = a.dk.batch_stride = a.dv.batch_stride = 0;
  fake->n_log = 0;
  expect_bwd_launch_of(ctx, a, "bwd_bf16_d64_causal_varlen_m64n128w12s2ws_none");
  cr_assert_eq(fake->n_log, 3, "delta, dK/dV, dQ");
  const unsigned pre64 = (unsigned)FA2_ROW_BLOCK(384, 64);
  cr_expect_eq(fake->log[0].grid[0], (1003u + pre64 - 1) / pre64, "fa2_bwd_pre over 1003 rows");
  cr_expect(fake->log[1].grid[0] == (1000u + 255) / 256 * 2 * 2 && fake->log[1].grid[1] == 1,
            "persistent: pairs of the longest sequence's key blocks x 2 heads x 2 sequences, grid %u x %u",
            fake->log[1].grid[0], fake->log[1].grid[1]);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);
  fake->cc_major = 8;
  ctx = ctx_with_db("");
  expect_bwd_launch_of(ctx, bwd_n(64, 0, 8192), "bwd_bf16_d64_m32n128w4s2_none");
  fa2_destroy(ctx);
  fake->cc_major = 9;
}

Test(tuning, a_bad_by_seqlen_warns_and_the_keys_tiles_apply) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"a\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, \"stages\": 1, "
                    "\"by_seqlen\": {\"1k\": {\"block_m\": 64}}},"
                    "\"b\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, \"stages\": 1, "
                    "\"by_seqlen\": {\"1024\": {\"block_m\": 64, \"block_n\": 0, \"warps\": 4, "
                    "\"stages\": 1}}},"
                    "\"c\": {\"block_m\": 128, \"block_n\": 64, \"warps\": 4, \"stages\": 1, "
                    "\"by_seqlen\": [1024]}}");
  const rt_log log = {FA2_LOG_WARN, tu_log_fn, &seen};
  rt_tuning *t = rt_tuning_load(db, NULL, 0, &log);
  cr_assert_not_null(t);
  rt_tuning_entry e;
  cr_assert(rt_tuning_find(t, "a", 1000, &e));
  cr_expect_eq(e.block_m, 128);
  cr_expect(strstr(seen.last, "entry a: by_seqlen \"1k\" is not a sequence length"), "%s", seen.last);
  cr_assert(rt_tuning_find(t, "b", 1000, &e));
  cr_expect_eq(e.block_m, 128);
  cr_expect_eq(e.seqlen, 0);
  cr_expect(strstr(seen.last, "entry b, by_seqlen 1024: block_n = 0 is not a tile size"), "%s",
            seen.last);
  cr_assert(rt_tuning_find(t, "c", 1000, &e));
  cr_expect_eq(e.block_m, 128);
  cr_expect(strstr(seen.last, "entry c: by_seqlen is not an object"), "%s", seen.last);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 3);
  rt_tuning_free(t);
}

Test(tuning, tiles_the_generator_rejects_fall_back_to_the_built_in_ones) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  write_fake_db(db, "{\"fwd_bf16_d64\": {\"block_m\": 48, \"block_n\": 64, \"warps\": 4, "
                    "\"stages\": 1}}");
  fa2_context *ctx = ctx_with_db(db);
  fa2_fwd_args a = fwd(64, 0, FA2_STAB_NONE);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1);
  cr_expect(strstr(seen.last, db) && strstr(seen.last, "tiles m48n64w4s1 ignored") &&
                strstr(seen.last, "built-in tiles"),
            "%s", seen.last);
  fa2_destroy(ctx);
}

Test(tuning, default_database_is_found_in_the_cache_dir_and_off_switches_it_off) {
  char dir[300], db[400];
  snprintf(dir, sizeof dir, "%s/cache/tuning", root);
  cr_assert_eq(rt_mkdirs(dir), 0);
  snprintf(db, sizeof db, "%s/fake-gpu_sm_90_132sm.json", dir);
  write_fake_db(db, "{\"fwd_bf16_d64_none\": {\"block_m\": 128, \"block_n\": 96, \"warps\": 8, "
                    "\"stages\": 1}}");
  fa2_context *ctx = ctx_with_db(NULL);
  char path[600];
  cr_assert_eq(fa2_tuning_path(ctx, path, sizeof path), FA2_OK);
  cr_expect_str_eq(path, db);
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_NONE), "fwd_bf16_d64_m128n96w8s1_none");
  fa2_destroy(ctx);
  ctx = ctx_with_db("off");
  cr_expect_eq(fa2_tuning_path(ctx, path, sizeof path), FA2_ERR_NOT_AVAILABLE);
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_NONE), "fwd_bf16_d64_m64n128w4s2wg_none"); /* sm_90's */
  fa2_destroy(ctx);
}

/* ---- choice, plan and journal ---- */

Test(tuning, choice_minimizes_the_worst_ratio_to_the_fastest) {
  rt_tune_cand c[3] = {0};
  /* a: fastest at one length, 30 % slow at the other; b: 5 % off at both; c: out */
  c[0].ms[0] = 1.0, c[0].ms[1] = 13.0;
  c[1].ms[0] = 1.05, c[1].ms[1] = 10.5;
  c[2].ms[0] = 0.5, c[2].ms[1] = 0.5;
  snprintf(c[2].pruned, sizeof c[2].pruned, "spills");
  rt_tune_group g = {"k", {0}, c, 3, -1, 0};
  rt_tune_choose(&g, 2);
  cr_expect_eq(g.best, 1);
  cr_expect_float_eq(g.worst, 1.05, 1e-12);
  c[1].ms[1] = 0; /* a length not timed by every candidate does not count */
  rt_tune_choose(&g, 2);
  cr_expect_eq(g.best, 0);
  cr_expect_float_eq(g.worst, 1.0, 1e-12);
  c[0].ms[0] = c[1].ms[0] = 0;
  rt_tune_choose(&g, 2);
  cr_expect_eq(g.best, -1);
}

static void default_plan(rt_source *s, rt_tune_plan *p);

/* Finalists: the first pass's choice, each length's fastest, then the
 * closest within 5 % somewhere; the choice and the per-length tiles then go
 * by the re-timed medians. */
Test(tuning, finalists_are_re_timed_and_a_length_gets_its_own_tiles) {
  rt_tune_cand c[5] = {0};
  const double ms[5][2] = {{1.00, 10.6}, {1.04, 10.0}, {1.03, 10.4}, {1.045, 10.55}, {2.0, 20.0}};
  for (int i = 0; i < 5; i++) c[i].ms[0] = ms[i][0], c[i].ms[1] = ms[i][1];
  rt_tune_group g = {"k", {0}, c, 5, -1, 0};
  cr_expect_eq(rt_tune_finalists(&g, 2, 6), 4);
  cr_expect(c[0].finalist && c[1].finalist && c[2].finalist && c[3].finalist);
  cr_expect_not(c[4].finalist, "2x slower everywhere");
  cr_expect_eq(rt_tune_finalists(&g, 2, 3), 3);
  cr_expect(c[0].finalist && c[1].finalist && c[2].finalist,
            "the choice and each length's fastest, then the closest");
  rt_tune_choose(&g, 2); /* finalists not re-timed yet: the first pass decides */
  cr_expect_not(g.final);
  cr_expect_eq(g.best, 1, "worst 1.04 like c[2], and the smaller sum");
  c[0].fin[0] = c[1].fin[0] = c[2].fin[0] = 0.1; /* one length re-timed: still the first pass */
  rt_tune_choose(&g, 2);
  cr_expect_not(g.final);
  cr_expect_eq(g.best, 1);
  /* re-timed: c[0] now best at both lengths but c[1] 3 % faster at length 1 */
  c[0].fin[0] = 1.00, c[0].fin[1] = 10.3;
  c[1].fin[0] = 1.05, c[1].fin[1] = 10.0;
  c[2].fin[0] = 1.04, c[2].fin[1] = 10.35;
  rt_tune_choose(&g, 2);
  cr_expect(g.final);
  cr_expect_eq(g.best, 0);
  cr_expect_float_eq(g.worst, 1.03, 1e-12);
  cr_expect_eq(g.per_len[0], 0);
  cr_expect_eq(g.per_len[1], 1, "1.03 > 1.015: its own tiles");
  c[0].fin[1] = 10.1; /* 1 %: not worth another kernel */
  rt_tune_choose(&g, 2);
  cr_expect_eq(g.per_len[1], 0);
  cr_expect_eq(rt_tune_finalists(&g, 2, -1), 0);
  cr_expect_eq(rt_tune_finalists(&g, 2, 0), 0);
}

Test(tuning, entries_carry_by_seqlen_only_when_a_length_differs) {
  rt_source s;
  rt_tune_plan p;
  default_plan(&s, &p);
  for (int g = 0; g < p.n; g++) p.groups[g].best = -1;
  rt_tune_group *g = &p.groups[0];
  g->best = 0, g->per_len[0] = 0, g->per_len[1] = 0;
  g->cands[0].ms[0] = 1, g->cands[0].ms[1] = 4;
  json_t *e = rt_tune_entries(&p);
  cr_expect_eq(json_object_size(e), 1);
  json_t *k = json_object_get(e, g->key);
  cr_expect_null(json_object_get(k, "by_seqlen"));
  cr_expect_eq(json_number_value(json_object_get(json_object_get(k, "ms"), "4096")), 4);
  json_decref(e);
  g->per_len[1] = 1;
  e = rt_tune_entries(&p);
  json_t *by = json_object_get(json_object_get(e, g->key), "by_seqlen");
  cr_expect_eq(json_object_size(by), 2, "every timed length");
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(by, "1024"), "block_n")),
               g->cands[0].v.block_n);
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(by, "4096"), "block_m")),
               g->cands[1].v.block_m);
  cr_expect_eq(json_integer_value(json_object_get(json_object_get(by, "4096"), "block_n")),
               g->cands[1].v.block_n);
  json_decref(e);
  rt_tune_plan_free(&p);
  rt_source_free(&s);
}

static void default_plan(rt_source *s, rt_tune_plan *p) {
  rt_source_init(s);
  gen_spec spec;
  char err[2048];
  cr_assert_eq(rt_source_spec(s, NULL, &spec, err, sizeof err), FA2_OK, "%s", err);
  const int lens[2] = {1024, 4096};
  cr_assert_eq(rt_tune_plan_make(s, &spec, "sm_90", 232448, 0, lens, 2, p, err, sizeof err), FA2_OK,
               "%s", err);
  rt_source_spec_free(&spec);
}

Test(tuning, plan_of_the_default_spec) {
  rt_source s;
  rt_tune_plan p;
  default_plan(&s, &p);
  /* d 64/128 x causal x none/paper/robust forward, d 64/128 x causal backward */
  cr_expect_eq(p.n, 16);
  cr_expect_str_eq(p.groups[0].key, "fwd_bf16_d64_none");
  int bwd = 0;
  for (int g = 0; g < p.n; g++) {
    const rt_tune_group *gr = &p.groups[g];
    bwd += gr->base.pass == GEN_PASS_BWD;
    cr_expect(gr->n >= 4, "%s: %d candidates", gr->key, gr->n);
    cr_expect(gr->cands[0].is_default, "%s: the built-in tiles come first", gr->key);
    int ws = 0, ws192 = 0, ws3 = 0;
    for (int c = 0; c < gr->n; c++) {
      const gen_variant *v = &gr->cands[c].v;
      cr_expect(v->smem_bytes <= 232448);
      ws += v->ws && v->wgmma;
      ws192 += v->ws && v->block_m == 192 && v->block_n == 128 && v->warps == 16;
      ws3 += v->ws && v->stages == 3;
    }
    /* ws tiles besides the built-in: the length rules' m192n128w16s2ws and at d = 64 the
     * backward's three Q/dO stages */
    const int d64 = gr->base.head_dim == 64;
    cr_expect(ws >= (gr->base.pass == GEN_PASS_BWD && !d64 ? 1 : 2), "%s: %d ws candidates", gr->key, ws);
    if (gr->base.pass == GEN_PASS_FWD) cr_expect(ws192 == 1, "%s", gr->key); /* (d = 128's spills: pruned when compiled) */
    if (gr->base.pass == GEN_PASS_BWD) cr_expect(ws3 == d64, "%s", gr->key);   /* (d = 128: over 227 KB) */
  }
  cr_expect_eq(bwd, 4);
  cr_expect_str_eq(p.groups[15].key, "bwd_bf16_d128_causal");
  rt_tune_plan_free(&p);
  rt_source_free(&s);
}

/* Past d = 128 the backward's ws candidate is the wide tile (two MMA warpgroups sharing 64
 * keys, bwd_ws_wide.cuh.tpl); the 128-key ws tile is refused there and leaves no candidate. */
Test(tuning, plan_has_the_wide_ws_backward_past_128) {
  rt_source s;
  rt_source_init(&s);
  gen_spec spec;
  char err[2048];
  cr_assert_eq(rt_source_spec(&s, "bench/specs/ws_wide_bwd.lua", &spec, err, sizeof err), FA2_OK, "%s", err);
  const int lens[1] = {4096};
  rt_tune_plan p;
  cr_assert_eq(rt_tune_plan_make(&s, &spec, "sm_90", 232448, 0, lens, 1, &p, err, sizeof err), FA2_OK, "%s", err);
  rt_source_spec_free(&spec);
  cr_expect_eq(p.n, 4, "d 192 and 256, causal or not");
  for (int g = 0; g < p.n; g++) {
    int wide = 0, ws128 = 0;
    for (int c = 0; c < p.groups[g].n; c++) {
      const gen_variant *v = &p.groups[g].cands[c].v;
      wide += v->ws && v->block_n == 64 && v->warps == 12 && v->stages == 2;
      ws128 += v->ws && v->block_n == 128;
    }
    cr_expect_eq(wide, 1, "%s: the wide ws backward", p.groups[g].key);
    cr_expect_eq(ws128, 0, "%s", p.groups[g].key);
  }
  rt_tune_plan_free(&p);
  rt_source_free(&s);
}

Test(tuning, journal_of_the_same_run_resumes_another_is_removed) {
  rt_source s;
  rt_tune_plan p;
  default_plan(&s, &p);
  rt_identity id = h100();
  char header[512], path[300];
  const rt_tune_reps reps = {5, 1, 6, 10, 4};
  rt_tune_journal_header(&p, &id, &reps, header, sizeof header);
  snprintf(path, sizeof path, "%s/t.json.journal", root);
  FILE *f = rt_tune_journal_open(path, header);
  cr_assert_not_null(f);
  rt_tune_group *g = &p.groups[0];
  for (int c = 0; c < g->n; c++) rt_tune_journal_time(f, &g->cands[c], 1024, 1.0 + c, 0);
  rt_tune_journal_time(f, &g->cands[3], 4096, 7.5, 1); /* a finalist's re-timed median */
  snprintf(g->cands[1].pruned, sizeof g->cands[1].pruned, "spills");
  rt_tune_journal_prune(f, &g->cands[1]);
  fputs("{\"v\": \"torn", f); /* a run killed mid-line */
  fclose(f);
  g->cands[1].pruned[0] = 0;
  for (int c = 0; c < g->n; c++) cr_assert_eq(g->cands[c].ms[0], 0);
  cr_expect_eq(rt_tune_journal_resume(path, header, &p), g->n + 2);
  cr_expect_eq(g->cands[2].ms[0], 3.0);
  cr_expect_eq(g->cands[3].fin[1], 7.5);
  cr_expect_eq(g->cands[3].ms[1], 0);
  cr_expect_str_eq(g->cands[1].pruned, "spills");
  cr_expect(rt_tune_timed(g, 0));
  cr_expect_not(rt_tune_timed(g, 1));
  /* another run (other finalist launches): its timings do not apply */
  rt_tune_plan_free(&p);
  rt_source_free(&s); /* default_plan opens a new one */
  default_plan(&s, &p);
  char other[512];
  const rt_tune_reps reps2 = {5, 1, 6, 20, 4};
  rt_tune_journal_header(&p, &id, &reps2, other, sizeof other);
  cr_expect_eq(rt_tune_journal_resume(path, other, &p), 0);
  cr_expect_eq(access(path, F_OK), -1);
  rt_tune_plan_free(&p);
  rt_source_free(&s);
}

/* ---- fa2_tune on the stand-in driver ---- */

static const char *SPEC = "return { dtype = {\"bf16\"}, head_dim = {64}, causal = {false}, "
                          "stab = {{mode = \"none\"}}, pass = {\"fwd\"} }";

/* root/spec.lua with SPEC; smaller shared memory times faster from now on. */
static const char *spec_file(void) {
  static char spec[300];
  snprintf(spec, sizeof spec, "%s/spec.lua", root);
  FILE *f = fopen(spec, "w");
  fputs(SPEC, f);
  fclose(f);
  fake->elapsed_ms = 1;
  return spec;
}

static int n_progress;
static void count_progress(const fa2_tune_progress *p, void *user) {
  n_progress++;
  cr_expect(p->done <= p->total);
}

Test(tuning, fa2_tune_times_stores_and_the_runtime_uses_the_choice) {
  char db[300], report[300];
  const char *spec = spec_file();
  snprintf(db, sizeof db, "%s/db/t.json", root);
  snprintf(report, sizeof report, "%s/report.json", root);
  fa2_context *ctx = ctx_with_db(db);
  const int lens[1] = {1024};
  fa2_tune_options o = {.spec_path = spec, .seqlens = lens, .n_seqlens = 1,
                        .report_path = report, .progress = count_progress};
  int complete = 0;
  const int launches = fake->launches;
  cr_assert_eq(fa2_tune(ctx, &o, &complete), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(complete, 1);
  cr_expect_gt(n_progress, 2);
  /* 30 grid points: 10 do not fit (block_n 96/128 with 2 stages, ...) or repeat */
  json_t *rep = json_load_file(report, 0, NULL);
  cr_assert_not_null(rep);
  json_t *g0 = json_array_get(json_object_get(rep, "groups"), 0);
  cr_expect_str_eq(json_string_value(json_object_get(g0, "key")), "fwd_bf16_d64_none");
  json_t *cands = json_object_get(g0, "candidates"), *c;
  size_t i, n = json_array_size(cands), k = 0;
  json_array_foreach(cands, i, c) {
    if (!json_is_true(json_object_get(c, "finalist"))) continue;
    k++; /* the stand-in driver times alike in both passes */
    cr_expect_eq(json_number_value(json_object_get(json_object_get(c, "ms_final"), "1024")),
                 json_number_value(json_object_get(json_object_get(c, "ms"), "1024")));
  }
  cr_expect(k >= 2 && k <= 6, "%zu finalists", k);
  cr_expect_eq(fake->launches - launches, (int)(n * 8 + k * 44),
               "first pass: 2 rounds of a warm-up and 3 launches; finalists: 4 rounds of 1 + 10");
  cr_expect_str_eq(json_string_value(json_object_get(g0, "best")), "fwd_bf16_d64_m64n32w2s1_none");
  cr_expect(json_is_true(json_object_get(g0, "final")));
  json_decref(rep);
  cr_expect_eq(access(db, F_OK), 0);
  char journal[400];
  snprintf(journal, sizeof journal, "%s.journal", db);
  cr_expect_eq(access(journal, F_OK), -1, "a finished run leaves no journal");
  fa2_destroy(ctx);

  /* a context made afterwards launches the choice */
  ctx = ctx_with_db(db);
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_NONE), "fwd_bf16_d64_m64n32w2s1_none");
  fa2_destroy(ctx);
}

/* The plan fa2_tune makes of spec at lens on the stand-in GPU: its
 * candidates, in order, for writing a journal by hand. */
static void spec_plan(const char *spec, const int *lens, int n, rt_tune_plan *p) {
  rt_source s;
  rt_source_init(&s);
  gen_spec sp;
  char err[2048];
  cr_assert_eq(rt_source_spec(&s, spec, &sp, err, sizeof err), FA2_OK, "%s", err);
  cr_assert_eq(rt_tune_plan_make(&s, &sp, "sm_90", 232448, 0, lens, n, p, err, sizeof err), FA2_OK,
               "%s", err);
  rt_source_spec_free(&sp);
  rt_source_free(&s);
}

/* A first run of fa2_tune (o) that the budget stops before any timing: it
 * leaves the journal, db[300].journal in journal[400], for a test to fill. */
static fa2_context *stopped_run(fa2_tune_options *o, char *db, char *journal) {
  snprintf(db, 300, "%s/t.json", root);
  snprintf(journal, 400, "%s.journal", db);
  fa2_context *ctx = ctx_with_db(db);
  o->budget_s = 1e-9;
  int complete = 1;
  cr_assert_eq(fa2_tune(ctx, o, &complete), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(complete, 0);
  cr_expect_eq(access(journal, F_OK), 0, "the journal stays for the next run");
  return ctx;
}

/* Appends first-pass timings at N = 1024 for spec at lens to the journal:
 * the built-in tiles (candidate 0) 0.5 ms, every other candidate 2.0 ms.
 * Returns how many candidates; def[160] (or NULL) gets the built-in name. */
static int journal_builtin_fastest(const char *spec, const int *lens, int n_lens,
                                   const char *journal, char *def) {
  rt_tune_plan p;
  spec_plan(spec, lens, n_lens, &p);
  FILE *f = fopen(journal, "a");
  cr_assert_not_null(f);
  for (int c = 0; c < p.groups[0].n; c++)
    rt_tune_journal_time(f, &p.groups[0].cands[c], 1024, c == 0 ? 0.5 : 2.0, 0);
  fclose(f);
  const int n = p.groups[0].n;
  if (def) snprintf(def, 160, "%s", p.groups[0].cands[0].v.name);
  rt_tune_plan_free(&p);
  return n;
}

/* Runs fa2_tune again without a budget: it completes, launching `launches`
 * kernels; returns what it stored for fwd_bf16_d64_none. */
static rt_tuning_entry tune_again(fa2_context *ctx, fa2_tune_options *o, const char *db,
                                  int launches, const char *why) {
  o->budget_s = 0;
  const int before = fake->launches;
  int complete = 0;
  cr_assert_eq(fa2_tune(ctx, o, &complete), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(complete, 1);
  cr_expect_eq(fake->launches - before, launches, "%s", why);
  rt_tuning *t = rt_tuning_load(db, NULL, 0, &quiet);
  rt_tuning_entry e;
  cr_assert(rt_tuning_find(t, "fwd_bf16_d64_none", 0, &e));
  rt_tuning_free(t);
  return e;
}

Test(tuning, fa2_tune_budget_stops_and_the_next_run_resumes) {
  char db[300], journal[400];
  const char *spec = spec_file();
  const int lens[2] = {1024, 2048};
  /* first pass only: the journal below fakes its timings */
  fa2_tune_options o = {.spec_path = spec, .seqlens = lens, .n_seqlens = 2, .finalists = -1};
  fa2_context *ctx = stopped_run(&o, db, journal);
  /* pretend the first run timed N = 1024 and liked the built-in tiles */
  char def[160];
  const int n = journal_builtin_fastest(spec, lens, 2, journal, def);

  const rt_tuning_entry e = tune_again(ctx, &o, db, n * 8, "only N = 2048 is timed again");
  cr_expect_eq(access(journal, F_OK), -1);
  /* built-in: 0.5 ms at 1024 (the journal), 1.22x the smallest tile at 2048;
   * the smallest tile: 4x at 1024. The worst ratio picks the built-in one. */
  cr_expect(strstr(def, "m64n128w4s2wg") != NULL, "%s", def); /* the fake device is an sm_90 */
  cr_expect_eq(e.block_m, 64);
  cr_expect_eq(e.block_n, 128);
  cr_expect_eq(e.warps, 4);
  cr_expect_eq(e.stages, 2);
  cr_expect_eq(e.wgmma, 1, "the database keeps \"wgmma\": true");
  fa2_destroy(ctx);
}

/* A run stopped in the finalists' pass resumes there: journaled first-pass
 * and re-timed medians are not timed again, and the re-timed ones decide. */
Test(tuning, fa2_tune_resumes_the_finalists_pass) {
  char db[300], journal[400];
  const char *spec = spec_file();
  const int lens[1] = {1024};
  fa2_tune_options o = {.spec_path = spec, .seqlens = lens, .n_seqlens = 1};
  fa2_context *ctx = stopped_run(&o, db, journal);
  rt_tune_plan p;
  spec_plan(spec, lens, 1, &p);
  rt_tune_group *g = &p.groups[0];
  cr_assert_geq(g->n, 7);
  /* first pass: candidate c at 1 + 0.008 c ms, so c = 0..5 are the finalists
   * (the closest within 5 %, six at most); their re-timed medians put c = 3 first */
  FILE *f = fopen(journal, "a");
  for (int c = 0; c < g->n; c++) rt_tune_journal_time(f, &g->cands[c], 1024, 1.0 + 0.008 * c, 0);
  for (int c = 0; c < 6; c++) rt_tune_journal_time(f, &g->cands[c], 1024, c == 3 ? 0.5 : 1.0, 1);
  fclose(f);
  const gen_variant want = g->cands[3].v;
  rt_tune_plan_free(&p);

  const rt_tuning_entry e = tune_again(ctx, &o, db, 0, "everything came from the journal");
  cr_expect(e.block_m == want.block_m && e.block_n == want.block_n && e.warps == want.warps &&
                e.stages == want.stages,
            "stored m%dn%dw%ds%d, want %s", e.block_m, e.block_n, e.warps, e.stages, want.name);
  fa2_destroy(ctx);
}

static fa2_tune_progress last_progress;
static void keep_progress(const fa2_tune_progress *p, void *user) { last_progress = *p; }

/* When one candidate leads by far everywhere there are no finalists: the
 * finalists' steps counted in the progress are done all the same. */
Test(tuning, progress_ends_at_its_total_without_finalists) {
  char db[300], journal[400];
  const char *spec = spec_file();
  const int lens[1] = {1024};
  fa2_tune_options o = {.spec_path = spec, .seqlens = lens, .n_seqlens = 1,
                        .progress = keep_progress};
  fa2_context *ctx = stopped_run(&o, db, journal);
  journal_builtin_fastest(spec, lens, 1, journal, NULL);
  memset(&last_progress, 0, sizeof last_progress);
  tune_again(ctx, &o, db, 0, "the first pass is in the journal, and nobody is within 5 %");
  cr_expect_str_eq(last_progress.phase, "time");
  cr_expect_eq(last_progress.total, 1, "one finalists' step counted");
  cr_expect_eq(last_progress.done, last_progress.total);
  fa2_destroy(ctx);
}

Test(tuning, fa2_tune_rejects_bad_options) {
  fa2_context *ctx = ctx_with_db("off");
  fa2_tune_options o = {0};
  int complete = 1;
  cr_expect_eq(fa2_tune(ctx, &o, &complete), FA2_ERR_NOT_AVAILABLE);
  cr_expect(strstr(fa2_last_error(), "no database path"), "%s", fa2_last_error());
  cr_expect_eq(complete, 0);
  o.dry_run = 1, o.reps = 101;
  cr_expect_eq(fa2_tune(ctx, &o, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "reps is 101: allowed 1 to 100 (0: default)");
  o.reps = 0, o.budget_s = -1;
  cr_expect_eq(fa2_tune(ctx, &o, NULL), FA2_ERR_INVALID_ARGUMENT);
  o.budget_s = 0;
  const int bad[1] = {8};
  o.seqlens = bad, o.n_seqlens = 1;
  cr_expect_eq(fa2_tune(ctx, &o, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(fa2_last_error(), "sequence length 8: allowed 16 to 65536"), "%s", fa2_last_error());
  cr_expect_eq(fa2_tune(NULL, &o, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_eq(fa2_tuning_set_stab(ctx, NULL, FA2_BF16, 64, FA2_STAB_ROBUST, 3, 0), FA2_ERR_NOT_AVAILABLE);
  cr_expect_eq(fa2_tuning_set_stab(ctx, "/tmp/x.json", FA2_BF16, 64, FA2_STAB_ROBUST, 0.5, 0),
               FA2_ERR_INVALID_ARGUMENT);
  fa2_destroy(ctx);
}

Test(tuning, set_stab_writes_both_causal_keys) {
  char db[300];
  snprintf(db, sizeof db, "%s/t.json", root);
  fa2_context *ctx = ctx_with_db(db);
  cr_assert_eq(fa2_tuning_set_stab(ctx, NULL, FA2_BF16, 128, FA2_STAB_ROBUST, 3, 0), FA2_OK, "%s",
               fa2_last_error());
  fa2_destroy(ctx);
  const char *text = slurp(db);
  cr_expect(strstr(text, "\"fwd_bf16_d128\": {\n      \"beta\": 3.0,\n      \"eps\": 0.001,\n      "
                         "\"stab\": \"robust\"\n    }"),
            "%s", text);
  cr_expect(strstr(text, "\"fwd_bf16_d128_causal\""), "%s", text);
  ctx = ctx_with_db(db);
  fa2_fwd_args a = fwd(128, 1, FA2_STAB_TUNED);
  expect_launch_of(ctx, a, "_robust_b3_e1em3");
  fa2_destroy(ctx);
}

/* Variable-length calls: their _varlen keys first (tiles tuned on a mix of
 * lengths), then the fixed-length keys; FA2_STAB_TUNED's mode and beta come
 * from the fixed-length key either way. */
Test(tuning, varlen_keys_then_the_fixed_length_ones) {
  fa2_context *ctx = ctx_with_mode_db("fwd_bf16_d64_varlen_robust");
  fa2_fwd_args a = fwd(64, 0, FA2_STAB_ROBUST);
  a.cu_seqlens_q = a.cu_seqlens_k = (const int *)0x400000;
  a.total_q = a.total_k = 300;
  expect_launch_of(ctx, a, "fwd_bf16_d64_varlen_m128n32w8s2_robust_b2_e1em3");
  a.stab = FA2_STAB_TUNED;
  expect_launch_of(ctx, a, "fwd_bf16_d64_varlen_m128n32w8s2_robust_b4_e2em3");
  a.stab = FA2_STAB_NONE; /* no varlen key for none: the fixed-length one */
  expect_launch_of(ctx, a, "fwd_bf16_d64_varlen_m64n64w4s2_none");
  expect_launch_of(ctx, fwd(64, 0, FA2_STAB_ROBUST), "fwd_bf16_d64_m64n64w4s2_robust_b2_e1em3");
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0, "%s", seen.last);
  fa2_destroy(ctx);
}

/* The varlen tuning mix (rt_tune.h): 16384 tokens, the first document n long,
 * the others log-normal around n / 8 and at most n; the same every time. */
Test(tuning, varlen_mix_is_long_tailed_and_fixed) {
  static int lens[RT_TUNE_MIX_TOKENS], again[RT_TUNE_MIX_TOKENS], sorted[RT_TUNE_MIX_TOKENS];
  const int n = 2048, count = rt_tune_mix(n, lens);
  cr_expect_eq(rt_tune_mix(n, again), count);
  cr_expect(!memcmp(lens, again, sizeof *lens * (size_t)count), "a fixed seed per length");
  long long sum = 0;
  for (int i = 0; i < count; i++) {
    cr_expect(lens[i] >= 1 && lens[i] <= n, "document %d: %d", i, lens[i]);
    sum += lens[i];
    sorted[i] = lens[i];
  }
  cr_expect_eq(sum, RT_TUNE_MIX_TOKENS);
  cr_expect_eq(lens[0], n, "max_seqlen is the tuned length");
  cr_expect(count >= 20 && count <= 120, "%d documents", count);
  for (int i = 1; i < count; i++) /* insertion sort: the median */
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      const int x = sorted[j];
      sorted[j] = sorted[j - 1], sorted[j - 1] = x;
    }
  cr_expect(sorted[count / 2] >= n / 16 && sorted[count / 2] <= n / 4, "median %d", sorted[count / 2]);
  cr_expect_eq(rt_tune_mix(16384, lens), 1);
  gen_variant v = {.pass = GEN_PASS_FWD, .head_dim = 128, .varlen = 1};
  double f = 0;
  const int c2 = rt_tune_mix(1024, lens);
  for (int i = 0; i < c2; i++) f += 4.0 * 16 * (double)lens[i] * lens[i] * 128;
  cr_expect_float_eq(rt_tune_flops(&v, 1024), f, 1e-9 * f);
  v.varlen = 0;
  cr_expect_float_eq(rt_tune_flops(&v, 1024), 4.0 * 16 * 16 * 1024.0 * 1024 * 128, 1);
}

/* A spec with varlen and a head dim past 128: varlen groups of their own, and
 * the wide tiles among the candidates (the backward's pair and quad layouts,
 * the forward's shorter wgmma key tiles). */
/* A spec file of one dtype, head dim, causal flag, mode none and both passes
 * on sm_90, with the varlen axis given; its path (a static buffer). */
static const char *spec_with(int head_dim, const char *causal, const char *varlen) {
  static char path[300];
  snprintf(path, sizeof path, "%s/spec_d%d.lua", root, head_dim);
  FILE *f = fopen(path, "w");
  fprintf(f, "return { dtype = {'bf16'}, head_dim = {%d}, causal = {%s}, varlen = {%s},\n"
             "  stab = {{ mode = 'none' }}, pass = {'fwd', 'bwd'}, arch = {'sm_90'} }\n",
          head_dim, causal, varlen);
  fclose(f);
  return path;
}

/* The tuner's LSE and workspace hold the most heads a group takes: 2048 / d, 128 at
 * d = 16 (sized for 64 they overflowed there: an illegal address in fa2 tune). */
Test(tuning, buffers_hold_the_heads_of_the_smallest_head_dim) {
  rt_source s;
  rt_tune_plan p;
  default_plan(&s, &p);
  cr_expect_eq(rt_tune_max_heads(&p), 32, "d 64 and 128: 32 heads");
  rt_tune_plan_free(&p);
  rt_source_free(&s);
  const int lens[1] = {2048};
  spec_plan(spec_with(16, "false", "false"), lens, 1, &p);
  cr_expect_eq(rt_tune_max_heads(&p), 128, "d = 16: 128 heads");
  rt_tune_plan_free(&p);
}

/* The tuner's backward workspace holds its largest backward group's: dQ's accumulator
 * has the tiles' columns, so d = 104 (19 heads on 128-column tiles: 2432 floats a
 * token) outgrows d = 64 (32 heads of 64: 2048), which the most heads' head dim gave. */
Test(tuning, backward_workspace_holds_the_widest_accumulator) {
  static char path[300];
  snprintf(path, sizeof path, "%s/spec_d64_104.lua", root);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fprintf(f, "return { dtype = {'bf16'}, head_dim = {64, 104}, causal = {false},\n"
             "  stab = {{ mode = 'none' }}, pass = {'fwd', 'bwd'}, arch = {'sm_90'} }\n");
  fclose(f);
  const int lens[1] = {2048};
  rt_tune_plan p;
  spec_plan(path, lens, 1, &p);
  cr_expect_eq(rt_tune_max_heads(&p), 32);
  const long long tokens = 16384;
  /* accumulator + delta + the ws tiles' padded LSE and delta (2048 rows: no padding) */
  const size_t want = (size_t)tokens * 19 * 128 * 4 + (size_t)tokens * 19 * 4 + 2 * (size_t)tokens * 19 * 4;
  cr_expect_eq(rt_tune_bwd_workspace(&p, tokens), want, "%zu bytes", rt_tune_bwd_workspace(&p, tokens));
  fa2_bwd_args a = {0};
  a.batch = 1, a.seqlen_q = (int)tokens, a.heads_q = 32, a.head_dim = 64;
  cr_expect_gt(rt_tune_bwd_workspace(&p, tokens), fa2_backward_workspace_size(&a));
  rt_tune_plan_free(&p);
}

Test(tuning, plan_covers_varlen_and_wide_head_dims) {
  const int lens[1] = {2048};
  rt_tune_plan p;
  spec_plan(spec_with(256, "false", "false, true"), lens, 1, &p);
  cr_assert_eq(p.n, 4);
  const char *keys[4] = {"fwd_bf16_d256_none", "fwd_bf16_d256_varlen_none", "bwd_bf16_d256",
                         "bwd_bf16_d256_varlen"};
  for (int g = 0; g < 4; g++) {
    cr_expect_str_eq(p.groups[g].key, keys[g]);
    cr_expect_eq(p.groups[g].base.varlen, g % 2);
    int pair = 0, quad = 0, fwd_n80 = 0;
    for (int c = 0; c < p.groups[g].n; c++) {
      const char *name = p.groups[g].cands[c].v.name;
      cr_expect_eq(p.groups[g].cands[c].v.varlen, g % 2, "%s", name);
      pair += strstr(name, "_m64n64w8s2wg_") != NULL;
      quad += strstr(name, "_m32n32w4s2_") != NULL;
      fwd_n80 += strstr(name, "_m128n80w8s2wg_") != NULL;
    }
    cr_expect(g < 2 ? fwd_n80 == 1 : pair == 1 && quad == 1, "%s", keys[g]);
    cr_expect(p.groups[g].cands[0].is_default, "%s: the built-in tiles first", keys[g]);
  }
  rt_tune_plan_free(&p);
}

/* fa2_tune times a varlen key through the varlen launch path (the mix's
 * offsets on the device) and stores it under its own key. */
Test(tuning, fa2_tune_stores_a_varlen_key) {
  char db[300];
  snprintf(db, sizeof db, "%s/db/t.json", root);
  fake->elapsed_ms = 1;
  fa2_context *ctx = ctx_with_db(db);
  const int lens[1] = {1024};
  fa2_tune_options o = {.spec_path = spec_with(64, "true", "true"), .seqlens = lens, .n_seqlens = 1,
                        .finalists = -1};
  int complete = 0;
  cr_assert_eq(fa2_tune(ctx, &o, &complete), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(complete, 1);
  fa2_destroy(ctx);
  rt_tuning *t = rt_tuning_load(db, NULL, 0, &quiet);
  rt_tuning_entry e;
  cr_expect(rt_tuning_find(t, "fwd_bf16_d64_causal_varlen_none", 0, &e) && e.block_m > 0);
  cr_expect(rt_tuning_find(t, "bwd_bf16_d64_causal_varlen", 0, &e) && e.block_m > 0);
  cr_expect_not(rt_tuning_find(t, "fwd_bf16_d64_causal_none", 0, &e));
  rt_tuning_free(t);
}
