{# Hopper (sm_90a) tile primitives of the warp-specialized forward (fwd_ws.cu.tpl): #}
{# TMA tensor maps and copies, mbarriers, register budgets (named barriers:         #}
{# wgmma.cuh.tpl).                                                                  #}
// ---- Hopper tile primitives (templates/hopper.cuh.tpl) ------------------------
// A tile moves through shared memory in a stage slot guarded by two mbarriers:
// "full" completes when the TMA copy's bytes have landed (the producer arms it
// with the byte count), "empty" when every consumer warp is done reading.
// An mbarrier's phase flips each time it completes; a waiter names the parity
// of the phase it waits for (use i of a slot: (i / stages) & 1, the producer's
// wait on "empty" the opposite, so a fresh slot counts as free).

// A CUtensorMap: 128 opaque bytes made on the host (cuTensorMapEncodeTiled,
// runtime/rt_tma.c, which lays out fa2_fwd_maps the same way), passed as a
// __grid_constant__ kernel parameter and read by the TMA unit.
struct __align__(64) fa2_tmap {
  unsigned long long raw[16];
};
struct fa2_fwd_maps {
  fa2_tmap q, k, v, o; // (head_dim, seqlen, heads, batch), boxes of 64 columns
};

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}
// Makes the initialized mbarriers visible to the TMA unit (then a block barrier).
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// The producer's arrival: the phase also waits for `bytes` of TMA transactions.
__device__ __forceinline__ void mbar_arrive_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ unsigned mbar_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done;
}
// Waits for the phase of the given parity to complete. Compiled with
// -DFA2_WATCHDOG=N (the GPU tests do), a wait longer than N clocks traps, so a
// pipeline bug fails its launch instead of hanging the device.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
#ifdef FA2_WATCHDOG
  for (long long t0 = 0; !mbar_try_wait(bar, parity);)
    if (t0 == 0)
      t0 = clock64();
    else if (clock64() - t0 > (long long)(FA2_WATCHDOG))
      __trap();
#else
  while (!mbar_try_wait(bar, parity)) {
  }
#endif
}

// TMA: the box of `map` at element coordinates (c0 innermost .. c3) into shared
// memory at dst, completing its bytes on mbarrier bar; out-of-bounds rows read as 0.
__device__ __forceinline__ void tma_load(unsigned dst, const fa2_tmap &map, int c0, int c1, int c2,
                                         int c3, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, { %2, %3, %4, %5 }], [%6];\n" ::"r"(dst),
      "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// TMA: shared memory at src into the box of `map` at (c0 .. c3); rows out of
// bounds are not written. Stores are committed as one bulk group.
__device__ __forceinline__ void tma_store(const fa2_tmap &map, unsigned src, int c0, int c1, int c2,
                                          int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, { %2, %3, %4, %5 }], [%1];\n"
               ::"l"(&map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
// Commits the stores issued so far and waits until they have read shared memory.
__device__ __forceinline__ void tma_store_drain() {
  asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ __forceinline__ void tma_prefetch(const fa2_tmap &map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

// Register budgets per warpgroup: the producer gives registers back, the
// consumers take them (every warp of the warpgroup executes it).
template <int kRegs> __device__ __forceinline__ void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs> __device__ __forceinline__ void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
