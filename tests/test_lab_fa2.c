/* The lab's emulation of the kernels (lab_fa2.c, lab_bwd.c) against the
 * float64 reference: accuracy, masked rows, extreme scores and betas, and the
 * precise-delta option. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* Random dtype values in [-amp, amp); a zero-free fill (never test on zeros). */
static float *fill(long long n, lab_dtype t, double amp, uint64_t seed) {
  float *x = malloc(sizeof(float) * n);
  lab_rng r;
  lab_rng_seed(&r, seed);
  for (long long i = 0; i < n; i++) {
    float v = 0;
    while (v == 0) v = lab_round((float)(amp * (2 * lab_rng_uniform(&r) - 1)), t);
    x[i] = v;
  }
  return x;
}

typedef struct run {
  lab_shape s;
  float *q, *k, *v, *o, *o32, *lse;
  double *o_ref, *lse_ref;
} run;

static void run_make(run *r, lab_shape s, lab_dtype t, double amp, uint64_t seed) {
  r->s = s;
  r->q = fill(lab_q_elems(&s), t, amp, seed);
  r->k = fill(lab_kv_elems(&s), t, amp, seed + 1);
  r->v = fill(lab_kv_elems(&s), t, 1.0, seed + 2);
  r->o = malloc(sizeof(float) * lab_q_elems(&s));
  r->o32 = malloc(sizeof(float) * lab_q_elems(&s));
  r->lse = malloc(sizeof(float) * lab_rows(&s));
  r->o_ref = malloc(sizeof(double) * lab_q_elems(&s));
  r->lse_ref = malloc(sizeof(double) * lab_rows(&s));
  lab_ref_forward(&s, r->q, r->k, r->v, r->o_ref, r->lse_ref);
}

static void run_free(run *r) {
  free(r->q), free(r->k), free(r->v), free(r->o), free(r->o32), free(r->lse);
  free(r->o_ref), free(r->lse_ref);
}

static int forward_tc(run *r, lab_dtype t, lab_mode m, int block_n, double beta, double eps, lab_tc tc) {
  const lab_fa2_config c = {t, m, block_n, beta, eps, tc};
  for (long long i = 0; i < lab_q_elems(&r->s); i++) r->o[i] = NAN; /* poison */
  return lab_fa2_forward(&r->s, &c, r->q, r->k, r->v, r->o, r->o32, r->lse);
}

static int forward_eps(run *r, lab_dtype t, lab_mode m, int block_n, double beta, double eps) {
  return forward_tc(r, t, m, block_n, beta, eps, LAB_TC_FP32);
}

static int forward(run *r, lab_dtype t, lab_mode m, int block_n, double beta) {
  return forward_eps(r, t, m, block_n, beta, 1e-3);
}

static const lab_mode modes[3] = {LAB_NONE, LAB_PAPER, LAB_ROBUST};

Test(lab_fa2, every_mode_matches_float64_gqa_causal_uneven) {
  /* GQA 4:2, causal with seqlen_q < seqlen_k (bottom-right), a tail tile;
   * IEEE sums and Hopper's tensor-core sums alike. */
  const lab_shape s = {2, 100, 130, 4, 2, 64, 1, 0};
  const lab_dtype types[2] = {LAB_BF16, LAB_FP16};
  const double tol[2] = {1e-2, 2e-3};
  for (int ti = 0; ti < 2; ti++) {
    run r;
    run_make(&r, s, types[ti], 1.5, 11);
    for (int m = 0; m < 6; m++) {
      const lab_tc tc = m < 3 ? LAB_TC_FP32 : LAB_TC_H100;
      cr_assert_eq(forward_tc(&r, types[ti], modes[m % 3], 48, 2.0, 1e-3, tc), 0);
      lab_err e;
      lab_compare(r.o, r.o_ref, lab_q_elems(&s), &e);
      cr_expect_eq(e.nan_count, 0, "%s %s", lab_dtype_name(types[ti]), lab_mode_name(modes[m % 3]));
      cr_expect_leq(e.rel_err, tol[ti], "%s %s %s sums: rel err %g", lab_dtype_name(types[ti]),
                    lab_mode_name(modes[m % 3]), lab_tc_name(tc), e.rel_err);
      cr_expect_gt(e.rel_err, 0, "rounded output cannot be exact everywhere");
      for (long long i = 0; i < lab_rows(&s); i++)
        cr_expect_leq(fabs(r.lse[i] - r.lse_ref[i]), 1e-5 * fmax(1, fabs(r.lse_ref[i])),
                      "%s row %lld: lse %.9g vs %.9g", lab_mode_name(modes[m % 3]), i, r.lse[i], r.lse_ref[i]);
    }
    run_free(&r);
  }
}

