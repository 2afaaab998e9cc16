/* rt_stats: fa2_stats, status names and the version. */
#include <stdio.h>
#include <string.h>

#include "rt_context.h"
#include "rt_error.h"

fa2_status fa2_stats(fa2_context *ctx, fa2_cache_stats *out) {
  if (!ctx || !out)
    return (fa2_status)rt_set_error(FA2_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "out" : "ctx");
  memset(out, 0, sizeof *out);
  out->memory_hits = atomic_load(&ctx->memory_hits);
  out->aot_hits = atomic_load(&ctx->aot_hits);
  out->disk_hits = atomic_load(&ctx->disk_hits);
  out->misses = atomic_load(&ctx->misses);
  out->launches = atomic_load(&ctx->launches);
  pthread_mutex_lock(&ctx->lock);
  out->compile_ms = ctx->compile_ms;
  out->load_ms = ctx->load_ms;
  pthread_mutex_unlock(&ctx->lock);
  out->disk_cache = atomic_load(&ctx->dc.writable);
  snprintf(out->arch, sizeof out->arch, "%s", ctx->arch);
  snprintf(out->device_name, sizeof out->device_name, "%s", ctx->device_name);
  snprintf(out->cache_dir, sizeof out->cache_dir, "%.1000s",
           atomic_load(&ctx->dc.readable) ? ctx->dc.dir : "");
  return FA2_OK;
}

const char *fa2_status_name(int status) {
  static const char *const names[] = {
      "FA2_OK",          "FA2_ERR_INVALID_ARGUMENT", "FA2_ERR_UNSUPPORTED",
      "FA2_ERR_NO_DRIVER", "FA2_ERR_NO_NVRTC",       "FA2_ERR_COMPILE",
      "FA2_ERR_CUDA",    "FA2_ERR_OUT_OF_MEMORY",    "FA2_ERR_NOT_AVAILABLE",
      "FA2_ERR_INTERNAL", "FA2_ERR_CAPTURING"};
  if (status < 0 || status >= (int)(sizeof names / sizeof names[0])) return "FA2_ERR_UNKNOWN";
  return names[status];
}

const char *fa2_version(void) { return rt_source_version(); }
