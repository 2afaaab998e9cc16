{# fa2_bwd's start, both tile families: this block's key block, its sequence (varlen), #}
{# the query blocks that see it and where K and V start. Included inside the kernel (a #}
{# persistent ws kernel: inside the loop over its walk's blocks, `walk`). #}
{% if persistent %}
  const int n_block = walk.n_block, kv_head = walk.kv_head, batch = walk.batch;
{% else %}
  const int n_block = blockIdx.x, kv_head = blockIdx.y, batch = blockIdx.z;
{% end %}
  const int group = p.heads_q / p.heads_kv;
  const int n0 = n_block * kBlockN;
{% if varlen %}
  // This block's sequence of the variable-length batch (the grid covers the longest).
  const int seq_q0 = p.cu_seqlens_q[batch], seqlen_q = p.cu_seqlens_q[batch + 1] - seq_q0;
  const int seq_k0 = p.cu_seqlens_k[batch], seqlen_k = p.cu_seqlens_k[batch + 1] - seq_k0;
  if (n0 >= seqlen_k) {{ persistent and "continue" or "return" }};
{% end %}
  const int diag = {{ persistent and not varlen and "walk.diag" or SK .. " - " .. SQ }}; // causal: query i sees keys j <= i + diag

  // Query blocks that see this key block (causal: from the one where the
  // block's first key becomes visible), for every query head of the group.
  const int i_begin = {{ I_BEGIN }};
{% if window %}
  // the last query that sees this block's last key
  const int i_end = p.window_left < 0 ? ({{ SQ }} + kBlockM - 1) / kBlockM
      : (max(0, min({{ SQ }}, n0 + kBlockN - diag + p.window_left)) + kBlockM - 1) / kBlockM;
{% else %}
  const int i_end = ({{ SQ }} + kBlockM - 1) / kBlockM;
{% end %}
  const int n_i = max(0, i_end - i_begin);
  const int n_steps = group * n_i; // (query head of the group, query block) pairs
{% if not ws %}

  const elem_t *k = (const elem_t *)p.k + {{ BASE("k") }} + kv_head * p.k_head_stride;
  const elem_t *v = (const elem_t *)p.v + {{ BASE("v") }} + kv_head * p.v_head_stride;
{% end %}
