-- Dropout variants of both tile families, forward and backward, for the register
-- and spill report (`fa2 build tests/gpu/dropout_spec.lua`, no GPU needed) and the SASS
-- cost (bench/NOTES.md "Dropout"): the head dims whose default tiles cover mma.sync
-- forward (32, 96), wgmma forward (64, 128 on sm_90), the backward's unpaired
-- (64) and paired (32, 96, 128 on sm_80) warps and its wgmma tile (128 on sm_90).
-- 5 of the 87 kernels spill: the d = 96 mma.sync forward on sm_80 (4-8 bytes; 247-254
-- registers without dropout) and the d = 128 window backward (12 and 36 bytes; 8 and 56
-- without dropout), hence allow_spills.
return {
  dtype    = { "bf16" },
  head_dim = { 32, 64, 96, 128 },
  causal   = { false, true },
  window   = { false, true },
  dropout  = { true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  allow_spills = true,
}
