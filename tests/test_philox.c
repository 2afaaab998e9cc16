/* Attention dropout's random numbers: templates/fa2_philox.h, the file the
 * kernels paste, compiled here as C. Philox4x32-10 against the published
 * known-answer vectors (Random123's kat_vectors), the element -> unit mapping,
 * the 16-bit keep test, and the host mask (fa2_dropout_mask_host) with its
 * kept fraction and bias. The GPU tests (tests/gpu/test_dropout.py) check that
 * the kernels draw these same bits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fa2.h"
#include "rt_dropout.h"

#define FA2_PHILOX_FN static inline
#include "fa2_philox.h"

Test(philox, known_answers) {
  /* philox4x32 10: counter (4 words), key (2 words) -> output (4 words) */
  static const unsigned v[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  for (int t = 0; t < 3; t++) {
    const fa2_philox4 r = fa2_philox4x32_10(v[t][0], v[t][1], v[t][2], v[t][3], v[t][4], v[t][5]);
    for (int i = 0; i < 4; i++)
      cr_expect_eq(r.x[i], v[t][6 + i], "vector %d word %d: %08x, expected %08x", t, i, r.x[i],
                   v[t][6 + i]);
  }
}

/* The counter and key of a unit, and which word and half an element reads. */
Test(philox, unit_layout) {
  const unsigned long long seed = 0x0123456789abcdefull, offset = 0xfffffffffffffff0ull, bh = 0x25;
  const fa2_philox4 r = fa2_dropout_unit(seed, offset, bh, 3, 5, 17);
  const unsigned long long sub = offset + bh; /* wraps: 0x15 */
  const fa2_philox4 want = fa2_philox4x32_10(5 * 32 + 17, 3, (unsigned)sub, (unsigned)(sub >> 32),
                                             0x89abcdefu, 0x01234567u);
  cr_expect_eq(memcmp(&r, &want, sizeof r), 0);
  cr_expect_eq(sub, 0x15);
  /* Element (row 16*3 + i, key 16*5 + j) of that unit (i % 8 = 4, (j % 8) / 2 = 1): word
   * 2 (i / 8) + (j / 8), low half for an even key. */
  const unsigned limit = fa2_dropout_limit(30000);
  for (int i = 4; i < 16; i += 8)
    for (int j = 0; j < 16; j++) {
      if ((j % 8) / 2 != 1) continue;
      const unsigned w = r.x[2 * (i / 8) + j / 8], n16 = j & 1 ? w >> 16 : w & 0xffff;
      cr_expect_eq(fa2_dropout_kept(seed, offset, bh, 48 + i, 80 + j, limit), n16 < 30000,
                   "element (%d, %d)", 48 + i, 80 + j);
    }
}

/* kept_lo/hi compare one half of a word with keep16 - 1, the other half whatever it is. */
Test(philox, keep_test_is_number_below_keep16) {
  static const unsigned keeps[] = {1, 2, 3, 32768, 58982, 65535, 65536};
  for (unsigned k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
    const unsigned limit = fa2_dropout_limit(keeps[k]);
    for (unsigned n = 0; n < 65536; n++) {
      const unsigned other = (n * 2654435761u) >> 16; /* any bits in the other half */
      cr_assert_eq(fa2_kept_lo(other << 16 | n, limit), n < keeps[k], "keep16 %u, low %u", keeps[k], n);
      cr_assert_eq(fa2_kept_hi(n << 16 | other, limit), n < keeps[k], "keep16 %u, high %u", keeps[k], n);
    }
  }
}

/* keep16 = round((1 - p) 65536): the exact keep probability keep16 / 65536 is 1 - p
 * within 2^-17, so E[kept / (1 - p)] = 1 within 2^-17 / (1 - p). */
Test(philox, keep_probability_is_one_minus_p) {
  for (int i = 0; i < 1000; i++) {
    const float p = (float)i / 1000.f;
    rt_dropout_fields f;
    rt_dropout_fields_of(p, &f);
    const double keep16 = (double)(f.limit >> 16) + 1, q = 1.0 - (double)p;
    cr_assert_leq(fabs(keep16 / 65536 - q), 0x1p-17, "p %g: keep16 %g", p, keep16);
    cr_assert_leq(fabs(keep16 / 65536 / q - 1), 0x1p-17 / q, "p %g", p);
    cr_assert_float_eq(f.keep, (float)q, 0);
    cr_assert_float_eq(f.scale, (float)(1 / q), 0);
  }
  rt_dropout_fields f;
  rt_dropout_fields_of(0.f, &f);
  cr_expect_eq(f.limit, 0xffffffffu); /* keeps every number */
  rt_dropout_fields_of(1.f - 0x1p-20f, &f);
  cr_expect_eq(f.limit, 0xffffu); /* keep16 1: the last representable probability */
}

