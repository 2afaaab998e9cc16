-- specs/full.lua: every supported variant with "auto" tiles: forward and
-- backward for every kernel head dim (16, 48, 80 and 32..256 step 32) x bf16,
-- fp16 x causal or not, the forward in the three stabilization modes (paper and
-- robust with beta 2, eps 1e-3; the backward does not depend on the mode).
local head_dims = { 16, 48, 80 }
for d = 32, 256, 32 do head_dims[#head_dims + 1] = d end

return {
  dtype    = { "bf16", "fp16" },
  head_dim = head_dims,
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "paper",  beta = 2, eps = 1e-3 },
    { mode = "robust", beta = 2, eps = 1e-3 },
  },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
}
