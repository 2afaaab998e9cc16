-- The forward past d = 128 on Hopper: ws tiles (tests/gpu/ws_wide_spec.lua, checked there) against the wgmma tiles
-- gen/defaults.lua TILES_SM90 gives d = 192 and 256 today; bf16, none and robust, causal and not (fa2_bench).
return {
  dtype    = { "bf16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 48, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 64, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 80, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 80, warps = 8, stages = 2, wgmma = true },
    { block_m = 128, block_n = 64, warps = 8, stages = 2, wgmma = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v)
    return v.head_dim == 256 and v.block_n == 80 or v.head_dim == 192 and v.block_n == 48
        or v.head_dim == 192 and v.wgmma and not v.ws and v.block_n == 64
  end,
}
