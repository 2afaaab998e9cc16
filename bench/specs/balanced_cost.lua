-- Mode balanced's cost (issue 22): the default forward tiles on Hopper (d = 64's wgmma
-- tile, d = 128's persistent ws tile), none and balanced, bf16, causal and not
-- (bench/mode_cost.py over fa2_bench's JSON).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "balanced" } },
  tiles    = "auto",
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
