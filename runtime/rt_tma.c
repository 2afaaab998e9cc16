/* rt_tma: TMA tensor maps of the warp-specialized kernels (see rt_tma.h). */
#include "rt_tma.h"

#include <string.h>

#include "fa2.h"
#include "rt_error.h"

/* The driver's enums (cuda.h, stable ABI). */
enum {
  TMA_FLOAT16 = 6,
  TMA_FLOAT32 = 7,
  TMA_BFLOAT16 = 9,
  TMA_INTERLEAVE_NONE = 0,
  TMA_SWIZZLE_NONE = 0,
  TMA_SWIZZLE_128B = 3,
  TMA_L2_PROMOTION_128B = 2,
  TMA_OOB_FILL_ZEROS = 0,
};

int rt_tma_cache_init(rt_tma_cache *c) {
  memset(c, 0, sizeof *c);
  return pthread_mutex_init(&c->lock, NULL) == 0 ? 0 : -1;
}

void rt_tma_cache_free(rt_tma_cache *c) { pthread_mutex_destroy(&c->lock); }

/* A tensor of the call as a map's key: (head_dim, rows, heads, batch). A
 * dimension of one index gets a stride past everything inside it (the
 * caller's may be anything there; the driver wants multiples of 16 bytes). */
static void make_key(int bf16, int head_dim, int box_rows, long long rows, long long heads,
                     long long batch, long long row_stride, long long head_stride,
                     long long batch_stride, rt_tma_key *k) {
  memset(k, 0, sizeof *k); /* padding too: keys compare with memcmp */
  k->dtype = bf16 ? TMA_BFLOAT16 : TMA_FLOAT16;
  k->box_rows = box_rows;
  const long long dims[4] = {head_dim, rows, heads, batch};
  const long long strides[3] = {row_stride, head_stride, batch_stride};
  for (int i = 0; i < 4; i++) k->dims[i] = dims[i] > 1 ? (unsigned long long)dims[i] : 1;
  unsigned long long past = 2ull * (unsigned long long)head_dim; /* bytes spanned so far */
  for (int i = 0; i < 3; i++) {
    k->strides[i] = dims[i + 1] > 1 ? 2ull * (unsigned long long)strides[i] : past;
    const unsigned long long span = k->strides[i] * k->dims[i + 1];
    if (span > past) past = span;
  }
}

/* A flat row of n fp32 elements (rank 1, boxes of box_rows, unswizzled): the ws
 * backward's padded LSE and delta. */
static void make_flat_key(long long n, int box_rows, rt_tma_key *k) {
  memset(k, 0, sizeof *k);
  k->dtype = TMA_FLOAT32;
  k->box_rows = box_rows;
  k->dims[0] = n > 1 ? (unsigned long long)n : 1;
}

static int encode(const rt_cuda_api *cu, const char *name, const void *data, const rt_tma_key *k,
                  rt_tmap *out) {
  const int flat = k->dtype == TMA_FLOAT32;
  const unsigned box[4] = {flat ? (unsigned)k->box_rows : 64, (unsigned)k->box_rows, 1, 1};
  const unsigned ones[4] = {1, 1, 1, 1};
  CUresult r = cu->cuTensorMapEncodeTiled(out, k->dtype, flat ? 1 : 4, (void *)data, k->dims,
                                          k->strides, box, ones, TMA_INTERLEAVE_NONE,
                                          flat ? TMA_SWIZZLE_NONE : TMA_SWIZZLE_128B,
                                          TMA_L2_PROMOTION_128B, TMA_OOB_FILL_ZEROS);
  if (r != RT_CUDA_SUCCESS)
    return rt_cuda_fail(r,
                        "cuTensorMapEncodeTiled(%s at %p: %llu x %llu x %llu x %llu elements, "
                        "strides %llu, %llu, %llu bytes, box 64 x %d)",
                        name, data, k->dims[0], k->dims[1], k->dims[2], k->dims[3], k->strides[0],
                        k->strides[1], k->strides[2], k->box_rows);
  return FA2_OK;
}

/* The map of one tensor: a cached map of the same key re-addressed, else a
 * new one (then cached). */
static int tensor_map(const rt_cuda_api *cu, rt_tma_cache *c, const char *name, const void *data,
                      const rt_tma_key *k, rt_tmap *out) {
  int hit = 0;
  if (c) {
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->n && !hit; i++)
      if (!memcmp(&c->keys[i], k, sizeof *k)) memcpy(out, c->maps[i], sizeof *out), hit = 1;
    if (hit) c->hits++;
    pthread_mutex_unlock(&c->lock);
  }
  if (hit) {
    CUresult r = cu->cuTensorMapReplaceAddress(out, (void *)data);
    if (r != RT_CUDA_SUCCESS) return rt_cuda_fail(r, "cuTensorMapReplaceAddress(%s at %p)", name, data);
    return FA2_OK;
  }
  int rc = encode(cu, name, data, k, out);
  if (rc != FA2_OK || !c) return rc;
  pthread_mutex_lock(&c->lock);
  const int i = c->n < RT_TMA_CACHE_SLOTS ? c->n++ : (int)(c->next++ % RT_TMA_CACHE_SLOTS);
  c->keys[i] = *k;
  memcpy(c->maps[i], out, sizeof *out);
  c->misses++;
  pthread_mutex_unlock(&c->lock);
  return FA2_OK;
}

/* FA2_OK when the driver has the entry points the maps need, else the error naming the
 * missing one, the tiles that need it (what) and the tiles to use instead (instead). */
