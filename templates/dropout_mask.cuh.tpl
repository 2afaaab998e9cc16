{# fa2_dropout_mask, the forward's second entry with dropout (every template). #}

// ---- fa2_dropout_mask: the keep bits of a call (tests) ---------------------------
// o[((b * heads_q + h) * seqlen_q + i) * seqlen_k + j] = 1 (a byte) when element
// (i, j) of (batch b, head h) is kept, 0 when dropped: fa2_philox.h's definition one
// element per thread, the bits fa2_fwd and the backward draw for the same p.
extern "C" __global__ void __launch_bounds__(kThreads) fa2_dropout_mask(const fa2_fwd_params p) {
  const unsigned long long n = (unsigned long long)p.batch * p.heads_q * p.seqlen_q * p.seqlen_k;
  for (unsigned long long x = (unsigned long long)blockIdx.x * kThreads + threadIdx.x; x < n;
       x += (unsigned long long)gridDim.x * kThreads) {
    const unsigned long long row = x / p.seqlen_k, bh = row / p.seqlen_q;
    const unsigned long long seed = p.dropout_rng ? p.dropout_rng[0] : p.dropout_seed;
    const unsigned long long offset = p.dropout_rng ? p.dropout_rng[1] : p.dropout_offset;
    ((unsigned char *)p.o)[x] = (unsigned char)fa2_dropout_kept(seed, offset, bh, (unsigned)(row % p.seqlen_q),
                                                                (unsigned)(x % p.seqlen_k), p.dropout_limit);
  }
}
