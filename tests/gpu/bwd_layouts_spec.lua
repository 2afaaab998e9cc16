-- Backward layouts against float64 (fa2_gpu_tests --spec): 16 keys per warp
-- (warp pairs sharing 32 keys, one keeping dV, the other dK) and 32 keys per
-- warp, every head dim the backward supports, causal and not, the tiles the
-- tuner picks among. sm_90 only, so the 3-stage d = 128 tile fits.
return {
  dtype    = { "bf16" },
  head_dim = { 32, 64, 96, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  arch     = { "sm_90" },
  tiles    = {
    "auto",
    { block_m = 32, block_n = 64,  warps = 4, stages = 2 },  -- paired
    { block_m = 64, block_n = 64,  warps = 4, stages = 2 },  -- paired
    { block_m = 64, block_n = 128, warps = 8, stages = 3 },  -- paired
    { block_m = 32, block_n = 128, warps = 4, stages = 2 },  -- 32 keys per warp
  },
  exclude  = function(v) return v.head_dim > 64 and v.block_m == 32 and v.block_n == 128 end,
}
