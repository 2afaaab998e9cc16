/* fa2.h: the public C API of libfa2rt (JIT-compiled FlashAttention-2).
 *
 *   fa2_context *ctx;
 *   fa2_options opt = {0};                  // zero = defaults: device 0, ~/.cache/fa2gen
 *   if (fa2_create(&ctx, &opt) != FA2_OK) fprintf(stderr, "%s\n", fa2_last_error());
 *   fa2_fwd_args a = {0};
 *   a.q = (fa2_tensor){q_ptr, FA2_BF16, N * H * d, H * d, d};  // (B, N, H, d) contiguous
 *   ... k, v, o likewise; a.lse = lse_ptr; a.batch = B; a.seqlen_q = a.seqlen_k = N;
 *   a.heads_q = a.heads_kv = H; a.head_dim = d; a.stab = FA2_STAB_ROBUST;
 *   fa2_forward(ctx, &a, stream);          // stream: a CUstream (cudaStream_t), NULL = legacy
 *   fa2_destroy(ctx);
 *
 * Every call returns a status; on failure fa2_last_error() (thread-local)
 * says what was wrong: the bad value and what is allowed. Nothing here
 * prints except warnings through the log level, and nothing exits.
 *
 * Kernels come from, in order: the in-memory cache, AOT cubins in
 * options.aot_dir (`fa2 build` output, checked against the generator), the
 * disk cache, NVRTC. The first call of a variant may compile (about a
 * second); later processes load it from the disk cache (milliseconds).
 */
#ifndef FA2_H
#define FA2_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FA2_API __attribute__((visibility("default")))

typedef enum fa2_status {
  FA2_OK = 0,
  FA2_ERR_INVALID_ARGUMENT = 1, /* a bad argument: see fa2_last_error() */
  FA2_ERR_UNSUPPORTED = 2,      /* valid but not supported (head_dim, dtype, arch) */
  FA2_ERR_NO_DRIVER = 3,        /* libcuda.so.1 missing, no device, bad ordinal */
  FA2_ERR_NO_NVRTC = 4,         /* a kernel must be compiled and NVRTC is not found */
  FA2_ERR_COMPILE = 5,          /* generator or NVRTC failed on a variant */
  FA2_ERR_CUDA = 6,             /* a CUDA driver call failed */
  FA2_ERR_OUT_OF_MEMORY = 7,
  FA2_ERR_NOT_AVAILABLE = 8,    /* a feature this build does not have */
  FA2_ERR_INTERNAL = 9,
  FA2_ERR_CAPTURING = 10,       /* the stream is capturing a CUDA graph and the call would
                                   have to load a kernel or allocate: prepare it first */
} fa2_status;

/* Thread-local description of the last failure of an fa2_* call. */
FA2_API const char *fa2_last_error(void);
/* "FA2_ERR_INVALID_ARGUMENT", ...; never NULL. */
FA2_API const char *fa2_status_name(int status);
/* fa2gen's version, e.g. "0.1.0". */
FA2_API const char *fa2_version(void);

typedef enum fa2_log_level {
  FA2_LOG_DEFAULT = 0, /* = FA2_LOG_WARN */
  FA2_LOG_QUIET = 1,   /* nothing */
  FA2_LOG_ERROR = 2,
  FA2_LOG_WARN = 3,    /* e.g. "cache directory not writable: memory-only" (once) */
  FA2_LOG_INFO = 4,    /* one line per kernel obtained: where from, how long */
  FA2_LOG_DEBUG = 5,
} fa2_log_level;

/* Receives each message at or below the log level. NULL: stderr, "fa2: ..." */
typedef void (*fa2_log_fn)(int level, const char *message, void *user);

/* All fields optional: a zeroed struct (or NULL options) means defaults. */
typedef struct fa2_options {
  int device;            /* CUDA device ordinal (as CUDA_VISIBLE_DEVICES numbers them) */
  const char *cache_dir; /* NULL: $FA2_CACHE_DIR, else $XDG_CACHE_HOME/fa2gen, else
                            ~/.cache/fa2gen */
  int no_disk_cache;     /* 1: memory cache only */
  const char *aot_dir;   /* an out/ directory of `fa2 build`; NULL: $FA2_AOT_DIR or none */
  const char *tuning_db; /* tuning database (JSON, `fa2 tune`); NULL: $FA2_TUNING_DB, else
                            this GPU's file in the cache directory when there is one;
                            "off": none (built-in tiles, defaults for FA2_STAB_TUNED) */
  int log_level;         /* fa2_log_level */
  fa2_log_fn log_fn;
  void *log_user;
  const char *nvrtc_dirs; /* extra folders holding libnvrtc.so*, ':'-separated (the
                             NVIDIA pip packages' lib folders); also $FA2_NVRTC_DIRS */
  int jobs;               /* fa2_prepare threads; 0: min(CPUs, 8) */
} fa2_options;

