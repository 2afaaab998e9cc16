-- d = 64 causal forward below N = 1k on Hopper (session 25): the built-in wgmma tile
-- (m64n128w4s2wg, "auto"), the tile `fa2 tune` chose at N = 512 (m64n64w4s2wg, 1.09x in
-- session 24's dry run), its three-stage form, and the persistent ws tile the length rule
-- takes from 1k; the modes the length rules serve (none, robust, balanced), bf16 and fp16
-- (fa2_bench --seqlen 256 / 512 / 1024; fa2_gpu_tests checks the same variants).
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 64 },
  causal   = { true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 }, { mode = "balanced" } },
  tiles    = { "auto", { block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = true },
               { block_m = 64, block_n = 64, warps = 4, stages = 3, wgmma = true },
               { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true } },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
