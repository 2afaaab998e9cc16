/* Variants: completion, "auto" tiles, the shared-memory formula, canonical
 * names and their parsing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_test_util.h"

static gen_state *g;
static void setup(void) { g = tu_open(NULL); }
static void teardown(void) { gen_close(g); }
TestSuite(variant, .init = setup, .fini = teardown);

static gen_variant base(int head_dim, int causal, int stab, double beta, double eps) {
  gen_variant v;
  memset(&v, 0, sizeof v);
  v.pass = GEN_PASS_FWD;
  v.dtype = GEN_DTYPE_BF16;
  v.head_dim = head_dim;
  v.causal = causal;
  v.stab = stab;
  v.beta = beta;
  v.eps = eps;
  return v;
}

static void tiles(gen_variant *v, int m, int n, int w, int s) {
  v->block_m = m;
  v->block_n = n;
  v->warps = w;
  v->stages = s;
}

Test(variant, completes_auto_tiles_and_derived_fields) {
  gen_variant v = base(128, 1, GEN_STAB_ROBUST, 2, 1e-3);
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, NULL, &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d128_causal_m128n48w4s1_robust_b2_e1em3");
  cr_expect_eq(v.block_m, 128);
  cr_expect_eq(v.block_n, 48);
  cr_expect_eq(v.warps, 4);
  cr_expect_eq(v.stages, 1);
  cr_expect_eq(v.threads, 128);
  cr_expect_eq(v.smem_bytes, 60928);
  cr_expect_eq(v.n_entries, 1);
  cr_expect_str_eq(v.entries[0], "fa2_fwd");
  cr_expect_eq(v.beta, 2.0);
  cr_expect_eq(v.eps, 1e-3);
}

/* d = 96's forward takes TILES_MODIFIED's m128n32w4s2 with any feature the plain kernel
 * lacks (TILES' m128n48w4s2 spills with some on sm_80); plain, the backward and sm_90
 * (where m128n48w4s2 fits and is faster) keep theirs. */
Test(variant, d96_modifier_variants_take_the_modified_tile) {
  struct {
    int pass, alibi, window, varlen, sinks, block_n;
  } cases[] = {
      {GEN_PASS_FWD, 0, 0, 0, 0, 48}, {GEN_PASS_FWD, 1, 0, 0, 0, 32}, {GEN_PASS_FWD, 0, 1, 0, 0, 32},
      {GEN_PASS_FWD, 0, 0, 1, 0, 32}, {GEN_PASS_FWD, 0, 0, 0, 1, 32}, {GEN_PASS_BWD, 1, 0, 0, 0, 64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_variant v = base(96, 0, GEN_STAB_NONE, 0, 0);
    v.pass = cases[i].pass, v.alibi = cases[i].alibi, v.window = cases[i].window;
    v.varlen = cases[i].varlen, v.sinks = cases[i].sinks;
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "case %zu: %s", i, err.msg);
    cr_expect_eq(v.block_n, cases[i].block_n, "case %zu (%s): block_n %d", i, v.name, v.block_n);
    if (cases[i].pass == GEN_PASS_FWD) cr_expect_eq(v.stages, 2, "case %zu", i);
    gen_variant h = base(96, 0, GEN_STAB_NONE, 0, 0);
    h.pass = cases[i].pass, h.alibi = cases[i].alibi, h.window = cases[i].window;
    h.varlen = cases[i].varlen, h.sinks = cases[i].sinks;
    cr_assert_eq(gen_variant_complete(g, &h, "sm_90", &err), GEN_OK, "case %zu: %s", i, err.msg);
    cr_expect_eq(h.block_n, cases[i].pass == GEN_PASS_FWD ? 48 : 64, "case %zu (%s) on sm_90", i, h.name);
  }
}

Test(variant, none_mode_drops_beta_and_eps) {
  gen_variant v = base(64, 0, GEN_STAB_NONE, 5, 0.5);
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d64_m128n64w4s1_none");
  cr_expect_eq(v.beta, 0.0);
  cr_expect_eq(v.eps, 0.0);
}

/* Mode balanced: none's softmax (no beta or eps, dropped like none's), its own name and
 * source (the rounding and its draw), none's tiles except sm_80's d = 128 (TILES_BALANCED:
 * one m16 row tile a warp), none's backward, and no head dim past 128 (it spills). */
Test(variant, balanced_mode) {
  gen_variant v = base(64, 1, GEN_STAB_BALANCED, 5, 0.5);
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d64_causal_m64n128w4s2wg_balanced");
  cr_expect(v.beta == 0.0 && v.eps == 0.0);
  char *src = NULL;
  cr_assert_eq(gen_render(g, &v, &src, NULL, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "round_row_balanced(x, o2, round_draw(p,") && strstr(src, "fa2_round_draw"));
  cr_expect(!strstr(src, "kBeta"), "none's softmax");
  free(src);
  gen_variant n = base(64, 1, GEN_STAB_NONE, 0, 0);
  cr_assert_eq(gen_variant_complete(g, &n, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &n, &src, NULL, &err), GEN_OK, "%s", err.msg);
  cr_expect(!strstr(src, "round_row_balanced") && !strstr(src, "fa2_round_draw"), "none: nearest, no draws");
  free(src);
  struct {
    int d;
    const char *arch, *name;
  } tiles_of[] = {{128, "sm_80", "fwd_bf16_d128_m64n64w4s2_balanced"},
                  {128, "sm_90", "fwd_bf16_d128_m128n128w12s2ws_balanced"},
                  {96, "sm_80", "fwd_bf16_d96_m128n48w4s2_balanced"}};
  for (size_t i = 0; i < sizeof tiles_of / sizeof *tiles_of; i++) {
    v = base(tiles_of[i].d, 0, GEN_STAB_BALANCED, 0, 0);
    cr_assert_eq(gen_variant_complete(g, &v, tiles_of[i].arch, &err), GEN_OK, "%s", err.msg);
    cr_expect_str_eq(v.name, tiles_of[i].name);
  }
  v = base(128, 0, GEN_STAB_BALANCED, 0, 0);
  v.pass = GEN_PASS_BWD;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(v.name, "_none") && v.stab == GEN_STAB_NONE, "the backward is none's: %s", v.name);
  v = base(160, 0, GEN_STAB_BALANCED, 0, 0);
  cr_expect_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "head_dim = 160") && strstr(err.msg, "up to 128"), "%s", err.msg);
  gen_variant p;
  cr_expect_eq(gen_variant_from_name(g, "fwd_bf16_d64_m64n64w4s2_balanced_b2_e1em3", &p, &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "wrong number of parts"), "%s", err.msg);
  cr_assert_eq(gen_variant_from_name(g, "fwd_fp16_d32_m128n64w4s1_balanced", &p, &err), GEN_OK, "%s", err.msg);
  cr_expect(p.stab == GEN_STAB_BALANCED && p.dtype == GEN_DTYPE_FP16 && p.head_dim == 32);
}

