/* Golden sources: every variant of specs/full.lua renders to the kernel code
 * recorded in tests/golden/full_spec_kernels.txt (one "name xxh3-128" line per
 * variant, the source hashed without the pasted fa2_params.h, which grows with
 * every run-time feature). A feature added as a variant flag (varlen, window,
 * alibi...) must leave this file unchanged: a variant without the flag is the
 * kernel it was. A deliberate template change updates it:
 *
 *    FA2_UPDATE_GOLDEN=1 bin/fa2_tests --filter 'golden/full_spec*'
 *
 * and the diff of the file shows which variants the change touched. A change
 * of the text only (a shared include, a dead branch no longer rendered) shows
 * that it kept the machine code with tools/same_machine_code.py. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_out.h"
#include "gen_test_util.h"

#define GOLDEN "tests/golden/full_spec_kernels.txt"

/* The source without the fa2_params.h block (#ifndef FA2_PARAMS_H .. #endif). */
static void strip_params(char *src) {
  char *a = strstr(src, "#ifndef FA2_PARAMS_H");
  char *b = a ? strstr(a, "\n#endif") : NULL;
  if (!a || !b) return;
  b += strlen("\n#endif");
  memmove(a, b, strlen(b) + 1);
}

Test(golden, full_spec_kernels_are_unchanged) {
  gen_err err;
  gen_state *g;
  cr_assert_eq(gen_open(&g, NULL, &err), GEN_OK, "%s", err.msg);
  gen_spec s;
  cr_assert_eq(gen_spec_load(g, "specs/full.lua", &s, &err), GEN_OK, "%s", err.msg);
  size_t cap = (size_t)s.n_variants * 256 + 1, len = 0;
  char *lines = malloc(cap);
  cr_assert(lines);
  for (int i = 0; i < s.n_variants; i++) {
    char *src;
    size_t n;
    cr_assert_eq(gen_render(g, &s.variants[i], &src, &n, &err), GEN_OK, "%s", err.msg);
    cr_assert(strstr(src, "#ifndef FA2_PARAMS_H"), "%s has no params block", s.variants[i].name);
    strip_params(src);
    char hash[GEN_HASH_LEN];
    gen_hash(src, strlen(src), hash);
    len += (size_t)snprintf(lines + len, cap - len, "%s %s\n", s.variants[i].name, hash);
    free(src);
  }
  gen_spec_free(&s);
  gen_close(g);
  if (getenv("FA2_UPDATE_GOLDEN")) {
    FILE *f = fopen(GOLDEN, "w");
    cr_assert(f && fwrite(lines, 1, len, f) == len && fclose(f) == 0, "cannot write " GOLDEN);
  }
  size_t glen;
  char *want = tu_read(GOLDEN, &glen);
  cr_assert(want, GOLDEN " is missing: FA2_UPDATE_GOLDEN=1 bin/fa2_tests --filter golden/full_spec*");
  /* name the first variant whose kernel changed */
  const char *a = lines, *b = want;
  while (*a && *b && *a == *b) a++, b++;
  if (*a || *b) {
    const char *line = a;
    while (line > lines && line[-1] != '\n') line--;
    cr_assert_fail("kernel source changed from " GOLDEN " at: %.120s (run FA2_UPDATE_GOLDEN=1 ... if "
            "the change is meant)",
            line);
  }
  free(want);
  free(lines);
}
