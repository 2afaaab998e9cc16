/* Fuzz target: spec files (gen/spec.lua through gen_spec_load).
 *
 * The input is the text of a spec file. Contracts checked besides the
 * sanitizers: a failed load is GEN_ESPEC (or GEN_EINTERNAL for Lua running
 * out of memory) with a one-line message naming the file; a loaded spec has 1..8
 * arches and at least one variant, and every variant's name parses back
 * (gen_variant_from_name) to the same parameters. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "gen.h"

enum { MAX_CHECKED = 32 }; /* name round trips per input (each is a Lua call) */

static int same_variant(const gen_variant *a, const gen_variant *b) {
  return a->pass == b->pass && a->dtype == b->dtype && a->head_dim == b->head_dim &&
         a->causal == b->causal && a->block_m == b->block_m && a->block_n == b->block_n &&
         a->warps == b->warps && a->stages == b->stages && a->stab == b->stab &&
         a->beta == b->beta && a->eps == b->eps && a->threads == b->threads &&
         a->smem_bytes == b->smem_bytes && a->n_entries == b->n_entries &&
         !strcmp(a->name, b->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[300];
  snprintf(path, sizeof path, "%s/s.lua", fz_tmpdir());
  fz_write(path, data, size);

  gen_state *g;
  gen_err err = {0};
  if (gen_open(&g, NULL, &err) != GEN_OK) fz_fail("gen_open: %s", err.msg);
  fz_cover(g);
  gen_spec s;
  int rc = gen_spec_load(g, path, &s, &err);
  if (rc != GEN_OK) {
    if (rc != GEN_ESPEC && rc != GEN_EINTERNAL) fz_fail("code %d: %s", rc, err.msg);
    if (strpbrk(err.msg, "\n\r")) fz_fail("message is not one line: %s", err.msg);
    if (rc == GEN_ESPEC && strncmp(err.msg, path, strlen(path)) != 0)
      fz_fail("spec error without the file name: %s", err.msg);
    if (s.variants || s.n_variants) fz_fail("failed load left %d variants", s.n_variants);
  } else {
    if (s.n_variants < 1) fz_fail("a loaded spec has no variants");
    if (s.n_arch < 1 || s.n_arch > 8) fz_fail("%d arches", s.n_arch);
    for (int i = 0; i < s.n_variants && i < MAX_CHECKED; i++) {
      const gen_variant *v = &s.variants[i];
      gen_variant back;
      if (gen_variant_from_name(g, v->name, &back, &err) != GEN_OK)
        fz_fail("variant %d name '%s' does not parse: %s", i, v->name, err.msg);
      if (!same_variant(v, &back)) fz_fail("variant %d '%s' reads back as '%s'", i, v->name, back.name);
    }
  }
  gen_spec_free(&s);
  gen_close(g);
  return 0;
}
