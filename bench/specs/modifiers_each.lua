-- Every score modifier and varlen alone (bf16, robust, every kernel head dim, causal and
-- not, both passes, sm_80 and sm_90): the compile-only spill census of issues 19 and 20
-- (`bin/fa2 build bench/specs/modifiers_each.lua -j 2 -o /tmp/m`, bench/NOTES.md session 9).
-- Spills allowed here: 12 of its 429 compiles spilled in session 9, 4 in session 11 (the
-- d = 96 forward on sm_80 with some modifiers, the d = 256 varlen backward's mma.sync
-- tile on sm_90); specs/full.lua takes these axes but those.
return {
  dtype    = { "bf16" },
  head_dim = { 32, 64, 96, 128, 160, 192, 224, 256 },
  causal   = { false, true },
  window   = { false, true },
  varlen   = { false, true },
  alibi    = { false, true },
  softcap  = { false, true },
  sinks    = { false, true },
  dropout  = { false, true },
  stab     = { { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  allow_spills = true,
  exclude  = function(v)
    local n = (v.window and 1 or 0) + (v.varlen and 1 or 0) + (v.alibi and 1 or 0) + (v.softcap and 1 or 0)
      + (v.sinks and 1 or 0) + (v.dropout and 1 or 0)
    return n ~= 1 or (v.window and v.causal)
  end,
}
