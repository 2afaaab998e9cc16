{# Device helpers shared by the forward and backward templates: raw PTX for the  #}
{# tensor cores (mma.sync m16n8k16), ldmatrix, cp.async and 16-bit conversions. #}
{# No #include: NVRTC needs nothing but this source.                           #}
{% local mma_type = (dtype == "bf16") and "bf16" or "f16" %}
// ---- device helpers (templates/common.cuh.tpl) ----------------------------
typedef unsigned short elem_t; // one {{ dtype }} value, handled as raw bits
{% if padded %}
// The tensors' head dim: tiles have {{ head_dim }} columns, loads zero those past
// {{ tensor_dim }} (so they add nothing to a product) and stores leave them out.
constexpr int kTensorDim = {{ tensor_dim }};
{% end %}

// Shared-memory address as the 32-bit value PTX's .shared instructions take.
__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// 16-byte global -> shared copy that bypasses L1; when !valid it writes zeros
// (src-size 0), which masks rows past the end of a sequence.
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Rows [row0, row0 + kRows) of one head (kChunks 16-byte chunks per row) into
// a smem tile with rows of kStride elements; rows at or
// past `rows` are zero-filled (their address is clamped to row 0). When the
// threads cover whole rows, each walks one pointer down the tile: one 64-bit
// address per thread instead of one per 16-byte chunk kept in registers.
// kSkipChecks: a tile with every row inside skips the checks (a compare and
// two selects per chunk: 36 of the ~550 instructions a warp issues per key
// tile of the d = 64 forward; the backward, at 255 registers, spills with the
// second loop).
template <int kRows, int kThreads, int kChunks, int kStride, bool kSkipChecks = false>
__device__ __forceinline__ void load_rows(unsigned dst, const elem_t *src, long long row_stride,
                                          int row0, int rows, int tid) {
  if constexpr (kThreads % kChunks == 0 && kRows % (kThreads / kChunks) == 0) {
    constexpr int kRowsPerPass = kThreads / kChunks;
    const int r = tid / kChunks, ch = tid % kChunks;
    const elem_t *g = src + (row0 + r) * row_stride + ch * 8;
    const long long step = kRowsPerPass * row_stride;
{% if padded %}
    const bool in_cols = ch * 8 < kTensorDim;
{% end %}
    if (kSkipChecks && row0 + kRows <= rows) {
#pragma unroll
      for (int i = 0; i < kRows / kRowsPerPass; ++i, g += step)
        cp_async16(dst + ((r + i * kRowsPerPass) * kStride + ch * 8) * 2, {{ padded and "in_cols ? g : src, in_cols" or "g" }});
      return;
    }
#pragma unroll
    for (int i = 0; i < kRows / kRowsPerPass; ++i, g += step) {
      const bool valid = {{ padded and "in_cols && " or "" }}row0 + r + i * kRowsPerPass < rows;
      cp_async16(dst + ((r + i * kRowsPerPass) * kStride + ch * 8) * 2, valid ? g : src, valid);
    }
  } else {
    constexpr int kTotal = kRows * kChunks;
#pragma unroll
    for (int i = 0; i < (kTotal + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (kTotal % kThreads == 0 || c < kTotal) {
        const int r = c / kChunks, ch = c % kChunks;
        const bool valid = {{ padded and "ch * 8 < kTensorDim && " or "" }}row0 + r < rows;
        const elem_t *g = src + (valid ? row0 + r : 0) * row_stride + ch * 8;
        cp_async16(dst + (r * kStride + ch * 8) * 2, g, valid);
      }
    }
  }
}

// Four 8x8 16-bit matrices; lane i gives the row address of matrix i/8, row i%8.
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1,
                                            unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %0,%1,%2,%3 }, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned addr, unsigned &r0, unsigned &r1,
                                                  unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %0,%1,%2,%3 }, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// D = A B + D, A 16x16 (row), B 16x8 (col), fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                          unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.{{ mma_type }}.{{ mma_type }}.f32 "
               "{ %0,%1,%2,%3 }, { %4,%5,%6,%7 }, { %8,%9 }, { %0,%1,%2,%3 };\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two fp32 -> two {{ dtype }} (round to nearest even), lo in the low half.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.{{ mma_type }}x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// 2^x on the special-function unit; exp2(-inf) = 0.
__device__ __forceinline__ float exp2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}
{% if softcap %}

// tanh on the special-function unit (max relative error about 2^-11), as a
// softcap needs one per score.
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
{% end %}

{% if dropout or out_round == "balanced" %}
{% include "fa2_philox.h" %}

// The forward's random numbers' Philox seed and counter base for attention matrix bh
// (fa2_philox.h; dropout's mask, balanced rounding's draws): from dropout_rng on the
// device when given (PyTorch's generator), else the values.
template <typename Params>
__device__ __forceinline__ void dropout_key(const Params &p, long long bh, unsigned long long &seed,
                                            unsigned long long &base) {
  seed = p.dropout_rng ? p.dropout_rng[0] : p.dropout_seed;
  base = (p.dropout_rng ? p.dropout_rng[1] : p.dropout_offset) + (unsigned long long)bh;
}
{% end %}
{% if dropout %}

template <bool kFirst, typename A, typename B> struct select_t { using type = A; };
template <typename A, typename B> struct select_t<false, A, B> { using type = B; };

// The keep bits of the 8 scores a thread holds of block (q16, k16) in the S
// layout (rows: queries g, g + 8; columns: keys 2 qd + x, + 8), one unit:
// bit 2 w + x, word w = 2 (query half) + key half.
__device__ __forceinline__ unsigned dropout_bits_s(unsigned long long seed, unsigned long long base,
                                                   int q16, int k16, int lane, unsigned limit) {
  const fa2_philox4 r = fa2_dropout_unit(seed, 0, base, (unsigned)q16, (unsigned)k16, (unsigned)lane);
  unsigned bits = 0;
#pragma unroll
  for (int w = 0; w < 4; ++w)
    bits |= (fa2_kept_lo(r.x[w], limit) ? 1u << (2 * w) : 0u) | (fa2_kept_hi(r.x[w], limit) ? 2u << (2 * w) : 0u);
  return bits;
}

// The keep bits of the 8 scores a thread holds of block (q16, k16) in the
// backward's S^T layout (rows: keys g, g + 8; columns: queries 2 qd + e, + 8):
// bit 4 e + 2 (query half) + key half. Such a lane holds half of two forward
// units (those of queries 2 qd and 2 qd + 1), lane ^ 4 (keys g ^ 1) the other
// halves: each lane draws the unit of its queries 2 qd + (g & 1), keeps the
// bits of its keys and hands the rest to lane ^ 4 (one shuffle per unit).
__device__ __forceinline__ unsigned dropout_bits_st(unsigned long long seed, unsigned long long base,
                                                    int q16, int k16, int g, int qd, unsigned limit) {
  const int odd = g & 1;
  const fa2_philox4 r = fa2_dropout_unit(seed, 0, base, (unsigned)q16, (unsigned)k16,
                                         (unsigned)((2 * qd + odd) * 4 + (g >> 1)));
  unsigned own = 0, other = 0;
#pragma unroll
  for (int w = 0; w < 4; ++w) { // word 2 (query half) + key half; its halves: even, odd keys
    const bool lo = fa2_kept_lo(r.x[w], limit), hi = fa2_kept_hi(r.x[w], limit);
    own |= (odd ? hi : lo) ? 1u << w : 0u;
    other |= (odd ? lo : hi) ? 1u << w : 0u;
  }
  const unsigned got = __shfl_xor_sync(0xffffffffu, other, 4);
  return odd ? got | own << 4 : own | got << 4;
}

// The keep bits of kUnits units (at most 16), 8 each: unit u is bits 8 u ... The
// kernels fill them in a rolled loop before they need them, so that the Philox
// calls run one after the other: unrolled, the compiler interleaves them for
// their latency and the forward (mma.sync) and the backward run out of registers.
// A 32-bit word holds up to 4 units, the 64-bit pair up to 16.
template <int kUnits> struct drop_bits {
  static_assert(kUnits <= 16, "at most 16 units of 8 keep bits");
  using word = typename select_t<kUnits <= 4, unsigned, unsigned long long>::type;
  word lo = 0, hi = 0;
  __device__ __forceinline__ void set(int u, unsigned bits) {
    constexpr int kPer = sizeof(word); // units per word
    const word b = (word)bits << (8 * (u % kPer));
    if (kUnits <= kPer || u < kPer) lo |= b; else hi |= b;
  }
  __device__ __forceinline__ bool has(int bit) const { // 1: the score of this bit is kept
    constexpr int kBits = 8 * sizeof(word);
    return ((bit < kBits ? lo : hi) >> (bit % kBits)) & 1;
  }
};

{% end %}
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}
