/* float32 <-> bf16 / fp16 on the bit patterns, round-to-nearest-even: the
 * result never depends on the compiler's _Float16 or the FPU rounding mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Drops the low `shift` bits of m with round-to-nearest-even. A carry out of
 * the mantissa lands in the exponent field, which is the right answer
 * (1.11..1 rounds up to the next power of two, the largest finite to inf). */
static uint32_t rne_shift(uint32_t m, int shift) {
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

uint16_t lab_f32_to_bf16(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  /* A NaN must not round: a low-payload NaN would carry into inf or truncate to it. */
  if ((u & 0x7fffffff) > 0x7f800000) return sign | 0x7fc0;
  /* bf16 is the top half of float32, so float subnormals and inf need no case. */
  return (uint16_t)rne_shift(u, 16);
}

float lab_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t lab_f32_to_fp16(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffff;
  int e = (int)(a >> 23); /* biased float32 exponent */
  if (a > 0x7f800000) return sign | 0x7e00;
  /* 65520 = 65504 + half an ulp: the tie goes to the even neighbour, 2^16, which is inf. */
  if (a >= 0x477ff000) return sign | 0x7c00;
  if (e >= 113) /* fp16 normal (exponent >= -14): rebias 127 -> 15, drop 13 bits */
    return sign | (uint16_t)rne_shift(a - (112u << 23), 13);
  /* Below 2^-25 (half the smallest subnormal) everything is zero, float
   * subnormals included; 2^-25 itself ties to the even 0. */
  if (e < 102) return sign;
  /* Subnormal: the value in units of 2^-24 is (1.m) * 2^(e - 126). Rounding
   * up out of 0x3ff gives 0x400, the smallest normal, as it should. */
  return sign | (uint16_t)rne_shift((a & 0x7fffff) | 0x800000, 126 - e);
}

float lab_fp16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) /* inf, or a NaN made quiet */
    return bits_f32(sign | 0x7f800000 | (m ? 0x400000 | (m << 13) : 0));
  if (e != 0) return bits_f32(sign | ((e + 112) << 23) | (m << 13));
  if (m == 0) return bits_f32(sign);
  /* Subnormal m * 2^-24: normalize so the leading bit becomes the implicit one. */
  int shift = 0;
  while (!(m & 0x400)) m <<= 1, shift++;
  return bits_f32(sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ff) << 13));
}

float lab_round(float x, lab_dtype t) {
  return t == LAB_FP16 ? lab_fp16_to_f32(lab_f32_to_fp16(x)) : lab_bf16_to_f32(lab_f32_to_bf16(x));
}

float lab_round_f64(double x, lab_dtype t) {
  float f = (float)x;
  if (isfinite(f) && (double)f != x) {
    uint32_t bits = f32_bits(f);
    if (!(bits & 1)) f = nextafterf(f, x > (double)f ? INFINITY : -INFINITY);
  }
  return lab_round(f, t);
}

float lab_step_toward(float a, double x, lab_dtype t) {
  uint16_t h = t == LAB_FP16 ? lab_f32_to_fp16(a) : lab_f32_to_bf16(a);
  if ((h & 0x7fff) == 0) h = (uint16_t)((x < 0 ? 0x8000 : 0) | 1); /* the smallest subnormal */
  else if ((x > a) == (a > 0)) h++;                                   /* magnitude up */
  else h--;                                                           /* magnitude down */
  return t == LAB_FP16 ? lab_fp16_to_f32(h) : lab_bf16_to_f32(h);
}

float lab_round_stochastic(float x, lab_dtype t, double u) { return lab_round_stochastic_near_half(x, t, u, 0.5); }

float lab_round_stochastic_near_half(float x, lab_dtype t, double u, double window) {
  const float a = lab_round(x, t);
  if (a == x || isinf(a) || isnan(a)) return a;
  const float b = lab_step_toward(a, x, t);
  const double far = fabs((double)x - a) / fabs((double)b - a); /* in [0, 1/2] */
  return far >= 0.5 - window && u < far ? b : a;
}

typedef struct row_move { /* an element that may cross against the row's error sum */
  double t, gap;          /* its error over the gap to its other neighbour, that gap */
  int i;
} row_move;

static int nearer_midpoint_first(const void *a, const void *b) {
  const double x = ((const row_move *)a)->t, y = ((const row_move *)b)->t;
  return x < y ? 1 : x > y ? -1 : 0;
}

