-- Every score modifier and varlen alone (bf16, robust, head dims 32..256 step 32, causal
-- and not, both passes, sm_80 and sm_90): the compile-only spill census of issues 19 and
-- 20 (`bin/fa2 build bench/specs/modifiers_each.lua -j 2 -o /tmp/m`, bench/NOTES.md
-- session 9). Spills allowed here: 12 of its 429 compiles spilled in session 9, 4 in
-- session 11, none in session 12 (352 compiles, each arch's picks only); specs/full.lua
-- now checks all of them, with spills refused, at every head dim and both dtypes.
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
