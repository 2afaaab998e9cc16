-- The warp-specialized backward (templates/bwd_ws.cuh.tpl, Hopper sm_90a) against
-- float64: both dtypes, d = 64 and 128 and two head dims padded to them (56, 120:
-- columns past d masked), causal and not, 2 Q/dO stages and 3 at d = 64 (d = 128's
-- do not fit 227 KB; bench/gpu_run.sh ws_bwd). On other GPUs fa2_gpu_tests skips them.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 56, 64, 120, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = {
    { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 64, block_n = 128, warps = 12, stages = 3, ws = true },
  },
  arch     = { "sm_90" },
  exclude  = function(v) return v.head_dim ~= 64 and v.stages == 3 end,
}
