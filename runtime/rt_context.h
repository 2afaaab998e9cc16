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

/* A loaded variant: immutable once in the memory cache. */
typedef struct rt_kernel {
  char name[160];
  int block_m, block_n, threads, smem_bytes, n_fn;
  int ws; /* a warp-specialized forward: launched with its TMA maps (rt_tma.h) */
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

  pthread_mutex_t ws_lock; /* the backward's workspace when the caller gives none */
  CUdeviceptr ws;
  size_t ws_bytes;
};

/* Makes ctx's primary context current for the calling thread; *saved is
 * what to restore. Returns an fa2 status. */
int rt_ctx_enter(fa2_context *ctx, CUcontext *saved);
/* Restores a different context that was current; leaves ours otherwise. */
void rt_ctx_leave(fa2_context *ctx, CUcontext saved);

/* This device and software, as a tuning database records them (NVRTC's
 * version only once it is loaded). */
void rt_ctx_identity(const fa2_context *ctx, rt_identity *id);

/* Sets the error of a failed driver call; returns FA2_ERR_CUDA (or
 * FA2_ERR_OUT_OF_MEMORY). what: printf format naming the call. */
int rt_cuda_fail(CUresult r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The loaded kernel of a completed variant / of a launch request: memory
 * cache, else AOT -> disk -> NVRTC and a module load. */
int rt_kernel_for_variant(fa2_context *ctx, const gen_variant *v, rt_kernel **out);
/* launching: the kernel is for a launch on stream, which may be capturing a
 * CUDA graph: then a kernel that is not loaded yet is FA2_ERR_CAPTURING. */
int rt_kernel_for_request(fa2_context *ctx, const rt_request *r, void *stream, int launching,
                          rt_kernel **out);
/* *capturing = 1 when stream is capturing a CUDA graph. */
int rt_stream_capturing(fa2_context *ctx, void *stream, int *capturing);
/* Loads variants[n] on ctx->jobs threads, all of them even when some fail:
 * rcs[i] and msgs[i] are each one's status and error; done(user, i) runs
 * after each, under a lock. Returns FA2_OK. */
int rt_prepare_each(fa2_context *ctx, const gen_variant *const *variants, int n, int *rcs,
                    char (*msgs)[256], void (*done)(void *user, int i), void *user);

/* Launches a loaded kernel on checked arguments (fa2_forward/fa2_backward
 * after selection; the tuner with the candidate it times). ws: the
 * backward's workspace, fa2_backward_workspace_size(a) bytes. */
int rt_launch_fwd(fa2_context *ctx, const rt_kernel *k, const fa2_fwd_args *a, void *stream);
int rt_launch_bwd(fa2_context *ctx, const rt_kernel *k, const fa2_bwd_args *a, void *ws,
                  void *stream);
/* Unloads and frees every kernel of ctx (fa2_destroy). */
void rt_kernels_free(fa2_context *ctx);

#endif
