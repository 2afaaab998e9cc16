/* rt_build: ahead-of-time compilation of a spec's variants with NVRTC,
 * in parallel, with the resource report of ptxas -v per variant and arch.
 *
 * Output (rt_build_write), next to gen_out.h's tree:
 *   DIR/<arch>/<name>.cubin
 *   DIR/<arch>/build.json   fa2gen and NVRTC versions, NVRTC options, and per
 *                           variant: source and cubin hashes, registers,
 *                           stack, spills, shared memory (see ARCHITECTURE.md)
 */
#ifndef RT_BUILD_H
#define RT_BUILD_H
#include "gen.h"
#include "gen_out.h"
#include "rt_nvrtc.h"

typedef struct rt_build_item {
  int variant, arch; /* indices into the spec's variants and the build's arches */
  int ok;            /* compiled; else err says why */
  /* Over the variant's entries: max registers, stack and static smem; summed spills. */
  int registers, stack_bytes, spill_store_bytes, spill_load_bytes, static_smem_bytes;
  rt_ptxas_info entry[GEN_MAX_ENTRIES];
  double compile_ms;
  rt_blob cubin;
  char cubin_hash[GEN_HASH_LEN];
  char err[1024];
} rt_build_item;

typedef struct rt_build {
  int n_arch;
  char arch[8][16];
  int n_items;           /* n_variants * n_arch, variant-major */
  rt_build_item *items;
  int failed;            /* items that did not compile */
  int spilling;          /* items with spills or a stack frame */
  int nvrtc_major, nvrtc_minor;
  double wall_ms;
} rt_build;

/* Called after each compile (from worker threads, one at a time). */
typedef void (*rt_build_progress)(void *user, int done, int total, const char *name,
                                  const char *arch);

/* Compiles every variant of s (sources in r) for each arch with `jobs`
 * threads. A variant that fails to compile is recorded in its item (and
 * counted in failed), not returned as an error: errors are for NVRTC
 * missing, bad arguments, out of memory. */
int rt_build_run(const gen_spec *s, const gen_rendered *r, const char *const *arch, int n_arch,
                 int jobs, rt_build_progress progress, void *user, rt_build *out,
                 gen_err *err);

/* Writes DIR/<arch>/ for every arch of b (each folder replaced atomically;
 * other arches' folders are left alone). Needs every item compiled. */
int rt_build_write(const gen_spec *s, const gen_rendered *r, const rt_build *b,
                   const char *dir, gen_err *err);

/* build.json of one arch of b (malloc'd text, ends with a newline). */
int rt_build_json(const gen_spec *s, const gen_rendered *r, const rt_build *b, int arch,
                  char **json, gen_err *err);

void rt_build_free(rt_build *b);

#endif
