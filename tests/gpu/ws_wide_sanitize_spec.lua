-- tests/gpu/ws_wide_spec.lua's tiles under compute-sanitizer (fa2_gpu_tests --odd-shapes): d = 256's persistent
-- 48-key tile and its 64-key one, d = 192's persistent 80-key one (gen/defaults.lua's), bf16, causal and not.
return {
  dtype    = { "bf16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 48, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 64, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 80, warps = 12, stages = 2, ws = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v) return (v.head_dim == 256) == (v.block_n == 80) end,
}
