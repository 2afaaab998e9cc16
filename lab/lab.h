/* lab: the numerics lab. CPU-only models of what the kernels compute, and the
 * measures that say whether their rounding is biased (DESIGN.md "Numerics").
 *
 *   lab_round.c   float32 -> bf16 / fp16, round-to-nearest-even, bit-exact
 *   lab_ref.c     float64 reference attention: forward (O, LSE), backward
 *   lab_tc.c      the tensor cores' inner product: IEEE fp32, or Hopper's
 *                 (aligned, truncated blocks of 16 products)
 *   lab_fa2.c     tiled FA2 emulation with the kernels' arithmetic and the
 *                 none / paper / robust stabilization (ARCHITECTURE.md)
 *   lab_bwd.c     backward emulation: delta from the low-precision or fp32 O
 *   lab_metrics.c bias ratio, errors, tied-maximum rate, delta bias
 *   lab_floor.c   the least error any output with |bias ratio| <= 0.01 can have
 *   lab_suite.c   the tie-heavy suite of `fa2 bias` (cases, inputs, rows)
 *   lab_drift.c   the paper's mechanism: a low-rank gradient error that
 *                 grows linearly when delta is biased (`fa2 bias --drift`)
 *
 * Tensors are row-major (batch, seqlen, heads, head_dim) float arrays that
 * hold values exactly representable in the dtype; LSE is (batch, heads,
 * seqlen_q). Causal masks align to the bottom right (query i sees key j iff
 * j <= i + seqlen_k - seqlen_q), like the kernels. Nothing here prints,
 * exits or keeps global state; every function is thread-safe.
 */
#ifndef LAB_H
#define LAB_H
#include <stdint.h>

typedef enum lab_dtype { LAB_BF16 = 0, LAB_FP16 = 1 } lab_dtype;
/* LAB_BALANCED: none's softmax, O rounded as lab_round_row_bisect. */
typedef enum lab_mode { LAB_NONE = 0, LAB_PAPER = 1, LAB_ROBUST = 2, LAB_BALANCED = 3 } lab_mode;

/* ---- lab_round.c ------------------------------------------------------------ */
uint16_t lab_f32_to_bf16(float x); /* RNE; NaN stays NaN (quiet), overflow -> inf */
float lab_bf16_to_f32(uint16_t h);
uint16_t lab_f32_to_fp16(float x); /* RNE; subnormals; overflow -> inf; NaN quiet */
float lab_fp16_to_f32(uint16_t h);
float lab_round(float x, lab_dtype t); /* x rounded to the dtype, as a float */
/* float64 -> dtype, correctly rounded: to fp32 by round-to-odd first (double ->
 * float -> bf16 rounds twice and can land on the wrong side of a tie). */
float lab_round_f64(double x, lab_dtype t);
/* The dtype neighbour of dtype value a (finite) one step toward x != a. */
float lab_step_toward(float a, double x, lab_dtype t);
/* x rounded stochastically to one of its two dtype neighbours, the farther one
 * with probability |x - nearer| / |farther - nearer| (so the expected result is
 * x); u in [0, 1) decides. A dtype value, inf or NaN comes back as lab_round's. */
float lab_round_stochastic(float x, lab_dtype t, double u);
/* The same within window (a fraction of the gap, up to 1/2) of the midpoint between
 * x's two neighbours, to nearest elsewhere: each x's expected result is x in the
 * window, and nearest outside it (window 1/2: lab_round_stochastic). */
float lab_round_stochastic_near_half(float x, lab_dtype t, double u, double window);
/* x[n] (one output row) rounded so that the row's rounding errors sum to zero in
 * expectation and to little in each row: to nearest; then the elements whose error
 * has the sum's sign, nearest their midpoint first, cross to their other neighbour
 * while their gaps fit in what is left of |sum| (not one whose error would pass
 * LAB_ROW_CAP times the row's largest gap: 1.1x the most rounding to nearest makes
 * there), and the next crosses with probability (what is left) / its gap (u in
 * [0, 1) decides). One threshold on t = |error| / gap picks the set, as a kernel
 * would find it by bisection. With max_moves > 0, at most that many moves, the last
 * one drawn with probability min(1, what is left / its gap): what bounded work would
 * get. out[n]. */
