-- The wgmma tiles compute-sanitizer checks (bench/gpu_run.sh wgmma): one and
-- two warpgroups, a tile whose K/V loads end in a partial pass, causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "robust" } },
  tiles    = {
    { block_m = 128, block_n = 128, warps = 8, stages = 2, wgmma = true },
    { block_m = 64,  block_n = 176, warps = 4, stages = 2, wgmma = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
