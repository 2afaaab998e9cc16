-- The ws tiles compute-sanitizer checks (bench/gpu_run.sh ws_sanitize): two and
-- three consumer warpgroups, causal and not, over the odd shapes.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 192, block_n = 128, warps = 16, stages = 2, ws = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v) return v.head_dim == 128 and v.block_m == 192 end,
}
