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
 * As `fa2 gen` / `fa2 build` write them: manifest.json has an array
 * "variants" of objects with "name" and "source_hash"; build.json has an
 * object "kernels" keyed by name with "source_hash", "cubin" (file name) and
 * "cubin_hash" (checked when present). Hashes are "xxh3_128:" and 32 hex
 * digits (XXH3-128 canonical, high half first). The reader is lenient about
 * shapes (array or object keyed by name under "variants", "kernels" or
 * "cubins"; "hash" or "content_hash"; the prefix optional) and the per-arch
 * file may also be out/<arch>/manifest.json or out/<arch>.json.
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
