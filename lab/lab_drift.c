/* The paper's mechanism in miniature (section 3.3): the weight-gradient
 * error of one attention head, step after step. Each step draws fresh inputs
 * with the same tie structure (lab_inputs_make of a repeat case) and a
 * gradient dO with a persistent mean (the training signal) plus noise; the
 * error it adds to dW_Q is
 *     alpha * sum_T (delta_lp - delta_hp)[T] * (P K)[T]^T X[T],
 * with X = Q (W_Q = I) and P K computed as attention with V := K. A biased
 * output gives delta errors of one sign, which add up linearly; an unbiased
 * one gives a random walk. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define DO_MEAN (-1.0) /* the persistent part of dO; its noise has spread 1 */

int lab_drift(const lab_drift_config *c, double *norms) {
  const int d = c->head_dim;
  const lab_case kase = {LAB_CASE_REPEAT, c->repeats, d, c->seqlen, 1, c->block_n, 0};
  if (c->steps < 1 || c->seqlen < 1 || d < 8 || d % 8) return -1;
  const long long n = (long long)c->seqlen * d;
  double *g = calloc((size_t)d * d, sizeof(double)), *o_ref = malloc(sizeof(double) * n);
  double *pk = malloc(sizeof(double) * n), *lse = malloc(sizeof(double) * c->seqlen);
  float *o = malloc(sizeof(float) * n), *lse32 = malloc(sizeof(float) * c->seqlen);
  int rc = -1;
  if (!g || !o_ref || !pk || !lse || !o || !lse32) goto out;
  for (int t = 0; t < c->steps; t++) {
    lab_inputs in;
    if (lab_inputs_make(&kase, LAB_BF16, c->seed * 1000003u + (uint64_t)t, &in)) goto out;
    lab_fa2_config fc = {LAB_BF16, c->mode, c->block_n, c->beta, c->eps, LAB_TC_FP32, c->num};
    fc.num.seed = c->num.seed * 1000003u + (uint64_t)t; /* fresh roundings every step */
    lab_ref_forward(&in.shape, in.q, in.k, in.v, o_ref, lse);
    lab_ref_forward(&in.shape, in.q, in.k, in.k, pk, lse); /* P K */
    const int ok = lab_fa2_forward(&in.shape, &fc, in.q, in.k, in.v, o, NULL, lse32) == 0;
    if (ok) {
      const double alpha = lab_scale(&in.shape);
      for (int row = 0; row < c->seqlen; row++) {
        double dd = 0; /* (delta_lp - delta_hp)[row] with dO = DO_MEAN + noise */
        for (int x = 0; x < d; x++) {
          const long long i = (long long)row * d + x;
          dd += (DO_MEAN + in.dout[i]) * ((double)o[i] - o_ref[i]);
        }
        const double *pkr = pk + (long long)row * d;
        const float *xr = in.q + (long long)row * d;
        for (int a = 0; a < d; a++)
          for (int b = 0; b < d; b++) g[a * d + b] += alpha * dd * pkr[a] * xr[b];
      }
    }
    lab_inputs_free(&in);
    if (!ok) goto out;
    double f = 0;
    for (long long i = 0; i < (long long)d * d; i++) f += g[i] * g[i];
    norms[t] = sqrt(f);
  }
  rc = 0;
out:
  free(g);
  free(o_ref);
  free(pk);
  free(lse);
  free(o);
  free(lse32);
  return rc;
}

double lab_growth_exponent(const double *norms, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int k = 0;
  for (int t = n / 10; t < n; t++) {
    if (!(norms[t] > 0)) continue;
    const double x = log(t + 1.0), y = log(norms[t]);
    sx += x, sy += y, sxx += x * x, sxy += x * y, k++;
  }
  const double den = k * sxx - sx * sx;
  return k > 1 && den > 0 ? (k * sxy - sx * sy) / den : 0;
}
