/* Fuzz target: the tuning-database reader (runtime/rt_tuning.c) and what
 * the runtime does with its entries (rt_select_variant, which hands the
 * tiles and beta/eps to the generator's checks).
 *
 * The input is the database file, loaded for sm_90. For every key a launch
 * can ask for ({fwd,bwd}_{bf16,fp16}_d{32..256}[_causal]) that the
 * database has, the variant is selected in the tuned mode and in `none`,
 * without a length and at three lengths (by_seqlen).
 * Contracts checked besides the sanitizers: a selection either fails with
 * FA2_ERR_INVALID_ARGUMENT / FA2_ERR_UNSUPPORTED and a message, or gives a
 * completed variant that keeps the request's shape, has sane derived
 * fields, whose name parses back to the same variant, and that uses the
 * tuned tiles unless the generator rejects them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2.h"
#include "fuzz_util.h"
#include "gen.h"
#include "rt_select.h"
#include "rt_source.h"
#include "rt_tuning.h"

static const int HEAD_DIMS[] = {32, 64, 96, 128, 160, 192, 224, 256};
static const int LEN_CLASSES[] = {0, 80, 100, 120}; /* none, 1024, ~5.8k, 32k */

/* Tuned tiles may only be passed over when the generator rejects them (the
 * fallback to the built-in tiles) or the mode's own key decided. */
static void check_tiles(rt_source *src, const rt_tuning *t, const rt_request *r,
                        const rt_tuning_entry *e, const gen_variant *v) {
  if (!e->block_m || (v->block_m == e->block_m && v->block_n == e->block_n &&
                      v->warps == e->warps && v->stages == e->stages))
    return;
  char key[80];
  rt_tuning_entry mode;
  rt_tuning_key_for_mode(r, v->stab, key, sizeof key);
  if (r->pass == GEN_PASS_FWD && rt_tuning_find(t, key, rt_request_seqlen(r), &mode) && mode.block_m)
    return;
  gen_variant tuned = *v;
  tuned.block_m = e->block_m, tuned.block_n = e->block_n, tuned.warps = e->warps;
  tuned.stages = e->stages;
  char err[2048];
  if (rt_source_complete(src, &tuned, "sm_90", err, sizeof err) == FA2_OK)
    fz_fail("%s ignores valid tuned tiles m%dn%dw%ds%d", v->name, e->block_m, e->block_n,
            e->warps, e->stages);
}

static void check(rt_source *src, const rt_request *r, const rt_tuning_entry *e, int rc,
                  const gen_variant *v, const char *err) {
  if (rc != FA2_OK) {
    if (rc != FA2_ERR_INVALID_ARGUMENT && rc != FA2_ERR_UNSUPPORTED)
      fz_fail("selection failed with status %d: %s", rc, err);
    if (!err[0]) fz_fail("selection failed without a message");
    return;
  }
  if (v->pass != r->pass || v->dtype != r->dtype || v->head_dim != r->head_dim ||
      v->causal != r->causal)
    fz_fail("%s does not serve the request", v->name);
  if (v->threads != 32 * v->warps || v->smem_bytes <= 0 || v->n_entries < 1 ||
      v->n_entries > GEN_MAX_ENTRIES || v->block_m <= 0 || v->block_n <= 0)
    fz_fail("%s: threads %d, smem %d, %d entries", v->name, v->threads, v->smem_bytes, v->n_entries);
  if (v->stab != GEN_STAB_NONE && !(v->beta > 1 && v->eps > 0))
    fz_fail("%s: beta %g, eps %g", v->name, v->beta, v->eps);
  gen_variant back;
  char err2[2048];
  if (rt_source_from_name(src, v->name, &back, err2, sizeof err2) != FA2_OK)
    fz_fail("'%s' does not parse: %s", v->name, err2);
  if (strcmp(back.name, v->name) || back.block_m != v->block_m || back.beta != v->beta ||
      back.eps != v->eps || back.stab != v->stab)
    fz_fail("'%s' reads back as '%s'", v->name, back.name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static rt_source src;
  static int ready;
  if (!ready) { /* one generator for the process: selection is a pure function */
    rt_source_init(&src);
    gen_err ge;
    if (gen_open(&src.g, NULL, &ge) != GEN_OK) fz_fail("gen_open: %s", ge.msg);
    fz_cover(src.g);
    ready = 1;
  }
  char path[300];
  snprintf(path, sizeof path, "%s/tuning.json", fz_tmpdir());
  fz_write(path, data, size);
  rt_log quiet = {FA2_LOG_QUIET, NULL, NULL};
  rt_tuning *t = rt_tuning_load(path, NULL, 0, &quiet);
  for (int pass = 0; t && pass < 2; pass++)
    for (int dtype = 0; dtype < 2; dtype++)
      for (size_t d = 0; d < sizeof HEAD_DIMS / sizeof *HEAD_DIMS; d++)
        for (int causal = 0; causal < 2; causal++)
          for (size_t lc = 0; lc < sizeof LEN_CLASSES / sizeof *LEN_CLASSES; lc++) {
            rt_request r = {.pass = pass, .dtype = dtype, .head_dim = HEAD_DIMS[d], .causal = causal,
                            .stab = FA2_STAB_TUNED, .len_class = LEN_CLASSES[lc]};
            char key[64];
            rt_request_tuning_key(&r, key, sizeof key);
            rt_tuning_entry e;
            if (!rt_tuning_find(t, key, rt_request_seqlen(&r), &e)) continue;
            for (int i = pass; i < 2; i++) { /* a backward is always asked for as `none` */
              r.stab = i ? FA2_STAB_NONE : FA2_STAB_TUNED;
              gen_variant v;
              char err[2048] = "";
              int rc = rt_select_variant(&src, t, &r, "sm_90", &v, err, sizeof err);
              check(&src, &r, &e, rc, &v, err);
              if (rc == FA2_OK) check_tiles(&src, t, &r, &e, &v);
            }
          }
  rt_tuning_free(t);
  return 0;
}
