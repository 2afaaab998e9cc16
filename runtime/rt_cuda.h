/* rt_cuda: the CUDA driver API, loaded at run time with dlopen.
 *
 * Nothing here links against libcuda: every binary builds and runs on a
 * machine without a GPU, and rt_cuda_load() says why the driver is missing.
 * We declare the few types and constants we use instead of including cuda.h
 * (they are part of the driver's stable ABI).
 */
#ifndef RT_CUDA_H
#define RT_CUDA_H
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
  RT_CUDA_SUCCESS = 0,
  RT_CUDA_ERROR_OUT_OF_MEMORY = 2,
  RT_CUDA_ERROR_NO_DEVICE = 100,
  RT_CUDA_ERROR_NOT_READY = 600,
  /* CUdevice_attribute */
  RT_CU_ATTR_MAX_GRID_DIM_X = 5,
  RT_CU_ATTR_MAX_GRID_DIM_Y = 6,
  RT_CU_ATTR_MAX_GRID_DIM_Z = 7,
  RT_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  RT_CU_ATTR_L2_CACHE_SIZE = 38,
  RT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  RT_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  RT_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  /* CUfunction_attribute */
  RT_CU_FUNC_ATTR_LOCAL_SIZE_BYTES = 3, /* spills and stack, per thread */
  RT_CU_FUNC_ATTR_NUM_REGS = 4,
  RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  /* cuEventCreate flags */
  RT_CU_EVENT_DEFAULT = 0,
};

/* The driver entry points we use, resolved by rt_cuda_load(). */
typedef struct rt_cuda_api {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
  CUresult (*cuDeviceGetAttribute)(int *value, int attr, CUdevice dev);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);
  CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuModuleLoadData)(CUmodule *mod, const void *image);
  CUresult (*cuModuleUnload)(CUmodule mod);
  CUresult (*cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction fn, int attr, int value);
  CUresult (*cuFuncGetAttribute)(int *value, int attr, CUfunction fn);
  CUresult (*cuLaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz, unsigned smem,
                             CUstream stream, void **params, void **extra);
  CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);
  CUresult (*cuMemsetD16)(CUdeviceptr dst, unsigned short value, size_t count);
  CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned value, size_t count);
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamQuery)(CUstream stream);
  CUresult (*cuStreamIsCapturing)(CUstream stream, int *status); /* 0: not capturing */
  CUresult (*cuEventCreate)(CUevent *ev, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent ev);
  CUresult (*cuEventRecord)(CUevent ev, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent ev);
  CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*cuGetErrorName)(CUresult err, const char **name);
  CUresult (*cuGetErrorString)(CUresult err, const char **str);
  /* Optional (CUDA 12.0 drivers and newer; NULL when the driver lacks them):
   * TMA tensor maps for the warp-specialized forward (rt_tma.c). The enums
   * are ints; a map is 128 bytes at a 64-byte aligned address. */
  CUresult (*cuTensorMapEncodeTiled)(void *map, int dtype, unsigned rank, void *address,
                                     const unsigned long long *dims,
                                     const unsigned long long *strides, const unsigned *box,
                                     const unsigned *element_strides, int interleave,
                                     int swizzle, int l2_promotion, int oob_fill);
  CUresult (*cuTensorMapReplaceAddress)(void *map, void *address);
} rt_cuda_api;

/* The driver entry points that may be missing (an older driver): resolved
 * when present, NULL otherwise; a caller that needs one says which. */
#define RT_CUDA_OPTIONAL(X)                                                        \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled")                              \
  X(cuTensorMapReplaceAddress, "cuTensorMapReplaceAddress")

/* Loads libcuda.so.1 once (thread-safe) and calls cuInit(0). Returns the
 * table, or NULL with a message in err ("libcuda.so.1 not found: no NVIDIA
 * driver on this machine", or the cuInit error). */
const rt_cuda_api *rt_cuda_load(char *err, size_t errlen);

/* "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" into buf; never NULL. */
const char *rt_cuda_strerror(CUresult r, char *buf, size_t len);

/* Sets the error of a failed driver call; returns FA2_ERR_CUDA (or
 * FA2_ERR_OUT_OF_MEMORY). what: printf format naming the call. */
int rt_cuda_fail(CUresult r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Test hook (fault injection): load this path instead of libcuda.so.1.
 * NULL restores the default. Only affects loads that have not happened yet. */
void rt_cuda_set_library_for_tests(const char *path);

#endif
