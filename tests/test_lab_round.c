/* float32 -> bf16 / fp16: hard cases with exact bit patterns, the paper's
 * example, every 16-bit pattern round-tripped, and a sweep that checks
 * nearest-even against exact midpoints computed here. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lab.h"

static float f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* Input as float32 bits (exact, and NaN-free by construction). */
typedef struct hard_case {
  const char *what;
  uint32_t x;
  uint16_t bf16, fp16;
} hard_case;

static const hard_case cases[] = {
    {"+0", 0x00000000, 0x0000, 0x0000},
    {"-0", 0x80000000, 0x8000, 0x8000},
    {"+inf", 0x7f800000, 0x7f80, 0x7c00},
    {"-inf", 0xff800000, 0xff80, 0xfc00},
    {"1", 0x3f800000, 0x3f80, 0x3c00},
    {"-1", 0xbf800000, 0xbf80, 0xbc00},
    {"pi", 0x40490fdb, 0x4049, 0x4248},
    {"0.1", 0x3dcccccd, 0x3dcd, 0x2e66},
    /* bf16 ulp at 1 is 2^-7: ties at odd multiples of 2^-8. */
    {"1 + 2^-8: bf16 tie, down to even", 0x3f808000, 0x3f80, 0x3c04},
    {"1 + 3*2^-8: bf16 tie, up to even", 0x3f818000, 0x3f82, 0x3c0c},
    {"-(1 + 3*2^-8): bf16 tie, up to even", 0xbf818000, 0xbf82, 0xbc0c},
    {"1 + 2^-8 + 2^-20: above a bf16 tie", 0x3f808008, 0x3f81, 0x3c04},
    {"1 + 2^-8 - 2^-20: below a bf16 tie", 0x3f807ff8, 0x3f80, 0x3c04},
    {"1 + 3*2^-8 - 2^-20: below a bf16 tie", 0x3f817ff8, 0x3f81, 0x3c0c},
    /* fp16 ulp at 1 is 2^-10: ties at odd multiples of 2^-11. */
    {"1 + 2^-11: fp16 tie, down to even", 0x3f801000, 0x3f80, 0x3c00},
    {"1 + 3*2^-11: fp16 tie, up to even", 0x3f803000, 0x3f80, 0x3c02},
    {"1 + 2^-11 + 2^-23: above an fp16 tie", 0x3f801001, 0x3f80, 0x3c01},
    {"1 + 2^-11 - 2^-23: below an fp16 tie", 0x3f800fff, 0x3f80, 0x3c00},
    {"1 + 3*2^-11 - 2^-23: below an fp16 tie", 0x3f802fff, 0x3f80, 0x3c01},
    /* bf16 range: max finite 0x7f7f; (2 - 2^-8) * 2^127 is the tie with 2^128. */
    {"bf16 max finite", 0x7f7f0000, 0x7f7f, 0x7c00},
    {"FLT_MAX: bf16 overflow", 0x7f7fffff, 0x7f80, 0x7c00},
    {"bf16 overflow tie: to inf (even)", 0x7f7f8000, 0x7f80, 0x7c00},
    {"-(bf16 overflow tie)", 0xff7f8000, 0xff80, 0xfc00},
    {"just below the bf16 overflow tie", 0x7f7f7fff, 0x7f7f, 0x7c00},
    /* fp16 range: max finite 65504; 65520 is the tie with 2^16. */
    {"65504: fp16 max finite", 0x477fe000, 0x4780, 0x7bff},
    {"65505", 0x477fe100, 0x4780, 0x7bff},
    {"65519.99 (65519.988...)", 0x477feffd, 0x4780, 0x7bff},
    {"65520 - 2^-8: float below the fp16 overflow tie", 0x477fefff, 0x4780, 0x7bff},
    {"65520: fp16 overflow tie, to inf (even)", 0x477ff000, 0x4780, 0x7c00},
    {"-65520", 0xc77ff000, 0xc780, 0xfc00},
    {"65536", 0x47800000, 0x4780, 0x7c00},
    /* fp16 subnormals: unit 2^-24; smallest normal 2^-14. */
    {"2^-14: smallest fp16 normal", 0x38800000, 0x3880, 0x0400},
    {"1023*2^-24: largest fp16 subnormal", 0x387fc000, 0x3880, 0x03ff},
    {"2^-14 - 2^-25: tie, up to the smallest normal", 0x387fe000, 0x3880, 0x0400},
    {"-(2^-14 - 2^-25)", 0xb87fe000, 0xb880, 0x8400},
    {"2^-14 - 2^-25 - 2^-38: below that tie", 0x387fdfff, 0x3880, 0x03ff},
    {"2^-24: smallest fp16 subnormal", 0x33800000, 0x3380, 0x0001},
    {"2^-25: half the smallest subnormal, tie to 0", 0x33000000, 0x3300, 0x0000},
    {"-2^-25", 0xb3000000, 0xb300, 0x8000},
    {"2^-25 + 1 float ulp", 0x33000001, 0x3300, 0x0001},
    {"2^-25 - 1 float ulp", 0x32ffffff, 0x3300, 0x0000},
    {"2^-26", 0x32800000, 0x3280, 0x0000},
    {"3*2^-25: subnormal tie, up to even", 0x33c00000, 0x33c0, 0x0002},
    {"5*2^-25: subnormal tie, down to even", 0x34200000, 0x3420, 0x0002},
    /* float32 subnormals: bf16 has them too (unit 2^-133); fp16 gets 0. */
    {"2^-149: smallest float subnormal", 0x00000001, 0x0000, 0x0000},
    {"2^-134: half the smallest bf16 subnormal, tie to 0", 0x00008000, 0x0000, 0x0000},
    {"2^-134 + 2^-149", 0x00008001, 0x0001, 0x0000},
    {"3*2^-134: bf16 subnormal tie, up to even", 0x00018000, 0x0002, 0x0000},
    {"2^-127", 0x00400000, 0x0040, 0x0000},
    {"-2^-127", 0x80400000, 0x8040, 0x8000},
    {"largest float subnormal: up to FLT_MIN", 0x007fffff, 0x0080, 0x0000},
    {"FLT_MIN", 0x00800000, 0x0080, 0x0000},
    /* The paper's sum (below): -4.703990459442139. */
    {"-4.703990459442139", 0xc0968717, 0xc097, 0xc4b4},
};

