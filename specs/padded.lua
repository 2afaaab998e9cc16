-- specs/padded.lua: head dims that are not kernel head dims, on the tiles of the next kernel
-- head dim with the columns past d masked (gen/variant.lua tile_dim): for each kernel head
-- dim the one 8 below it (8 on 16's tiles, 24 on 32's, ..., 248 on 256's: the most columns
-- stored; the masks' code is the same for the others of a tile dim but for its constant),
-- forward (none, robust; balanced to d = 128) and backward, bf16 and fp16, causal or not,
-- "auto" tiles on sm_80 and sm_90. The NVRTC check of `make test` compiles them for spills
-- (tests/test_rt_build.c) beside specs/full.lua.
local head_dims = {}
for _, t in ipairs({ 16, 32, 48, 64, 80, 96, 128, 160, 192, 224, 256 }) do head_dims[#head_dims + 1] = t - 8 end

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
