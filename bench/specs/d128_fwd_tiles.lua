-- The d = 128 forward's built-in wgmma tile against the one-warpgroup tiles the
-- H200's tuner preferred (two blocks per SM), every mode: does the H100 agree?
-- (bench/NOTES.md, "Built-in d = 128 tile, session 5"). Their float64 check:
-- tests/gpu/wgmma_spec.lua holds m64n96w4s2wg; the others share its code path.
return {
  dtype    = { "bf16" },
  head_dim = { 128 },
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = {
    { block_m = 128, block_n = 176, warps = 8, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 96,  warps = 4, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 80,  warps = 4, stages = 2, wgmma = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
