/* Fuzz target: the template engine (gen/engine.lua through gen_render).
 *
 * The input is the forward template: a --templates folder holds it as
 * fwd.cu.tpl next to the embedded common.cuh.tpl, bwd.cu.tpl and
 * fa2_params.h (so includes work), and one variant is rendered with a fresh
 * generator. Contracts checked besides the sanitizers: failure is
 * GEN_ETEMPLATE (or GEN_EINTERNAL for Lua running out of memory) with a
 * message; success gives a source of the reported length with no #include
 * directive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "gen.h"
#include "gen_embed.h"

static const char *const VARIANT = "fwd_bf16_d128_causal_m128n64w4s2_robust_b2_e1em3";
static char tpl_path[400];

static void setup(void) {
  const char *dir = fz_tmpdir();
  for (const gen_embedded_file *f = gen_embedded_files; f->name; f++) {
    if (strncmp(f->name, "templates/", 10) != 0) continue;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, f->name + 10);
    fz_write(path, f->data, f->len);
  }
  snprintf(tpl_path, sizeof tpl_path, "%s/fwd.cu.tpl", dir);
}

/* An #include directive at the start of a line (after blanks), as the
 * engine's own check reads it (Lua's %s: space, \t, \n, \v, \f, \r). */
static int has_include(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && strchr(" \t\v\f\r", s[j]) && s[j]) j++;
    if (j < n && s[j] == '#') {
      j++;
      while (j < n && strchr(" \t\v\f\r", s[j]) && s[j]) j++;
      if (n - j >= 7 && !memcmp(s + j, "include", 7)) return 1;
    }
    const char *nl = memchr(s + i, '\n', n - i);
    if (!nl) break;
    i = (size_t)(nl - s) + 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!tpl_path[0]) setup();
  fz_write(tpl_path, data, size);
  gen_state *g;
  gen_err err = {0};
  if (gen_open(&g, fz_tmpdir(), &err) != GEN_OK) fz_fail("gen_open: %s", err.msg);
  fz_cover(g);
  gen_variant v;
  if (gen_variant_from_name(g, VARIANT, &v, &err) != GEN_OK) fz_fail("%s: %s", VARIANT, err.msg);
  char *src = NULL;
  size_t len = 0;
  int rc = gen_render(g, &v, &src, &len, &err);
  if (rc == GEN_OK) {
    if (!src || src[len] != 0) fz_fail("source not NUL-terminated at its length %zu", len);
    if (has_include(src, len)) fz_fail("rendered source has an #include");
  } else {
    if (rc != GEN_ETEMPLATE && rc != GEN_EINTERNAL) fz_fail("code %d: %s", rc, err.msg);
    if (src) fz_fail("failed render returned a source");
    if (!err.msg[0]) fz_fail("template error without a message");
  }
  free(src);
  gen_close(g);
  return 0;
}
