{# Device helpers shared by the forward and backward templates: raw PTX for the  #}
{# tensor cores (mma.sync m16n8k16), ldmatrix, cp.async and 16-bit conversions. #}
{# No #include: NVRTC needs nothing but this source.                           #}
{% local mma_type = (dtype == "bf16") and "bf16" or "f16" %}
// ---- device helpers (templates/common.cuh.tpl) ----------------------------
typedef unsigned short elem_t; // one {{ dtype }} value, handled as raw bits

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
    if (kSkipChecks && row0 + kRows <= rows) {
#pragma unroll
      for (int i = 0; i < kRows / kRowsPerPass; ++i, g += step)
        cp_async16(dst + ((r + i * kRowsPerPass) * kStride + ch * 8) * 2, g);
      return;
    }
#pragma unroll
    for (int i = 0; i < kRows / kRowsPerPass; ++i, g += step) {
      const bool valid = row0 + r + i * kRowsPerPass < rows;
      cp_async16(dst + ((r + i * kRowsPerPass) * kStride + ch * 8) * 2, valid ? g : src, valid);
    }
  } else {
    constexpr int kTotal = kRows * kChunks;
#pragma unroll
    for (int i = 0; i < (kTotal + kThreads - 1) / kThreads; ++i) {
      const int c = tid + i * kThreads;
      if (kTotal % kThreads == 0 || c < kTotal) {
        const int r = c / kChunks, ch = c % kChunks;
        const bool valid = row0 + r < rows;
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

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}
