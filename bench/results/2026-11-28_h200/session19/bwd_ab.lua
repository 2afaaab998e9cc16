return { dtype = { "bf16" }, head_dim = { 64, 128 }, causal = { false, true }, pass = { "bwd" }, arch = { "sm_90" },
  tiles = { { block_m = 64, block_n = 128, warps = 8, stages = 3, wgmma = true }, { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true } },
  exclude = function(v) return (v.head_dim == 64) ~= (v.stages == 3) end }
