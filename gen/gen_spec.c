/* gen_spec: loads a spec file into a gen_spec (rules in gen/spec.lua). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "gen_embed.h"
#include "gen_lua.h"

#define DEFAULT_SPEC "specs/default.lua"

/* The variant at idx's spec_arch (the arches whose "auto" pick it is) as a list of
 * names, each followed by a space ("sm_80 sm_86 "); "" without one: every arch. */
static void read_arch_picks(lua_State *L, int idx, char *out, size_t size) {
  out[0] = 0;
  if (lua_getfield(L, idx, "spec_arch") == LUA_TTABLE) {
    size_t used = 0;
    for (lua_Integer k = 1, n = luaL_len(L, -1); k <= n; k++) {
      lua_geti(L, -1, k);
      const char *a = lua_tostring(L, -1);
      int w = a ? snprintf(out + used, size - used, "%s ", a) : 0;
      if (w > 0 && (size_t)w < size - used) used += (size_t)w;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

static int read_result(lua_State *L, gen_spec *s, gen_err *err) {
  int t = lua_gettop(L);
  lua_getfield(L, t, "allow_spills");
  s->allow_spills = lua_toboolean(L, -1);
  lua_pop(L, 1);

  lua_getfield(L, t, "arch");
  int n = (int)luaL_len(L, -1);
  if (n > (int)(sizeof s->arch / sizeof s->arch[0]))
    return gen_fail(err, GEN_ESPEC, "%s: more than %zu arches", s->path,
                    sizeof s->arch / sizeof s->arch[0]);
  for (int i = 0; i < n; i++) {
    lua_geti(L, -1, i + 1);
    size_t len = 0;
    const char *a = lua_tolstring(L, -1, &len);
    if (!a || len >= sizeof s->arch[i]) return gen_fail(err, GEN_EINTERNAL, "bad arch in spec");
    memcpy(s->arch[i], a, len + 1);
    lua_pop(L, 1);
  }
  s->n_arch = n;
  lua_pop(L, 1);

  lua_getfield(L, t, "variants");
  n = (int)luaL_len(L, -1);
  s->variants = calloc((size_t)(n ? n : 1), sizeof *s->variants);
  if (!s->variants) return gen_fail(err, GEN_EINTERNAL, "out of memory (%d variants)", n);
  s->arch_picks = calloc((size_t)(n ? n : 1), sizeof *s->arch_picks);
  if (!s->arch_picks) return gen_fail(err, GEN_EINTERNAL, "out of memory (%d variants)", n);
  for (int i = 0; i < n; i++) {
    lua_geti(L, -1, i + 1);
    int rc = gen_read_variant(L, -1, &s->variants[i], err);
    if (!rc) read_arch_picks(L, -1, s->arch_picks[i], sizeof s->arch_picks[i]);
    lua_pop(L, 1);
    if (rc) return rc;
    s->n_variants = i + 1;
  }
  lua_pop(L, 1);
  return GEN_OK;
}

int gen_spec_load(gen_state *g, const char *path, gen_spec *out, gen_err *err) {
  memset(out, 0, sizeof *out);
  const char *shown = path ? path : DEFAULT_SPEC;
  if (strlen(shown) >= sizeof out->path)
    return gen_fail(err, GEN_EIO, "spec path longer than %zu bytes", sizeof out->path - 1);
  strcpy(out->path, shown);

  char *text = NULL;
  size_t len = 0;
  if (path) {
    int rc = gen_read_file(path, &text, &len, err);
    if (rc) return rc;
  } else {
    const gen_embedded_file *f = gen_embedded_find(DEFAULT_SPEC);
    if (!f) return gen_fail(err, GEN_EINTERNAL, "%s is not embedded (build problem)", DEFAULT_SPEC);
    if (!(text = malloc(f->len + 1))) return gen_fail(err, GEN_EINTERNAL, "out of memory");
    memcpy(text, f->data, f->len + 1);
    len = f->len;
  }

  lua_State *L = g->L;
  int top = lua_gettop(L);
  gen_lua_getfn(g, "spec", "load");
  lua_pushlstring(L, text, len);
  lua_pushstring(L, shown);
  free(text);
  int rc = gen_lua_pcall(g, 2, 1, GEN_ESPEC, err);
  if (rc == GEN_OK) rc = read_result(L, out, err);
  lua_settop(L, top);
  if (rc) gen_spec_free(out);
  return rc;
}

void gen_spec_free(gen_spec *s) {
  if (!s) return;
  free(s->variants);
  free(s->arch_picks);
  s->variants = NULL;
  s->arch_picks = NULL;
  s->n_variants = 0;
}

int gen_spec_runs_on(const gen_spec *s, int i, const char *arch) {
  if (!gen_variant_runs_on(&s->variants[i], arch)) return 0;
  const char *picks = s->arch_picks[i];
  if (!picks[0]) return 1;
  char token[24];
  snprintf(token, sizeof token, "%s ", arch);
  for (const char *p = strstr(picks, token); p; p = strstr(p + 1, token))
    if (p == picks || p[-1] == ' ') return 1;
  return 0;
}
