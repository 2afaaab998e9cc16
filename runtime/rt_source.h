/* rt_source: the runtime's door to the embedded generator (gen/gen.h).
 *
 * The generator keeps a Lua state, which is not thread-safe: one state per
 * context, opened on first use, every call under the context's mutex.
 * Rendering takes milliseconds; compiles run outside the lock.
 * Errors come back as fa2 status codes with gen's message.
 */
#ifndef RT_SOURCE_H
#define RT_SOURCE_H
#include <pthread.h>
#include <stddef.h>

#include "gen.h"

typedef struct rt_source {
  pthread_mutex_t lock;
  gen_state *g;
} rt_source;

void rt_source_init(rt_source *s);
void rt_source_free(rt_source *s);

int rt_source_complete(rt_source *s, gen_variant *v, const char *arch, char *err, size_t n);
int rt_source_from_name(rt_source *s, const char *name, gen_variant *v, char *err, size_t n);
/* *src malloc'd, NUL-terminated. */
int rt_source_render(rt_source *s, const gen_variant *v, char **src, size_t *len, char *err,
                     size_t n);
/* path NULL: the embedded default spec. Free with rt_source_spec_free. */
int rt_source_spec(rt_source *s, const char *path, gen_spec *out, char *err, size_t n);
void rt_source_spec_free(gen_spec *spec);
/* gen_nvrtc_options(), gen_version() (or the test replacement). */
const char *const *rt_source_nvrtc_options(void);
const char *rt_source_version(void);

/* Test hook: a generator stand-in (NULL restores gen). Functions left NULL
 * fail with "not available in this test". */
typedef struct rt_source_ops {
  int (*complete)(gen_variant *v, const char *arch, char *err, size_t n);
  int (*from_name)(const char *name, gen_variant *v, char *err, size_t n);
  int (*render)(const gen_variant *v, char **src, size_t *len, char *err, size_t n);
  const char *const *nvrtc_options;
} rt_source_ops;
void rt_source_set_ops_for_tests(const rt_source_ops *ops);

#endif
