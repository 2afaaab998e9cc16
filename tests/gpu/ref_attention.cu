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
// DTYPE_BF16 selects bf16 (1) or fp16 (0); HEAD_DIM is a multiple of 16.

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

// Lanes split the head dim in passes of 32 columns; the last pass is partial
// when HEAD_DIM is not a multiple of 32 (16, 48, 80): its lanes past HEAD_DIM
// load zeros and store nothing.
constexpr int kPerLane = (HEAD_DIM + 31) / 32;
__device__ bool in_dim(int lane, int e) { return lane + 32 * e < HEAD_DIM; }
__device__ float ld(const elem_t *row, int lane, int e) {
  return in_dim(lane, e) ? to_f32(row[lane + 32 * e]) : 0.f;
}

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
    q[e] = ld(r.q, lane, e);
    o[e] = 0.0;
  }
  double m = -1.0 / 0.0, l = 0.0;
  for (int j = 0; j < r.first_hidden_key; ++j) { // online softmax, exact enough in fp64
    double s = 0.0;
    for (int e = 0; e < kPerLane; ++e) s += q[e] * (double)ld(r.k + j * p.k_row_stride, lane, e);
    s = warp_sum(s) * (double)p.scale;
    const double m_new = s > m ? s : m;
    const double corr = exp(m - m_new), w = exp(s - m_new);
    l = l * corr + w;
    for (int e = 0; e < kPerLane; ++e)
      o[e] = o[e] * corr + w * (double)ld(r.v + j * p.v_row_stride, lane, e);
    m = m_new;
  }
  for (int e = 0; e < kPerLane; ++e)
    if (in_dim(lane, e)) p.o64[r.out + lane + 32 * e] = l > 0.0 ? o[e] / l : 0.0;
  if (lane == 0) p.lse64[r.lse] = l > 0.0 ? m + log(l) : 1.0 / 0.0;
}

