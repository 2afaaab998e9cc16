-- The ws backward past d = 128 (templates/bwd_ws_wide.cuh.tpl) under compute-sanitizer (memcheck, racecheck,
-- synccheck; fa2_gpu_tests --odd-shapes): bf16, d = 192 (128 + 64 columns a warpgroup) and 240 (padded to 256),
-- causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 192, 240 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = { { block_m = 64, block_n = 64, warps = 12, stages = 2, ws = true } },
  arch     = { "sm_90" },
}