/* 2 * (head_dim + 8) * (block_m + 2 * stages * block_n) */
Test(variant, shared_memory_formula) {
  struct {
    int d, m, n, w, s, bytes;
  } cases[] = {
      {32, 0, 0, 0, 0, 20480},    {64, 0, 0, 0, 0, 36864},     {96, 0, 0, 0, 0, 66560},
      {128, 0, 0, 0, 0, 60928},   {160, 0, 0, 0, 0, 129024},   {192, 0, 0, 0, 0, 153600},
      {224, 0, 0, 0, 0, 118784},  {256, 0, 0, 0, 0, 135168},   {64, 64, 64, 4, 1, 27648},
      {128, 64, 128, 4, 3, 226304}, {256, 16, 16, 1, 1, 25344}, {32, 512, 256, 8, 4, 204800},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_variant v = base(cases[i].d, 0, GEN_STAB_NONE, 0, 0);
    tiles(&v, cases[i].m, cases[i].n, cases[i].w, cases[i].s);
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, NULL, &err), GEN_OK, "case %zu: %s", i, err.msg);
    cr_expect_eq(v.smem_bytes, cases[i].bytes, "d%d m%d n%d s%d: %d bytes, expected %d", cases[i].d,
                 v.block_m, v.block_n, v.stages, v.smem_bytes, cases[i].bytes);
  }
}

Test(variant, shared_memory_checked_per_arch) {
  gen_variant v = base(128, 0, GEN_STAB_NONE, 0, 0);
  tiles(&v, 64, 128, 4, 3); /* 226304 bytes */
  gen_variant w = v;
  gen_err err;
  cr_expect_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  w = v;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_80", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "226304") && strstr(err.msg, "166912") && strstr(err.msg, "sm_80"),
            "%s", err.msg);
  w = v;
  w.head_dim = 160;
  tiles(&w, 0, 0, 0, 0); /* auto d160: 129024 > sm_86's 101376 */
  cr_assert_eq(gen_variant_complete(g, &w, "sm_86", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "129024") && strstr(err.msg, "101376"), "%s", err.msg);
  w = v;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_70", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "arch = \"sm_70\"") && strstr(err.msg, "sm_80, sm_86"), "%s", err.msg);
}

/* wgmma tiles: the "wg" name suffix, the swizzled layout's shared memory
 * (no padding, 1024 bytes to align), "auto" on sm_90, the sm_90a target,
 * and sm_90 only. */
