/* The forward kernel's arithmetic on the CPU (ARCHITECTURE.md "What the
 * forward kernel computes"), one query row at a time: key tiles of block_n in
 * ascending order, raw fp32 scores, exp2 of fp32 scores in log2 units, P
 * rounded to the dtype before P V, fp32 accumulator and normalizer, output
 * rounded once at the end. templates/fwd.cu.tpl is the other half of this
 * file: a change to one is a change to both.
 *
 * The tensor cores' sums follow c->tc (lab_tc.c): IEEE fp32 adds, or Hopper's
 * truncated blocks of 16, which the GPU's bias measures need (lab/README.md,
 * "The lab against the GPU"). What the emulation does not copy: ex2.approx's
 * last bit, and tanh.approx's error (softcap: tanhf here, 2^-11 relative apart;
 * both 1 on saturated scores).
 *
 * cfg->num (issue 22's constructions, lab only): the normalizer from the rounded
 * P or with the tile maxima's residuals, O rounded stochastically. LAB_BALANCED:
 * none's softmax and the kernels' balanced rounding of O (lab_round_row_bisect);
 * with softcap its l sums the rounded P, as the kernels' balanced softcap tiles do.
 *
 * Modifiers as the kernels apply them: softcap then ALiBi on the raw scores
 * (lab_modified_raw), masked keys out of the tile; a window's row starts at the
 * tile of its first key (a window kernel's tiles before it leave the row as it
 * is) and robust fixes its shift at that tile; a sink joins the sum at the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define FA2_PHILOX_FN static inline
#include "fa2_philox.h"

/* Raw score q . k in fp32: the products of 16-bit values are exact. With
 * IEEE adds, eight partial sums stand for the tensor cores' order; Hopper's
 * are k16 blocks along the head dim. Copies of one key score bit-identically
 * either way. */
