-- fa2 tune over the head dims added since the first tuner runs (issue 19): 16, 48 and 80
-- (session 10's native kernels) and 160, 224 (the quad backward), forward (robust) and
-- backward, causal and not, fixed length and varlen (timed on rt_tune.h's mix of document
-- lengths, "_varlen" keys). bench/results/2026-11-28_h200/session20/call4.sh runs it at N = 2k.
return {
  dtype    = { "bf16" },
  head_dim = { 16, 48, 80, 160, 224 },
  causal   = { false, true },
  varlen   = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
}
