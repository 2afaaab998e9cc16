-- Backward tiles on Hopper's warpgroup MMA (wgmma, sm_90a) that compile
-- without spills, timed by `bench/gpu_run.sh wgmma_bwd` next to the mma.sync
-- built-ins and PyTorch SDPA (their float64 check: tests/gpu/wgmma_bwd_spec.lua).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = {
    { block_m = 64, block_n = 64,  warps = 4, stages = 2, wgmma = true },
    { block_m = 64, block_n = 64,  warps = 4, stages = 3, wgmma = true },
    { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true },
    { block_m = 64, block_n = 128, warps = 8, stages = 3, wgmma = true },
  },
  arch     = { "sm_90" },
  exclude  = function(v)
    return (v.head_dim == 64 and v.warps == 8) or (v.head_dim == 128 and v.warps == 4)
      or (v.head_dim == 128 and v.causal and v.stages == 3)
  end,
}
