-- The warp-specialized backward under compute-sanitizer (memcheck, racecheck, synccheck;
-- fa2_gpu_tests --odd-shapes): bf16 d = 64, causal and not, two Q/dO stages.
return {
  dtype    = { "bf16" },
  head_dim = { 64 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = { { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true } },
  arch     = { "sm_90" },
}
