/* fake_cuda: a stand-in libcuda.so.1 for CPU tests of the launch path.
 * Tests load it with rt_cuda_set_library_for_tests() and read what the
 * runtime did through fake_cuda_state() (dlsym on the same handle). */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H
#include "fa2_params.h"

/* What the stand-in cuTensorMapEncodeTiled writes into a map's 128 bytes (a
 * real map is opaque), so tests read back what the runtime asked for. */
typedef struct fake_tmap {
  unsigned long long address;
  int dtype, rank, interleave, swizzle, l2_promotion, oob_fill;
  unsigned box[4], element_strides[4];
  unsigned long long dims[4], strides[3];
} fake_tmap;

typedef struct fake_launch {
  const void *fn;
  const char *fn_name;
  unsigned grid[3], block[3], smem;
  void *stream;
  void *current_ctx; /* context current on the launching thread */
  fa2_fwd_params params; /* the argument block of a forward entry */
  fa2_bwd_params bwd;    /* ... of a backward entry (fa2_bwd*) */
  fake_tmap maps[4];     /* fa2_fwd_ws's second parameter: the Q, K, V, O maps */
} fake_launch;

typedef struct fake_cuda_state {
  /* set by tests (before fa2_create where it matters) */
  int device_count, cc_major, cc_minor, smem_optin;
  int launch_result, module_load_result;
  /* observed */
  int retains, releases;
  int module_loads, module_unloads, live_modules;
  int launches;
  fake_launch last;
  fake_launch log[8]; /* the first 8 launches since the last reset of n_log */
  int n_log;
  int attr_sets, last_attr, last_attr_value;
  char last_image_head[64]; /* first bytes of the last module image */
  /* failure switches added for tests/test_fault_*.c (set by tests) */
  int retain_result; /* cuDevicePrimaryCtxRetain's result */
  int alloc_ok;      /* 0: cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY */
  float elapsed_ms;  /* > 0: cuEventElapsedTime says elapsed_ms * (1 + shared memory of
                        the last launch / 64 KiB), so the tuner prefers small tiles */
  /* observed */
  int allocs, frees, live_allocs;
  unsigned long long last_alloc; /* device address of the last allocation */
  unsigned long long last_alloc_bytes;
  int capturing; /* cuStreamIsCapturing's status for every stream (1: active) */
  int tmap_result;              /* cuTensorMapEncodeTiled's result when not 0 */
  int tmap_encodes, tmap_replaces; /* observed */
} fake_cuda_state;

typedef fake_cuda_state *(*fake_cuda_state_fn)(void);

#endif
