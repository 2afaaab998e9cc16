-- gen/variant.lua: what a kernel variant is. Allowed values, tile rules,
-- shared memory per pass, "auto" tiles, canonical names (and back).
-- The spec loader and the C API (gen_variant_complete) both validate here;
-- checks take the key path to name in their error messages.
local mods = ...
local U, D = mods.util, mods.defaults
local M = {}

-- The head dims the kernels' tiles are built for. A variant may have any head dim
-- that is a multiple of 8 up to 256: it runs on the tiles of the next of these
-- (its tile_dim), its loads zero the columns past its head dim in shared memory and
-- its stores leave them out (the templates' tensor_dim).
M.HEAD_DIMS = { 16, 32, 48, 64, 80, 96, 128, 160, 192, 224, 256 }
M.MAX_HEAD_DIM = 256
M.DTYPES = { "bf16", "fp16" }
M.MODES = { "none", "paper", "robust", "balanced" }
-- Modes with no beta or eps: none's softmax (balanced rounds O apart, templates/round_balanced.cuh.tpl).
M.PLAIN_MODES = { "none", "balanced" }
M.ARCHES = { "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120" }
-- Opt-in shared memory per block (bytes), per arch.
M.ARCH_SMEM = {
  sm_80 = 166912, sm_87 = 166912,
  sm_86 = 101376, sm_89 = 101376, sm_120 = 101376,
  sm_90 = 232448, sm_100 = 232448,
}
M.WARPS = { 1, 2, 4, 8 }
M.ROWS_PER_WARP = { 16, 32, 64 }
M.MAX_STAGES = 4
-- Tiles with `wgmma = true` use Hopper's warpgroup MMA (sm_90a): forward, 64
-- query rows per warpgroup of 4 warps; backward, 64 keys per warpgroup and 64
-- queries per step. Operands in 128-byte-swizzled shared memory (64-column
-- blocks, so head dims that are multiples of 64). The instructions exist on
-- sm_90a only: a wgmma variant runs on WGMMA_ARCH alone, compiled for
-- WGMMA_TARGET (its cubins still live under sm_90/). This is the one place that
-- says so: complete() copies both into the variant (only_arch, only_target),
-- which gen_compile_arch and gen_variant_runs_on read in C.
M.WGMMA_ARCH, M.WGMMA_TARGET = "sm_90", "sm_90a"
M.WGMMA_HEAD_DIMS = { 64, 128, 192, 256 }
-- Head dims 33-48 have mma.sync tiles of 48 columns, and wgmma tiles only as 64's with
-- the columns past d masked: sm_90's "auto" tiles take those (the tiles of 48 ran
-- 1.2-1.6x the time of 64's wgmma ones from N = 4k on the H200, bench/NOTES.md
-- "Session 21"; the Python layer used to pad such head dims to 64 there). Likewise 136-160 and
-- 200-224 on the tiles of 192 and 256 (the ws forward, the wgmma pair backward): their own
-- tiles are mma.sync, whose forward ran 0.40-0.49x cuDNN on the H100; on these 0.39-0.48x its
-- time and 0.97-1.03x cuDNN, the backward 0.75-0.85x its time ("Session 32").
M.WGMMA_WIDER = { [48] = 64, [160] = 192, [224] = 256 }
-- Warp-specialized tiles (`ws = true`, forward, templates/fwd_ws.cu.tpl): a
-- producer warpgroup loads Q, K and V with TMA for 2 or 3 consumer
-- warpgroups of 64 query rows each (warps counts all of them, so 12 or 16).
-- They are wgmma tiles too (sm_90a); head dims of whole 64-column blocks.
M.WS_WARPS = { 12, 16 }
M.WS_HEAD_DIMS = { 64, 128, 192, 256 }
M.WS_ENTRIES = { "fa2_fwd_ws" }

-- wgmma tiles take whole warpgroups of 4 warps (both passes).
local function check_warpgroups(t, path)
  if t.warps ~= 4 and t.warps ~= 8 then
    U.fail(path .. ".warps", t.warps, "wgmma tiles take whole warpgroups of 4 warps", "4, 8")
  end
end