Test(lab_round, hard_cases_bf16) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const hard_case *c = &cases[i];
    uint16_t h = lab_f32_to_bf16(f32(c->x));
    cr_expect_eq(h, c->bf16, "%s (0x%08x): bf16 0x%04x, want 0x%04x", c->what, c->x, h, c->bf16);
    /* lab_round is the same value, as a float, with its sign. */
    cr_expect_eq(bits(lab_round(f32(c->x), LAB_BF16)), (uint32_t)c->bf16 << 16, "%s", c->what);
  }
}

Test(lab_round, hard_cases_fp16) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const hard_case *c = &cases[i];
    uint16_t h = lab_f32_to_fp16(f32(c->x));
    cr_expect_eq(h, c->fp16, "%s (0x%08x): fp16 0x%04x, want 0x%04x", c->what, c->x, h, c->fp16);
    cr_expect_eq(bits(lab_round(f32(c->x), LAB_FP16)), bits(lab_fp16_to_f32(c->fp16)), "%s",
                 c->what);
  }
}

Test(lab_round, nan_stays_a_quiet_nan_with_its_sign) {
  /* Quiet, signaling (lowest payload bit only: truncation would give inf),
   * a payload only in the low half, and the largest payload. */
  static const uint32_t pos[] = {0x7fc00000, 0x7f800001, 0x7f808000, 0x7fa00000, 0x7fffffff};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
    uint32_t n = pos[i], m = pos[i] | 0x80000000;
    cr_expect_eq(lab_f32_to_bf16(f32(n)), 0x7fc0, "0x%08x", n);
    cr_expect_eq(lab_f32_to_bf16(f32(m)), 0xffc0, "0x%08x", m);
    cr_expect_eq(lab_f32_to_fp16(f32(n)), 0x7e00, "0x%08x", n);
    cr_expect_eq(lab_f32_to_fp16(f32(m)), 0xfe00, "0x%08x", m);
    cr_expect(isnan(lab_round(f32(n), LAB_BF16)) && isnan(lab_round(f32(m), LAB_FP16)), "0x%08x",
              n);
    cr_expect(signbit(lab_round(f32(m), LAB_BF16)) && signbit(lab_round(f32(m), LAB_FP16)));
    cr_expect(!signbit(lab_round(f32(n), LAB_BF16)) && !signbit(lab_round(f32(n), LAB_FP16)));
  }
  /* And back: every 16-bit NaN is a float NaN with its sign. */
  cr_expect(isnan(lab_bf16_to_f32(0x7f81)) && isnan(lab_bf16_to_f32(0xffc0)));
  cr_expect(signbit(lab_bf16_to_f32(0xffc0)));
  cr_expect(isnan(lab_fp16_to_f32(0x7c01)) && isnan(lab_fp16_to_f32(0x7e00)));
  cr_expect(isnan(lab_fp16_to_f32(0xfc01)) && signbit(lab_fp16_to_f32(0xfc01)));
}

