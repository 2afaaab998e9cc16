/* rt_paths: cache directory resolution and mkdir -p. */
#include "rt_paths.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fits(int n, size_t len) { return n >= 0 && (size_t)n < len ? 0 : -1; }

int rt_cache_dir(const char *explicit_dir, char *buf, size_t len) {
  const char *e;
  if (explicit_dir && *explicit_dir) return fits(snprintf(buf, len, "%s", explicit_dir), len);
  if ((e = getenv("FA2_CACHE_DIR")) && *e) return fits(snprintf(buf, len, "%s", e), len);
  if ((e = getenv("XDG_CACHE_HOME")) && *e)
    return fits(snprintf(buf, len, "%s/fa2gen", e), len);
  const char *home = getenv("HOME");
  if (!home || !*home) {
    struct passwd *pw = getpwuid(getuid());
    home = pw ? pw->pw_dir : NULL;
  }
  if (!home || !*home) return -1;
  return fits(snprintf(buf, len, "%s/.cache/fa2gen", home), len);
}

int rt_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    errno = n ? ENAMETOOLONG : ENOENT;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == 0) {
      char c = *p;
      *p = 0;
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      *p = c;
      if (!c) break;
    }
  }
  struct stat st;
  if (stat(buf, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

int rt_mkdirs_parent(const char *path) {
  char dir[4096];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return errno = ENAMETOOLONG, -1;
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = 0;
  return rt_mkdirs(dir);
}
