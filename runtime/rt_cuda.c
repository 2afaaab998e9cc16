/* rt_cuda: the CUDA driver API through dlopen (see rt_cuda.h). */
#include "rt_cuda.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2.h"
#include "rt_error.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_cuda_api api;
static int load_state; /* 0 not tried, 1 loaded, -1 failed */
static char load_error[512];
static const char *library_override;

/* Versioned names first: the plain names of these are the pre-CUDA-4 ABI. */
#define SYMBOLS(X)                                                                 \
  X(cuInit, "cuInit") X(cuDriverGetVersion, "cuDriverGetVersion")                  \
  X(cuDeviceGetCount, "cuDeviceGetCount") X(cuDeviceGet, "cuDeviceGet")            \
  X(cuDeviceGetName, "cuDeviceGetName")                                            \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                                  \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                                       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                          \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                     \
  X(cuCtxGetCurrent, "cuCtxGetCurrent") X(cuCtxSetCurrent, "cuCtxSetCurrent")      \
  X(cuCtxSynchronize, "cuCtxSynchronize")                                          \
  X(cuModuleLoadData, "cuModuleLoadData") X(cuModuleUnload, "cuModuleUnload")      \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                    \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                      \
  X(cuFuncGetAttribute, "cuFuncGetAttribute") X(cuLaunchKernel, "cuLaunchKernel")  \
  X(cuMemAlloc, "cuMemAlloc_v2") X(cuMemFree, "cuMemFree_v2")                      \
  X(cuMemGetInfo, "cuMemGetInfo_v2") X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")            \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2") X(cuMemsetD8, "cuMemsetD8_v2")                \
  X(cuMemsetD16, "cuMemsetD16_v2") X(cuMemsetD32, "cuMemsetD32_v2")                \
  X(cuStreamCreate, "cuStreamCreate") X(cuStreamDestroy, "cuStreamDestroy_v2")     \
  X(cuStreamSynchronize, "cuStreamSynchronize") X(cuStreamQuery, "cuStreamQuery")     \
  X(cuStreamIsCapturing, "cuStreamIsCapturing")                                    \
  X(cuEventCreate, "cuEventCreate") X(cuEventDestroy, "cuEventDestroy_v2")         \
  X(cuEventRecord, "cuEventRecord") X(cuEventSynchronize, "cuEventSynchronize")    \
  X(cuEventElapsedTime, "cuEventElapsedTime")                                      \
  X(cuGetErrorName, "cuGetErrorName") X(cuGetErrorString, "cuGetErrorString")

static int load_locked(void) {
  /* FA2_CUDA_LIBRARY: a driver outside the loader path (or a stand-in in tests). */
  const char *env = getenv("FA2_CUDA_LIBRARY");
  const char *lib = library_override ? library_override : env && *env ? env : "libcuda.so.1";
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "cannot load the CUDA driver (%s): %s; is an NVIDIA driver installed?", lib,
             dlerror());
    return -1;
  }
#define RESOLVE(field, sym)                                                                 \
  *(void **)&api.field = dlsym(h, sym);                                                     \
  if (!api.field) {                                                                         \
    snprintf(load_error, sizeof load_error, "the CUDA driver %s lacks %s (driver too old?)", \
             lib, sym);                                                                     \
    dlclose(h);                                                                             \
    return -1;                                                                              \
  }
  SYMBOLS(RESOLVE)
#undef RESOLVE
#define RESOLVE_OPTIONAL(field, sym) *(void **)&api.field = dlsym(h, sym);
  RT_CUDA_OPTIONAL(RESOLVE_OPTIONAL)
#undef RESOLVE_OPTIONAL
  CUresult r = api.cuInit(0);
  if (r != RT_CUDA_SUCCESS) {
    char buf[256];
    snprintf(load_error, sizeof load_error, "cuInit failed: %s%s",
             rt_cuda_strerror(r, buf, sizeof buf),
             r == RT_CUDA_ERROR_NO_DEVICE ? " (no CUDA device)" : "");
    return -1;
  }
  return 1;
}

const rt_cuda_api *rt_cuda_load(char *err, size_t errlen) {
  pthread_mutex_lock(&load_lock);
  if (load_state == 0) load_state = load_locked();
  int state = load_state;
  pthread_mutex_unlock(&load_lock);
  if (state == 1) return &api;
  if (err && errlen) snprintf(err, errlen, "%s", load_error);
  return NULL;
}

const char *rt_cuda_strerror(CUresult r, char *buf, size_t len) {
  const char *name = NULL, *str = NULL;
  if (load_state == 1) {
    api.cuGetErrorName(r, &name);
    api.cuGetErrorString(r, &str);
  }
  snprintf(buf, len, "%s (%d)%s%s", name ? name : "CUDA error", r, str ? ": " : "",
           str ? str : "");
  return buf;
}

void rt_cuda_set_library_for_tests(const char *path) {
  pthread_mutex_lock(&load_lock);
  library_override = path;
  if (load_state != 1) load_state = 0; /* a failed load may be retried */
  pthread_mutex_unlock(&load_lock);
}

int rt_cuda_fail(CUresult r, const char *fmt, ...) {
  char what[512], desc[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  rt_cuda_strerror(r, desc, sizeof desc);
  return rt_set_error(r == RT_CUDA_ERROR_OUT_OF_MEMORY ? FA2_ERR_OUT_OF_MEMORY : FA2_ERR_CUDA,
                      "%s failed: %s", what, desc);
}
