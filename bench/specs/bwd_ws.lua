-- The warp-specialized backward (templates/bwd_ws.cuh.tpl) beside the wgmma tiles it
-- replaced as sm_90's default (d = 64: m64n64w4s3wg, d = 128: m64n128w8s2wg), causal and
-- not, two Q/dO stages and three at d = 64: issue 21's A/B of the backward.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = {
    { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 64, block_n = 128, warps = 12, stages = 3, ws = true },
    { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true },
    { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true },
  },
  arch     = { "sm_90" },
  exclude  = function(v)
    if v.ws then return v.head_dim == 128 and v.stages == 3 end
    return (v.head_dim == 64) ~= (v.warps == 4)
  end,
}