Test(variant, wgmma_tiles) {
  gen_variant v = base(128, 0, GEN_STAB_NONE, 0, 0);
  tiles(&v, 128, 176, 8, 2);
  v.wgmma = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d128_m128n176w8s2wg_none");
  cr_expect_eq(v.smem_bytes, 1024 + 2 * 128 * (128 + 2 * 2 * 176));
  cr_expect_eq(v.threads, 256);
  /* gen/variant.lua's WGMMA_ARCH and WGMMA_TARGET, carried by the variant */
  cr_expect_str_eq(v.only_arch, "sm_90");
  cr_expect_str_eq(v.only_target, "sm_90a");
  cr_expect_str_eq(gen_compile_arch(&v, "sm_90"), "sm_90a");
  cr_expect(gen_variant_runs_on(&v, "sm_90") && !gen_variant_runs_on(&v, "sm_80") &&
            !gen_variant_runs_on(&v, "sm_100"));
  gen_variant parsed;
  cr_assert_eq(gen_variant_from_name(g, v.name, &parsed, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&parsed, &v, sizeof v), "the name round-trips");
  gen_variant w = v;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_80", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "wgmma tiles run on sm_90 only") && strstr(err.msg, "wgmma = false on sm_80"),
            "%s", err.msg);
  /* "auto": the mma.sync tiles without an arch or on sm_80, wgmma on sm_90 */
  for (int a = 0; a < 3; a++) {
    const char *arch = a == 0 ? NULL : a == 1 ? "sm_80" : "sm_90";
    w = base(64, 1, GEN_STAB_ROBUST, 2, 1e-3);
    cr_assert_eq(gen_variant_complete(g, &w, arch, &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(w.wgmma, a == 2, "%s on %s", w.name, arch ? arch : "any arch");
    cr_expect_str_eq(gen_compile_arch(&w, "sm_90"), a == 2 ? "sm_90a" : "sm_90");
    cr_expect_str_eq(w.only_arch, a == 2 ? "sm_90" : "", "an mma.sync tile runs on every arch");
    cr_expect(gen_variant_runs_on(&w, "sm_80") == (a != 2));
  }
  cr_expect_str_eq(w.name, "fwd_bf16_d64_causal_m64n128w4s2wg_robust_b2_e1em3");
  w = base(96, 0, GEN_STAB_NONE, 0, 0); /* no wgmma tile for 96: the mma.sync default */
  cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_eq(w.wgmma, 0);
  /* The backward: 64 keys per warpgroup, 64 queries per step, auto on sm_90 the ws tile
   * (two MMA warpgroups, a producer one: 12 warps) at d = 64 and 128, dropout too
   * (persistent at d = 64); d = 96 stays on mma.sync */
  for (int d = 64; d <= 128; d += 32) {
    w = base(d, 1, GEN_STAB_NONE, 0, 0);
    w.pass = GEN_PASS_BWD;
    w.dropout = 1;
    cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(w.wgmma, d != 96, "%s", w.name);
    cr_expect_eq(w.ws, d != 96, "%s", w.name);
    cr_expect_eq(w.persistent, d == 64, "%s", w.name);
    if (d == 64) cr_expect_str_eq(w.name, "bwd_bf16_d64_causal_dropout_m64n128w12s2ws_none");
  }
  cr_expect_str_eq(w.name, "bwd_bf16_d128_causal_dropout_m64n128w12s2ws_none");
  /* a wgmma tile when asked: two warpgroups of 64 keys, their dS^T through shared memory */
  cr_assert_eq(gen_variant_from_name(g, "bwd_bf16_d128_causal_dropout_m64n128w8s2wg_none", &w, &err), GEN_OK, "%s",
               err.msg);
  cr_expect_eq(w.smem_bytes, 1024 + 2 * 128 * (2 * 128 + 2 * 2 * 64) + 8 * 2 * 64 + 2 * 128 * 64);
  cr_expect_eq(w.threads, 256);
  w = base(128, 1, GEN_STAB_NONE, 0, 0);
  w.pass = GEN_PASS_BWD;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(w.name, "bwd_bf16_d128_causal_m64n128w12s2ws_none");
  cr_expect(w.ws && w.wgmma && !w.persistent); /* (d = 128: a block a key block) */
  cr_expect_eq(w.threads, 384);
  cr_expect_eq(w.smem_bytes, 1024 + 2 * 128 * (2 * 128 + 2 * 2 * 64) + 8 * 2 * 64 + 2 * 128 * 64 +
                                 2 * 64 * 136 * 4 + 256);
  /* a window is masks only: the ws tile takes it when asked (the default stays wgmma's) */
  gen_variant win;
  cr_assert_eq(gen_variant_from_name(g, "bwd_bf16_d128_window_m64n128w12s2ws_none", &win, &err), GEN_OK, "%s",
               err.msg);
  cr_expect(win.ws && win.window && !win.causal);
  win = base(128, 0, GEN_STAB_NONE, 0, 0);
  win.pass = GEN_PASS_BWD;
  win.window = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(win.ws, "%s", win.name); /* "auto" takes ws for every feature */
  win = base(128, 0, GEN_STAB_NONE, 0, 0); /* a window with dropout too (session 31) */
  win.pass = GEN_PASS_BWD;
  win.window = 1, win.dropout = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(win.name, "bwd_bf16_d128_window_dropout_m64n128w12s2ws_none");
  win = base(128, 1, GEN_STAB_NONE, 0, 0);
  win.pass = GEN_PASS_BWD;
  win.varlen = 1, win.alibi = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(win.ws, "%s", win.name);
  win = base(64, 0, GEN_STAB_NONE, 0, 0); /* but a window at d <= 64 keeps wgmma's tile */
  win.pass = GEN_PASS_BWD;
  win.window = 1, win.varlen = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(!win.ws && win.wgmma, "%s", win.name);
  win = base(64, 0, GEN_STAB_NONE, 0, 0);
  win.pass = GEN_PASS_BWD;
  win.varlen = 1, win.sinks = 1, win.softcap = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(win.ws && win.persistent, "%s", win.name); /* (d <= 64: persistent but with a window) */
  /* d <= 64 (with every feature but a window): a persistent grid walking the key blocks */
  win = base(48, 1, GEN_STAB_NONE, 0, 0);
  win.pass = GEN_PASS_BWD;
  win.sinks = 1;
  cr_assert_eq(gen_variant_complete(g, &win, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(win.ws && win.persistent, "%s", win.name);
  /* ALiBi is a score bias: the ws tile takes it when asked */
  cr_assert_eq(gen_variant_from_name(g, "bwd_bf16_d64_causal_alibi_m64n128w12s2ws_none", &win, &err), GEN_OK,
               "%s", err.msg);
  cr_expect(win.ws && win.alibi && win.persistent);
  /* a window's few steps a block: a block a key block */
  cr_assert_eq(gen_variant_from_name(g, "bwd_bf16_d64_window_m64n128w12s2ws_none", &win, &err), GEN_OK, "%s",
               err.msg);
  cr_expect(win.ws && !win.persistent);
}

/* ws tiles (warp-specialized, TMA): the "ws" suffix, warps counting the
 * producer warpgroup, the tiles' shared memory plus 256 bytes of mbarriers, its
 * own entry (the kernel takes the tensor maps too), sm_90a only, a wgmma tile
 * too; the source is fwd_ws.cu.tpl's. */
Test(variant, ws_tiles) {
  gen_variant v = base(128, 1, GEN_STAB_ROBUST, 2, 1e-3);
  tiles(&v, 128, 128, 12, 2);
  v.ws = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d128_causal_m128n128w12s2ws_robust_b2_e1em3");
  cr_expect_eq(v.wgmma, 1);
  cr_expect_eq(v.threads, 384);
  cr_expect_eq(v.persistent, 1, "two consumers, O's staging fits");
  cr_expect_eq(v.smem_bytes, 1024 + 2 * 128 * (2 * 128 + 2 * 2 * 128) + 256);
  cr_expect_eq(v.n_entries, 1);
  cr_expect_str_eq(v.entries[0], "fa2_fwd_ws");
  cr_expect_str_eq(gen_compile_arch(&v, "sm_90"), "sm_90a");
  cr_expect(gen_variant_runs_on(&v, "sm_90") && !gen_variant_runs_on(&v, "sm_80"));
  gen_variant parsed;
  cr_assert_eq(gen_variant_from_name(g, v.name, &parsed, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&parsed, &v, sizeof v), "the name round-trips");
  char tile[48];
  gen_tile_name(v.block_m, v.block_n, v.warps, v.stages, v.wgmma, v.ws, tile, sizeof tile);
  cr_expect_str_eq(tile, "m128n128w12s2ws");
  /* three consumer warpgroups, d = 64 and 256 */
  gen_variant w = base(64, 0, GEN_STAB_NONE, 0, 0);
  tiles(&w, 192, 128, 16, 2);
  w.ws = 1;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(w.name, "fwd_bf16_d64_m192n128w16s2ws_none");
  cr_expect_eq(w.threads, 512);
  cr_expect_eq(w.persistent, 0, "three consumers: one item a block");
  /* a window with softcap or varlen: the item loop's registers spill, one item a block */
  for (int m = 0; m < 2; m++) {
    w = base(128, 0, GEN_STAB_ROBUST, 2, 1e-3);
    tiles(&w, 128, 128, 12, 2);
    w.ws = 1, w.window = 1, w.softcap = m == 0, w.varlen = m == 1;
    cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(w.persistent, 0, "%s: one item a block", w.name);
    w.window = 0;
    cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(w.persistent, 1, "%s: persistent without the window", w.name);
  }
  w = base(256, 0, GEN_STAB_NONE, 0, 0);
  tiles(&w, 128, 80, 12, 2);
  w.ws = 1;
  cr_expect_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(!w.persistent && w.smem_bytes == 1024 + 2 * 256 * (128 + 2 * 2 * 80) + 256,
            "O's own staging would pass 227 KB: O in Q's rows, one item a block");
  /* off Hopper, or past its shared memory */
  w = v;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_80", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "wgmma tiles run on sm_90 only"), "%s", err.msg);
  w = v;
  w.stages = 4;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "296192") && strstr(err.msg, "at most 232448 bytes on sm_90"), "%s", err.msg);
  /* the source: the warp-specialized template, with the modes' shared softmax */
  char *src;
  size_t n;
  cr_assert_eq(gen_render(g, &v, &src, &n, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "fa2_fwd_ws(const fa2_fwd_params p, const __grid_constant__ fa2_fwd_maps maps)"));
  cr_expect(strstr(src, "setmaxnreg.inc.sync.aligned.u32"));
  cr_expect(strstr(src, "tau_raw[mt][h] = robust_shift(rm, row,"), "robust's shift, as fwd.cu.tpl has it");
  cr_expect(strstr(src, "row_moved[mt][h] = __any_sync"), "O is rescaled by the kernel, not the softmax");
  /* persistent: items from the counter (the last take resets it), their numbers handed
   * over under named barriers, O staged apart from Q */
  cr_expect(strstr(src, "taken = atomicAdd(p.tile_counter, 1);") &&
            strstr(src, "if (taken == max(n_items, blocks) - 1) atomicExch(p.tile_counter, 0);"));
  cr_expect(strstr(src, "for (int w = 0; w < kConsumers; ++w) bar_sync_lanes(kItemBar + w, kItemThreads);") &&
            strstr(src, "bar_sync_lanes(kItemBar + wg, kItemThreads);") && !strstr(src, "bar_arrive(kItemBar"),
            "barrier.sync on both sides");
  cr_expect(strstr(src, "const unsigned sO = sV + kStages * kTileKV;"));
  free(src);
  /* one item a block (three consumers): no counter, O in Q's rows */
  w = base(64, 0, GEN_STAB_NONE, 0, 0);
  tiles(&w, 192, 128, 16, 2);
  w.ws = 1;
  cr_assert_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &w, &src, &n, &err), GEN_OK, "%s", err.msg);
  cr_expect(!strstr(src, "tile_counter)") && !strstr(src, "bar_sync_lanes(kItemBar"), "%s: no item loop", w.name);
  cr_expect(strstr(src, "const unsigned sO = sQ;"));
  free(src);
}

/* The defaults must fit sm_80 and sm_90 for every supported head dim. */
Test(variant, default_tiles_fit_sm80_and_sm90) {
  for (int d = 32; d <= 256; d += 32)
    for (int a = 0; a < 2; a++) {
      gen_variant v = base(d, 1, GEN_STAB_PAPER, 2, 1e-3);
      gen_err err;
      cr_expect_eq(gen_variant_complete(g, &v, a ? "sm_90" : "sm_80", &err), GEN_OK, "d%d: %s", d,
                   err.msg);
    }
}

