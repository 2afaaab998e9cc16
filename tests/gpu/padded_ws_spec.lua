-- d = 56 on the tiles d = 64's length rules pick (runtime/rt_select.c matches a rule by
-- the tiles' head dim): the ws forwards m128n128w12s2ws (persistent) and m192n128w16s2ws,
-- and the backward's m64n128w8s3wg, against float64 (fa2_gpu_tests --spec); with the
-- fp16 d = 200 causal backward (sm_90's tile and sm_80's m32n32w4s2) that
-- tests/gpu/padded_dims_spec.lua's first run did not reach.
local ws = function(m, w) return { block_m = m, block_n = 128, warps = w, stages = 2, ws = true } end
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 56, 200 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  tiles    = { "auto", { block_m = 32, block_n = 32, warps = 4, stages = 2 }, ws(128, 12), ws(192, 16), { block_m = 64, block_n = 128, warps = 8, stages = 3, wgmma = true } },
  exclude  = function(v)
    if not v.name then return true end
    if v.head_dim == 200 then return not (v.dtype == "fp16" and v.causal and v.pass == "bwd" and v.stab == "none") end
    if v.dtype == "fp16" then return true end
    if v.pass == "fwd" then return not v.ws end
    return not (v.wgmma and v.warps == 8)
  end,
}
