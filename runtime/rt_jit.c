/* rt_jit: AOT -> disk cache -> NVRTC for one variant (see rt_jit.h). */
#include "rt_jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fa2.h"
#include "rt_key.h"
#include "rt_nvrtc.h"

static rt_compile_fn test_compiler;

void rt_jit_set_compiler_for_tests(rt_compile_fn fn) { test_compiler = fn; }

double rt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const char *rt_origin_name(int origin) {
  switch (origin) {
  case RT_FROM_MEMORY: return "memory";
  case RT_FROM_AOT: return "AOT";
  case RT_FROM_DISK: return "disk cache";
  default: return "NVRTC";
  }
}

typedef struct build_job {
  const rt_jit_env *env;
  const gen_variant *v;
  const char *src;
  double ms;
} build_job;

static int nvrtc_build(void *user, rt_blob *out, char *err, size_t errlen) {
  build_job *job = user;
  char program[200];
  snprintf(program, sizeof program, "%s.cu", job->v->name);
  const char *const *opts = rt_source_nvrtc_options();
  const char *target = gen_compile_arch(job->v, job->env->arch);
  double t0 = rt_now_ms();
  int rc;
  if (test_compiler) {
    rc = test_compiler(job->src, program, target, opts, out, err, errlen);
  } else {
    char *log = NULL;
    rc = rt_nvrtc_compile(job->src, program, target, opts, out, &log, err, errlen);
    rt_ptxas_info info;
    if (rc == 0 && job->v->n_entries > 0 && rt_ptxas_parse(log, job->v->entries[0], &info) == 0)
      rt_logf(job->env->log, FA2_LOG_DEBUG,
              "%s: %d registers, %d bytes stack, %d/%d bytes spill stores/loads",
              job->v->name, info.registers, info.stack_bytes, info.spill_store_bytes,
              info.spill_load_bytes);
    free(log);
  }
  job->ms = rt_now_ms() - t0;
  return rc == 0 ? FA2_OK : FA2_ERR_COMPILE;
}

int rt_jit_cubin(const rt_jit_env *env, const gen_variant *v, rt_blob *cubin, int *origin,
                 double *compile_ms, char *err, size_t errlen) {
  cubin->data = NULL;
  cubin->size = 0;
  *compile_ms = 0;
  char *src = NULL;
  size_t len = 0;
  int rc = rt_source_render(env->source, v, &src, &len, err, errlen);
  if (rc != FA2_OK) return rc;

  char hash[33];
  rt_hash128_hex(src, len, hash);
  if (rt_aot_find(env->aot, v->name, hash, cubin)) {
    *origin = RT_FROM_AOT;
    free(src);
    return FA2_OK;
  }

  char nverr[2048];
  if (rt_nvrtc_load(env->nvrtc_dirs, nverr, sizeof nverr) != 0) {
    snprintf(err, errlen, "%s needs compiling for %s, but %s", v->name, env->arch, nverr);
    free(src);
    return FA2_ERR_NO_NVRTC;
  }
  rt_key_inputs in = {src, len, rt_source_nvrtc_options(), 0, 0, gen_compile_arch(v, env->arch),
                      rt_source_version()};
  rt_nvrtc_version(&in.nvrtc_major, &in.nvrtc_minor);
  rt_key key = rt_key_compute(&in);
  build_job job = {env, v, src, 0};
  int built = 0;
  rc = rt_dc_get_or_build(env->dc, key, nvrtc_build, &job, cubin, &built, err, errlen);
  free(src);
  if (rc != FA2_OK) return rc;
  *origin = built ? RT_FROM_NVRTC : RT_FROM_DISK;
  *compile_ms = job.ms;
  return FA2_OK;
}
