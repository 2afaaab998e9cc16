-- The forward's wgmma tiles (Hopper, sm_90a) against float64: both dtypes,
-- every mode, one and two warpgroups, block_n 64 to 176, 2 and 3 stages
-- (bench/gpu_run.sh wgmma). On other GPUs fa2_gpu_tests skips them.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = {
    { block_m = 128, block_n = 128, warps = 8, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 64,  warps = 4, stages = 3, wgmma = true },
    { block_m = 128, block_n = 176, warps = 8, stages = 2, wgmma = true }, -- partial load passes
    { block_m = 64,  block_n = 96,  warps = 4, stages = 2, wgmma = true }, -- the H200 tuner's d = 128 pick
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
