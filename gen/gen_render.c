/* gen_render: a completed variant -> its CUDA source (gen/engine.lua). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "gen_lua.h"

int gen_render(gen_state *g, const gen_variant *v, char **src, size_t *len, gen_err *err) {
  lua_State *L = g->L;
  *src = NULL;
  if (len) *len = 0;
  gen_lua_getfn(g, "engine", "render_variant");
  gen_push_variant(L, v);
  int rc = gen_lua_pcall(g, 1, 1, GEN_ETEMPLATE, err);
  if (rc) return rc;
  size_t n = 0;
  const char *s = lua_tolstring(L, -1, &n);
  char *copy = s ? malloc(n + 1) : NULL;
  if (!copy) {
    lua_pop(L, 1);
    return gen_fail(err, GEN_EINTERNAL, "out of memory copying the source of %s", v->name);
  }
  memcpy(copy, s, n + 1);
  lua_pop(L, 1);
  *src = copy;
  if (len) *len = n;
  return GEN_OK;
}
