-- Forward tiles on Hopper's warpgroup MMA (wgmma, sm_90a): the candidates
-- that `bench/gpu_run.sh wgmma` times next to the mma.sync defaults and
-- PyTorch SDPA (their float64 check: tests/gpu/wgmma_spec.lua).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 128, warps = 8, stages = 2, wgmma = true },
    { block_m = 128, block_n = 64,  warps = 8, stages = 2, wgmma = true },
    { block_m = 128, block_n = 96,  warps = 8, stages = 2, wgmma = true },
    { block_m = 128, block_n = 176, warps = 8, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 128, warps = 4, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 64,  warps = 4, stages = 3, wgmma = true },
    { block_m = 128, block_n = 128, warps = 8, stages = 3, wgmma = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
