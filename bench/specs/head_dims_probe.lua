-- Tiles for head dims 192 and 256 on the H100 (bench/gpu_run.sh head_dims_perf):
-- the forward's wgmma tiles (one and two warpgroups, block_n 32..112, 2 and 3
-- stages) next to the mma.sync tile d = 192/256 had before, and the backward's
-- wide layouts, pair (wgmma) and quad (mma.sync), next to each other; timed with
-- PyTorch SDPA flash/cuDNN in the same call (bench/compare.py --by-variant).
local wg = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s, wgmma = true } end
local sync = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s } end
local fwd = {
  [192] = { m128n96w8s2wg = 1, m128n112w8s2wg = 1, m128n64w8s2wg = 1, m128n80w8s2wg = 1,
            m64n64w4s2wg = 1, m64n48w4s2wg = 1, m128n48w8s3wg = 1, m128n64w8s2 = 1 },
  [256] = { m128n64w8s2wg = 1, m128n80w8s2wg = 1, m128n48w8s3wg = 1, m128n32w8s3wg = 1,
            m64n64w4s2wg = 1, m64n48w4s2wg = 1, m64n32w4s2wg = 1, m128n64w8s1 = 1 },
}
local bwd = {
  [192] = { m64n64w8s2wg = 1, m64n32w4s2 = 1, m32n32w4s2 = 1, m32n64w8s2 = 1 },
  [256] = { m64n64w8s2wg = 1, m32n32w4s2 = 1, m32n64w8s2 = 1 },
}
return {
  dtype    = { "bf16" },
  head_dim = { 192, 256 },
  causal   = { false, true },
  stab     = { { mode = "none" } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  tiles    = {
    wg(128, 96, 8, 2), wg(128, 112, 8, 2), wg(128, 64, 8, 2), wg(128, 80, 8, 2), wg(64, 64, 4, 2),
    wg(64, 48, 4, 2), wg(128, 48, 8, 3), wg(128, 32, 8, 3), wg(64, 32, 4, 2), sync(128, 64, 8, 2),
    sync(128, 64, 8, 1), wg(64, 64, 8, 2), sync(64, 32, 4, 2), sync(32, 32, 4, 2), sync(32, 64, 8, 2),
  },
  exclude  = function(v)
    if not v.name then return true end
    local t = string.format("m%dn%dw%ds%d%s", v.block_m, v.block_n, v.warps, v.stages, v.wgmma and "wg" or "")
    return not ((v.pass == "fwd" and fwd or bwd)[v.head_dim][t])
  end,
}
