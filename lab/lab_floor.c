/* lab_floor: what any unbiased rounding of the output must pay (issue 22).
 *
 * The least mean |error| of any output on the dtype grid whose bias ratio
 * (mean(x - ref) / mean|x - ref|, lab_metrics.c) is within +-max_bias, given the
 * float64 reference. Start from the correctly rounded output, the least error of
 * all, and its bias; moving an element to its other neighbour, against the bias,
 * moves the signed sum by the gap g between the two and costs g - 2|e| of absolute
 * error. The moves that buy the most bias per error come first: the elements
 * nearest their midpoint (t = |e| / g near 1/2). That greedy is the exact optimum
 * of the linear relaxation (elements moved by fractions), so its value bounds
 * every rounding rule from below, even one that knows the reference; moves to
 * farther grid points buy bias at the worst rate (t = 0) and come last. With a cap
 * on any element's error (max_err), only the moves that stay under it count, and
 * no output meets both limits when they run out (INFINITY). Elements are binned by
 * t (O(n), no sort), and the last bin taken is charged at its best rate, which
 * keeps the bound a bound. */
#include <math.h>
#include <stdlib.h>

#include "lab.h"

enum { FLOOR_BINS = 1 << 16 }; /* over t in [0, 1/2] */

/* Error bought per unit of (bias - max_bias * error) by moving an element at t. */
static double move_rate(double t, double max_bias) { return (1 - 2 * t) / (1 + max_bias - 2 * max_bias * t); }

double lab_unbiased_floor(const double *ref, long long n, lab_dtype dtype, double max_bias, double max_err) {
  double sum = 0, sum_abs = 0;
  long long m = 0;
  for (long long i = 0; i < n; i++) {
    const float r = lab_round_f64(ref[i], dtype);
    if (!isfinite(ref[i]) || !isfinite(r)) continue;
    sum += r - ref[i];
    sum_abs += fabs(r - ref[i]);
    m++;
  }
  if (m == 0) return 0;
  double need = fabs(sum) - max_bias * sum_abs; /* how far the bias must move */
  if (need <= 0) return sum_abs / (double)m;
  const double dir = sum > 0 ? 1 : -1; /* the bias's sign: moves go the other way */
  double *cost = calloc(FLOOR_BINS, sizeof *cost), *gain = calloc(FLOOR_BINS, sizeof *gain);
  if (!cost || !gain) {
    free(cost);
    free(gain);
    return NAN;
  }
  double far_gain = 0; /* moves past the first, at the worst rate: what max_err allows */
  for (long long i = 0; i < n; i++) {
    const float r = lab_round_f64(ref[i], dtype);
    const double e = (double)r - ref[i];
    if (!isfinite(ref[i]) || !isfinite(r)) continue;
    /* a step against the bias: across ref, or (ref on the grid, or the error already
     * against the bias) away from it; steps of one gap g (the grid's spacing changes
     * only at powers of two: an estimate there, not a bound) */
    const float b = lab_step_toward(r, e * dir > 0 ? ref[i] : (double)r - dir * (fabs((double)r) + 1), dtype);
    const double g = fabs((double)b - r);
    if (!isfinite(b) || g == 0) continue;
    double err = fabs(e); /* after the moves so far */
    if (e * dir >= 0) {   /* the first move, across ref: its rate depends on t */
      if (g - err > max_err) continue;
      const double t = err / g;
      int k = (int)(t * 2 * FLOOR_BINS);
      k = k < FLOOR_BINS ? k : FLOOR_BINS - 1;
      cost[k] += g - 2 * err;
      gain[k] += (1 + max_bias) * g - 2 * max_bias * err;
      err = g - err;
    }
    if (isinf(max_err)) continue;
    const double steps = floor((max_err - err) / g); /* further moves within max_err */
    if (steps > 0) far_gain += steps * (1 + max_bias) * g;
  }
  double extra = 0;
  for (int k = FLOOR_BINS - 1; k >= 0 && need > 0; k--) {
    if (gain[k] <= need) {
      extra += cost[k];
      need -= gain[k];
    } else {
      extra += need * move_rate((k + 1) / (2.0 * FLOOR_BINS), max_bias);
      need = 0;
    }
  }
  free(cost);
  free(gain);
  if (need > 0 && !isinf(max_err)) { /* farther grid points, as far as max_err allows */
    if (need > far_gain) return INFINITY;
  }
  extra += need * move_rate(0, max_bias);
  return (sum_abs + extra) / (double)m;
}
