{# The forward's softmax, part 2: the robust mode's per-row shift (needs kBeta).  #}
{% if softmax == "robust" %}
// The robust shift of one row, in raw-score units: tau = 0.5 + (beta-1)*u with
// u in [0, 1) the fractional part of a mix of the row's first-tile max, its row
// index and its (batch, head) (bh, from bh_mix), so tau varies from row to row and
// from step to step (a shift that is the same for every row would round the same
// way everywhere and bring the bias back). bh matters when the max is the same in
// every row (softcap saturates rows to the cap): without it row i of every head
// would take one shift. Rows with fewer than two visible keys cannot tie: tau = 0.
__device__ __forceinline__ float robust_shift(float rm, int row, float bh, int visible, float scale) {
  if (visible < 2 || rm == neg_inf()) return 0.f;
  const float x = fabsf(rm) * scale * 7.38905610f + (float)row * 0.618033989f + bh;
  return (0.5f + (kBeta - 1.f) * (x - floorf(x))) / scale;
}

// robust_shift's (batch, head) term: two more irrationals, so that no two (batch,
// head, row) share a shift by construction.
__device__ __forceinline__ float bh_mix(int batch, int head) {
  return (float)head * 0.414213562f + (float)batch * 0.324717957f;
}

{% end %}
