-- `paper` with its tie count after P V is issued (session 6), against `none`
-- of the same tiles: the Hopper defaults (d = 64 m64n128, d = 128 m64n96) and
-- a narrower tile that keeps S alive in fewer registers (bench/NOTES.md).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
  },
  tiles    = {
    { block_m = 64, block_n = 128, warps = 4, stages = 2, wgmma = true },
    { block_m = 64, block_n = 96,  warps = 4, stages = 2, wgmma = true },
    { block_m = 64, block_n = 64,  warps = 4, stages = 3, wgmma = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
