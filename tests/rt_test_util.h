/* Helpers shared by the runtime tests: temporary folders, file listings,
 * and a log sink that records what the runtime said. */
#ifndef RT_TEST_UTIL_H
#define RT_TEST_UTIL_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fa2.h"

/* A fresh folder under $TMPDIR (fa2_tests points it at its run folder,
 * tests/test_tmp.c) or /tmp. */
static inline void tu_tmpdir(char *buf, size_t len) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, len, "%s/fa2test.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(buf)) abort();
}

static inline void tu_rmtree(const char *path) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) abort();
}

/* Counts the files in dir whose name contains needle (NULL: all). */
static inline int tu_count(const char *dir, const char *needle) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.' && (!needle || strstr(e->d_name, needle))) n++;
  closedir(d);
  return n;
}

static inline long tu_file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

typedef struct tu_log {
  int count[8];
  char last[2048];
} tu_log;

static inline void tu_log_fn(int level, const char *msg, void *user) {
  tu_log *l = user;
  if (level >= 0 && level < 8) l->count[level]++;
  snprintf(l->last, sizeof l->last, "%s", msg);
}

#endif
