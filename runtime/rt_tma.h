/* rt_tma: the TMA tensor maps of the warp-specialized kernels (templates/fwd_ws.cu.tpl
 * and bwd_ws.cuh.tpl, `ws` tiles).
 *
 * Q, K, V and O are each described to the TMA unit as a 4-d tensor of 16-bit
 * elements, (head_dim, rows, heads, batch) innermost first (varlen: batch 1 of
 * the total rows), with the call's strides; boxes of 64 columns (one 128-byte
 * swizzled block) by 64 query rows (Q, O) or block_n key rows (K, V); rows out
 * of bounds read as zeros and are not written. The driver encodes a map on the
 * host (cuTensorMapEncodeTiled) and the kernel takes the four by value as its
 * second parameter: no device memory, no synchronization, so a launch can be
 * captured in a CUDA graph.
 *
 * A map depends on the tensor's address, which changes from call to call in
 * training, and on its shape and strides, which do not: the cache keeps maps
 * by everything but the address and re-addresses a copy with
 * cuTensorMapReplaceAddress (fixed-size, no allocation after init). */
#ifndef RT_TMA_H
#define RT_TMA_H
#include <pthread.h>

#include "fa2_params.h"
#include "rt_cuda.h"

/* A CUtensorMap; the kernel's struct fa2_tmap (templates/hopper.cuh.tpl). */
typedef struct rt_tmap {
  _Alignas(64) unsigned char bytes[128];
} rt_tmap;

/* The kernel's fa2_fwd_maps: its second parameter. */
typedef struct rt_fwd_maps {
  rt_tmap q, k, v, o;
} rt_fwd_maps;

/* The ws backward's fa2_bwd_maps (templates/bwd_ws.cuh.tpl): fa2_bwd's second parameter. */
typedef struct rt_bwd_maps {
  rt_tmap q, k, v, dout, lse, delta;
} rt_bwd_maps;

/* A ws backward's LSE and delta rows, padded to 64 (a TMA box starts on 16 bytes):
 * fa2_bwd_pre writes them after delta's batch x heads_q x seqlen_q rows (whole 64s of
 * them), LSE then delta, each batch x heads_q x RT_BWD_WS_ROWS(seqlen_q) (bwd.cu.tpl's
 * ws_pad; fa2_backward_workspace_size counts them). */
#define RT_BWD_WS_ROWS(seqlen_q) (((long long)(seqlen_q) + 63) / 64 * 64)
/* Varlen: a box needs a start on 16 bytes, 4 floats, not 64 rows: sequence b's padded
 * rows start at RT_BWD_WS_START(cu_seqlens_q[b], b) (each sequence gets up to 3 more
 * rows, which fa2_bwd_pre fills too), each head's RT_BWD_WS_SPAN(total_q, batch) rows
 * apart; boxes that run past a sequence read the next one's rows (masked: its queries
 * are past seqlen_q). fa2_bwd_pre runs over seqlen_q (the longest) + 3 rows. */
#define RT_BWD_WS_START(cu_q, b) ((((long long)(cu_q) + 3LL * (b) + 3) / 4) * 4)
#define RT_BWD_WS_SPAN(total_q, batch) RT_BWD_WS_START(total_q, batch)
/* The padded LSE's rows (delta's copy has as many): varlen each head's span, else batch x
 * heads_q x RT_BWD_WS_ROWS. */
#define RT_BWD_WS_PAD_ROWS(varlen, batch, heads_q, seqlen_q, total_q)                   \
  ((varlen) ? (long long)(heads_q) * RT_BWD_WS_SPAN(total_q, batch)                   \
            : (long long)(batch) * (heads_q) * RT_BWD_WS_ROWS(seqlen_q))

/* A ws backward (12 warps) runs fa2_bwd_dq_det on 8 (bwd.cu.tpl's kDetThreads: 12 would
 * cap its registers at 168); other tiles on their own. 16 query rows per warp. */
#define RT_BWD_DET_THREADS(threads) ((threads) > 256 ? 256 : (threads))

/* Everything a map depends on but the address. */
typedef struct rt_tma_key {
  int dtype, box_rows;
  unsigned long long dims[4], strides[3]; /* strides in bytes, of dims 1..3 */
} rt_tma_key;

enum { RT_TMA_CACHE_SLOTS = 16 };

typedef struct rt_tma_cache {
  pthread_mutex_t lock;
  int n;         /* slots in use */
  unsigned next; /* the slot a miss replaces when all are used */
  rt_tma_key keys[RT_TMA_CACHE_SLOTS];
  unsigned char maps[RT_TMA_CACHE_SLOTS][128]; /* copied out to an aligned rt_tmap */
  unsigned long long hits, misses;
} rt_tma_cache;

/* 0, or -1 when the lock cannot be made. */
int rt_tma_cache_init(rt_tma_cache *c);
void rt_tma_cache_free(rt_tma_cache *c);

/* The four maps of a forward call with argument block p (pointers, strides,
 * shape; a varlen call's maps are one batch of p->total_q query and total_k key
 * rows) for 16-bit elements of dtype bf16 (1) or fp16 (0), head_dim a multiple
 * of 64 and K/V boxes of block_n rows. cache may be NULL (always encode).
 * Returns FA2_OK, or an fa2 status with the error set: the driver lacks the
 * entry points, or refused a map (naming the tensor, its dims and strides). */
int rt_tma_fwd_maps(const rt_cuda_api *cu, rt_tma_cache *cache, const fa2_fwd_params *p, int total_k,
                    int bf16, int head_dim, int block_n, rt_fwd_maps *out);

/* The six maps of a ws backward call: Q, K, V, dO as the forward's Q, K, V, O (boxes
 * of 64 query rows, block_n key rows; varlen: one batch of total_q, total_k rows), and
 * the padded LSE and delta after p->delta's rows as flat fp32 (boxes of 64). Returns
 * as rt_tma_fwd_maps. */
int rt_tma_bwd_maps(const rt_cuda_api *cu, rt_tma_cache *cache, const fa2_bwd_params *p, int total_k,
                    int bf16, int head_dim, int block_n, rt_bwd_maps *out);

#endif