/* Without two scores within eps of a tile's max, Algorithm 3 is classic FA2
 * (eps 1e-6 here: random fp32 scores spread ~0.4 do not come that close);
 * with eps 1e-3 the same data has near-ties, and paper moves those rows. */
Test(lab_fa2, paper_without_ties_is_none_bit_for_bit) {
  const lab_shape s = {1, 64, 200, 2, 2, 64, 0, 0};
  run r;
  run_make(&r, s, LAB_BF16, 1.0, 5);
  const long long n = lab_q_elems(&s);
  cr_assert_eq(forward(&r, LAB_BF16, LAB_NONE, 64, 2.0), 0);
  float *none = malloc(sizeof(float) * n);
  memcpy(none, r.o, sizeof(float) * n);
  cr_assert_eq(forward_eps(&r, LAB_BF16, LAB_PAPER, 64, 2.0, 1e-6), 0);
  cr_expect_eq(memcmp(none, r.o, sizeof(float) * n), 0, "no ties within 1e-6");
  cr_assert_eq(forward_eps(&r, LAB_BF16, LAB_PAPER, 64, 2.0, 1e-3), 0);
  cr_expect_neq(memcmp(none, r.o, sizeof(float) * n), 0, "near-ties within 1e-3 move some rows");
  cr_assert_eq(forward(&r, LAB_BF16, LAB_ROBUST, 64, 2.0), 0);
  cr_expect_neq(memcmp(none, r.o, sizeof(float) * n), 0, "robust shifts every row");
  free(none);
  run_free(&r);
}

Test(lab_fa2, rows_that_see_no_key_are_zero_with_infinite_lse) {
  /* causal, seqlen_q 50 > seqlen_k 20: queries 0..29 see nothing. */
  const lab_shape s = {1, 50, 20, 2, 1, 32, 1, 0};
  run r;
  run_make(&r, s, LAB_BF16, 1.0, 9);
  for (int m = 0; m < 3; m++) {
    cr_assert_eq(forward(&r, LAB_BF16, modes[m], 16, 4.0), 0);
    for (int h = 0; h < 2; h++)
      for (int i = 0; i < 50; i++) {
        const float lse = r.lse[h * 50 + i];
        const float *o = r.o + ((long long)i * 2 + h) * 32;
        if (i < 30) {
          cr_expect(isinf(lse) && lse > 0, "%s h%d q%d lse %g", lab_mode_name(modes[m]), h, i, lse);
          for (int x = 0; x < 32; x++) cr_expect_eq(o[x], 0.f, "%s q%d", lab_mode_name(modes[m]), i);
        } else {
          cr_expect(isfinite(lse), "%s h%d q%d", lab_mode_name(modes[m]), h, i);
        }
      }
  }
  run_free(&r);
}

/* Scores of +-1e4 with the row maximum attained by every key (all keys one
 * vector), for beta from 1.5 to 16: no NaN or Inf anywhere. none and robust
 * stay accurate; paper's shift (beta*rm for rm > 0, 0 for rm < 0) underflows
 * every P there (the hole DESIGN.md names): its rows come out as zeros with
 * LSE = +inf, never NaN. */
