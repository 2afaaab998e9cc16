-- specs/full.lua: every supported variant with "auto" tiles: forward and
-- backward for every kernel head dim (16, 48, 80 and 32..256 step 32) x bf16,
-- fp16 x causal or not, the forward in the four modes (paper and robust with beta 2,
-- eps 1e-3; balanced up to d = 128; the backward does not depend on the mode); each
-- plain, with one score modifier or varlen (window, varlen, alibi, softcap, sinks,
-- dropout; a window is never causal: its right edge is the causal mask), and with the
-- pairs models combine (COMBOS: a window on packed sequences, gpt-oss's sinks with a
-- window, Gemma 2's softcap with a window, softcap with ALiBi). Other combinations
-- compile on first use and are not listed here (their count grows as the product of
-- the axes; every pair's census is in bench/NOTES.md "Session 12").
--
-- Each "auto" tile is built for the arches that pick it (sm_90's wgmma and ws tiles,
-- sm_80's mma.sync ones where sm_90 has its own). Left out, as they spill (bench/NOTES.md
-- "Session 13"): the d = 128 wgmma backward with ALiBi and softcap together (4-8 bytes
-- at 255 registers), and the mma.sync backward with a window and softcap at d = 64
-- (16-20 bytes) and d = 128 (4 bytes on sm_80; sm_90's wgmma ones are clean).
local head_dims = { 16, 48, 80 }
for d = 32, 256, 32 do head_dims[#head_dims + 1] = d end
local MODIFIERS = { "window", "varlen", "alibi", "softcap", "sinks", "dropout" }
local COMBOS = { window_varlen = true, window_sinks = true, window_softcap = true, alibi_softcap = true }

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
    { mode = "balanced" },
  },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  exclude  = function(v)
    local on = {}
    for _, m in ipairs(MODIFIERS) do on[#on + 1] = v[m] and m or nil end
    if #on > 2 or (#on == 2 and not COMBOS[on[1] .. "_" .. on[2]]) then return true end
    if v.stab == "balanced" and (v.pass == "bwd" or v.head_dim > 128) then return true end
    return v.pass == "bwd" and (v.head_dim == 128 and v.wgmma and v.alibi and v.softcap
      or (v.head_dim == 64 or v.head_dim == 128) and not v.wgmma and v.window and v.softcap)
  end,
}
