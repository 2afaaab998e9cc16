/* How the tensor cores add products to their fp32 accumulator.
 *
 * LAB_TC_FP32 is IEEE arithmetic: each product (exact: two 8- or 11-bit
 * significands) added to the accumulator with one rounding to nearest, in
 * order. LAB_TC_H100 is Hopper's inner product for bf16/fp16 inputs with an
 * fp32 accumulator, after Khattak and Mikaitis, "Accurate Models of NVIDIA
 * Tensor Cores" (arXiv 2512.07004; model H100TC of their MATLAB code): per
 * block of up to 16 products and the accumulator, the products are exact,
 * every nonzero term is aligned to the largest exponent E among them (a
 * product's exponent is the sum of its factors', its significand in [1, 4)),
 * and the bits below 2^(E - 25) are cut off toward zero; the terms add
 * exactly, and the sum is rounded toward zero to fp32. Both cuts shrink
 * every term's magnitude, which is what biases sums of one sign (lab/README.md,
 * "The lab against the GPU").
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lab.h"

enum { H100_BLOCK = 16, H100_EXTRA_BITS = 2, H100_MIN_EXP = -133 };

/* Exponent of a nonzero finite float: x = m * 2^e with m in [1, 2). The
 * exponent field for normal numbers (the inner loop's case), ilogbf below. */
static int exponent(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  const int field = (int)(u >> 23 & 0xff);
  return field ? field - 127 : ilogbf(x);
}

static float round_toward_zero(double x) {
  float f = (float)x;
  if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.f);
  return f;
}

/* 2^e as a double, for e in [-1022, 1023]. */
static double pow2(int e) {
  const uint64_t u = (uint64_t)(e + 1023) << 52;
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* acc[i] += sum_{j<n} p[j] * v[j * v_stride + i] for one block (n <= 16).
 * Every term is below 2^(E+2) and cut to a multiple of 2^shift: at most 17
 * integers below 2^27, so the sums are exact in int64, and scaling by powers
 * of two is exact in double. */
static void h100_block(float *acc, int d, const float *p, const float *v, long long v_stride, int n) {
  int e_max[LAB_TC_MAX_COLS];
  int64_t sum[LAB_TC_MAX_COLS];
  double inv_q[LAB_TC_MAX_COLS];
  for (int i = 0; i < d; i++) e_max[i] = acc[i] != 0.f ? exponent(acc[i]) : INT_MIN;
  for (int j = 0; j < n; j++) {
    if (p[j] == 0.f) continue; /* zero products take no part */
    const int ep = exponent(p[j]);
    const float *vj = v + j * v_stride;
    for (int i = 0; i < d; i++)
      if (vj[i] != 0.f && ep + exponent(vj[i]) > e_max[i]) e_max[i] = ep + exponent(vj[i]);
  }
  for (int i = 0; i < d; i++) {
    const int shift = (e_max[i] > H100_MIN_EXP ? e_max[i] : H100_MIN_EXP) - 23 - H100_EXTRA_BITS;
    inv_q[i] = pow2(-shift);
    sum[i] = (int64_t)((double)acc[i] * inv_q[i]); /* the cast truncates toward zero */
  }
  for (int j = 0; j < n; j++) {
    if (p[j] == 0.f) continue;
    const float *vj = v + j * v_stride;
    for (int i = 0; i < d; i++) sum[i] += (int64_t)((double)p[j] * vj[i] * inv_q[i]);
  }
  for (int i = 0; i < d; i++)
    if (e_max[i] != INT_MIN) acc[i] = round_toward_zero((double)sum[i] / inv_q[i]);
}

int lab_tc_accumulate(lab_tc t, float *acc, int d, const float *p, const float *v, long long v_stride,
                      int n) {
  if (d < 1 || n < 0 || (t != LAB_TC_FP32 && d > LAB_TC_MAX_COLS)) return -1;
  if (t == LAB_TC_FP32) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < d; i++) acc[i] += p[j] * v[j * v_stride + i];
    return 0;
  }
  for (int j = 0; j < n; j += H100_BLOCK)
    h100_block(acc, d, p + j, v + j * v_stride, v_stride, n - j < H100_BLOCK ? n - j : H100_BLOCK);
  return 0;
}

const char *lab_tc_name(lab_tc t) { return t == LAB_TC_H100 ? "h100" : "fp32"; }

int lab_tc_parse(const char *name, lab_tc *t) {
  if (strcmp(name, "fp32") == 0) *t = LAB_TC_FP32;
  else if (strcmp(name, "h100") == 0) *t = LAB_TC_H100;
  else return -1;
  return 0;
}
