/* rt_aot: cubins compiled ahead of time by `fa2 build`, never used stale.
 *
 * What the runtime reads from an out/ directory:
 *   out/manifest.json        (fa2 gen) each variant's name and source hash
 *   out/<arch>/build.json    (fa2 build) each cubin's name and the source hash
 *                            it was compiled from (optionally its own hash)
 *   out/<arch>/<name>.cubin
 * A cubin is used only when the source the generator renders now hashes to
 * the manifest's hash and to the build record's: a regenerated source with
 * an old cubin, or a cubin from another fa2gen, falls through to the disk
 * cache and NVRTC.
 *
 * Accepted shapes (the generator's files are the authority; this reader is
 * lenient): a top-level array "variants" (or "kernels", "cubins") of
 * objects with "name", or an object keyed by name; the hash in
 * "source_hash" (or "hash", "content_hash"), as 32 hex digits of xxh3-128
 * with an optional "xxh3-128:" prefix; an optional "cubin_hash" likewise.
 * The per-arch file may also be out/<arch>/manifest.json or out/<arch>.json.
 */
#ifndef RT_AOT_H
#define RT_AOT_H
#include "rt_log.h"
#include "rt_nvrtc.h" /* rt_blob */

typedef struct rt_aot rt_aot;

/* NULL when dir is NULL/empty or holds no usable manifest (logged). */
rt_aot *rt_aot_open(const char *dir, const char *arch, const rt_log *log);
void rt_aot_free(rt_aot *a);

/* 1 and the cubin when an up-to-date cubin of name exists; 0 otherwise
 * (why at info level). source_hash: 32 hex digits (rt_hash128_hex). */
int rt_aot_find(rt_aot *a, const char *name, const char *source_hash, rt_blob *cubin);

#endif