/* The paper's example: an fp32 sum that bf16 rounds far from itself. */
Test(lab_round, paper_example_bf16) {
  float a = -2.4071154594421387f, b = -2.296875f;
  float sum = a + b; /* fp32 arithmetic: the assignment rounds to float */
  cr_assert_eq((double)sum, -4.703990459442139);
  uint16_t h = lab_f32_to_bf16(sum);
  cr_assert_eq(h, 0xC097, "bf16 0x%04x", h);
  cr_assert_eq(lab_bf16_to_f32(h), -4.71875f);
  cr_assert_eq(lab_round(sum, LAB_BF16), -4.71875f);
  double err = (double)lab_bf16_to_f32(h) - (double)sum;
  cr_assert_eq(err, -0.014759540557861328, "error %.17g", err);
}

/* Exact values of the 16-bit formats, from the definition. A code one past
 * the largest finite (0x7c00, 0x7f80) reads as the next power of two: IEEE
 * rounds overflow as if the exponent range were unbounded. */
static double fp16_value(unsigned c) {
  unsigned e = c >> 10, m = c & 0x3ff;
  return e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
}

static double bf16_value(unsigned c) {
  unsigned e = c >> 7, m = c & 0x7f;
  return e ? ldexp(128 + m, (int)e - 134) : ldexp(m, -133);
}

Test(lab_round, every_fp16_pattern_round_trips) {
  int bad = 0;
  for (unsigned h = 0; h < 65536; h++) {
    unsigned mag = h & 0x7fff;
    if (mag > 0x7c00) continue; /* NaN */
    float x = lab_fp16_to_f32((uint16_t)h);
    double want = mag == 0x7c00 ? INFINITY : fp16_value(mag);
    if ((double)fabsf(x) != want || !signbit(x) != !(h & 0x8000) || lab_f32_to_fp16(x) != h)
      if (bad++ < 5) cr_expect(0, "fp16 0x%04x -> %a -> 0x%04x", h, (double)x, lab_f32_to_fp16(x));
  }
  cr_expect_eq(bad, 0, "%d patterns", bad);
}

Test(lab_round, every_bf16_pattern_round_trips) {
  int bad = 0;
  for (unsigned h = 0; h < 65536; h++) {
    unsigned mag = h & 0x7fff;
    if (mag > 0x7f80) continue; /* NaN */
    float x = lab_bf16_to_f32((uint16_t)h);
    double want = mag == 0x7f80 ? INFINITY : bf16_value(mag);
    if ((double)fabsf(x) != want || !signbit(x) != !(h & 0x8000) || lab_f32_to_bf16(x) != h)
      if (bad++ < 5) cr_expect(0, "bf16 0x%04x -> %a -> 0x%04x", h, (double)x, lab_f32_to_bf16(x));
  }
  cr_expect_eq(bad, 0, "%d patterns", bad);
}

/* h is x rounded to nearest, ties to even: |x| lies between the midpoints
 * with the codes either side of h's magnitude, and equals one of them only
 * if h is even. */
static int is_rne(float x, unsigned h, unsigned top, double (*value)(unsigned)) {
  unsigned mag = h & 0x7fff;
  double a = fabs((double)x);
  if (!(h & 0x8000) != !signbit(x) || mag > top) return 0;
  if (mag > 0) {
    double lo = (value(mag - 1) + value(mag)) / 2; /* exact: few significant bits */
    if (a < lo || (a == lo && (mag & 1))) return 0;
  }
  if (mag < top) {
    double hi = (value(mag) + value(mag + 1)) / 2;
    if (a > hi || (a == hi && (mag & 1))) return 0;
  }
  return 1;
}

/* Float patterns spread over every exponent, each also with the low bits
 * that the conversion drops set to 0, 1, half - 1, half, half + 1, all ones,
 * so ties and near-ties come up in every binade. drop(e) is how many low
 * mantissa bits (of the 24 with the implicit one) the conversion drops. */
static void sweep(uint16_t (*conv)(float), int (*drop)(int e), unsigned top,
                  double (*value)(unsigned), const char *name) {
  long long bad = 0, n = 0;
  for (uint64_t u0 = 0; u0 < 0x100000000ull; u0 += 16381) { /* ~500 per binade and sign */
    uint32_t u = (uint32_t)u0;
    if ((u & 0x7fffffff) >= 0x7f800000) continue;
    int sh = drop((int)((u >> 23) & 0xff));
    sh = sh > 24 ? 24 : sh; /* every mantissa bit goes (fp16, |x| < 2^-24) */
    uint32_t mask = sh == 24 ? 0x7fffff : (1u << sh) - 1, half = 1u << (sh - 1);
    const uint32_t low[] = {u & mask, 0, 1, half - 1, half, half + 1, mask};
    for (int i = 0; i < 7; i++) {
      float x = f32((u & ~mask) | (low[i] & mask));
      uint16_t h = conv(x);
      n++;
      if (!is_rne(x, h, top, value) && bad++ < 5)
        cr_expect(0, "%s(%a) = 0x%04x", name, (double)x, h);
    }
  }
  cr_expect_eq(bad, 0, "%s: %lld of %lld not nearest-even", name, bad, n);
}

