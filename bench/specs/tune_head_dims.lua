-- fa2 tune over the head dims past 128 and their varlen kernels (README
-- "Autotuning"): forward (robust) and backward at d = 192 and 256, causal and
-- not, fixed length and varlen (timed on rt_tune.h's mix of document lengths,
-- stored under "_varlen" keys). bench/gpu_run.sh tune_head_dims runs it.
return {
  dtype    = { "bf16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  varlen   = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
}
