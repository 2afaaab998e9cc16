{# fa2_bwd warp-specialized for Hopper (sm_90a), included by bwd.cu.tpl for ws tiles. #}
{# SQ, SK, BASE, LSE, HIDDEN, I_BEGIN, QROW0: set by tensor_index.tpl and bwd.cu.tpl. #}
{# dQ by the block's dS (shared_ds, two 64-column blocks: FA3's way, 1.04-1.12x each warpgroup's own #}
{# on the H200, bench/NOTES.md "Session 26") or by each warpgroup's (one block: its dQ's columns #}
{# would split a swizzled block). #}
{% local shared_ds = head_dim > 64 %}
{# Past d = 128 the MMA warpgroups share 64 keys (bwd_ws_wide.cuh.tpl) and add dQ themselves: #}
{# Q and dO double-buffered leave no room for its staging. #}
{% local wide = head_dim > 128 %}
{# d = 64: K's and V's A fragments of S^T and dP^T in registers, read once (32 of them; 32 KB #}
{# less shared-memory reads a step, 1.02-1.06x, bench/NOTES.md "Session 27"). d = 128's would #}
{# take 64 registers the warpgroups lack. #}
{% local kv_regs = head_dim == 64 %}
{# TMA coordinates: varlen maps are one batch of every sequence's rows (rt_tma_bwd_maps). #}
{% local QROW = varlen and "seq_q0 + m0" or "m0" %}
{% local KROW = varlen and "seq_k0 + n0" or "n0" %}
{% local TBATCH = varlen and "0" or "batch" %}
{# A persistent grid's steps are counted over its walk (T) for the stage slots' parities and dS^T's buffers. #}
{# P^T's A fragments of k16 step qs for dV: P^T Z with dropout (bwd.cu.tpl's arrangement). #}
{% local AP_FRAG = dropout and "a_frag_kept(st[2 * qs], st[2 * qs + 1], kept, 2 * qs, ap[qs])" or "a_frag(st[2 * qs], st[2 * qs + 1], ap[qs])" %}
{% local STEP = persistent and "T" or "t" %}
// ---- fa2_bwd, warp-specialized (templates/bwd_ws.cuh.tpl) -----------------------
{% if persistent %}
// A persistent grid (one block an SM, rt_launch_bwd) whose blocks walk key blocks of 128 of
// one (kv head, batch) each in turn (ws_walk_at), with the loads and dQ's global adds taken
// off the MMA warps; each block's K and V load while the last one's dK and dV are stored:
{% elif wide %}
// One block per (key block of 64, kv head, batch), as bwd_wgmma.cuh.tpl's pair, with
// its loads taken off the MMA warps:
{% else %}
// One block per (key block of 128, kv head, batch), as bwd_wgmma.cuh.tpl, with its
// loads and dQ's global adds taken off the MMA warps:
{% end %}
//   Producer warp: K and V once, then per step (query head, block of 64 queries)
//     Q, dO, LSE and delta with TMA into stage slots (templates/hopper.cuh.tpl).
{% if wide %}
//   Two MMA warpgroups sharing the 64 keys (templates/bwd_ws_wide.cuh.tpl).
{% else %}
//   MMA warpgroup w (keys 64w .. 64w+63: their dK and dV in registers), per step:
//     S^T = K Q^T, dP^T = V dO^T{{ kv_regs and " (K, V as register fragments)" or "" }} | P^T = exp2(S^T c - LSE) while dP^T runs |
{% if shared_ds %}
//     dS^T = P^T (dP^T - delta), also into shared memory | dV += P^T dO, dK +=
//     dS^T Q | frees the slot | both warpgroups' dS^T stored (a barrier of the
//     two) | dQ's 64 columns of warpgroup w = dS K over the block's 128 keys,
//     into the fp32 staging buffer.
//   dQ warps (the producer warpgroup's other three): per step, the staged dQ added
//     to dq_accum (red.v4 over whole rows).
// dS^T is double-buffered: a warpgroup writes step t's while the other may still
// read step t - 1's. (Half the staging traffic of each warpgroup's own dQ: shared
// memory's bandwidth is what the step waits on, L1/TEX 77 % busy against the tensor
// pipe's 48 %.)
{% else %}
//     dS^T = P^T (dP^T - delta) | dV += P^T dO, dK += dS^T Q | frees the slot |
//     dQ_w = dS K over its own 64 keys (dS^T through shared memory) into its
//     fp32 staging buffer.
//   dQ warps (the producer warpgroup's other three): per step, the two warpgroups'
//     partial dQ added together and to dq_accum (red.v4 over whole rows).
// The warpgroups meet only through the dQ warps (one buffer each): one can run up
// to a step ahead of the other, so one's exponentials overlap the other's MMAs.
{% end %}
{% end %}
{% if dropout %}
// Dropout: each step's keep bits are drawn while S^T and dP^T run; dV takes P^T Z, dS^T
// dP^T Z and (1 - p) delta, dK and dQ 1 / (1 - p) at the end (bwd.cu.tpl's arrangement).
{% end %}
constexpr int kMma = 2;                        // MMA warpgroups
{% if wide %}
static_assert(kWarps == 4 * (kMma + 1) && kBlockN == 64 && kBlockM == 64 && (kHeadDim == 192 || kHeadDim == 256),
              "wide ws backward tile rules");
{% else %}
static_assert(kWarps == 4 * (kMma + 1) && kBlockN == 64 * kMma && kBlockM == 64, "ws backward tile rules");
static_assert(kHeadDim % 64 == 0 && kHeadDim <= 128, "ws backward: 64 or 128 columns");
{% end %}
constexpr int kSwKV = kBlockN * kHeadDim * 2;  // bytes of a swizzled K or V tile
constexpr int kSwQ = kBlockM * kHeadDim * 2;   // ... of a Q or dO tile
{% if wide %}
constexpr int kSwP = kBlockM * kBlockN * 2;    // ... of P or dS (64 queries x 64 keys)
{% else %}
constexpr int kSwS = 64 * kBlockM * 2;         // ... of a warpgroup's dS^T (its keys x 64 queries)
{% end %}
{% if shared_ds and not wide %}
constexpr int kSwSAll = kBlockN * kBlockM * 2; // ... of the block's (two buffers)
{% end %}
constexpr int kColBlocks = kHeadDim / 64;      // 64-column blocks: one TMA box each
constexpr int kSQSteps = kBlockM / 16;         // k16 query steps of dV, dK
{% if wide %}
static_assert(kMainSmem == 1024 + 2 * kSwKV + 2 * kStages * kSwQ + 4 * kSwP + 2 * kStages * kVec + 256,
              "bwd.cu.tpl's kMainSmem is this layout");
static_assert(kSwKV % 1024 == 0 && kSwQ % 1024 == 0 && kSwP % 1024 == 0, "swizzled tiles on 1024-byte boundaries");
{% else %}
constexpr int kDQPitch = (kHeadDim + 8) * 4;   // bytes per row of a dQ staging buffer (no bank conflicts)
constexpr int kDQBuf = kBlockM * kDQPitch;
constexpr int kDQThreads = 96;                 // the dQ warps
static_assert(kMainSmem == 1024 + 2 * kSwKV + 2 * kStages * kSwQ + kMma * (kSwS + kDQBuf) + 2 * kStages * kVec + 256,
              "bwd.cu.tpl's kMainSmem is this layout");
static_assert(kSwKV % 1024 == 0 && kSwQ % 1024 == 0 && kSwS % 1024 == 0 && kDQBuf % 128 == 0,
              "swizzled tiles on 1024-byte boundaries, TMA destinations on 128");
{% end %}
// Register budgets (setmaxnreg), as fwd_ws.cu.tpl: the MMA warpgroups take 240.
constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
constexpr int kMmaRegs = {{ wide and "240; // (dK, dV and dQ of 128 columns: 192 of them)" or "kHeadDim == 128 ? 240 : 232; // (d = 128's dK and dV: 128 of them)" }}
constexpr int kProducerRegs = (kLaunchRegs * kThreads - kMmaRegs * 128 * kMma) / 128 / 8 * 8;
static_assert(kProducerRegs >= 24, "register budgets");
{% if wide %}
constexpr int kDSBar = 1; // named barrier: both warpgroups' P and dS stored
{% else %}
// Named barriers: warpgroup w's dQ staged (kDQFull + w) and read (kDQEmpty + w),
// {{ shared_ds and "the block's dS^T stored (kDSBar)." or "its dS^T stored (kDSBar + w)." }}
constexpr int kDQFull = 1, kDQEmpty = 1 + kMma, kDSBar = 1 + 2 * kMma;
constexpr int kDQMeet = 128 + kDQThreads;
{% end %}

// The kernel's TMA maps (runtime/rt_tma.c rt_tma_bwd_maps, the same layout): Q, K,
// V and dO as the forward's; LSE and delta as fa2_bwd_pre's flat copies in rows padded
// to 64 (ws_pad: a TMA box starts on 16 bytes), boxes of 64.
struct fa2_bwd_maps {
  fa2_tmap q, k, v, dout, lse, delta;
};
{% if persistent %}

// The persistent walk: item w (blockIdx.x, then every gridDim.x-th) is key blocks j and
// nb - 1 - j (j = w % pairs) of one (kv head, batch); a causal item's two blocks see about
// nb + 1 query blocks together, so items cost alike and the blocks' shares match. Step s
// of a block's walk: n_block -1 past its last item, -2 for an odd nb's middle block twice.
// (Worked out afresh each block from opaque reads of the parameters and %nctaid: hoisted
// out of the walk, its invariants stayed live beside the dQ warps' loop and spilled at
// their 24 registers.)
struct ws_walk {
  int n_block, kv_head, batch, diag; // (diag: the causal offset of fixed lengths, bwd_block.cuh.tpl's)
};
__device__ __forceinline__ ws_walk ws_walk_at(const fa2_bwd_params &p, int s) {
  const int seqlen_k = (int)per_step((unsigned)p.seqlen_k), heads_kv = (int)per_step((unsigned)p.heads_kv);
  const int batch = (int)per_step((unsigned)p.batch);
  const int nb = (seqlen_k + kBlockN - 1) / kBlockN, pairs = (nb + 1) / 2;
  unsigned grid;
  asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(grid));
  const int w = blockIdx.x + (s >> 1) * (int)grid, j = w % pairs, jj = nb - 1 - j;
  ws_walk b;
  b.kv_head = w / pairs % heads_kv;
  b.batch = w / pairs / heads_kv;
  b.diag = seqlen_k - (int)per_step((unsigned)p.seqlen_q);
  b.n_block = w >= pairs * heads_kv * batch ? -1 : (s & 1) == 0 ? j : jj == j ? -2 : jj;
  return b;
}
{% end %}

__device__ __forceinline__ void tma_load_1d(unsigned dst, const fa2_tmap &map, int c0, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, { %2 }], [%3];\n" ::"r"(dst), "l"(&map), "r"(c0), "r"(bar)
               : "memory");
}

{% set DS_TILE = true %}
{% include "bwd_frags.cuh.tpl" %}
{% if kv_regs %}
// The A fragments of the 4 k16 steps of the warp's 16 rows (from row r) of a
// swizzled K or V tile (kBlockN rows of 64 columns).
__device__ __forceinline__ void load_a_frags(const unsigned char *s, int r, int g, int qd, unsigned (&a)[4][4]) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    a[ks][0] = *(const unsigned *)(s + sw128_offset<kBlockN>(r + g, 2 * ks) + qd * 4);
    a[ks][1] = *(const unsigned *)(s + sw128_offset<kBlockN>(r + g + 8, 2 * ks) + qd * 4);
    a[ks][2] = *(const unsigned *)(s + sw128_offset<kBlockN>(r + g, 2 * ks + 1) + qd * 4);
    a[ks][3] = *(const unsigned *)(s + sw128_offset<kBlockN>(r + g + 8, 2 * ks + 1) + qd * 4);
  }
}
{% end %}
__device__ __forceinline__ void st_shared2(unsigned addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], { %1, %2 };\n" ::"r"(addr), "f"(a), "f"(b) : "memory");
}

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    fa2_bwd(const fa2_bwd_params p, const __grid_constant__ fa2_bwd_maps maps) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (in the shared window).
  unsigned char *smem = smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);
  const int tid = threadIdx.x, wg = tid / 128;

  const unsigned sK = smem_addr(smem);
  const unsigned sV = sK + kSwKV;
  const unsigned sQ = sV + kSwKV;
  const unsigned sdO = sQ + kStages * kSwQ;
{% if wide %}
  const unsigned sP = sdO + kStages * kSwQ;  // P, two buffers
  const unsigned sS = sP + 2 * kSwP;         // dS, two buffers
  const unsigned sL = sS + 2 * kSwP;         // LSE rows, then delta rows, per stage
{% elif shared_ds %}
  const unsigned sS = sdO + kStages * kSwQ;  // dS^T, two buffers of the block's
  const unsigned sDQ = sS + 2 * kSwSAll;     // dQ staging
  const unsigned sL = sS + kMma * (kSwS + kDQBuf); // LSE rows, then delta rows, per stage
  static_assert(2 * kSwSAll + kDQBuf <= kMma * (kSwS + kDQBuf), "within bwd.cu.tpl's kMainSmem");
{% else %}
  const unsigned sS = sdO + kStages * kSwQ;  // dS^T, warpgroup by warpgroup
  const unsigned sDQ = sS + kMma * kSwS;     // dQ staging, warpgroup by warpgroup
  const unsigned sL = sDQ + kMma * kDQBuf;   // LSE rows, then delta rows, per stage
{% end %}
  const unsigned sD = sL + kStages * kVec;
{% if persistent %}
  const unsigned kv_full = sD + kStages * kVec, kv_empty = kv_full + 8, q_full = kv_empty + 8;
  const unsigned q_empty = q_full + 8 * kStages;
  static_assert(8 * (2 + 2 * kStages) <= 256, "mbarriers fit their 256 bytes");
{% else %}
  const unsigned kv_full = sD + kStages * kVec, q_full = kv_full + 8, q_empty = q_full + 8 * kStages;
  static_assert(8 * (1 + 2 * kStages) <= 256, "mbarriers fit their 256 bytes");
{% end %}
  if (tid == 0) {
    mbar_init(kv_full, 1);
{% if persistent %}
    mbar_init(kv_empty, 4 * kMma); // every MMA warp is done with the block's K and V
{% end %}
    for (int s = 0; s < kStages; ++s) {
      mbar_init(q_full + 8 * s, 1);
      mbar_init(q_empty + 8 * s, 4 * kMma); // every MMA warp is done with the slot
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == kMma) { // ---- producer warpgroup: the loads (warp 0), dQ's adds (warps 1-3)
    regs_release<kProducerRegs>();
{% if persistent %}
    // (each role walks the blocks after its setmaxnreg: values live across one spill)
    const int warp = tid / 32, lane = tid % 32;
    if (warp == 4 * kMma) { // each block's K and V, each step's Q, dO, LSE and delta by TMA
      if (lane == 0) {
        tma_prefetch(maps.q);
        tma_prefetch(maps.dout);
        for (int s = 0, n = 0, T = 0;; ++s) { // (n: blocks loaded, T: steps)
          const ws_walk walk = ws_walk_at(p, s);
          if (walk.n_block == -1) break;
          if (walk.n_block == -2) continue;
{% include "bwd_block.cuh.tpl" %}
          if (n_steps == 0) continue;
          if (n > 0) mbar_wait(kv_empty, (n - 1) & 1); // the warpgroups are done with the last block's K and V
          ++n;
          mbar_arrive_tx(kv_full, 2 * kSwKV);
#pragma unroll
          for (int cb = 0; cb < kColBlocks; ++cb) {
            tma_load(sK + cb * kBlockN * 128, maps.k, cb * 64, {{ KROW }}, kv_head, {{ TBATCH }}, kv_full);
            tma_load(sV + cb * kBlockN * 128, maps.v, cb * 64, {{ KROW }}, kv_head, {{ TBATCH }}, kv_full);
          }
{% if varlen %}
          const int first = ws_start(p, batch), span = ws_span(p); // the sequence's padded LSE rows, a head's
{% else %}
          const int n_pad = ws_rows(p.seqlen_q);
{% end %}
          for (int left = n_steps, h = kv_head * group, i_q = 0; left > 0; --left, ++T, i_q = i_q + 1 == n_i ? 0 : i_q + 1, h += i_q == 0) {
            const int m0 = (i_begin + i_q) * kBlockM, slot = T % kStages;
            mbar_wait(q_empty + 8 * slot, ((T / kStages) & 1) ^ 1); // every MMA warp freed it
            mbar_arrive_tx(q_full + 8 * slot, 2 * kSwQ + 2 * kVec);
#pragma unroll
            for (int cb = 0; cb < kColBlocks; ++cb) {
              tma_load(sQ + slot * kSwQ + cb * kBlockM * 128, maps.q, cb * 64, {{ QROW }}, h, {{ TBATCH }}, q_full + 8 * slot);
              tma_load(sdO + slot * kSwQ + cb * kBlockM * 128, maps.dout, cb * 64, {{ QROW }}, h, {{ TBATCH }}, q_full + 8 * slot);
            }
            const int row = {{ varlen and "h * span + first + m0" or "(batch * p.heads_q + h) * n_pad + m0" }}; // (TMA coordinates are 32-bit)
            tma_load_1d(sL + slot * kVec, maps.lse, row, q_full + 8 * slot);
            tma_load_1d(sD + slot * kVec, maps.delta, row, q_full + 8 * slot);
          }
        }
      }
{% else %}
    // (each role works out its block after its setmaxnreg: values live across one spill)
    const int warp = tid / 32, lane = tid % 32;
{% include "bwd_block.cuh.tpl" %}
    if (warp == 4 * kMma) { // K, V, then each step's Q, dO, LSE and delta by TMA
      if (lane == 0 && n_steps > 0) {
        tma_prefetch(maps.q);
        tma_prefetch(maps.dout);
        mbar_arrive_tx(kv_full, 2 * kSwKV);
#pragma unroll
        for (int cb = 0; cb < kColBlocks; ++cb) {
          tma_load(sK + cb * kBlockN * 128, maps.k, cb * 64, {{ KROW }}, kv_head, {{ TBATCH }}, kv_full);
          tma_load(sV + cb * kBlockN * 128, maps.v, cb * 64, {{ KROW }}, kv_head, {{ TBATCH }}, kv_full);
        }
{% if varlen %}
        const int first = ws_start(p, batch), span = ws_span(p); // the sequence's padded LSE rows, a head's
{% else %}
        const int n_pad = ws_rows(p.seqlen_q);
{% end %}
        for (int t = 0, h = kv_head * group, i_q = 0; t < n_steps; ++t, i_q = i_q + 1 == n_i ? 0 : i_q + 1, h += i_q == 0) {
          const int m0 = (i_begin + i_q) * kBlockM, slot = t % kStages;
          mbar_wait(q_empty + 8 * slot, ((t / kStages) & 1) ^ 1); // every MMA warp freed it
          mbar_arrive_tx(q_full + 8 * slot, 2 * kSwQ + 2 * kVec);
#pragma unroll
          for (int cb = 0; cb < kColBlocks; ++cb) {
            tma_load(sQ + slot * kSwQ + cb * kBlockM * 128, maps.q, cb * 64, {{ QROW }}, h, {{ TBATCH }}, q_full + 8 * slot);
            tma_load(sdO + slot * kSwQ + cb * kBlockM * 128, maps.dout, cb * 64, {{ QROW }}, h, {{ TBATCH }}, q_full + 8 * slot);
          }
          const int row = {{ varlen and "h * span + first + m0" or "(batch * p.heads_q + h) * n_pad + m0" }}; // (TMA coordinates are 32-bit)
          tma_load_1d(sL + slot * kVec, maps.lse, row, q_full + 8 * slot);
          tma_load_1d(sD + slot * kVec, maps.delta, row, q_full + 8 * slot);
        }
      }
{% end %}
{% if not wide %}
    } else if (!p.deterministic) {
      // dQ warps: the step's dQ{{ shared_ds and "" or " (the two warpgroups' partials summed)" }} added to dq_accum
      // in 16-byte units, each thread one column unit of every kPass-th row (a warp's
      // units cover whole rows). Counters, not divisions, and one pointer: 24 registers.
      constexpr int kUnits = kHeadDim / 4, kPass = kDQThreads / kUnits;
      static_assert(kDQThreads % kUnits == 0, "the dQ warps cover whole rows");
{% if persistent %}
      const int dtid = tid - 32 * (4 * kMma + 1);
      const unsigned buf0 = sDQ + dtid / kUnits * kDQPitch + (dtid % kUnits) * 16;
      // the thread's first row of a step's, from %tid.x afresh each step (kept, it spilled
      // beside the walk at the warps' 24 registers)
      const auto dq_row0 = [] {
        unsigned x;
        asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
        return ((int)x - 32 * (4 * kMma + 1)) / kUnits;
      };
      for (int s = 0;; ++s) { // (the walk's blocks: their steps' loop below, not indented)
        const ws_walk walk = ws_walk_at(p, s);
        if (walk.n_block == -1) break;
        if (walk.n_block == -2) continue;
{% include "bwd_block.cuh.tpl" %}
{% else %}
      const int dtid = tid - 32 * (4 * kMma + 1), r0 = dtid / kUnits;
      const unsigned buf0 = sDQ + r0 * kDQPitch + (dtid % kUnits) * 16;
{% end %}
      for (int left = n_steps, h = kv_head * group, i_q = 0; left > 0; --left, i_q = i_q + 1 == n_i ? 0 : i_q + 1, h += i_q == 0) {
        const int m0 = (i_begin + i_q) * kBlockM;
        const int rows = min(kBlockM, {{ SQ }} - m0);
        const int row = {{ varlen and "seq_q0" or "batch * p.seqlen_q" }} + m0 + {{ persistent and "dq_row0()" or "r0" }}; // (32-bit: a 64-bit product spilled)
        float *dst = p.dq_accum + ((long long)row * p.heads_q + h) * kHeadDim + (dtid % kUnits) * 4;
#pragma unroll
        for (int w = 0; w < kMma; ++w) bar_sync(kDQFull + w, kDQMeet);
        const unsigned src_end = sDQ + rows * kDQPitch; // (past the step's last row)
        for (unsigned src = buf0; src < src_end; src += kPass * kDQPitch, dst += (long long)kPass * p.heads_q * kHeadDim) {
          float4 a;
          asm volatile("ld.shared.v4.f32 { %0, %1, %2, %3 }, [%4];\n"
                       : "=f"(a.x), "=f"(a.y), "=f"(a.z), "=f"(a.w) : "r"(src) : "memory");
{% if shared_ds %}
          add4(dst, a);
{% else %}
          float4 b;
          asm volatile("ld.shared.v4.f32 { %0, %1, %2, %3 }, [%4];\n"
                       : "=f"(b.x), "=f"(b.y), "=f"(b.z), "=f"(b.w) : "r"(src + kDQBuf) : "memory");
          add4(dst, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
{% end %}
        }
{% if persistent %}
#pragma unroll
        for (int w = 0; w < kMma; ++w) bar_arrive(kDQEmpty + w, kDQMeet); // (the warpgroups meet the last at their end)
      }
      }
{% else %}
        if (left > 1) // (the warpgroups wait for it from their second step on)
#pragma unroll
          for (int w = 0; w < kMma; ++w) bar_arrive(kDQEmpty + w, kDQMeet);
      }
{% end %}
{% end %}
    }
    return;
  }

{% if wide %}
{% include "bwd_ws_wide.cuh.tpl" %}
{% else %}
  // ---- MMA warpgroups --------------------------------------------------------------
  regs_claim<kMmaRegs>();
  const int warp = tid / 32, lane = tid % 32;
{% if not persistent %}
{% include "bwd_block.cuh.tpl" %}
{% end %}
  const int g = lane / 4, qd = lane % 4;
  const int key_row = warp * 16;                 // this warp's 16 keys in the block
  const int wrow = (warp % 4) * 16;              // ... in its warpgroup's 64
  const unsigned sKw = sK + wg * 64 * 128, sVw = sV + wg * 64 * 128; // its warpgroup's 64 keys
  unsigned char *sSw = smem + (sS - sK) + wg * kSwS;
  const float *sLf = (const float *)(smem + (sL - sK));
  const float *sDf = (const float *)(smem + (sD - sK));
  const float c = p.scale * 1.44269504f;         // scores -> log2 units
{% if persistent %}
  int T = 0, n = 0; // steps and blocks so far, as the producer counts them
  for (int s = 0;; ++s) { // (the walk's blocks: their body below, not indented)
    const ws_walk walk = ws_walk_at(p, s);
    if (walk.n_block == -1) break;
    if (walk.n_block == -2) continue;
{% include "bwd_block.cuh.tpl" %}
{% end %}
  float acc_v[kDTiles][4], acc_k[kDTiles][4];    // dV and dK of the warp's keys
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_v[dt][e] = acc_k[dt][e] = 0.f;

  if (n_steps > 0) mbar_wait(kv_full, {{ persistent and "n & 1" or "0" }});
{% if kv_regs %}
  unsigned kf[4][4], vf[4][4]; // the warp's 16 keys of K and V as A fragments
  load_a_frags(smem, key_row, g, qd, kf);
  load_a_frags(smem + kSwKV, key_row, g, qd, vf);
{% end %}
  for (int t = 0; t < n_steps; ++t{{ persistent and ", ++T) { // (t: the block's step, T: the walk's)" or ") {" }}
    const int slot = {{ STEP }} % kStages;
    const int m0 = (i_begin + t % n_i) * kBlockM;
{% if alibi %}
    // ALiBi: the step's query head's slope (raw units), each score less slope |q + diag - key|
    const float alibi = p.alibi_slopes[batch * p.alibi_batch_stride + kv_head * group + t / n_i] * p.inv_scale;
    const float dist0 = (float)(m0 + 2 * qd + diag - n0 - key_row - g);
{% end %}
    mbar_wait(q_full + 8 * slot, ({{ STEP }} / kStages) & 1);
    const unsigned sQt = sQ + slot * kSwQ, sdOt = sdO + slot * kSwQ;
    const unsigned sKws = per_step(sKw), sVws = per_step(sVw);

    // S^T = K Q^T and dP^T = V dO^T for the warpgroup's 64 keys (fp32), two groups
    float st[kBlockM / 8][4], dpt[kBlockM / 8][4];
    wgmma_fence();
{% if kv_regs %}
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) wgmma_rk_n64(st, kf[ks], sw128_desc(sQt + ks * 32, 16), ks > 0);
    wgmma_commit();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) wgmma_rk_n64(dpt, vf[ks], sw128_desc(sdOt + ks * 32, 16), ks > 0);
    wgmma_commit();
{% else %}
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n{{ block_m }}(st, sw128_desc(sKws + (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16),
                       sw128_desc(sQt + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16), ks > 0);
    wgmma_commit();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
      wgmma_ss_n{{ block_m }}(dpt, sw128_desc(sVws + (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16),
                       sw128_desc(sdOt + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16), ks > 0);
    wgmma_commit();
{% end %}
{% if dropout %}
    // dropout: the keep bits of the warp's 16 keys, unit a per 16 queries (bwd.cu.tpl's
    // mask), drawn while S^T and dP^T run
{% if window %}
    // (g opaque a step: the Philox lane index made of it, hoisted, spilled beside the window's bounds)
{% end %}
    drop_bits<kBlockM / 16> kept;
    {
      unsigned long long drop_seed, drop_base; // (batch, query head)'s Philox key and counter
      dropout_key(p, (long long)batch * p.heads_q + kv_head * group + t / n_i, drop_seed, drop_base);
#pragma unroll 1
      for (int a = 0; a < kBlockM / 16; ++a)
        kept.set(a, dropout_bits_st(drop_seed, drop_base, m0 / 16 + a, (n0 + key_row) / 16, {{ window and "(int)per_step(g)" or "g" }}, qd, p.dropout_limit));
    }
{% end %}
    wgmma_wait<1>(); // S^T has landed; dP^T runs on through P^T's exponentials
    fence_regs(st);

{% if softcap %}
    // softcap: tanh(S^T cap_in) in place while dP^T runs, hidden entries -inf (P^T =
    // exp2(-inf) = 0, dS^T = 0 through 1 - min(tanh^2, 1)); P^T and dS^T come together below.
#pragma unroll
    for (int nt = 0; nt < kBlockM / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) st[nt][e] = tanh_approx(st[nt][e] * p.cap_in);
{% else %}
    // P^T = exp2(S^T c - LSE log2 e), kept for dS^T; masked entries are 0, in a pass of
    // their own on masked steps (tested inside the exponentials' loop, every score's
    // tests were predicated: ~3.5 instructions a score on every step).
#pragma unroll
    for (int nt = 0; nt < kBlockM / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float l2 = sLf[slot * kBlockM + nt * 8 + 2 * qd + e] * 1.44269504f;
#pragma unroll
{% if alibi %}
        for (int hh = 0; hh < 2; ++hh)
          st[nt][2 * hh + e] = exp2_approx(
              fmaf(st[nt][2 * hh + e] - alibi * fabsf(dist0 + (float)(nt * 8 + e - hh * 8)), c, -l2));
{% else %}
        for (int hh = 0; hh < 2; ++hh) st[nt][2 * hh + e] = exp2_approx(fmaf(st[nt][2 * hh + e], c, -l2));
{% end %}
      }
{% end %}
    if (m0 + kBlockM > {{ SQ }} || n0 + kBlockN > {{ SK }} ||
        {{ STEP_EDGE }}) {
#pragma unroll
      for (int nt = 0; nt < kBlockM / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int key = n0 + key_row + hh * 8 + g, q = m0 + nt * 8 + 2 * qd + e;
            if (q >= {{ SQ }} || key >= {{ SK }} || {{ HIDDEN("key", "q") }}) st[nt][2 * hh + e] = {{ softcap and "__int_as_float(0xff800000)" or "0.f" }};
          }
    }
    unsigned ap[kSQSteps][4]; // P^T{{ dropout and " Z (the dropped scores 0)" or "" }} rounded to {{ dtype }} (st keeps {{ dropout and "P^T" or "it" }})
{% if not softcap %}
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs) {{ AP_FRAG }};
{% end %}
    wgmma_wait<0>(); // dP^T has landed
    fence_regs(dpt);

    // dS^T = P^T (dP^T - delta), rounded as each k16 step completes, also to shared
    // memory for dQ unless fa2_bwd_dq_det computes dQ.
    unsigned as[kSQSteps][4];
{% if window %}
    // (the row opaque a step: its 16 swizzled store offsets, hoisted, spilled beside the window's bounds)
    const int ds_row = (int)per_step(wrow + g);
{% end %}
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs) {
{% if softcap %}
#pragma unroll
      for (int nt = 2 * qs; nt < 2 * qs + 2; ++nt) {
        // P^T = exp2(cap_out tanh c - LSE log2 e), dS^T = P^T (dP^T - delta) (1 - tanh^2)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float l2 = sLf[slot * kBlockM + nt * 8 + 2 * qd + e] * 1.44269504f;
          const float dl = sDf[slot * kBlockM + nt * 8 + 2 * qd + e]{{ dropout and " * p.dropout_keep; // (1 - p) delta" or ";" }}
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const float th = st[nt][2 * hh + e]; // (t: the step)
{% if alibi %}
            const float pe = exp2_approx(
                fmaf(p.cap_out * th - alibi * fabsf(dist0 + (float)(nt * 8 + e - hh * 8)), c, -l2));
{% else %}
            const float pe = exp2_approx(fmaf(p.cap_out * th, c, -l2));
{% end %}
            st[nt][2 * hh + e] = pe;
            dpt[nt][2 * hh + e] = pe * ({{ dropout and "(kept_at(kept, nt, 2 * hh + e) ? dpt[nt][2 * hh + e] : 0.f)" or "dpt[nt][2 * hh + e]" }} - dl) * (1.f - fminf(th * th, 1.f));
          }
        }
      }
      {{ AP_FRAG }};
{% else %}
#pragma unroll
      for (int nt = 2 * qs; nt < 2 * qs + 2; ++nt) ds_tile(dpt[nt], st[nt], sDf + slot * kBlockM, nt, qd{{ dropout and ", kept, p.dropout_keep" or "" }});
{% end %}
      a_frag(dpt[2 * qs], dpt[2 * qs + 1], as[qs]);
      if (!p.deterministic) store_sw_frag(sSw{{ shared_ds and " + (" .. STEP .. " & 1) * kSwSAll" or "" }}, as[qs], {{ window and "ds_row" or "wrow + g" }}, qs * 2, qd);
    }

    // dV += P^T dO and dK += dS^T Q: dO and Q rows (queries) 128 bytes apart,
    // 64-column blocks kBlockM * 128 bytes apart.
    fence_regs(acc_v);
    fence_regs(acc_k);
    wgmma_fence();
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_rs_n{{ head_dim }}(acc_v, ap[qs], sw128_desc(sdOt + qs * 16 * 128, kBlockM * 128));
#pragma unroll
    for (int qs = 0; qs < kSQSteps; ++qs)
      wgmma_rs_n{{ head_dim }}(acc_k, as[qs], sw128_desc(sQt + qs * 16 * 128, kBlockM * 128));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(acc_v);
    fence_regs(acc_k);
    keep_regs(ap);
    keep_regs(as);
    if (lane == 0) mbar_arrive(q_empty + 8 * slot); // Q, dO, LSE and delta read
    if (p.deterministic) continue;                  // (uniform)
    fence_proxy_async();                            // dS^T stores -> wgmma reads
{% if shared_ds %}
    bar_sync(kDSBar, 256);                          // both warpgroups' dS^T complete

    // dQ (64 queries x this warpgroup's 64 columns) = dS K over the block's 128 keys:
    // A = dS^T read transposed (queries contiguous), B = K's rows. Then into the
    // staging buffer once the dQ warps read the last step's.
    constexpr int kDSRows = kBlockN;                // dS^T rows (keys) dQ sums over
    const unsigned sSa = per_step(sS + ({{ STEP }} & 1) * kSwSAll), sKq = per_step(sK + wg * kBlockN * 128);
{% else %}
    bar_sync(kDSBar + wg, 128);                     // the warpgroup's dS^T complete

    // dQ_w (64 queries x the 64 columns) = dS K over the warpgroup's 64 keys: A = its
    // dS^T read transposed (queries contiguous), B = its rows of K. Then into its
    // staging buffer once the dQ warps read the last one.
    constexpr int kDSRows = 64;                     // dS^T rows (keys) dQ sums over
    const unsigned sSa = per_step(sS + wg * kSwS), sKq = sKws;
{% end %}
    float dq[8][4];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kDSRows / 16; ++kk)
      wgmma_tt_n64(dq, sw128_desc(sSa + kk * 16 * 128, kDSRows * 128), sw128_desc(sKq + kk * 16 * 128, kBlockN * 128),
                   kk > 0);
    wgmma_commit();
    // (in {{ shared_ds and "its 64 columns of the staging buffer" or "its staging buffer" }}, its rows g, g + 8 of the warp's 16, columns 2 qd,
    // 2 qd + 1 of each n8 tile: one address a step, the rest immediate offsets, else 16
    // addresses live across the loop)
    const unsigned dq_at = per_step(sDQ + {{ shared_ds and "(wrow + g) * kDQPitch + (wg * 64 + 2 * qd) * 4" or "wg * kDQBuf + (wrow + g) * kDQPitch + qd * 8" }});
    if ({{ STEP }} > 0) bar_sync(kDQEmpty + wg, kDQMeet);
    wgmma_wait<0>();
    fence_regs(dq);
#pragma unroll
    for (int dt = 0; dt < 8; ++dt)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh)
        st_shared2(dq_at + hh * 8 * kDQPitch + dt * 8 * 4, dq[dt][2 * hh], dq[dt][2 * hh + 1]);
    bar_arrive(kDQFull + wg, kDQMeet);
  }
{% if persistent %}
  if (n_steps > 0) { // K and V read: the producer may load the next block's
    if (lane == 0) mbar_arrive(kv_empty);
    ++n;
  }
{% end %}

  // dK = scale * dS^T Q, dV = P^T dO for this warp's keys{{ dropout and ", times 1 / (1 - p)" or "" }}, in {{ dtype }}.
{% if dropout %}
  const float dk_scale = p.scale * p.dropout_scale, dv_scale = p.dropout_scale;
{% end %}
{% local DK_SCALE, DV_SCALE = dropout and "dk_scale" or "p.scale", dropout and " * dv_scale" or "" %}
  elem_t *dkp = (elem_t *)p.dk + {{ BASE("dk") }} + kv_head * p.dk_head_stride;
  elem_t *dvp = (elem_t *)p.dv + {{ BASE("dv") }} + kv_head * p.dv_head_stride;
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
      *(unsigned *)(dkp + key * p.dk_row_stride + col) =
          pack2(acc_k[dt][2 * hh] * {{ DK_SCALE }}, acc_k[dt][2 * hh + 1] * {{ DK_SCALE }});
      *(unsigned *)(dvp + key * p.dv_row_stride + col) = pack2(acc_v[dt][2 * hh]{{ DV_SCALE }}, acc_v[dt][2 * hh + 1]{{ DV_SCALE }});
    }
  }
{% if persistent %}
  }
  if (T > 0 && !p.deterministic) bar_sync(kDQEmpty + wg, kDQMeet); // (the dQ warps' arrive after the last step)
{% end %}
}
{% end %}
