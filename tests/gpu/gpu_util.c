/* GPU test helpers (see gpu_util.h). */
#include "gpu_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_nvrtc.h"

int gpu_ok(const gpu *g, CUresult r, const char *call, const char *file, int line) {
  if (r == RT_CUDA_SUCCESS) return 1;
  char buf[256];
  fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, rt_cuda_strerror(r, buf, sizeof buf));
  return 0;
}

int gpu_open(gpu *g, char *err, size_t errlen) {
  memset(g, 0, sizeof *g);
  g->cu = rt_cuda_load(err, errlen);
  if (!g->cu) return 1;
  int n = 0;
  if (g->cu->cuDeviceGetCount(&n) != RT_CUDA_SUCCESS || n == 0) {
    snprintf(err, errlen, "the driver reports no CUDA device");
    return 1;
  }
  const rt_cuda_api *cu = g->cu;
  if (!GPU_OK(g, cu->cuDeviceGet(&g->dev, 0)) ||
      !GPU_OK(g, cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev)) ||
      !GPU_OK(g, cu->cuCtxSetCurrent(g->ctx)) ||
      !GPU_OK(g, cu->cuDeviceGetName(g->name, sizeof g->name, g->dev)) ||
      !GPU_OK(g, cu->cuDeviceGetAttribute(&g->cc_major, RT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, g->dev)) ||
      !GPU_OK(g, cu->cuDeviceGetAttribute(&g->cc_minor, RT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, g->dev)) ||
      !GPU_OK(g, cu->cuDeviceGetAttribute(&g->sms, RT_CU_ATTR_MULTIPROCESSOR_COUNT, g->dev)))
    return -1;
  snprintf(g->arch, sizeof g->arch, "sm_%d%d", g->cc_major, g->cc_minor);
  return 0;
}

int gpu_module(gpu *g, const char *src, const char *name, const char *arch,
               const char *const *opts, CUmodule *mod) {
  rt_blob cubin;
  char err[4096];
  if (rt_nvrtc_compile(src, name, arch ? arch : g->arch, opts, &cubin, NULL, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  int ok = GPU_OK(g, g->cu->cuModuleLoadData(mod, cubin.data));
  rt_blob_free(&cubin);
  return ok ? 0 : -1;
}

int gpu_sync(gpu *g, double seconds, const char *what) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    CUresult r = g->cu->cuStreamQuery(NULL);
    if (r == RT_CUDA_SUCCESS) return 0;
    if (r != RT_CUDA_ERROR_NOT_READY) return GPU_OK(g, r) ? 0 : -1;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds) {
      fprintf(stderr, "HANG: %s did not finish within %.0f s\n", what, seconds);
      fflush(NULL);
      exit(3);
    }
    struct timespec nap = {0, 200000};
    nanosleep(&nap, NULL);
  }
}

char *gpu_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    buf[n] = 0;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

CUdeviceptr gpu_alloc(gpu *g, size_t bytes) {
  CUdeviceptr p = 0;
  if (!GPU_OK(g, g->cu->cuMemAlloc(&p, bytes ? bytes : 16))) return 0;
  return p;
}

void gpu_free(gpu *g, CUdeviceptr p) {
  if (p) GPU_OK(g, g->cu->cuMemFree(p));
}

float gpu_half_to_float(unsigned short x, int is_bf16) {
  if (is_bf16) {
    unsigned u = (unsigned)x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = (x >> 10) & 31, m = x & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return (x & 0x8000) ? -v : v;
}