#define LAB_ROW_CAP 0.55
/* The kernels' balanced rounding of one row of d (a multiple of 8, <= 256)
 * values (mode "balanced", templates/round_balanced.cuh.tpl), bit for bit: nearest,
 * then crossings against the row's error sum found by two bisection steps and
 * systematic sampling on draw (fa2_round_draw). out may be x. */
void lab_round_row_bisect(const float *x, int d, lab_dtype t, uint32_t draw, float *out);
void lab_round_row_balanced(const float *x, int n, lab_dtype t, double u, int max_moves, float *out);
/* A uniform [0, 1) number from (seed, index): splitmix64's mix, so that each
 * output element of a run has its own, the same in every run. */
double lab_hash_uniform(uint64_t seed, uint64_t index);

/* ---- lab_shape.c: shapes and names ----------------------------------------------- */
const char *lab_dtype_name(lab_dtype t);
const char *lab_mode_name(lab_mode m);

typedef struct lab_shape {
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
  int causal;
  double scale; /* softmax scale; 0 means 1/sqrt(head_dim) */
  /* Score modifiers, as the kernels take them (zero / NULL: none). With diag =
   * seqlen_k - seqlen_q and x = scale q . k the scaled score of query i, key j:
   * softcap first, x <- softcap tanh(x / softcap); then ALiBi, x -= slope_h |i + diag - j|;
   * a window keeps keys i + diag - window_left .. i + diag + window_right (-1: that
   * side unbounded; not with causal); sinks: exp(sinks[h]) joins each row's softmax
   * sum and LSE, not O (a row that sees no key: O = 0, LSE = sinks[h]). */
  int window, window_left, window_right;
  double softcap;
  const float *alibi; /* heads_q slopes */
  const float *sinks; /* heads_q logits */
} lab_shape;

double lab_scale(const lab_shape *s);
long long lab_q_elems(const lab_shape *s);  /* B * Nq * Hq * d (Q, O, dO, dQ) */
long long lab_kv_elems(const lab_shape *s); /* B * Nk * Hkv * d (K, V, dK, dV) */
long long lab_rows(const lab_shape *s);     /* B * Hq * Nq (LSE, delta) */
/* Keys query row i sees: [*lo, *hi), empty when *lo == *hi (causal and window edges,
 * bottom-right aligned). lab_visible: how many. */
void lab_key_range(const lab_shape *s, int i, int *lo, int *hi);
int lab_visible(const lab_shape *s, int i);
/* x, the scaled score of query i and key j in head h, after softcap and ALiBi (float64). */
double lab_modified(const lab_shape *s, int h, int i, int j, double x);
/* The same as the kernels compute it, in fp32 and raw units (raw = x / scale):
 * cap_out tanh(raw cap_in) with cap_in = scale / softcap, cap_out = softcap / scale,
 * then raw -= (slope / scale) |i + diag - j|. (tanhf here; the kernels' tanh.approx
 * differs by up to 2^-11 relative, and both give 1 exactly on saturated scores.) */
float lab_modified_raw(const lab_shape *s, int h, int i, int j, float raw);

/* ---- lab_ref.c: float64 reference ------------------------------------------------
 * o (q_elems), lse (rows; +inf for a row that sees no key, whose O is 0). */
void lab_ref_forward(const lab_shape *s, const float *q, const float *k, const float *v,
                     double *o, double *lse);
/* Gradients of sum(dO * O) in float64: dq (q_elems), dk, dv (kv_elems; GQA
 * heads summed over their query group), dsinks (heads_q; may be NULL; zeros
 * without sinks). */
void lab_ref_backward(const lab_shape *s, const float *q, const float *k, const float *v,
                      const float *dout, double *dq, double *dk, double *dv, double *dsinks);

