-- Mode balanced's tile at short lengths on Hopper (issue 22's cost; session 25): the
-- built-in tiles ("auto": d = 64's wgmma m64n128w4s2wg, d = 128's persistent ws tile),
-- the persistent ws tile at d = 64 (its length rule's from 1k), and the wgmma tiles
-- m64n64w4s2wg (four blocks an SM) and m64n128w4s2wg, none beside balanced, bf16
-- (fa2_bench --seqlen 512 / 1024 / 2048; bench/mode_cost.py-style ratios in the call).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "balanced" } },
  tiles    = { "auto", { block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = true },
               { block_m = 64, block_n = 128, warps = 4, stages = 2, wgmma = true },
               { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true } },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
