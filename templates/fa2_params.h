/* fa2_params.h: the argument block of the generated kernels.
 *
 * One definition for both sides: the C runtime #includes this file, and the
 * templates paste it verbatim into every generated CUDA source (which has no
 * #include). Plain C, fixed-width fields, 8-byte fields first, so the host
 * (x86-64) and device (NVPTX64) layouts are the same. A kernel takes the
 * struct by value as its only parameter.
 *
 * Tensors are (batch, seqlen, heads, head_dim) with head_dim contiguous and
 * arbitrary element strides for batch, sequence and head (packed QKV works
 * without copies). LSE is (batch, heads_q, seqlen_q) fp32, contiguous.
 *
 * Variable-length batches (varlen variants, FlashAttention-2's layout):
 * sequence b has rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of q
 * (total_q, heads, head_dim) and likewise of k/v with cu_seqlens_k; the
 * batch strides are unused, seqlen_q/seqlen_k are the longest sequences (the
 * grid), LSE is (heads_q, total_q). Other variants ignore these fields.
 * Keep in sync: tests/test_params.c checks sizes and offsets on the host.
 */
#ifndef FA2_PARAMS_H
#define FA2_PARAMS_H

typedef struct fa2_fwd_params {
  const void *q, *k, *v; /* bf16 or fp16, 16-byte aligned */
  void *o;               /* same dtype as q */
  float *lse;            /* natural-log LSE of the scaled scores; +inf on empty rows (with
                            sinks: the sink's log-weight joins it, an empty row's is the sink) */
  long long q_batch_stride, q_row_stride, q_head_stride; /* in elements */
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  long long o_batch_stride, o_row_stride, o_head_stride;
  int batch, seqlen_q, seqlen_k;
  int heads_q, heads_kv; /* heads_q % heads_kv == 0 (GQA/MQA) */
  float scale;           /* softmax scale alpha: S = alpha * Q K^T */
  float *o_f32;          /* optional (NULL: not written): O in fp32, contiguous
                            (batch, seqlen_q, heads_q, head_dim), for the backward's
                            higher-precision delta */
  const int *cu_seqlens_q, *cu_seqlens_k; /* varlen: batch + 1 row offsets each */
  int total_q;                            /* varlen: rows of q */
  int window_left, window_right; /* window variants: query i sees keys i + diag - left ..
                                    i + diag + right (diag = seqlen_k - seqlen_q); -1:
                                    that side unbounded */
  const float *alibi_slopes;     /* alibi variants: slope of (batch b, query head h) at
                                    b * alibi_batch_stride + h (0: one slope per head) */
  long long alibi_batch_stride;
  float softcap;                 /* softcap variants: scores s * scale become
                                    softcap * tanh(s * scale / softcap) */
  /* dropout variants (fa2_philox.h): an element is kept when its 16-bit number is
     below keep16, given as dropout_limit = ((keep16 - 1) << 16) | 0xffff; the kept
     P are scaled by dropout_scale = 1 / (1 - p) (dropout_keep = 1 - p). Philox seed
     and counter offset: dropout_rng[0], [1] on the device when not NULL (read by the
     kernels: PyTorch's generator, CUDA-graph safe), else dropout_seed/offset. The
     fa2_dropout_mask entry writes its keep bytes to o. Balanced variants draw their
     rounding of O from the same seed and offset (round_balanced.cuh.tpl). */
  const unsigned long long *dropout_rng;
  unsigned long long dropout_seed, dropout_offset;
  unsigned dropout_limit;
  float dropout_keep, dropout_scale;
  const float *sinks;            /* sinks variants: (heads_q) fp32 logits, in the units
                                    of the scaled scores; exp(sinks[h]) joins the softmax
                                    sum of every row of head h (LSE too), not O */
  float inv_scale;               /* 1 / scale, and softcap's factors scale / softcap and */
  float cap_in, cap_out;         /* softcap / scale (0 without softcap), set by the runtime:
                                    kernels multiply (a division there calls a slow path,
                                    and registers are saved around the call) and read the
                                    factors from here (no register holds them) */
  int *tile_counter;             /* ws tiles (fwd_ws.cu.tpl), optional: a device int that is 0
                                    before the launch (and again after it); with it a grid of
                                    fewer blocks than work items takes them in turn */
} fa2_fwd_params;

