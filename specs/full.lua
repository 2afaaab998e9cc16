-- specs/full.lua: every supported variant with "auto" tiles: forward and
-- backward for every kernel head dim (16, 48, 80 and 32..256 step 32) x bf16,
-- fp16 x causal or not, the forward in the three stabilization modes (paper and
-- robust with beta 2, eps 1e-3; the backward does not depend on the mode); each
-- plain, and with one score modifier or varlen (window, varlen, alibi, softcap,
-- sinks, dropout; a window is never causal: its right edge is the causal mask).
-- Combinations compile on first use and are not listed here (their count grows
-- as the product of the axes).
--
-- Left out, as it spills on the arch that does not pick it (4 bytes in the
-- prologue, bench/NOTES.md "Spills of the modifier variants"): the d = 256 varlen
-- backward's mma.sync tile (sm_80's pick; sm_90 runs the wgmma pair).
local head_dims = { 16, 48, 80 }
for d = 32, 256, 32 do head_dims[#head_dims + 1] = d end
local MODIFIERS = { "window", "varlen", "alibi", "softcap", "sinks", "dropout" }

return {
  dtype    = { "bf16", "fp16" },
  head_dim = head_dims,
  causal   = { false, true },
  window   = { false, true },
  varlen   = { false, true },
  alibi    = { false, true },
  softcap  = { false, true },
  sinks    = { false, true },
  dropout  = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  exclude  = function(v)
    local n = 0
    for _, m in ipairs(MODIFIERS) do n = n + (v[m] and 1 or 0) end
    if n > 1 then return true end
    return v.pass == "bwd" and v.head_dim == 256 and v.varlen and not v.wgmma
  end,
}
