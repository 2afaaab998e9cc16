-- The backward's wgmma tiles (Hopper, sm_90a) against float64: both dtypes,
-- one warpgroup (d = 64, 128) and two (d = 128), 2 and 3 Q/dO stages
-- (bench/gpu_run.sh wgmma). On other GPUs fa2_gpu_tests skips them.
return {
  dtype    = { "bf16", "fp16" },
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
  allow_spills = true, -- d = 128 on one warpgroup spills 4 bytes: checked, not timed as a default
  exclude  = function(v) return v.head_dim == 64 and v.warps == 8 end,
}
