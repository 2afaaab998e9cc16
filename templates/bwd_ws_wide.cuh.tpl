{# The MMA warpgroups of the ws backward past d = 128, included by bwd_ws.cuh.tpl (whose #}
{# producer warp loads K, V and each step's Q, dO, LSE and delta into the same slots). #}
  // ---- MMA warpgroups, past d = 128 (templates/bwd_ws_wide.cuh.tpl) ----------------
  // dK and dV of 64 keys at d = 256 are 256 fp32 a thread of one warpgroup, so the two
  // warpgroups share the block's 64 keys and split the work by keys, then by columns
  // (FA3's split): warpgroup w, per step of 64 queries,
  //   S = Q K_w^T, dP = dO V_w^T   for its 32 keys (K_w: keys 32w..32w+31) | P = exp2(S c -
  //                                LSE log2 e) while dP runs | dS = P (dP - delta)
  //   P, dS -> shared memory       {{ dtype }}, queries x 64 keys (both warpgroups' halves)
  //   dV_w += P^T dO_w, dK_w += dS^T Q_w   its 128 columns (_w) over all 64 keys
  //   dQ_w = dS K_w                its 128 columns (issued first), added to dq_accum (v2
  //                                adds) while dV's and dK's MMAs run
  // One barrier a step (P and dS stored); P and dS have two buffers each, so a
  // warpgroup may write step t + 1's while the other still reads step t's.
  regs_claim<kMmaRegs>();
  const int warp = tid / 32, lane = tid % 32;
{% include "bwd_block.cuh.tpl" %}
  const int g = lane / 4, qd = lane % 4;
  const int wrow = (warp % 4) * 16;              // the warp's 16 queries (S, dP, dQ) and keys (dK, dV)
  const float *sLf = (const float *)(smem + (sL - sK));
  const float *sDf = (const float *)(smem + (sD - sK));
  const float c = p.scale * 1.44269504f;         // scores -> log2 units
  float acc_v[16][4], acc_k[16][4];              // dV and dK: the warp's keys x the warpgroup's 128 columns
#pragma unroll
  for (int dt = 0; dt < 16; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_v[dt][e] = acc_k[dt][e] = 0.f;

  if (n_steps > 0) mbar_wait(kv_full, 0);
  for (int t = 0; t < n_steps; ++t) {
    const int slot = t % kStages;
    const int h = kv_head * group + t / n_i, m0 = (i_begin + t % n_i) * kBlockM;
    mbar_wait(q_full + 8 * slot, (t / kStages) & 1);
    const unsigned sQt = sQ + slot * kSwQ, sdOt = sdO + slot * kSwQ;
    const unsigned sKs = per_step(sK), sVs = per_step(sV);

    // S = Q K_w^T and dP = dO V_w^T (64 queries x the warpgroup's 32 keys, fp32), two groups
    float s[4][4], dp[4][4];
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n32(s, sw128_desc(sQt + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16),
                   sw128_desc(sKs + (ks / 4) * kBlockN * 128 + wg * 32 * 128 + (ks % 4) * 32, 16), ks > 0);
    wgmma_commit();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n32(dp, sw128_desc(sdOt + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16),
                   sw128_desc(sVs + (ks / 4) * kBlockN * 128 + wg * 32 * 128 + (ks % 4) * 32, 16), ks > 0);
    wgmma_commit();
    wgmma_wait<1>(); // S has landed; dP runs on through P's exponentials
    fence_regs(s);

    // P = exp2(S c - LSE log2 e) of the warp's rows g, g + 8; masked entries 0 (a pass of
    // their own on masked steps, as bwd_ws.cuh.tpl)
    float l2[2], dl[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      l2[hh] = sLf[slot * kBlockM + wrow + hh * 8 + g] * 1.44269504f;
      dl[hh] = sDf[slot * kBlockM + wrow + hh * 8 + g];
    }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) s[nt][i] = exp2_approx(fmaf(s[nt][i], c, -l2[i / 2]));
    if (m0 + kBlockM > {{ SQ }} || n0 + kBlockN > {{ SK }} ||
        {{ STEP_EDGE }}) {
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int q = m0 + wrow + (i / 2) * 8 + g, key = n0 + wg * 32 + nt * 8 + 2 * qd + i % 2;
          if (q >= {{ SQ }} || key >= {{ SK }} || {{ HIDDEN("key", "q") }}) s[nt][i] = 0.f;
        }
    }
    wgmma_wait<0>(); // dP has landed
    fence_regs(dp);

    // dS = P (dP - delta); P and dS rounded to {{ dtype }} into this step's buffers (the
    // warpgroup's 32 key columns of each), then both warpgroups' halves are complete.
    const unsigned buf = (t & 1) * kSwP;
    unsigned char *sPb = smem + (sP - sK) + buf, *sSb = smem + (sS - sK) + buf;
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) dp[nt][i] = s[nt][i] * (dp[nt][i] - dl[i / 2]);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      unsigned a[4];
      a_frag(s[2 * j], s[2 * j + 1], a);
      store_sw_frag(sPb, a, wrow + g, 4 * wg + 2 * j, qd);
      a_frag(dp[2 * j], dp[2 * j + 1], a);
      store_sw_frag(sSb, a, wrow + g, 4 * wg + 2 * j, qd);
    }
    fence_proxy_async(); // P and dS stores -> wgmma reads
    bar_sync(kDSBar, 256);

    // dQ_w = dS K_w (64 queries x the warpgroup's 128 columns) over the 64 keys: A = dS
    // (keys contiguous), B = K's rows; issued first, so that its adds to dq_accum run
    // while dV's and dK's MMAs do. (Also in deterministic mode, where fa2_bwd_dq_det adds
    // dQ instead: issued under a branch, its registers spilled 232 bytes.)
    const unsigned sPa = per_step(sP + buf), sSa = per_step(sS + buf);
    float dq[16][4];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      wgmma_kt_n128(dq, sw128_desc(sSa + kk * 32, 16),
                    sw128_desc(sKs + 2 * wg * kBlockN * 128 + kk * 16 * 128, kBlockN * 128), kk > 0);
    wgmma_commit();

    // dV_w += P^T dO_w and dK_w += dS^T Q_w: A = P^T or dS^T read transposed (keys
    // contiguous), B = dO's or Q's rows (queries), the warpgroup's two 64-column blocks.
    fence_regs(acc_v);
    fence_regs(acc_k);
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_tt_n128(acc_v, sw128_desc(sPa + qs * 16 * 128, kBlockN * 128),
                    sw128_desc(sdOt + 2 * wg * kBlockM * 128 + qs * 16 * 128, kBlockM * 128), 1);
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_tt_n128(acc_k, sw128_desc(sSa + qs * 16 * 128, kBlockN * 128),
                    sw128_desc(sQt + 2 * wg * kBlockM * 128 + qs * 16 * 128, kBlockM * 128), 1);
    wgmma_commit();
    wgmma_wait<1>(); // dQ has landed
    fence_regs(dq);
    if (!p.deterministic) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int q = m0 + wrow + hh * 8 + g;
        if (q >= {{ SQ }}) continue;
        float *dst = p.dq_accum + (({{ QROW0 }} + q) * p.heads_q + h) * kHeadDim + wg * 128 + 2 * qd;
