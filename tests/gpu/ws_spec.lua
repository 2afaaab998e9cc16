-- The forward's ws tiles (warp-specialized: TMA producer, consumer warpgroups;
-- Hopper, sm_90a) against float64: both dtypes, every mode, d 64 and 128, two
-- and three consumer warpgroups, block_n 96 to 176, 2 and 3 stages
-- (bench/gpu_run.sh ws). On other GPUs fa2_gpu_tests skips them.
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
    { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 192, block_n = 128, warps = 16, stages = 2, ws = true }, -- d = 64: three consumers
    { block_m = 128, block_n = 176, warps = 12, stages = 2, ws = true }, -- d = 128: a partial last slot
    { block_m = 128, block_n = 96,  warps = 12, stages = 3, ws = true }, -- d = 128: three stages
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  -- d = 64: the first two; d = 128 (three consumers would spill at 160 registers): the others and the first
  exclude  = function(v)
    if v.head_dim == 64 then return v.block_m == 128 and v.block_n ~= 128 end
    return v.block_m == 192
  end,
}