-- Per pass: template, kernel entries in launch order, dynamic shared memory.
M.PASSES = {
  fwd = {
    template = "fwd.cu.tpl",
    entries = { "fa2_fwd" },
    -- Each warp owns 16, 32 or 64 whole query rows.
    check = function(t, path)
      local w = t.warps
      if t.ws or t.wgmma then
        -- 64 query rows per (consumer) warpgroup; a ws tile's last warpgroup loads.
        local family = t.ws and "ws" or "wgmma"
        if not t.ws then check_warpgroups(t, path) end
        local rows = t.ws and 64 * (w // 4 - 1) or 16 * w
        if t.block_m ~= rows then
          U.fail(path .. ".block_m", t.block_m, t.ws
            and "a ws tile's consumer warpgroups take 64 query rows each (one more warpgroup loads)"
            or "a wgmma tile's warpgroups take 64 query rows each (16 per warp)",
            tostring(rows) .. " with warps = " .. w)
        end
        if t.stages < 2 then
          U.fail(path .. ".stages", t.stages, family .. " tiles keep the next K/V tile in flight",
            "2 to " .. M.MAX_STAGES)
        end
        return
      end
      if t.block_m % w ~= 0 or (t.block_m // w ~= 16 and t.block_m // w ~= 32 and t.block_m // w ~= 64) then
        U.fail(path .. ".block_m", t.block_m,
          string.format("%d warps cannot tile %s query rows (each warp takes 16, 32 or 64 whole rows)",
            w, U.numstr(t.block_m)),
          string.format("%d, %d or %d with warps = %d", 16 * w, 32 * w, 64 * w, w))
      end
    end,
    -- Q tile, then `stages` K tiles and `stages` V tiles; rows padded by 8
    -- elements against bank conflicts; 2-byte elements. wgmma tiles are
    -- swizzled instead of padded, plus 1024 bytes to align them.
    smem = function(v)
      -- ws: the same tiles (a persistent one: and O's staging, block_m rows), then 256
      -- bytes of mbarriers.
      local d = v.tile_dim -- (v is complete()'s: the tile family's)
      if v.ws then
        return 1024 + 2 * d * ((v.persistent and 2 or 1) * v.block_m + 2 * v.stages * v.block_n) + 256
      end
      if v.wgmma then return 1024 + 2 * d * (v.block_m + 2 * v.stages * v.block_n) end
      return 2 * (d + 8) * (v.block_m + 2 * v.stages * v.block_n)
    end,
  },
  bwd = {
    template = "bwd.cu.tpl",
    entries = { "fa2_bwd_pre", "fa2_bwd", "fa2_bwd_dq", "fa2_bwd_dq_det" },
    -- fa2_bwd: K and V tiles (block_n rows), `stages` Q and dO tiles
    -- (block_m rows), `stages` LSE and delta rows (fp32), and dS^T (block_n x
    -- block_m, rows padded by 8); fa2_bwd_dq_det: Q and dO of 16 rows per
    -- warp, K and V tiles. 2-byte elements; every entry gets the larger.
    -- wgmma tiles: K, V, Q, dO and dS^T swizzled instead of padded, plus
    -- 1024 bytes to align them.
    -- Wide layouts (bwd_layout) add a P^T buffer beside dS^T: "quad" (mma.sync, 8
    -- keys per warp) a whole one, "pair" (wgmma, 8 keys per warp) P^T's fp32 factor.
    smem = function(v)
      local layout = M.bwd_layout(v)
      local s_bufs = layout == "quad" and 2 or 1
      local d = v.tile_dim
      local main = 2 * (d + 8) * (2 * v.block_n + 2 * v.stages * v.block_m)
        + 8 * v.stages * v.block_m + s_bufs * 2 * v.block_n * (v.block_m + 8)
      if v.wgmma then
        main = 1024 + 2 * d * (2 * v.block_n + 2 * v.stages * v.block_m)
          + 8 * v.stages * v.block_m + (layout == "pair" and 3 or 1) * 2 * v.block_n * v.block_m
      end
      if v.ws then -- + per MMA warpgroup an fp32 dQ staging of rows d + 8, mbarriers; past d = 128
        -- (bwd_ws_wide.cuh.tpl) P and dS, two buffers each, in place of dS^T and the staging
        main = 1024 + 2 * d * (2 * v.block_n + 2 * v.stages * v.block_m) + 8 * v.stages * v.block_m + 256
          + (d > 128 and 4 * 2 * v.block_n * v.block_m
            or 2 * v.block_n * v.block_m + v.block_n // 64 * v.block_m * (d + 8) * 4)
      end
      local det = 4 * (d + 8) * (16 * (v.ws and math.min(v.warps, 8) or v.warps) + v.block_n) -- (ws: on 8 warps)
      return math.max(main, det)
    end,
    -- Each warp owns 32 keys (its rows of dK and dV), or two warps share 32
    -- (16 per warp: one keeps dV, the other dK), or four warps share 32 (8 per
    -- warp, "quad": dV and dK split in column halves, for head dims past 128);
    -- the Q/dO tiles are double-buffered at least.
    check = function(t, path)
      -- ws (templates/bwd_ws.cuh.tpl): two MMA warpgroups of 64 keys each and a producer
      -- warpgroup (loads, dQ's adds); 64 queries per step, Q/dO double-buffered at least.
      -- Past d = 128 (bwd_ws_wide.cuh.tpl) the two share 64 keys (the head dim decides: below).
      if t.ws then
        if t.warps ~= 12 then
          U.fail(path .. ".warps", t.warps, "a backward ws tile takes two MMA warpgroups and a producer one", "12")
        end
        if t.block_n ~= 128 and t.block_n ~= 64 then
          U.fail(path .. ".block_n", t.block_n, "a backward ws tile's two MMA warpgroups take 64 keys each "
            .. "(or share 64 past head dim 128)", "128, or 64 past head dim 128")
        end
        if t.block_m ~= 64 then
          U.fail(path .. ".block_m", t.block_m, "a backward ws tile steps 64 queries at a time", "64")
        end
        if t.stages < 2 then
          U.fail(path .. ".stages", t.stages, "a backward ws tile keeps the next step's loads in flight",
            "2 to " .. M.MAX_STAGES)
        end
        return
      end
      -- wgmma: each warpgroup takes 64 keys (16 per warp), or two warpgroups
      -- share 64 ("pair": 8 per warp, one keeps dV, the other dK), and 64
      -- queries per step; such a tile then meets the rules below too.
      if t.wgmma then
        check_warpgroups(t, path)
        if t.block_n ~= 16 * t.warps and not (t.warps == 8 and t.block_n == 64) then
          U.fail(path .. ".block_n", t.block_n, "a backward wgmma tile's warpgroups take 64 keys each, "
            .. "or two share 64",
            tostring(16 * t.warps) .. (t.warps == 8 and " or 64" or "") .. " with warps = " .. t.warps)
        end
        if t.block_m ~= 64 then
          U.fail(path .. ".block_m", t.block_m, "a backward wgmma tile steps 64 queries at a time", "64")
        end
      end
      local keys = t.block_n // t.warps
      if (keys ~= 8 and keys ~= 16 and keys ~= 32) or t.block_n % t.warps ~= 0 then
        U.fail(path .. ".block_n", t.block_n,
          string.format("%d warps cannot split %d keys into 8, 16 or 32 per warp (backward)", t.warps,
            t.block_n),
          string.format("%d, %d or %d with warps = %d", 8 * t.warps, 16 * t.warps, 32 * t.warps, t.warps))
      end
      -- 16 keys per warp: two warps share 32 keys and split each step's queries.
      if keys == 16 and (t.warps % 2 ~= 0 or t.block_m % 32 ~= 0) then
        U.fail(path .. (t.warps % 2 ~= 0 and ".warps" or ".block_m"),
          t.warps % 2 ~= 0 and t.warps or t.block_m,
          "with 16 keys per warp, warp pairs share 32 keys and split the block_m queries (backward)",
          t.warps % 2 ~= 0 and "an even number of warps" or "multiples of 32")
      end
      -- 8 keys per warp: four warps share 32 keys, each S^T of 16 keys x block_m / 2.
      if keys == 8 and not t.wgmma and (t.warps % 4 ~= 0 or t.block_m % 32 ~= 0) then
        U.fail(path .. (t.warps % 4 ~= 0 and ".warps" or ".block_m"),
          t.warps % 4 ~= 0 and t.warps or t.block_m,
          "with 8 keys per warp, four warps share 32 keys and halve the block_m queries (backward)",
          t.warps % 4 ~= 0 and "4 or 8 warps" or "multiples of 32")
      end
      if t.stages < 2 or t.stages > 3 then
        U.fail(path .. ".stages", t.stages, "the backward double-buffers Q and dO", "2 or 3")
      end
      -- The dQ step deals the block_m/16 row groups of 16 queries to the warps
      -- (several groups per warp, or several warps splitting a group's head dim).
      local groups = t.block_m // 16
      if t.warps % groups ~= 0 and groups % t.warps ~= 0 then
        U.fail(path .. ".block_m", t.block_m,
          string.format("%d warps cannot share %d row groups of 16 queries in the backward's dQ step",
            t.warps, groups),
          string.format("16 x a divisor or multiple of warps = %d", t.warps))
      end
    end,
  },
}
M.PASS_NAMES = { "fwd", "bwd" }

local function member(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end

local function joined(list) return table.concat(list, ", ") end

-- An integer-valued number, as an integer; else an error at path.
local function int(x, path, allowed)
  local i = type(x) == "number" and math.tointeger(x)
  if not i then U.fail(path, x, "expected an integer", allowed) end
  return i
end

function M.check_dtype(x, path)
  if not member(M.DTYPES, x) then U.fail(path, x, "not a supported dtype", joined(M.DTYPES)) end
  return x
end

function M.check_head_dim(x, path)
  local allowed = "multiples of 8 from 8 to " .. M.MAX_HEAD_DIM .. " (tiles for " .. joined(M.HEAD_DIMS) .. ")"
  local d = int(x, path, allowed)
  if d < 8 or d > M.MAX_HEAD_DIM or d % 8 ~= 0 then U.fail(path, x, "not a supported head dim", allowed) end
  return d
end

-- The head dim the tiles of a variant of head dim d are built for: the next of
-- HEAD_DIMS (d itself for those); wgmma (and ws) tiles where that one has none of
-- them: WGMMA_WIDER's.
function M.tile_dim(d, wgmma)
  for _, t in ipairs(M.HEAD_DIMS) do
    if t >= d then return wgmma and M.WGMMA_WIDER[t] or t end
  end
  return nil
end

function M.check_causal(x, path)
  if type(x) ~= "boolean" then U.fail(path, x, "expected a boolean", "true, false") end
  return x
end

M.check_varlen = M.check_causal -- a boolean too
M.check_window = M.check_causal
M.check_alibi = M.check_causal
M.check_softcap = M.check_causal
M.check_dropout = M.check_causal
M.check_sinks = M.check_causal

function M.check_arch(x, path)
  if not M.ARCH_SMEM[x] then U.fail(path, x, "not a supported arch", joined(M.ARCHES)) end
  return x
end

-- A pass is available when its template exists and its rules are written.
function M.check_pass(x, path)
  local p = M.PASSES[x]
  if type(x) ~= "string" or not p then U.fail(path, x, "not a pass", joined(M.PASS_NAMES)) end
  if not mods.template_exists(p.template) then
    U.fail(path, x, string.format("the %s template is not available yet (templates/%s)",
      x == "bwd" and "backward" or x, p.template), "fwd")
  end
  if not p.entries or not p.smem then
    U.fail(path, x, "gen/variant.lua has no entries or shared-memory formula for this pass yet",
      "fwd")
  end
  return x
end

local TILE_KEYS = { block_m = true, block_n = true, warps = true, stages = true, wgmma = true, ws = true }

-- A tile table {block_m=, block_n=, warps=, stages=}: every field present,
-- integers within the forward kernel's rules. Returns a clean copy.
function M.check_tile(t, path)
  if type(t) ~= "table" then
    U.fail(path, t, "expected a tile table or \"auto\"",
      "\"auto\" or {block_m=, block_n=, warps=, stages=}")
  end
  U.check_keys(t, path, TILE_KEYS, "unknown tile key", "block_m, block_n, warps, stages, wgmma, ws")
  for _, k in ipairs({ "block_m", "block_n", "warps", "stages" }) do
    if t[k] == nil then
      U.fail(path, t, "missing " .. k, "a table with block_m, block_n, warps and stages")
    end
  end
  for _, k in ipairs({ "wgmma", "ws" }) do
    if t[k] ~= nil and type(t[k]) ~= "boolean" then
      U.fail(path .. "." .. k, t[k], "expected a boolean", "true, false")
    end
  end
  local warps = t.ws and M.WS_WARPS or M.WARPS
  local w = int(t.warps, path .. ".warps", joined(warps))
  if not member(warps, w) then
    U.fail(path .. ".warps", t.warps, t.ws and "a ws tile takes 2 or 3 consumer warpgroups and a producer one"
      or "not a warp count", joined(warps))
  end
  local bm = int(t.block_m, path .. ".block_m", "multiples of 16")
  if bm <= 0 or bm % 16 ~= 0 then
    U.fail(path .. ".block_m", t.block_m, "not a row-tile size", "positive multiples of 16")
  end
  local bn = int(t.block_n, path .. ".block_n", "multiples of 16 from 16 to 256")
  if bn < 16 or bn > 256 or bn % 16 ~= 0 then
    U.fail(path .. ".block_n", t.block_n, "not a key-tile size", "multiples of 16 from 16 to 256")
  end
  local s = int(t.stages, path .. ".stages", "1 to " .. M.MAX_STAGES)
  if s < 1 or s > M.MAX_STAGES then
    U.fail(path .. ".stages", t.stages, "not a pipeline depth", "1 to " .. M.MAX_STAGES)
  end
  -- A ws tile runs on warpgroup MMA: it is a wgmma tile too.
  return { block_m = bm, block_n = bn, warps = w, stages = s, wgmma = t.wgmma == true or t.ws == true,
    ws = t.ws == true }
end

local STAB_KEYS = { mode = true, beta = true, eps = true }

-- A stab table {mode=, beta=, eps=}: beta and eps default for paper and
-- robust, and are not allowed with none. Returns {stab=, beta=, eps=}.
function M.check_stab(t, path)
  if type(t) ~= "table" then
    U.fail(path, t, "expected a table", "{mode=\"none\"}, {mode=\"paper\", beta=, eps=}, "
      .. "{mode=\"robust\", beta=, eps=}, {mode=\"balanced\"}")
  end
  U.check_keys(t, path, STAB_KEYS, "unknown stab key", "mode, beta, eps")
  local mode = t.mode
  if not member(M.MODES, mode) then U.fail(path .. ".mode", mode, "not a mode", joined(M.MODES)) end
  if member(M.PLAIN_MODES, mode) then
    for _, k in ipairs({ "beta", "eps" }) do
      if t[k] ~= nil then U.fail(path .. "." .. k, t[k], "not used with mode \"" .. mode .. "\"", "leave it out") end
    end
    return { stab = mode, beta = 0, eps = 0 }
  end
  local beta, eps = t.beta, t.eps
  if beta == nil then beta = D.BETA end
  if eps == nil then eps = D.EPS end
  -- The kernels take beta and eps as float32 constants: they must stay > 1
  -- and > 0 (and finite) after that rounding, not only as doubles.
  local FLT_MAX = 3.4028234663852886e38
  if type(beta) ~= "number" or not (beta > 1 + 2 ^ -24) or beta > FLT_MAX then
    U.fail(path .. ".beta", beta, "beta must be a finite number > 1", "beta > 1 (the paper uses 2 to 8)")
  end
  if type(eps) ~= "number" or not (eps > 2 ^ -150) or eps > FLT_MAX then
    U.fail(path .. ".eps", eps, "eps must be a finite number > 0", "eps > 0 (the paper uses 1e-3)")
  end
  return { stab = mode, beta = beta + 0.0, eps = eps + 0.0 }
end

-- Dynamic shared memory of a variant with tiles filled in.
function M.smem(v) return M.PASSES[v.pass].smem(v) end

-- The template a variant renders: its pass's, or fwd_ws.cu.tpl for ws forward tiles
-- (bwd.cu.tpl includes bwd_ws.cuh.tpl for ws backward ones).
function M.template(v) return v.ws and v.pass == "fwd" and "fwd_ws.cu.tpl" or M.PASSES[v.pass].template end

function M.runs_wgmma(arch) return arch == M.WGMMA_ARCH end

-- The backward's layout of a tile: "pair" (wgmma, two warpgroups share 64 keys),
-- "quad" (mma.sync, four warps share 32 keys), or nil (the others).
function M.bwd_layout(v)
  if v.pass ~= "bwd" or v.block_n ~= 8 * v.warps then return nil end
  return v.wgmma and "pair" or "quad"
end

-- nil when v can run on arch (its instructions, its shared memory), else
-- the problem in words.
function M.arch_problem(v, arch)
  if v.wgmma and not M.runs_wgmma(arch) then
    return string.format("wgmma tiles run on %s only (Hopper's warpgroup MMA, compiled for %s), not %s",
      M.WGMMA_ARCH, M.WGMMA_TARGET, arch)
  end
  local need, limit = M.smem(v), M.ARCH_SMEM[arch]
  if need > limit then
    return string.format("with head_dim %d these tiles need %d bytes of shared memory; %s allows %d",
      v.head_dim, need, arch, limit)
  end
end

function M.name(v)
  local parts = { v.pass, v.dtype, "d" .. v.head_dim }
  if v.causal then parts[#parts + 1] = "causal" end
  if v.varlen then parts[#parts + 1] = "varlen" end
  if v.window then parts[#parts + 1] = "window" end
  if v.alibi then parts[#parts + 1] = "alibi" end
  if v.softcap then parts[#parts + 1] = "softcap" end
  if v.dropout then parts[#parts + 1] = "dropout" end
  if v.sinks then parts[#parts + 1] = "sinks" end
  parts[#parts + 1] = string.format("m%dn%dw%ds%d%s", v.block_m, v.block_n, v.warps, v.stages,
    v.ws and "ws" or v.wgmma and "wg" or "")
  parts[#parts + 1] = v.stab
  if not member(M.PLAIN_MODES, v.stab) then
    parts[#parts + 1] = "b" .. U.name_number(v.beta)
    parts[#parts + 1] = "e" .. U.name_number(v.eps)
  end
  return table.concat(parts, "_")
end

-- The "auto" tile of a pass and head dim on arch (nil: any arch), and where
-- gen/defaults.lua keeps it: a forward on sm_90 takes TILES_SM90_WS where it has one;
-- modified: the variant has a score modifier, dropout, sinks or varlen (a forward off
-- sm_90 then takes TILES_MODIFIED where TILES would be its tile and it has one);
-- balanced: a forward of mode balanced (TILES_BALANCED, likewise); ws_ok: a modified backward
-- the ws tile takes, or a forward the ws tile takes.
function M.auto_tile(pass, head_dim, arch, modified, balanced, ws_ok)
  local name = pass == "bwd" and "BWD_TILES" or "TILES"
  if arch == M.WGMMA_ARCH and D[name .. "_SM90"][head_dim] then name = name .. "_SM90" end
  if name == "BWD_TILES_SM90" and (not modified or ws_ok) and D.BWD_TILES_SM90_WS[head_dim] then
    name = "BWD_TILES_SM90_WS"
  end
  if name == "TILES_SM90" and ws_ok and D.TILES_SM90_WS[head_dim] then name = "TILES_SM90_WS" end
  if name == "TILES" and modified and arch ~= M.WGMMA_ARCH and D.TILES_MODIFIED[head_dim] then
    name = "TILES_MODIFIED"
  elseif name == "TILES" and balanced and D.TILES_BALANCED[head_dim] then
    name = "TILES_BALANCED"
  end
  return D[name][head_dim], "gen/defaults.lua " .. name .. "[" .. head_dim .. "]"
end

-- Every feature a plain variant has not.
M.FEATURES = { "varlen", "window", "alibi", "softcap", "dropout", "sinks" }

-- The head dims (multiples of 8) whose wgmma tile_dim is one of tiles: "40-64, 104-128".
local function padded_to(tiles)
  local out = {}
  for _, t in ipairs(tiles) do
    local lo = t
    while lo > 8 and M.tile_dim(lo - 8, true) == t do lo = lo - 8 end
    out[#out + 1] = lo == t and tostring(t) or lo .. "-" .. t
  end
  return joined(out) .. " (multiples of 8)"
end

-- The first feature of c that the ws backward past d = 128 (bwd_ws_wide.cuh.tpl) does not take
-- yet, or nil: plain, causal, varlen and sinks only.
local function wide_ws_bwd_refuses(c)
  return c.window and "window" or c.alibi and "alibi"
    or c.softcap and "softcap" or c.dropout and "dropout" or nil
end

-- auto_tile for variant c (its pass, head dim and features) on arch.
function M.auto_pick(c, arch)
  local td = M.tile_dim(c.head_dim, arch == M.WGMMA_ARCH)
  -- ws_ok, the backward's: the ws tile takes every feature, but a window at d <= 64 keeps wgmma's tile (a
  -- narrow window's key block has a handful of steps to fill and drain the ws pipeline: 1.10-1.16x slower at 128
  -- and 256 keys, bench/NOTES.md "Session 28"; the runtime takes ws from 512, rt_select.c's window rule; a
  -- window with dropout at d 104-128 takes ws: 0.93x the wgmma tile's forward + backward time, "Session 31");
  -- past d = 128 (bwd_ws_wide.cuh.tpl) only plain, causal, varlen and sinks. The forward's: every variant but a
  -- window at d = 256 (robust's spilled 4-12 bytes there; one tile for every mode).
  local modified = false
  for _, k in ipairs(M.FEATURES) do modified = modified or c[k] end
  local ws_ok
  if c.pass == "fwd" then
    ws_ok = not (c.window and td == 256)
  else
    ws_ok = not (c.window and td and td <= 64)
      and not (td and td > 128 and wide_ws_bwd_refuses(c))
  end
  return M.auto_tile(c.pass, td, arch, modified, c.out_round == "balanced", ws_ok)
end

-- The supported arches whose "auto" tile for completed c is c's own tile.
function M.picking_arches(c)
  local out = {}
  for _, arch in ipairs(M.ARCHES) do
    local t = M.auto_pick(c, arch)
    if t and t.block_m == c.block_m and t.block_n == c.block_n and t.warps == c.warps
        and t.stages == c.stages and (t.wgmma or false) == (c.wgmma or false)
        and (t.ws or false) == (c.ws or false) then
      out[#out + 1] = arch
    end
  end
  return out
end

-- Validates the base fields of v (as gen_variant carries them: tiles with
-- block_m == 0 are "auto"), checks shared memory against arch when given,
-- and returns a new table with the derived fields: name, threads,
-- smem_bytes, entries, and for a variant that runs on one arch only
-- only_arch and only_target (its NVRTC target there). "auto" tiles are those
-- of tiles_arch (default: arch).
function M.complete(v, arch, tiles_arch)
  local c = {}
  c.pass = M.check_pass(v.pass, "pass")
  c.dtype = M.check_dtype(v.dtype, "dtype")
  c.head_dim = M.check_head_dim(v.head_dim, "head_dim")
  c.causal = M.check_causal(v.causal, "causal")
  c.varlen = M.check_varlen(v.varlen or false, "varlen")
  c.window = M.check_window(v.window or false, "window")
  c.alibi = M.check_alibi(v.alibi or false, "alibi")
  c.softcap = M.check_softcap(v.softcap or false, "softcap")
  c.dropout = M.check_dropout(v.dropout or false, "dropout")
  c.sinks = M.check_sinks(v.sinks or false, "sinks")
  c.out_round = v.stab == "balanced" and c.pass == "fwd" and "balanced" or "nearest"
  if c.window and c.causal then
    U.fail("causal", c.causal, "a window variant takes causal as its right edge (window_right = 0 "
      .. "at run time)", "causal = false with window = true")
  end
  local tile
  local pass = M.PASSES[c.pass]
  if v.block_m == 0 or v.block_m == nil then
    local auto, where = M.auto_pick(c, tiles_arch or arch)
    tile = M.check_tile(auto, where)
    if pass.check then pass.check(tile, where) end
  else
    tile = M.check_tile({ block_m = v.block_m, block_n = v.block_n, warps = v.warps,
      stages = v.stages, wgmma = v.wgmma, ws = v.ws }, "tiles")
    if pass.check then pass.check(tile, "tiles") end
  end
  c.block_m, c.block_n, c.warps, c.stages = tile.block_m, tile.block_n, tile.warps, tile.stages
  c.wgmma, c.ws = tile.wgmma, tile.ws
  c.tile_dim = M.tile_dim(c.head_dim, c.wgmma or c.ws)
  if c.wgmma then c.only_arch, c.only_target = M.WGMMA_ARCH, M.WGMMA_TARGET end
  if c.ws then
    if not member(M.WS_HEAD_DIMS, c.tile_dim) then
      U.fail("head_dim", c.head_dim, "ws tiles need a head dim made of 64-column blocks (or one padded to them)",
        padded_to(M.WS_HEAD_DIMS))
    end
    if c.pass == "fwd" and c.tile_dim == 256 and c.window and v.stab == "robust" then -- (its window bounds: 4-12 bytes)
      U.fail("window", c.window, "forward ws tiles at head dims 232-256 spill with a window in mode robust",
        "a wgmma tile (ws = false), or another mode")
    end
  elseif c.wgmma and not member(M.WGMMA_HEAD_DIMS, c.tile_dim) then
    U.fail("head_dim", c.head_dim, "wgmma tiles need a head dim made of 64-column blocks (or one padded to them)",
      padded_to(M.WGMMA_HEAD_DIMS))
  end
  -- The backward's dQ step gives each warpgroup a slice of whole 64-column blocks
  -- (a pair: the first 128 columns, or half of them at d = 128, and the rest); d = 64
  -- on two warpgroups splits the block's keys instead (bwd_wgmma.cuh.tpl's dq_split).
  -- The ws backward: 64 or 128 columns (its registers and dQ staging), or a head dim padded
  -- to them, and every feature.
  -- Past 128 (bwd_ws_wide.cuh.tpl): 192 or 256 columns, the two warpgroups sharing 64 keys,
  -- plain, causal or varlen (and sinks: the same main kernel) for now (wide_ws_bwd_refuses).
  if c.ws and c.pass == "bwd" then
    local wide = c.tile_dim > 128
    local mod = wide and wide_ws_bwd_refuses(c)
    if wide and (c.block_n ~= 64 or mod) then
      local key = c.block_n ~= 64 and "tiles.block_n" or mod
      U.fail(key, c.block_n ~= 64 and c.block_n or c[mod], "backward ws tiles past head dim 128 share "
        .. "64 keys between the two MMA warpgroups and take no score modifier or dropout yet",
        "block_n = 64, causal or not, varlen, sinks; a wgmma tile (ws = false) for modifiers")
    elseif not wide and c.block_n ~= 128 then
      U.fail("tiles.block_n", c.block_n, "backward ws tiles at head dims up to 128 take 64 keys a warpgroup",
        "128")
    end
    if c.softcap and c.window and c.head_dim <= 64 then -- (K's and V's register fragments beside both: 16-40 bytes)
      U.fail("softcap", c.softcap, "backward ws tiles at head dims up to 64 spill with softcap and a window",
        "a wgmma tile (ws = false), or head dims 104-128")
    end
  end
  local pair = M.bwd_layout(c) == "pair"
  local dq_split = not pair and c.tile_dim == 64 and c.warps == 8
  if c.wgmma and not c.ws and c.pass == "bwd" and (pair and c.tile_dim < 128
      or not pair and not dq_split and (c.tile_dim // (c.warps // 4)) % 64 ~= 0) then
    U.fail("tiles.warps", c.warps, string.format("head_dim %d has %d 64-column block(s) for the "
      .. "backward's dQ step, one per warpgroup at least", c.tile_dim, c.tile_dim // 64),
      "4" .. ((c.tile_dim >= 128 or c.tile_dim == 64) and ", 8" or ""))
  end
  -- The quad backward (four warps share 32 keys) keeps dV and dK in column halves and
  -- computes dQ in slices of 16-column pairs (bwd.cu.tpl's static_assert).
  if M.bwd_layout(c) == "quad" and c.tile_dim % 32 ~= 0 then
    U.fail("tiles.block_n", c.block_n, string.format("block_n = 8 x warps is the backward's quad layout "
      .. "(four warps share 32 keys, dV and dK in column halves), which needs a head dim that is a "
      .. "multiple of 32, not %d", c.tile_dim), "another block_n")
  end
  -- The mma.sync backward's dQ step: warps sharing a row group of 16 queries
  -- take equal slices of the head dim, in pairs of n8 tiles.
  if c.pass == "bwd" and not c.wgmma then
    local groups = c.block_m // 16
    local split = c.warps > groups and c.warps // groups or 1
    if (c.tile_dim // 8) % (2 * split) ~= 0 then
      U.fail("tiles.warps", c.warps, string.format("head_dim %d: %d warps share each 16-query row group "
        .. "of the backward's dQ step and cannot split its %d columns into whole pairs of 8",
        c.tile_dim, split, c.tile_dim), "fewer warps, or a larger block_m")
    end
  end
  local s
  -- The backward does not depend on the forward's stabilization (LSE carries
  -- it): every mode maps to the one backward variant, named "none".
  if member(M.PLAIN_MODES, v.stab) or c.pass == "bwd" then
    s = M.check_stab({ mode = c.pass == "bwd" and "none" or v.stab }, "stab")
  else
    s = M.check_stab({ mode = v.stab, beta = v.beta, eps = v.eps }, "stab")
  end
  c.stab, c.beta, c.eps = s.stab, s.beta, s.eps
  -- What the templates switch on: the softmax's construction, and how O is rounded.
  c.softmax = c.stab == "balanced" and "none" or c.stab
  -- Balanced rounding holds a row's errors and gaps in registers beside O: past d = 128
  -- it spilled 0.9-1.8 KB (d = 256, every tile family).
  if c.out_round == "balanced" and c.head_dim > 128 then
    U.fail("head_dim", c.head_dim, "mode \"balanced\" rounds a row of O in registers and spills past 128",
      "head dims up to 128 with balanced")
  end
  c.threads = 32 * c.warps
  -- A persistent ws forward (fwd_ws.cu.tpl): a block takes work items in turn from a
  -- counter and stages O apart from Q, where that fits. Where the loop's state has the
  -- registers: two consumer warpgroups (with three, 160 registers each, it spilled 64-128
  -- bytes), and not a window with softcap (32-56 bytes in paper and robust at d = 128) or
  -- with varlen (robust at d = 128: 20 bytes since the item hand-over's two slots).
  c.persistent = c.ws and c.pass == "fwd" and c.block_m == 128 and not (c.window and (c.softcap or c.varlen)) or false
  if c.persistent and M.smem(c) > M.ARCH_SMEM[M.WGMMA_ARCH] then c.persistent = false end
  -- A persistent ws backward (bwd_ws.cuh.tpl): one block an SM walking pairs of key blocks, each
  -- block's K and V loaded while the last one's dK and dV are stored. At d <= 64: 0.92-0.94x the
  -- time at N <= 1k, 0.97-1.01x from 2k; at d = 128 0.98-1.04x, so not there (H200, bench/NOTES.md
  -- "Session 28"). Windows keep a block a key block (their few steps a block).
  if c.ws and c.pass == "bwd" and c.head_dim <= 64 and not c.window then
    c.persistent = true
  end
  c.smem_bytes = M.smem(c)
  c.entries = {}
  for i, e in ipairs(c.ws and c.pass == "fwd" and M.WS_ENTRIES or M.PASSES[c.pass].entries) do c.entries[i] = e end
  -- A dropout forward also carries the mask kernel (fa2_dropout_mask: the keep bits
  -- of a call, one element per thread, from the same fa2_philox.h), for tests.
  if c.dropout and c.pass == "fwd" then c.entries[#c.entries + 1] = "fa2_dropout_mask" end
  -- The sinks' gradient: one more backward kernel, launched after fa2_bwd_pre.
  if c.sinks and c.pass == "bwd" then c.entries[#c.entries + 1] = "fa2_bwd_sink" end
  c.name = M.name(c)
  if arch ~= nil then
    M.check_arch(arch, "arch")
    local problem = M.arch_problem(c, arch)
    if problem then
      U.fail("tiles", tile, problem, c.wgmma and not M.runs_wgmma(arch) and "wgmma = false on " .. arch
        or string.format("at most %d bytes on %s", M.ARCH_SMEM[arch], arch))
    end
  end
  return c
end

local NAME_FORM = "{pass}_{dtype}_d{head_dim}[_causal][_varlen][_window][_alibi][_softcap][_dropout][_sinks]_m{block_m}n{block_n}w{warps}s{stages}[wg|ws]_{mode}[_b{beta}_e{eps}]"

-- The base fields of a canonical name (not validated: complete does that).
function M.parse(name)
  local function bad(why) U.fail("name", name, why, NAME_FORM) end
  if type(name) ~= "string" then bad("expected a string") end
  local tok = {}
  for t in (name .. "_"):gmatch("([^_]*)_") do tok[#tok + 1] = t end
  local v = { pass = tok[1], dtype = tok[2] }
  local d = tok[3] and tok[3]:match("^d(%d+)$")
  if not d then bad("the third part must be d<head_dim>") end
  v.head_dim = math.tointeger(tonumber(d))
  local i = 4
  v.causal = tok[i] == "causal"
  if v.causal then i = i + 1 end
  v.varlen = tok[i] == "varlen"
  if v.varlen then i = i + 1 end
  v.window = tok[i] == "window"
  if v.window then i = i + 1 end
  v.alibi = tok[i] == "alibi"
  if v.alibi then i = i + 1 end
  v.softcap = tok[i] == "softcap"
  if v.softcap then i = i + 1 end
  v.dropout = tok[i] == "dropout"
  if v.dropout then i = i + 1 end
  v.sinks = tok[i] == "sinks"
  if v.sinks then i = i + 1 end
  local m, n, w, s, wg = (tok[i] or ""):match("^m(%d+)n(%d+)w(%d+)s(%d+)(w?[gs]?)$")
  if not m or (wg ~= "" and wg ~= "wg" and wg ~= "ws") then
    bad("expected the tiles as m<block_m>n<block_n>w<warps>s<stages>[wg|ws]")
  end
  v.wgmma, v.ws = wg ~= "", wg == "ws"
  v.block_m, v.block_n = math.tointeger(tonumber(m)), math.tointeger(tonumber(n))
  v.warps, v.stages = math.tointeger(tonumber(w)), math.tointeger(tonumber(s))
  if not (v.block_m and v.block_n and v.warps and v.stages) or v.block_m == 0 then
    bad("tile numbers out of range")
  end
  v.stab = tok[i + 1]
  local last = i + 1
  if v.stab ~= nil and not member(M.PLAIN_MODES, v.stab) then
    local b = tok[i + 2] and tok[i + 2]:match("^b(.+)$")
    local e = tok[i + 3] and tok[i + 3]:match("^e(.+)$")
    v.beta = b and U.parse_name_number(b)
    v.eps = e and U.parse_name_number(e)
    if not v.beta or not v.eps then bad("expected _b<beta>_e<eps> after the mode") end
    last = i + 3
  end
  if #tok ~= last or v.stab == nil then bad("wrong number of parts") end
  return v
end

-- A completed variant from its canonical name; other spellings are errors.
function M.from_name(name)
  local c = M.complete(M.parse(name))
  if c.name ~= name then
    U.fail("name", name, "not the canonical spelling of this variant", c.name)
  end
  return c
end

return M
