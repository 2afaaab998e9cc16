/* The standard streams of the embedded Lua.
 *
 * The build renames Lua's references to stdin/stdout/stderr to these names
 * (see the Makefile: Debian's liblua5.4.a is not PIC, and those three are
 * its only references that a shared library cannot resolve), so they must
 * exist and point at the C library's streams before Lua runs. */
#include <stdio.h>

__attribute__((visibility("hidden"))) FILE *fa2_lua_stdin, *fa2_lua_stdout, *fa2_lua_stderr;

__attribute__((constructor)) static void lua_stdio_init(void) {
  fa2_lua_stdin = stdin;
  fa2_lua_stdout = stdout;
  fa2_lua_stderr = stderr;
}
