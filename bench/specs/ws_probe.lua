-- Forward ws tiles (warp-specialized, TMA; sm_90a) timed next to the wgmma
-- default of each key ("auto" on sm_90) by `bench/gpu_run.sh ws`, every mode
-- (their float64 check: tests/gpu/ws_spec.lua).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = {
    "auto",
    { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 128, warps = 12, stages = 3, ws = true },
    { block_m = 192, block_n = 128, warps = 16, stages = 2, ws = true }, -- d = 64 only
    { block_m = 128, block_n = 176, warps = 12, stages = 2, ws = true }, -- d = 128 only
    { block_m = 128, block_n = 96,  warps = 12, stages = 2, ws = true }, -- d = 128 only
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v)
    if not v.ws then return false end
    if v.head_dim == 64 then return v.block_n ~= 128 end
    return v.block_m == 192
  end,
}
