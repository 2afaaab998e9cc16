/* lab_round_row_bisect: mode balanced's rounding of a row of O, the kernels' steps
 * (templates/round_balanced.cuh.tpl) on rows whose answers are worked out by hand.
 * A row of d values sits in a quad of threads: thread q holds columns 8 dt + 2 q + e,
 * and the margin's elements are sampled in that order. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "lab.h"

#define U 0.0078125f /* bf16's gap in [1, 2): 2^-7 */

/* Errors (nearest rounds all down): x0 -15/32 U, x1 -12/32, x2 -14/32, x3 -10/32, x4 -16/32
 * (gap 2 U above 2: the row's largest, so its t = 1/4 is under the cap's 0.45), x5 0,
 * x6 -13/32, x7 -1/32: sum -81/32 U. Candidates: x0 x1 x2 x3 x6 x7 (gap U each). Two
 * bisection steps: t >= 1/4 holds 5 U > 81/32 U, t >= 3/8 (just above) holds x0 x2 x6,
 * 3 U: the margin, each crossing with probability 81/96 (x1 at exactly 3/8 stays). */
static const float ROW[8] = {1 + 15 / 32.f * U, 1 + 12 / 32.f * U, 1 + 14 / 32.f * U, 1 + 10 / 32.f * U,
                             2 + U / 2,         1,                  1 + 13 / 32.f * U, 1 + 1 / 32.f * U};

static double error_sum(const float *out) {
  double s = 0;
  for (int i = 0; i < 8; i++) s += (double)out[i] - ROW[i];
  return s;
}

Test(lab_round_bisect, the_margin_is_sampled_in_the_quads_order) {
  float out[8];
  const uint32_t step = (uint32_t)(81 / 96.0 * 4294967296.0); /* x0's turn first: crosses when draw > ~step */
  lab_round_row_bisect(ROW, 8, LAB_BF16, 0, out);               /* x0 stays; x2 and x6 cross */
  const float at0[8] = {1, 1, 1 + U, 1, 2, 1, 1 + U, 1};
  for (int i = 0; i < 8; i++) cr_expect_eq(out[i], at0[i], "draw 0, x%d: %.9g", i, out[i]);
  lab_round_row_bisect(ROW, 8, LAB_BF16, ~step + 1u, out); /* x0 crosses, and the sum wraps to 0 for x2 */
  const float x0x6[8] = {1 + U, 1, 1, 1, 2, 1, 1 + U, 1};
  for (int i = 0; i < 8; i++) cr_expect_eq(out[i], x0x6[i], "draw 2^32 - step, x%d: %.9g", i, out[i]);
  lab_round_row_bisect(ROW, 8, LAB_BF16, ~step, out); /* one below: as draw 0 */
  for (int i = 0; i < 8; i++) cr_expect_eq(out[i], at0[i], "draw 2^32 - step - 1, x%d: %.9g", i, out[i]);
  lab_round_row_bisect(ROW, 8, LAB_BF16, 0xffffffffu, out); /* all three */
  const float all[8] = {1 + U, 1, 1 + U, 1, 2, 1, 1 + U, 1};
  for (int i = 0; i < 8; i++) cr_expect_eq(out[i], all[i], "draw 2^32 - 1, x%d: %.9g", i, out[i]);
}

Test(lab_round_bisect, a_rows_error_sum_is_zero_in_expectation) {
  float out[8];
  lab_round_row_bisect(ROW, 8, LAB_BF16, 0, out);
  double mean = 0;
  for (uint32_t k = 0; k < 4096; k++) { /* draws evenly over 2^32: the exact expectation */
    lab_round_row_bisect(ROW, 8, LAB_BF16, k << 20, out);
    mean += error_sum(out) / 4096;
  }
  cr_expect_lt(fabs(mean), 1e-6 * U, "mean row error %.3g U (nearest: -81/32 U)", mean / U);
}

Test(lab_round_bisect, every_candidate_crosses_when_all_fit) {
  /* x0 (t 15/32, gap U, the largest) is the one candidate past the cap: -41/32 U of sum
   * leaves room for it, whatever the draw */
  const float x[8] = {1 + 15 / 32.f * U, 1 + 12 / 32.f * U, 1 + 4 / 32.f * U, 1 + 10 / 32.f * U, 1, 1, 1, 1};
  float out[8];
  for (uint32_t draw = 0; draw < 3; draw++) {
    lab_round_row_bisect(x, 8, LAB_BF16, draw * 0x7fffffffu, out);
    cr_expect_eq(out[0], 1 + U);
    for (int i = 1; i < 8; i++) cr_expect_eq(out[i], 1.0f, "x%d: its move would leave 20/32 U or more", i);
  }
}

Test(lab_round_bisect, outputs_on_or_near_the_grid_stay_there) {
  /* One key, P = 1 and l one ulp under 1: O = V (1 + 2^-24), within 2^-10 of a gap of
   * the grid in bf16 and fp16: nearest, never a crossing (the kernels' fp32 noise) */
  float x[16], out[16];
  for (lab_dtype t = LAB_BF16; t <= LAB_FP16; t++) {
    for (int i = 0; i < 16; i++) x[i] = lab_round((float)(0.37 * i - 2.9), t) * (1 + 0x1p-24f);
    for (uint32_t draw = 0; draw < 8; draw++) {
      lab_round_row_bisect(x, 16, t, draw * 0x20000000u, out);
      for (int i = 0; i < 16; i++)
        cr_expect_eq(out[i], lab_round(x[i], t), "%s, draw %u, x%d", lab_dtype_name(t), draw, i);
    }
  }
}

Test(lab_round_bisect, a_row_with_nan_or_inf_is_rounded_to_nearest) {
  float x[8] = {1 + 17 / 32.f * U, NAN, 1 + 12 / 32.f * U, INFINITY, 1, 1, 1, 1}, out[8];
  lab_round_row_bisect(x, 8, LAB_BF16, 0xffffffffu, out);
  cr_expect_eq(out[0], 1 + U);
  cr_expect(isnan(out[1]));
  cr_expect_eq(out[2], 1.0f);
  cr_expect(isinf(out[3]) && out[3] > 0);
}