static int drop_bf16(int e) {
  (void)e; /* bf16 keeps float32's exponent: always the low half */
  return 16;
}
static int drop_fp16(int e) { return e >= 113 ? 13 : 126 - e; }

Test(lab_round, sweep_is_nearest_even_bf16) {
  sweep(lab_f32_to_bf16, drop_bf16, 0x7f80, bf16_value, "bf16");
}

Test(lab_round, sweep_is_nearest_even_fp16) {
  sweep(lab_f32_to_fp16, drop_fp16, 0x7c00, fp16_value, "fp16");
}

/* Stochastic rounding only near the midpoint (`--out-round srh`): 1 + 2^-9 is a
 * quarter of the gap above 1, outside a 1/8 window, so nearest whatever u; 1 + 3 *
 * 2^-10 is 3/8 of the way, on the window's edge, so drawn like stochastic rounding. */
Test(lab_round, stochastic_near_half_only_inside_its_window) {
  const float up = 1.f + 0x1p-7f;
  cr_expect_eq(lab_round_stochastic_near_half(1.f + 0x1p-9f, LAB_BF16, 0.0, 0.125), 1.f);
  cr_expect_eq(lab_round_stochastic_near_half(1.f + 0x1p-9f, LAB_BF16, 0.0, 0.5), up, "the whole gap: stochastic");
  cr_expect_eq(lab_round_stochastic_near_half(1.f + 3 * 0x1p-10f, LAB_BF16, 0.37, 0.125), up);
  cr_expect_eq(lab_round_stochastic_near_half(1.f + 3 * 0x1p-10f, LAB_BF16, 0.38, 0.125), 1.f);
}

/* Stochastic rounding (issue 22's lab construction): the two neighbours, with
 * the probability of the farther one equal to the distance to the nearer. */
Test(lab_round, stochastic_picks_a_neighbour_by_distance) {
  const float up = 1.f + 0x1p-7f; /* bf16 neighbours of 1 + 2^-9: 1 and 1 + 2^-7 */
  cr_expect_eq(lab_round_stochastic(1.f + 0x1p-9f, LAB_BF16, 0.24), up);
  cr_expect_eq(lab_round_stochastic(1.f + 0x1p-9f, LAB_BF16, 0.26), 1.f);
  cr_expect_eq(lab_round_stochastic(-(1.f + 0x1p-9f), LAB_BF16, 0.24), -up, "negative: magnitude up");
  /* 1 - 2^-10 sits below 1: neighbours 1 - 2^-8 (bf16 ulp below 1) and 1, 3/4 of the way up */
  cr_expect_eq(lab_round_stochastic(1.f - 0x1p-10f, LAB_BF16, 0.20), 1.f - 0x1p-8f);
  cr_expect_eq(lab_round_stochastic(1.f - 0x1p-10f, LAB_BF16, 0.30), 1.f);
  cr_expect_eq(lab_round_stochastic(0x1p-26f, LAB_FP16, 0.2), 0x1p-24f, "fp16: up to the smallest subnormal");
  cr_expect_eq(lab_round_stochastic(0x1p-26f, LAB_FP16, 0.6), 0.f);
  cr_expect_eq(lab_round_stochastic(-0x1p-26f, LAB_FP16, 0.1), -0x1p-24f);
  cr_expect_eq(lab_round_stochastic(0.75f, LAB_BF16, 0.999), 0.75f, "a dtype value stays");
  cr_expect(isinf(lab_round_stochastic(INFINITY, LAB_FP16, 0.5)));
  cr_expect(isnan(lab_round_stochastic(NAN, LAB_BF16, 0.5)));
  /* Unbiased: the mean over many draws is x (3 standard errors at 40000 draws). */
  const float x = 3.f + 0.3f * 0x1p-6f; /* 3 + 0.3 ulp */
  double sum = 0;
  for (int i = 0; i < 40000; i++) sum += lab_round_stochastic(x, LAB_BF16, lab_hash_uniform(7, (uint64_t)i));
  cr_expect_float_eq(sum / 40000, x, 3 * 0x1p-6 * sqrt(0.21 / 40000), "mean %.9g, x %.9g", sum / 40000, (double)x);
}

Test(lab_round, hash_uniform_is_fixed_per_seed_and_index) {
  cr_expect_eq(lab_hash_uniform(1, 5), lab_hash_uniform(1, 5));
  cr_expect_neq(lab_hash_uniform(1, 5), lab_hash_uniform(1, 6));
  cr_expect_neq(lab_hash_uniform(1, 5), lab_hash_uniform(2, 5));
  for (uint64_t i = 0; i < 1000; i++) {
    const double u = lab_hash_uniform(3, i);
    cr_assert(u >= 0 && u < 1, "%g", u);
  }
}