Test(lab_fa2, huge_scores_and_betas_never_give_nan) {
  const lab_shape s = {1, 32, 96, 1, 1, 64, 0, 1.0};
  const double betas[] = {1.5, 2, 4, 8, 16};
  for (int sign = -1; sign <= 1; sign += 2) {
    run r;
    run_make(&r, s, LAB_BF16, 1.0, 21);
    for (long long i = 0; i < lab_q_elems(&s); i++) r.q[i] = (float)sign * 12.5f;
    for (long long i = 0; i < lab_kv_elems(&s); i++) r.k[i] = 12.5f; /* q.k = +-1e4 */
    lab_ref_forward(&s, r.q, r.k, r.v, r.o_ref, r.lse_ref);
    cr_assert_gt(fabs(r.lse_ref[0]), 9000, "scores reach 1e4: lse %g", r.lse_ref[0]);
    for (unsigned b = 0; b < sizeof betas / sizeof *betas; b++)
      for (int m = 0; m < 3; m++) {
        cr_assert_eq(forward(&r, LAB_BF16, modes[m], 32, betas[b]), 0);
        lab_err e;
        lab_compare(r.o, r.o_ref, lab_q_elems(&s), &e);
        cr_expect_eq(e.nan_count, 0, "sign %d beta %g %s", sign, betas[b], lab_mode_name(modes[m]));
        if (modes[m] != LAB_PAPER)
          cr_expect_leq(e.rel_err, 1e-2, "sign %d beta %g %s: rel %g", sign, betas[b],
                        lab_mode_name(modes[m]), e.rel_err);
        else
          cr_expect(r.o[0] == 0 && isinf(r.lse[0]), "paper, sign %d beta %g: o %g lse %g", sign,
                    betas[b], r.o[0], r.lse[0]);
      }
    run_free(&r);
  }
}

Test(lab_fa2, bad_configs_are_refused) {
  const lab_shape s = {1, 4, 4, 1, 1, 64, 0, 0};
  run r;
  run_make(&r, s, LAB_BF16, 1.0, 3);
  lab_fa2_config c = {LAB_BF16, LAB_ROBUST, 0, 2, 1e-3};
  cr_expect_eq(lab_fa2_forward(&s, &c, r.q, r.k, r.v, r.o, NULL, r.lse), -1, "block_n 0");
  c.block_n = 16, c.beta = 1;
  cr_expect_eq(lab_fa2_forward(&s, &c, r.q, r.k, r.v, r.o, NULL, r.lse), -1, "beta 1");
  c.beta = 2, c.eps = 0;
  cr_expect_eq(lab_fa2_forward(&s, &c, r.q, r.k, r.v, r.o, NULL, r.lse), -1, "eps 0");
  c.mode = LAB_NONE; /* beta and eps do not matter without stabilization */
  cr_expect_eq(lab_fa2_forward(&s, &c, r.q, r.k, r.v, r.o, NULL, r.lse), 0);
  run_free(&r);
  const lab_shape wide = {1, 4, 4, 1, 1, LAB_TC_MAX_COLS + 8, 0, 0};
  run_make(&r, wide, LAB_BF16, 1.0, 3);
  c.tc = LAB_TC_H100;
  cr_expect_eq(lab_fa2_forward(&wide, &c, r.q, r.k, r.v, r.o, NULL, r.lse), -1, "Hopper's sums: d <= 256");
  c.tc = LAB_TC_FP32;
  cr_expect_eq(lab_fa2_forward(&wide, &c, r.q, r.k, r.v, r.o, NULL, r.lse), 0, "IEEE sums: any d");
  run_free(&r);
}

/* The backward emulation against float64 gradients, with delta from the
 * bf16 O and from the fp32 O: both accurate, the fp32 delta closer. */
Test(lab_fa2, backward_matches_float64_and_fp32_delta_is_closer) {
  const lab_shape s = {1, 80, 96, 4, 2, 64, 1, 0};
  run r;
  run_make(&r, s, LAB_BF16, 1.5, 31);
  const long long nq = lab_q_elems(&s), nkv = lab_kv_elems(&s), rows = lab_rows(&s);
  float *dout = fill(nq, LAB_BF16, 1.0, 41), *delta = malloc(sizeof(float) * rows);
  float *dq = malloc(sizeof(float) * nq), *dk = malloc(sizeof(float) * nkv), *dv = malloc(sizeof(float) * nkv);
  double *rq = malloc(sizeof(double) * nq), *rk = malloc(sizeof(double) * nkv), *rv = malloc(sizeof(double) * nkv);
  lab_ref_backward(&s, r.q, r.k, r.v, dout, rq, rk, rv, NULL);
  cr_assert_eq(forward(&r, LAB_BF16, LAB_ROBUST, 48, 2.0), 0); /* the shift lives in the LSE */
  double delta_err[2];
  for (int precise = 0; precise < 2; precise++) {
    lab_fa2_delta(&s, precise ? r.o32 : r.o, dout, delta);
    delta_err[precise] = 0;
    for (int h = 0; h < 4; h++)
      for (int i = 0; i < 80; i++) {
        double exact = 0;
        for (int x = 0; x < 64; x++) exact += (double)dout[((long long)i * 4 + h) * 64 + x] * r.o_ref[((long long)i * 4 + h) * 64 + x];
        delta_err[precise] += fabs(delta[h * 80 + i] - exact);
      }
    cr_assert_eq(lab_fa2_backward(&s, LAB_BF16, r.q, r.k, r.v, dout, r.lse, delta, dq, dk, dv), 0);
    lab_err e[3];
    lab_compare(dq, rq, nq, &e[0]);
    lab_compare(dk, rk, nkv, &e[1]);
    lab_compare(dv, rv, nkv, &e[2]);
    for (int g = 0; g < 3; g++) {
      cr_expect_eq(e[g].nan_count, 0);
      cr_expect_leq(e[g].rel_err, 2e-2, "%s delta: d%c rel err %g", precise ? "fp32" : "bf16", "qkv"[g], e[g].rel_err);
    }
  }
  /* fp32 O drops the output rounding; P's rounding inside P V stays */
  cr_expect_lt(delta_err[1], 0.85 * delta_err[0], "sum |delta - exact|: fp32 O %g, bf16 O %g", delta_err[1], delta_err[0]);
  free(dout), free(delta), free(dq), free(dk), free(dv), free(rq), free(rk), free(rv);
  run_free(&r);
}

