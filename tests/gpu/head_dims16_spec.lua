-- The head dims that are multiples of 16 but not of 32 (16, 48, 80: the mma.sync
-- tiles, forward and backward) against float64 (fa2_gpu_tests --spec; bench/gpu_run.sh
-- head_dims16): both dtypes, causal and not, every mode, the built-in tiles and the
-- other d = 80 forward tiles the head_dims16_perf step times (m128n32w4s2 is
-- d = 80's built-in since that run).
local sync = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s } end
local fwd80 = { m128n32w4s2 = true, m128n48w4s1 = true, m128n64w4s1 = true }
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 16, 48, 80 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "paper", beta = 2, eps = 1e-3 },
               { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  tiles    = { "auto", sync(128, 48, 4, 1), sync(128, 64, 4, 1) },
  exclude  = function(v) -- the built-in tiles, and the other d = 80 forward tiles
    local t = string.format("m%dn%dw%ds%d", v.block_m, v.block_n, v.warps, v.stages)
    if v.pass == "bwd" then return t ~= "m64n64w4s2" end
    return not (fwd80[t] and v.head_dim == 80 or t == "m128n64w4s1")
  end,
}
