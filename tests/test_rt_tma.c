/* TMA tensor maps of the warp-specialized forward and backward (runtime/rt_tma.c)
 * on the stand-in driver, which writes what it was asked into each map: dims and
 * strides per tensor (GQA, fp16), the cache's keys and its fixed slots, a driver
 * without the entry points, the backward's padded LSE and delta rows. */
#include <criterion/criterion.h>
#include <string.h>

#include "fa2.h"
#include "fake_driver.h"
#include "rt_tma.h"

static fake_cuda_state *fake;
static const rt_cuda_api *cu;

static void setup(void) {
  fake = tu_fake_driver();
  char err[512];
  cu = rt_cuda_load(err, sizeof err);
  cr_assert(cu, "%s", err);
}
TestSuite(rt_tma, .init = setup);

/* (B, N, H, d) tensors, K/V with hkv heads and seqlen_k rows. */
static fa2_fwd_params params(int b, int nq, int nk, int h, int hkv, int d) {
  fa2_fwd_params p;
  memset(&p, 0, sizeof p);
  p.q = (void *)0x100000, p.k = (void *)0x200000, p.v = (void *)0x300000, p.o = (void *)0x400000;
  p.q_row_stride = p.o_row_stride = (long long)h * d;
  p.q_head_stride = p.o_head_stride = p.k_head_stride = p.v_head_stride = d;
  p.q_batch_stride = p.o_batch_stride = (long long)nq * h * d;
  p.k_row_stride = p.v_row_stride = (long long)hkv * d;
  p.k_batch_stride = p.v_batch_stride = (long long)nk * hkv * d;
  p.batch = b, p.seqlen_q = nq, p.seqlen_k = nk, p.heads_q = h, p.heads_kv = hkv;
  return p;
}

static const fake_tmap *map(const rt_tmap *m) { return (const fake_tmap *)m->bytes; }

Test(rt_tma, maps_follow_each_tensor) {
  fa2_fwd_params p = params(3, 1000, 777, 8, 2, 64);
  rt_fwd_maps m;
  cr_assert_eq(rt_tma_fwd_maps(cu, NULL, &p, 0, 0, 64, 176, &m), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fake->tmap_encodes, 4, "no cache: every map encoded");
  const fake_tmap *q = map(&m.q), *k = map(&m.k), *v = map(&m.v), *o = map(&m.o);
  cr_expect_eq(q->dtype, 6, "fp16");
  cr_expect(q->dims[0] == 64 && q->dims[1] == 1000 && q->dims[2] == 8 && q->dims[3] == 3);
  cr_expect(q->strides[0] == 8 * 64 * 2 && q->strides[1] == 128 && q->strides[2] == 1000 * 8 * 64 * 2);
  cr_expect(k->dims[1] == 777 && k->dims[2] == 2, "GQA: K has heads_kv heads");
  cr_expect(k->strides[0] == 2 * 64 * 2 && k->strides[2] == 777 * 2 * 64 * 2);
  cr_expect(k->box[0] == 64 && k->box[1] == 176 && v->box[1] == 176 && q->box[1] == 64 && o->box[1] == 64);
  cr_expect_eq(v->address, 0x300000ull);
  cr_expect_eq(o->address, 0x400000ull);
  for (int i = 0; i < 4; i++) cr_expect_eq(map(&m.q + i)->element_strides[1], 1);
}

/* A cache of 16 keys: hits re-address, 17 shapes reuse slots, and a map of
 * seqlen_k 0 (no key tile is ever loaded) is still a valid one row deep, at Q's
 * address (an empty K or V may have none). */
