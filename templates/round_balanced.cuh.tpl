{% if out_round == "balanced" %}
// ---- balanced rounding of O (mode "balanced"; issue 22) ----------------------
// Each row of O leaves in {{ dtype }} with rounding errors that sum to zero in
// expectation, at rounding to nearest's error: rounding to nearest alone is
// biased wherever a row's outputs sit near midpoints that its small terms push
// one way (two tied maximal keys). The row is rounded to nearest; then the
// elements whose error has the sign of the row's error sum cross to their other
// neighbour, nearest their midpoint first (t = |error| / gap largest), while
// their gaps fit in |sum|. Elements at the margin, whose gaps no longer all fit,
// cross with probability (what is left of |sum|) / (their gaps), by systematic
// sampling on the row's one random draw. kBalanceScans bisection steps on t find
// the margin: each a sum of gaps over the quad that holds the row (two come within
// 0.5 % of an exact greedy's mean error, lab/README.md). An element of the row's
// largest gap crosses only from t >= kBalanceCapT, so no error passes 0.55 of that
// gap. Errors under kBalanceMinT of a gap count as none: an output the fp32 sums
// left within 2^-10 of the grid (one key, P = 1, l one ulp off 1) stays exact.
// CPU reference: lab/lab_round.c, lab_round_row_bisect (the same steps in the same
// order, bit for bit).
// Layout: thread qd of the quad holds columns 8 dt + 2 qd + e as x[2 dt + e].
constexpr int kBalanceScans = 2;
constexpr float kBalanceCapT = 0.45f, kBalanceMinT = 0x1p-10f;

// {{ dtype }} bits (the low 16) as fp32.
__device__ __forceinline__ float elem_bits_f32(unsigned h) {
{% if dtype == "bf16" %}
  return __uint_as_float(h << 16);
{% else %}
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
  return f;
{% end %}
}

// 1 / g for g a power of two (a gap): exact, one integer subtraction.
__device__ __forceinline__ float inv_pow2(float g) { return __uint_as_float(0x7f000000u - __float_as_uint(g)); }

__device__ __forceinline__ void round_row_balanced(const float (&x)[2 * kDTiles], unsigned (&o)[kDTiles],
                                                   unsigned draw) {
  constexpr int kVals = 2 * kDTiles;
  unsigned other[kDTiles]; // each element's other neighbour (one step toward x), packed like o
  float gap[kVals], key[kVals];
  float sum = 0.f, gmax = 0.f;
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt) {
    o[dt] = pack2(x[2 * dt], x[2 * dt + 1]);
    other[dt] = 0u;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int k = 2 * dt + e;
      const unsigned r = (o[dt] >> (16 * e)) & 0xffffu;
      const float rf = elem_bits_f32(r), err = rf - x[k];
      const unsigned ob = (r + (fabsf(rf) < fabsf(x[k]) ? 1u : 0xffffu)) & 0xffffu; // magnitude up or down
      other[dt] |= ob << (16 * e);
      gap[k] = fabsf(elem_bits_f32(ob) - rf); // (NaN where x is exact at 0: never a candidate)
      const float t = fabsf(err) * inv_pow2(gap[k]);
      const bool dead = t < kBalanceMinT;     // (a NaN error is not: the row stays nearest)
      key[k] = dead ? 0.f : copysignf(t, err); // t with the error's sign, till the sum is known
      sum += dead ? 0.f : err;
      gmax = fmaxf(gmax, gap[k]);
    }
  }
  const float total = quad_sum(sum), big = quad_max(gmax);
  const float left = fabsf(total) < pos_inf() ? fabsf(total) : 0.f; // 0: a NaN or Inf in the row
  float all = 0.f;
#pragma unroll
  for (int k = 0; k < kVals; ++k) { // candidates: crossing shrinks |sum|, within the cap
    const float kk = key[k], t = fabsf(kk);
    const bool cand = kk != 0.f && (kk < 0.f) == (total < 0.f) && (gap[k] < big || t >= kBalanceCapT);
    key[k] = cand ? t : -1.f;
    all += cand ? gap[k] : 0.f;
  }
  // Cross every key >= hi; the margin is lo <= key < hi. g_lo, g_hi: the gaps of the keys
  // >= lo, >= hi, with g_hi <= left < g_lo unless every candidate fits.
  float lo = 0.f, hi = 0.50000006f, g_lo = quad_sum(all), g_hi = 0.f;
  if (g_lo <= left) hi = lo, g_hi = g_lo;
#pragma unroll
  for (int s = 0; s < kBalanceScans; ++s) {
    const float tau = 0.5f * (lo + hi);
    float g = 0.f;
#pragma unroll
    for (int k = 0; k < kVals; ++k) g += key[k] >= tau ? gap[k] : 0.f;
    g = quad_sum(g);
    if (g > left) lo = tau, g_lo = g;
    else hi = tau, g_hi = g;
  }
  // Systematic sampling over the margin in the quad's order (thread 0's elements
  // first): element j crosses when draw + j step carries past 2^32, so each does with
  // probability step / 2^32 = (left - g_hi) / (g_lo - g_hi).
  const float g_b = g_lo - g_hi;
  const float share = g_b > 0.f ? (left - g_hi) / g_b : 0.f;
  const unsigned step = (unsigned)fminf(share * 4294967296.f, 4294967040.f);
  int n_b = 0;
#pragma unroll
  for (int k = 0; k < kVals; ++k) n_b += key[k] >= lo && key[k] < hi;
  const int qd = threadIdx.x % 4;
  const int n1 = __shfl_xor_sync(0xffffffffu, n_b, 1), n2 = __shfl_xor_sync(0xffffffffu, n_b + n1, 2);
  unsigned acc = draw + step * (unsigned)((qd & 1 ? n1 : 0) + (qd & 2 ? n2 : 0));
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt) {
    unsigned cross = 0u;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float kk = key[2 * dt + e];
      const bool in_b = kk >= lo && kk < hi;
      cross |= kk >= hi || (in_b && acc > ~step) ? 0xffffu << (16 * e) : 0u;
      acc += in_b ? step : 0u;
    }
    o[dt] = (o[dt] & ~cross) | (other[dt] & cross);
  }
}

// The row's draw: Philox of (row, 2^32 - 1) in attention matrix bh's counter space,
// a word dropout never uses (fa2_philox.h, fa2_round_draw).
template <typename Params>
__device__ __forceinline__ unsigned round_draw(const Params &p, long long bh, int row) {
  unsigned long long seed, base;
  dropout_key(p, bh, seed, base);
  return fa2_round_draw(seed, base, 0, (unsigned)row);
}
{% end %}