/* ---- lab_tc.c: the tensor cores' inner product -------------------------------- */
typedef enum lab_tc {
  LAB_TC_FP32 = 0, /* IEEE: each product added with one rounding to nearest, in order */
  LAB_TC_H100 = 1, /* Hopper: blocks of 16 products and the accumulator aligned to
                      their largest exponent, cut toward zero, summed exactly and
                      rounded toward zero (lab_tc.c) */
} lab_tc;
const char *lab_tc_name(lab_tc t);
/* Parses "fp32" or "h100" into *t; -1 when unknown. */
int lab_tc_parse(const char *name, lab_tc *t);
/* acc[i] += sum_{j<n} p[j] * v[j * v_stride + i] for i < d, as tensor cores
 * of kind t compute it: 16-bit values p and v, fp32 accumulators, products
 * in the order of j (Hopper's blocks of 16 start at j = 0). d = 1 is a dot
 * product. Returns 0, or -1 for d < 1, n < 0, or Hopper's model with d over
 * LAB_TC_MAX_COLS. */
enum { LAB_TC_MAX_COLS = 256 };
int lab_tc_accumulate(lab_tc t, float *acc, int d, const float *p, const float *v, long long v_stride,
                      int n);

/* ---- lab_fa2.c: the kernels' forward, emulated --------------------------------- */
/* Constructions of issue 22 (lab/README.md, "Where robust's extra error comes
 * from"), the lab's only; zeros are the kernels' arithmetic. The normalizer l:
 * the fp32 P summed (kernels), the rounded P summed (the weights of P V then sum
 * to one exactly), or the fp32 sum plus each tile maximum's rounding residual.
 * O: rounded to nearest (kernels) or stochastically (seeded by element). */
typedef enum lab_norm { LAB_NORM_FP32 = 0, LAB_NORM_ROUNDED = 1, LAB_NORM_MAXRES = 2 } lab_norm;
/* O's rounding: to nearest (kernels), stochastic, or stochastic only within
 * LAB_SRH_WINDOW of the gap from the midpoint between two neighbours, to nearest
 * elsewhere (RN's bias comes from outputs near the midpoint, lab_floor.c). */
typedef enum lab_out_round { LAB_OUT_RN = 0, LAB_OUT_SR = 1, LAB_OUT_SRH = 2, LAB_OUT_ROW = 3 } lab_out_round;
#define LAB_SRH_WINDOW 0.125
typedef struct lab_numerics {
  lab_norm norm;
  lab_out_round out;
  uint64_t seed;  /* LAB_OUT_SR, SRH, ROW: the random numbers' seed */
  int row_group;  /* LAB_OUT_ROW: rows of one head rounded together (0: LAB_ROW_GROUP) */
  int row_moves;  /* LAB_OUT_ROW: at most this many moves per group, the last drawn (0: no limit) */
} lab_numerics;
/* One: the backward's delta is a row's sum, and only rows balanced one by one keep
 * its error from drifting (lab/README.md: 16 rows come nearer the floor, drift 0.63). */
#define LAB_ROW_GROUP 1
/* "none", "robust+lrnd", "none+sr", ...: a mode and its numerics, as fa2 bias prints them. */
void lab_mode_label(lab_mode m, const lab_numerics *n, char *buf, int size);

typedef struct lab_fa2_config {
  lab_dtype dtype;
  lab_mode mode;
  int block_n;      /* keys per tile, as in the kernel variant */
  double beta, eps; /* paper / robust; eps in softmax-scaled units */
  lab_tc tc;        /* the arithmetic of Q K^T and P V (default: IEEE fp32) */
  lab_numerics num; /* issue 22's constructions (zeros: the kernels') */
} lab_fa2_config;

/* o: output rounded to the dtype (q_elems); o32: the same before rounding
 * (fp32, may be NULL); lse: fp32 natural-log LSE (rows). Returns 0, or -1
 * for a bad config (block_n < 1, beta <= 1 or eps <= 0 in a stabilized mode,
 * Hopper's sums with head_dim over LAB_TC_MAX_COLS). */
int lab_fa2_forward(const lab_shape *s, const lab_fa2_config *c, const float *q, const float *k,
                    const float *v, float *o, float *o32, float *lse);

/* ---- lab_bwd.c: the kernels' backward, emulated ------------------------------------
 * delta = rowsum(dO * O) in fp32 from the O given (the low-precision one, or
 * the fp32 one for the precise option); then P from LSE, dV = P^T dO,
 * dP = dO V^T, dS = P (dP - delta), dQ = scale dS K, dK = scale dS^T Q, with P
 * and dS rounded to the dtype before their products, fp32 accumulation. */
