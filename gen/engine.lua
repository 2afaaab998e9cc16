-- gen/engine.lua: the template engine (syntax in ARCHITECTURE.md).
--
-- A template compiles to one Lua function, one template line per Lua line,
-- so Lua's line numbers are template line numbers and every error reads
-- "templates/fwd.cu.tpl:12: ...". Templates run in a sandbox (gen/util.lua):
-- the variant's variables, f32(), and a few safe libraries.
-- Names starting with "__" are the engine's own; templates must not use them.
local mods = ...
local U, V = mods.util, mods.variant
local M = {}

local MAX_INCLUDE_DEPTH = 16
local STATEMENTS = "if, elif, else, end, endif, endfor, for, local, set, include"

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end
local q = U.quote

-- A template error (code 3 for the C side), located at file:line.
local function template_error(chunkname, line, msg)
  U.raise(3, string.format("%s:%d: %s", chunkname, line, msg))
end

-- Translates a template into Lua source, one line for one line.
local function translate(text, chunkname)
  local lua, stack = {}, {}
  local lineno = 0
  local function err(msg) template_error(chunkname, lineno, msg) end
  local function check_expr(e, what)
    if e == "" then err("empty " .. what) end
    -- A Lua comment would swallow the rest of the generated line.
    if e:find("--", 1, true) then err("'--' is not allowed in " .. what .. " (it starts a Lua comment)") end
  end

  local function statement(s)
    if s:find("%}", 1, true) or s:find("{%", 1, true) then err("one {% statement %} per line") end
    check_expr(s, "{% %}")
    local kw, rest = s:match("^([%a_]+)%s*(.-)$")
    if kw == "if" then
      check_expr(rest, "{% if %} condition")
      stack[#stack + 1] = { kind = "if", line = lineno }
      return "if " .. rest .. " then"
    elseif kw == "elif" or kw == "elseif" then
      check_expr(rest, "{% elif %} condition")
      local top = stack[#stack]
      if not top or top.kind ~= "if" or top.has_else then err("elif without an open if") end
      return "elseif " .. rest .. " then"
    elseif kw == "else" then
      if rest ~= "" then err("else takes nothing; use elif COND") end
      local top = stack[#stack]
      if not top or top.kind ~= "if" or top.has_else then err("else without an open if") end
      top.has_else = true
      return "else"
    elseif kw == "end" or kw == "endif" or kw == "endfor" then
      if rest ~= "" then err(kw .. " takes nothing") end
      local top = table.remove(stack)
      if not top then err(kw .. " without an open if or for") end
      if kw ~= "end" and kw ~= "end" .. top.kind then
        err(string.format("%s closes the %s of line %d", kw, top.kind, top.line))
      end
      return "end"
    elseif kw == "for" then
      if not (rest:match("^[%a_][%w_]*%s*=.+,.+$") or rest:match("^[%a_][%w_%s,]*%sin%s.+$")) then
        err("expected {% for NAME = FIRST, LAST %} or {% for NAMES in EXPR %}")
      end
      stack[#stack + 1] = { kind = "for", line = lineno }
      return "for " .. rest .. " do"
    elseif kw == "local" then
      if not rest:match("^[%a_][%w_%s,]*=.+$") then err("expected {% local NAME = EXPR %}") end
      return "local " .. rest
    elseif kw == "set" then
      -- A name for the rest of the render, includers included (a local ends
      -- with its file): how one include defines helpers for several templates.
      local name, expr = rest:match("^([%a_][%w_]*)%s*=%s*(.+)$")
      if not name then err("expected {% set NAME = EXPR %}") end
      return "__set(" .. q(name) .. ", " .. expr .. ")"
    elseif kw == "include" then
      local name = rest:match('^"([^"]+)"$') or rest:match("^'([^']+)'$")
      if not name then err("expected {% include \"name\" %}") end
      return "__inc(" .. q(name) .. ")"
    end
    err(string.format("unknown statement {%% %s %%}; allowed: %s", s, STATEMENTS))
  end

  local function textline(line, newline)
    if line:find("{%", 1, true) then err("a {% statement %} must be alone on its line") end
    if line:find("{#", 1, true) then err("a {# comment #} must be alone on its line") end
    local parts, pos = {}, 1
    while true do
      local s = line:find("{{", pos, true)
      if not s then break end
      local e = line:find("}}", s + 2, true)
      if not e then err("'{{' without a closing '}}'") end
      local expr = trim(line:sub(s + 2, e - 1))
      check_expr(expr, "{{ }}")
      if s > pos then parts[#parts + 1] = "__emit(" .. q(line:sub(pos, s - 1)) .. ")" end
      parts[#parts + 1] = "__emit(__val((" .. expr .. "), " .. q(expr) .. "))"
      pos = e + 2
    end
    local rest = line:sub(pos) .. (newline and "\n" or "")
    if rest ~= "" then parts[#parts + 1] = "__emit(" .. q(rest) .. ")" end
    return table.concat(parts, " ")
  end

  local pos = 1
  while pos <= #text do
    lineno = lineno + 1
    local nl = text:find("\n", pos, true)
    local line = text:sub(pos, (nl or #text + 1) - 1)
    pos = (nl or #text) + 1
    local stmt = line:match("^%s*{%%(.*)%%}%s*$")
    if line:match("^%s*{#.*#}%s*$") then
      lua[lineno] = ""
    elseif stmt then
      lua[lineno] = statement(trim(stmt))
    else
      lua[lineno] = textline(line, nl ~= nil)
    end
  end
  local open = stack[#stack]
  if open then
    lineno = open.line
    err(string.format("this %s is never closed (add {%% end %%})", open.kind))
  end
  lua[1] = "local __emit, __val, __inc, __set, _ENV = ... " .. (lua[1] or "")
  return table.concat(lua, "\n")
end

-- A template value as text: integers as integers, floats with %.17g,
-- booleans as true/false; nil and tables are errors naming the expression.
local function value(x, expr)
  local t = type(x)
  if t == "string" then return x end
  if t == "number" then
    if math.type(x) == "integer" then return string.format("%d", x) end
    return string.format("%.17g", x)
  end
  if t == "boolean" then return tostring(x) end
  if x == nil then error("{{ " .. expr .. " }} is nil", 2) end
  error("{{ " .. expr .. " }} is a " .. t .. ", which does not print", 2)
end

-- An engine reading templates with read(name) -> text, chunkname | nil, why.
function M.new(read)
  local E, cache = {}, {}

  local function compile(name)
    if cache[name] then return cache[name] end
    if type(name) ~= "string" or not name:match("^[%w_][%w_.%-]*$") or name:find("..", 1, true) then
      U.raise(3, "bad template name " .. U.show(name) .. " (a file name in templates/, no folders)")
    end
    local text, chunkname = read(name)
    if not text then U.raise(3, chunkname) end
    local src = translate(text, chunkname)
    local f, err = load(src, "@" .. chunkname, "t", {})
    if not f then U.raise(3, err) end
    cache[name] = f
    return f
  end

  -- Renders template `name` with the variables in vars (a table).
  function E.render(name, vars)
    local buf = {}
    local function emit(s) buf[#buf + 1] = s end
    local env_vars = { f32 = U.f32 }
    for k, v in pairs(vars) do env_vars[k] = v end
    local env = U.sandbox("templates", env_vars)
    local depth = 0
    local include
    -- {% set %}: never over a variant field or an earlier set (a silent
    -- change of head_dim or of a helper would be a wrong kernel, not an error).
    local function set(n, x)
      if rawget(env, n) ~= nil then error("{% set " .. n .. " %}: " .. n .. " is already defined", 2) end
      rawset(env, n, x)
    end
    local function run(n) compile(n)(emit, value, include, set, env) end
    include = function(n)
      if depth >= MAX_INCLUDE_DEPTH then
        error("includes nested deeper than " .. MAX_INCLUDE_DEPTH .. " (a cycle?)", 2)
      end
      local ok, f = pcall(compile, n)
      if not ok then
        -- A missing template is reported at the include line.
        if type(f) == "table" and not f.msg:match("^[^\n]*:%d+: ") then error("include: " .. f.msg, 2) end
        error(f, 0)
      end
      depth = depth + 1
      f(emit, value, include, set, env)
      depth = depth - 1
    end
    run(name)
    return table.concat(buf)
  end

  return E
end

M.default = M.new(mods.read_template)

-- The source of a variant: its pass's template with the variant's fields
-- as variables. Checks that the result is self-contained (no #include).
function M.render_variant(v)
  local c = V.complete(v)
  if v.name and v.name ~= "" and v.name ~= c.name then
    U.fail("name", v.name, "does not match the variant's parameters (" .. c.name
      .. "); complete the variant first")
  end
  local tpl = V.template(c)
  -- The templates build tiles of head_dim columns: the variant's tile_dim. tensor_dim is
  -- the tensors' head dim; padded: it is less (loads zero the rest, stores leave it out).
  local vars = {}
  for k, x in pairs(c) do vars[k] = x end
  vars.head_dim, vars.tensor_dim, vars.padded = c.tile_dim, c.head_dim, c.tile_dim ~= c.head_dim
  local src = M.default.render(tpl, vars)
  -- Only the '#' characters are looked at (a plain find each), not every line: a
  -- warm start renders every variant it loads, and a match per line was a third
  -- of its time.
  local at = src:find("#", 1, true)
  while at do
    local bol = at
    while bol > 1 and src:sub(bol - 1, bol - 1):match("^[ \t\r\v\f]$") do bol = bol - 1 end
    if (bol == 1 or src:sub(bol - 1, bol - 1) == "\n") and src:find("^[ \t\r\v\f]*include", at + 1) then
      local n = select(2, src:sub(1, at):gsub("\n", "")) + 1
      U.raise(3, string.format("templates/%s: the rendered source has an #include at line %d; "
        .. "generated sources must be self-contained (paste the file with {%% include %%})", tpl, n))
    end
    at = src:find("#", at + 1, true)
  end
  return src
end

return M
