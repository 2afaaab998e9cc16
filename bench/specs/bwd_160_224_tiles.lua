-- The backward tiles of d 160 and 224 on Hopper (no wgmma there): BWD_TILES' quad
-- tiles (m64n32w4s2 at 160, m32n32w4s2 at 224) against the quad layout on eight warps
-- (m64n64w8s2, BWD_TILES_SM90 since this branch) and the pairs' m32n64w4s2 (d 160),
-- bf16, causal and not: fa2_bench times them side by side, fa2_gpu_tests checks them
-- against float64 (bench/NOTES.md "Session 20").
local t = function(m, n, w) return { block_m = m, block_n = n, warps = w, stages = 2 } end
return {
  dtype    = { "bf16" },
  head_dim = { 160, 224 },
  causal   = { false, true },
  tiles    = { t(64, 32, 4), t(32, 32, 4), t(64, 64, 8), t(32, 64, 4) },
  pass     = { "bwd" },
  arch     = { "sm_90" },
  -- m64n32w4s2 spills at 224 (gen/defaults.lua), m32n64w4s2 was not a finalist there
  exclude  = function(v)
    return v.head_dim == 224 and (v.block_m == 64 and v.block_n == 32 or v.block_n == 64 and v.warps == 4)
  end,
}
