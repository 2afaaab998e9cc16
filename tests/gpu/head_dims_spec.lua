-- Head dims past 128 against float64 (fa2_gpu_tests --spec; bench/gpu_run.sh
-- head_dims): the forward's wgmma tiles at d = 192 and 256 (two warpgroups, the
-- built-in; one; a partial last load pass), the backward's two wide layouts,
-- "pair" (wgmma, two warpgroups share 64 keys) and "quad" (mma.sync, four warps
-- share 32 keys), with the backward's built-in tiles of every head dim 160..256
-- (sm_90's; the quad tiles are also sm_80's) in both dtypes, causal and not; the
-- other tiles in bf16. (The mma.sync forward of d 160..256 is the kernel it was;
-- tests/gpu/empty_rows_spec.lua checks it.) sm_90 only (the wgmma tiles).
local wg = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s, wgmma = true } end
local sync = function(m, n, w, s) return { block_m = m, block_n = n, warps = w, stages = s } end
local function tile(v) return string.format("m%dn%dw%d%s", v.block_m, v.block_n, v.warps, v.wgmma and "wg" or "") end
-- the tiles kept besides "auto", per pass: head dims they apply to
local extra = {
  fwd = { m64n64w4wg = { [192] = true, [256] = true }, m128n112w8wg = { [192] = true },
          m128n96w8wg = { [192] = true } }, -- 192's built-in before run 16 (bench/NOTES.md)
  bwd = { m32n32w4 = { [160] = true, [192] = true, [224] = true, [256] = true },
          m64n32w4 = { [192] = true }, m32n64w8 = { [192] = true, [256] = true },
          m64n64w8wg = { [128] = true } },
}
local auto = {
  fwd = { [192] = "m128n80w8wg", [256] = "m128n64w8wg" },
  bwd = { [160] = "m64n32w4", [192] = "m64n64w8wg", [224] = "m32n32w4", [256] = "m64n64w8wg" },
}
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 128, 160, 192, 224, 256 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  tiles    = {
    "auto", wg(64, 64, 4, 2), wg(128, 112, 8, 2), wg(128, 96, 8, 2), sync(64, 32, 4, 2), sync(32, 32, 4, 2),
    sync(32, 64, 8, 2), wg(64, 64, 8, 2),
  },
  exclude  = function(v)
    if not v.name then return true end -- not a variant (a forward tile in the backward, ...)
    local t = tile(v)
    if auto[v.pass][v.head_dim] == t then return false end
    local x = extra[v.pass][t]
    return not (x and x[v.head_dim] and v.dtype == "bf16" and v.stab == "none")
  end,
}
