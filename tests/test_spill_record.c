/* Spill records (spill_record.h): reading, writing, lookups, and every way a
 * record file can be malformed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_test_util.h"
#include "rt_nvrtc.h"
#include "spill_record.h"

void sr_compiler(char *buf, size_t len) {
  int major = 0, minor = 0;
  rt_nvrtc_version(&major, &minor);
  size_t n = (size_t)snprintf(buf, len, "nvrtc %d.%d", major, minor);
  for (const char *const *o = gen_nvrtc_options(); *o && n < len; o++)
    n += (size_t)snprintf(buf + n, len - n, " %s", *o);
}

static int fail(char *why, size_t whylen, const char *path, int line, const char *what) {
  snprintf(why, whylen, "%s:%d: %s", path, line, what);
  return -1;
}

int sr_read(const char *path, sr_record *r, char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  FILE *f = fopen(path, "r");
  if (!f) return fail(why, whylen, path, 0, "cannot open it");
  char line[1024];
  int no = 0, cap = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    no++;
    size_t n = strlen(line);
    if (!n || line[n - 1] != '\n') {
      rc = fail(why, whylen, path, no, "line too long or not ended");
      break;
    }
    line[--n] = 0;
    if (line[0] == '#' || !line[0]) continue;
    if (!strncmp(line, "compiler ", 9)) {
      if (r->compiler[0]) rc = fail(why, whylen, path, no, "a second compiler line");
      else snprintf(r->compiler, sizeof r->compiler, "%.250s", line + 9);
      continue;
    }
    if (!r->compiler[0]) {
      rc = fail(why, whylen, path, no, "a row before the compiler line");
      break;
    }
    if (r->n == cap) {
      cap = cap ? 2 * cap : 256;
      sr_row *grown = realloc(r->rows, (size_t)cap * sizeof *grown);
      cr_assert_not_null(grown);
      r->rows = grown;
    }
    sr_row *w = &r->rows[r->n];
    int used = -1;
    if (sscanf(line, "%159s %15s %47s %d %d %d %d%n", w->name, w->arch, w->hash, &w->registers,
               &w->spill_stores, &w->spill_loads, &w->stack, &used) != 7 || line[used])
      rc = fail(why, whylen, path, no, "not \"name arch hash registers spill-stores spill-loads stack\"");
    else if (w->registers <= 0 || w->spill_stores < 0 || w->spill_loads < 0 || w->stack < 0)
      rc = fail(why, whylen, path, no, "registers must be positive, spills and stack not negative");
    else if (sr_find(r, w->name, w->arch, NULL))
      rc = fail(why, whylen, path, no, "a second row for this variant and arch");
    else
      r->n++;
  }
  fclose(f);
  if (!rc && !r->compiler[0]) rc = fail(why, whylen, path, no, "no compiler line");
  if (rc) sr_free(r);
  return rc;
}

int sr_write(const char *path, const char *compiler, const sr_row *rows, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "# ptxas's resources of every variant of a shipped spec, per arch (tests/spill_record.h):\n"
             "# name arch source-hash registers spill-stores spill-loads stack.\n"
             "# Rewritten by CUDA_CACHE_DISABLE=1 FA2_UPDATE_GOLDEN=1 bin/fa2_tests --filter 'build/*spec*'\n"
             "compiler %s\n",
          compiler);
  for (int i = 0; i < n; i++)
    fprintf(f, "%s %s %s %d %d %d %d\n", rows[i].name, rows[i].arch, rows[i].hash, rows[i].registers,
            rows[i].spill_stores, rows[i].spill_loads, rows[i].stack);
  return fclose(f) == 0 ? 0 : -1;
}

const sr_row *sr_find(const sr_record *r, const char *name, const char *arch, const char *hash) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->rows[i].name, name) && !strcmp(r->rows[i].arch, arch))
      return !hash || !strcmp(r->rows[i].hash, hash) ? &r->rows[i] : NULL;
  return NULL;
}

void sr_free(sr_record *r) {
  free(r->rows);
  memset(r, 0, sizeof *r);
}

/* ---- tests ---------------------------------------------------------------------- */