/* ---- score modifiers ---------------------------------------------------------------- */

/* The emulation with each modifier (and all together) in every mode, IEEE and Hopper
 * sums, against float64 with the same modifiers: O within bf16 accuracy, LSE to 1e-5
 * (sinks included), rows that see no key O = 0 and LSE = the sink (+inf without). */
Test(lab_fa2, modifiers_every_mode_matches_float64) {
  float slopes[4] = {0.5f, 0.25f, 0.125f, 1.0f}, sinks[4] = {3.0f, -2.0f, 0.5f, 40.0f};
  lab_shape shapes[] = {
      {2, 100, 130, 4, 2, 64, 1, 0, .softcap = 3.0},                       /* saturated scores */
      {1, 100, 130, 4, 2, 64, 0, 0, .alibi = slopes},
      {1, 100, 130, 4, 1, 64, 0, 0, .window = 1, .window_left = 40, .window_right = 7},
      {1, 150, 60, 4, 2, 64, 1, 0, .sinks = sinks},                         /* 90 rows see no key */
      {1, 100, 130, 4, 2, 64, 0, 0.1, .window = 1, .window_left = 70, .window_right = 0,
       .softcap = 20, .alibi = slopes, .sinks = sinks},
  };
  for (unsigned t = 0; t < sizeof shapes / sizeof *shapes; t++) {
    run r;
    run_make(&r, shapes[t], LAB_BF16, 1.5, 60 + t);
    for (int m = 0; m < 6; m++) {
      const lab_tc tc = m < 3 ? LAB_TC_FP32 : LAB_TC_H100;
      cr_assert_eq(forward_tc(&r, LAB_BF16, modes[m % 3], 48, 2.0, 1e-3, tc), 0);
      lab_err e;
      lab_compare(r.o, r.o_ref, lab_q_elems(&shapes[t]), &e);
      cr_expect_eq(e.nan_count, 0, "shape %u %s", t, lab_mode_name(modes[m % 3]));
      cr_expect_leq(e.max_abs_err, 1.6e-2, "shape %u %s %s: max err %g", t, lab_mode_name(modes[m % 3]),
                    lab_tc_name(tc), e.max_abs_err);
      for (long long i = 0; i < lab_rows(&shapes[t]); i++)
        cr_expect(r.lse[i] == r.lse_ref[i] || fabs(r.lse[i] - r.lse_ref[i]) <= 1e-5 * fmax(1, fabs(r.lse_ref[i])),
                  "shape %u %s row %lld: lse %.9g vs %.9g", t, lab_mode_name(modes[m % 3]), i, r.lse[i],
                  r.lse_ref[i]);
    }
    run_free(&r);
  }
}

/* The backward emulation with every modifier, and dsinks as fa2_bwd_sink computes it,
 * against float64 (delta from the fp32 O); the sink 40 above the scores takes most of
 * head 3's rows, the others less. */
