/* fake_cuda: the driver entry points rt_cuda resolves, recording what the
 * runtime asks for instead of touching a GPU (see fake_cuda.h). */
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>

typedef int CUresult;
#define API __attribute__((visibility("default")))

static fake_cuda_state st = {1, 9, 0, 232448};
static _Thread_local void *current;
static int primary_ctx_storage, other_ctx_storage;

typedef struct fn_rec {
  char name[64];
} fn_rec;
typedef struct module_rec {
  fn_rec fns[8];
  int n;
} module_rec;

API fake_cuda_state *fake_cuda_state_get(void) { return &st; }
API void *fake_cuda_other_context(void) { return &other_ctx_storage; }

API CUresult cuInit(unsigned f) { return 0; }
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
API CUresult cuDeviceGetCount(int *n) { *n = st.device_count; return 0; }
API CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal < 0 || ordinal >= st.device_count) return 101; /* INVALID_DEVICE */
  *d = ordinal;
  return 0;
}
API CUresult cuDeviceGetName(char *name, int len, int dev) {
  strncpy(name, "Fake GPU", (size_t)len);
  return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  switch (attr) {
  case 75: *v = st.cc_major; break;
  case 76: *v = st.cc_minor; break;
  case 97: *v = st.smem_optin; break;
  case 16: *v = 132; break;
  default: *v = 65535;
  }
  return 0;
}
API CUresult cuDeviceTotalMem_v2(size_t *b, int dev) { *b = (size_t)80 << 30; return 0; }
API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  if (st.retain_result) return st.retain_result;
  st.retains++;
  *ctx = &primary_ctx_storage;
  return 0;
}
API CUresult cuDevicePrimaryCtxRelease_v2(int dev) { st.releases++; return 0; }
API CUresult cuCtxGetCurrent(void **ctx) { *ctx = current; return 0; }
API CUresult cuCtxSetCurrent(void *ctx) { current = ctx; return 0; }
API CUresult cuCtxSynchronize(void) { return 0; }
API CUresult cuModuleLoadData(void **mod, const void *image) {
  if (current != &primary_ctx_storage) return 201; /* INVALID_CONTEXT */
  if (st.module_load_result) return st.module_load_result;
  memcpy(st.last_image_head, image, sizeof st.last_image_head - 1);
  char *nl = strchr(st.last_image_head, '\n'); /* the first line names the variant */
  if (nl) *nl = 0;
  *mod = calloc(1, sizeof(module_rec));
  st.module_loads++;
  st.live_modules++;
  return 0;
}
API CUresult cuModuleUnload(void *mod) {
  free(mod);
  st.module_unloads++;
  st.live_modules--;
  return 0;
}
API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  module_rec *m = mod;
  if (m->n == 8) return 500;
  strncpy(m->fns[m->n].name, name, 63);
  *fn = &m->fns[m->n++];
  return 0;
}
API CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  st.attr_sets++;
  st.last_attr = attr;
  st.last_attr_value = value;
  return 0;
}
API CUresult cuFuncGetAttribute(int *v, int attr, void *fn) { *v = 0; return 0; }
API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, void *stream,
                            void **params, void **extra) {
  if (current != &primary_ctx_storage) return 201;
  if (st.launch_result) return st.launch_result;
  st.launches++;
  const char *name = ((fn_rec *)fn)->name;
  st.last = (fake_launch){fn, name, {gx, gy, gz}, {bx, by, bz}, smem, stream, current};
  /* copy the argument block the entry really takes (reading more would
   * run past the caller's struct) */
  if (!strncmp(name, "fa2_bwd", 7))
    st.last.bwd = *(fa2_bwd_params *)params[0];
  else
    st.last.params = *(fa2_fwd_params *)params[0];
  if (!strcmp(name, "fa2_fwd_ws")) /* four 128-byte maps, 64-byte aligned */
    for (int i = 0; i < 4; i++) {
      if ((unsigned long long)params[1] % 64) return 1; /* INVALID_VALUE */
      memcpy(&st.last.maps[i], (const char *)params[1] + 128 * i, sizeof(fake_tmap));
    }
  if (st.n_log < 8) st.log[st.n_log++] = st.last;
  return 0;
}
API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  if (!st.alloc_ok) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  *p = st.last_alloc = 0x10000000ull * (unsigned long long)(1 + st.allocs);
  st.last_alloc_bytes = n;
  st.allocs++;
  st.live_allocs++;
  return 0;
}
API CUresult cuMemFree_v2(unsigned long long p) {
  if (p) st.frees++, st.live_allocs--;
  return 0;
}
API CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = 0; return 0; }
API CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { return 0; }
API CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { return 0; }
API CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) { return 0; }
API CUresult cuMemsetD16_v2(unsigned long long d, unsigned short v, size_t n) { return 0; }
API CUresult cuMemsetD32_v2(unsigned long long d, unsigned v, size_t n) { return 0; }
API CUresult cuStreamCreate(void **s, unsigned f) { return 0; }
API CUresult cuStreamDestroy_v2(void *s) { return 0; }
API CUresult cuStreamSynchronize(void *s) { return 0; }
API CUresult cuStreamQuery(void *s) { return 0; }
API CUresult cuStreamIsCapturing(void *s, int *status) {
  *status = st.capturing;
  return 0;
}
API CUresult cuEventCreate(void **e, unsigned f) { return 0; }
API CUresult cuEventDestroy_v2(void *e) { return 0; }
API CUresult cuEventRecord(void *e, void *s) { return 0; }
API CUresult cuEventSynchronize(void *e) { return 0; }
API CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  *ms = st.elapsed_ms > 0 ? st.elapsed_ms * (1.0f + (float)st.last.smem / 65536.0f) : 0;
  return 0;
}
API CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *address,
                                   const unsigned long long *dims,
                                   const unsigned long long *strides, const unsigned *box,
                                   const unsigned *element_strides, int interleave, int swizzle,
                                   int l2_promotion, int oob_fill) {
  /* INVALID_VALUE, as the driver: a misaligned map, a NULL or misaligned address */
  if ((unsigned long long)map % 64 || rank > 4 || !address || (unsigned long long)address % 16) return 1;
  if (st.tmap_result) return st.tmap_result;
  fake_tmap t = {(unsigned long long)address, dtype, (int)rank, interleave, swizzle, l2_promotion,
                 oob_fill};
  for (unsigned i = 0; i < rank; i++) {
    t.box[i] = box[i], t.element_strides[i] = element_strides[i], t.dims[i] = dims[i];
    if (i > 0) t.strides[i - 1] = strides[i - 1];
  }
  memset(map, 0, 128);
  memcpy(map, &t, sizeof t);
  st.tmap_encodes++;
  return 0;
}
API CUresult cuTensorMapReplaceAddress(void *map, void *address) {
  if ((unsigned long long)map % 64 || !address || (unsigned long long)address % 16) return 1;
  ((fake_tmap *)map)->address = (unsigned long long)address;
  st.tmap_replaces++;
  return 0;
}
API CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY"
          : r == 218 ? "CUDA_ERROR_INVALID_PTX"
                     : "CUDA_ERROR_UNKNOWN";
  return 0;
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = "fake driver error";
  return 0;
}
