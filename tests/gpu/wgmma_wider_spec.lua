-- Head dims 33-48 on sm_90: d = 64's wgmma tiles with the columns past d masked
-- (gen/variant.lua WGMMA_WIDER), forward and backward against float64 (fa2_gpu_tests
-- --spec), every mode the forward has, both dtypes, causal or not; with d = 64's
-- length rules' tiles too (runtime/rt_select.c matches them by the widest tiles' head
-- dim): the ws forwards m128n128w12s2ws (persistent) and m192n128w16s2ws, and the
-- backward's m64n128w8s3wg.
local ws = function(m, w) return { block_m = m, block_n = 128, warps = w, stages = 2, ws = true } end
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 40, 48 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 }, { mode = "balanced" } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  tiles    = { "auto", ws(128, 12), ws(192, 16),
               { block_m = 64, block_n = 128, warps = 8, stages = 3, wgmma = true } },
  exclude  = function(v)
    if v.pass == "bwd" then return v.ws end
    return v.wgmma and v.warps == 8 and not v.ws or v.block_m == 192 and v.stab == "balanced"
  end,
}
