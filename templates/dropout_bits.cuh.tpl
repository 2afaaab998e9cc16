{# Dropout's keep bits of key tile j for the forward (every template): kept[kMTiles], #}
{# one drop_bits unit per k16 step of P V. The kernel provides j, m0, warp, kWarpRows, #}
{# lane, batch, head (and key_first with a window).                                    #}
    // Dropout's keep bits of this tile{{ wgmma and ", drawn while S = Q K^T is on the tensor cores" or "" }}:
    // one Philox call per m16 x k16 block (fa2_philox.h), unit ps of kept[mt].
    // (the key and counter of this (batch, head) read here, not kept: 4 registers less)
    drop_bits<kPSteps> kept[kMTiles];
    unsigned long long drop_seed, drop_base;
    dropout_key(p, (long long)batch * p.heads_q + head, drop_seed, drop_base);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll 1
      for (int ps = 0; ps < kPSteps; ++ps)
        kept[mt].set(ps, dropout_bits_s(drop_seed, drop_base, (m0 + warp * kWarpRows + mt * 16) / 16,
                                              ({{ window and "key_first + " or "" }}j * kBlockN) / 16 + ps, lane,
                                              p.dropout_limit));
    }
