{# The MMA warpgroups of the ws backward past d = 128, included by bwd_ws.cuh.tpl (whose #}
{# producer warp loads K, V and each step's Q, dO, LSE and delta into the same slots). #}
{# Each warpgroup's columns of dV, dK and dQ (their accumulators hold 128): d = 256 the #}
{# warpgroup's half, one code path; d = 192 128 (warpgroup 0) and 64 (1), a branch each. #}
{# HALVES: { dq_accum's first column, columns, the tiles' first 64-column block } per path; AT: #}
{# the byte offset of that block in a tile of `rows` rows, as a term of a sum ("" for 0). #}
{% local HALVES = head_dim == 256 and { { "wg * 128", 128, "2 * wg" } } or { { "0", 128, "0" }, { "128", 64, "2" } } %}
{% local AT = function(b, rows) if b == "0" then return "" end return b .. " * " .. rows .. " * 128 + " end %}
{% local BRANCH = function(i) return i == 1 and "if (wg == 0) {" or "} else {" end %}
{% local I = #HALVES > 1 and "  " or "" %}
  // ---- MMA warpgroups, past d = 128 (templates/bwd_ws_wide.cuh.tpl) ----------------
  // dK and dV of 64 keys at d = {{ head_dim }} are {{ head_dim }} fp32 a thread of one warpgroup, so the two
  // warpgroups share the block's 64 keys and split the work by keys, then by columns
  // (FA3's split{{ #HALVES > 1 and ": 128 and 64 of them" or "" }}): warpgroup w, per step of 64 queries,
  //   S = Q K_w^T, dP = dO V_w^T   for its 32 keys (K_w: keys 32w..32w+31) | P = exp2(S c -
  //                                LSE log2 e) while dP runs | dS = P (dP - delta)
  //   P, dS -> shared memory       {{ dtype }}, queries x 64 keys (both warpgroups' halves)
  //   dV_w += P^T dO_w, dK_w += dS^T Q_w   its columns (_w) over all 64 keys
  //   dQ_w = dS K_w                its columns (issued first), added to dq_accum (v2
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
  float acc_v[16][4], acc_k[16][4];              // dV and dK: the warp's keys x the warpgroup's (up to 128) columns
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

    // dQ_w = dS K_w (64 queries x the warpgroup's columns) over the 64 keys: A = dS
    // (keys contiguous), B = K's rows; issued first, so that its adds to dq_accum run
    // while dV's and dK's MMAs do. (Also in deterministic mode, where fa2_bwd_dq_det adds
    // dQ instead: issued under a branch, its registers spilled 232 bytes.)
    const unsigned sPa = per_step(sP + buf), sSa = per_step(sS + buf);
    float dq[16][4];
    wgmma_fence();
{% for i, hv in ipairs(HALVES) %}
{% if #HALVES > 1 %}
    {{ BRANCH(i) }}
{% end %}
#pragma unroll
    {{ I }}for (int kk = 0; kk < kBlockN / 16; ++kk)
    {{ I }}  wgmma_kt_n{{ hv[2] }}(dq, sw128_desc(sSa + kk * 32, 16),
    {{ I }}                sw128_desc(sKs + {{ AT(hv[3], "kBlockN") }}kk * 16 * 128, kBlockN * 128), kk > 0);
{% end %}
{% if #HALVES > 1 %}
    }
{% end %}
    wgmma_commit();

    // dV_w += P^T dO_w and dK_w += dS^T Q_w: A = P^T or dS^T read transposed (keys
    // contiguous), B = dO's or Q's rows (queries), the warpgroup's 64-column blocks.
    fence_regs(acc_v);
    fence_regs(acc_k);
{% for i, hv in ipairs(HALVES) %}
{% if #HALVES > 1 %}
    {{ BRANCH(i) }}
{% end %}
#pragma unroll
    {{ I }}for (int qs = 0; qs < kSQSteps; ++qs)
    {{ I }}  wgmma_tt_n{{ hv[2] }}(acc_v, sw128_desc(sPa + qs * 16 * 128, kBlockN * 128),
    {{ I }}                sw128_desc(sdOt + {{ AT(hv[3], "kBlockM") }}qs * 16 * 128, kBlockM * 128), 1);
#pragma unroll
    {{ I }}for (int qs = 0; qs < kSQSteps; ++qs)
    {{ I }}  wgmma_tt_n{{ hv[2] }}(acc_k, sw128_desc(sSa + qs * 16 * 128, kBlockN * 128),
    {{ I }}                sw128_desc(sQt + {{ AT(hv[3], "kBlockM") }}qs * 16 * 128, kBlockM * 128), 1);
{% end %}
{% if #HALVES > 1 %}
    }
{% end %}
    wgmma_commit();
    wgmma_wait<1>(); // dQ has landed
    fence_regs(dq);
    if (!p.deterministic) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int q = m0 + wrow + hh * 8 + g;
        if (q >= {{ SQ }}) continue;
{% for i, hv in ipairs(HALVES) %}
{% if #HALVES > 1 %}
        {{ BRANCH(i) }}
{% end %}
        {{ I }}float *dst = p.dq_accum + (({{ QROW0 }} + q) * p.heads_q + h) * kHeadDim + {{ hv[1] == "0" and "" or hv[1] .. " + " }}2 * qd;
#pragma unroll
        {{ I }}for (int dt = 0; dt < {{ hv[2] // 8 }}; ++dt) add2(dst + dt * 8, dq[dt][2 * hh], dq[dt][2 * hh + 1]);
{% end %}
{% if #HALVES > 1 %}
        }
{% end %}
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
{% if #HALVES > 1 %}
      if (wg == 1 && dt >= 8) continue; // (warpgroup 1: 64 columns)
{% end %}
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