/* The backward pass: three kernels, launched in this order with this block.
 *   fa2_bwd_pre  delta = rowsum(dO * O) (from o_f32 when given), dq_accum = 0
 *   fa2_bwd      dK, dV per key block; dQ added to dq_accum (fp32 atomics)
 *   fa2_bwd_dq   dQ = dtype(scale * dq_accum)
 * In deterministic mode (deterministic = 1) fa2_bwd leaves dQ alone and
 * fa2_bwd_dq_det replaces fa2_bwd_dq: grid (ceil(seqlen_q / (16 * warps)),
 * heads_q, batch), the variant's block and dynamic shared memory; it writes
 * dQ without atomics (same inputs, same bits). A sinks variant adds fa2_bwd_sink
 * (dsinks from LSE and delta, in one fixed order: same bits in either mode). */
typedef struct fa2_bwd_params {
  const void *q, *k, *v, *o, *dout; /* as in the forward; dout like o */
  void *dq, *dk, *dv;               /* written: like q, k, v (dk, dv reduced over GQA groups) */
  const float *lse;                 /* (batch, heads_q, seqlen_q) from the forward */
  const float *o_f32;               /* optional fp32 O (see fa2_fwd_params); NULL: use o */
  float *dq_accum;                  /* workspace: (batch, seqlen_q, heads_q, head_dim) fp32 */
  float *delta;                     /* workspace: (batch, heads_q, seqlen_q) fp32 */
  long long q_batch_stride, q_row_stride, q_head_stride; /* in elements */
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  long long o_batch_stride, o_row_stride, o_head_stride;
  long long do_batch_stride, do_row_stride, do_head_stride;
  long long dq_batch_stride, dq_row_stride, dq_head_stride;
  long long dk_batch_stride, dk_row_stride, dk_head_stride;
  long long dv_batch_stride, dv_row_stride, dv_head_stride;
  int batch, seqlen_q, seqlen_k;
  int heads_q, heads_kv;
  float scale;
  int deterministic; /* 1: dQ by fa2_bwd_dq_det (see above) */
  const int *cu_seqlens_q, *cu_seqlens_k; /* varlen, as in the forward; dq_accum is then
                                             (total_q, heads_q, head_dim), delta like LSE */
  int total_q;
  int window_left, window_right; /* window variants, as in the forward */
  const float *alibi_slopes;     /* alibi variants, as in the forward */
  long long alibi_batch_stride;
  float softcap;                 /* softcap variants, as in the forward */
  const unsigned long long *dropout_rng; /* dropout variants, as in the forward */
  unsigned long long dropout_seed, dropout_offset;
  unsigned dropout_limit;
  float dropout_keep, dropout_scale;
  const float *sinks;            /* sinks variants, as in the forward ... */
  float *dsinks;                 /* ... and their gradient (heads_q) fp32, written by
                                    fa2_bwd_sink (grid heads_q, FA2_BWD_SINK_THREADS
                                    threads, launched after fa2_bwd_pre) */
  float inv_scale, cap_in, cap_out; /* as in the forward */
} fa2_bwd_params;

/* fa2_bwd_pre and fa2_bwd_dq (row kernels): 8 elements of a row per lane (16-byte
 * loads) on the smallest power-of-two group of lanes that covers head_dim d, so a
 * warp takes 32 / FA2_ROW_LANES(d) rows (the runtime sizes their grids by it). */
#define FA2_ROW_LANES(d) ((d) <= 8 ? 1 : (d) <= 16 ? 2 : (d) <= 32 ? 4 : (d) <= 64 ? 8 : (d) <= 128 ? 16 : 32)
/* Rows of one row-kernel block of `threads` threads: its grid x is ceil(seqlen_q / this). */
#define FA2_ROW_BLOCK(threads, d) ((threads) / 32 * (32 / FA2_ROW_LANES(d)))

/* Block size of fa2_bwd_sink (sinks variants' fifth backward entry). */
enum { FA2_BWD_SINK_THREADS = 1024 };

#endif
