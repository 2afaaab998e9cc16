-- specs/padded.lua: the head dims that are not kernel head dims (every other multiple of 8
-- up to 256), forward (none, robust; balanced to d = 128) and backward, bf16 and fp16, causal
-- or not, with "auto" tiles on sm_80 and sm_90. Each runs on the tiles of the next kernel head
-- dim with its columns past d masked (gen/variant.lua tile_dim); the masks cost registers, so
-- the CI compiles them all for spills (tests/test_rt_build.c) beside specs/full.lua.
local head_dims = {}
for d = 8, 256, 8 do
  local kernel = { [16] = true, [32] = true, [48] = true, [64] = true, [80] = true, [96] = true }
  if not kernel[d] and d % 32 ~= 0 then head_dims[#head_dims + 1] = d end
end

return {
  dtype    = { "bf16", "fp16" },
  head_dim = head_dims,
  causal   = { false, true },
  stab     = {
    { mode = "none" },
    { mode = "robust", beta = 2, eps = 1e-3 },
    { mode = "balanced" },
  },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  exclude  = function(v) return v.stab == "balanced" and (v.pass == "bwd" or v.head_dim > 128) end,
}
