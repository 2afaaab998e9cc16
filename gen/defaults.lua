-- gen/defaults.lua: the defaults a spec does not have to spell out.
-- Kernel tuning goes here, and only here: `tiles = "auto"` picks TILES[head_dim].
-- Checked against the tile constraints and the shared-memory limits of every
-- arch a spec names (see ARCHITECTURE.md "Variants").
local M = {}

-- Forward tiles per head dim: rows of queries (block_m), keys per tile
-- (block_n), warps per block, K/V pipeline stages.
M.TILES = {
  [16]  = { block_m = 128, block_n = 64, warps = 4, stages = 1 },  -- 32's
  [32]  = { block_m = 128, block_n = 64, warps = 4, stages = 1 },
  [48]  = { block_m = 128, block_n = 64, warps = 4, stages = 1 },  -- 64's
  [64]  = { block_m = 128, block_n = 64, warps = 4, stages = 1 },
  [80]  = { block_m = 128, block_n = 32, warps = 4, stages = 2 },  -- best of 3 (H200; 96's spills)
  [96]  = { block_m = 128, block_n = 48, warps = 4, stages = 2 },
  [128] = { block_m = 128, block_n = 48, warps = 4, stages = 1 },
  [160] = { block_m = 128, block_n = 64, warps = 8, stages = 2 },
  [192] = { block_m = 128, block_n = 64, warps = 8, stages = 2 },
  [224] = { block_m = 128, block_n = 64, warps = 8, stages = 1 },
  [256] = { block_m = 128, block_n = 64, warps = 8, stages = 1 },
}

-- Forward tiles on Hopper: where warpgroup MMA applies (head dims made of
-- 64-column blocks) they replace TILES when a variant is completed for
-- sm_90. H100 sweep of 7 wgmma tiles (bench/NOTES.md "wgmma"): d = 64's is
-- within 5 % of the best tile on every row N >= 1k. d = 128: one warpgroup
-- per block, two blocks per SM, 0.81-0.94 of m128n176w8s2wg's time causal and
-- 0.87-1.03 non-causal on the H100 (NOTES "Built-in d = 128 tile"), the H200
-- tuner's choice too. d = 192/256 (NOTES "Head dims past 128", 8 tiles each):
-- 256's is the best or within 3 % (1.51-1.90x flash); at 192 m128n80w8s2wg is
-- 4-10 % faster than m128n96w8s2wg (1.51-1.73x flash) and passed the float64
-- check of tests/gpu/head_dims_spec.lua (H100 run 16, both dtypes and modes).
M.TILES_SM90 = {
  [64]  = { block_m = 64,  block_n = 128, warps = 4, stages = 2, wgmma = true },
  [128] = { block_m = 64,  block_n = 96,  warps = 4, stages = 2, wgmma = true },
  [192] = { block_m = 128, block_n = 80,  warps = 8, stages = 2, wgmma = true },
  [256] = { block_m = 128, block_n = 64,  warps = 8, stages = 2, wgmma = true },
}

-- Warp-specialized forward tiles on Hopper (ws: a TMA producer warpgroup and two
-- consumer warpgroups, templates/fwd_ws.cu.tpl): they replace TILES_SM90 for the
-- variants they cover (every feature, varlen included). H100
-- run 17 (bench/NOTES.md "Warp-specialized forward"), d = 128: 1.14-1.44x the
-- wgmma tile's speed on every row (N = 512..16k, causal and not, every mode),
-- 0.96-1.07x cuDNN. d = 64 stays on wgmma here: its ws tiles lose 4-21 % at N <= 1k
-- (and causal 2k), win 8-29 % beyond, so the runtime takes m192n128w16s2ws from
-- N = 2k (4k causal) by a length rule (runtime/rt_select.c, LENGTH_RULES).
M.TILES_SM90_WS = {
  [128] = { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
  -- d 192 and 256 (session 29, H100, fa2_bench; bench/NOTES.md "Session 29"): 1.18-1.66x the
  -- wgmma tiles above on every row (N = 512..16k, causal and not, none and robust). d = 192's 80
  -- keys a tile led 64 but at causal 16k; d = 256's 64 keys led 48 (persistent) everywhere. A
  -- window at d = 256 keeps the wgmma tile (variant.lua auto_pick).
  [192] = { block_m = 128, block_n = 80, warps = 12, stages = 2, ws = true },
  [256] = { block_m = 128, block_n = 64, warps = 12, stages = 2, ws = true },
}

-- Forward tiles for variants with a score modifier, dropout, sinks or varlen, off
-- sm_90, where TILES' tile has no registers left for them: d = 96's m128n48w4s2 sits
-- at 244-255 registers on sm_80 and spilled 4-24 bytes with ALiBi, a window, causal
-- dropout or causal varlen; m128n32w4s2 (d = 80's) compiles at 210-233, no spill. On
-- sm_90 m128n48w4s2 does not spill and its forward is 8-15 % faster with a modifier
-- (H200; bench/NOTES.md "Session 12: the d = 96 forward's modifier tile").
M.TILES_MODIFIED = {
  [96] = { block_m = 128, block_n = 32, warps = 4, stages = 2 },
}

-- Forward tiles for mode balanced off sm_90, where TILES' tile has no registers left
-- for its rounding (a row's errors and gaps beside O): d = 128's m128n48w4s1 spilled
-- 64-144 bytes on sm_80; one m16 row tile a warp does not.
M.TILES_BALANCED = {
  [128] = { block_m = 64, block_n = 64, warps = 4, stages = 2 },
}

-- Backward tiles per head dim: queries per step (block_m), keys per block
-- (block_n: 32 per warp, 16 per warp in pairs, or 8 per warp in fours),
-- warps, Q/dO buffers (stages, 2 or 3). dK and dV stay in registers: past
-- d = 128 four warps share 32 keys and split dV and dK in column halves
-- ("quad"); these tiles fit sm_80's 163 KB with fa2_bwd_dq_det's 16 rows per warp.
M.BWD_TILES = {
  [16]  = { block_m = 64, block_n = 64, warps = 4, stages = 2 },  -- 32's
  [32]  = { block_m = 64, block_n = 64, warps = 4, stages = 2 },
  [48]  = { block_m = 64, block_n = 64, warps = 4, stages = 2 },  -- 32's
  [64]  = { block_m = 32, block_n = 128, warps = 4, stages = 2 },  -- +17-28 % over m64n64w4 (H100 tuner)
  [80]  = { block_m = 64, block_n = 64, warps = 4, stages = 2 },  -- 96's
  [96]  = { block_m = 64, block_n = 64, warps = 4, stages = 2 },
  [128] = { block_m = 64, block_n = 128, warps = 8, stages = 2 }, -- +12 % over m64n64w4 (H100)
  [160] = { block_m = 64, block_n = 32, warps = 4, stages = 2 },
  [192] = { block_m = 64, block_n = 32, warps = 4, stages = 2 },
  [224] = { block_m = 32, block_n = 32, warps = 4, stages = 2 },  -- m64n32w4s2 spills here
  [256] = { block_m = 32, block_n = 32, warps = 4, stages = 2 },
}

-- Backward tiles on Hopper (wgmma, replacing BWD_TILES on sm_90): d = 128
-- runs 1.16-1.26x the flash backend there, against 0.84-0.96x for m64n128w8s2
-- (H200, bench/NOTES.md "wgmma backward"). d = 64: one warpgroup, three Q/dO
-- buffers, 1.02-1.04x m32n128w4s2 non-causal and 1.02-1.10x causal through
-- PyTorch once P^T's exponentials overlap dP^T's MMA (H200, bench/NOTES.md
-- "Session 16"; 0.92-1.10x before, without the overlap). d = 192/256: a pair
-- of warpgroups sharing 64 keys, one computing S, P and dV, the other dP, dS
-- and dK: 0.99-1.07x and 1.09-1.21x flash on the H200 (bench/NOTES.md
-- "Session 14"; the quad tiles ran 0.50-0.81x on the H100).
M.BWD_TILES_SM90 = {
  [64]  = { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true },
  [128] = { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true },
  [192] = { block_m = 64, block_n = 64, warps = 8, stages = 2, wgmma = true },  -- a pair
  [256] = { block_m = 64, block_n = 64, warps = 8, stages = 2, wgmma = true },  -- a pair
}

-- Warp-specialized backward tiles on Hopper (ws: two MMA warpgroups of 64 keys, a TMA
-- producer warp and three warps adding dQ, templates/bwd_ws.cuh.tpl): they replace
-- BWD_TILES_SM90 of one or two 64-column blocks (d 40-64 and 104-128, columns past d
-- masked) for every variant but windows at d <= 64 (the rule is variant.lua's
-- auto_pick; at d <= 64 but windows, a persistent grid: variant.lua's complete). H200, fa2_bench
-- (bench/NOTES.md "Session 26"), N = 512..16k: d = 64 1.18-1.47x the wgmma tile non-causal,
-- 1.03-1.44x causal; d = 128 1.09-1.21x and 1.06-1.23x; with the modifiers, through PyTorch,
-- 0.77-0.96x its forward+backward time ("Session 28").
M.BWD_TILES_SM90_WS = {
  [64]  = { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true },
  [128] = { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true },
}

-- Stabilization parameters when a stab entry leaves them out (DESIGN.md:
-- the paper uses beta 2..8, eps about 1e-3).
M.BETA = 2
M.EPS = 1e-3

-- Spec axes a spec may leave out (dtype and head_dim are required).
-- Functions, so every spec gets fresh tables.
M.AXES = {
  causal       = function() return { false, true } end,
  varlen       = function() return { false } end,
  window       = function() return { false } end,
  alibi        = function() return { false } end,
  softcap      = function() return { false } end,
  dropout      = function() return { false } end,
  sinks        = function() return { false } end,
  tiles        = function() return "auto" end,
  stab         = function()
    return {
      { mode = "none" },
      { mode = "paper",  beta = M.BETA, eps = M.EPS },
      { mode = "robust", beta = M.BETA, eps = M.EPS },
    }
  end,
  arch         = function() return { "sm_80", "sm_90" } end,
  pass         = function() return { "fwd" } end,
  allow_spills = function() return false end,
}

return M