typedef struct fa2_context fa2_context;

/* Loads the driver, retains the device's primary context (the one PyTorch
 * and the CUDA runtime use), opens the caches. NVRTC is loaded on the first
 * compile only. *ctx is NULL on failure. */
FA2_API fa2_status fa2_create(fa2_context **ctx, const fa2_options *options);
/* Unloads the modules and releases the primary context. NULL is fine.
 * The caller makes sure no launch of ctx is still running. */
FA2_API void fa2_destroy(fa2_context *ctx);

typedef enum fa2_dtype { FA2_BF16 = 0, FA2_FP16 = 1 } fa2_dtype;

typedef enum fa2_stab {
  FA2_STAB_NONE = 0,   /* classic FA2 */
  FA2_STAB_PAPER = 1,  /* Algorithm 3 of the paper */
  FA2_STAB_ROBUST = 2, /* cross-tile ties, bounded row-dependent shift (DESIGN.md) */
  FA2_STAB_TUNED = 3,  /* robust with the tuning database's beta/eps (else defaults) */
  /* none's softmax, and O rounded so that each row's rounding errors sum to zero in
   * expectation (issue 22; templates/round_balanced.cuh.tpl): unbiased where none is
   * biased, at none's error. One random draw per output row, from the dropout fields'
   * seed and offset (dropout_rng, else dropout_seed and dropout_offset): the same
   * seed gives the same bits. The backward is none's. */
  FA2_STAB_BALANCED = 4,
} fa2_stab;

/* Default beta and eps when the argument is 0. */
#define FA2_DEFAULT_BETA 2.0
#define FA2_DEFAULT_EPS 1e-3

/* A (batch, seqlen, heads, head_dim) tensor on the device. head_dim is
 * contiguous; the other strides are in elements (not bytes) and must keep
 * every row 16-byte aligned (multiples of 8 for bf16/fp16). */
typedef struct fa2_tensor {
  void *data;
  fa2_dtype dtype;
  long long batch_stride, seq_stride, head_stride;
} fa2_tensor;

