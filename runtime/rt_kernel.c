/* rt_kernel: a variant's cubin loaded as a module, cached in memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_error.h"
#include "rt_jit.h"
#include "rt_kernel.h"

/* Dynamic shared memory above this needs the opt-in attribute. */
enum { RT_SMEM_DEFAULT_LIMIT = 48 * 1024 };

static int load_module(fa2_context *ctx, const gen_variant *v, const rt_blob *cubin,
                       rt_kernel *k) {
  const rt_cuda_api *cu = ctx->cu;
  CUcontext saved;
  int rc = rt_ctx_enter(ctx, &saved);
  if (rc != FA2_OK) return rc;
  CUresult r = cu->cuModuleLoadData(&k->module, cubin->data);
  if (r != RT_CUDA_SUCCESS) {
    k->module = NULL;
    rc = rt_cuda_fail(r, "cuModuleLoadData(%s for %s)", v->name, ctx->arch);
  }
  for (int i = 0; rc == FA2_OK && i < v->n_entries; i++) {
    if ((r = cu->cuModuleGetFunction(&k->fn[i], k->module, v->entries[i])) != RT_CUDA_SUCCESS)
      rc = rt_cuda_fail(r, "cuModuleGetFunction(%s, \"%s\")", v->name, v->entries[i]);
  }
  /* Entries are launched with smem_bytes of dynamic shared memory or none;
   * allowing it on each is harmless and keeps one rule for every pass. */
  for (int i = 0; rc == FA2_OK && v->smem_bytes > RT_SMEM_DEFAULT_LIMIT && i < v->n_entries; i++)
    if ((r = cu->cuFuncSetAttribute(k->fn[i], RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    v->smem_bytes)) != RT_CUDA_SUCCESS)
      rc = rt_cuda_fail(r, "cuFuncSetAttribute(%s, max dynamic shared memory %d)", v->name,
                        v->smem_bytes);
  if (rc != FA2_OK && k->module) {
    cu->cuModuleUnload(k->module);
    k->module = NULL;
  }
  rt_ctx_leave(ctx, saved);
  return rc;
}

static void count_origin(fa2_context *ctx, int origin, double compile_ms, double load_ms) {
  atomic_ullong *c = origin == RT_FROM_AOT    ? &ctx->aot_hits
                     : origin == RT_FROM_DISK ? &ctx->disk_hits
                                              : &ctx->misses;
  atomic_fetch_add(c, 1);
  pthread_mutex_lock(&ctx->lock);
  ctx->compile_ms += compile_ms;
  ctx->load_ms += load_ms;
  pthread_mutex_unlock(&ctx->lock);
}

/* The memory cache's key of a loaded variant: "name@arch". */
static int variant_key(const fa2_context *ctx, const gen_variant *v, char *key, size_t len) {
  return snprintf(key, len, "%s@%s", v->name, ctx->arch);
}

int rt_stream_capturing(fa2_context *ctx, void *stream, int *capturing) {
  int status = 0;
  CUcontext saved;
  int rc = rt_ctx_enter(ctx, &saved);
  if (rc != FA2_OK) return rc;
  CUresult r = ctx->cu->cuStreamIsCapturing((CUstream)stream, &status);
  rt_ctx_leave(ctx, saved);
  if (r != RT_CUDA_SUCCESS) return rt_cuda_fail(r, "cuStreamIsCapturing");
  *capturing = status != 0;
  return FA2_OK;
}

