{# Hopper (sm_90a) helpers for wgmma tiles: warpgroup MMA (wgmma.mma_async, #}
{# m64nNk16), its shared-memory descriptors, and the 128-byte-swizzled tile #}
{# layout its operands use. Included by fwd.cu.tpl and bwd.cu.tpl.           #}
{% local mma_type = (dtype == "bf16") and "bf16" or "f16" %}
{# regs: asm operands %first.. as string pieces, 16 to a line; outs: "+f" #}
{# outputs for an accumulator array, one n8 tile (4 floats) to a line.     #}
{% local regs = function(first, n) local t = {} for i = first, first + n - 1 do t[#t + 1] = "%" .. i .. (i == first + n - 1 and "" or (i - first) % 16 == 15 and ", \"\n               \"" or ", ") end return table.concat(t) end %}
{% local outs = function(name, n) local t = {} for i = 0, n // 4 - 1 do t[#t + 1] = string.format("\"+f\"(%s[%d][0]), \"+f\"(%s[%d][1]), \"+f\"(%s[%d][2]), \"+f\"(%s[%d][3])", name, i, name, i, name, i, name, i) end return table.concat(t, ",\n                 ") end %}
// ---- warpgroup MMA helpers (templates/wgmma.cuh.tpl) ------------------------
// Shared-memory tiles for wgmma are 128-byte swizzled: a tile of R rows and
// 64*c columns is c blocks of R rows x 128 bytes (64 elements), and 16-byte
// chunk j of row r sits at chunk j ^ (r % 8). Every block starts on a
// 1024-byte boundary, so the hardware's swizzle (address bits 4-6 ^ 7-9)
// is exactly this one.

// Byte offset of 16-byte chunk ch of row r in a swizzled tile of kRows rows.
template <int kRows>
__device__ __forceinline__ unsigned sw128_offset(int r, int ch) {
  return (ch / 8) * kRows * 128 + r * 128 + ((ch % 8) ^ (r % 8)) * 16;
}

{% if (warps * 32) % (head_dim // 8) == 0 and (warps * 32) // (head_dim // 8) % 8 == 0 %}
// Rows [row0, row0 + kRows) of one head into a swizzled tile; rows at or past
// `rows` are zero-filled. Threads cover whole rows and walk one pointer each
// (the last pass may cover part of the tile). kSkipChecks as in load_rows.
template <int kRows, int kThreads, int kChunks, bool kSkipChecks = false>
__device__ __forceinline__ void load_rows_sw128(unsigned dst, const elem_t *src,
                                                long long row_stride, int row0, int rows, int tid) {
  constexpr int kRowsPerPass = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && kRowsPerPass % 8 == 0,
                "whole rows per pass, and the same swizzle phase in every pass");
  const int r = tid / kChunks, ch = tid % kChunks;
  const elem_t *g = src + (row0 + r) * row_stride + ch * 8;
  const long long step = kRowsPerPass * row_stride;
  dst += sw128_offset<kRows>(r, ch);
{% if padded %}
  const bool in_cols = ch * 8 < kTensorDim;
{% end %}
  if (kSkipChecks && row0 + kRows <= rows) {
#pragma unroll
    for (int i = 0; i < (kRows + kRowsPerPass - 1) / kRowsPerPass; ++i, g += step)
      if (kRows % kRowsPerPass == 0 || r + i * kRowsPerPass < kRows) cp_async16(dst + i * kRowsPerPass * 128, {{ padded and "in_cols ? g : src, in_cols" or "g" }});
    return;
  }
#pragma unroll
  for (int i = 0; i < (kRows + kRowsPerPass - 1) / kRowsPerPass; ++i, g += step) {
    if (kRows % kRowsPerPass == 0 || r + i * kRowsPerPass < kRows) {
      const bool valid = {{ padded and "in_cols && " or "" }}row0 + r + i * kRowsPerPass < rows;
      cp_async16(dst + i * kRowsPerPass * 128, valid ? g : src, valid);
    }
  }
}

{% else %}
// Rows [row0, row0 + kRows) of one head into a swizzled tile; rows at or past
// `rows` are zero-filled. Rows of {{ head_dim // 8 }} chunks do not cover the threads in
// whole groups of 8 rows: each thread takes one chunk of 8-chunk block rows,
// block after block (a pass covers 8-row groups: one swizzle phase for all).
template <int kRows, int kThreads, int kChunks, bool kSkipChecks = false>
__device__ __forceinline__ void load_rows_sw128(unsigned dst, const elem_t *src,
                                                long long row_stride, int row0, int rows, int tid) {
  constexpr int kRowsPerPass = kThreads / 8;
  static_assert(kChunks % 8 == 0 && kRowsPerPass % 8 == 0, "64-column blocks, whole block rows per pass");
  const int r = tid / 8, ch = tid % 8;
  const elem_t *g = src + (row0 + r) * row_stride + ch * 8;
  const long long step = kRowsPerPass * row_stride;
  const bool inside = kSkipChecks && row0 + kRows <= rows;
  dst += sw128_offset<kRows>(r, ch);
#pragma unroll
  for (int i = 0; i < (kRows + kRowsPerPass - 1) / kRowsPerPass; ++i, g += step) {
    if (kRows % kRowsPerPass == 0 || r + i * kRowsPerPass < kRows) {
      const bool valid = inside || row0 + r + i * kRowsPerPass < rows;
#pragma unroll
      for (int b = 0; b < kChunks / 8; ++b)
{% if padded %}
        cp_async16(dst + b * kRows * 128 + i * kRowsPerPass * 128, valid && b * 64 + ch * 8 < kTensorDim ? g + b * 64 : src,
                   valid && b * 64 + ch * 8 < kTensorDim);
{% else %}
        cp_async16(dst + b * kRows * 128 + i * kRowsPerPass * 128, valid ? g + b * 64 : src, valid);
{% end %}
    }
  }
}

{% end %}
// Matrix descriptor of a swizzled operand starting at byte address addr:
// 8-row groups 1024 bytes apart (stride byte offset), 64-column blocks
// lbo bytes apart (leading byte offset: used when the operand is MN-major
// and spans more than one block; K-major ignores it), 128-byte swizzle.
// The low word (start address, leading byte offset) varies per operand; the high
// word (stride byte offset, swizzle mode) is one constant, so a descriptor kept as
// its low word costs one 32-bit register and an add per MMA (desc_at).
__device__ __forceinline__ unsigned sw128_lo(unsigned addr, unsigned lbo) {
  return ((addr & 0x3FFFF) >> 4) | (lbo >> 4) << 16;
}
__device__ __forceinline__ unsigned long long sw128_hi_or(unsigned lo) {
  return (unsigned long long)lo | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}
__device__ __forceinline__ unsigned long long sw128_desc(unsigned addr, unsigned lbo) {
  return sw128_hi_or(sw128_lo(addr, lbo));
}
// The descriptor of the tile `bytes` past the one whose low word is lo (16-byte units
// in the start address field: shared addresses stay under 256 KB, so the add never
// carries out of it).
__device__ __forceinline__ unsigned long long desc_at(unsigned lo, unsigned bytes) {
  return sw128_hi_or(lo + (bytes >> 4));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// cp.async writes shared memory through the generic proxy, wgmma reads it
// through the async proxy: each thread fences its landed copies before the
// barrier that publishes them.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Registers that an in-flight wgmma writes: the compiler must neither read
// them before the wait nor move their other uses across it.
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[i][e])::"memory");
}
// A fragments an in-flight wgmma reads: used after the wait, so the compiler
// keeps their registers until then instead of handing them to other values.
template <int N>
__device__ __forceinline__ void keep_regs(const unsigned (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" ::"r"(r[i][e]) : "memory");
}
// Named barriers (ids 1..15; 0 is __syncthreads): `threads` arrivals complete one.
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// bar_sync where a warp's lanes may arrive apart (barrier.sync without .aligned: a
// producer warp whose lane 0 alone waits on mbarriers, and the threads it meets).
__device__ __forceinline__ void bar_sync_lanes(int id, int threads) {
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// A loop-invariant shared address made opaque once per loop step: the
// descriptors built from it are rebuilt in the step (a few integer adds)
// instead of hoisted out of the loop, one register each, beside the
// accumulators (the d = 128 backward spilled 16 of them with a modifier).
__device__ __forceinline__ unsigned per_step(unsigned addr) {
  asm volatile("" : "+r"(addr));
  return addr;
}

{# Instruction shapes: the forward's S = Q K^T (N = block_n) and O += P V   #}
{# (N = head_dim); the backward's S^T = K Q^T and dP^T = V dO^T (N =        #}
{# block_m), dV += P^T dO and dK += dS^T Q (N = head_dim), and dQ = dS K    #}
{# (A and B transposed; N = head_dim / warpgroups, each warpgroup's slice).  #}
{# A backward "pair" (two warpgroups share 64 keys, bwd_wgmma.cuh.tpl): dQ's columns #}
{# split as the first whole blocks and the rest.                                    #}
{% local pair = pass == "bwd" and block_n == 8 * warps %}
{% local dqn0 = pair and (head_dim // 2 + 63) // 64 * 64 or 0 %}
{# The wide ws backward (bwd_ws_wide.cuh.tpl, d 192 and 256): S = Q K^T and dP = dO V^T of #}
{# a warpgroup's 32 keys (N = 32), dV and dK of its 128 (d = 192: or 64) columns (A and B #}
{# transposed) and dQ = dS K of them (A K-major, B transposed: kt), into accumulators of 128 #}
{# columns (acc_rows). #}
{% local wide_ws = ws and pass == "bwd" and head_dim > 128 %}
{% local acc_rows = function(n) return wide_ws and 16 or n // 8 end %}
{% local ss_sizes = pass == "fwd" and { block_n } or wide_ws and { 32 } or { block_m } %}
{% local tt_sizes = pass == "fwd" and {} or wide_ws and (head_dim == 256 and { 128 } or { 128, 64 }) or ws and { 64 } or pair and (dqn0 * 2 == head_dim and { dqn0 } or { dqn0, head_dim - dqn0 }) or { head_dim // 64 < warps // 4 and head_dim or head_dim // (warps // 4) } %}
{% local kt_sizes = wide_ws and tt_sizes or {} %}
{% for _, n in ipairs(ss_sizes) %}
// D (64 x {{ n }}, fp32) = A B^T (+ D when scale_d), A 64x16 and B {{ n }}x16 both
// K-major in shared memory. The accumulator layout per warp is that of
// {{ n // 8 }} mma.sync m16n8 tiles side by side.
__device__ __forceinline__ void wgmma_ss_n{{ n }}(float (&d)[{{ n // 8 }}][4], unsigned long long a,
                                             unsigned long long b, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %{{ n // 2 + 2 }}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{{ n }}k16.f32.{{ mma_type }}.{{ mma_type }} "
               "{ {{ regs(0, n // 2) }} }, "
               "%{{ n // 2 }}, %{{ n // 2 + 1 }}, p, 1, 1, 0, 0;\n}\n"
               : {{ outs("d", n // 2) }}
               : "l"(a), "l"(b), "r"(scale_d));
}

{% end %}
// D (64 x {{ head_dim }}, fp32) += A B: A 64x16 from registers (the A fragment
// of mma.sync m16n8k16 per warp), B 16x{{ head_dim }} in shared memory, MN-major
// (its rows are the k index; transposed on the fly).
__device__ __forceinline__ void wgmma_rs_n{{ head_dim }}(float (&d)[{{ head_dim // 8 }}][4], const unsigned (&a)[4],
                                             unsigned long long b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n{{ head_dim }}k16.f32.{{ mma_type }}.{{ mma_type }} "
               "{ {{ regs(0, head_dim // 2) }} }, "
               "{ {{ regs(head_dim // 2, 4) }} }, %{{ head_dim // 2 + 4 }}, 1, 1, 1, 1;\n"
               : {{ outs("d", head_dim // 2) }}
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
{% if ws and pass == "bwd" and head_dim == 64 %}

// D (64 x 64, fp32) (+)= A B^T, A 64x16 from registers (mma.sync's A fragment per
// warp), B 64x16 K-major in shared memory: the ws backward's S^T = K Q^T and
// dP^T = V dO^T at d = 64, with K and V held in registers.
__device__ __forceinline__ void wgmma_rk_n64(float (&d)[8][4], const unsigned (&a)[4], unsigned long long b,
                                             int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.{{ mma_type }}.{{ mma_type }} "
               "{ {{ regs(0, 32) }} }, "
               "{ {{ regs(32, 4) }} }, %36, p, 1, 1, 0;\n}\n"
               : {{ outs("d", 32) }}
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}
{% end %}
{# The backward's MMAs with B MN-major in shared memory: tt (A MN-major too), kt (A K-major). #}
{% local b_mn = { { "tt", tt_sizes, 1, "A 64x16 and B 16x%d both MN-major in shared\n// memory (A's rows and B's columns contiguous; both transposed on the fly)." }, { "kt", kt_sizes, 0, "A 64x16 K-major and B 16x%d MN-major in shared\n// memory (B's columns contiguous; transposed on the fly)." } } %}
{% for _, form in ipairs(b_mn) %}
{% for _, n in ipairs(form[2]) %}

// D (64 x {{ n }}, fp32) (+)= A B, {{ string.format(form[4], n) }}
__device__ __forceinline__ void wgmma_{{ form[1] }}_n{{ n }}(float (&d)[{{ acc_rows(n) }}][4], unsigned long long a,
                                             unsigned long long b, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %{{ n // 2 + 2 }}, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n{{ n }}k16.f32.{{ mma_type }}.{{ mma_type }} "
               "{ {{ regs(0, n // 2) }} }, "
               "%{{ n // 2 }}, %{{ n // 2 + 1 }}, p, 1, 1, {{ form[3] }}, 1;\n}\n"
               : {{ outs("d", n // 2) }}
               : "l"(a), "l"(b), "r"(scale_d));
}
{% end %}
{% end %}