typedef struct fa2_fwd_args {
  fa2_tensor q;   /* (batch, seqlen_q, heads_q, head_dim) */
  fa2_tensor k;   /* (batch, seqlen_k, heads_kv, head_dim) */
  fa2_tensor v;   /* (batch, seqlen_k, heads_kv, head_dim) */
  fa2_tensor o;   /* (batch, seqlen_q, heads_q, head_dim), written */
  float *lse;     /* (batch, heads_q, seqlen_q) fp32 contiguous, written (natural log) */
  int batch, seqlen_q, seqlen_k;
  int heads_q, heads_kv; /* heads_q a multiple of heads_kv (GQA/MQA) */
  int head_dim;          /* a multiple of 8 from 8 to 256 (16, 32, 48, 64, 80, 96, 128, 160,
                            192, 224 and 256 have their own tiles; others run on those of
                            the next, the columns past head_dim masked) */
  float scale;           /* softmax scale; 0: 1/sqrt(head_dim) */
  int causal;            /* bottom-right aligned, as FlashAttention >= 2.1 */
  fa2_stab stab;
  double beta, eps;      /* paper/robust; 0: FA2_DEFAULT_BETA / FA2_DEFAULT_EPS */
  float *o_fp32;         /* optional, written when non-NULL: O in fp32, contiguous
                            (batch, seqlen_q, heads_q, head_dim), for the backward's
                            FA2_DELTA_FP32; varlen: (total_q, heads_q, head_dim) */
  /* Variable-length batches (FlashAttention-2's varlen layout); NULL: fixed length.
   * Sequence b is rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of q and o, and
   * likewise of k and v with cu_seqlens_k: int32 device arrays of batch + 1
   * non-decreasing offsets from 0 to total_q / total_k. seqlen_q and seqlen_k are then
   * the longest sequences (FA2's max_seqlen_q/k), the tensors (total, heads, head_dim)
   * with batch_stride unused, and LSE (heads_q, total_q). Causal is aligned bottom-right
   * per sequence. The offsets are not checked: reading them would synchronize with the
   * device (and break graph capture); offsets out of order or past total_q/total_k are
   * undefined behaviour. */
  const int *cu_seqlens_q, *cu_seqlens_k;
  int total_q, total_k;
  /* Sliding window (FlashAttention-2's window_size); window = 0: none. With window = 1,
   * query i sees keys i + diag - window_left .. i + diag + window_right, diag =
   * seqlen_k - seqlen_q (per sequence when varlen), -1 leaving that side unbounded;
   * causal must then be 0: a causal window is window_right = 0. Keys tiles outside
   * every row's window are skipped, so the cost grows with the window, not seqlen_k. */
  int window, window_left, window_right;
  /* ALiBi (FlashAttention-2's alibi_slopes); NULL: none. fp32 slopes on the device: the
   * score of query i and key j loses slope * |i + diag - j| after the softmax scale;
   * (batch b, query head h) reads alibi_slopes[b * alibi_batch_stride + h] (stride 0:
   * one slope per head, FA2's (heads,) shape; heads_q: its (batch, heads)). */
  const float *alibi_slopes;
  long long alibi_batch_stride;
  /* Softcap (FlashAttention-2's softcap, Gemma 2's logit capping); 0: none. A scaled
   * score x becomes softcap * tanh(x / softcap) before the softmax. */
  float softcap;
  /* Attention dropout (FlashAttention-2's dropout_p); dropout = 0: none. With
   * dropout = 1 each softmax probability is kept with probability 1 - dropout_p (0 <=
   * dropout_p < 1; 0 keeps all) and the kept ones are scaled by 1 / (1 - dropout_p); the
   * softmax sum and LSE are those without dropout, and the backward (same seed, offset
   * and p) regenerates the same mask. The mask is Philox4x32-10 keyed by element
   * (templates/fa2_philox.h: seed, offset + batch * heads_q + head, row, key), the same
   * for every tile shape. Seed and offset: dropout_rng when not NULL, a device pointer
   * to two 8-byte words {seed, offset} read by the kernels (so a captured CUDA graph
   * replays with whatever the words hold then: PyTorch's generator), else the values
   * dropout_seed, dropout_offset. */
  int dropout;
  float dropout_p;
  const unsigned long long *dropout_rng;
  unsigned long long dropout_seed, dropout_offset;
  /* Attention sinks (gpt-oss); NULL: none. heads_q fp32 logits on the device, in the
   * units of the scaled scores: exp(sinks[h]) joins the softmax sum of every row of
   * query head h (and its LSE), not O: O = sum_j exp(s_j - LSE) v_j with LSE =
   * log(sum_j exp(s_j) + exp(sinks[h])). A row that sees no key: O = 0, LSE = sinks[h]
   * (the softmax over the sink alone). */
  const float *sinks;
} fa2_fwd_args;

/* Checks args as fa2_forward does, without a context or a GPU. */
FA2_API fa2_status fa2_check_forward(const fa2_fwd_args *args);

/* O = softmax(scale Q K^T) V and LSE, enqueued on stream (a CUstream /
 * cudaStream_t of ctx's device; NULL: the legacy default stream). Returns
 * once enqueued. batch == 0 or seqlen_q == 0 is a no-op. The first call of
 * a variant may compile it; fa2_prepare moves that to start-up.
 * CUDA graphs: a call on a capturing stream only launches. When its kernel
 * is not loaded yet (no earlier call or fa2_prepare of that variant), it
 * fails with FA2_ERR_CAPTURING naming the variant, and the capture stays
 * valid. A persistent kernel (README, ws tiles) keeps one device int per
 * stream (16 streams at most, then a full grid), made on the stream's first
 * call; on a capturing stream without one it launches the full grid. */
FA2_API fa2_status fa2_forward(fa2_context *ctx, const fa2_fwd_args *args, void *stream);

typedef enum fa2_delta_mode {
  FA2_DELTA_LOWP = 0, /* delta = rowsum(dO * O) from O in the input dtype (classic) */
  FA2_DELTA_FP32 = 1, /* delta from an fp32 O (o_fp32), as the paper recommends */
} fa2_delta_mode;

/* Backward arguments (FlashAttention-2's Algorithm 2: delta, then dK/dV per
 * key block with dQ accumulated in fp32, then dQ converted). */