static float score(const float *q, const float *k, int d, lab_tc tc) {
  if (tc != LAB_TC_FP32) {
    float s = 0.f;
    lab_tc_accumulate(tc, &s, 1, q, k, 1, d);
    return s;
  }
  float a[8] = {0};
  for (int i = 0; i < d; i += 8)
    for (int j = 0; j < 8; j++) a[j] += q[i + j] * k[i + j];
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* The robust shift of one row in raw-score units (fwd.cu.tpl robust_shift):
 * tau = 0.5 + (beta-1) u in softmax units, u in [0, 1) from the row's
 * first-tile max, its index and its (batch, head), so it varies from row to
 * row and never reaches beta - 0.5: P stays in [e^-(beta-0.5), e^-0.5], never
 * 1, never 0. The (batch, head) term: a max that is the same in every row (the
 * cap, on softcap-saturated rows) leaves the indexes alone to vary the shift. */
static float robust_shift(float rm, int row, int batch, int head, int visible, float scale, float beta) {
  if (visible < 2 || rm == -INFINITY) return 0.f;
  const float bh = (float)head * 0.414213562f + (float)batch * 0.324717957f;
  const float x = fabsf(rm) * scale * 7.38905610f + (float)row * 0.618033989f + bh;
  return (0.5f + (beta - 1.f) * (x - floorf(x))) / scale;
}

/* The reference a tile moves the row to, in raw units. */
static float new_reference(const lab_fa2_config *c, float m_old, const float *s, int n, float rm,
                           float eps_raw, float tau) {
  switch (c->mode) {
  case LAB_NONE:
  case LAB_BALANCED:
    return fmaxf(m_old, rm);
  case LAB_PAPER: { /* Algorithm 3, per tile */
    const float thr = rm - eps_raw;
    int cnt = 0;
    for (int j = 0; j < n; j++) cnt += s[j] >= thr;
    float m_prime = rm;
    if (cnt > 1 && rm > 0.f && rm != INFINITY) m_prime = (float)c->beta * rm;
    if (cnt > 1 && rm < 0.f && rm != -INFINITY) m_prime = 0.f;
    return fmaxf(m_old, m_prime);
  }
  case LAB_ROBUST:
    return fmaxf(m_old, rm + tau);
  }
  return m_old;
}

static void forward_row(const lab_shape *sh, const lab_fa2_config *c, const float *qrow,
                        const float *kh, const float *vh, long long kv_row_stride, int b, int h,
                        int row, long long o_index, float *s, float *acc, float *o, float *o32,
                        float *lse) {
  const int d = sh->head_dim, bn = c->block_n;
  int lo, hi;
  lab_key_range(sh, row, &lo, &hi);
  const int modified = sh->softcap > 0 || sh->alibi;
  const float scale = (float)lab_scale(sh);
  const float cl2 = scale * 1.44269504f; /* scores -> log2 units */
  const float eps_raw = (float)c->eps / scale;
  float m = -INFINITY, l = 0.f, tau = 0.f;
  /* l from the rounded P: asked for, or balanced with softcap, as its kernels do */
  const int l_rounded = c->num.norm == LAB_NORM_ROUNDED || (c->mode == LAB_BALANCED && sh->softcap > 0);
  memset(acc, 0, sizeof(float) * d);
  /* Key tiles [j0, j0 + bn) from the one that holds key lo; keys before lo are
   * masked (-inf, P = 0: Hopper's k16 blocks still start at j0), keys from hi on
   * are left out (P = 0 at the end of a block adds nothing). */
  for (int j0 = lo / bn * bn; j0 < hi; j0 += bn) {
    const int n = hi - j0 < bn ? hi - j0 : bn;
    float rm = -INFINITY;
    for (int j = 0; j < n; j++) {
      if (j0 + j < lo) {
        s[j] = -INFINITY;
        continue;
      }
      s[j] = score(qrow, kh + (j0 + j) * kv_row_stride, d, c->tc);
      if (modified) s[j] = lab_modified_raw(sh, h, row, j0 + j, s[j]);
      rm = fmaxf(rm, s[j]);
    }
    if (c->mode == LAB_ROBUST && j0 == lo / bn * bn)
      tau = robust_shift(rm, row, b, h, hi - lo, scale, (float)c->beta);
    const float m_new = new_reference(c, m, s, n, rm, eps_raw, tau);
    const float mc = (m_new == -INFINITY ? 0.f : m_new) * cl2;
    const float r = exp2f(m * cl2 - mc);
    m = m_new;
    float sum = 0.f;
    for (int i = 0; i < d; i++) acc[i] *= r;
    for (int j = 0; j < n; j++) {
      const float p = exp2f(fmaf(s[j], cl2, -mc));
      s[j] = lab_round(p, c->dtype);     /* P V uses the rounded p ... */
      sum += l_rounded ? s[j] : p;       /* ... the kernels' l the fp32 one */
    }
    if (c->num.norm == LAB_NORM_MAXRES && rm != -INFINITY) { /* the tile max's residual */
      const float pm = exp2f(fmaf(rm, cl2, -mc));
      sum += lab_round(pm, c->dtype) - pm;
    }
    /* P V, keys in order from the tile's first: Hopper's k16 blocks start
     * there, and the kernel's masked keys have P = 0, which adds nothing. */
    lab_tc_accumulate(c->tc, acc, d, s, vh + (long long)j0 * kv_row_stride, kv_row_stride, n);
    l = l * r + sum;
  }
  float inv = l > 0.f ? 1.f / l : 0.f;
  const float mu = m == -INFINITY ? 0.f : m;
  *lse = l > 0.f ? (mu * cl2 + log2f(l)) * 0.69314718f : INFINITY;
  if (sh->sinks) { /* the sum and O against top = max(m c, sink) in log2 units (fwd.cu.tpl) */
    const float sink2 = sh->sinks[h] * 1.44269504f, mc = m * cl2, big = fmaxf(mc, sink2);
    const float top = big == -INFINITY ? 0.f : big, keep = exp2f(mc - top);
    const float lt = l * keep + exp2f(sink2 - top);
    inv = lt != 0.f ? keep / lt : 0.f;
    *lse = lt != 0.f ? (top + log2f(lt)) * 0.69314718f : INFINITY;
  }
  if (c->mode == LAB_BALANCED) { /* the kernels' balanced rounding, on the row's draw */
    for (int i = 0; i < d; i++) {
      o[i] = acc[i] * inv;
      if (o32) o32[i] = o[i];
    }
    const uint32_t draw = fa2_round_draw(c->num.seed, 0, (unsigned long long)b * sh->heads_q + h, (unsigned)row);
    lab_round_row_bisect(o, d, c->dtype, draw, o);
    return;
  }
  if (c->num.out == LAB_OUT_ROW) { /* O in fp32 into o: lab_fa2_forward rounds the rows together */
    for (int i = 0; i < d; i++) {
      o[i] = acc[i] * inv;
      if (o32) o32[i] = o[i];
    }
    return;
  }
  for (int i = 0; i < d; i++) {
    const float x = acc[i] * inv;
    const double u = c->num.out != LAB_OUT_RN ? lab_hash_uniform(c->num.seed, (uint64_t)(o_index + i)) : 0;
    o[i] = c->num.out == LAB_OUT_SR    ? lab_round_stochastic(x, c->dtype, u)
           : c->num.out == LAB_OUT_SRH ? lab_round_stochastic_near_half(x, c->dtype, u, LAB_SRH_WINDOW)
                                       : lab_round(x, c->dtype);
    if (o32) o32[i] = x;
  }
}

/* LAB_OUT_ROW: head h's rows of O (fp32 in o) rounded in groups of row_group
 * consecutive rows (a kernel's warp holds 16, a quad of threads 2). */
static int round_rows(const lab_shape *sh, const lab_fa2_config *c, float *o, int b, int h) {
  const int d = sh->head_dim, G = c->num.row_group > 0 ? c->num.row_group : LAB_ROW_GROUP;
  const long long q_row = (long long)sh->heads_q * d;
  float *x = malloc(sizeof(float) * (size_t)G * d), *out = malloc(sizeof(float) * (size_t)G * d);
  if (!x || !out) {
    free(x);
    free(out);
    return -1;
  }
  const long long head = (long long)b * sh->seqlen_q * q_row + (long long)h * d; /* row i at head + i q_row */
  for (int i0 = 0; i0 < sh->seqlen_q; i0 += G) {
    const int rows = sh->seqlen_q - i0 < G ? sh->seqlen_q - i0 : G;
    const long long first = head + (long long)i0 * q_row; /* its index seeds the group's draw */
    for (int r = 0; r < rows; r++) memcpy(x + (long long)r * d, o + first + r * q_row, sizeof(float) * d);
    lab_round_row_balanced(x, rows * d, c->dtype, lab_hash_uniform(c->num.seed, (uint64_t)first), c->num.row_moves,
                           out);
    for (int r = 0; r < rows; r++) memcpy(o + first + r * q_row, out + (long long)r * d, sizeof(float) * d);
  }
  free(x);
  free(out);
  return 0;
}

int lab_fa2_forward(const lab_shape *sh, const lab_fa2_config *c, const float *q, const float *k,
                    const float *v, float *o, float *o32, float *lse) {
  if (c->block_n < 1 || sh->head_dim < 8 || sh->head_dim % 8) return -1;
  if (c->tc != LAB_TC_FP32 && sh->head_dim > LAB_TC_MAX_COLS) return -1;
  if ((c->mode == LAB_PAPER || c->mode == LAB_ROBUST) && !(c->beta > 1 && c->eps > 0)) return -1;
  const int d = sh->head_dim, group = sh->heads_q / sh->heads_kv;
  float *s = malloc(sizeof(float) * c->block_n), *acc = malloc(sizeof(float) * d);
  if (!s || !acc) {
    free(s);
    free(acc);
    return -1;
  }
  const long long q_row = (long long)sh->heads_q * d, kv_row = (long long)sh->heads_kv * d;
  for (int b = 0; b < sh->batch; b++)
    for (int h = 0; h < sh->heads_q; h++) {
      const float *kh = k + (long long)b * sh->seqlen_k * kv_row + (long long)(h / group) * d;
      const float *vh = v + (long long)b * sh->seqlen_k * kv_row + (long long)(h / group) * d;
      for (int i = 0; i < sh->seqlen_q; i++) {
        const long long off = ((long long)b * sh->seqlen_q + i) * q_row + (long long)h * d;
        forward_row(sh, c, q + off, kh, vh, kv_row, b, h, i, off, s, acc, o + off, o32 ? o32 + off : NULL,
                    lse + ((long long)b * sh->heads_q + h) * sh->seqlen_q + i);
      }
      if (c->num.out == LAB_OUT_ROW && c->mode != LAB_BALANCED && round_rows(sh, c, o, b, h) != 0) {
        free(s);
        free(acc);
        return -1;
      }
    }
  free(s);
  free(acc);
  return 0;
}
