-- Native head dims 48 and 80 on Hopper (bench/gpu_run.sh head_dims16_perf) next to
-- the dims the Python layer padded them to before (64 and 96), forward and backward,
-- built-in tiles; every forward also on m128n48w4s1 and m128n64w4s1 (d = 80's other
-- spill-free tiles). fa2_bench's table keeps H*d = 2048 (H = 2048 // d), so TFLOP/s
-- compare per head dim; the padded path's useful rate is d = 64's (96's) times 48/64
-- (80/96).
local sync = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s } end
return {
  dtype    = { "bf16" },
  head_dim = { 48, 64, 80, 96 },
  causal   = { false, true },
  stab     = { { mode = "none" } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  tiles    = { "auto", sync(128, 48, 4, 1), sync(128, 64, 4, 1) },
  exclude  = function(v) -- the explicit tiles are forward ones
    local t = string.format("m%dn%dw%ds%d", v.block_m, v.block_n, v.warps, v.stages)
    return (t == "m128n48w4s1" or t == "m128n64w4s1") and v.pass == "bwd"
  end,
}
