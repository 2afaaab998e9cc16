/* fa2_philox.h: the forward's random numbers (dropout variants; balanced rounding).
 *
 * One definition for both sides, like fa2_params.h: the templates paste it
 * into every dropout variant's source, and the host #includes it
 * (runtime/rt_dropout.c, tests/test_philox.c) with FA2_PHILOX_FN defined
 * first. Plain C that CUDA C++ also reads.
 *
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As
 * Easy as 1, 2, 3", SC'11): a 128-bit counter and a 64-bit key give four
 * 32-bit words, a pure function of both. One round maps (x0, x1, x2, x3)
 * with key (k0, k1) to
 *   (hi(M1 x2) ^ x1 ^ k0, lo(M1 x2), hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)),
 * M0 = 0xD2511F53, M1 = 0xCD9E8D57; the key grows by (0x9E3779B9,
 * 0xBB67AE85) after each of the ten rounds.
 *
 * Dropout's mask is keyed by element, never by tile, so every kernel (the
 * forward, the backward's main kernel and fa2_bwd_dq_det, mma.sync or
 * wgmma, any tile shape) draws the same bit for the same element. An
 * attention matrix bh = batch * heads_q + head (varlen: batch is the
 * sequence) is cut into 16 x 16 blocks; block (i/16, j/16) holds 32 units of
 * 8 elements, unit u = 4 (i % 8) + (j % 8) / 2 being rows {i % 8, i % 8 + 8}
 * x keys {2 (u % 4), +1, +8, +9} of the block: the 8 scores one thread holds
 * in the forward's mma.sync/wgmma accumulator layout. A unit is one Philox
 * call, counter (32 (j/16) + u, i/16, lo(offset + bh), hi(offset + bh)), key
 * (lo(seed), hi(seed)); its word 2 (i % 16 / 8) + (j % 16 / 8) holds the
 * element's 16-bit number, in its low half for an even key, the high half
 * for an odd one. An element is kept when that number is below keep16 =
 * round((1 - p) 65536) (at least 1): 16-bit resolution, so the kept
 * fraction is 1 - p within 2^-17 (FlashAttention-2 compares 8 bits: within
 * 2^-9). The kernels take keep16 as fa2_dropout_limit(keep16). */
#ifndef FA2_PHILOX_H
#define FA2_PHILOX_H

#ifndef FA2_PHILOX_FN
#define FA2_PHILOX_FN __device__ __forceinline__
#endif

typedef struct fa2_philox4 {
  unsigned x[4];
} fa2_philox4;

/* a * b, 64 bits: one IMAD.WIDE.U32 on the GPU (the C product of a 64-bit
 * constant costs an extra add there). */
FA2_PHILOX_FN unsigned long long fa2_mul_wide(unsigned a, unsigned b) {
#ifdef __CUDACC__
  unsigned long long r;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
  return r;
#else
  return (unsigned long long)a * b;
#endif
}

FA2_PHILOX_FN fa2_philox4 fa2_philox4x32_10(unsigned x0, unsigned x1, unsigned x2, unsigned x3,
                                            unsigned k0, unsigned k1) {
#ifdef __CUDACC__
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) {
    const unsigned long long p0 = fa2_mul_wide(0xD2511F53u, x0), p1 = fa2_mul_wide(0xCD9E8D57u, x2);
    x0 = (unsigned)(p1 >> 32) ^ x1 ^ k0;
    x1 = (unsigned)p1;
    x2 = (unsigned)(p0 >> 32) ^ x3 ^ k1;
    x3 = (unsigned)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  fa2_philox4 out = { { x0, x1, x2, x3 } }; /* spaced: two braces open a template expression */
  return out;
}

/* The four words of unit u of block (i16, j16) of attention matrix bh. */
FA2_PHILOX_FN fa2_philox4 fa2_dropout_unit(unsigned long long seed, unsigned long long offset,
                                           unsigned long long bh, unsigned i16, unsigned j16,
                                           unsigned u) {
  const unsigned long long sub = offset + bh;
  return fa2_philox4x32_10(j16 * 32u + u, i16, (unsigned)sub, (unsigned)(sub >> 32),
                           (unsigned)seed, (unsigned)(seed >> 32));
}

/* The draw of row i of attention matrix bh for the balanced rounding of O
 * (round_balanced.cuh.tpl): word 0 of the unit at counter (i, 2^32 - 1), where
 * dropout's second word, a 16-row block number, never reaches. */
FA2_PHILOX_FN unsigned fa2_round_draw(unsigned long long seed, unsigned long long offset,
                                      unsigned long long bh, unsigned i) {
  const unsigned long long sub = offset + bh;
  return fa2_philox4x32_10(i, 0xffffffffu, (unsigned)sub, (unsigned)(sub >> 32), (unsigned)seed,
                           (unsigned)(seed >> 32)).x[0];
}

/* keep16 (1 .. 65536) as the 32-bit limit the kept tests below compare with. */
FA2_PHILOX_FN unsigned fa2_dropout_limit(unsigned keep16) { return ((keep16 - 1u) << 16) | 0xffffu; }

/* 1 when the number in the high (odd key) / low (even key) half of word w is
 * below keep16, given as limit = fa2_dropout_limit(keep16): a compare, and a
 * shift for the low half. */
FA2_PHILOX_FN int fa2_kept_hi(unsigned w, unsigned limit) { return w <= limit; }
FA2_PHILOX_FN int fa2_kept_lo(unsigned w, unsigned limit) { return (w << 16) <= limit; }

/* 1 when element (row i, key j) of attention matrix bh is kept: the
 * definition, one element at a time (the mask kernel and the host). */
FA2_PHILOX_FN int fa2_dropout_kept(unsigned long long seed, unsigned long long offset,
                                   unsigned long long bh, unsigned i, unsigned j, unsigned limit) {
  const fa2_philox4 r = fa2_dropout_unit(seed, offset, bh, i >> 4, j >> 4, (i & 7u) * 4u + ((j & 7u) >> 1));
  const unsigned w01 = (j & 8u) ? r.x[1] : r.x[0], w23 = (j & 8u) ? r.x[3] : r.x[2]; /* selects, */
  const unsigned w = (i & 8u) ? w23 : w01; /* not an index: registers, not a stack frame */
  return (j & 1u) ? fa2_kept_hi(w, limit) : fa2_kept_lo(w, limit);
}

#endif
