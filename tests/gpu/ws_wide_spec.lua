-- Warp-specialized forward tiles past d = 128 (fwd_ws.cu.tpl; two consumer warpgroups holding 64 rows of O each):
-- d = 192 with 64 and 80 keys a tile (persistent: O staged apart from Q), d = 256 with 48 (persistent) and 64 (a block
-- an item: two stages of 64 keys and O's staging do not fit 227 KB). Float64 checks (fa2_gpu_tests --spec, normal, odd
-- and empty-row shapes), both dtypes, none and robust; bench/specs/ws_wide.lua times them against the wgmma tiles.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 48, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 64, warps = 12, stages = 2, ws = true },
    { block_m = 128, block_n = 80, warps = 12, stages = 2, ws = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v) -- (d = 256 at 80 keys spills 12-44 bytes; 48 at d = 192 is not a candidate)
    return v.head_dim == 256 and v.block_n == 80 or v.head_dim == 192 and v.block_n == 48
  end,
}
