/* The tensor cores' inner product (lab_tc.c): IEEE fp32 adds, and Hopper's
 * model (blocks of 16 products aligned to their largest exponent, cut toward
 * zero, summed exactly, rounded toward zero), on sums whose three answers
 * (fp32, Hopper, exact) differ in known bits. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lab.h"

/* 1.0 and 1.5, 16 of each */
static const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float halves3[16] = {1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f,
                                  1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f};

/* 1 + 16 * (1.5 * 2^-25): each product is 3/8 of an ulp of 1. IEEE adds round
 * every one away; Hopper keeps 2^-25 of each (aligned to the accumulator's
 * exponent 0, cut to multiples of 2^-25); exact is 1 + 1.5 * 2^-21. */
Test(lab_tc, small_products_are_cut_to_the_block_quantum) {
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = 0x1p-25f;
  float a = 1.f, b = 1.f;
  cr_assert_eq(lab_tc_accumulate(LAB_TC_FP32, &a, 1, halves3, v, 1, 16), 0);
  cr_assert_eq(lab_tc_accumulate(LAB_TC_H100, &b, 1, halves3, v, 1, 16), 0);
  cr_expect_eq(a, 1.f, "fp32: %a", a);
  cr_expect_eq(b, 1.f + 0x1p-21f, "h100: %a", b);
  float c = -1.f;
  for (int i = 0; i < 16; i++) v[i] = -0x1p-25f;
  lab_tc_accumulate(LAB_TC_H100, &c, 1, halves3, v, 1, 16);
  cr_expect_eq(c, -(1.f + 0x1p-21f), "negative terms are cut toward zero too: %a", c);
  float d = 1.f;
  lab_tc_accumulate(LAB_TC_H100, &d, 1, halves3, v, 1, 16);
  cr_expect_eq(d, 1.f - 0x1p-21f, "terms of the other sign: each -1.5 q cut to -q: %a", d);
}

/* 1 + 1.5 * 2^-24 = 1 + 0.75 ulp: IEEE rounds to nearest (up), Hopper's sum
 * is exact and then rounded toward zero (down). */
Test(lab_tc, the_sum_is_rounded_toward_zero) {
  const float v = 0x1p-24f;
  float a = 1.f, b = 1.f, c = -1.f, w = -0x1p-24f;
  lab_tc_accumulate(LAB_TC_FP32, &a, 1, halves3, &v, 1, 1);
  lab_tc_accumulate(LAB_TC_H100, &b, 1, halves3, &v, 1, 1);
  lab_tc_accumulate(LAB_TC_H100, &c, 1, halves3, &w, 1, 1);
  cr_expect_eq(a, 1.f + 0x1p-23f, "fp32: %a", a);
  cr_expect_eq(b, 1.f, "h100: %a", b);
  cr_expect_eq(c, -1.f, "h100, negative: %a", c);
}

/* A product's exponent is the sum of its factors' (1.5 * 1.5 = 2.25 has
 * exponent 0, not 1): 2.25 + 15 * 2^-25 keeps every 2^-25 and rounds down to
 * 2.25 + 2^-22 (one ulp); a normalized exponent would cut them all. */
Test(lab_tc, a_product_keeps_its_factors_exponent) {
  float p[16], v[16];
  p[0] = 1.5f, v[0] = 1.5f;
  for (int i = 1; i < 16; i++) p[i] = 1.f, v[i] = 0x1p-25f;
  float acc = 0.f;
  lab_tc_accumulate(LAB_TC_H100, &acc, 1, p, v, 1, 16);
  cr_expect_eq(acc, 2.25f + 0x1p-22f, "%a", acc);
}

/* 17 products: the first 16 form a block, the 17th a second one that takes
 * the rounded first sum as its accumulator. 1 + 16 * 1.5 * 2^-25 in blocks:
 * (1 + 15 q -> 1 + 3 ulp) then (+ 1 q -> 1 + 3 ulp); one block would give
 * 1 + 4 ulp. */
