-- gen/spec.lua: spec files. A spec is Lua code (run sandboxed) returning a
-- table of axes; the variants are their cartesian product minus `exclude`.
-- Every problem is an error naming the file, the key path, the bad value
-- and what is allowed (code 2: `fa2` exits with status 2, writes nothing).
local mods = ...
local U, V, D = mods.util, mods.variant, mods.defaults
local M = {}

M.KEYS = { "allow_spills", "arch", "causal", "dtype", "exclude", "head_dim", "pass", "stab", "tiles",
  "varlen", "window", "alibi", "softcap", "dropout", "sinks" }
local KNOWN = {}
for _, k in ipairs(M.KEYS) do KNOWN[k] = true end

local EXAMPLES = {
  dtype = '{ "bf16" }', head_dim = "{ 64, 128 }", causal = "{ false, true }", varlen = "{ false, true }",
  window = "{ false, true }", alibi = "{ false, true }", softcap = "{ false, true }",
  dropout = "{ false, true }", sinks = "{ false, true }",
  arch = '{ "sm_80", "sm_90" }', pass = '{ "fwd" }',
  stab = '{ { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } }',
  tiles = '"auto" or { { block_m = 128, block_n = 64, warps = 4, stages = 2 } }',
}
local MAX_VARIANTS = 100000

-- A spec error (code 2): one line, whatever the spec's strings or its own
-- error() hold (control characters escaped by U.oneline).
local function spec_error(msg) U.raise(2, U.oneline(msg)) end

-- spec[key] as a proper list: keys 1..n, no holes, n >= 1.
local function list(spec, key)
  local t = spec[key]
  local form = key .. " = " .. EXAMPLES[key]
  if type(t) ~= "table" then U.fail(key, t, "expected a list", form) end
  local max, count = 0, 0
  for _, k in ipairs(U.sorted_keys(t)) do
    if not (math.type(k) == "integer" and k >= 1) then
      if key == "tiles" and k == "block_m" or key == "stab" and k == "mode" then
        U.fail(key, t, "expected a list of tables (wrap it in { })", form)
      end
      U.fail(U.keypath(key, k), t[k], "not a list entry", form)
    end
    count, max = count + 1, math.max(max, k)
  end
  if count == 0 then U.fail(key, t, "expected a non-empty list", form) end
  for i = 1, max do
    if t[i] == nil then U.fail(key .. "[" .. i .. "]", nil, "a hole in the list", form) end
  end
  return t
end

local function each(spec, key, check)
  local out = {}
  for i, x in ipairs(list(spec, key)) do out[i] = check(x, key .. "[" .. i .. "]") end
  return out
end

-- Tiles: "auto", or a list whose entries are "auto" or tile tables. Each
-- entry keeps its path and value for shared-memory errors later.
local function tiles(spec)
  local t = spec.tiles
  if t == "auto" then return { { auto = true, path = "tiles", value = t } } end
  if type(t) ~= "table" then U.fail("tiles", t, "expected \"auto\" or a list of tiles", EXAMPLES.tiles) end
  local out = {}
  for i, x in ipairs(list(spec, "tiles")) do
    local path = "tiles[" .. i .. "]"
    if x == "auto" then
      out[i] = { auto = true, path = path, value = x }
    else
      out[i] = V.check_tile(x, path)
      out[i].path, out[i].value = path, x
    end
  end
  return out
end

local function validate(spec)
  if type(spec) ~= "table" then
    U.fail(nil, nil, "the spec must return a table, got " .. U.show(spec)
      .. ' (e.g. return { dtype = { "bf16" }, head_dim = { 64 } })')
  end
  U.check_keys(spec, nil, KNOWN, "unknown key", table.concat(M.KEYS, ", "))
  for _, k in ipairs({ "dtype", "head_dim" }) do
    if spec[k] == nil then
      U.fail(nil, nil, k .. ": missing (dtype and head_dim are required), e.g. " .. k .. " = " .. EXAMPLES[k])
    end
  end
  for k, default in pairs(D.AXES) do
    if spec[k] == nil then spec[k] = default() end
  end
  local ax = {}
  ax.pass = each(spec, "pass", V.check_pass)
  ax.dtype = each(spec, "dtype", V.check_dtype)
  ax.head_dim = each(spec, "head_dim", V.check_head_dim)
  ax.causal = each(spec, "causal", V.check_causal)
  ax.varlen = each(spec, "varlen", V.check_varlen)
  ax.window = each(spec, "window", V.check_window)
  ax.alibi = each(spec, "alibi", V.check_alibi)
  ax.softcap = each(spec, "softcap", V.check_softcap)
  ax.dropout = each(spec, "dropout", V.check_dropout)
  ax.sinks = each(spec, "sinks", V.check_sinks)
  ax.tiles = tiles(spec)
  ax.stab = each(spec, "stab", V.check_stab)
  ax.arch = each(spec, "arch", V.check_arch)
  if type(spec.allow_spills) ~= "boolean" then
    U.fail("allow_spills", spec.allow_spills, "expected a boolean", "true, false")
  end
  if spec.exclude ~= nil and type(spec.exclude) ~= "function" then
    U.fail("exclude", spec.exclude, "expected a function(variant) returning true to drop it",
      "exclude = function(v) return v.head_dim == 256 and v.causal end")
  end
  local total = #ax.pass * #ax.dtype * #ax.head_dim * #ax.causal * #ax.varlen * #ax.window * #ax.alibi * #ax.softcap *
    #ax.dropout * #ax.sinks * #ax.tiles * #ax.stab
  if total > MAX_VARIANTS then
    U.fail(nil, nil, string.format("the axes make %d variants; at most %d", total, MAX_VARIANTS))
  end
  return ax
end

