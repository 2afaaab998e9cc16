-- The backward wgmma tile compute-sanitizer checks (bench/gpu_run.sh
-- wgmma_bwd): sm_90's defaults at d = 64 (one warpgroup) and 128, causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = {
    { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true },
    { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true },
  },
  arch     = { "sm_90" },
  exclude  = function(v) return (v.head_dim == 64) ~= (v.warps == 4) end,
}