static int need_tma(const rt_cuda_api *cu, const char *what, const char *instead) {
  if (cu->cuTensorMapEncodeTiled && cu->cuTensorMapReplaceAddress) return FA2_OK;
  return rt_set_error(FA2_ERR_UNSUPPORTED,
                      "the CUDA driver lacks %s, which %s (TMA) need: a CUDA 12.0 or newer driver "
                      "runs them; or use %s",
                      !cu->cuTensorMapEncodeTiled ? "cuTensorMapEncodeTiled" : "cuTensorMapReplaceAddress",
                      what, instead);
}

/* The keys of Q, K, V and a fourth query-shaped tensor (the forward's O, the backward's
 * dO) from their (row, head, batch) strides: boxes of 64 query rows, block_n key rows;
 * varlen: one batch of total rows, each sequence's rows from its offset. Returns K's rows. */
static long long qkvx_keys(int varlen, long long total_q, long long total_k, int seqlen_q, int seqlen_k,
                           int batch, int heads_q, int heads_kv, int bf16, int head_dim, int block_n,
                           const long long strides[12], rt_tma_key k[4]) {
  const long long rows_q = varlen ? total_q : seqlen_q, rows_k = varlen ? total_k : seqlen_k;
  const long long b = varlen ? 1 : batch;
  for (int i = 0; i < 4; i++) {
    const int kv = i == 1 || i == 2;
    make_key(bf16, head_dim, kv ? block_n : 64, kv ? rows_k : rows_q, kv ? heads_kv : heads_q, b,
             strides[3 * i], strides[3 * i + 1], strides[3 * i + 2], &k[i]);
  }
  return rows_k;
}

int rt_tma_fwd_maps(const rt_cuda_api *cu, rt_tma_cache *cache, const fa2_fwd_params *p, int total_k,
                    int bf16, int head_dim, int block_n, rt_fwd_maps *out) {
  int rc = need_tma(cu, "ws tiles", "a wgmma tile (\"wg\" names, gen/defaults.lua TILES_SM90)");
  if (rc != FA2_OK) return rc;
  rt_tma_key k[4];
  const long long rows_k = qkvx_keys(p->cu_seqlens_q != NULL, p->total_q, total_k, p->seqlen_q, p->seqlen_k,
                                     p->batch, p->heads_q, p->heads_kv, bf16, head_dim, block_n,
                                     (const long long[]){p->q_row_stride, p->q_head_stride, p->q_batch_stride,
                                                         p->k_row_stride, p->k_head_stride, p->k_batch_stride,
                                                         p->v_row_stride, p->v_head_stride, p->v_batch_stride,
                                                         p->o_row_stride, p->o_head_stride, p->o_batch_stride},
                                     k);
  /* No keys: no key tile is ever loaded, and an empty tensor's address may be
   * NULL, which the driver refuses: K's and V's maps then point at Q. */
  const void *kd = rows_k > 0 ? p->k : p->q, *vd = rows_k > 0 ? p->v : p->q;
  if ((rc = tensor_map(cu, cache, "q", p->q, &k[0], &out->q)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "k", kd, &k[1], &out->k)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "v", vd, &k[2], &out->v)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "o", p->o, &k[3], &out->o)) != FA2_OK)
    return rc;
  return FA2_OK;
}

int rt_tma_bwd_maps(const rt_cuda_api *cu, rt_tma_cache *cache, const fa2_bwd_params *p, int total_k,
                    int bf16, int head_dim, int block_n, rt_bwd_maps *out) {
  int rc = need_tma(cu, "ws backward tiles", "a wgmma tile (\"wg\" names)");
  if (rc != FA2_OK) return rc;
  const int varlen = p->cu_seqlens_q != NULL;
  /* the padded LSE and delta rows; the kernel's TMA row coordinate in them is a 32-bit int */
  const long long rows = RT_BWD_WS_PAD_ROWS(varlen, p->batch, p->heads_q, p->seqlen_q, p->total_q);
  if (rows > 0x7fffffffLL)
    return rt_set_error(FA2_ERR_UNSUPPORTED,
                        "batch %d x heads_q %d x seqlen_q %d (padded) is past 2^31 LSE rows, the "
                        "ws backward's 32-bit TMA coordinate; use a wgmma tile (\"wg\" names)",
                        p->batch, p->heads_q, varlen ? p->total_q : p->seqlen_q);
  rt_tma_key k[5];
  qkvx_keys(varlen, p->total_q, total_k, p->seqlen_q, p->seqlen_k, p->batch, p->heads_q, p->heads_kv, bf16,
            head_dim, block_n,
            (const long long[]){p->q_row_stride, p->q_head_stride, p->q_batch_stride, p->k_row_stride,
                                p->k_head_stride, p->k_batch_stride, p->v_row_stride, p->v_head_stride,
                                p->v_batch_stride, p->do_row_stride, p->do_head_stride, p->do_batch_stride},
            k);
  /* after delta's rows (varlen: heads_q x total_q, like LSE), whole 64s of them */
  const long long delta_rows = varlen ? (long long)p->heads_q * p->total_q : (long long)p->batch * p->heads_q * p->seqlen_q;
  const float *lse_pad = p->delta + (delta_rows + 63) / 64 * 64;
  make_flat_key(rows, 64, &k[4]);
  if ((rc = tensor_map(cu, cache, "q", p->q, &k[0], &out->q)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "k", p->k, &k[1], &out->k)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "v", p->v, &k[2], &out->v)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "dout", p->dout, &k[3], &out->dout)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "lse (padded)", lse_pad, &k[4], &out->lse)) != FA2_OK ||
      (rc = tensor_map(cu, cache, "delta (padded)", lse_pad + rows, &k[4], &out->delta)) != FA2_OK)
    return rc;
  return FA2_OK;
}
