/* rt_context: what an fa2_context holds, shared by the runtime's files. */
#ifndef RT_CONTEXT_H
#define RT_CONTEXT_H
#include <pthread.h>
#include <stdatomic.h>

#include "fa2.h"
#include "gen.h"
#include "rt_aot.h"
#include "rt_cuda.h"
#include "rt_diskcache.h"
#include "rt_identity.h"
#include "rt_log.h"
#include "rt_memcache.h"
#include "rt_select.h"
#include "rt_source.h"
#include "rt_tma.h"
#include "rt_tuning.h"

/* Streams whose persistent forwards get a tile counter of their own (more streams:
 * a full grid, one block per work item). */
#define RT_TILE_COUNTERS 16

/* A loaded variant: immutable once in the memory cache. Loading and
 * launching are rt_kernel.h's; the context only keeps the list. */
typedef struct rt_kernel {
  char name[160];
  int block_m, block_n, threads, smem_bytes, n_fn;
  int tile_dim; /* the tiles' head dim (dQ's accumulator rows, the row kernels' columns) */
  int ws; /* a warp-specialized tile: launched with its TMA maps (rt_tma.h) */
  int persistent; /* ... that can run one block per SM off ctx->tile_counter */
  CUmodule module;
  CUfunction fn[GEN_MAX_ENTRIES];
  struct rt_kernel *next; /* ctx->kernels, for fa2_destroy */
} rt_kernel;

enum { RT_MAX_NVRTC_DIRS = 32 };

struct fa2_context {
  const rt_cuda_api *cu;
  int device;
  CUdevice dev;
  CUcontext primary;
  int primary_retained;
  char arch[16];
  char device_name[96];
  int smem_optin;
  int sm_count, driver_version;

  rt_log log;
  char cache_dir[1024];
  rt_diskcache dc;
  rt_aot *aot;
  rt_tuning *tuning;
  char tuning_path[1100]; /* the database in use or looked for; "" when off */
  char *nvrtc_buf;
  const char *nvrtc_dirs[RT_MAX_NVRTC_DIRS + 1];
  int jobs;

  rt_source source;
  int source_ready, mc_ready, lock_ready, tma_ready;
  rt_memcache mc; /* keys: rt_request (launch path) and "name@arch" */

  pthread_mutex_t lock; /* kernels, compile_ms, load_ms */
  rt_kernel *kernels;
  double compile_ms, load_ms;
  atomic_ullong memory_hits, aot_hits, disk_hits, misses, launches;

  rt_tma_cache tma; /* tensor maps of ws launches, by shape and strides */

  pthread_mutex_t ws_lock; /* the backward's workspace when the caller gives none, */
  CUdeviceptr ws;          /* and the persistent forward's tile counters */
  size_t ws_bytes;
  struct {                 /* one int per stream, 0 between launches (rt_launch.c) */
    void *stream;
    CUdeviceptr counter;
  } tile_counters[RT_TILE_COUNTERS];
  int n_tile_counters;
};

/* Makes ctx's primary context current for the calling thread; *saved is
 * what to restore. Returns an fa2 status. */
int rt_ctx_enter(fa2_context *ctx, CUcontext *saved);
/* Restores a different context that was current; leaves ours otherwise. */
void rt_ctx_leave(fa2_context *ctx, CUcontext saved);

/* This device and software, as a tuning database records them (NVRTC's
 * version only once it is loaded). */
void rt_ctx_identity(const fa2_context *ctx, rt_identity *id);

#endif
