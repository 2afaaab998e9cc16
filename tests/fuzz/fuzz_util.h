/* Helpers shared by the fuzz targets (libFuzzer, clang -fsanitize=fuzzer):
 * a scratch folder for inputs that the code under test reads from files,
 * and coverage of the generator's Lua code, which libFuzzer cannot see on
 * its own (Debian's liblua is not instrumented).
 *
 * A harness that finds a broken contract calls fz_fail: it prints why and
 * aborts, which libFuzzer reports as a crash with the input saved. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H
#include <lua.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_lua.h"

__attribute__((noreturn, format(printf, 1, 2))) static void fz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz contract broken: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

static char fz_dir[256];

static inline void fz_rmdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_dir);
  if (fz_dir[0] && system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", fz_dir);
}

/* A private folder on tmpfs when there is one (inputs are written to files
 * at every run), removed at exit. */
static inline const char *fz_tmpdir(void) {
  if (fz_dir[0]) return fz_dir;
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(fz_dir, sizeof fz_dir, "%s/fa2fuzz.XXXXXX", base);
  if (!mkdtemp(fz_dir)) fz_fail("mkdtemp %s", fz_dir);
  atexit(fz_rmdir);
  return fz_dir;
}

static inline void fz_write(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) fz_fail("cannot write %s", path);
}

/* --- Lua line coverage as libFuzzer extra counters ---------------------
 * Each (chunk, previous line, line) step in the gen Lua modules bumps a counter,
 * AFL-style, so a spec or template that drives the loader or the engine
 * down new paths counts as new coverage. The
 * generator's count hook (the instruction budget) keeps running: ours
 * forwards count events to it, after lowering the budget from 2e8 to 1e7
 * instructions (an endless loop still ends with the generator's own error,
 * only sooner, so a slow input does not stall the fuzzer). */
#define FZ_COUNTERS (1 << 16)
#define FZ_BUDGET_TICKS 100 /* of 1e5 instructions each */
__attribute__((section("__libfuzzer_extra_counters"), used)) static uint8_t fz_lua_counters[FZ_COUNTERS];

static lua_Hook fz_orig_hook;
static uint32_t fz_prev;
static const char *fz_last_src;
static uint32_t fz_last_src_hash;

static inline uint32_t fz_hash_str(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static inline void fz_hook(lua_State *L, lua_Debug *ar) {
  if (ar->event == LUA_HOOKCOUNT) {
    gen_state *g = *(gen_state **)lua_getextraspace(L);
    if (g->budget > FZ_BUDGET_TICKS) g->budget = FZ_BUDGET_TICKS;
    fz_orig_hook(L, ar);
    return;
  }
  if (ar->event != LUA_HOOKLINE || !lua_getinfo(L, "S", ar)) return;
  /* Hash the chunk's name, not its address: states are fresh per input.
   * Only the generator's own modules count: lines of the input's chunk
   * (a spec, a translated template) move with every edit and would make
   * each mutant look new. */
  if (ar->source != fz_last_src) {
    fz_last_src = ar->source;
    fz_last_src_hash = strncmp(ar->source, "@gen/", 5) ? 0 : fz_hash_str(ar->source);
  }
  if (!fz_last_src_hash) return;
  uint32_t cur = (fz_last_src_hash ^ ((uint32_t)ar->currentline * 2654435761u)) & (FZ_COUNTERS - 1);
  fz_lua_counters[(cur ^ fz_prev) & (FZ_COUNTERS - 1)]++;
  fz_prev = cur >> 1;
}

/* Adds line coverage to g's Lua state (after gen_open). */
static inline void fz_cover(gen_state *g) {
  lua_State *L = g->L;
  lua_Hook h = lua_gethook(L);
  if (h != fz_hook) fz_orig_hook = h;
  if (!fz_orig_hook) fz_fail("gen_open installed no count hook");
  fz_last_src = NULL;
  fz_prev = 0;
  lua_sethook(L, fz_hook, LUA_MASKCOUNT | LUA_MASKLINE, lua_gethookcount(L));
}

#endif
