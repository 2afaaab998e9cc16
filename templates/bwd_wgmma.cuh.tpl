{# fa2_bwd on Hopper's warpgroup MMA, included by bwd.cu.tpl for wgmma tiles. #}
{# SQ, SK, BASE, LSE, HIDDEN, I_BEGIN: set by tensor_index.tpl and bwd.cu.tpl. #}
{# "pair" (gen/variant.lua bwd_layout): the two warpgroups share 64 keys; dQ's columns split as #}
{# the first dqn0 (whole 64-column blocks, at least half) and the rest. #}
{% local pair = block_n == 8 * warps %}
{# not the pair, and no dropout, softcap or window (whose registers are spent): P^T's #}
{# exponentials run while dP^T's MMA does (FA3's intra-warpgroup overlap). #}
{% local overlap = not pair and not (dropout or softcap or window) %}
{% local dqn0 = pair and (head_dim // 2 + 63) // 64 * 64 or 0 %}
{# The MMAs' shared-memory descriptors at d = 128 (not the pair): their low words built once a #}
{# step, then one add per MMA (desc_at), where sw128_desc's mask, shift and or per operand cost #}
{# ~440 M of the 2.43 G instructions at N = 8k. Not at d = 64 (non-causal 0.87-0.89x: ptxas #}
{# then packs the P / dS loop's predicates into a register), not with a window (spills). #}
{% local desc_once = head_dim == 128 and not pair and not window %}
{# d = 64 on two warpgroups (one 64-column block for two): each computes dQ over its own #}
{# 64 keys and all columns, the two sums meet in shared memory, and each adds half the #}
{# columns: one global add per element for 128 keys, where a one-warpgroup block adds one #}
{# for 64. #}
{% local dq_split = not pair and head_dim // 64 < warps // 4 %}
{% local DESC = function(var, base, lbo, off) if desc_once then return "desc_at(" .. var .. ", " .. off .. ")" end return "sw128_desc(" .. base .. " + " .. off .. ", " .. lbo .. ")" end %}
// ---- fa2_bwd on warpgroup MMA (templates/bwd_wgmma.cuh.tpl) -----------------
// One block per (key block, kv head, batch), as with mma.sync. Each warpgroup
// owns 64 keys (16 per warp: their rows of dK and dV stay in registers), and
// each step of 64 queries is five warpgroup MMAs:
//   S^T = K Q^T, dP^T = V dO^T     operands in shared memory,
//   dV += P^T dO, dK += dS^T Q     P^T and dS^T from registers,
//   dQ = dS K                      dS^T through shared memory; each warpgroup
//                                  a slice of the head dim, added to dq_accum.
// K, V, Q, dO and dS^T are 128-byte-swizzled tiles (templates/wgmma.cuh.tpl).
constexpr int kWG = kWarps / 4;
{% if pair %}
// A pair (head dims past 128: dK and dV of 64 keys do not fit one warpgroup's
// registers): both warpgroups take the block's 64 keys and split the work by
// matrix. Warpgroup 0: S^T = K Q^T, P^T, dV += P^T dO; warpgroup 1: dP^T =
// V dO^T, dS^T, dK += dS^T Q. P^T's factor for dS^T (P^T, times 1 - tanh^2
// with softcap, negative where dropout drops) goes from 0 to 1 through shared
// memory in fp32, thread to thread (the two accumulators have one layout), so
// every MMA has N = 64 or more and A from registers; dQ's columns split
// {{ dqn0 }} + {{ head_dim - dqn0 }}.
static_assert(kWG == 2 && kBlockN == 64, "a pair: two warpgroups, 64 keys");
constexpr int kPBar = 1;                          // named barrier: P^T's factor published
{% else %}
constexpr int kDQN = kHeadDim / kWG;              // dQ columns per warpgroup (its adds)
{% if dq_split %}
constexpr int kXchBar = 1;                        // named barrier: the dQ halves exchanged
{% end %}
{% end %}
constexpr int kSwKV = kBlockN * kHeadDim * 2;     // bytes of a swizzled K or V tile
constexpr int kSwQ = kBlockM * kHeadDim * 2;      // ... of a Q or dO tile
constexpr int kSwS = kBlockN * kBlockM * 2;       // ... of dS^T (keys x 64 queries)
{% if pair %}
constexpr int kPF = kBlockN * kBlockM * 4;        // ... of P^T's factor (fp32, per thread)
static_assert(kWarps * 2048 <= kPF, "dQ's staging fits P^T's factor buffer");
{% end %}
constexpr int kSQSteps = kBlockM / 16;            // k16 query steps of dV, dK
{% if pair %}
static_assert(kBlockM == 64 && {{ dqn0 }} % 64 == 0 && {{ head_dim - dqn0 }} % 64 == 0, "wgmma backward tile rules");
{% else %}
{% if dq_split %}
static_assert(kBlockM == 64 && kBlockN == 128 && kHeadDim == 64 && kWG == 2, "wgmma backward tile rules");
static_assert(4 * 2048 <= kSwQ && 128 * 16 * (kDQN / 8) <= kSwS / 2, "dQ's staging fits a Q (dO) tile, its exchange half of dS^T");
{% else %}
static_assert(kBlockM == 64 && kBlockN == 64 * kWG && kDQN % 64 == 0, "wgmma backward tile rules");
static_assert(kWarps * 2048 <= kSwQ, "dQ's staging fits a Q tile");
{% end %}
{% end %}
static_assert(kSwKV % 1024 == 0 && kSwQ % 1024 == 0 && kSwS % 1024 == 0,
              "swizzled tiles start on 1024-byte boundaries");

template <int kRows>
__device__ __forceinline__ void load_tile_sw(unsigned dst, const elem_t *src, long long row_stride,
                                             int row0, int rows, int tid) {
  load_rows_sw128<kRows, kThreads, kChunks>(dst, src, row_stride, row0, rows, tid);
}

{% set DS_TILE = overlap %}
{% include "bwd_frags.cuh.tpl" %}
extern "C" __global__ void __launch_bounds__(kThreads, 1) fa2_bwd(const fa2_bwd_params p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (in the shared window).
  unsigned char *smem = smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, wg = warp / 4;
{% include "bwd_block.cuh.tpl" %}

  // The swizzled tiles first (each a multiple of 1024 bytes), then LSE, delta.
  const unsigned sK = smem_addr(smem);
  const unsigned sV = sK + kSwKV;
  const unsigned sQ = sV + kSwKV;
  const unsigned sdO = sQ + kStages * kSwQ;
  const unsigned sS = sdO + kStages * kSwQ; // dS^T: a keys x 64 queries swizzled tile
{% if pair %}
  const unsigned sPF = sS + kSwS;           // P^T's factor, warpgroup 0 to 1
  const unsigned sL = sPF + kPF;
{% else %}
  const unsigned sL = sS + kSwS;
{% end %}
  const unsigned sD = sL + kStages * kVec;
  const float *sLf = (const float *)(smem + (sL - sK));
  const float *sDf = (const float *)(smem + (sD - sK));
  unsigned char *sSp = smem + (sS - sK);

{% include "bwd_load.cuh.tpl" %}

  const int g = lane / 4, qd = lane % 4;
{% if pair %}
  const int key_row = (warp % 4) * 16;            // this warp's 16 keys in the block
  float4 *pf = (float4 *)(smem + (sPF - sK)) + tid % 128; // its factors: [n8 tile][thread]
{% else %}
  const int key_row = warp * 16;                  // this warp's 16 keys in the block
  const unsigned sKw = sK + wg * 64 * 128, sVw = sV + wg * 64 * 128; // its warpgroup's 64
{% end %}
  const float c = p.scale * 1.44269504f;          // scores -> log2 units
{% if softcap %}
  const float cap_in = p.cap_in, cap_out = p.cap_out; // softcap, raw units
{% end %}
{% if pair %}
  float acc[kDTiles][4];                          // dV (warpgroup 0) or dK (1) of the warp's keys
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[dt][e] = 0.f;
{% else %}
  float acc_v[kDTiles][4], acc_k[kDTiles][4];     // dV and dK of the warp's keys
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_v[dt][e] = acc_k[dt][e] = 0.f;
{% end %}

  for (int t = 0; t < n_steps; ++t) {
    const int slot = t % kStages;
    const int h = kv_head * group + t / n_i, m0 = (i_begin + t % n_i) * kBlockM;
{% if alibi %}
    const float alibi = p.alibi_slopes[batch * p.alibi_batch_stride + h] * p.inv_scale; // raw units
{% end %}
    cp_async_wait<kStages - 2>(); // step t (and K, V) have landed ...
    fence_proxy_async();          // ... visible to wgmma ...
    __syncthreads();              // ... for every thread; step t-1 is done everywhere
    if (t + kStages - 1 < n_steps) load_step(t + kStages - 1);
    cp_async_commit();
    const unsigned sQt = sQ + slot * kSwQ, sdOt = sdO + slot * kSwQ;
{% if pair %}
    const unsigned sKs = per_step(sK), sSs = per_step(sS);

    // S^T = K Q^T (warpgroup 0) or dP^T = V dO^T (1) for the 64 keys (fp32)
    float st[kBlockM / 8][4];
    const unsigned sA = wg == 0 ? sKs : per_step(sV), sB = wg == 0 ? sQt : sdOt;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n{{ block_m }}(st, sw128_desc(sA + (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16),
                       sw128_desc(sB + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16), ks > 0);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(st);

    if (wg == 0) {
{% else %}
    const unsigned sKs = per_step(sK), sSs = per_step(sS), sKws = per_step(sKw), sVws = per_step(sVw);

    // S^T = K Q^T and dP^T = V dO^T for the warpgroup's 64 keys (fp32)
    float st[kBlockM / 8][4], dpt[kBlockM / 8][4];
{% if desc_once %}
    const unsigned dK = sw128_lo(sKws, 16), dQt = sw128_lo(sQt, 16);
    const unsigned dV = sw128_lo(sVws, 16), ddO = sw128_lo(sdOt, 16);
{% end %}
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n{{ block_m }}(st, {{ DESC("dK", "sKws", "16", "(ks / 4) * kBlockN * 128 + (ks % 4) * 32") }},
                       {{ DESC("dQt", "sQt", "16", "(ks / 4) * kBlockM * 128 + (ks % 4) * 32") }}, ks > 0);
{% if overlap %}
    wgmma_commit();
{% end %}
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n{{ block_m }}(dpt, {{ DESC("dV", "sVws", "16", "(ks / 4) * kBlockN * 128 + (ks % 4) * 32") }},
                       {{ DESC("ddO", "sdOt", "16", "(ks / 4) * kBlockM * 128 + (ks % 4) * 32") }}, ks > 0);
    wgmma_commit();
{% if overlap %}
    wgmma_wait<1>(); // S^T has landed; dP^T runs on through P^T's exponentials
    fence_regs(st);
    unsigned ap[kSQSteps][4]; // P^T rounded to {{ dtype }}, packed as each k16 step completes
{% else %}
    wgmma_wait<0>();
    fence_regs(st);
    fence_regs(dpt);
{% end %}
{% end %}

{% if softcap %}
    // softcap: S^T capped in place; dS^T takes the derivative 1 - tanh^2 below
#pragma unroll
    for (int nt = 0; nt < kBlockM / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) st[nt][e] = cap_out * tanh_approx(st[nt][e] * cap_in);
{% end %}
{% if dropout %}
    // dropout: the keep bits of the warp's 16 keys, unit a per 16 queries (bwd.cu.tpl)
    drop_bits<kBlockM / 16> kept;
    unsigned long long drop_seed, drop_base; // (batch, h)'s Philox key and counter
    dropout_key(p, (long long)batch * p.heads_q + h, drop_seed, drop_base);
#pragma unroll 1
    for (int a = 0; a < kBlockM / 16; ++a)
      kept.set(a, dropout_bits_st(drop_seed, drop_base, m0 / 16 + a, (n0 + key_row) / 16, g, qd,
                                        p.dropout_limit));
{% end %}
    // P^T = exp2(S^T c - LSE log2 e), {{ pair and "and its factor f for dS^T = f (dP^T - delta)" or overlap and "kept for dS^T = P^T (dP^T - delta)" or "dS^T = P^T (dP^T - delta)" }}; masked entries are 0.
    const bool masked = m0 + kBlockM > {{ SQ }} || n0 + kBlockN > {{ SK }} ||
                        {{ STEP_EDGE }};
{% if alibi %}
    const float dist0 = (float)(m0 + 2 * qd + diag - n0 - key_row - g); // ALiBi, as in bwd.cu.tpl
{% end %}
{% for pass_i, edge in ipairs(window and { "true", "false" } or { "masked" }) %}
{% if window %}
    {{ pass_i == 1 and "if (masked) { // a window edge crosses the step: the masks" or "} else { // inside the window: no mask" }}
{% end %}
#pragma unroll
    for (int nt = 0; nt < kBlockM / 8; ++nt) {
{% if pair %}
      float f[4]; // P^T's factor for dS^T
{% end %}
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = nt * 8 + 2 * qd + e;
        const float l2 = sLf[slot * kBlockM + col] * 1.44269504f;
{% if not pair and not overlap and dropout %}
        const float dl = sDf[slot * kBlockM + col] * p.dropout_keep; // (1 - p) delta
{% elif not pair and not overlap %}
        const float dl = sDf[slot * kBlockM + col];
{% end %}
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
{% if alibi %}
          const float dist = dist0 + (float)(nt * 8 + e - hh * 8); // q + diag - key
          float pe = exp2_approx(fmaf(st[nt][2 * hh + e] - alibi * fabsf(dist), c, -l2));
{% else %}
          float pe = exp2_approx(fmaf(st[nt][2 * hh + e], c, -l2));
{% end %}
          if ({{ edge }}) {
            const int key = n0 + key_row + hh * 8 + g, q = m0 + col;
            if (q >= {{ SQ }} || key >= {{ SK }} || {{ HIDDEN("key", "q") }}) pe = 0.f;
          }
{% if dropout %}
          const bool drop = !kept.has(8 * (nt / 2) + 4 * e + 2 * (nt & 1) + hh);
{% end %}
{% if pair %}
{% if softcap %}
          const float t = st[nt][2 * hh + e] * cap_in; // tanh of the uncapped score
          f[2 * hh + e] = {{ dropout and "(drop ? -pe : pe)" or "pe" }} * (1.f - t * t);
{% else %}
          f[2 * hh + e] = {{ dropout and "drop ? -pe : pe" or "pe" }};
{% end %}
          st[nt][2 * hh + e] = {{ dropout and "drop ? 0.f : pe; // P^T Z for dV" or "pe;" }}
{% elif overlap %}
          st[nt][2 * hh + e] = pe;
{% else %}
{% if dropout %}
          if (drop) dpt[nt][2 * hh + e] = 0.f;
{% end %}
{% if softcap %}
          const float t = st[nt][2 * hh + e] * cap_in; // tanh of the uncapped score
          st[nt][2 * hh + e] = pe;
          dpt[nt][2 * hh + e] = pe * (dpt[nt][2 * hh + e] - dl) * (1.f - t * t);
{% else %}
          st[nt][2 * hh + e] = pe;
          dpt[nt][2 * hh + e] = pe * (dpt[nt][2 * hh + e] - dl);
{% end %}
{% if dropout %}
          if (drop) st[nt][2 * hh + e] = 0.f; // P^T Z for dV
{% end %}
{% end %}
        }
      }
{% if pair %}
      pf[nt * 128] = make_float4(f[0], f[1], f[2], f[3]);
{% elif overlap %}
      if (nt % 2 == 1) a_frag(st[nt - 1], st[nt], ap[nt / 2]); // the k16 step's P^T (st keeps it)
{% end %}
    }
{% end %}
{% if window %}
    }
{% end %}
{% if pair %}
      bar_arrive(kPBar, 256); // the factors are out
    } else {
      // dS^T = f (dP^T - delta){{ dropout and ", dP^T taken as 0 where f < 0 (dropped, -f)" or "" }}
      bar_sync(kPBar, 256);
#pragma unroll
      for (int nt = 0; nt < kBlockM / 8; ++nt) {
        const float4 f4 = pf[nt * 128];
        const float f[4] = {f4.x, f4.y, f4.z, f4.w};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
{% if dropout %}
          const float dl = sDf[slot * kBlockM + nt * 8 + 2 * qd + e] * p.dropout_keep; // (1 - p) delta
{% else %}
          const float dl = sDf[slot * kBlockM + nt * 8 + 2 * qd + e];
{% end %}
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const float fe = f[2 * hh + e];
{% if dropout %}
            st[nt][2 * hh + e] = fe < 0.f ? fe * dl : fe * (st[nt][2 * hh + e] - dl);
{% else %}
            st[nt][2 * hh + e] = fe * (st[nt][2 * hh + e] - dl);
{% end %}
          }
        }
      }
    }

    // P^T Z (warpgroup 0) or dS^T (1) rounded to {{ dtype }}: two n8 query tiles of
    // the accumulator are the A fragment of one k16 step. dS^T also goes to
    // shared memory for the dQ step, unless fa2_bwd_dq_det computes dQ.
    unsigned a[kSQSteps][4];
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs) {
      a_frag(st[2 * qs], st[2 * qs + 1], a[qs]);
      if (wg == 1 && !p.deterministic) store_sw_frag(sSp, a[qs], key_row + g, qs * 2, qd);
    }

    // dV += P^T dO (warpgroup 0) or dK += dS^T Q (1): dO and Q rows (queries)
    // 128 bytes apart, 64-column blocks kBlockM * 128 bytes apart. (Left in
    // flight while dQ runs, it was no faster and spilled with varlen + window.)
    const unsigned sBm = wg == 0 ? sdOt : sQt;
    fence_regs(acc);
    wgmma_fence();
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_rs_n{{ head_dim }}(acc, a[qs], sw128_desc(sBm + qs * 16 * 128, kBlockM * 128));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(acc);
    keep_regs(a);
    if (p.deterministic) continue; // (uniform: the barriers below stay matched)
    fence_proxy_async(); // dS^T stores -> wgmma reads
    __syncthreads();     // dS^T complete in shared memory

    // dQ (64 queries x this warpgroup's columns) = dS K over the block's keys:
    // A = dS^T read transposed (queries contiguous), B = K's rows.
{% for w, n in ipairs({ dqn0, head_dim - dqn0 }) %}
    {{ w == 1 and "if (wg == 0) {" or "} else {" }} // columns {{ (w - 1) * dqn0 }}..{{ (w - 1) * dqn0 + n - 1 }}
      float dq[{{ n // 8 }}][4];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk)
        wgmma_tt_n{{ n }}(dq, sw128_desc(sSs + kk * 16 * 128, kBlockN * 128),
                          sw128_desc(sKs + {{ (w - 1) * dqn0 // 64 }} * kBlockN * 128 + kk * 16 * 128, kBlockN * 128), kk > 0);
      wgmma_commit();
      wgmma_wait<0>();
      fence_regs(dq);
      const int q0 = m0 + (warp % 4) * 16; // the warp's rows; staged in P^T's factor buffer, free until the next step
      add_dq_rows<{{ n }}>(p.dq_accum + (({{ QROW0 }} + q0) * p.heads_q + h) * kHeadDim + {{ (w - 1) * dqn0 }},
                          (long long)p.heads_q * kHeadDim, {{ SQ }} - q0, smem + (sPF - sK) + warp * 2048, dq, lane);
{% end %}
    }
  }

{% else %}

{% if overlap %}
    wgmma_wait<0>(); // dP^T has landed
    fence_regs(dpt);

    // dS^T = P^T (dP^T - delta), rounded to {{ dtype }} as each k16 step completes (two
    // n8 query tiles of the accumulator are its A fragment), also to shared memory
    // for the dQ step unless fa2_bwd_dq_det computes dQ.
    unsigned as[kSQSteps][4];
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs) {
#pragma unroll
      for (int nt = 2 * qs; nt < 2 * qs + 2; ++nt)
        ds_tile(dpt[nt], st[nt], sDf + slot * kBlockM, nt, qd);
      a_frag(dpt[2 * qs], dpt[2 * qs + 1], as[qs]);
      if (!p.deterministic) store_sw_frag(sSp, as[qs], key_row + g, qs * 2, qd);
    }
{% else %}
    // P^T and dS^T rounded to {{ dtype }}: two n8 query tiles of the accumulator
    // are the A fragment of one k16 step. dS^T also goes to shared memory for
    // the dQ step, unless fa2_bwd_dq_det computes dQ.
    unsigned ap[kSQSteps][4], as[kSQSteps][4];
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs) {
      a_frag(st[2 * qs], st[2 * qs + 1], ap[qs]);
      a_frag(dpt[2 * qs], dpt[2 * qs + 1], as[qs]);
      if (!p.deterministic) store_sw_frag(sSp, as[qs], key_row + g, qs * 2, qd);
    }
{% end %}

    // dV += P^T dO and dK += dS^T Q: dO and Q rows (queries) 128 bytes apart,
    // 64-column blocks kBlockM * 128 bytes apart.
    fence_regs(acc_v);
    fence_regs(acc_k);
    wgmma_fence();
{% if desc_once %}
    const unsigned ddOm = sw128_lo(sdOt, kBlockM * 128), dQm = sw128_lo(sQt, kBlockM * 128);
{% end %}
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_rs_n{{ head_dim }}(acc_v, ap[qs], {{ DESC("ddOm", "sdOt", "kBlockM * 128", "qs * 16 * 128") }});
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_rs_n{{ head_dim }}(acc_k, as[qs], {{ DESC("dQm", "sQt", "kBlockM * 128", "qs * 16 * 128") }});
    wgmma_commit();
    // dQ's MMAs are issued while dV's and dK's run (dq's registers beside P^T's and
    // dS^T's): one wait for the three.
    if (p.deterministic) { // (uniform: the barriers below stay matched)
      wgmma_wait<0>();
      fence_regs(acc_v);
      fence_regs(acc_k);
      keep_regs(ap);
      keep_regs(as);
      continue;
    }
    fence_proxy_async(); // dS^T stores -> wgmma reads
    __syncthreads();     // dS^T complete in shared memory

{% if dq_split %}
    // dQ (64 queries x all 64 columns) = dS K over this warpgroup's 64 keys: A =
    // its rows of dS^T read transposed (queries contiguous), B = its rows of K.
    float dq[kHeadDim / 8][4];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_tt_n{{ head_dim }}(dq, sw128_desc(sSs + (wg * 4 + kk) * 16 * 128, kBlockN * 128),
                         sw128_desc(sKs + (wg * 4 + kk) * 16 * 128, kBlockN * 128), kk > 0);
{% else %}
    // dQ (64 queries x kDQN columns of this warpgroup) = dS K over the block's
    // keys: A = dS^T read transposed (queries contiguous), B = K's rows.
    float dq[kDQN / 8][4];
{% if desc_once %}
    const unsigned dS = sw128_lo(sSs, kBlockN * 128), dKq = sw128_lo(sKs + wg * (kDQN / 64) * kBlockN * 128, kBlockN * 128);
{% end %}
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      wgmma_tt_n{{ head_dim // (warps // 4) }}(dq, {{ DESC("dS", "sSs", "kBlockN * 128", "kk * 16 * 128") }},
                         {{ DESC("dKq", "sKs + wg * (kDQN / 64) * kBlockN * 128", "kBlockN * 128", "kk * 16 * 128") }}, kk > 0);
{% end %}
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(dq);
    fence_regs(acc_v);
    fence_regs(acc_k);
    keep_regs(ap);
    keep_regs(as);
{% if dq_split %}
    // The other warpgroup's columns go to it through this warpgroup's rows of dS^T
    // (its MMA alone read them), thread to thread ([n8 tile][thread] float4s), and
    // it adds them to its own: each warpgroup adds kDQN columns of the 128 keys' sum.
    float4 *mine = (float4 *)(sSp + wg * 64 * 128) + tid % 128;
    const float4 *theirs = (const float4 *)(sSp + (1 - wg) * 64 * 128) + tid % 128;
    // (the halves picked by selects: an index by wg would put dq in local memory)
    constexpr int kH = kDQN / 8;
#pragma unroll
    for (int dt = 0; dt < kH; ++dt)
      mine[dt * 128] = wg == 0 ? make_float4(dq[kH + dt][0], dq[kH + dt][1], dq[kH + dt][2], dq[kH + dt][3])
                               : make_float4(dq[dt][0], dq[dt][1], dq[dt][2], dq[dt][3]);
    bar_sync(kXchBar, 256);
    float dqs[kH][4];
#pragma unroll
    for (int dt = 0; dt < kH; ++dt) {
      const float4 y = theirs[dt * 128];
#pragma unroll
      for (int e = 0; e < 4; ++e) dqs[dt][e] = wg == 0 ? dq[dt][e] : dq[kH + dt][e];
      dqs[dt][0] += y.x, dqs[dt][1] += y.y, dqs[dt][2] += y.z, dqs[dt][3] += y.w;
    }
    const int q0 = m0 + (warp % 4) * 16; // staged in this step's Q (warpgroup 0) or dO tile (1)
    add_dq_rows<kDQN>(p.dq_accum + (({{ QROW0 }} + q0) * p.heads_q + h) * kHeadDim + wg * kDQN,
                      (long long)p.heads_q * kHeadDim, {{ SQ }} - q0,
                      smem + ((wg == 0 ? sQt : sdOt) - sK) + (warp % 4) * 2048, dqs, lane);
{% elif window and softcap %}
    // v2 adds of the accumulator's pairs (with a window and softcap the staging's
    // registers spill at 255: 32 bytes)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int q = m0 + (warp % 4) * 16 + hh * 8 + g;
      if (q >= {{ SQ }}) continue;
      float *dst = p.dq_accum + (({{ QROW0 }} + q) * p.heads_q + h) * kHeadDim + wg * kDQN + 2 * qd;
#pragma unroll
      for (int dt = 0; dt < kDQN / 8; ++dt) add2(dst + dt * 8, dq[dt][2 * hh], dq[dt][2 * hh + 1]);
    }
{% else %}
    const int q0 = m0 + (warp % 4) * 16; // the warp's rows; staged in this step's Q tile, free until the next step
    add_dq_rows<kDQN>(p.dq_accum + (({{ QROW0 }} + q0) * p.heads_q + h) * kHeadDim + wg * kDQN,
                      (long long)p.heads_q * kHeadDim, {{ SQ }} - q0, smem + (sQt - sK) + warp * 2048, dq, lane);
{% end %}
  }

{% end %}
  // dK = scale * dS^T Q, dV = P^T dO for this warp's keys, in {{ dtype }}.
  cp_async_wait<0>();
  elem_t *dkp = (elem_t *)p.dk + {{ BASE("dk") }} + kv_head * p.dk_head_stride;
  elem_t *dvp = (elem_t *)p.dv + {{ BASE("dv") }} + kv_head * p.dv_head_stride;
{% if pair %}
  elem_t *dst = wg == 0 ? dvp : dkp; // dV (warpgroup 0) or dK (1)
  const long long row_stride = wg == 0 ? p.dv_row_stride : p.dk_row_stride;
  const float f = wg == 0 ? {{ dropout and "p.dropout_scale" or "1.f" }} : {{ dropout and "p.scale * p.dropout_scale" or "p.scale" }};
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int key = n0 + key_row + hh * 8 + g;
    if (key >= {{ SK }}) continue;
#pragma unroll
    for (int dt = 0; dt < kDTiles; ++dt)
      {{ padded and "if (dt * 8 < kTensorDim) " or "" }}*(unsigned *)(dst + key * row_stride + dt * 8 + 2 * qd) = pack2(acc[dt][2 * hh] * f, acc[dt][2 * hh + 1] * f);
  }
{% else %}
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int key = n0 + key_row + hh * 8 + g;
    if (key >= {{ SK }}) continue;
#pragma unroll
    for (int dt = 0; dt < kDTiles; ++dt) {
      const int col = dt * 8 + 2 * qd;
{% if padded %}
      if (dt * 8 >= kTensorDim) continue; // past the tensors' head dim
{% end %}
{% if dropout %}
      const float dk_scale = p.scale * p.dropout_scale, dv_scale = p.dropout_scale; // 1 / (1 - p)
      *(unsigned *)(dkp + key * p.dk_row_stride + col) =
          pack2(acc_k[dt][2 * hh] * dk_scale, acc_k[dt][2 * hh + 1] * dk_scale);
      *(unsigned *)(dvp + key * p.dv_row_stride + col) =
          pack2(acc_v[dt][2 * hh] * dv_scale, acc_v[dt][2 * hh + 1] * dv_scale);
{% else %}
      *(unsigned *)(dkp + key * p.dk_row_stride + col) =
          pack2(acc_k[dt][2 * hh] * p.scale, acc_k[dt][2 * hh + 1] * p.scale);
      *(unsigned *)(dvp + key * p.dv_row_stride + col) = pack2(acc_v[dt][2 * hh], acc_v[dt][2 * hh + 1]);
{% end %}
    }
  }
{% end %}
}