Test(variant, bad_fields_name_field_and_value) {
  struct {
    gen_variant v;
    const char *want[3];
  } cases[] = {
      {base(100, 0, GEN_STAB_NONE, 0, 0), {"head_dim = 100", "16, 32, 48, 64, 80, 96"}},
      {base(64, 0, GEN_STAB_PAPER, 1, 1e-3), {"stab.beta = 1", "beta > 1"}},
      {base(64, 0, GEN_STAB_ROBUST, 2, 0), {"stab.eps = 0", "eps > 0"}},
      {base(64, 0, GEN_STAB_ROBUST, 2, -1), {"stab.eps = -1", "eps > 0"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &cases[i].v, NULL, &err), GEN_ESPEC, "case %zu", i);
    for (int k = 0; k < 3 && cases[i].want[k]; k++)
      cr_expect(strstr(err.msg, cases[i].want[k]), "case %zu: '%s' not in: %s", i,
                cases[i].want[k], err.msg);
  }
  gen_variant v = base(64, 0, GEN_STAB_NONE, 0, 0);
  tiles(&v, 48, 64, 4, 2);
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, NULL, &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "tiles.block_m = 48") && strstr(err.msg, "64, 128 or 256"), "%s", err.msg);
  v = base(64, 0, GEN_STAB_NONE, 0, 0);
  v.dtype = 7;
  cr_assert_eq(gen_variant_complete(g, &v, NULL, &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "dtype") && strstr(err.msg, "bf16, fp16"), "%s", err.msg);
}

