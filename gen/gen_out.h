/* gen_out: the output tree of `fa2 gen` (layout in ARCHITECTURE.md):
 *
 *   DIR/manifest.json      every variant: name, entries, parameters, source, hash
 *   DIR/src/<name>.cu      one self-contained CUDA source per variant
 *
 * plus, from `fa2 build` (runtime/rt_build.h), DIR/<arch>/<name>.cubin and
 * DIR/<arch>/build.json. Same spec => byte-identical files (no timestamps).
 */
#ifndef GEN_OUT_H
#define GEN_OUT_H
#include <stddef.h>

#include "gen.h"

/* Content hashes, as written in manifest.json and build.json:
 * "xxh3_128:" and 32 lower-case hex digits (XXH3 128-bit, canonical order). */
#define GEN_HASH_LEN 48
void gen_hash(const void *data, size_t len, char out[GEN_HASH_LEN]);

/* The sources of a spec's variants, rendered once (index = variant index). */
typedef struct gen_rendered {
  int n;
  char **src;
  size_t *len;
  char (*hash)[GEN_HASH_LEN];
} gen_rendered;

int gen_render_all(gen_state *g, const gen_spec *s, gen_rendered *out, gen_err *err);
void gen_rendered_free(gen_rendered *r);

/* manifest.json's text (malloc'd, ends with a newline). */
int gen_manifest_json(const gen_spec *s, const gen_rendered *r, char **json, gen_err *err);

/* Writes DIR (sources + manifest) into a temporary sibling and renames it
 * into place, so a failure leaves DIR as it was. DIR must be absent, empty,
 * or an earlier output (it holds manifest.json); it is replaced whole, any
 * cubin folders with it (they may not match the new sources). */
int gen_write_tree(const gen_spec *s, const gen_rendered *r, const char *dir, gen_err *err);

/* 1 when DIR/manifest.json is exactly what s and r give (DIR up to date). */
int gen_tree_current(const gen_spec *s, const gen_rendered *r, const char *dir);

/* Relative path of a variant's source inside DIR: "src/<name>.cu". */
void gen_source_path(const gen_variant *v, char *out, size_t cap);

#endif
