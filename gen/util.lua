-- gen/util.lua: helpers shared by the spec loader, the variant rules and the
-- template engine: structured errors, value printing, number spelling, sandboxes.
local M = {}

-- A user-facing error with a key path: the C side turns it into a gen_err
-- with code `code` (2 = bad spec / variant) and the message below.
--   path = value: problem; allowed: ...
function M.fail(path, value, problem, allowed)
  local msg
  if path then
    msg = string.format("%s = %s: %s", path, M.show(value), problem)
  else
    msg = problem
  end
  if allowed then msg = msg .. "; allowed: " .. allowed end
  error({ code = 2, msg = msg }, 0)
end

-- An error object the C side reads as-is (code, msg).
function M.raise(code, msg) error({ code = code, msg = msg }, 0) end

-- Shortest decimal that reads back to the same double: digits and the
-- exponent k of x = d.ddd * 10^k (x > 0, finite).
function M.shortest(x)
  for p = 0, 16 do
    local s = string.format("%." .. p .. "e", x)
    if tonumber(s) == x then
      local mant, e = s:match("^([%d%.]+)e([-+]%d+)$")
      local digits = mant:gsub("%.", ""):gsub("0+$", "")
      if digits == "" then digits = "0" end
      return digits, math.tointeger(tonumber(e))
    end
  end
  error("shortest: cannot print " .. tostring(x))
end

-- Numbers as people write them (2, 1.5, 0.001), round-trip exact.
function M.numstr(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

local function is_ident(s) return type(s) == "string" and s:match("^[%a_][%w_]*$") end

-- A message on one line: control characters written as escapes (a newline
-- as the two characters \n, a tab as \t, others as \ddd); nothing else changes.
local CONTROL_NAMES = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
function M.oneline(msg)
  return (msg:gsub("%c", function(c) return CONTROL_NAMES[c] or string.format("\\%03d", c:byte()) end))
end

-- A Lua string literal on one line (%q writes a newline as backslash-newline).
function M.quote(s) return (string.format("%q", s):gsub("\\\n", "\\n")) end

-- A value in an error message: strings quoted, tables shown one level deep
-- with sorted keys ({block_m=128, block_n=64}), functions named as such.
function M.show(v, depth)
  local t = type(v)
  if t == "string" then
    if #v > 80 then return M.quote(v:sub(1, 60)):sub(1, -2) .. '..." (' .. #v .. " bytes)" end
    return M.quote(v)
  end
  if t == "number" then return M.numstr(v) end
  if t == "boolean" or t == "nil" then return tostring(v) end
  if t == "table" then
    if (depth or 0) > 0 then return "{...}" end
    local keys, parts = M.sorted_keys(v), {}
    if #keys > 8 then return "a table of " .. #keys .. " entries" end
    local n = #v
    for _, k in ipairs(keys) do
      local val = M.show(v[k], (depth or 0) + 1)
      if math.type(k) == "integer" and k >= 1 and k <= n then
        parts[#parts + 1] = val
      elseif is_ident(k) then
        parts[#parts + 1] = k .. "=" .. val
      else
        parts[#parts + 1] = "[" .. M.show(k, 1) .. "]=" .. val
      end
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return "a " .. t
end

-- The path of t[k] under prefix: head_dim[2], stab[1].beta, tiles["x y"].
function M.keypath(prefix, k)
  local sep = prefix and "." or ""
  prefix = prefix or ""
  if is_ident(k) then return prefix .. sep .. k end
  return prefix .. "[" .. M.show(k, 1) .. "]"
end

-- The keys of t in a stable order (pairs' order is not).
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return false
  end)
  return keys
end

-- Every key of t must be in the set `known`, else an error at its path.
function M.check_keys(t, path, known, problem, allowed)
  for _, k in ipairs(M.sorted_keys(t)) do
    if not known[k] then M.fail(M.keypath(path, k), t[k], problem, allowed) end
  end
end

-- Numbers in variant names: '.' -> 'p', exponent 'em'/'ep'. Plain decimals
-- for 1 <= x < 1e6, else one digit, a mantissa and an exponent:
-- 2 -> 2, 1.5 -> 1p5, 1e-3 -> 1em3, 2.5e-4 -> 2p5em4, 1e6 -> 1ep6.
function M.name_number(x)
  local d, k = M.shortest(x)
  if k >= 0 and k <= 5 then
    if #d <= k + 1 then return d .. string.rep("0", k + 1 - #d) end
    return d:sub(1, k + 1) .. "p" .. d:sub(k + 2)
  end
  local m = d:sub(1, 1)
  if #d > 1 then m = m .. "p" .. d:sub(2) end
  return m .. (k < 0 and "em" or "ep") .. math.abs(k)
end

-- Inverse of name_number; nil when s is not such a number.
function M.parse_name_number(s)
  if not s:match("^%d[%dpem]*$") then return nil end
  local t = s:gsub("em", "e-"):gsub("ep", "e+"):gsub("p", ".")
  local x = tonumber(t)
  if not x or x ~= x or x == math.huge then return nil end
  return x
end

-- A C float literal that reads back to the float32 nearest to x:
-- f32(2) = "2.0f", f32(1e-3) = "0.00100000005f".
function M.f32(x)
  if type(x) ~= "number" then
    error("f32: expected a number, got " .. M.show(x), 2)
  end
  local f = string.unpack("f", string.pack("f", x))
  if f ~= f or f == math.huge or f == -math.huge then
    error("f32(" .. M.numstr(x) .. "): not a finite float32", 2)
  end
  local s = string.format("%.9g", f)
  if not s:find("[.e]") then s = s .. ".0" end
  return s .. "f"
end

-- Globals a sandbox offers (templates and spec files). Library tables are
-- copied for each sandbox so that nothing run inside can change ours.
local SAFE = {
  "ipairs", "pairs", "tostring", "tonumber", "type", "select", "error", "assert",
}
local SAFE_LIBS = { math = math, string = string, table = table }

local function copy(t, skip)
  local c = {}
  for k, v in pairs(t) do
    if not (skip and skip[k]) then c[k] = v end
  end
  return c
end

-- A fresh environment: the safe globals, then vars. Reading any other
-- global is an error naming it: "'os' is not available in <where>".
function M.sandbox(where, vars)
  local env = {}
  for _, k in ipairs(SAFE) do env[k] = _G[k] end
  for k, lib in pairs(SAFE_LIBS) do env[k] = copy(lib, k == "string" and { dump = true }) end
  for k, v in pairs(vars or {}) do env[k] = v end
  return setmetatable(env, {
    __index = function(_, k)
      error(string.format("'%s' is not available in %s", tostring(k), where), 2)
    end,
    __metatable = false,
  })
end

return M
