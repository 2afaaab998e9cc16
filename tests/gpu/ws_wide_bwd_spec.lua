-- The warp-specialized backward past d = 128 (templates/bwd_ws_wide.cuh.tpl, Hopper sm_90a:
-- two MMA warpgroups sharing 64 keys) against float64: both dtypes, d = 192 and 256 and a head
-- dim padded to each (176, 240: columns past d masked), causal and not; varlen too for make
-- test's spill check (fa2_gpu_tests skips it: tests/gpu/test_varlen.py checks it). On other
-- GPUs fa2_gpu_tests skips them all.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 176, 192, 240, 256 },
  causal   = { false, true },
  varlen   = { false, true },
  pass     = { "bwd" },
  tiles    = { { block_m = 64, block_n = 64, warps = 12, stages = 2, ws = true } },
  arch     = { "sm_90" },
}