static const sr_row ROWS[] = {
    {"fwd_a", "sm_80", "xxh3_128:aa", 96, 0, 0, 0},
    {"fwd_a", "sm_90", "xxh3_128:ab", 128, 0, 0, 0},
    {"bwd_b", "sm_90", "xxh3_128:bb", 255, 8, 4, 16},
};

Test(spill_record, written_rows_read_back) {
  char *t = tu_tmpdir(), *path = tu_write(t, "r.txt", "");
  cr_assert_eq(sr_write(path, "nvrtc 13.0 --std=c++17", ROWS, 3), 0);
  sr_record r;
  char why[512];
  cr_assert_eq(sr_read(path, &r, why, sizeof why), 0, "%s", why);
  cr_expect_str_eq(r.compiler, "nvrtc 13.0 --std=c++17");
  cr_assert_eq(r.n, 3);
  for (int i = 0; i < 3; i++) {
    const sr_row *a = &r.rows[i], *b = &ROWS[i];
    cr_expect(!strcmp(a->name, b->name) && !strcmp(a->arch, b->arch) && !strcmp(a->hash, b->hash) &&
                  a->registers == b->registers && a->spill_stores == b->spill_stores &&
                  a->spill_loads == b->spill_loads && a->stack == b->stack,
              "row %d: %s %s %s %d %d %d %d", i, a->name, a->arch, a->hash, a->registers, a->spill_stores,
              a->spill_loads, a->stack);
  }
  const sr_row *b = sr_find(&r, "bwd_b", "sm_90", "xxh3_128:bb");
  cr_expect(b && b->registers == 255 && b->spill_stores == 8 && b->spill_loads == 4 && b->stack == 16);
  cr_expect_null(sr_find(&r, "bwd_b", "sm_90", "xxh3_128:other"), "another source is not recorded");
  cr_expect_null(sr_find(&r, "bwd_b", "sm_80", NULL), "another arch is not recorded");
  cr_expect_not_null(sr_find(&r, "fwd_a", "sm_80", NULL));
  sr_free(&r);
  free(path), free(t);
}

static void expect_malformed(const char *text, const char *said) {
  char *t = tu_tmpdir(), *path = tu_write(t, "r.txt", text);
  sr_record r;
  char why[512] = "";
  cr_expect_eq(sr_read(path, &r, why, sizeof why), -1, "%s read", text);
  cr_expect(strstr(why, said), "%s: said %s, not %s", text, why, said);
  cr_expect(r.n == 0 && !r.rows, "%s: rows left", text);
  free(path), free(t);
}

Test(spill_record, malformed_files_are_refused_with_the_line) {
  expect_malformed("", ":0: no compiler line");
  expect_malformed("# c\nfwd_a sm_80 h 96 0 0 0\n", ":2: a row before the compiler line");
  expect_malformed("compiler x\ncompiler y\n", ":2: a second compiler line");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 0\n", ":2: not \"name arch");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 0 0 7\n", ":2: not \"name arch");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 0 0x\n", ":2: not \"name arch");
  expect_malformed("compiler x\nfwd_a sm_80 h 0 0 0 0\n", ":2: registers must be positive");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 -1 0\n", ":2: registers must be positive");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 0 0\nfwd_a sm_80 g 90 0 0 0\n", ":3: a second row");
  expect_malformed("compiler x\nfwd_a sm_80 h 96 0 0 0", ":2: line too long or not ended");
  char *t = tu_tmpdir(), *gone = tu_write(t, "absent", "");
  cr_assert_eq(remove(gone), 0);
  sr_record r;
  char why[512];
  cr_expect_eq(sr_read(gone, &r, why, sizeof why), -1);
  cr_expect(strstr(why, "absent:0: cannot open it"), "%s", why);
  free(gone), free(t);
}

Test(spill_record, the_compiler_line_names_nvrtc_and_the_options) {
  char why[512], line[256];
  cr_assert_eq(rt_nvrtc_load(NULL, why, sizeof why), 0, "%s", why);
  sr_compiler(line, sizeof line);
  int major, minor;
  rt_nvrtc_version(&major, &minor);
  char want[64];
  snprintf(want, sizeof want, "nvrtc %d.%d --std=c++17 -lineinfo -DNDEBUG", major, minor);
  cr_expect_str_eq(line, want);
}
