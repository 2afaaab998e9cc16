{# fa2_bwd's loads, both tile families: a step's Q, dO, LSE and delta into its slot, and #}
{# the prologue (K, V and the first kStages - 1 steps). Included inside the kernel after #}
{# the shared-memory layout (sQ, sdO, sL, sD; sK, sV). #}
{% local LOAD, TILE_Q = wgmma and "load_tile_sw" or "load_tile", wgmma and "kSwQ" or "kTileQ" %}
  // Step t loads Q, dO, LSE and delta of (query head h, query block i) into slot t % kStages.
  auto load_step = [&](int t) {
    const int h = kv_head * group + t / n_i, m0 = (i_begin + t % n_i) * kBlockM;
    const int slot = t % kStages;
    const elem_t *q = (const elem_t *)p.q + {{ BASE("q") }} + h * p.q_head_stride;
    const elem_t *dout = (const elem_t *)p.dout + {{ BASE("do") }} + h * p.do_head_stride;
    {{ LOAD }}<kBlockM>(sQ + slot * {{ TILE_Q }}, q, p.q_row_stride, m0, {{ SQ }}, tid);
    {{ LOAD }}<kBlockM>(sdO + slot * {{ TILE_Q }}, dout, p.do_row_stride, m0, {{ SQ }}, tid);
    const long long vec = {{ LSE("h") }};
    for (int x = tid; x < kBlockM; x += kThreads) {
      const bool valid = m0 + x < {{ SQ }};
      cp_async4(sL + slot * kVec + x * 4, p.lse + vec + (valid ? m0 + x : 0), valid);
      cp_async4(sD + slot * kVec + x * 4, p.delta + vec + (valid ? m0 + x : 0), valid);
    }
  };

  // K and V travel with step 0; one commit group per step, kStages-1 ahead.
  {{ LOAD }}<kBlockN>(sK, k, p.k_row_stride, n0, {{ SK }}, tid);
  {{ LOAD }}<kBlockN>(sV, v, p.v_row_stride, n0, {{ SK }}, tid);
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < n_steps) load_step(t);
    cp_async_commit();
  }
