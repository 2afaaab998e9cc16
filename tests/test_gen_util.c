/* Helpers for the generator tests (see gen_test_util.h). */
#include "gen_test_util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen_out.h"

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  cr_assert_not_null(d);
  return d;
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *p = malloc(n);
  cr_assert_not_null(p);
  snprintf(p, n, "%s/%s", a, b);
  return p;
}

char *tu_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char *t = join(base && *base ? base : "/tmp", "fa2test.XXXXXX");
  cr_assert_not_null(mkdtemp(t), "mkdtemp failed");
  return t;
}

char *tu_write(const char *dir, const char *name, const char *text) {
  char *path = dir ? join(dir, name) : xstrdup(name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
  return path;
}

char *tu_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n > 0 ? (size_t)n + 1 : 1);
  cr_assert_not_null(buf);
  size_t k = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  buf[k] = 0;
  if (len) *len = k;
  return buf;
}

int tu_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

char *tu_repo_path(const char *rel) {
  char *abs = realpath(rel, NULL);
  cr_assert_not_null(abs, "%s not found (run the tests from the repository root)", rel);
  return abs;
}

static void drain(int fd, char **buf, size_t *len, size_t *cap) {
  if (*len + 4096 > *cap) *buf = realloc(*buf, *cap = (*cap + 4096) * 2);
  cr_assert_not_null(*buf);
  ssize_t k = read(fd, *buf + *len, *cap - *len - 1);
  if (k > 0) *len += (size_t)k;
  (*buf)[*len] = 0;
}

int tu_quick(void) {
  const char *q = getenv("FA2_TEST_QUICK");
  return q && !strcmp(q, "1");
}

tu_run tu_fa2(const char *cwd, const char *const *args) {
  const char *bin = getenv("FA2_BIN");
  cr_assert(bin && *bin, "FA2_BIN is not set (make test sets it)");
  char *abs = tu_repo_path(bin);
  const char *argv[64];
  int n = 0;
  argv[n++] = abs;
  for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
  argv[n] = NULL;
  tu_run r = tu_exec(cwd, argv);
  free(abs);
  return r;
}

tu_run tu_exec(const char *cwd, const char *const *argv) {
  int po[2], pe[2];
  cr_assert(pipe(po) == 0 && pipe(pe) == 0);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[0]);
    close(pe[0]);
    if (cwd && chdir(cwd) != 0) _exit(126);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  tu_run r = {0};
  size_t lo = 0, le = 0, co = 0, ce = 0;
  struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_fds = 2;
  r.out = calloc(1, co = 1);
  r.err = calloc(1, ce = 1);
  while (open_fds > 0 && poll(fds, 2, -1) > 0) {
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      size_t before = i ? le : lo;
      if (i)
        drain(pe[0], &r.err, &le, &ce);
      else
        drain(po[0], &r.out, &lo, &co);
      if ((i ? le : lo) == before) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

void tu_run_free(tu_run *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void add(buf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->cap) b->s = realloc(b->s, b->cap = (b->n + k + 1) * 2);
  cr_assert_not_null(b->s);
  memcpy(b->s + b->n, s, k + 1);
  b->n += k;
}

static int no_dots(const struct dirent *e) { return strcmp(e->d_name, ".") && strcmp(e->d_name, ".."); }

static void walk(const char *root, const char *rel, buf *b) {
  char *dir = *rel ? join(root, rel) : xstrdup(root);
  struct dirent **names;
  int n = scandir(dir, &names, no_dots, alphasort);
  for (int i = 0; i < n; i++) {
    char *r = *rel ? join(rel, names[i]->d_name) : xstrdup(names[i]->d_name);
    char *full = join(root, r);
    struct stat st;
    lstat(full, &st);
    if (S_ISDIR(st.st_mode)) {
      walk(root, r, b);
    } else {
      size_t len;
      char *data = tu_read(full, &len), h[GEN_HASH_LEN], line[PATH_MAX + 100];
      gen_hash(data ? data : "", data ? len : 0, h);
      snprintf(line, sizeof line, "%s %zu %s\n", r, len, h);
      add(b, line);
      free(data);
    }
    free(full);
    free(r);
    free(names[i]);
  }
  if (n >= 0) free(names);
  free(dir);
}

char *tu_tree_digest(const char *dir) {
  buf b = {0};
  add(&b, "");
  walk(dir, "", &b);
  return b.s;
}

char *tu_list_dir(const char *dir) {
  buf b = {0};
  add(&b, "");
  struct dirent **names;
  int n = scandir(dir, &names, no_dots, alphasort);
  for (int i = 0; i < n; i++) {
    if (i) add(&b, " ");
    add(&b, names[i]->d_name);
    free(names[i]);
  }
  if (n >= 0) free(names);
  return b.s;
}

gen_state *tu_open(const char *templates_dir) {
  gen_state *g = NULL;
  gen_err err;
  int rc = gen_open(&g, templates_dir, &err);
  cr_assert_eq(rc, GEN_OK, "gen_open: %s", err.msg);
  return g;
}
