-- The backward past d = 128 on Hopper: the ws tile (templates/bwd_ws_wide.cuh.tpl; tests/gpu/ws_wide_bwd_spec.lua
-- checks it) against the wgmma pair gen/defaults.lua BWD_TILES_SM90 gives d = 192 and 256 today; bf16, causal and not
-- (fa2_bench).
return {
  dtype    = { "bf16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  tiles    = {
    { block_m = 64, block_n = 64, warps = 12, stages = 2, ws = true },
    { block_m = 64, block_n = 64, warps = 8, stages = 2, wgmma = true },
  },
  pass     = { "bwd" },
  arch     = { "sm_90" },
}
