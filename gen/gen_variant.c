/* gen_variant: gen_variant <-> Lua tables, completion and names (the rules
 * themselves are in gen/variant.lua). */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "gen_lua.h"

static const char *const pass_names[] = {"fwd", "bwd"};
static const char *const dtype_names[] = {"bf16", "fp16"};
static const char *const stab_names[] = {"none", "paper", "robust", "balanced"};

static const char *enum_name(const char *const *names, int n, int v) {
  return v >= 0 && v < n ? names[v] : "?";
}

static int enum_value(const char *const *names, int n, const char *s) {
  for (int i = 0; s && i < n; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}

void gen_push_variant(lua_State *L, const gen_variant *v) {
  lua_createtable(L, 0, 12);
  lua_pushstring(L, enum_name(pass_names, 2, v->pass));
  lua_setfield(L, -2, "pass");
  lua_pushstring(L, enum_name(dtype_names, 2, v->dtype));
  lua_setfield(L, -2, "dtype");
  lua_pushinteger(L, v->head_dim);
  lua_setfield(L, -2, "head_dim");
  lua_pushboolean(L, v->causal);
  lua_setfield(L, -2, "causal");
  lua_pushboolean(L, v->varlen);
  lua_setfield(L, -2, "varlen");
  lua_pushboolean(L, v->window);
  lua_setfield(L, -2, "window");
  lua_pushboolean(L, v->alibi);
  lua_setfield(L, -2, "alibi");
  lua_pushboolean(L, v->softcap);
  lua_setfield(L, -2, "softcap");
  lua_pushboolean(L, v->dropout);
  lua_setfield(L, -2, "dropout");
  lua_pushboolean(L, v->sinks);
  lua_setfield(L, -2, "sinks");
  lua_pushinteger(L, v->block_m);
  lua_setfield(L, -2, "block_m");
  lua_pushinteger(L, v->block_n);
  lua_setfield(L, -2, "block_n");
  lua_pushinteger(L, v->warps);
  lua_setfield(L, -2, "warps");
  lua_pushinteger(L, v->stages);
  lua_setfield(L, -2, "stages");
  lua_pushboolean(L, v->wgmma);
  lua_setfield(L, -2, "wgmma");
  lua_pushboolean(L, v->ws);
  lua_setfield(L, -2, "ws");
  lua_pushstring(L, enum_name(stab_names, 4, v->stab));
  lua_setfield(L, -2, "stab");
  lua_pushnumber(L, v->beta);
  lua_setfield(L, -2, "beta");
  lua_pushnumber(L, v->eps);
  lua_setfield(L, -2, "eps");
  lua_pushlstring(L, v->name, strnlen(v->name, sizeof v->name));
  lua_setfield(L, -2, "name");
}

static int get_int(lua_State *L, int idx, const char *k) {
  lua_getfield(L, idx, k);
  int v = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

static double get_num(lua_State *L, int idx, const char *k) {
  lua_getfield(L, idx, k);
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Copies string field k into dst (cap bytes); -1 when absent or too long. */
static int get_str(lua_State *L, int idx, const char *k, char *dst, size_t cap) {
  lua_getfield(L, idx, k);
  size_t len = 0;
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
  int ok = s && len < cap;
  if (ok) memcpy(dst, s, len + 1);
  lua_pop(L, 1);
  return ok ? 0 : -1;
}

int gen_read_variant(lua_State *L, int idx, gen_variant *v, gen_err *err) {
  idx = lua_absindex(L, idx);
  gen_variant c;
  memset(&c, 0, sizeof c);
  char s[16];
  c.pass = get_str(L, idx, "pass", s, sizeof s) ? -1 : enum_value(pass_names, 2, s);
  c.dtype = get_str(L, idx, "dtype", s, sizeof s) ? -1 : enum_value(dtype_names, 2, s);
  c.stab = get_str(L, idx, "stab", s, sizeof s) ? -1 : enum_value(stab_names, 4, s);
  c.head_dim = get_int(L, idx, "head_dim");
  lua_getfield(L, idx, "causal");
  c.causal = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "varlen");
  c.varlen = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "window");
  c.window = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "alibi");
  c.alibi = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "softcap");
  c.softcap = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "dropout");
  c.dropout = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "sinks");
  c.sinks = lua_toboolean(L, -1);
  lua_pop(L, 1);
  c.block_m = get_int(L, idx, "block_m");
  c.block_n = get_int(L, idx, "block_n");
  c.warps = get_int(L, idx, "warps");
  c.stages = get_int(L, idx, "stages");
  lua_getfield(L, idx, "wgmma");
  c.wgmma = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "ws");
  c.ws = lua_toboolean(L, -1);
  lua_pop(L, 1);
  c.beta = get_num(L, idx, "beta");
  c.eps = get_num(L, idx, "eps");
  c.tile_dim = get_int(L, idx, "tile_dim");
  c.threads = get_int(L, idx, "threads");
  c.smem_bytes = get_int(L, idx, "smem_bytes");
  lua_getfield(L, idx, "persistent");
  c.persistent = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (c.pass < 0 || c.dtype < 0 || c.stab < 0)
    return gen_fail(err, GEN_EINTERNAL, "variant table with an unknown pass, dtype or stab");
  if (get_str(L, idx, "name", c.name, sizeof c.name))
    return gen_fail(err, GEN_ESPEC, "variant name longer than %zu bytes", sizeof c.name - 1);
  if (get_str(L, idx, "only_arch", c.only_arch, sizeof c.only_arch)) c.only_arch[0] = 0;
  if (c.only_arch[0] && get_str(L, idx, "only_target", c.only_target, sizeof c.only_target))
    return gen_fail(err, GEN_EINTERNAL, "variant %s: only_arch without only_target", c.name);
  lua_getfield(L, idx, "entries");
  int n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
  if (n > GEN_MAX_ENTRIES) {
    lua_pop(L, 1);
    return gen_fail(err, GEN_EINTERNAL, "variant with %d entries (at most %d)", n, GEN_MAX_ENTRIES);
  }
  for (int i = 0; i < n; i++) {
    lua_geti(L, -1, i + 1);
    size_t len = 0;
    const char *e = lua_tolstring(L, -1, &len);
    if (!e || len >= sizeof c.entries[i]) {
      lua_pop(L, 2);
      return gen_fail(err, GEN_EINTERNAL, "bad kernel entry name in variant %s", c.name);
    }
    memcpy(c.entries[i], e, len + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  c.n_entries = n;
  *v = c;
  return GEN_OK;
}

int gen_variant_complete(gen_state *g, gen_variant *v, const char *arch, gen_err *err) {
  lua_State *L = g->L;
  gen_lua_getfn(g, "variant", "complete");
  gen_push_variant(L, v);
  if (arch)
    lua_pushstring(L, arch);
  else
    lua_pushnil(L);
  int rc = gen_lua_pcall(g, 2, 1, GEN_EINTERNAL, err);
  if (rc) return rc;
  rc = gen_read_variant(L, -1, v, err);
  lua_pop(L, 1);
  return rc;
}

int gen_variant_from_name(gen_state *g, const char *name, gen_variant *v, gen_err *err) {
  lua_State *L = g->L;
  gen_lua_getfn(g, "variant", "from_name");
  lua_pushstring(L, name ? name : "");
  int rc = gen_lua_pcall(g, 1, 1, GEN_EINTERNAL, err);
  if (rc) return rc;
  rc = gen_read_variant(L, -1, v, err);
  lua_pop(L, 1);
  return rc;
}

void gen_tile_name(int block_m, int block_n, int warps, int stages, int wgmma, int ws, char *buf,
                   size_t n) {
  snprintf(buf, n, "m%dn%dw%ds%d%s", block_m, block_n, warps, stages, ws ? "ws" : wgmma ? "wg" : "");
}

/* Both read what gen/variant.lua put in the variant: no arch named here. */
const char *gen_compile_arch(const gen_variant *v, const char *arch) {
  return v->only_arch[0] && !strcmp(arch, v->only_arch) ? v->only_target : arch;
}

int gen_variant_runs_on(const gen_variant *v, const char *arch) {
  return !v->only_arch[0] || !strcmp(arch, v->only_arch);
}
