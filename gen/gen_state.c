/* gen_state: the generator's Lua state.
 *
 * Only the base, string, table, math and utf8 libraries are opened (never
 * io, os, package or debug); dofile, loadfile and print are removed too.
 * Templates and specs run in narrower sandboxes on top (gen/util.lua).
 * Lua's memory is capped and a count hook stops endless loops, so no spec
 * or template can hang or exhaust the process. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen_embed.h"
#include "gen_lua.h"

#define LUA_MEM_LIMIT ((size_t)256 << 20)
#define HOOK_EVERY 100000   /* instructions per hook call */
#define BUDGET_TICKS 2000L /* hook calls per top-level call: 2e8 instructions */
#define MODS_KEY "fa2gen.mods"

/* Modules in load order; each gets the table of those before it. */
static const char *const modules[] = {"util", "defaults", "variant", "engine", "spec", NULL};

static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  gen_state *g = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    g->mem_used -= old;
    free(ptr);
    return NULL;
  }
  if (nsize > old && g->mem_used - old + nsize > LUA_MEM_LIMIT) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) g->mem_used = g->mem_used - old + nsize;
  return p;
}

static void count_hook(lua_State *L, lua_Debug *ar) {
  gen_state *g = *(gen_state **)lua_getextraspace(L);
  if (--g->budget > 0) return;
  lua_getinfo(L, "Sl", ar);
  lua_pushfstring(L, "%s:%d: gave up after %d million Lua instructions (an endless loop?)",
                  ar->short_src, ar->currentline, (int)(BUDGET_TICKS * HOOK_EVERY / 1000000));
  lua_error(L);
}

/* Template names are plain file names: no folders, no "..". */
static int bad_template_name(const char *name) {
  return !*name || strchr(name, '/') || strstr(name, "..") || strlen(name) > 200;
}

/* read_template(name) -> text, chunkname | nil, why */
static int l_read_template(lua_State *L) {
  gen_state *g = lua_touserdata(L, lua_upvalueindex(1));
  const char *name = luaL_checkstring(L, 1);
  if (bad_template_name(name)) {
    lua_pushnil(L);
    lua_pushfstring(L, "bad template name '%s'", name);
    return 2;
  }
  if (g->templates_dir) {
    char path[1400], *text;
    size_t len;
    gen_err err;
    snprintf(path, sizeof path, "%s/%s", g->templates_dir, name);
    if (gen_read_file(path, &text, &len, &err) != GEN_OK) {
      lua_pushnil(L);
      lua_pushfstring(L, "no template '%s' (%s)", name, err.msg);
      return 2;
    }
    /* (Should this push hit Lua's memory cap, text leaks once: acceptable.) */
    lua_pushlstring(L, text, len);
    free(text);
    lua_pushstring(L, path);
    return 2;
  }
  char key[256];
  snprintf(key, sizeof key, "templates/%s", name);
  const gen_embedded_file *f = gen_embedded_find(key);
  if (!f) {
    lua_pushnil(L);
    lua_pushfstring(L, "no template '%s' among the embedded templates", name);
    return 2;
  }
  lua_pushlstring(L, f->data, f->len);
  lua_pushstring(L, key);
  return 2;
}

static int l_template_exists(lua_State *L) {
  gen_state *g = lua_touserdata(L, lua_upvalueindex(1));
  const char *name = luaL_checkstring(L, 1);
  int found = 0;
  if (!bad_template_name(name)) {
    if (g->templates_dir) {
      char path[1400];
      struct stat st;
      snprintf(path, sizeof path, "%s/%s", g->templates_dir, name);
      found = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    } else {
      char key[256];
      snprintf(key, sizeof key, "templates/%s", name);
      found = gen_embedded_find(key) != NULL;
    }
  }
  lua_pushboolean(L, found);
  return 1;
}

