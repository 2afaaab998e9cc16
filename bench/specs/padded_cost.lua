-- What the masks cost: head dims 40, 120 and 200 on the tiles of 48, 128 and 224 (the
-- columns past d masked) beside those kernel head dims, bf16, mode none, forward and
-- backward, causal and not, the "auto" tiles of the device (fa2_bench --spec; the same
-- tiles, so the times should match within noise: bench/NOTES.md "Session 21").
return {
  dtype    = { "bf16" },
  head_dim = { 40, 48, 120, 128, 200, 224 },
  causal   = { false, true },
  stab     = { { mode = "none" } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
}