Test(lab_tc, blocks_of_sixteen_chain_through_the_accumulator) {
  float p[17], v[17];
  p[0] = 1.f, v[0] = 1.f;
  for (int i = 1; i < 17; i++) p[i] = 1.5f, v[i] = 0x1p-25f;
  float acc = 0.f;
  lab_tc_accumulate(LAB_TC_H100, &acc, 1, p, v, 1, 17);
  cr_expect_eq(acc, 1.f + 3 * 0x1p-23f, "%a", acc);
}

/* A zero product takes no part in the alignment, however large its other
 * factor: otherwise 2^100 would cut every other term, the accumulator too. */
Test(lab_tc, zero_products_do_not_align) {
  float p[17] = {0.f}, v[17];
  v[0] = 0x1p100f;
  for (int i = 1; i < 17; i++) p[i] = 1.5f, v[i] = 0x1p-25f;
  float acc = 1.f;
  lab_tc_accumulate(LAB_TC_H100, &acc, 1, p, v, 1, 16); /* the zero and 15 terms */
  cr_expect_eq(acc, 1.f + 3 * 0x1p-23f, "%a", acc);
  float none = 0x1p-30f;
  lab_tc_accumulate(LAB_TC_H100, &none, 1, p, v, 1, 1);
  cr_expect_eq(none, 0x1p-30f, "only zero products: the accumulator as it was");
}

/* Columns align on their own: column 1 is 2^-20 in size, its terms 2^-45. */
Test(lab_tc, each_column_has_its_own_exponent) {
  float v[16][2];
  for (int j = 0; j < 16; j++) v[j][0] = 0x1p-25f, v[j][1] = 0x1p-45f;
  float acc[2] = {1.f, 0x1p-20f};
  cr_assert_eq(lab_tc_accumulate(LAB_TC_H100, acc, 2, halves3, &v[0][0], 2, 16), 0);
  cr_expect_eq(acc[0], 1.f + 0x1p-21f, "%a", acc[0]);
  cr_expect_eq(acc[1], 0x1p-20f + 0x1p-41f, "%a", acc[1]);
  float f[2] = {1.f, 0x1p-20f};
  lab_tc_accumulate(LAB_TC_FP32, f, 2, ones, &v[0][0], 2, 16);
  cr_expect_eq(f[1], 0x1p-20f, "fp32: each 2^-45 is a quarter ulp, rounded away: %a", f[1]);
}

Test(lab_tc, bad_sizes_are_refused_and_names_parse) {
  float acc[1] = {1.f};
  cr_expect_eq(lab_tc_accumulate(LAB_TC_H100, acc, 0, ones, ones, 1, 1), -1);
  cr_expect_eq(lab_tc_accumulate(LAB_TC_H100, acc, LAB_TC_MAX_COLS + 1, ones, ones, 1, 1), -1);
  cr_expect_eq(lab_tc_accumulate(LAB_TC_FP32, acc, 1, ones, ones, 1, -1), -1);
  cr_expect_eq(acc[0], 1.f, "nothing written");
  float wide[LAB_TC_MAX_COLS + 1] = {0}, vrow[LAB_TC_MAX_COLS + 1];
  for (int i = 0; i <= LAB_TC_MAX_COLS; i++) vrow[i] = 1.f;
  cr_expect_eq(lab_tc_accumulate(LAB_TC_FP32, wide, LAB_TC_MAX_COLS + 1, ones, vrow, 0, 1), 0,
               "IEEE sums take any width");
  cr_expect_eq(wide[LAB_TC_MAX_COLS], 1.f);
  lab_tc t = LAB_TC_FP32;
  cr_expect_eq(lab_tc_parse("h100", &t), 0);
  cr_expect_eq(t, LAB_TC_H100);
  cr_expect_eq(lab_tc_parse("fp32", &t), 0);
  cr_expect_eq(t, LAB_TC_FP32);
  cr_expect_eq(lab_tc_parse("h200", &t), -1);
  cr_expect_str_eq(lab_tc_name(LAB_TC_H100), "h100");
  cr_expect_str_eq(lab_tc_name(LAB_TC_FP32), "fp32");
}
