-- The causal forward's tile below N = 1k on sm_90 (rt_select.c's length rule: m64n64w4s2wg
-- from N = 256) at every head dim that takes d = 64's rules (33-64 on 64's wgmma tiles),
-- both dtypes, the modes the rules serve: `fa2_gpu_tests --spec` (float64; session 25's
-- call 4) and the spill-free compile (tests/test_rt_build.c).
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 40, 48, 56, 64 },
  causal   = { true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 }, { mode = "balanced" } },
  tiles    = { { block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = true } },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