int rt_kernel_for_variant(fa2_context *ctx, const gen_variant *v, rt_kernel **out) {
  char key[200];
  int n = variant_key(ctx, v, key, sizeof key);
  rt_kernel *k = rt_mc_get(&ctx->mc, key, (size_t)n);
  if (k) {
    atomic_fetch_add_explicit(&ctx->memory_hits, 1, memory_order_relaxed);
    *out = k;
    return FA2_OK;
  }
  if (v->n_entries < 1 || v->n_entries > GEN_MAX_ENTRIES || v->threads < 1)
    return rt_set_error(FA2_ERR_INTERNAL, "variant %s has %d entries and %d threads",
                        v->name, v->n_entries, v->threads);
  if (v->smem_bytes > ctx->smem_optin)
    return rt_set_error(FA2_ERR_UNSUPPORTED,
                        "%s needs %d bytes of shared memory; %s (%s) allows %d per block",
                        v->name, v->smem_bytes, ctx->device_name, ctx->arch, ctx->smem_optin);
  double t0 = rt_now_ms(), compile_ms = 0;
  rt_jit_env env = {ctx->arch, &ctx->source, ctx->aot, &ctx->dc, ctx->nvrtc_dirs, &ctx->log};
  rt_blob cubin;
  int origin = RT_FROM_NVRTC;
  char err[2048];
  int rc = rt_jit_cubin(&env, v, &cubin, &origin, &compile_ms, err, sizeof err);
  if (rc != FA2_OK) return rt_set_error(rc, "%s", err);
  k = calloc(1, sizeof *k);
  if (!k) {
    rt_blob_free(&cubin);
    return rt_set_error(FA2_ERR_OUT_OF_MEMORY, "out of memory loading %s", v->name);
  }
  snprintf(k->name, sizeof k->name, "%s", v->name);
  k->block_m = v->block_m;
  k->block_n = v->block_n;
  k->tile_dim = v->tile_dim;
  k->threads = v->threads;
  k->smem_bytes = v->smem_bytes;
  k->n_fn = v->n_entries;
  k->ws = v->ws;
  k->persistent = v->persistent;
  rc = load_module(ctx, v, &cubin, k);
  rt_blob_free(&cubin);
  if (rc != FA2_OK) {
    free(k);
    return rc;
  }
  double ms = rt_now_ms() - t0;
  count_origin(ctx, origin, compile_ms, ms);
  rt_logf(&ctx->log, FA2_LOG_INFO, "%s for %s: from %s in %.1f ms", v->name, ctx->arch,
          rt_origin_name(origin), ms);

  rt_kernel *stored = rt_mc_put(&ctx->mc, key, (size_t)n, k);
  if (stored != k) { /* another thread loaded it first (or out of memory): use theirs */
    CUcontext saved;
    if (rt_ctx_enter(ctx, &saved) == FA2_OK) {
      ctx->cu->cuModuleUnload(k->module);
      rt_ctx_leave(ctx, saved);
    }
    free(k);
    if (!stored) return rt_set_error(FA2_ERR_OUT_OF_MEMORY, "out of memory caching %s", key);
    *out = stored;
    return FA2_OK;
  }
  pthread_mutex_lock(&ctx->lock);
  k->next = ctx->kernels;
  ctx->kernels = k;
  pthread_mutex_unlock(&ctx->lock);
  *out = k;
  return FA2_OK;
}

/* A kernel that is not loaded yet, asked for on a stream that captures a
 * CUDA graph: loading it (disk, NVRTC, cuModuleLoadData) would invalidate
 * the capture, so refuse before touching anything. */
static int refuse_load_while_capturing(fa2_context *ctx, const gen_variant *v, void *stream) {
  char key[200];
  int n = variant_key(ctx, v, key, sizeof key), capturing = 0;
  if (rt_mc_get(&ctx->mc, key, (size_t)n)) return FA2_OK;
  int rc = rt_stream_capturing(ctx, stream, &capturing);
  if (rc != FA2_OK || !capturing) return rc;
  return rt_set_error(FA2_ERR_CAPTURING,
                      "kernel %s (%s) is not loaded and the stream is capturing a CUDA graph, "
                      "where loading it would invalidate the capture: load it before the "
                      "capture with fa2_prepare (name \"%s\"; Python: fa2gen.prepare([\"%s\"])) "
                      "or one call of the same shape outside the capture",
                      v->name, ctx->arch, v->name, v->name);
}

int rt_kernel_for_request(fa2_context *ctx, const rt_request *r, void *stream, int launching,
                          rt_kernel **out) {
  gen_variant v;
  char err[2048];
  int rc = rt_select_variant(&ctx->source, ctx->tuning, r, ctx->arch, &v, err, sizeof err);
  if (rc != FA2_OK) return rt_set_error(rc, "%s", err);
  if (launching && (rc = refuse_load_while_capturing(ctx, &v, stream)) != FA2_OK) return rc;
  if ((rc = rt_kernel_for_variant(ctx, &v, out)) != FA2_OK) return rc;
  rt_mc_put(&ctx->mc, r, sizeof *r, *out); /* out of memory: the next call selects again */
  return FA2_OK;
}
