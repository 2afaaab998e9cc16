-- Mode balanced (templates/round_balanced.cuh.tpl) against float64, and its O bit
-- for bit against the lab's rounding of the kernel's own fp32 O (fwd_check.c,
-- lab_round_row_bisect): every forward tile family (ws, wgmma, mma.sync with one
-- and with two m16 row tiles a warp), both dtypes, head dims 32 to 128 (past 128 the generator refuses it: it spills), causal and
-- not, none beside it. sm_90 (the mma.sync tiles run there too).
local sync = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s } end
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 32, 64, 96, 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "balanced" } },
  tiles    = { "auto", sync(64, 64, 4, 2), sync(128, 32, 4, 2) },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  -- m128n32w4s2 at d = 128 (two m16 row tiles a warp) spills with balanced (gen/defaults.lua TILES_BALANCED)
  exclude  = function(v) return v.head_dim == 128 and v.block_m == 128 and not (v.wgmma or v.ws) end,
}
