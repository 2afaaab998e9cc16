/* gen_fs: atomic output trees (see gen_fs.h). */
#include "gen_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen_lua.h"

int gen_fs_clean_dir(const char *dir, char *out, size_t cap, gen_err *err) {
  size_t n = dir ? strlen(dir) : 0;
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 0 || n + 32 >= cap)
    return gen_fail(err, GEN_EIO, "bad output folder '%s'", dir ? dir : "");
  memcpy(out, dir, n);
  out[n] = 0;
  const char *base = strrchr(out, '/');
  base = base ? base + 1 : out;
  if (!strcmp(base, ".") || !strcmp(base, "..") || !strcmp(out, "/"))
    return gen_fail(err, GEN_EIO, "output folder '%s': give it a name (e.g. -o out)", dir);
  return GEN_OK;
}

int gen_fs_replaceable(const char *dir, const char *marker, gen_err *err) {
  struct stat st;
  if (lstat(dir, &st) != 0) {
    if (errno == ENOENT) return GEN_OK;
    return gen_fail(err, GEN_EIO, "%s: %s", dir, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return gen_fail(err, GEN_EIO, "%s exists and is not a folder; refusing to replace it", dir);
  char path[1400];
  snprintf(path, sizeof path, "%s/%s", dir, marker);
  if (stat(path, &st) == 0) return GEN_OK;
  DIR *d = opendir(dir);
  if (!d) return gen_fail(err, GEN_EIO, "%s: %s", dir, strerror(errno));
  int empty = 1;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  if (!empty)
    return gen_fail(err, GEN_EIO,
                    "%s is not empty and has no %s (not an fa2gen output folder); refusing to "
                    "replace it: choose another folder with -o",
                    dir, marker);
  return GEN_OK;
}

int gen_fs_mkdir_p(const char *dir, gen_err *err) {
  char p[1400];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
    return gen_fail(err, GEN_EIO, "path too long: %s", dir);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      return gen_fail(err, GEN_EIO, "cannot create %s: %s", p, strerror(errno));
    *s = '/';
  }
  if (mkdir(p, 0777) != 0 && errno != EEXIST)
    return gen_fail(err, GEN_EIO, "cannot create %s: %s", p, strerror(errno));
  return GEN_OK;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  remove(path);
  return 0;
}

void gen_fs_rmtree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

int gen_fs_make_tmp(const char *dir, char *tmp, size_t cap, gen_err *err) {
  if (snprintf(tmp, cap, "%s.tmp-%ld", dir, (long)getpid()) >= (int)cap)
    return gen_fail(err, GEN_EIO, "path too long: %s", dir);
  char parent[1400];
  snprintf(parent, sizeof parent, "%s", dir);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = 0;
    int rc = gen_fs_mkdir_p(parent, err);
    if (rc) return rc;
  }
  gen_fs_rmtree(tmp); /* a leftover of a killed run with our pid */
  if (mkdir(tmp, 0777) != 0)
    return gen_fail(err, GEN_EIO, "cannot create %s: %s", tmp, strerror(errno));
  return GEN_OK;
}

int gen_fs_replace(const char *tmp, const char *dir, gen_err *err) {
  if (rename(tmp, dir) == 0) return GEN_OK; /* dir absent (or an empty folder) */
  if (errno != EEXIST && errno != ENOTEMPTY)
    return gen_fail(err, GEN_EIO, "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
    gen_fs_rmtree(tmp); /* now the old tree */
    return GEN_OK;
  }
  /* No atomic exchange on this file system: two renames. */
  char old[1500];
  snprintf(old, sizeof old, "%s.old-%ld", dir, (long)getpid());
  gen_fs_rmtree(old);
  if (rename(dir, old) != 0)
    return gen_fail(err, GEN_EIO, "cannot move %s aside: %s", dir, strerror(errno));
  if (rename(tmp, dir) != 0) {
    int e = errno;
    rename(old, dir);
    return gen_fail(err, GEN_EIO, "cannot rename %s to %s: %s", tmp, dir, strerror(e));
  }
  gen_fs_rmtree(old);
  return GEN_OK;
}

int gen_fs_write(const char *path, const void *data, size_t len, gen_err *err) {
  FILE *f = fopen(path, "wb");
  if (!f) return gen_fail(err, GEN_EIO, "cannot write %s: %s", path, strerror(errno));
  size_t n = fwrite(data, 1, len, f);
  int bad = n != len || ferror(f);
  if (fclose(f) != 0 || bad) {
    remove(path);
    return gen_fail(err, GEN_EIO, "cannot write %s: %s", path, strerror(errno));
  }
  return GEN_OK;
}