extern "C" __global__ void ref_plain(ref_params p) {
  row_ptrs r;
  if (!locate_row(p, r)) return;
  const int lane = threadIdx.x % 32;
  float q[kPerLane];
  for (int e = 0; e < kPerLane; ++e) q[e] = to_f32(from_f32(ld(r.q, lane, e) * p.scale));
  // Pass 1: max and sum of exp over the dtype-rounded scores.
  float m = -1.f / 0.f, l = 0.f;
  for (int j = 0; j < r.first_hidden_key; ++j) {
    float s = 0.f;
    for (int e = 0; e < kPerLane; ++e) s += q[e] * ld(r.k + j * p.k_row_stride, lane, e);
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
    for (int e = 0; e < kPerLane; ++e) s += q[e] * ld(r.k + j * p.k_row_stride, lane, e);
    s = to_f32(from_f32(warp_sum(s)));
    const float pj = to_f32(from_f32(expf(s - m) / l));
    for (int e = 0; e < kPerLane; ++e) o[e] += pj * ld(r.v + j * p.v_row_stride, lane, e);
  }
  for (int e = 0; e < kPerLane; ++e)
    if (in_dim(lane, e)) p.o_plain[r.out + lane + 32 * e] = from_f32(o[e]);
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

// ---- backward references -------------------------------------------------------
// Inputs: q, k, v and dout (strided like the forward's q, k, v; dout like q),
// the float64 forward (o64, lse64). Contiguous (batch, seqlen, heads, d) outputs.
//   ref_bwd_rows_f64 (one warp per query row): delta64 = rowsum(dO * O64), dq64.
//   ref_bwd_cols_f64 (one warp per key row): dk64, dv64, summed over the GQA group.
//   ref_bwd_rows_plain / _cols_plain: PyTorch autograd through the plain
//   same-precision attention (ref_plain): q' = dtype(q*scale), S = dtype(q'.k),
//   P = dtype(softmax(S)), dP = dtype(dO.v), dS = dtype(P (dP - sum_j P dP)),
//   dq = dtype(dtype(dS K) * scale), dk = dtype(dS^T q'), dv = dtype(P^T dO).
struct ref_bwd_params {
  const elem_t *q, *k, *v, *dout;
  const double *o64, *lse64;
  double *delta64, *dq64, *dk64, *dv64;
  float *row_m, *row_l, *row_pdp; // plain softmax statistics per query row
  elem_t *dq_plain, *dk_plain, *dv_plain;
  long long q_batch_stride, q_row_stride, q_head_stride;
  long long k_batch_stride, k_row_stride, k_head_stride;
  long long v_batch_stride, v_row_stride, v_head_stride;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  float scale;
};

__device__ bool bwd_row(const ref_bwd_params &p, long long w, int &b, int &h, int &i) {
  if (w >= (long long)p.batch * p.heads_q * p.seqlen_q) return false;
  i = w % p.seqlen_q, h = (w / p.seqlen_q) % p.heads_q, b = w / ((long long)p.seqlen_q * p.heads_q);
  return true;
}
__device__ int first_hidden(const ref_bwd_params &p, int i) {
  const int limit = p.causal ? i + p.seqlen_k - p.seqlen_q + 1 : p.seqlen_k;
  return limit < 0 ? 0 : (limit > p.seqlen_k ? p.seqlen_k : limit);
}
#define QROW(b, i, h) (p.q + (b) * p.q_batch_stride + (long long)(i) * p.q_row_stride + (h) * p.q_head_stride)
#define DOROW(b, i, h) (p.dout + (b) * p.q_batch_stride + (long long)(i) * p.q_row_stride + (h) * p.q_head_stride)
#define KROW(b, j, h) (p.k + (b) * p.k_batch_stride + (long long)(j) * p.k_row_stride + (h) * p.k_head_stride)
#define VROW(b, j, h) (p.v + (b) * p.v_batch_stride + (long long)(j) * p.v_row_stride + (h) * p.v_head_stride)
// Element offset of row i, head h in a contiguous (batch, seqlen, heads, d) tensor.
#define QFLAT(b, i, h) ((((long long)(b) * p.seqlen_q + (i)) * p.heads_q + (h)) * HEAD_DIM)
#define KFLAT(b, j, h) ((((long long)(b) * p.seqlen_k + (j)) * p.heads_kv + (h)) * HEAD_DIM)

extern "C" __global__ void ref_bwd_rows_f64(ref_bwd_params p) {
  int b, h, i;
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (!bwd_row(p, w, b, h, i)) return;
  const int lane = threadIdx.x % 32, hk = h / (p.heads_q / p.heads_kv);
  const elem_t *q = QROW(b, i, h), *dout = DOROW(b, i, h);
  const long long flat = QFLAT(b, i, h);
  const double lse = p.lse64[((long long)b * p.heads_q + h) * p.seqlen_q + i];
  double qd[kPerLane], dod[kPerLane], dq[kPerLane], delta = 0.0;
  for (int e = 0; e < kPerLane; ++e) {
    qd[e] = ld(q, lane, e);
    dod[e] = ld(dout, lane, e);
    delta += in_dim(lane, e) ? dod[e] * p.o64[flat + lane + 32 * e] : 0.0;
    dq[e] = 0.0;
  }
  delta = warp_sum(delta);
  const int n = first_hidden(p, i);
  for (int j = 0; j < n; ++j) {
    const elem_t *kj = KROW(b, j, hk), *vj = VROW(b, j, hk);
    double s = 0.0, dp = 0.0;
    for (int e = 0; e < kPerLane; ++e) {
      s += qd[e] * (double)ld(kj, lane, e);
      dp += dod[e] * (double)ld(vj, lane, e);
    }
    s = warp_sum(s) * (double)p.scale;
    dp = warp_sum(dp);
    const double ds = exp(s - lse) * (dp - delta);
    for (int e = 0; e < kPerLane; ++e) dq[e] += ds * (double)ld(kj, lane, e);
  }
  for (int e = 0; e < kPerLane; ++e)
    if (in_dim(lane, e)) p.dq64[flat + lane + 32 * e] = dq[e] * (double)p.scale;
  if (lane == 0) p.delta64[((long long)b * p.heads_q + h) * p.seqlen_q + i] = delta;
}

extern "C" __global__ void ref_bwd_cols_f64(ref_bwd_params p) {
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (w >= (long long)p.batch * p.heads_kv * p.seqlen_k) return;
  const int j = w % p.seqlen_k, hk = (w / p.seqlen_k) % p.heads_kv;
  const int b = w / ((long long)p.seqlen_k * p.heads_kv), lane = threadIdx.x % 32;
  const int group = p.heads_q / p.heads_kv;
  const elem_t *kj = KROW(b, j, hk), *vj = VROW(b, j, hk);
  double kd[kPerLane], vd[kPerLane], dk[kPerLane], dv[kPerLane];
  for (int e = 0; e < kPerLane; ++e) {
    kd[e] = ld(kj, lane, e);
    vd[e] = ld(vj, lane, e);
    dk[e] = dv[e] = 0.0;
  }
  const int i0 = p.causal ? j - (p.seqlen_k - p.seqlen_q) : 0; // first query that sees key j
  for (int h = hk * group; h < (hk + 1) * group; ++h)
    for (int i = i0 < 0 ? 0 : i0; i < p.seqlen_q; ++i) {
      const elem_t *q = QROW(b, i, h), *dout = DOROW(b, i, h);
      const long long r = ((long long)b * p.heads_q + h) * p.seqlen_q + i;
      double s = 0.0, dp = 0.0;
      for (int e = 0; e < kPerLane; ++e) {
        s += kd[e] * (double)ld(q, lane, e);
        dp += vd[e] * (double)ld(dout, lane, e);
      }
      s = warp_sum(s) * (double)p.scale;
      dp = warp_sum(dp);
      const double pr = exp(s - p.lse64[r]), ds = pr * (dp - p.delta64[r]);
      for (int e = 0; e < kPerLane; ++e) {
        dv[e] += pr * (double)ld(dout, lane, e);
        dk[e] += ds * (double)ld(q, lane, e);
      }
    }
  const long long flat = KFLAT(b, j, hk);
  for (int e = 0; e < kPerLane; ++e) {
    if (in_dim(lane, e)) p.dk64[flat + lane + 32 * e] = dk[e] * (double)p.scale;
    if (in_dim(lane, e)) p.dv64[flat + lane + 32 * e] = dv[e];
  }
}

__device__ float rnd(float x) { return to_f32(from_f32(x)); }

extern "C" __global__ void ref_bwd_rows_plain(ref_bwd_params p) {
  int b, h, i;
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (!bwd_row(p, w, b, h, i)) return;
  const int lane = threadIdx.x % 32, hk = h / (p.heads_q / p.heads_kv);
  const elem_t *q = QROW(b, i, h), *dout = DOROW(b, i, h);
  float qs[kPerLane], dof[kPerLane], dq[kPerLane];
  for (int e = 0; e < kPerLane; ++e) {
    qs[e] = rnd(ld(q, lane, e) * p.scale);
    dof[e] = ld(dout, lane, e);
    dq[e] = 0.f;
  }
  const int n = first_hidden(p, i);
  float m = -1.f / 0.f, l = 0.f;
  for (int j = 0; j < n; ++j) {
    const elem_t *kj = KROW(b, j, hk);
    float s = 0.f;
    for (int e = 0; e < kPerLane; ++e) s += qs[e] * ld(kj, lane, e);
    s = rnd(warp_sum(s));
    if (s > m) {
      l *= expf(m - s);
      m = s;
    }
    l += expf(s - m);
  }
  float pdp = 0.f; // sum_j P dP, the softmax backward's row term
  for (int j = 0; j < n; ++j) {
    const elem_t *kj = KROW(b, j, hk), *vj = VROW(b, j, hk);
    float s = 0.f, dp = 0.f;
    for (int e = 0; e < kPerLane; ++e) {
      s += qs[e] * ld(kj, lane, e);
      dp += dof[e] * ld(vj, lane, e);
    }
    pdp += rnd(expf(rnd(warp_sum(s)) - m) / l) * rnd(warp_sum(dp));
  }
  for (int j = 0; j < n; ++j) {
    const elem_t *kj = KROW(b, j, hk), *vj = VROW(b, j, hk);
    float s = 0.f, dp = 0.f;
    for (int e = 0; e < kPerLane; ++e) {
      s += qs[e] * ld(kj, lane, e);
      dp += dof[e] * ld(vj, lane, e);
    }
    const float pr = rnd(expf(rnd(warp_sum(s)) - m) / l);
    const float ds = rnd(pr * (rnd(warp_sum(dp)) - pdp));
    for (int e = 0; e < kPerLane; ++e) dq[e] += ds * ld(kj, lane, e);
  }
  const long long flat = QFLAT(b, i, h);
  for (int e = 0; e < kPerLane; ++e)
    if (in_dim(lane, e)) p.dq_plain[flat + lane + 32 * e] = from_f32(rnd(dq[e]) * p.scale);
  if (lane == 0) {
    const long long r = ((long long)b * p.heads_q + h) * p.seqlen_q + i;
    p.row_m[r] = m, p.row_l[r] = l, p.row_pdp[r] = pdp;
  }
}

extern "C" __global__ void ref_bwd_cols_plain(ref_bwd_params p) {
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (w >= (long long)p.batch * p.heads_kv * p.seqlen_k) return;
  const int j = w % p.seqlen_k, hk = (w / p.seqlen_k) % p.heads_kv;
  const int b = w / ((long long)p.seqlen_k * p.heads_kv), lane = threadIdx.x % 32;
  const int group = p.heads_q / p.heads_kv;
  const elem_t *kj = KROW(b, j, hk), *vj = VROW(b, j, hk);
  float kf[kPerLane], vf[kPerLane], dk[kPerLane], dv[kPerLane];
  for (int e = 0; e < kPerLane; ++e) {
    kf[e] = ld(kj, lane, e);
    vf[e] = ld(vj, lane, e);
    dk[e] = dv[e] = 0.f;
  }
  const int i0 = p.causal ? j - (p.seqlen_k - p.seqlen_q) : 0;
  for (int h = hk * group; h < (hk + 1) * group; ++h)
    for (int i = i0 < 0 ? 0 : i0; i < p.seqlen_q; ++i) {
      const elem_t *q = QROW(b, i, h), *dout = DOROW(b, i, h);
      const long long r = ((long long)b * p.heads_q + h) * p.seqlen_q + i;
      float s = 0.f, dp = 0.f, qs[kPerLane];
      for (int e = 0; e < kPerLane; ++e) {
        qs[e] = rnd(ld(q, lane, e) * p.scale);
        s += kf[e] * qs[e];
        dp += vf[e] * ld(dout, lane, e);
      }
      const float pr = rnd(expf(rnd(warp_sum(s)) - p.row_m[r]) / p.row_l[r]);
      const float ds = rnd(pr * (rnd(warp_sum(dp)) - p.row_pdp[r]));
      for (int e = 0; e < kPerLane; ++e) {
        dv[e] += pr * ld(dout, lane, e);
        dk[e] += ds * qs[e];
      }
    }
  const long long flat = KFLAT(b, j, hk);
  for (int e = 0; e < kPerLane; ++e) {
    if (in_dim(lane, e)) p.dk_plain[flat + lane + 32 * e] = from_f32(dk[e]);
    if (in_dim(lane, e)) p.dv_plain[flat + lane + 32 * e] = from_f32(dv[e]);
  }
}

// dtype(x) for a float64 array (the O and LSE handed to the kernel under test).
extern "C" __global__ void round_f64(const double *x, elem_t *y, float *yf, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    if (y) y[i] = from_f32((float)x[i]);
    if (yf) yf[i] = (float)x[i];
  }
}
