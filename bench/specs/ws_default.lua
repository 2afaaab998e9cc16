-- d = 128's forward default on Hopper (the persistent ws tile m128n128w12s2ws), none
-- and robust, causal and not: bench/gpu_run.sh ws_persistent times it on one block per
-- SM and on the full grid.
return {
  dtype    = { "bf16" },
  head_dim = { 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = "auto",
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