typedef struct fa2_bwd_args {
  fa2_tensor q, k, v, o; /* as in the forward */
  fa2_tensor dout;       /* dO: like o */
  fa2_tensor dq;         /* written: like q */
  fa2_tensor dk, dv;     /* written: like k, v (reduced over each GQA group) */
  const float *lse;      /* from the forward */
  fa2_delta_mode delta;
  const float *o_fp32;   /* FA2_DELTA_FP32: O in fp32, contiguous (batch, seqlen_q, heads_q,
                            head_dim) */
  void *workspace;       /* device scratch (fp32 dQ accumulator, delta, padded LSE/delta
                            rows for Hopper's ws tiles); NULL: allocated */
  size_t workspace_bytes;
  int deterministic;     /* 1: dQ without atomics (a kernel per query block recomputes
                            S and dP): the same inputs give the same bits every run */
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
  float scale;
  int causal;
  fa2_stab stab;         /* the forward's; the backward itself does not change */
  double beta, eps;
  const int *cu_seqlens_q, *cu_seqlens_k; /* varlen, as in fa2_fwd_args */
  int total_q, total_k;
  int window, window_left, window_right;  /* as in fa2_fwd_args */
  const float *alibi_slopes;              /* as in fa2_fwd_args */
  long long alibi_batch_stride;
  float softcap;                          /* as in fa2_fwd_args */
  int dropout;                            /* as in fa2_fwd_args: the forward's p, seed */
  float dropout_p;                        /* and offset give the forward's mask */
  const unsigned long long *dropout_rng;
  unsigned long long dropout_seed, dropout_offset;
  const float *sinks;                     /* as in fa2_fwd_args; then ... */
  float *dsinks;                          /* ... written: their gradient, heads_q fp32 on the
                                             device, -sum over batch and rows of
                                             exp(sinks[h] - LSE) delta (delta = rowsum(dO O)),
                                             the same bits on every run (no atomics); NULL
                                             without sinks */
} fa2_bwd_args;

FA2_API fa2_status fa2_backward(fa2_context *ctx, const fa2_bwd_args *args, void *stream);
/* Bytes of device workspace fa2_backward needs for these sizes (fp32 dQ
 * accumulator, delta, and LSE and delta again in rows padded to 64, which
 * sm_90's warp-specialized backward loads by TMA); pass at least that much as args->workspace, or
 * NULL to let the context keep a growing buffer (then do not run backward
 * passes of one context on several streams at once). */
FA2_API size_t fa2_backward_workspace_size(const fa2_bwd_args *args);
/* The argument checks of fa2_backward alone (no context, no GPU). */
FA2_API fa2_status fa2_check_backward(const fa2_bwd_args *args);

/* One kernel to prepare: a canonical variant name (as `fa2 list` prints it),
 * or, with name NULL, the fields a fa2_forward call would select from. */
typedef struct fa2_kernel_desc {
  const char *name;
  fa2_dtype dtype;
  int head_dim;
  int causal;
  fa2_stab stab;
  double beta, eps;
  int seqlen; /* the calls' sequence length (sqrt(seqlen_q * seqlen_k)): picks the
                 tuning database's tiles for that length; 0: the key's own tiles;
                 < 0: an error */
  int varlen; /* 1: the variable-length kernel (calls with cu_seqlens), for packed
                 batches of mixed lengths: at d = 64 a batch whose sequences fill 3/4 of
                 batch x seqlen_q takes the fixed length's tiles from 1k instead, which
                 this does not prepare */
  int window; /* 1: the sliding-window kernel (then causal = 0) */
  int alibi;  /* 1: the ALiBi kernel */
  int softcap; /* 1: the softcap kernel */
  int dropout; /* 1: the dropout kernel */
  int sinks;   /* 1: the attention-sinks kernel */
} fa2_kernel_desc;

/* Dropout's keep mask of a call: for args' batch, heads_q, seqlen_q, seqlen_k (varlen:
 * the longest sequences), dropout_p and seed/offset (the rest of args is not read),
 * mask[((b * heads_q + h) * seqlen_q + i) * seqlen_k + j] = 1 when element (i, j) of
 * (batch b, query head h) is kept, 0 when dropped: the bits fa2_forward and
 * fa2_backward draw (for tests, and to see a mask). fa2_dropout_mask writes a device
 * buffer on stream (the mask kernel of the bf16 d64 dropout forward, loaded like any
 * kernel); fa2_dropout_mask_host the same bytes into host memory (dropout_rng must
 * then be NULL: the host cannot read it). */
FA2_API fa2_status fa2_dropout_mask(fa2_context *ctx, const fa2_fwd_args *args,
                                    unsigned char *mask, void *stream);
FA2_API fa2_status fa2_dropout_mask_host(const fa2_fwd_args *args, unsigned char *mask);

/* Loads or compiles each kernel now (options.jobs threads), so that the
 * first fa2_forward does not. Stops at the first failure. */
FA2_API fa2_status fa2_prepare(fa2_context *ctx, const fa2_kernel_desc *kernels, int n);
/* Prepares every forward variant of a spec file; NULL: the built-in
 * specs/default.lua. */
