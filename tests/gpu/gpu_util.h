/* Small helpers for the GPU test program: one device session, checked CUDA
 * calls, NVRTC modules, device buffers. Test code: on a CUDA failure it
 * reports file:line and the call, and the caller counts a failure. */
#ifndef GPU_UTIL_H
#define GPU_UTIL_H
#include <stddef.h>

#include "rt_cuda.h"

typedef struct gpu {
  const rt_cuda_api *cu;
  CUdevice dev;
  CUcontext ctx;
  int cc_major, cc_minor, sms;
  char name[256];
  char arch[16]; /* "sm_90" */
} gpu;

/* 0 ok, 1 no device (why in err), -1 CUDA failure. */
int gpu_open(gpu *g, char *err, size_t errlen);

/* Checks a CUresult; prints "file:line: call: error" and returns 0 on failure. */
int gpu_ok(const gpu *g, CUresult r, const char *call, const char *file, int line);
#define GPU_OK(g, call) gpu_ok((g), (call), #call, __FILE__, __LINE__)

/* NVRTC-compiles src for arch (NULL: the device's own, e.g. sm_90; a wgmma
 * variant needs sm_90a, see gen_compile_arch) with opts (NULL-terminated)
 * and loads it. Returns 0 or -1 (message printed). */
int gpu_module(gpu *g, const char *src, const char *name, const char *arch,
               const char *const *opts, CUmodule *mod);

/* gen_nvrtc_options(), plus -DFA2_WATCHDOG=$FA2_WATCHDOG when that is set
 * (tests/gpu/variants.c). */
const char *const *gpu_nvrtc_options(void);

/* Waits for the default stream like cuCtxSynchronize, but gives up after
 * `seconds`: a hung kernel ends the program (exit 3) with a message instead
 * of blocking the test run forever. Returns 0 or -1 (CUDA error printed). */
int gpu_sync(gpu *g, double seconds, const char *what);

/* Reads a whole file (NUL-terminated, malloc'd) or NULL. */
char *gpu_read_file(const char *path);

/* Device allocation that also records the size; NULL-safe free. */
CUdeviceptr gpu_alloc(gpu *g, size_t bytes);
void gpu_free(gpu *g, CUdeviceptr p);

/* 16-bit <-> float on the host (bf16 or fp16 by flag). */
float gpu_half_to_float(unsigned short x, int is_bf16);

#endif
