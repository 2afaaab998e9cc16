return { dtype = { "bf16", "fp16" }, head_dim = { 64 }, causal = { false, true }, pass = { "bwd" }, arch = { "sm_90" },
  tiles = { { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true }, { block_m = 64, block_n = 128, warps = 8, stages = 3, wgmma = true } } }
