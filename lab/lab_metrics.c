/* The measures of DESIGN.md "Numerics": bias ratio, errors, NaN count,
 * tied-maximum rate and delta bias, all against float64. */
#include <math.h>

#include "lab.h"

/* Sums in float64 over finite x; a NaN or Inf counts and is left out of the
 * error sums, so one bad element cannot hide the others. */
typedef struct acc_err {
  double sum, sum_abs, sum_sq, ref_sq, max_abs;
  long long n, bad;
} acc_err;

static void acc_add(acc_err *a, double x, double ref) {
  if (!isfinite(x)) {
    a->bad++;
    return;
  }
  const double e = x - ref;
  a->sum += e;
  a->sum_abs += fabs(e);
  a->sum_sq += e * e;
  a->ref_sq += ref * ref;
  if (fabs(e) > a->max_abs) a->max_abs = fabs(e);
  a->n++;
}

static void acc_done(const acc_err *a, lab_err *e) {
  e->bias_ratio = a->sum_abs > 0 ? a->sum / a->sum_abs : 0;
  e->mean_abs_err = a->n ? a->sum_abs / (double)a->n : 0;
  e->rel_err = a->ref_sq > 0 ? sqrt(a->sum_sq / a->ref_sq) : sqrt(a->sum_sq);
  e->max_abs_err = a->max_abs;
  e->nan_count = a->bad;
}

void lab_compare(const float *x, const double *ref, long long n, lab_err *e) {
  acc_err a = {0};
  for (long long i = 0; i < n; i++) acc_add(&a, x[i], ref[i]);
  acc_done(&a, e);
}

void lab_compare_f64(const double *x, const double *ref, long long n, lab_err *e) {
  acc_err a = {0};
  for (long long i = 0; i < n; i++) acc_add(&a, x[i], ref[i]);
  acc_done(&a, e);
}

/* Scores of 16-bit inputs are exact in float64 up to the last bits of long
 * sums; copies of one key give bit-identical scores, which is what counts.
 * With softcap or ALiBi, ties are those of the kernels' fp32 modified scores
 * (lab_modified_raw: distinct large scores that softcap saturates tie there). */
double lab_tied_rate(const lab_shape *s, const float *q, const float *k) {
  const int d = s->head_dim, group = s->heads_q / s->heads_kv;
  long long rows = 0, tied = 0;
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads_q; h++)
      for (int i = 0; i < s->seqlen_q; i++) {
        const float *qi = q + (((long long)b * s->seqlen_q + i) * s->heads_q + h) * d;
        int lo, hi;
        lab_key_range(s, i, &lo, &hi);
        double best = -INFINITY;
        int count = 0;
        for (int j = lo; j < hi; j++) {
          const float *kj = k + (((long long)b * s->seqlen_k + j) * s->heads_kv + h / group) * d;
          double a[4] = {0}; /* products of 16-bit values are exact in float64 */
          for (int t = 0; t < d; t += 4)
            for (int x = 0; x < 4; x++) a[x] += (double)qi[t + x] * kj[t + x];
          double dot = (a[0] + a[1]) + (a[2] + a[3]);
          if (s->softcap > 0 || s->alibi) dot = lab_modified_raw(s, h, i, j, (float)dot);
          if (dot > best) best = dot, count = 1;
          else if (dot == best) count++;
        }
        rows += hi > lo;
        tied += count > 1;
      }
  return rows ? (double)tied / (double)rows : 0;
}

double lab_delta_bias(const lab_shape *s, const float *o, const double *o_ref, const float *dout) {
  const long long n = lab_q_elems(s);
  double sum = 0; /* sum over rows of the row sums = sum over every element */
  for (long long i = 0; i < n; i++) sum += (double)dout[i] * ((double)o[i] - o_ref[i]);
  return sum;
}
