/* rt_context: fa2_create and fa2_destroy. */
#include "rt_context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_error.h"
#include "rt_nvrtc.h"
#include "rt_paths.h"

int rt_ctx_enter(fa2_context *ctx, CUcontext *saved) {
  CUcontext cur = NULL;
  CUresult r = ctx->cu->cuCtxGetCurrent(&cur);
  if (r != RT_CUDA_SUCCESS) return rt_cuda_fail(r, "cuCtxGetCurrent");
  *saved = cur;
  if (cur == ctx->primary) return FA2_OK;
  r = ctx->cu->cuCtxSetCurrent(ctx->primary);
  if (r != RT_CUDA_SUCCESS) return rt_cuda_fail(r, "cuCtxSetCurrent(device %d)", ctx->device);
  return FA2_OK;
}

void rt_ctx_leave(fa2_context *ctx, CUcontext saved) {
  if (saved && saved != ctx->primary) ctx->cu->cuCtxSetCurrent(saved);
}

/* Splits ':'-separated folder lists (option first, then env) into
 * ctx->nvrtc_dirs. */
static int set_nvrtc_dirs(fa2_context *ctx, const char *opt) {
  const char *env = getenv("FA2_NVRTC_DIRS");
  size_t n = (opt ? strlen(opt) : 0) + (env ? strlen(env) : 0) + 2;
  ctx->nvrtc_buf = malloc(n);
  if (!ctx->nvrtc_buf) return -1;
  snprintf(ctx->nvrtc_buf, n, "%s:%s", opt ? opt : "", env ? env : "");
  int k = 0;
  for (char *save = NULL, *p = strtok_r(ctx->nvrtc_buf, ":", &save);
       p && k < RT_MAX_NVRTC_DIRS; p = strtok_r(NULL, ":", &save))
    ctx->nvrtc_dirs[k++] = p;
  ctx->nvrtc_dirs[k] = NULL;
  return 0;
}

static int open_device(fa2_context *ctx) {
  const rt_cuda_api *cu = ctx->cu;
  int count = 0;
  CUresult r = cu->cuDeviceGetCount(&count);
  if (r != RT_CUDA_SUCCESS) return rt_cuda_fail(r, "cuDeviceGetCount");
  if (ctx->device >= count)
    return rt_set_error(FA2_ERR_NO_DRIVER,
                        "options.device is %d but this machine has %d CUDA device(s)%s",
                        ctx->device, count, count ? "" : " (check CUDA_VISIBLE_DEVICES)");
  if ((r = cu->cuDeviceGet(&ctx->dev, ctx->device)) != RT_CUDA_SUCCESS)
    return rt_cuda_fail(r, "cuDeviceGet(%d)", ctx->device);
  int major = 0, minor = 0;
  if ((r = cu->cuDeviceGetName(ctx->device_name, sizeof ctx->device_name, ctx->dev)) ||
      (r = cu->cuDeviceGetAttribute(&major, RT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, ctx->dev)) ||
      (r = cu->cuDeviceGetAttribute(&minor, RT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, ctx->dev)) ||
      (r = cu->cuDeviceGetAttribute(&ctx->smem_optin,
                                    RT_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, ctx->dev)) ||
      (r = cu->cuDeviceGetAttribute(&ctx->sm_count, RT_CU_ATTR_MULTIPROCESSOR_COUNT, ctx->dev)) ||
      (r = cu->cuDriverGetVersion(&ctx->driver_version)))
    return rt_cuda_fail(r, "reading the properties of device %d", ctx->device);
  ctx->device_name[sizeof ctx->device_name - 1] = 0;
  if (major < 8)
    return rt_set_error(FA2_ERR_UNSUPPORTED,
                        "device %d (%s) has compute capability %d.%d: fa2gen needs 8.0 or newer "
                        "(Ampere, mma.sync bf16)",
                        ctx->device, ctx->device_name, major, minor);
  snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%d", major, minor);
  if ((r = cu->cuDevicePrimaryCtxRetain(&ctx->primary, ctx->dev)) != RT_CUDA_SUCCESS)
    return rt_cuda_fail(r, "cuDevicePrimaryCtxRetain(device %d)", ctx->device);
  ctx->primary_retained = 1;
  return FA2_OK;
}

void rt_ctx_identity(const fa2_context *ctx, rt_identity *id) {
  memset(id, 0, sizeof *id);
  snprintf(id->name, sizeof id->name, "%s", ctx->device_name);
  snprintf(id->arch, sizeof id->arch, "%s", ctx->arch);
  id->sm_count = ctx->sm_count;
  id->driver = ctx->driver_version;
  if (rt_nvrtc_path()[0]) rt_nvrtc_version(&id->nvrtc_major, &id->nvrtc_minor);
  snprintf(id->fa2gen, sizeof id->fa2gen, "%s", rt_source_version());
}

/* options.tuning_db, else $FA2_TUNING_DB, else this GPU's file in the cache
 * directory (when it exists); "off" in either place: none. */
static void open_tuning(fa2_context *ctx, const char *opt) {
  const char *path = opt && *opt ? opt : getenv("FA2_TUNING_DB");
  int missing_ok = 0;
  rt_identity id;
  rt_ctx_identity(ctx, &id);
  if (path && !strcmp(path, "off")) return;
  if (!path || !*path) {
    if (!ctx->cache_dir[0] ||
        rt_identity_db_path(&id, ctx->cache_dir, ctx->tuning_path, sizeof ctx->tuning_path))
      return;
    missing_ok = 1;
  } else {
    snprintf(ctx->tuning_path, sizeof ctx->tuning_path, "%s", path);
  }
  ctx->tuning = rt_tuning_load(ctx->tuning_path, &id, missing_ok, &ctx->log);
}

