-- The wider manual sweep that checks `fa2 tune` (bench/gpu_run.sh
-- tune_sweep): the default spec's keys in the modes the speed targets name
-- (none, robust) and the backward, with `fa2 tune --wide --dry-run`.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "fwd", "bwd" },
  stab     = { { mode = "none" }, { mode = "robust" } },
  arch     = { "sm_90" },
}
