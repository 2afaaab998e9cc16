-- Head dims that are not kernel head dims (multiples of 8: the tiles of the next kernel
-- head dim, the columns past d zero in shared memory and never stored; gen/variant.lua
-- tile_dim) against float64 (fa2_gpu_tests --spec): one or more per tile dim and
-- family: 8 (tiles of 16), 40 (48), 56 (64: sm_90's wgmma forward and backward), 72
-- (80), 104 and 120 (128: sm_90's ws forward and wgmma backward), 136 (160: quad
-- backward), 200 (224), 248 (256: wgmma pair backward); both dtypes, causal and not,
-- forward none and robust, backward; the "auto" tiles of sm_80 and sm_90. fp16 at
-- 40, 120 and 200, mode none (the masks do not depend on the dtype or the mode).
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 8, 40, 56, 72, 104, 120, 136, 200, 248 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_80", "sm_90" },
  exclude  = function(v)
    local fp16_dims = { [40] = true, [120] = true, [200] = true }
    return v.dtype == "fp16" and (not fp16_dims[v.head_dim] or v.stab ~= "none")
  end,
}