static void open_caches(fa2_context *ctx, const fa2_options *o) {
  if (o->no_disk_cache) {
    rt_dc_open(&ctx->dc, NULL, &ctx->log);
  } else if (rt_cache_dir(o->cache_dir, ctx->cache_dir, sizeof ctx->cache_dir) != 0) {
    ctx->cache_dir[0] = 0;
    rt_logf(&ctx->log, FA2_LOG_WARN,
            "no cache directory (set FA2_CACHE_DIR or HOME); compiled kernels are kept in "
            "memory only");
    rt_dc_open(&ctx->dc, NULL, &ctx->log);
  } else {
    rt_dc_open(&ctx->dc, ctx->cache_dir, &ctx->log);
  }
  const char *aot = o->aot_dir && *o->aot_dir ? o->aot_dir : getenv("FA2_AOT_DIR");
  ctx->aot = rt_aot_open(aot, ctx->arch, &ctx->log);
  open_tuning(ctx, o->tuning_db);
}

/* Unloads and frees every kernel of ctx (they were loaded by rt_kernel.c). */
static void free_kernels(fa2_context *ctx) {
  CUcontext saved;
  int entered = ctx->kernels && rt_ctx_enter(ctx, &saved) == FA2_OK;
  for (rt_kernel *k = ctx->kernels, *next; k; k = next) {
    next = k->next;
    if (entered && k->module) ctx->cu->cuModuleUnload(k->module);
    free(k);
  }
  ctx->kernels = NULL;
  if (entered) rt_ctx_leave(ctx, saved);
}

fa2_status fa2_create(fa2_context **out, const fa2_options *options) {
  if (!out) return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "ctx is NULL");
  *out = NULL;
  fa2_options o = options ? *options : (fa2_options){0};
  if (o.device < 0)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "options.device is %d: must be a CUDA device ordinal >= 0",
                                    o.device);
  if (o.log_level < FA2_LOG_DEFAULT || o.log_level > FA2_LOG_DEBUG)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "options.log_level is %d: allowed 0 (default) to %d (debug)",
                                    o.log_level, FA2_LOG_DEBUG);
  if (o.jobs < 0)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT,
                                    "options.jobs is %d: must be >= 0 (0: automatic)", o.jobs);
  char err[600];
  const rt_cuda_api *cu = rt_cuda_load(err, sizeof err);
  if (!cu) return (fa2_status)rt_set_error(FA2_ERR_NO_DRIVER, "fa2_create: %s", err);

  fa2_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return (fa2_status)rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_create: out of memory");
  ctx->cu = cu;
  ctx->device = o.device;
  ctx->log = (rt_log){o.log_level, o.log_fn, o.log_user};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ctx->jobs = o.jobs ? o.jobs : (int)(cpus < 1 ? 1 : cpus > 8 ? 8 : cpus);
  rt_source_init(&ctx->source);
  ctx->source_ready = 1;
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_mutex_init(&ctx->ws_lock, NULL);
  ctx->lock_ready = 1;
  ctx->tma_ready = rt_tma_cache_init(&ctx->tma) == 0;
  int rc = ctx->tma_ready ? open_device(ctx) : rt_set_error(FA2_ERR_INTERNAL, "fa2_create: no mutex");
  if (rc == FA2_OK) {
    ctx->mc_ready = rt_mc_init(&ctx->mc) == 0;
    if (!ctx->mc_ready || set_nvrtc_dirs(ctx, o.nvrtc_dirs) != 0)
      rc = rt_set_error(FA2_ERR_OUT_OF_MEMORY, "fa2_create: out of memory");
  }
  if (rc != FA2_OK) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", fa2_last_error());
    fa2_destroy(ctx);
    return (fa2_status)rt_set_error(rc, "%s", msg);
  }
  open_caches(ctx, &o);
  rt_logf(&ctx->log, FA2_LOG_INFO, "device %d: %s (%s); cache %s", ctx->device,
          ctx->device_name, ctx->arch,
          atomic_load(&ctx->dc.readable) ? ctx->dc.dir : "memory only");
  *out = ctx;
  return FA2_OK;
}

void fa2_destroy(fa2_context *ctx) {
  if (!ctx) return;
  if (ctx->primary_retained) {
    free_kernels(ctx);
    if (ctx->ws) ctx->cu->cuMemFree(ctx->ws);
    for (int i = 0; i < ctx->n_tile_counters; i++) ctx->cu->cuMemFree(ctx->tile_counters[i].counter);
    ctx->cu->cuDevicePrimaryCtxRelease(ctx->dev);
  }
  if (ctx->mc_ready) rt_mc_free(&ctx->mc);
  if (ctx->source_ready) rt_source_free(&ctx->source);
  if (ctx->lock_ready) {
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->ws_lock);
  }
  if (ctx->tma_ready) rt_tma_cache_free(&ctx->tma);
  rt_aot_free(ctx->aot);
  rt_tuning_free(ctx->tuning);
  free(ctx->nvrtc_buf);
  free(ctx);
}
