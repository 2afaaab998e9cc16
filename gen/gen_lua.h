/* gen_lua: the generator's Lua state and the calls into its modules
 * (internal to gen/; the public API is gen.h). */
#ifndef GEN_LUA_H
#define GEN_LUA_H
#include <lua.h>
#include <stddef.h>

#include "gen.h"

struct gen_state {
  lua_State *L;
  char *templates_dir; /* NULL: embedded templates */
  size_t mem_used;     /* bytes held by Lua (the allocator caps it) */
  long budget;         /* instruction-hook ticks left in the current call */
};

/* Sets err (code and printf-style message) and returns code. */
int gen_fail(gen_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Pushes mods[module][fn] (a function of gen/<module>.lua) on g's stack. */
void gen_lua_getfn(gen_state *g, const char *module, const char *fn);

/* Calls the function below the nargs arguments on the stack, with the
 * instruction budget reset. On error: pops it, sets err and returns the
 * code: a {code=, msg=} error object keeps its code, a string error gets
 * string_code (GEN_ESPEC for spec code, GEN_ETEMPLATE for templates). */
int gen_lua_pcall(gen_state *g, int nargs, int nresults, int string_code, gen_err *err);

/* The variant as a Lua table (fields as in gen/variant.lua; block_m 0 =
 * "auto"), and back from a completed table at index idx. */
void gen_push_variant(lua_State *L, const gen_variant *v);
int gen_read_variant(lua_State *L, int idx, gen_variant *v, gen_err *err);

/* An embedded file by name ("templates/fwd.cu.tpl"), or NULL. */
const struct gen_embedded_file *gen_embedded_find(const char *name);

/* Reads a whole file (at most 64 MiB) into a NUL-terminated buffer. */
int gen_read_file(const char *path, char **data, size_t *len, gen_err *err);

#endif