void lab_fa2_delta(const lab_shape *s, const float *o, const float *dout, float *delta);
int lab_fa2_backward(const lab_shape *s, lab_dtype t, const float *q, const float *k,
                     const float *v, const float *dout, const float *lse, const float *delta,
                     float *dq, float *dk, float *dv); /* 0, or -1: out of memory */
/* The sinks' gradient (heads_q) as fa2_bwd_sink computes it: -sum over batch and rows
 * of exp(sink - LSE) delta, float64 sums; s->sinks must be set. */
void lab_fa2_dsinks(const lab_shape *s, const float *lse, const float *delta, float *dsinks);

/* ---- lab_metrics.c ------------------------------------------------------------ */
typedef struct lab_err {
  double bias_ratio;   /* mean(x - ref) / mean|x - ref|, in [-1, 1]; 0 when x == ref */
  double mean_abs_err; /* mean|x - ref| over finite x */
  double rel_err;      /* ||x - ref|| / ||ref|| over finite x */
  double max_abs_err;
  long long nan_count; /* NaN or Inf in x */
} lab_err;

void lab_compare(const float *x, const double *ref, long long n, lab_err *e);
/* The same for a float64 x (the correctly rounded reference, say). */
void lab_compare_f64(const double *x, const double *ref, long long n, lab_err *e);
/* Share of rows whose maximal score (float64, visible keys) is attained by
 * more than one key. */
double lab_tied_rate(const lab_shape *s, const float *q, const float *k);
/* sum over rows T of (delta_lp - delta_hp)[T]: delta_lp = rowsum(dO * o) in
 * float64 over the low-precision o, delta_hp the same over the float64 o_ref. */
double lab_delta_bias(const lab_shape *s, const float *o, const double *o_ref, const float *dout);

/* ---- lab_suite.c: the tie-heavy suite ---------------------------------------------- */
typedef enum lab_case_kind {
  LAB_CASE_RANDOM = 0, /* control: no planted ties */
  LAB_CASE_REPEAT,     /* the maximal key at r random positions */
  LAB_CASE_SAME_TILE,  /* ... at r positions inside one key tile */
  LAB_CASE_CROSS_TILE, /* ... at r positions, each in its own key tile */
  LAB_CASE_SINK,       /* ... at key 0 and r - 1 random positions */
  LAB_CASE_POS_V,      /* LAB_CASE_REPEAT with V mostly positive (the others: negative) */
  /* Ties made or moved by the score modifiers (lab_suite.c says how): */
  LAB_CASE_SOFTCAP,    /* r keys of distinct, large scores that softcap saturates to one value */
  LAB_CASE_ALIBI,      /* ALiBi: each row's two maximal keys at equal distances either side */
  LAB_CASE_WINDOW,     /* a causal sliding window over periodic copies: which keys tie moves */
  LAB_CASE_SINK_LOGIT, /* LAB_CASE_REPEAT with attention sinks near the rows' maxima */
} lab_case_kind;

typedef struct lab_case {
  lab_case_kind kind;
  int repeats;  /* r, copies of the maximal key */
  int head_dim;
  int seqlen;   /* N = seqlen_q = seqlen_k */
  int heads;    /* one batch, heads_q = heads_kv */
  int block_n;  /* the kernel tile the ties are placed against */
  int causal;
  lab_tc tc;    /* the tensor cores the CPU emulation models */
  double cap;   /* LAB_CASE_SOFTCAP: the cap (0: 8); its copies' scaled scores 15 to 28 caps */
} lab_case;

const char *lab_case_name(lab_case_kind k);
/* Parses "random", "repeat", ... into *k; -1 when unknown. */
int lab_case_parse(const char *name, lab_case_kind *k);

/* The inputs of one case, deterministic in (case, seed): q, k, v, dout
 * (bf16 or fp16 values) and the shape, with the case's modifiers (its ALiBi
 * slopes and sinks point into alibi and sinks, heads_q each, or are NULL).
 * lab_inputs_free releases them. */
