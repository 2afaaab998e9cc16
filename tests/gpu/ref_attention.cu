// Reference attention kernels for the GPU tests (compiled with NVRTC at test
// time, no #include). One warp per query row, lanes split head_dim, so even
// seqlen 4097 x 12 heads takes milliseconds in float64.
//
//   ref_f64:   float64 softmax(alpha Q K^T) V from the same 16-bit inputs,
//              plus LSE (natural log); rows that see no key: O = 0, LSE = +inf.
//   ref_plain: FlashAttention's test baseline ("plain same-precision
//              attention"): q' = dtype(q * alpha), S = dtype(q'.k) (fp32
//              accumulation), P = dtype(softmax_fp32(S)), O = dtype(P V) (fp32
//              accumulation). Its max error against ref_f64 sets the bar.
//   fill_uniform: deterministic pseudo-random 16-bit values in [lo, hi).
// DTYPE_BF16 selects bf16 (1) or fp16 (0); HEAD_DIM is a multiple of 32.

typedef unsigned short elem_t;

struct ref_params {
  const elem_t *q, *k, *v;
  double *o64;        // (batch, seqlen_q, heads_q, head_dim) contiguous
  double *lse64;      // (batch, heads_q, seqlen_q)
  elem_t *o_plain;    // (batch, seqlen_q, heads_q, head_dim) contiguous
  long long q_batch_stride, q_row_stride, q_head_stride;
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  float scale;
};

__device__ float to_f32(elem_t x) {
#if DTYPE_BF16
  return __uint_as_float((unsigned)x << 16);
#else
  float f;
  asm("{ .reg .f16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(x));
  return f;
#endif
}

__device__ elem_t from_f32(float f) {
  unsigned short r;
#if DTYPE_BF16
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
#else
  asm("{ .reg .f16 h; cvt.rn.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r) : "f"(f));
#endif
  return r;
}

template <typename T> __device__ T warp_sum(T x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

constexpr int kPerLane = HEAD_DIM / 32;

struct row_ptrs {
  const elem_t *q, *k, *v;
  int row, first_hidden_key; // keys >= first_hidden_key are masked
  long long out;             // element offset of this row in the contiguous outputs
  long long lse;
};

__device__ bool locate_row(const ref_params &p, row_ptrs &r) {
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (w >= (long long)p.batch * p.heads_q * p.seqlen_q) return false;
  const int i = w % p.seqlen_q, h = (w / p.seqlen_q) % p.heads_q, b = w / ((long long)p.seqlen_q * p.heads_q);
  const int hk = h / (p.heads_q / p.heads_kv);
  r.q = p.q + b * p.q_batch_stride + i * p.q_row_stride + h * p.q_head_stride;
  r.k = p.k + b * p.k_batch_stride + hk * p.k_head_stride;
  r.v = p.v + b * p.v_batch_stride + hk * p.v_head_stride;
  r.row = i;
  const int limit = p.causal ? i + p.seqlen_k - p.seqlen_q + 1 : p.seqlen_k;
  r.first_hidden_key = limit < 0 ? 0 : (limit > p.seqlen_k ? p.seqlen_k : limit);
  r.out = (((long long)b * p.seqlen_q + i) * p.heads_q + h) * HEAD_DIM;
  r.lse = ((long long)b * p.heads_q + h) * p.seqlen_q + i;
  return true;
}

extern "C" __global__ void ref_f64(ref_params p) {
  row_ptrs r;
  if (!locate_row(p, r)) return;
  const int lane = threadIdx.x % 32;
  double q[kPerLane], o[kPerLane];
  for (int e = 0; e < kPerLane; ++e) {
    q[e] = to_f32(r.q[lane + 32 * e]);
    o[e] = 0.0;
  }
  double m = -1.0 / 0.0, l = 0.0;
  for (int j = 0; j < r.first_hidden_key; ++j) { // online softmax, exact enough in fp64
    double s = 0.0;
    for (int e = 0; e < kPerLane; ++e) s += q[e] * (double)to_f32(r.k[j * p.k_row_stride + lane + 32 * e]);
    s = warp_sum(s) * (double)p.scale;
    const double m_new = s > m ? s : m;
    const double corr = exp(m - m_new), w = exp(s - m_new);
    l = l * corr + w;
    for (int e = 0; e < kPerLane; ++e)
      o[e] = o[e] * corr + w * (double)to_f32(r.v[j * p.v_row_stride + lane + 32 * e]);
    m = m_new;
  }
  for (int e = 0; e < kPerLane; ++e) p.o64[r.out + lane + 32 * e] = l > 0.0 ? o[e] / l : 0.0;
  if (lane == 0) p.lse64[r.lse] = l > 0.0 ? m + log(l) : 1.0 / 0.0;
}

extern "C" __global__ void ref_plain(ref_params p) {
  row_ptrs r;
  if (!locate_row(p, r)) return;
  const int lane = threadIdx.x % 32;
  float q[kPerLane];
  for (int e = 0; e < kPerLane; ++e) q[e] = to_f32(from_f32(to_f32(r.q[lane + 32 * e]) * p.scale));
  // Pass 1: max and sum of exp over the dtype-rounded scores.
  float m = -1.f / 0.f, l = 0.f;
  for (int j = 0; j < r.first_hidden_key; ++j) {
    float s = 0.f;
    for (int e = 0; e < kPerLane; ++e) s += q[e] * to_f32(r.k[j * p.k_row_stride + lane + 32 * e]);
    s = to_f32(from_f32(warp_sum(s)));
    if (s > m) {
      l = l * expf(m - s);
      m = s;
    }
    l += expf(s - m);
  }
  // Pass 2: P = dtype(exp(S - m) / l), O = dtype(sum P V) with fp32 accumulation.
  float o[kPerLane];
  for (int e = 0; e < kPerLane; ++e) o[e] = 0.f;
  for (int j = 0; j < r.first_hidden_key; ++j) {
    float s = 0.f;
    for (int e = 0; e < kPerLane; ++e) s += q[e] * to_f32(r.k[j * p.k_row_stride + lane + 32 * e]);
    s = to_f32(from_f32(warp_sum(s)));
    const float pj = to_f32(from_f32(expf(s - m) / l));
    for (int e = 0; e < kPerLane; ++e) o[e] += pj * to_f32(r.v[j * p.v_row_stride + lane + 32 * e]);
  }
  for (int e = 0; e < kPerLane; ++e) p.o_plain[r.out + lane + 32 * e] = from_f32(o[e]);
}

// Values are mixed-sign, in [lo, hi), a hash of (seed, index): reproducible
// and different for every buffer and seed.
extern "C" __global__ void fill_uniform(elem_t *x, long long n, unsigned seed, float lo, float hi) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 0x9E3779B1u ^ seed * 0x85EBCA77u ^ (unsigned)(i >> 32) * 0xC2B2AE3Du;
    h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
    x[i] = from_f32(lo + (hi - lo) * (h >> 8) * (1.f / 16777216.f));
  }
}
