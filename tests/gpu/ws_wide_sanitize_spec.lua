-- tests/gpu/ws_wide_spec.lua's d = 256 tiles under compute-sanitizer (fa2_gpu_tests --odd-shapes): the persistent
-- 48-key tile and the 64-key one, bf16, causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 256 },
  causal   = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 48, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 64, warps = 12, stages = 2, ws = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
