{# Device helpers shared by the kernels: no headers, so bf16/fp16 are unsigned short #}
{# and conversions are PTX cvt (NVRTC has no cuda_bf16.h built in). #}
// ---- common helpers ----
#define FA2_NEG_INF __int_as_float((int)0xff800000)
#define FA2_POS_INF __int_as_float(0x7f800000)

__device__ __forceinline__ float fa2_bf16_to_f32(unsigned short x) {
  return __uint_as_float(((unsigned)x) << 16);
}
__device__ __forceinline__ unsigned short fa2_f32_to_bf16(float x) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float fa2_fp16_to_f32(unsigned short x) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(x));
  return r;
}
__device__ __forceinline__ unsigned short fa2_f32_to_fp16(float x) {
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}
// 2^x with the hardware approximation (ARCHITECTURE.md: ex2.approx).
__device__ __forceinline__ float fa2_exp2(float x) {
  float r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float fa2_warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
// ---- end common helpers ----
