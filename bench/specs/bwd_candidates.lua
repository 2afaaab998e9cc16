-- The backward tiles proposed as defaults (gen/defaults.lua BWD_TILES), for
-- the GPU check before they become the defaults: fa2_gpu_tests --spec.
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  stab     = { { mode = "none" } },
  tiles    = { { block_m = 64, block_n = 128, warps = 8, stages = 2 } },
}