FA2_API fa2_status fa2_prepare_spec(fa2_context *ctx, const char *spec_path);

typedef struct fa2_cache_stats {
  unsigned long long memory_hits; /* launches (and prepares) served from memory */
  unsigned long long aot_hits;    /* kernels loaded from options.aot_dir */
  unsigned long long disk_hits;   /* kernels loaded from the disk cache */
  unsigned long long misses;      /* kernels compiled with NVRTC */
  unsigned long long launches;
  double compile_ms;              /* NVRTC time, all compiles */
  double load_ms;                 /* obtaining kernels (render, read, module load), all
                                     levels, compile included */
  int disk_cache;                 /* 1 when the disk cache is writable */
  char arch[16];                  /* "sm_90" */
  char device_name[96];
  char cache_dir[1024];
} fa2_cache_stats;

/* Counters since fa2_create. */
FA2_API fa2_status fa2_stats(fa2_context *ctx, fa2_cache_stats *out);

/* The tuning database this context reads (or looked for and did not find):
 * by default <cache dir>/tuning/<gpu>_<arch>_<SMs>sm.json. FA2_ERR_NOT_AVAILABLE
 * when switched off or there is no cache directory. */
FA2_API fa2_status fa2_tuning_path(fa2_context *ctx, char *buf, size_t len);

/* Records in the database at db_path (NULL: fa2_tuning_path's) the
 * stabilization FA2_STAB_TUNED uses for dtype and head_dim, causal and not
 * (what `fa2 tune` stores after its beta calibration). Same checks as a
 * forward call; beta/eps 0: the defaults. */
FA2_API fa2_status fa2_tuning_set_stab(fa2_context *ctx, const char *db_path, fa2_dtype dtype,
                                       int head_dim, fa2_stab stab, double beta, double eps);

/* ---- autotuner (`fa2 tune`) ----
 * For each tuning key of a spec (pass, dtype, head dim, causal, and the mode
 * for a forward), fa2_tune loads every candidate tile shape the generator
 * accepts for this GPU (NVRTC, options.jobs threads, cached like any kernel),
 * drops those that spill or use a stack, times the rest with CUDA events
 * (one warm-up, reps launches per round, rounds interleaved, the median;
 * two input sets in turn so the L2 cache does not flatter) on the
 * shape table B*N = 16384 tokens, H*d = 2048, re-times the finalists (those
 * within 5 % of the fastest at some length) with more launches, and stores
 * the tiles whose worst ratio to the fastest over the lengths is smallest,
 * plus per length the fastest there when it is 1.5 % faster still (the
 * runtime picks by the nearest tuned length). Contexts created afterwards
 * use them. Each timing is journaled next to the database; a run
 * that stops (budget, Ctrl-C, a crash) resumes from the journal. */
typedef struct fa2_tune_progress {
  const char *phase;       /* "compile" or "time" */
  int done, total;         /* steps of this phase */
  double elapsed_s, eta_s; /* of this phase; eta_s < 0: not known yet */
  const char *what;        /* the kernel or tuning key at hand */
} fa2_tune_progress;

typedef void (*fa2_tune_progress_fn)(const fa2_tune_progress *p, void *user);

typedef struct fa2_tune_options {
  const char *spec_path;       /* NULL: the built-in specs/default.lua */
  const int *seqlens;          /* NULL: 1024, 2048, 4096, 8192, 16384 */
  int n_seqlens;               /* up to 8 */
  double budget_s;             /* > 0: stop timing after this many seconds, store the best
                                  of what was timed, keep the journal */
  int wide;                    /* 1: the larger grid of a manual sweep (slow) */
  int reps, rounds;            /* first pass: 0: 3 and 2 (wide: 10 and 3) */
  int finalists;               /* re-timed candidates per key: 0: 6, -1: no second pass */
  int final_reps;              /* their launches per round (4 rounds): 0: 10 */
  int dry_run;                 /* 1: write no database */
  const char *db_path;         /* NULL: fa2_tuning_path's */
  const char *report_path;     /* JSON of every candidate, timing and choice; NULL: none */
  int fresh;                   /* 1: ignore the journal of an earlier run */
  fa2_tune_progress_fn progress;
  void *progress_user;
} fa2_tune_options;

/* Tunes; *complete (may be NULL) is 1 when every key was timed, 0 when the
 * budget stopped it (run again to resume). */
FA2_API fa2_status fa2_tune(fa2_context *ctx, const fa2_tune_options *options, int *complete);

#ifdef __cplusplus
}
#endif
#endif
