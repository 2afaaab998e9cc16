-- d = 64 non-causal forward below N = 1k on Hopper (session 25): the built-in wgmma tile
-- ("auto", m64n128w4s2wg) against the causal rule's m64n64w4s2wg, its three-stage form
-- and the persistent ws tile, in the modes the length rules serve, bf16 (fa2_bench
-- --seqlen 256 / 512).
return {
  dtype    = { "bf16" },
  head_dim = { 64 },
  causal   = { false },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 }, { mode = "balanced" } },
  tiles    = { "auto", { block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = true },
               { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true },
               { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true } },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
