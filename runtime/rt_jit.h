/* rt_jit: the cubin of a variant, from the cheapest level that has it:
 * AOT out/ directory -> disk cache -> NVRTC (stored to the disk cache).
 * No GPU needed: loading the cubin into a module is rt_kernel's job. */
#ifndef RT_JIT_H
#define RT_JIT_H
#include "gen.h"
#include "rt_aot.h"
#include "rt_diskcache.h"
#include "rt_log.h"
#include "rt_source.h"

enum { RT_FROM_MEMORY = 0, RT_FROM_AOT = 1, RT_FROM_DISK = 2, RT_FROM_NVRTC = 3 };

typedef struct rt_jit_env {
  const char *arch;                /* "sm_90" */
  rt_source *source;
  rt_aot *aot;                     /* NULL: none */
  rt_diskcache *dc;
  const char *const *nvrtc_dirs;   /* extra NVRTC folders, NULL-terminated or NULL */
  const rt_log *log;
} rt_jit_env;

/* Returns an fa2 status; on success *cubin (free with rt_blob_free), where
 * it came from, and the NVRTC time (0 unless compiled). */
int rt_jit_cubin(const rt_jit_env *env, const gen_variant *v, rt_blob *cubin, int *origin,
                 double *compile_ms, char *err, size_t errlen);

const char *rt_origin_name(int origin); /* "memory", "AOT", "disk cache", "NVRTC" */
double rt_now_ms(void);                 /* monotonic clock */

/* Test hook: replaces the NVRTC compile (NULL restores it). */
typedef int (*rt_compile_fn)(const char *src, const char *program, const char *arch,
                             const char *const *opts, rt_blob *cubin, char *err,
                             size_t errlen);
void rt_jit_set_compiler_for_tests(rt_compile_fn fn);

#endif
