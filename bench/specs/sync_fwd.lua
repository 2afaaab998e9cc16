-- The forward's mma.sync built-in tiles (those "auto" picks on sm_80), run on
-- any GPU: the baseline the wgmma tiles are timed against (gpu_run.sh wgmma).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "fwd" },
  arch     = { "sm_80" },
}