/* Number spelling in names: p for the point, em/ep for the exponent. */
Test(variant, names_spell_numbers) {
  struct {
    double beta, eps;
    const char *name;
  } cases[] = {
      {2, 1e-3, "fwd_bf16_d64_m128n64w4s1_paper_b2_e1em3"},
      {1.5, 2.5e-4, "fwd_bf16_d64_m128n64w4s1_paper_b1p5_e2p5em4"},
      {8, 0.5, "fwd_bf16_d64_m128n64w4s1_paper_b8_e5em1"},
      {12.5, 1e-10, "fwd_bf16_d64_m128n64w4s1_paper_b12p5_e1em10"},
      {1e6, 0.1, "fwd_bf16_d64_m128n64w4s1_paper_b1ep6_e1em1"},
      {100000, 3e-3, "fwd_bf16_d64_m128n64w4s1_paper_b100000_e3em3"},
      {1.0000001, 1e-3, "fwd_bf16_d64_m128n64w4s1_paper_b1p0000001_e1em3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_variant v = base(64, 0, GEN_STAB_PAPER, cases[i].beta, cases[i].eps), back;
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, NULL, &err), GEN_OK, "%s", err.msg);
    cr_expect_str_eq(v.name, cases[i].name);
    cr_assert_eq(gen_variant_from_name(g, cases[i].name, &back, &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(back.beta, cases[i].beta, "%s: beta %.17g", cases[i].name, back.beta);
    cr_expect_eq(back.eps, cases[i].eps, "%s: eps %.17g", cases[i].name, back.eps);
    cr_expect(!memcmp(&back, &v, sizeof v), "%s: parsed variant differs", cases[i].name);
  }
}

Test(variant, name_parses_back_to_every_field) {
  gen_variant v;
  gen_err err;
  cr_assert_eq(gen_variant_from_name(g, "fwd_fp16_d96_causal_m64n32w2s3_robust_b4_e2em3", &v, &err),
               GEN_OK, "%s", err.msg);
  cr_expect_eq(v.pass, GEN_PASS_FWD);
  cr_expect_eq(v.dtype, GEN_DTYPE_FP16);
  cr_expect_eq(v.head_dim, 96);
  cr_expect_eq(v.causal, 1);
  cr_expect_eq(v.block_m, 64);
  cr_expect_eq(v.block_n, 32);
  cr_expect_eq(v.warps, 2);
  cr_expect_eq(v.stages, 3);
  cr_expect_eq(v.stab, GEN_STAB_ROBUST);
  cr_expect_eq(v.beta, 4.0);
  cr_expect_eq(v.eps, 2e-3);
  cr_expect_eq(v.threads, 64);
  cr_expect_eq(v.smem_bytes, 2 * 104 * (64 + 2 * 3 * 32));
}

Test(variant, every_full_spec_name_round_trips) {
  gen_spec s;
  gen_err err;
  cr_assert_eq(gen_spec_load(g, "specs/full.lua", &s, &err), GEN_OK, "%s", err.msg);
  /* 288 plain (132 forward, 84 more on sm_90's wgmma tiles, 44 + 28 backward), and
   * each modifier's, and mode balanced's 392 (tests/test_gen_spec.c) */
  cr_assert_eq(s.n_variants, 3072);
  for (int i = 0; i < s.n_variants; i++) {
    gen_variant v;
    cr_assert_eq(gen_variant_from_name(g, s.variants[i].name, &v, &err), GEN_OK, "%s", err.msg);
    cr_expect(!memcmp(&v, &s.variants[i], sizeof v), "%s does not round-trip", s.variants[i].name);
  }
  gen_spec_free(&s);
}

Test(variant, bad_and_non_canonical_names) {
  struct {
    const char *name, *want;
  } cases[] = {
      {"fwd_bf16_d128_m128n64w4s2_robust_b2p0_e1em3", "canonical"},
      {"fwd_bf16_d0128_m128n64w4s2_none", "canonical"},
      {"fwd_bf16_d128_m128n64w4s2_robust_b2_e0p001", "fwd_bf16_d128_m128n64w4s2_robust_b2_e1em3"},
      {"fwd_bf16_d100_m128n64w4s2_none", "head_dim = 100"},
      {"fwd_bf16_d128_m128n64w4s2_none_b2_e1em3", "wrong number of parts"},
      {"fwd_bf16_d128_m128n64w4s2_paper", "_b<beta>_e<eps>"},
      {"fwd_bf16_d128_m128n64w4s2_paper_b1_e1em3", "stab.beta = 1"},
      {"fwd_bf16_d128_causal_none", "m<block_m>n<block_n>"},
      {"bwd_bf16_d160_m32n64w8s2_none", "cannot split its 160 columns into whole pairs of 8"},
      {"bwd_bf16_d48_m64n32w4s2_none", "needs a head dim that is a multiple of 32, not 48"},
      {"bwd_bf16_d16_causal_m64n32w4s3_none", "needs a head dim that is a multiple of 32, not 16"},
      {"bwd_bf16_d256_m48n32w4s2_none", "block_m = 48: with 8 keys per warp, four warps share 32 keys"},
      {"bwd_bf16_d256_m32n16w2s2_none", "warps = 2: with 8 keys per warp"},
      {"bwd_bf16_d64_m64n64w8s2wg_none", "head_dim 64 has 1 64-column block(s) for the backward's dQ"},
      {"bwd_bf16_d128_m64n64w4s1_none", "double-buffers"},
      {"bwd_bf16_d128_m64n256w4s2_none", "8, 16 or 32 per warp"},
      {"bwd_bf16_d64_m16n32w2s2_none", "block_m = 16: with 16 keys per warp, warp pairs share 32 keys"},
      {"bwd_bf16_d64_m32n16w1s2_none", "warps = 1: with 16 keys per warp"},
      {"hello", "d<head_dim>"},
      {"", "d<head_dim>"},
      {"fwd_bf16_d128_m99999999999999999999n64w4s2_none", "out of range"},
      {"fwd_bf16_d128_m128n64w4s2w_none", "m<block_m>n<block_n>w<warps>s<stages>[wg|ws]"},
      {"fwd_bf16_d128_m128n64w4s2gw_none", "m<block_m>n<block_n>w<warps>s<stages>[wg|ws]"},
      {"fwd_bf16_d128_m128n64w4s2sw_none", "m<block_m>n<block_n>w<warps>s<stages>[wg|ws]"},
      {"fwd_bf16_d128_m128n128w8s2ws_none", "warps = 8: a ws tile takes 2 or 3 consumer warpgroups"},
      {"fwd_bf16_d128_m64n128w12s2ws_none", "block_m = 64: a ws tile's consumer warpgroups take 64"},
      {"fwd_bf16_d128_m128n128w12s1ws_none", "stages = 1: ws tiles keep the next K/V tile in flight"},
      {"fwd_bf16_d96_m128n128w12s2ws_none", "head_dim = 96: ws tiles need a head dim made of 64"},
      {"bwd_bf16_d128_m64n128w16s2ws_none", "warps = 16: a backward ws tile takes two MMA warpgroups"},
      {"bwd_bf16_d128_m64n64w12s2ws_none", "block_n = 64: backward ws tiles at head dims up to 128 take 64 keys"},
      {"bwd_bf16_d128_m64n96w12s2ws_none", "block_n = 96: a backward ws tile's two MMA warpgroups take 64"},
      {"bwd_bf16_d256_m64n128w12s2ws_none", "block_n = 128: backward ws tiles past head dim 128 share 64 keys"},
      {"bwd_bf16_d256_alibi_m64n64w12s2ws_none", "alibi = true: backward ws tiles past head dim 128"},
      {"bwd_bf16_d240_window_m64n64w12s2ws_none", "window = true: backward ws tiles past head dim 128"},
      {"bwd_bf16_d256_dropout_m64n64w12s2ws_none", "dropout = true: backward ws tiles past head dim 128"},
      {"bwd_bf16_d128_m64n128w12s1ws_none", "stages = 1: a backward ws tile keeps the next step's loads"},
      {"bwd_bf16_d192_m64n128w12s2ws_none", "block_n = 128: backward ws tiles past head dim 128 share 64 keys"},
      {"bwd_bf16_d96_m64n128w12s2ws_none", "head_dim = 96: ws tiles need a head dim made of 64"},
      {"bwd_bf16_d64_window_softcap_m64n128w12s2ws_none", "softcap = true: backward ws tiles at head dims up to 64"},
      {"fwd_bf16_d256_window_m128n64w12s2ws_robust_b2_e1em3", "window = true: forward ws tiles at head dims 232-256"},
      {"fwd_bf16_d128_m128n64w2s2wg_none", "warps = 2: wgmma tiles take whole warpgroups"},
      {"fwd_bf16_d128_m128n64w4s2wg_none", "block_m = 128: a wgmma tile's warpgroups take 64"},
      {"fwd_bf16_d128_m64n64w4s1wg_none", "stages = 1: wgmma tiles keep the next K/V tile in flight"},
      {"fwd_bf16_d96_m64n64w4s2wg_none", "head_dim = 96: wgmma tiles need a head dim made of 64"},
      {"bwd_bf16_d128_m32n64w4s2wg_none", "block_m = 32: a backward wgmma tile steps 64 queries"},
      {"bwd_bf16_d128_m64n32w4s2wg_none", "block_n = 32: a backward wgmma tile's warpgroups take 64 keys each, or two"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_variant v;
    gen_err err;
    cr_expect_eq(gen_variant_from_name(g, cases[i].name, &v, &err), GEN_ESPEC, "%s", cases[i].name);
    cr_expect(strstr(err.msg, cases[i].want), "%s: '%s' not in: %s", cases[i].name, cases[i].want,
              err.msg);
  }
}

/* Variable-length variants: "_varlen" after "_causal", d = 128's ws tile on sm_90
 * like the fixed length, and sources that read the sequence from cu_seqlens where
 * the fixed-length ones of the same tile (rendered unchanged) use the batch: the
 * ws tile's TMA coordinates and stores, the wgmma tile's pointers. */
Test(variant, varlen_names_and_sources) {
  gen_variant v = base(128, 1, GEN_STAB_ROBUST, 2, 1e-3), fixed;
  v.varlen = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d128_causal_varlen_m128n128w12s2ws_robust_b2_e1em3");
  gen_variant back;
  cr_assert_eq(gen_variant_from_name(g, v.name, &back, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&back, &v, sizeof v), "the varlen name does not round-trip");
  cr_expect_eq(gen_variant_from_name(g, "fwd_bf16_d128_varlen_causal_m64n96w4s2wg_none", &back, &err),
               GEN_ESPEC);
  fixed = base(128, 1, GEN_STAB_ROBUST, 2, 1e-3);
  cr_assert_eq(gen_variant_complete(g, &fixed, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect(fixed.ws && v.ws, "auto: the ws tile for both");
  char *src, *fsrc;
  size_t len, flen;
  /* ws: TMA rows from the sequence's offset in one batch */
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &fixed, &fsrc, &flen, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "s.q0 = p.cu_seqlens_q[batch], s.q_len = p.cu_seqlens_q[batch + 1] - s.q0;"));
  cr_expect(strstr(src, "const int seq_q0 = seq.q0, seqlen_q = seq.q_len, seq_k0 = seq.k0, seqlen_k = seq.k_len;"));
  cr_expect(strstr(src, "maps.q, cb * 64, it.seq_q0 + it.m0 + 64 * w, it.head,"));
  cr_expect(strstr(src, "produce(maps.k, sK, k_full, k_empty, n + j, it.seq_k0 + j * kBlockN, it.kv_head, 0);"));
  cr_expect(strstr(src, "float *lse = p.lse + ((long long)head * p.total_q + seq_q0);"));
  /* varlen O by TMA for a 64-row block inside its sequence or in the last one (the tensor's end
   * clips it), else by 16-byte chunks from the staging (bench/NOTES.md "Session 23") */
  cr_expect(strstr(src, "if (row0 + 64 <= seqlen_q || seq_q0 + seqlen_q == p.total_q) {") &&
            strstr(src, "tma_store(maps.o, sOw + cb * 64 * 128, cb * 64, seq_q0 + row0, head, 0);") &&
            strstr(src, "*(uint4 *)(o_rows + (long long)r * p.o_row_stride + dt * 8) = x;"), "varlen O: TMA or chunks");
  cr_expect(strstr(fsrc, "tma_store(maps.o, sOw + cb * 64 * 128, cb * 64, m0 + wg * 64, head, batch);") &&
            !strstr(fsrc, "o_rows"), "fixed O: TMA only");
  /* the persistent varlen tile hands each item's sequence over with its number */
  cr_expect(strstr(src, "const ws_item it = ws_item_at(p, work, n_m, seq);"));
  cr_expect(strstr(src, "ld.shared.v4.b32 { %0, %1, %2, %3 }, [%4];"));
  cr_expect(!strstr(fsrc, "seq_q0") && !strstr(fsrc, "p.cu_seqlens_q["));
  free(src);
  free(fsrc);
  /* mma.sync and wgmma: pointers from the sequence's first row */
  v.block_m = 64, v.block_n = 96, v.warps = 4, v.stages = 2, v.wgmma = 1, v.ws = 0;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  fixed.block_m = v.block_m, fixed.block_n = v.block_n, fixed.warps = v.warps, fixed.stages = v.stages;
  fixed.wgmma = 1, fixed.ws = 0;
  cr_assert_eq(gen_variant_complete(g, &fixed, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &fixed, &fsrc, &flen, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "const int seq_q0 = p.cu_seqlens_q[batch], seqlen_q = p.cu_seqlens_q[batch + 1] - seq_q0;"));
  cr_expect(strstr(src, "(const elem_t *)p.q + (long long)seq_q0 * p.q_row_stride + head * p.q_head_stride"));
  cr_expect(strstr(src, "float *lse = p.lse + ((long long)head * p.total_q + seq_q0);"));
  for (const char *const *t = (const char *const[]){"q", "k", "v", "o", NULL}; *t; t++) {
    char fixed_base[64];
    snprintf(fixed_base, sizeof fixed_base, "batch * p.%s_batch_stride", *t);
    cr_expect(!strstr(src, fixed_base), "a varlen kernel uses no batch stride (%s)", *t);
  }
  cr_expect(!strstr(fsrc, "seq_q0") && !strstr(fsrc, "p.cu_seqlens_q["));
  cr_expect(strstr(fsrc, "float *lse = p.lse + ((long long)batch * p.heads_q + head) * p.seqlen_q;"));
  free(src);
  free(fsrc);
}

/* Window variants: "_window" after "_varlen", never causal (the window's right
 * edge is), masks from the run-time edges; fixed sources unchanged. */
Test(variant, window_names_and_sources) {
  gen_variant v = base(64, 0, GEN_STAB_ROBUST, 2, 1e-3);
  v.window = 1, v.varlen = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d64_varlen_window_m128n64w4s1_robust_b2_e1em3");
  gen_variant back;
  cr_assert_eq(gen_variant_from_name(g, v.name, &back, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&back, &v, sizeof v), "the window name does not round-trip");
  v.causal = 1;
  cr_expect_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "a window variant takes causal as its right edge"), "%s", err.msg);
  v.causal = 0;
  char *src;
  size_t len;
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "const int key_first = p.window_left < 0 ? 0 : max(0, m0 + seqlen_k - seqlen_q - p.window_left) / kBlockN * kBlockN;"));
  cr_expect(strstr(src, "if (key >= limit || key < first) s[mt][nt][2 * h + e] = neg_inf();"));
  cr_expect(strstr(src, "if (m_old == neg_inf()) {"), "robust's shift waits for a visible key");
  free(src);
}