Test(rt_tma, cache_reuses_and_replaces_slots) {
  rt_tma_cache c;
  cr_assert_eq(rt_tma_cache_init(&c), 0);
  rt_fwd_maps m;
  for (int round = 0; round < 2; round++)
    for (int n = 1; n <= 17; n++) {
      fa2_fwd_params p = params(1, 64 * n, 64 * n, 4, 4, 128);
      cr_assert_eq(rt_tma_fwd_maps(cu, &c, &p, 0, 1, 128, 128, &m), FA2_OK, "%s", fa2_last_error());
      cr_expect_eq(map(&m.k)->dims[1], (unsigned long long)(64 * n));
    }
  cr_expect_eq(c.n, RT_TMA_CACHE_SLOTS);
  cr_expect_eq(c.misses + c.hits, 2 * 17 * 4);
  cr_expect_gt(c.hits, 2 * 17 * 2 - 1, "O and V at least hit their twin's key");
  fa2_fwd_params p = params(2, 5, 0, 1, 1, 128);
  p.k = p.v = NULL;
  cr_assert_eq(rt_tma_fwd_maps(cu, &c, &p, 0, 1, 128, 128, &m), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(map(&m.k)->dims[1], 1);
  cr_expect(map(&m.k)->address == 0x100000ull && map(&m.v)->address == 0x100000ull, "K, V at Q");
  cr_expect_eq(map(&m.q)->strides[1], 5 * 128 * 2, "one head: a stride past the rows");
  rt_tma_cache_free(&c);
}

Test(rt_tma, driver_without_tensor_maps_is_a_clear_error) {
  rt_cuda_api old = *cu;
  old.cuTensorMapEncodeTiled = NULL;
  fa2_fwd_params p = params(1, 128, 128, 1, 1, 64);
  rt_fwd_maps m;
  cr_expect_eq(rt_tma_fwd_maps(&old, NULL, &p, 0, 1, 64, 128, &m), FA2_ERR_UNSUPPORTED);
  cr_expect(strstr(fa2_last_error(), "the CUDA driver lacks cuTensorMapEncodeTiled, which ws tiles "
                                     "(TMA) need: a CUDA 12.0 or newer driver runs them"),
            "%s", fa2_last_error());
  cr_expect_eq(fake->tmap_encodes, 0);
}

/* A backward's tensors for the maps: Q and dO of 8 heads, K and V of 2, d = 128, rows packed. */
static fa2_bwd_params bwd_params(void) {
  fa2_bwd_params p;
  memset(&p, 0, sizeof p);
  p.q = (void *)0x100000, p.k = (void *)0x200000, p.v = (void *)0x300000, p.dout = (void *)0x400000;
  p.delta = (float *)0x1000000;
  p.q_row_stride = p.do_row_stride = 8 * 128, p.k_row_stride = p.v_row_stride = 2 * 128;
  p.q_head_stride = p.do_head_stride = p.k_head_stride = p.v_head_stride = 128;
  return p;
}

/* The ws backward's six maps: Q and dO with boxes of 64 rows, K and V of block_n, and
 * LSE and delta as flat fp32 rows (rank 1, unswizzled, boxes of 64) of fa2_bwd_pre's
 * padded copies after delta's rows (3 x 8 x 1000 = 24000 rows, whole 64s: 24000; then
 * 3 x 8 x 1024 of each). Past 2^31 padded rows (the kernel's 32-bit coordinate) it
 * refuses, naming the sizes. */
Test(rt_tma, backward_maps_and_padded_rows) {
  fa2_bwd_params p = bwd_params();
  p.q_batch_stride = p.do_batch_stride = 1000LL * 8 * 128, p.k_batch_stride = p.v_batch_stride = 1000LL * 2 * 128;
  p.batch = 3, p.seqlen_q = p.seqlen_k = 1000, p.heads_q = 8, p.heads_kv = 2;
  rt_bwd_maps m;
  cr_assert_eq(rt_tma_bwd_maps(cu, NULL, &p, p.seqlen_k, 1, 128, 128, &m), FA2_OK, "%s", fa2_last_error());
  const fake_tmap *q = map(&m.q), *k = map(&m.k), *o = map(&m.dout), *l = map(&m.lse), *d = map(&m.delta);
  cr_expect(q->rank == 4 && q->box[1] == 64 && k->box[1] == 128 && o->box[1] == 64 && k->dims[2] == 2);
  cr_expect_eq(o->address, 0x400000ull);
  cr_expect(l->rank == 1 && l->dtype == 7 && l->swizzle == 0 && l->box[0] == 64, "flat fp32 rows");
  cr_expect_eq(l->dims[0], 3ull * 8 * 1024);
  cr_expect_eq(l->address, 0x1000000ull + 24000 * 4);
  cr_expect_eq(d->address, 0x1000000ull + (24000 + 3 * 8 * 1024) * 4);
  p.batch = 1, p.heads_q = 32768, p.seqlen_q = 65535; /* 2^31 rows once padded */
  cr_expect_eq(rt_tma_bwd_maps(cu, NULL, &p, p.seqlen_k, 1, 128, 128, &m), FA2_ERR_UNSUPPORTED);
  cr_expect(strstr(fa2_last_error(), "batch 1 x heads_q 32768 x seqlen_q 65535"), "%s", fa2_last_error());
}

/* Varlen: Q, K, V, dO as one batch of total rows (3 sequences, 1000 query rows and 900
 * key rows in all); LSE and delta after delta's 8 x 1000 = 8000 rows (whole 64s: 8000),
 * each head (1000 + 3 x 3 + 3) & ~3 = 1012 rows (every sequence up to 3 rows more, 4-float
 * aligned starts: RT_BWD_WS_START). */
Test(rt_tma, backward_varlen_maps_and_padded_rows) {
  static const int cu_q[4] = {0, 1, 500, 1000};
  fa2_bwd_params p = bwd_params();
  p.batch = 3, p.seqlen_q = 500, p.seqlen_k = 600, p.heads_q = 8, p.heads_kv = 2;
  p.cu_seqlens_q = cu_q, p.cu_seqlens_k = cu_q, p.total_q = 1000;
  rt_bwd_maps m;
  cr_assert_eq(rt_tma_bwd_maps(cu, NULL, &p, 900, 1, 128, 128, &m), FA2_OK, "%s", fa2_last_error());
  const fake_tmap *q = map(&m.q), *k = map(&m.k), *l = map(&m.lse), *d = map(&m.delta);
  cr_expect(q->dims[1] == 1000 && q->dims[3] == 1 && k->dims[1] == 900 && k->dims[3] == 1, "one batch of all rows");
  cr_expect_eq(l->dims[0], 8ull * 1012);
  cr_expect_eq(l->address, 0x1000000ull + 8000 * 4);
  cr_expect_eq(d->address, 0x1000000ull + (8000 + 8 * 1012) * 4);
  cr_expect_eq(RT_BWD_WS_START(1, 1), 4); /* sequence 1 (one row before it) starts on 4 floats */
  cr_expect_eq(RT_BWD_WS_START(500, 2), 508);
}
