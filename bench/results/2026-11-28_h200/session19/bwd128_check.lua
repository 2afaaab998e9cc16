return { dtype = { "bf16", "fp16" }, head_dim = { 128 }, causal = { false, true }, pass = { "bwd" }, arch = { "sm_90" },
  tiles = { { block_m = 64, block_n = 128, warps = 8, stages = 2, wgmma = true } } }