/* The ws backward past d = 128 (bwd_ws_wide.cuh.tpl): two MMA warpgroups sharing 64 keys,
 * P and dS double-buffered in place of dQ's staging, one block a key block; head dims
 * 232-248 padded to 256, 168-184 to 192; the shared memory the layout comment in bwd.cu.tpl
 * adds up. */
Test(variant, ws_backward_past_128) {
  const int dims[] = {176, 192, 240, 256};
  for (int i = 0; i < 4; i++) {
    const int d = dims[i], td = d > 192 ? 256 : 192;
    gen_variant v = base(d, 1, GEN_STAB_NONE, 0, 0);
    v.pass = GEN_PASS_BWD;
    tiles(&v, 64, 64, 12, 2);
    v.ws = 1, v.sinks = 1, v.varlen = i % 2; /* (varlen: session 31) */
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
    char want[80];
    snprintf(want, sizeof want, "bwd_bf16_d%d_causal%s_sinks_m64n64w12s2ws_none", d, i % 2 ? "_varlen" : "");
    cr_expect_str_eq(v.name, want);
    cr_expect_eq(v.threads, 384);
    cr_expect_eq(v.persistent, 0);
    cr_expect_eq(v.smem_bytes, 1024 + 2 * td * (2 * 64 + 2 * 2 * 64) + 8 * 2 * 64 + 4 * 2 * 64 * 64 + 256);
    cr_expect_eq(v.smem_bytes, td == 256 ? 231680 : 182528, "within sm_90's 227 KB");
    cr_expect(gen_variant_runs_on(&v, "sm_90") && !gen_variant_runs_on(&v, "sm_80"));
  }
}

/* ws tiles take windows, ALiBi, softcap, sinks and dropout (d = 128's auto pick on
 * sm_90 with them): the producer loads from the window's first key tile, ALiBi masks
 * every tile, softcap caps S, the epilogue adds the sink, dropout draws its keep bits
 * per tile and adds the mask entry. */
Test(variant, ws_tiles_take_windows_and_score_modifiers) {
  struct {
    int window, alibi, softcap, sinks, dropout;
    const char *name, *text;
  } cases[] = {
      {0, 1, 0, 0, 0, "fwd_bf16_d128_alibi_m128n128w12s2ws_none", "const int n_lmasked = 0, n_unmasked = 0;"},
      {0, 0, 1, 0, 0, "fwd_bf16_d128_softcap_m128n128w12s2ws_none", "cap_out * tanh_approx(s[mt][nt][e] * cap_in)"},
      {0, 0, 0, 1, 0, "fwd_bf16_d128_sinks_m128n128w12s2ws_none", "const float lt = l * keep + exp2_approx(sink2 - top);"},
      {0, 0, 0, 0, 1, "fwd_bf16_d128_dropout_m128n128w12s2ws_none", "kept[mt].set(ps, dropout_bits_s(drop_seed"},
      {1, 0, 0, 0, 0, "fwd_bf16_d128_window_m128n128w12s2ws_none",
       "produce(maps.k, sK, k_full, k_empty, n + j, it.key_first + j * kBlockN, it.kv_head, it.batch);"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    gen_variant v = base(128, 0, GEN_STAB_NONE, 0, 0);
    v.window = cases[i].window, v.alibi = cases[i].alibi, v.softcap = cases[i].softcap;
    v.sinks = cases[i].sinks, v.dropout = cases[i].dropout;
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "case %zu: %s", i, err.msg);
    cr_expect_str_eq(v.name, cases[i].name);
    cr_expect_eq(v.n_entries, cases[i].dropout ? 2 : 1, "%s", v.name);
    char *src;
    size_t len;
    cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
    cr_expect(strstr(src, cases[i].text), "%s lacks %s", v.name, cases[i].text);
    cr_expect(!cases[i].dropout || strstr(src, "fa2_dropout_mask(const fa2_fwd_params p)"), "%s", v.name);
    free(src);
  }
}

/* Dropout variants: "_dropout" after "_softcap"; a forward carries the mask
 * kernel as its second entry, a backward its usual four; the Philox header is
 * pasted into their sources only, and the kernels read the mask's bits. */