Test(lab_fa2, modifiers_backward_and_dsinks_match_float64) {
  float slopes[4] = {0.5f, 0.25f, 0.125f, 1.0f}, sinks[4] = {3.0f, -2.0f, 0.5f, 4.0f};
  const lab_shape s = {1, 80, 96, 4, 2, 64, 0, 0, .window = 1, .window_left = 50, .window_right = 3,
                       .softcap = 5, .alibi = slopes, .sinks = sinks};
  run r;
  run_make(&r, s, LAB_BF16, 1.5, 71);
  const long long nq = lab_q_elems(&s), nkv = lab_kv_elems(&s), rows = lab_rows(&s);
  float *dout = fill(nq, LAB_BF16, 1.0, 72), *delta = malloc(sizeof(float) * rows), ds[4];
  float *dq = malloc(sizeof(float) * nq), *dk = malloc(sizeof(float) * nkv), *dv = malloc(sizeof(float) * nkv);
  double *rq = malloc(sizeof(double) * nq), *rk = malloc(sizeof(double) * nkv), *rv = malloc(sizeof(double) * nkv);
  double rs[4];
  lab_ref_backward(&s, r.q, r.k, r.v, dout, rq, rk, rv, rs);
  cr_assert_eq(forward(&r, LAB_BF16, LAB_ROBUST, 48, 2.0), 0);
  lab_fa2_delta(&s, r.o32, dout, delta);
  cr_assert_eq(lab_fa2_backward(&s, LAB_BF16, r.q, r.k, r.v, dout, r.lse, delta, dq, dk, dv), 0);
  lab_fa2_dsinks(&s, r.lse, delta, ds);
  lab_err e[4];
  lab_compare(dq, rq, nq, &e[0]);
  lab_compare(dk, rk, nkv, &e[1]);
  lab_compare(dv, rv, nkv, &e[2]);
  lab_compare(ds, rs, 4, &e[3]);
  for (int g = 0; g < 4; g++) {
    cr_expect_eq(e[g].nan_count, 0);
    cr_expect_leq(e[g].rel_err, 2e-2, "%s rel err %g", (const char *[]){"dq", "dk", "dv", "dsinks"}[g],
                  e[g].rel_err);
  }
  for (int h = 0; h < 4; h++) cr_expect_neq(rs[h], 0.0, "head %d: a real gradient", h);
  free(dout), free(delta), free(dq), free(dk), free(dv), free(rq), free(rk), free(rv);
  run_free(&r);
}

/* Issue 22's large-logit fp16 backward case (FlashAttention-2's overflow test):
 * batch 2, 5 heads, seqlen 2, d 32, causal, q = 5 N(0,1), k = v = 3 N(0,1), dO =
 * N(0,1); max |dQ - ref| and |dK - ref| per forward construction, averaged over 400
 * draws (one draw of 10 rows is noise). robust's O error doubles the gradients' (its
 * delta comes from that O); a normalizer from the rounded P gives none's back, and
 * stochastic rounding of O costs about half of robust's excess; row-balanced rounding
 * with that normalizer (unbiased on the suite) keeps none's (lab/README.md). */