void lab_round_row_balanced(const float *x, int n, lab_dtype t, double u, int max_moves, float *out) {
  double sum = 0, max_gap = 0;
  for (int i = 0; i < n; i++) {
    out[i] = lab_round(x[i], t);
    sum += (double)out[i] - x[i];
    const float b = lab_step_toward(out[i], out[i] == x[i] ? (double)x[i] + 1 : x[i], t);
    if (isfinite(b) && fabs((double)b - out[i]) > max_gap) max_gap = fabs((double)b - out[i]);
  }
  if (!isfinite(sum) || sum == 0) return; /* a NaN or Inf in the row: nearest, as the kernels' none */
  row_move *m = malloc(sizeof *m * (size_t)n);
  if (!m) return;
  int k = 0;
  for (int i = 0; i < n; i++) {
    const double e = (double)out[i] - x[i];
    if (e == 0 || (e > 0) != (sum > 0)) continue; /* crossing would add to the sum */
    const float b = lab_step_toward(out[i], x[i], t);
    const double gap = fabs((double)b - out[i]);
    if (isfinite(b) && gap - fabs(e) <= LAB_ROW_CAP * max_gap) m[k++] = (row_move){fabs(e) / gap, gap, i};
  }
  qsort(m, (size_t)k, sizeof *m, nearer_midpoint_first);
  double left = fabs(sum); /* what the moves so far leave of |sum| */
  int j = 0;
  for (; j < k && m[j].gap <= left && (max_moves == 0 || j < max_moves - 1); j++) {
    left -= m[j].gap;
    out[m[j].i] = lab_step_toward(out[m[j].i], x[m[j].i], t);
  }
  if (j < k && u < fmin(1.0, left / m[j].gap)) out[m[j].i] = lab_step_toward(out[m[j].i], x[m[j].i], t);
  free(m);
}

/* The kernels' balanced rounding of one row (templates/round_balanced.cuh.tpl),
 * step for step in fp32: a quad of threads holds the row, thread q columns
 * 8 dt + 2 q + e in that order; its sums run in that order, and a quad's sum is
 * (t0 + t1) + (t2 + t3), as two xor shuffles leave it. */
enum { BAL_SCANS = 2 };
#define BAL_CAP_T 0.45f
#define BAL_MIN_T 0x1p-10f /* errors under this share of their gap count as none */

static float bal_elem_f32(uint32_t h, lab_dtype t) {
  return t == LAB_FP16 ? lab_fp16_to_f32((uint16_t)h) : lab_bf16_to_f32((uint16_t)h);
}

static float bal_inv_pow2(float g) { /* 1 / g for a power of two, as the kernel's integer subtraction */
  return bits_f32(0x7f000000u - f32_bits(g));
}

static float bal_quad_sum(const float *t) { return (t[0] + t[1]) + (t[2] + t[3]); }

void lab_round_row_bisect(const float *x, int d, lab_dtype t, uint32_t draw, float *out) {
  enum { MAXV = 256 };
  if (d < 8 || d > MAXV || d % 8) return;
  uint16_t r[MAXV], ob[MAXV];
  float gap[MAXV], key[MAXV], part[4] = {0}, gmax = 0.f;
  int col[MAXV]; /* the quad's order: position k of thread q is col[q * d / 4 + k] */
  const int per = d / 4;
  for (int q = 0; q < 4; q++)
    for (int k = 0; k < per; k++) col[q * per + k] = 8 * (k / 2) + 2 * q + k % 2;
  for (int j = 0; j < d; j++) {
    const int i = col[j];
    r[j] = t == LAB_FP16 ? lab_f32_to_fp16(x[i]) : lab_f32_to_bf16(x[i]);
    const float rf = bal_elem_f32(r[j], t), err = rf - x[i];
    ob[j] = (uint16_t)(r[j] + (fabsf(rf) < fabsf(x[i]) ? 1u : 0xffffu));
    gap[j] = fabsf(bal_elem_f32(ob[j], t) - rf);
    const float tt = fabsf(err) * bal_inv_pow2(gap[j]);
    const int dead = tt < BAL_MIN_T;            /* (a NaN error is not: the row stays nearest) */
    key[j] = dead ? 0.f : copysignf(tt, err); /* t with the error's sign, till the sum is known */
    part[j / per] += dead ? 0.f : err;
    gmax = fmaxf(gmax, gap[j]);
  }
  const float total = bal_quad_sum(part), big = gmax;
  const float left = fabsf(total) < INFINITY ? fabsf(total) : 0.f;
  float all[4] = {0};
  for (int j = 0; j < d; j++) {
    const float kk = key[j], tt = fabsf(kk);
    const int cand = kk != 0.f && (kk < 0.f) == (total < 0.f) && (gap[j] < big || tt >= BAL_CAP_T);
    key[j] = cand ? tt : -1.f;
    all[j / per] += cand ? gap[j] : 0.f;
  }
  float lo = 0.f, hi = 0.50000006f, g_lo = bal_quad_sum(all), g_hi = 0.f;
  if (g_lo <= left) hi = lo, g_hi = g_lo;
  for (int s = 0; s < BAL_SCANS; s++) {
    const float tau = 0.5f * (lo + hi);
    float g[4] = {0};
    for (int j = 0; j < d; j++) g[j / per] += key[j] >= tau ? gap[j] : 0.f;
    const float gs = bal_quad_sum(g);
    if (gs > left) lo = tau, g_lo = gs;
    else hi = tau, g_hi = gs;
  }
  const float g_b = g_lo - g_hi;
  const float share = g_b > 0.f ? (left - g_hi) / g_b : 0.f;
  const uint32_t step = (uint32_t)fminf(share * 4294967296.f, 4294967040.f);
  uint32_t acc = draw; /* the quad's order is the margin's: thread 0's elements first */
  for (int j = 0; j < d; j++) {
    const int in_b = key[j] >= lo && key[j] < hi;
    const int cross = key[j] >= hi || (in_b && acc > ~step);
    if (in_b) acc += step;
    out[col[j]] = bal_elem_f32(cross ? ob[j] : r[j], t);
  }
}

double lab_hash_uniform(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + index + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
