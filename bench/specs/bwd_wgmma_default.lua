-- The backward's built-in wgmma tiles on Hopper (d = 64: m64n64w4s3wg, d = 128:
-- m64n128w8s2wg), causal and not: the A/B of a backward template change.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "bwd" },
  tiles    = "auto",
  arch     = { "sm_90" },
}