Test(lab_fa2, issue22_large_logit_fp16_backward) {
  const lab_shape s = {2, 2, 2, 5, 5, 32, 1, 0};
  const long long nq = lab_q_elems(&s), nk = lab_kv_elems(&s), rows = lab_rows(&s);
  float *q = malloc(4 * nq), *k = malloc(4 * nk), *v = malloc(4 * nk), *dout = malloc(4 * nq);
  float *o = malloc(4 * nq), *lse = malloc(4 * rows), *delta = malloc(4 * rows);
  float *dq = malloc(4 * nq), *dk = malloc(4 * nk), *dv = malloc(4 * nk);
  double *o_ref = malloc(8 * nq), *lse_ref = malloc(8 * rows), *dq_ref = malloc(8 * nq);
  double *dk_ref = malloc(8 * nk), *dv_ref = malloc(8 * nk);
  enum { NONE, ROBUST, ROBUST_LRND, NONE_SR, NONE_LRND_ROW, N_CFG, DRAWS = 400 };
  const lab_mode cfg_modes[N_CFG] = {LAB_NONE, LAB_ROBUST, LAB_ROBUST, LAB_NONE, LAB_NONE};
  const lab_numerics nums[N_CFG] = {{0}, {0}, {LAB_NORM_ROUNDED, LAB_OUT_RN, 0}, {LAB_NORM_FP32, LAB_OUT_SR, 0},
                                    {LAB_NORM_ROUNDED, LAB_OUT_ROW, 0}};
  double e_dq[N_CFG] = {0}, e_dk[N_CFG] = {0};
  for (int draw = 0; draw < DRAWS; draw++) {
    lab_rng r;
    lab_rng_seed(&r, 1000 + (uint64_t)draw);
    for (long long i = 0; i < nq; i++) q[i] = lab_round((float)(5 * lab_rng_normal(&r)), LAB_FP16);
    for (long long i = 0; i < nk; i++) k[i] = lab_round((float)(3 * lab_rng_normal(&r)), LAB_FP16);
    for (long long i = 0; i < nk; i++) v[i] = lab_round((float)(3 * lab_rng_normal(&r)), LAB_FP16);
    for (long long i = 0; i < nq; i++) dout[i] = lab_round((float)lab_rng_normal(&r), LAB_FP16);
    lab_ref_forward(&s, q, k, v, o_ref, lse_ref);
    lab_ref_backward(&s, q, k, v, dout, dq_ref, dk_ref, dv_ref, NULL);
    for (int c = 0; c < N_CFG; c++) {
      lab_fa2_config fc = {LAB_FP16, cfg_modes[c], 64, 2.0, 1e-3, LAB_TC_FP32, nums[c]};
      fc.num.seed = 77 + (uint64_t)draw;
      cr_assert_eq(lab_fa2_forward(&s, &fc, q, k, v, o, NULL, lse), 0);
      lab_fa2_delta(&s, o, dout, delta);
      cr_assert_eq(lab_fa2_backward(&s, LAB_FP16, q, k, v, dout, lse, delta, dq, dk, dv), 0);
      lab_err eq, ek;
      lab_compare(dq, dq_ref, nq, &eq);
      lab_compare(dk, dk_ref, nk, &ek);
      cr_assert_eq(eq.nan_count + ek.nan_count, 0, "config %d, draw %d: NaN or Inf", c, draw);
      e_dq[c] += eq.max_abs_err / DRAWS;
      e_dk[c] += ek.max_abs_err / DRAWS;
    }
  }
  cr_log_info("large-logit fp16 backward, mean of max|err| over %d draws: dQ none %.3e robust %.3e "
              "robust+lrnd %.3e none+sr %.3e none+lrnd+row %.3e; dK %.3e %.3e %.3e %.3e %.3e", DRAWS, e_dq[0],
              e_dq[1], e_dq[2], e_dq[3], e_dq[4], e_dk[0], e_dk[1], e_dk[2], e_dk[3], e_dk[4]);
  cr_expect(e_dq[ROBUST] > 1.6 * e_dq[NONE] && e_dk[ROBUST] > 1.6 * e_dk[NONE], "robust doubles the error: dQ %.2fx, dK %.2fx",
            e_dq[ROBUST] / e_dq[NONE], e_dk[ROBUST] / e_dk[NONE]);
  cr_expect(e_dq[ROBUST_LRND] < 1.05 * e_dq[NONE] && e_dk[ROBUST_LRND] < 1.05 * e_dk[NONE],
            "robust+lrnd is none's: dQ %.3fx, dK %.3fx", e_dq[ROBUST_LRND] / e_dq[NONE], e_dk[ROBUST_LRND] / e_dk[NONE]);
  cr_expect(e_dq[NONE_LRND_ROW] < 1.05 * e_dq[NONE] && e_dk[NONE_LRND_ROW] < 1.05 * e_dk[NONE],
            "none+lrnd+row (unbiased) keeps none's gradients: dQ %.3fx, dK %.3fx", e_dq[NONE_LRND_ROW] / e_dq[NONE],
            e_dk[NONE_LRND_ROW] / e_dk[NONE]);
  cr_expect(e_dq[NONE_SR] < 0.8 * e_dq[ROBUST] && e_dq[NONE_SR] > e_dq[NONE],
            "none+sr between: dQ %.2fx none's, %.2fx robust's", e_dq[NONE_SR] / e_dq[NONE], e_dq[NONE_SR] / e_dq[ROBUST]);
  free(q), free(k), free(v), free(dout), free(o), free(lse), free(delta), free(dq), free(dk), free(dv);
  free(o_ref), free(lse_ref), free(dq_ref), free(dk_ref), free(dv_ref);
}
