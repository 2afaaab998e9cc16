-- The backward wgmma tile compute-sanitizer checks (bench/gpu_run.sh
-- wgmma_bwd): d = 128's sm_90 default, causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = { { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true } },
  arch     = { "sm_90" },
}
