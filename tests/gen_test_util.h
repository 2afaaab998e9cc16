/* Helpers for the generator tests: temporary folders, files, running the
 * fa2 binary (env FA2_BIN), comparing trees. Test code: aborts on misuse. */
#ifndef GEN_TEST_UTIL_H
#define GEN_TEST_UTIL_H
#include <stddef.h>

#include "gen.h"

/* A fresh folder under $TMPDIR (or /tmp); malloc'd path. */
char *tu_tmpdir(void);
/* Writes text to dir/name (or to name when dir is NULL); returns the path (malloc'd). */
char *tu_write(const char *dir, const char *name, const char *text);
/* Whole file (malloc'd, NUL-terminated) or NULL. */
char *tu_read(const char *path, size_t *len);
int tu_exists(const char *path);
/* Absolute path of a file of the repository (tests run from its root). */
char *tu_repo_path(const char *rel);

typedef struct tu_run {
  int status; /* exit status, or 128 + signal */
  char *out, *err;
} tu_run;
/* Runs $FA2_BIN with args (NULL-terminated) in folder cwd (NULL: here). */
tu_run tu_fa2(const char *cwd, const char *const *args);
/* Runs argv[0] (searched in PATH) with argv (NULL-terminated) in folder cwd (NULL: here). */
tu_run tu_exec(const char *cwd, const char *const *argv);
void tu_run_free(tu_run *r);

/* "relpath size hash" lines of every file under dir, sorted; "" when dir
 * is absent. Two trees are byte-identical iff their digests are equal. */
char *tu_tree_digest(const char *dir);
/* Names in dir (not recursive), sorted, joined by spaces. */
char *tu_list_dir(const char *dir);
/* Expects dir to hold exactly `want` (as tu_list_dir prints it). */
#define tu_expect_dir(dir, want)                                   \
  do {                                                             \
    char *ls_ = tu_list_dir(dir);                                  \
    cr_expect_str_eq(ls_, want, "contents of %s", (const char *)(dir)); \
    free(ls_);                                                     \
  } while (0)

/* make test's sanitizer run (FA2_TEST_QUICK=1): the long checks skip there, the plain run does them. */
int tu_quick(void);

/* Opens a generator (templates_dir NULL: embedded); asserts success. */
gen_state *tu_open(const char *templates_dir);

#endif
