-- Issue 21's N = 512 rows on Hopper (session 24): every tile the tuner accepts for the forward
-- and backward at d 64 and 128, causal and not, timed at N = 512 only (`fa2 tune
-- bench/specs/tune_n512.lua --shapes 512 --no-beta --dry-run --report DIR`): whether a length
-- rule below 1k would beat the built-in tiles there.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "fwd", "bwd" },
  stab     = { { mode = "none" } },
  arch     = { "sm_90" },
}
