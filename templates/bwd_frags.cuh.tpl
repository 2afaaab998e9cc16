{# The backward's fragment helpers on wgmma, both kernels (bwd_wgmma.cuh.tpl, bwd_ws.cuh.tpl): #}
{# P^T and dS^T rounded into A fragments, dS^T into its swizzled tile, and (DS_TILE, set by the #}
{# includer) dS^T from dP^T in place. #}
// Two n8 query tiles x, x + 1 of the accumulator rounded to {{ dtype }}: the A
// fragment of one k16 step.
__device__ __forceinline__ void a_frag(const float (&x0)[4], const float (&x1)[4], unsigned (&a)[4]) {
  a[0] = pack2(x0[0], x0[1]);
  a[1] = pack2(x0[2], x0[3]);
  a[2] = pack2(x1[0], x1[1]);
  a[3] = pack2(x1[2], x1[3]);
}

// A fragment f of 16 keys (rows r, r + 8) x 16 queries (8-query chunks ch, ch + 1)
// into the swizzled dS^T tile at s (keys x 64 queries).
__device__ __forceinline__ void store_sw_frag(unsigned char *s, const unsigned (&f)[4], int r, int ch, int qd) {
  *(unsigned *)(s + sw128_offset<kBlockN>(r, ch) + qd * 4) = f[0];
  *(unsigned *)(s + sw128_offset<kBlockN>(r + 8, ch) + qd * 4) = f[1];
  *(unsigned *)(s + sw128_offset<kBlockN>(r, ch + 1) + qd * 4) = f[2];
  *(unsigned *)(s + sw128_offset<kBlockN>(r + 8, ch + 1) + qd * 4) = f[3];
}

{% if DS_TILE %}
{% if dropout %}
// Whether score i (= 2 hh + e) of n8 query tile nt of the S^T accumulator was kept:
// its bit of drop_bits (common.cuh.tpl), unit nt / 2 per 16 queries.
template <typename Kept>
__device__ __forceinline__ bool kept_at(const Kept &kept, int nt, int i) {
  return kept.has(8 * (nt / 2) + 4 * (i % 2) + 2 * (nt % 2) + i / 2);
}

// a_frag of P^T Z (dV's operand): the dropped scores as 0.
template <typename Kept>
__device__ __forceinline__ void a_frag_kept(const float (&x0)[4], const float (&x1)[4], const Kept &kept, int nt,
                                            unsigned (&a)[4]) {
  float y0[4], y1[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    y0[i] = kept_at(kept, nt, i) ? x0[i] : 0.f;
    y1[i] = kept_at(kept, nt + 1, i) ? x1[i] : 0.f;
  }
  a_frag(y0, y1, a);
}

{% end %}
// dS^T = P^T (dP^T - delta) in place of dP^T in x, for one n8 query tile nt of the
// accumulator, with P^T from pt and delta from the step's row at dl.
{% if dropout %}
// Dropout: dS^T (1 - p) = P^T (dP^T Z - (1 - p) delta) (bwd.cu.tpl's arrangement: dK and
// dQ take the 1 / (1 - p) at the end).
template <typename Kept>
__device__ __forceinline__ void ds_tile(float (&x)[4], const float (&pt)[4], const float *dl, int nt, int qd,
                                        const Kept &kept, float keep) {
{% else %}
__device__ __forceinline__ void ds_tile(float (&x)[4], const float (&pt)[4], const float *dl, int nt, int qd) {
{% end %}
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const float d = dl[nt * 8 + 2 * qd + e]{{ dropout and " * keep" or "" }};
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) x[2 * hh + e] = pt[2 * hh + e] * ({{ dropout and "(kept_at(kept, nt, 2 * hh + e) ? x[2 * hh + e] : 0.f)" or "x[2 * hh + e]" }} - d);
  }
}

{% end %}
