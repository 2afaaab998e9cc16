-- The warp-specialized backward (templates/bwd_ws.cuh.tpl) beside the built-in wgmma
-- tiles (d = 64: m64n64w4s3wg, d = 128: m64n128w8s2wg), causal and not: issue 21's A/B.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = { "auto", { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true } },
  arch     = { "sm_90" },
}