#pragma unroll
        for (int dt = 0; dt < 16; ++dt) add2(dst + dt * 8, dq[dt][2 * hh], dq[dt][2 * hh + 1]);
      }
    }
    wgmma_wait<0>(); // dV and dK: the step's Q and dO are read
    fence_regs(acc_v);
    fence_regs(acc_k);
    if (lane == 0) mbar_arrive(q_empty + 8 * slot);
  }

  // dK = scale * dS^T Q, dV = P^T dO: the warp's keys x the warpgroup's columns, in {{ dtype }}.
  elem_t *dkp = (elem_t *)p.dk + {{ BASE("dk") }} + kv_head * p.dk_head_stride;
  elem_t *dvp = (elem_t *)p.dv + {{ BASE("dv") }} + kv_head * p.dv_head_stride;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int key = n0 + wrow + hh * 8 + g;
    if (key >= {{ SK }}) continue;
#pragma unroll
    for (int dt = 0; dt < 16; ++dt) {
      const int col = wg * 128 + dt * 8 + 2 * qd;
{% if padded %}
      if (col >= kTensorDim) continue; // past the tensors' head dim
{% end %}
      *(unsigned *)(dkp + key * p.dk_row_stride + col) =
          pack2(acc_k[dt][2 * hh] * p.scale, acc_k[dt][2 * hh + 1] * p.scale);
      *(unsigned *)(dvp + key * p.dv_row_stride + col) = pack2(acc_v[dt][2 * hh], acc_v[dt][2 * hh + 1]);
    }
  }
}
