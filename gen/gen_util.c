/* gen_util: error messages, embedded-file lookup and whole-file reads. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen_embed.h"
#include "gen_lua.h"

#define MAX_FILE_BYTES (64u << 20)

int gen_fail(gen_err *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

const gen_embedded_file *gen_embedded_find(const char *name) {
  for (const gen_embedded_file *f = gen_embedded_files; f->name; f++)
    if (!strcmp(f->name, name)) return f;
  return NULL;
}

int gen_read_file(const char *path, char **data, size_t *len, gen_err *err) {
  *data = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return gen_fail(err, GEN_EIO, "cannot read %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return gen_fail(err, GEN_EIO, "cannot read %s: not a regular file", path);
  }
  if ((unsigned long long)st.st_size > MAX_FILE_BYTES) {
    fclose(f);
    return gen_fail(err, GEN_EIO, "cannot read %s: larger than %u MiB", path, MAX_FILE_BYTES >> 20);
  }
  size_t size = (size_t)st.st_size;
  char *buf = malloc(size + 1);
  if (!buf) {
    fclose(f);
    return gen_fail(err, GEN_EINTERNAL, "out of memory reading %s", path);
  }
  size_t n = fread(buf, 1, size, f);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return gen_fail(err, GEN_EIO, "cannot read %s: read error", path);
  }
  buf[n] = 0;
  *data = buf;
  *len = n;
  return GEN_OK;
}