-- Runs exclude on a copy of the variant (a spec cannot change ours).
local function excluded(exclude, v, where)
  local copy = {}
  for k, x in pairs(v) do copy[k] = x end
  copy.entries = nil
  local ok, r = pcall(exclude, copy)
  if not ok then
    spec_error(string.format("%s (in exclude, for variant %s)", type(r) == "string" and r or
      where .. ": exclude raised " .. U.show(r), v.name or U.show(copy)))
  end
  if r ~= nil and type(r) ~= "boolean" then
    spec_error(string.format("%s: exclude returned %s for variant %s; allowed: true (drop it), "
      .. "false or nil (keep it)", where, U.show(r), v.name or U.show(copy)))
  end
  return r == true
end

-- The variants of a spec file's text. Returns {variants=, arch=, allow_spills=}.
function M.load(text, path)
  local env = U.sandbox("specs")
  -- Lua's own messages usually start with "path:line:"; make sure they name the file.
  local function located(msg)
    if msg:sub(1, #path + 1) ~= path .. ":" then msg = path .. ": " .. msg end
    spec_error(msg)
  end
  local chunk, err = load(text, "@" .. path, "t", env)
  if not chunk then located(err) end
  local ok, spec = pcall(chunk)
  if not ok then located(type(spec) == "string" and spec or "the spec raised " .. U.show(spec)) end
  local ok2, ax = pcall(validate, spec)
  if not ok2 then
    if type(ax) == "table" and ax.code == 2 then spec_error(path .. ": " .. ax.msg) end
    error(ax, 0)
  end

  local variants, seen = {}, {}
  for _, pass in ipairs(ax.pass) do
    for _, dtype in ipairs(ax.dtype) do
      for _, d in ipairs(ax.head_dim) do
        for _, causal in ipairs(ax.causal) do
          for _, varlen in ipairs(ax.varlen) do
            -- A window's right edge is its causal mask: window variants are never causal.
            for _, window in ipairs(causal and { false } or ax.window) do
              for _, alibi in ipairs(ax.alibi) do
                for _, softcap in ipairs(ax.softcap) do
                  for _, dropout in ipairs(ax.dropout) do -- (the loops below keep sinks' indentation)
                  for _, sinks in ipairs(ax.sinks) do
                    for _, tile in ipairs(ax.tiles) do
                      -- "auto" may pick other tiles on some arches (gen/defaults.lua
                      -- TILES_SM90): one variant per arch's pick, checked on that arch.
                      for _, for_arch in ipairs(tile.auto and ax.arch or { false }) do
                        for _, s in ipairs(ax.stab) do
                          local v = { pass = pass, dtype = dtype, head_dim = d, causal = causal, varlen = varlen,
                            window = window, alibi = alibi, softcap = softcap, dropout = dropout, sinks = sinks,
                            stab = s.stab, beta = s.beta, eps = s.eps, block_m = 0 }
                          if not tile.auto then
                            v.block_m, v.block_n = tile.block_m, tile.block_n
                            v.warps, v.stages = tile.warps, tile.stages
                            v.wgmma, v.ws = tile.wgmma, tile.ws
                          end
                          -- A combination that cannot be a variant (say the backward at a head
                          -- dim it does not support) is an error unless exclude drops it.
                          local okc, c = pcall(V.complete, v, nil, for_arch or nil)
                          if not okc then
                            if not (spec.exclude and excluded(spec.exclude, v, path)) then
                              if type(c) ~= "table" or c.code ~= 2 then error(c, 0) end
                              -- name the spec file, and the tiles entry rather than "tiles"
                              local msg = c.msg
                              if not tile.auto and msg:sub(1, 6) == "tiles." then msg = tile.path .. msg:sub(6) end
                              spec_error(path .. ": " .. msg)
                            end
                            c = nil
                          end
                          if c and not (spec.exclude and excluded(spec.exclude, c, path)) then
                            for _, arch in ipairs(for_arch and { for_arch } or ax.arch) do
                              local problem = V.arch_problem(c, arch)
                              if problem then
                                if tile.auto then
                                  problem = string.format("picks {block_m=%d, block_n=%d, warps=%d, stages=%d%s} "
                                    .. "(gen/defaults.lua); %s", c.block_m, c.block_n, c.warps, c.stages,
                                    c.wgmma and ", wgmma=true" or "", problem)
                                end
                                local allowed = c.wgmma and not V.runs_wgmma(arch)
                                  and string.format("wgmma tiles with arch = { \"%s\" } only, or wgmma = false",
                                    V.WGMMA_ARCH)
                                  or string.format("tiles within %d bytes on %s", V.ARCH_SMEM[arch], arch)
                                spec_error(string.format("%s: %s = %s: %s; allowed: %s "
                                  .. "(or exclude this head_dim, or drop %s from arch)", path, tile.path,
                                  U.show(tile.value), problem, allowed, arch))
                              end
                            end
                            if not seen[c.name] then
                              seen[c.name] = c
                              variants[#variants + 1] = c
                            end
                            -- the arches whose "auto" pick it is, the spec's or not
                            -- (nil: every arch, as an explicit tile)
                            local first = seen[c.name]
                            if for_arch and (first.spec_arch or first == c) then
                              first.spec_arch = first.spec_arch or V.picking_arches(first)
                            else
                              first.spec_arch = nil
                            end
                          end
                        end
                      end
                    end
                  end
                  end
                end
              end
            end
          end
        end
      end
    end
  end
  if #variants == 0 then
    spec_error(path .. ": exclude drops every variant; the spec has none left")
  end
  local arch, aseen = {}, {}
  for _, a in ipairs(ax.arch) do
    if not aseen[a] then arch[#arch + 1], aseen[a] = a, true end
  end
  return { variants = variants, arch = arch, allow_spills = spec.allow_spills }
end

return M