Test(variant, dropout_names_entries_and_sources) {
  gen_variant v = base(128, 0, GEN_STAB_NONE, 0, 0);
  v.window = 1, v.softcap = 1, v.dropout = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d128_window_softcap_dropout_m128n128w12s2ws_none");
  cr_expect_eq(v.n_entries, 2);
  cr_expect_str_eq(v.entries[1], "fa2_dropout_mask");
  gen_variant back;
  cr_assert_eq(gen_variant_from_name(g, v.name, &back, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&back, &v, sizeof v), "the dropout name does not round-trip");
  cr_expect_eq(gen_variant_from_name(g, "fwd_bf16_d128_dropout_softcap_m64n96w4s2wg_none", &back, &err),
               GEN_ESPEC);
  char *src;
  size_t len;
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "#ifndef FA2_PHILOX_H"));
  cr_expect(strstr(src, "extern \"C\" __global__ void __launch_bounds__(kThreads) fa2_dropout_mask("));
  cr_expect(strstr(src, "(key_first + j * kBlockN) / 16 + ps, lane,"), "a window's keys count from 0");
  cr_expect(strstr(src, "* p.dropout_scale; // the kept P's 1 / (1 - p)"));
  free(src);
  gen_variant b = base(64, 1, GEN_STAB_NONE, 0, 0);
  b.pass = GEN_PASS_BWD, b.dropout = 1;
  cr_assert_eq(gen_variant_complete(g, &b, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(b.name, "bwd_bf16_d64_causal_dropout_m32n128w4s2_none");
  cr_expect_eq(b.n_entries, 4);
  cr_assert_eq(gen_render(g, &b, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "dropout_bits_st(drop_seed, drop_base"), "the main kernel's S^T bits");
  cr_expect(strstr(src, "dropout_bits_s(drop_seed, drop_base"), "fa2_bwd_dq_det's S bits");
  cr_expect(strstr(src, "* p.dropout_keep; // (1 - p) delta"));
  free(src);
  /* without the flag: no Philox in the source */
  gen_variant plain = base(64, 1, GEN_STAB_NONE, 0, 0);
  cr_assert_eq(gen_variant_complete(g, &plain, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_eq(plain.n_entries, 1);
  cr_assert_eq(gen_render(g, &plain, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(!strstr(src, "FA2_PHILOX_H") && !strstr(src, "drop_"));
  free(src);
}

/* Sinks variants: "_sinks" last of the flags; the forward's epilogue adds the sink to the
 * row's sum; the backward is the same kernels plus fa2_bwd_sink, its fifth entry. */
Test(variant, sinks_names_entries_and_sources) {
  gen_variant v = base(64, 0, GEN_STAB_ROBUST, 2, 1e-3);
  v.varlen = v.window = v.alibi = v.softcap = v.sinks = 1;
  gen_err err;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "fwd_bf16_d64_varlen_window_alibi_softcap_sinks_m128n64w4s1_robust_b2_e1em3");
  cr_expect_eq(v.n_entries, 1);
  gen_variant back;
  cr_assert_eq(gen_variant_from_name(g, v.name, &back, &err), GEN_OK, "%s", err.msg);
  cr_expect(!memcmp(&back, &v, sizeof v), "the sinks name does not round-trip");
  char *src, *plain;
  size_t len;
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "const float sink2 = p.sinks[head] * 1.44269504f;"));
  cr_expect(strstr(src, "const float lt = l * keep + exp2_approx(sink2 - top);"));
  cr_expect(strstr(src, "lse[m0 + r] = lt != 0.f ? (top + log2f(lt)) * 0.69314718f : pos_inf();"));
  free(src);
  v.sinks = 0;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_assert_eq(gen_render(g, &v, &plain, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(!strstr(plain, "sink2") && !strstr(plain, "p.sinks["), "a variant without sinks has no sink code");
  free(plain);

  /* the backward: the plain kernels, then fa2_bwd_sink before the main kernel */
  for (int wg = 0; wg < 2; wg++) {
    gen_variant b = base(128, 1, GEN_STAB_NONE, 0, 0);
    b.pass = GEN_PASS_BWD, b.sinks = 1;
    cr_assert_eq(gen_variant_complete(g, &b, wg ? "sm_90" : "sm_80", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(b.wgmma, wg);
    cr_expect_eq(b.n_entries, 5);
    cr_expect_str_eq(b.entries[3], "fa2_bwd_dq_det");
    cr_expect_str_eq(b.entries[4], "fa2_bwd_sink");
    cr_assert_eq(gen_render(g, &b, &src, &len, &err), GEN_OK, "%s", err.msg);
    b.sinks = 0;
    cr_assert_eq(gen_variant_complete(g, &b, wg ? "sm_90" : "sm_80", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(b.n_entries, 4);
    cr_assert_eq(gen_render(g, &b, &plain, &len, &err), GEN_OK, "%s", err.msg);
    /* the sinks source less its first line and the fa2_bwd_sink block is the plain one's */
    char *kernel = strstr(src, "// ---- fa2_bwd_sink"), *rest = kernel ? strstr(kernel, "\n\n") : NULL;
    cr_assert(kernel && rest, "no fa2_bwd_sink block");
    cr_expect(strstr(kernel, "sum += (double)(exp2_approx((sink - lse[r]) * 1.44269504f) * delta[r]);"));
    cr_expect(strstr(kernel, "if (tid == 0) p.dsinks[head] = (float)-sum;"));
    memmove(kernel, rest + 2, strlen(rest + 2) + 1);
    cr_expect_str_eq(strchr(src, '\n'), strchr(plain, '\n'));
    free(src);
    free(plain);
  }
}

/* Head dims past 128 (issue 19). The backward's wide layouts, picked by 8 keys
 * per warp: "quad" on mma.sync (four warps share 32 keys; P^T beside dS^T in
 * shared memory) and "pair" on wgmma (two warpgroups share 64 keys, one S^T and
 * dV, the other dP^T and dK; P^T's fp32 factor beside dS^T), each the "auto" pick where it applies; the forward's
 * wgmma tiles at d = 192 and 256; and the sources they render. */
Test(variant, wide_head_dims) {
  gen_err err;
  gen_variant v = base(256, 1, GEN_STAB_NONE, 0, 0);
  v.pass = GEN_PASS_BWD;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "bwd_bf16_d256_causal_m32n32w4s2_none");
  cr_expect_eq(v.smem_bytes, 2 * 264 * (2 * 32 + 2 * 2 * 32) + 8 * 2 * 32 + 2 * 2 * 32 * 40);
  cr_expect_leq(v.smem_bytes, 166912, "fits sm_80");
  char *src;
  size_t len;
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "constexpr bool kPaired = true;") && strstr(src, "const unsigned sP = sS + kTileS;") &&
                strstr(src, "for (int dc = 0; dc < kDQTiles; dc += kDQChunk)"),
            "the quad layout's source");
  free(src);
  v = base(256, 0, GEN_STAB_NONE, 0, 0);
  v.pass = GEN_PASS_BWD;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "bwd_bf16_d256_m64n64w8s2wg_none");
  /* K, V, two stages of Q and dO, LSE and delta, dS^T in bf16 and P^T's factor in fp32 */
  cr_expect_eq(v.smem_bytes, 1024 + 2 * 256 * (2 * 64 + 2 * 2 * 64) + 8 * 2 * 64 + 2 * 64 * 64 + 4 * 64 * 64);
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "wgmma_ss_n64(") && !strstr(src, "wgmma_ss_n32(") && strstr(src, "wgmma_rs_n256(") &&
                strstr(src, "wgmma_tt_n128(") && strstr(src, "bar_sync(kPBar, 256);") && !strstr(src, "acc_v["),
            "the pair layout's source: S^T or dP^T of 64 queries per warpgroup, dV/dK with A from "
            "registers, P^T's factor passed by a named barrier, dQ in halves");
  free(src);
  v = base(192, 0, GEN_STAB_NONE, 0, 0); /* dQ's columns split 128 + 64 */
  v.pass = GEN_PASS_BWD;
  cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
  cr_expect_str_eq(v.name, "bwd_bf16_d192_m64n64w8s2wg_none");
  cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
  cr_expect(strstr(src, "wgmma_tt_n128(") && strstr(src, "wgmma_tt_n64(") &&
                strstr(src, "Rows of 24 chunks do not cover the threads"), "%s", v.name);
  free(src);
  for (int d = 160; d <= 224; d += 64) { /* not whole 64-column blocks: the quad off sm_90, the pair of the */
    v = base(d, 0, GEN_STAB_NONE, 0, 0); /* next 64-column tile dim on it (WGMMA_WIDER) */
    v.pass = GEN_PASS_BWD;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(v.wgmma, 0, "%s", v.name);
    cr_expect_eq(v.block_n / v.warps, 8, "%s: a quad", v.name);
    v = base(d, 0, GEN_STAB_NONE, 0, 0);
    v.pass = GEN_PASS_BWD;
    v.alibi = 1;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(v.tile_dim, d + 32, "%s", v.name);
    cr_expect_str_eq(v.name, d == 160 ? "bwd_bf16_d160_alibi_m64n64w8s2wg_none" : "bwd_bf16_d224_alibi_m64n64w8s2wg_none");
  }
  /* the forward: ws tiles on sm_90 (d = 192 persistent, 256 a block an item: O's staging does not fit beside
   * two stages of 64 keys), but a window at d = 256 (robust's spilled there): the wgmma tile */
  const char *fwd[2] = {"fwd_bf16_d192_m128n80w12s2ws_robust_b2_e1em3", "fwd_bf16_d256_m128n64w12s2ws_robust_b2_e1em3"};
  for (int i = 0; i < 2; i++) {
    v = base(192 + 64 * i, 0, GEN_STAB_ROBUST, 2, 1e-3);
    cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_str_eq(v.name, fwd[i]);
    cr_expect_eq(v.persistent, i == 0, "%s", v.name);
    v = base(192 + 64 * i, 0, GEN_STAB_ROBUST, 2, 1e-3);
    v.window = 1;
    cr_assert_eq(gen_variant_complete(g, &v, "sm_90", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(v.ws, i == 0, "%s", v.name);
    v = base(192 + 64 * i, 0, GEN_STAB_ROBUST, 2, 1e-3);
    cr_assert_eq(gen_variant_complete(g, &v, "sm_80", &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(v.wgmma, 0, "%s", v.name);
  }
}

/* Head dims that are multiples of 8 but not kernel head dims run on the tiles of the
 * next kernel head dim (tile_dim): same tiles, threads and shared memory as that one,
 * their own name, and sources whose loads zero the columns past d (cp.async with
 * src-size 0) and whose stores leave them out; a kernel head dim's source has none of it. */
Test(variant, padded_head_dims) {
  struct {
    int pass, d, tile;
    const char *arch;
  } cases[] = {{GEN_PASS_FWD, 8, 16, NULL},     {GEN_PASS_FWD, 40, 48, NULL},  {GEN_PASS_FWD, 120, 128, "sm_90"},
               {GEN_PASS_BWD, 120, 128, "sm_90"}, {GEN_PASS_BWD, 136, 160, NULL}, {GEN_PASS_FWD, 248, 256, "sm_90"},
               {GEN_PASS_BWD, 200, 224, NULL},
               /* sm_90's wgmma tiles take 33-48 on 64's, 136-160 on 192's, 200-224 on 256's (WGMMA_WIDER), the
                  others their own */
               {GEN_PASS_FWD, 40, 64, "sm_90"},  {GEN_PASS_BWD, 48, 64, "sm_90"},  {GEN_PASS_BWD, 40, 48, "sm_80"},
               {GEN_PASS_FWD, 160, 192, "sm_90"}, {GEN_PASS_BWD, 136, 192, "sm_90"}, {GEN_PASS_FWD, 200, 256, "sm_90"},
               {GEN_PASS_BWD, 224, 256, "sm_90"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gen_variant v = base(cases[i].d, 1, GEN_STAB_NONE, 0, 0), t = base(cases[i].tile, 1, GEN_STAB_NONE, 0, 0);
    v.pass = t.pass = cases[i].pass;
    gen_err err;
    cr_assert_eq(gen_variant_complete(g, &v, cases[i].arch, &err), GEN_OK, "d %d: %s", cases[i].d, err.msg);
    cr_assert_eq(gen_variant_complete(g, &t, cases[i].arch, &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(v.tile_dim, cases[i].tile, "d %d: tile_dim %d", cases[i].d, v.tile_dim);
    cr_expect_eq(t.tile_dim, cases[i].tile);
    cr_expect(v.block_m == t.block_m && v.block_n == t.block_n && v.warps == t.warps && v.stages == t.stages &&
                  v.wgmma == t.wgmma && v.ws == t.ws && v.threads == t.threads && v.smem_bytes == t.smem_bytes,
              "d %d: the tiles of %d (%s against %s)", cases[i].d, cases[i].tile, v.name, t.name);
    char want[16];
    snprintf(want, sizeof want, "_d%d_", cases[i].d);
    cr_expect(strstr(v.name, want), "%s", v.name);
    gen_variant back;
    cr_assert_eq(gen_variant_from_name(g, v.name, &back, &err), GEN_OK, "%s", err.msg);
    cr_expect_eq(back.head_dim, cases[i].d);
    char *src, *tsrc, decl[64];
    size_t len, tlen;
    cr_assert_eq(gen_render(g, &v, &src, &len, &err), GEN_OK, "%s", err.msg);
    cr_assert_eq(gen_render(g, &t, &tsrc, &tlen, &err), GEN_OK, "%s", err.msg);
    snprintf(decl, sizeof decl, "constexpr int kTensorDim = %d;", cases[i].d);
    cr_expect(strstr(src, decl), "%s: %s", v.name, decl);
    snprintf(decl, sizeof decl, "constexpr int kHeadDim = %d;", cases[i].tile);
    cr_expect(strstr(src, decl), "%s: %s", v.name, decl);
    cr_expect(!strstr(tsrc, "kTensorDim"), "%s has no masks", t.name);
    if (!v.ws) /* the ws forward loads with TMA: the map's bounds zero the columns */
      cr_expect(strstr(src, "ch * 8 < kTensorDim"), "%s: loads masked", v.name);
    if (cases[i].pass == GEN_PASS_BWD) {
      cr_expect(strstr(src, "if (row >= p.seqlen_q || col >= kTensorDim) return;"), "%s: dQ's stores", v.name);
      cr_expect(strstr(src, "* kTensorDim + col; // o_f32's"), "%s: fp32 O's rows of d", v.name);
    } else {
      cr_expect(strstr(src, "head) * kTensorDim;"), "%s: fp32 O's rows of d", v.name);
    }
    free(src), free(tsrc);
  }
  /* Not multiples of 8, or past 256: refused, naming what is allowed. */
  for (int d = 4; d <= 264; d += 4) {
    if (d % 8 == 0 && d <= 256) continue;
    gen_variant v = base(d, 0, GEN_STAB_NONE, 0, 0);
    gen_err err;
    cr_expect_eq(gen_variant_complete(g, &v, NULL, &err), GEN_ESPEC, "d %d", d);
    cr_expect(strstr(err.msg, "multiples of 8 from 8 to 256"), "%s", err.msg);
  }
  /* A wgmma tile needs whole 64-column blocks after padding: 72 (tiles of 80) cannot;
   * 33-48 take 64's, 136-160 192's, 200-224 256's (WGMMA_WIDER). */
  gen_variant w = base(72, 0, GEN_STAB_NONE, 0, 0);
  tiles(&w, 64, 128, 4, 2);
  w.wgmma = 1;
  gen_err err;
  cr_expect_eq(gen_variant_complete(g, &w, "sm_90", &err), GEN_ESPEC);
  cr_expect(strstr(err.msg, "head_dim = 72") && strstr(err.msg, "40-64, 104-128, 136-192, 200-256"), "%s",
            err.msg);
}
