/* Issue 22's rounding pieces of the lab, on values whose answers are known exactly:
 * lab_unbiased_floor (the least error any output with |bias| <= 0.01 can have) and
 * lab_round_row_balanced (rounding whose row errors sum to zero in expectation). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "lab.h"

#define U 0.0078125 /* bf16's gap between neighbours in [1, 2): 2^-7 */

Test(lab_floor, outputs_on_the_grid_cost_nothing) {
  const double ref[4] = {1.0, -2.0, 0.5, 1.0 + U};
  cr_expect_eq(lab_unbiased_floor(ref, 4, LAB_BF16, 0.01, INFINITY), 0.0);
}

Test(lab_floor, an_unbiased_nearest_rounding_is_the_floor) {
  double ref[1000];
  for (int i = 0; i < 1000; i++) ref[i] = 1 + (i % 2 ? 0.3 : 0.7) * U; /* errors -0.3 U and +0.3 U */
  cr_expect_float_eq(lab_unbiased_floor(ref, 1000, LAB_BF16, 0.01, INFINITY), 0.3 * U, 1e-15);
}

/* Every value 0.3 U above 1: nearest gives -0.3 U each (bias ratio -1). Moving a
 * fraction p of them up to 1 + U gives errors +0.7 U there; |sum| <= 0.01 sum|e| needs
 * p (1 + 0.004) >= 0.297, and the mean error is then 0.3 U + 0.4 U p. */
Test(lab_floor, one_sided_errors_pay_the_linear_optimum) {
  double ref[1000];
  for (int i = 0; i < 1000; i++) ref[i] = 1 + 0.3 * U;
  const double exact = (0.3 + 0.4 * 0.297 / 1.004) * U;
  const double f = lab_unbiased_floor(ref, 1000, LAB_BF16, 0.01, INFINITY);
  cr_expect_leq(f, exact, "a lower bound: %.10g <= %.10g", f, exact);
  cr_expect_float_eq(f, exact, 1e-4 * exact, "within its last bin's width: %.10g", f);
  /* a cap under the moved elements' 0.7 U leaves no output that meets both limits */
  cr_expect(isinf(lab_unbiased_floor(ref, 1000, LAB_BF16, 0.01, 0.6 * U)));
  cr_expect_float_eq(lab_unbiased_floor(ref, 1000, LAB_BF16, 0.01, 0.7 * U), f, 1e-15);
}

/* Row-balanced rounding: to nearest, then the elements nearest their midpoint cross
 * while their gaps fit in what is left of |sum| (none whose error would pass 0.55 of
 * the row's largest gap), and the next with probability (what is left) / its gap. */
Test(lab_round_row, moves_the_element_nearest_its_midpoint) {
  const float x[4] = {1 + 15 / 32.0 * U, 1 + 12 / 32.0 * U, 1 + 4 / 32.0 * U, 1 + 10 / 32.0 * U};
  float out[4];
  lab_round_row_balanced(x, 4, LAB_BF16, 0.0, 0, out); /* sum -41/32 U; after x0: -9/32 U */
  cr_expect_eq(out[0], (float)(1 + U)); /* error 17/32 U <= 0.55 U */
  for (int i = 1; i < 4; i++) cr_expect_eq(out[i], 1.0f, "x%d: its move would leave 20/32 U or more", i);
}

Test(lab_round_row, the_last_move_is_drawn) {
  /* 2.0 (gap 2 U above it) widens the cap to 1.1 U; after x0 the sum is -9/32 U and
   * x1's move (gap U) would overshoot: made when u < 9/32 */
  const float x[5] = {1 + 15 / 32.0 * U, 1 + 12 / 32.0 * U, 1 + 4 / 32.0 * U, 1 + 10 / 32.0 * U, 2};
  float out[5];
  lab_round_row_balanced(x, 5, LAB_BF16, 0.5, 0, out);
  const float kept[5] = {(float)(1 + U), 1, 1, 1, 2};
  for (int i = 0; i < 5; i++) cr_expect_eq(out[i], kept[i], "u = 0.5, x%d: %.9g", i, out[i]);
  lab_round_row_balanced(x, 5, LAB_BF16, 0.25, 0, out);
  const float moved[5] = {(float)(1 + U), (float)(1 + U), 1, 1, 2};
  for (int i = 0; i < 5; i++) cr_expect_eq(out[i], moved[i], "u = 0.25, x%d: %.9g", i, out[i]);
  lab_round_row_balanced(x, 5, LAB_BF16, 0.25, 1, out); /* one move: x0's, drawn with probability 1 */
  for (int i = 0; i < 5; i++) cr_expect_eq(out[i], kept[i], "one move, x%d: %.9g", i, out[i]);
}

Test(lab_round_row, a_row_with_nan_or_inf_is_rounded_to_nearest) {
  /* x0 rounds up (error +15/32 U): with the sum taken as NaN it would be moved down */
  const float x[4] = {1 + 17 / 32.0 * U, NAN, 1 + 12 / 32.0 * U, INFINITY};
  float out[4];
  lab_round_row_balanced(x, 4, LAB_BF16, 0.0, 0, out);
  cr_expect_eq(out[0], (float)(1 + U));
  cr_expect(isnan(out[1]));
  cr_expect_eq(out[2], 1.0f);
  cr_expect(isinf(out[3]) && out[3] > 0);
}

/* What a kernel's epilogue would pay: outputs moved off nearest per row, two tied
 * copies at d = 128 (16 heads of the suite's case), about 9 on average. */
Test(lab_round_row, moves_per_row_on_two_copies) {
  const lab_case c = {LAB_CASE_REPEAT, 2, 128, 256, 16, 48, 0, LAB_TC_FP32};
  lab_inputs in;
  cr_assert_eq(lab_inputs_make(&c, LAB_BF16, 1, &in), 0);
  const long long n = lab_q_elems(&in.shape), rows = n / 128;
  float *o = malloc(4 * n), *o32 = malloc(4 * n), *lse = malloc(4 * lab_rows(&in.shape));
  const lab_fa2_config fc = {LAB_BF16, LAB_NONE, 48, 2, 1e-3, LAB_TC_FP32, {LAB_NORM_ROUNDED, LAB_OUT_ROW, 1, 0}};
  cr_assert_eq(lab_fa2_forward(&in.shape, &fc, in.q, in.k, in.v, o, o32, lse), 0);
  long long moved = 0, most = 0;
  for (long long r = 0; r < rows; r++) {
    long long m = 0;
    for (int x = 0; x < 128; x++) m += o[r * 128 + x] != lab_round(o32[r * 128 + x], LAB_BF16);
    moved += m;
    most = m > most ? m : most;
  }
  cr_expect((double)moved / rows > 7 && (double)moved / rows < 10 && most < 40, "%.2f moves per row, %lld at most",
            (double)moved / rows, most);
  free(o), free(o32), free(lse);
  lab_inputs_free(&in);
}
