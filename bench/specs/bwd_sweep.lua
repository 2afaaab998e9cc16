-- Backward tile sweep (bench/gpu_run.sh sweep): the default tiles and the
-- candidates that fit in registers without spills, d = 64 and 128, bf16.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  stab     = { { mode = "none" } },
  tiles    = {
    { block_m = 64,  block_n = 64,  warps = 4, stages = 2 },
    { block_m = 64,  block_n = 128, warps = 8, stages = 2 },
    { block_m = 32,  block_n = 64,  warps = 4, stages = 2 },
    { block_m = 64,  block_n = 64,  warps = 4, stages = 3 },
  },
  arch     = { "sm_90" },
}
