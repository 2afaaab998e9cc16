/* rt_source: gen/gen.h behind a mutex, with fa2 status codes (see .h). */
#include "rt_source.h"

#include <stdio.h>
#include <string.h>

#include "fa2.h"

static const rt_source_ops *test_ops;

void rt_source_set_ops_for_tests(const rt_source_ops *ops) { test_ops = ops; }

void rt_source_init(rt_source *s) {
  pthread_mutex_init(&s->lock, NULL);
  s->g = NULL;
}

void rt_source_free(rt_source *s) {
  if (s->g) gen_close(s->g);
  s->g = NULL;
  pthread_mutex_destroy(&s->lock);
}

static int status_of(int gen_code) {
  switch (gen_code) {
  case GEN_OK: return FA2_OK;
  case GEN_ESPEC: return FA2_ERR_INVALID_ARGUMENT;
  case GEN_ETEMPLATE: return FA2_ERR_COMPILE;
  default: return FA2_ERR_INTERNAL;
  }
}

static int test_missing(char *err, size_t n) {
  snprintf(err, n, "generator function not available in this test");
  return FA2_ERR_INTERNAL;
}

/* Opens the generator on first use; caller holds s->lock. */
static int ensure_open(rt_source *s, char *err, size_t n) {
  if (s->g) return FA2_OK;
  gen_err ge = {0};
  int rc = gen_open(&s->g, NULL, &ge);
  if (rc != GEN_OK) {
    s->g = NULL;
    snprintf(err, n, "cannot open the kernel generator: %s", ge.msg);
    return status_of(rc);
  }
  return FA2_OK;
}

/* Runs fn(s->g, ..., &gen_err) on the opened generator under the lock. */
#define WITH_GEN(fn, ...)                                                         \
  do {                                                                            \
    pthread_mutex_lock(&s->lock);                                                 \
    int rc_ = ensure_open(s, err, n);                                             \
    gen_err ge_ = {0};                                                            \
    if (rc_ == FA2_OK && (rc_ = status_of(fn(s->g, __VA_ARGS__, &ge_))) != FA2_OK) \
      snprintf(err, n, "%s", ge_.msg);                                            \
    pthread_mutex_unlock(&s->lock);                                               \
    return rc_;                                                                   \
  } while (0)

int rt_source_complete(rt_source *s, gen_variant *v, const char *arch, char *err, size_t n) {
  if (test_ops)
    return test_ops->complete ? status_of(test_ops->complete(v, arch, err, n)) : test_missing(err, n);
  WITH_GEN(gen_variant_complete, v, arch);
}

int rt_source_from_name(rt_source *s, const char *name, gen_variant *v, char *err, size_t n) {
  if (test_ops)
    return test_ops->from_name ? status_of(test_ops->from_name(name, v, err, n))
                               : test_missing(err, n);
  WITH_GEN(gen_variant_from_name, name, v);
}

int rt_source_render(rt_source *s, const gen_variant *v, char **src, size_t *len, char *err,
                     size_t n) {
  *src = NULL;
  if (test_ops)
    return test_ops->render ? status_of(test_ops->render(v, src, len, err, n)) : test_missing(err, n);
  WITH_GEN(gen_render, v, src, len);
}

int rt_source_spec(rt_source *s, const char *path, gen_spec *out, char *err, size_t n) {
  memset(out, 0, sizeof *out);
  if (test_ops) return test_missing(err, n);
  WITH_GEN(gen_spec_load, path, out);
}

void rt_source_spec_free(gen_spec *spec) {
  gen_spec_free(spec);
}

const char *const *rt_source_nvrtc_options(void) {
  static const char *const none[] = {NULL};
  if (test_ops) return test_ops->nvrtc_options ? test_ops->nvrtc_options : none;
  return gen_nvrtc_options();
}

const char *rt_source_version(void) { return gen_version(); }
