{# The forward's softmax, part 1: score helpers of every mode, one definition for  #}
{# both forward templates (fwd.cu.tpl, fwd_ws.cu.tpl). Needs kNTiles; paper: kEps. #}
{% if softmax == "paper" %}
// 1 when x < y, else 0, from the sign of x - y: an FADD and a shift-add
// (LEA.HI) per score for the tie count. x - y is -0 only for x = -0, y = +0
// (equal, yet counted below): a tie missed only when thr is exactly +0.
__device__ __forceinline__ unsigned below(float x, float y) { return __float_as_uint(x - y) >> 31; }
{% end %}
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }

// Max of one thread's scores in row half h of an m16 tile, as a tree: a
// serial chain of kNTiles*2 dependent max operations stalls the warp.
__device__ __forceinline__ float row_max_of(const float (&s)[kNTiles][4], int h) {
  float m[kNTiles];
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt) m[nt] = fmaxf(s[nt][2 * h], s[nt][2 * h + 1]);
#pragma unroll
  for (int w = 1; w < kNTiles; w *= 2)
#pragma unroll
    for (int nt = 0; nt + w < kNTiles; nt += 2 * w) m[nt] = fmaxf(m[nt], m[nt + w]);
  return m[0];
}