typedef struct lab_inputs {
  lab_shape shape;
  lab_dtype dtype;
  float *q, *k, *v, *dout;
  float *alibi, *sinks;
} lab_inputs;
int lab_inputs_make(const lab_case *c, lab_dtype t, uint64_t seed, lab_inputs *in);
void lab_inputs_free(lab_inputs *in);

/* One row of `fa2 bias`: a case under one mode. */
/* ---- lab_floor.c ------------------------------------------------------------- */
/* The least mean |error| of any output on the dtype grid whose bias ratio against
 * ref[n] is within +-max_bias and whose every error is at most max_err (INFINITY:
 * no cap), a lower bound from the linear relaxation: no rounding rule, even one
 * that knows ref, does better. INFINITY when no output meets both; NaN when out of
 * memory. */
double lab_unbiased_floor(const double *ref, long long n, lab_dtype dtype, double max_bias, double max_err);
#define LAB_FLOOR_BIAS 0.01 /* issue 22's |bias ratio| target */

typedef struct lab_result {
  lab_case c;
  lab_mode mode;
  double beta, eps;
  lab_err err;        /* output vs float64 */
  lab_err rounded;    /* correctly rounded float64 output vs float64 */
  double floor_mean_abs_err; /* lab_unbiased_floor at LAB_FLOOR_BIAS: what |bias| <= 0.01 costs any output */
  double delta_bias;  /* sum_T (delta_lp - delta_hp)[T] */
  double delta_bias_fp32; /* the same with delta from the fp32 O (NaN when not measured) */
  double tied_rate;
} lab_result;

/* Measures one case's inputs in every mode of modes[n_modes] (beta, eps for
 * the stabilized ones) with the CPU emulation, under numerics num (NULL: the
 * kernels'). results[n_modes]. The float64 reference is computed once. Returns
 * 0 or -1 (out of memory, bad config). */
int lab_run_cpu(const lab_case *c, const lab_inputs *in, const lab_mode *modes, int n_modes,
                double beta, double eps, const lab_numerics *num, lab_result *results);

/* What the float64 reference o_ref alone decides, the same for every mode of a case:
 * the correctly rounded output's errors and the floor. Once a case, for lab_score. */
typedef struct lab_reference_score {
  lab_err rounded;
  double floor_mean_abs_err;
} lab_reference_score;
void lab_score_reference(const lab_inputs *in, const double *o_ref, lab_reference_score *ref);

/* Scores the output of some other implementation (the GPU kernels) on the
 * same inputs: o (q_elems, dtype values) and, when not NULL, the same output
 * kept in fp32 (the precise-delta option), against the float64 reference
 * o_ref (computed by the caller with lab_ref_forward; ref, lab_score_reference's). */
void lab_score(const lab_case *c, const lab_inputs *in, lab_mode mode, double beta, double eps,
               const float *o, const float *o32, const double *o_ref, const lab_reference_score *ref,
               lab_result *r);

/* ---- lab_drift.c: the paper's mechanism ---------------------------------------------
 * Step t adds alpha * sum_T (delta_lp - delta_hp)[T] * (P K)[T]^T X[T] to a
 * weight-gradient error (head_dim x head_dim) with fixed P, K, X and fresh
 * dO each step; norms[t] is the Frobenius norm after step t + 1. A biased
 * delta makes it grow like t, an unbiased one like sqrt(t). */
typedef struct lab_drift_config {
  int steps, seqlen, head_dim, block_n, repeats;
  lab_mode mode;
  double beta, eps;
  uint64_t seed;
  lab_numerics num; /* issue 22's constructions (zeros: the kernels'); SR reseeded per step */
} lab_drift_config;
int lab_drift(const lab_drift_config *c, double *norms);
/* The slope of log(norm) against log(step) over steps n/10 .. n: about 1 for
 * a linear drift, about 0.5 for a random walk. */
double lab_growth_exponent(const double *norms, int n);

/* ---- random numbers (xoshiro256**: fixed sequences for fixed seeds) ---------- */
typedef struct lab_rng {
  uint64_t s[4];
} lab_rng;
void lab_rng_seed(lab_rng *r, uint64_t seed);
uint64_t lab_rng_next(lab_rng *r);
double lab_rng_uniform(lab_rng *r); /* [0, 1) */
double lab_rng_normal(lab_rng *r);

#endif