static int setup(lua_State *L) {
  gen_state *g = lua_touserdata(L, 1);
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},     {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}};
  for (const luaL_Reg *l = libs; l->name; l++) {
    luaL_requiref(L, l->name, l->func, 1);
    lua_pop(L, 1);
  }
  static const char *const drop[] = {"dofile", "loadfile", "print", NULL};
  for (int i = 0; drop[i]; i++) {
    lua_pushnil(L);
    lua_setglobal(L, drop[i]);
  }
  lua_newtable(L);
  int mods = lua_gettop(L);
  lua_pushlightuserdata(L, g);
  lua_pushcclosure(L, l_read_template, 1);
  lua_setfield(L, mods, "read_template");
  lua_pushlightuserdata(L, g);
  lua_pushcclosure(L, l_template_exists, 1);
  lua_setfield(L, mods, "template_exists");
  for (int i = 0; modules[i]; i++) {
    char name[64], chunk[72];
    snprintf(name, sizeof name, "gen/%s.lua", modules[i]);
    snprintf(chunk, sizeof chunk, "@%s", name);
    const gen_embedded_file *f = gen_embedded_find(name);
    if (!f) return luaL_error(L, "%s is not embedded (build problem)", name);
    if (luaL_loadbufferx(L, f->data, f->len, chunk, "t") != LUA_OK) return lua_error(L);
    lua_pushvalue(L, mods);
    lua_call(L, 1, 1);
    if (!lua_istable(L, -1)) return luaL_error(L, "%s did not return a table", name);
    lua_setfield(L, mods, modules[i]);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, MODS_KEY);
  return 0;
}

int gen_open(gen_state **out, const char *templates_dir, gen_err *err) {
  *out = NULL;
  gen_state *g = calloc(1, sizeof *g);
  if (!g) return gen_fail(err, GEN_EINTERNAL, "out of memory");
  if (templates_dir) {
    struct stat st;
    if (stat(templates_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      free(g);
      return gen_fail(err, GEN_EIO, "--templates %s: no such folder", templates_dir);
    }
    if (!(g->templates_dir = strdup(templates_dir))) {
      free(g);
      return gen_fail(err, GEN_EINTERNAL, "out of memory");
    }
  }
  g->L = lua_newstate(lua_alloc, g);
  if (!g->L) {
    gen_close(g);
    return gen_fail(err, GEN_EINTERNAL, "cannot create a Lua state (out of memory)");
  }
  *(gen_state **)lua_getextraspace(g->L) = g;
  lua_sethook(g->L, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
  lua_pushcfunction(g->L, setup);
  lua_pushlightuserdata(g->L, g);
  int rc = gen_lua_pcall(g, 1, 0, GEN_EINTERNAL, err);
  if (rc != GEN_OK) {
    gen_close(g);
    return rc;
  }
  *out = g;
  return GEN_OK;
}

void gen_close(gen_state *g) {
  if (!g) return;
  if (g->L) lua_close(g->L);
  free(g->templates_dir);
  free(g);
}

void gen_lua_getfn(gen_state *g, const char *module, const char *fn) {
  lua_State *L = g->L;
  lua_getfield(L, LUA_REGISTRYINDEX, MODS_KEY);
  lua_getfield(L, -1, module);
  lua_getfield(L, -1, fn);
  lua_remove(L, -2);
  lua_remove(L, -2);
}

int gen_lua_pcall(gen_state *g, int nargs, int nresults, int string_code, gen_err *err) {
  lua_State *L = g->L;
  g->budget = BUDGET_TICKS;
  /* The instruction cap guards code a user wrote: spec files, and the templates of
   * --templates. Our own code (the modules, embedded templates) runs with the hook
   * off, which makes Lua call back on every instruction (~8 % of a warm start); the
   * hook, gen_open's or one a caller put in its place, comes back after. */
  const int capped = string_code == GEN_ESPEC || (string_code == GEN_ETEMPLATE && g->templates_dir);
  const lua_Hook hook = lua_gethook(L);
  const int mask = lua_gethookmask(L), every = lua_gethookcount(L);
  if (!capped) lua_sethook(L, NULL, 0, 0);
  int rc = lua_pcall(L, nargs, nresults, 0);
  if (!capped) lua_sethook(L, hook, mask, every);
  if (rc == LUA_OK) return GEN_OK;
  int code = GEN_EINTERNAL;
  if (rc == LUA_ERRMEM) {
    gen_fail(err, code, "out of memory in Lua (the generator allows %zu MiB)", LUA_MEM_LIMIT >> 20);
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    code = string_code;
    gen_fail(err, code, "%s", lua_tostring(L, -1));
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    /* Our error objects: {code = 1..4, msg = "..."}; anything else raised
     * by a spec or template is reported as such. */
    lua_getfield(L, -1, "code");
    lua_getfield(L, -2, "msg");
    lua_Integer c = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (c >= GEN_EINTERNAL && c <= GEN_EIO && lua_type(L, -1) == LUA_TSTRING) {
      code = (int)c;
      gen_fail(err, code, "%s", lua_tostring(L, -1));
    } else {
      code = string_code;
      gen_fail(err, code, "error raised with a table instead of a message");
    }
    lua_pop(L, 2);
  } else {
    code = string_code;
    gen_fail(err, code, "error raised with a %s instead of a message", luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return code;
}