static fa2_fwd_args mask_args(int b, int h, int sq, int sk, float p, unsigned long long seed,
                              unsigned long long offset) {
  fa2_fwd_args a = {0};
  a.batch = b, a.heads_q = h, a.seqlen_q = sq, a.seqlen_k = sk;
  a.dropout = 1, a.dropout_p = p, a.dropout_seed = seed, a.dropout_offset = offset;
  return a;
}

/* Kept fraction of 2^20 elements within 4 standard deviations of 1 - p. */
Test(philox, host_mask_keeps_one_minus_p) {
  static const float ps[] = {0.f, 0.1f, 0.5f, 0.9f};
  const int n = 4 * 2 * 256 * 512;
  unsigned char *m = malloc((size_t)n);
  cr_assert(m);
  for (unsigned t = 0; t < sizeof ps / sizeof ps[0]; t++) {
    fa2_fwd_args a = mask_args(4, 2, 256, 512, ps[t], 1234 + t, 77);
    cr_assert_eq(fa2_dropout_mask_host(&a, m), FA2_OK, "%s", fa2_last_error());
    long kept = 0;
    for (int i = 0; i < n; i++) kept += m[i];
    const double q = 1.0 - ps[t], frac = (double)kept / n, sd = sqrt(q * (1 - q) / n);
    cr_expect_leq(fabs(frac - q), 4 * sd + 1e-12, "p %g: kept %.6f", ps[t], frac);
  }
  free(m);
}

/* Other seeds and offsets give other masks; offset k is bh + k (batch * heads_q + head). */
Test(philox, host_mask_seeds_and_offsets) {
  const int n = 2 * 3 * 64 * 80, per = 64 * 80;
  unsigned char *m0 = malloc(n), *m1 = malloc(n), *m2 = malloc(n);
  cr_assert(m0 && m1 && m2);
  fa2_fwd_args a = mask_args(2, 3, 64, 80, 0.3f, 42, 0);
  cr_assert_eq(fa2_dropout_mask_host(&a, m0), FA2_OK);
  a.dropout_seed = 43;
  cr_assert_eq(fa2_dropout_mask_host(&a, m1), FA2_OK);
  int same = 0;
  for (int i = 0; i < n; i++) same += m0[i] == m1[i];
  cr_expect_lt(same, n * 0.62, "seeds 42 and 43 agree on %d of %d", same, n); /* 0.58 expected */
  a.dropout_seed = 42, a.dropout_offset = 1;
  cr_assert_eq(fa2_dropout_mask_host(&a, m2), FA2_OK);
  cr_expect_eq(memcmp(m2, m0 + per, (size_t)(n - per)), 0, "offset 1 is the next matrix's mask");
  free(m0), free(m1), free(m2);
}

Test(philox, host_mask_checks) {
  unsigned char m[4];
  fa2_fwd_args a = mask_args(1, 1, 2, 2, 1.f, 1, 0);
  cr_expect_eq(fa2_dropout_mask_host(&a, m), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dropout_p is 1: must be >= 0 and < 1 (the probability of "
                                     "dropping an attention weight)");
  a.dropout_p = 0.5f, a.dropout_rng = (const unsigned long long *)0x1000;
  cr_expect_eq(fa2_dropout_mask_host(&a, m), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "dropout_rng is set: the host cannot read device memory; "
                                     "give dropout_seed and dropout_offset");
  a.dropout_rng = NULL, a.seqlen_k = -1;
  cr_expect_eq(fa2_dropout_mask_host(&a, m), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "seqlen_k is -1: must be >= 0");
  a.seqlen_k = 2;
  cr_expect_eq(fa2_dropout_mask_host(&a, NULL), FA2_ERR_INVALID_ARGUMENT);
  cr_expect_str_eq(fa2_last_error(), "mask is NULL: it receives the keep bytes");
  cr_expect_eq(fa2_dropout_mask_host(NULL, m), FA2_ERR_INVALID_ARGUMENT);
}
