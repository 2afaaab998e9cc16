-- Rows that see no key (fa2_gpu_tests --spec tests/gpu/empty_rows_spec.lua
-- --empty-rows): causal with seqlen_q > seqlen_k and seqlen_k = 0, on both
-- tile families of an H100 ("auto": wgmma at d 64/128, mma.sync elsewhere;
-- the explicit tiles: mma.sync at every head dim, 1 and 2 stages). The
-- backward stops at d 128; past it only robust's forward, to keep it short.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 32, 64, 96, 128, 160, 192, 224, 256 },
  causal   = { true, false },
  stab     = {
    { mode = "none" },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = {
    "auto",
    { block_m = 64,  block_n = 64, warps = 4, stages = 2 },
    { block_m = 128, block_n = 64, warps = 4, stages = 1 },
  },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  exclude  = function(v)
    if v.head_dim > 128 then return v.pass == "bwd" or v.stab == "none" end
    return v.pass == "bwd" and v.block_m == 128 and not v.wgmma
  end,
}
