{# The forward's softmax, part 3: one key tile of scores s[kMTiles][kNTiles][4]    #}
{# (raw, fp32; the mma.sync m16n8 accumulator layout per warp) becomes P in place: #}
{# softcap, masks (sequence tail, causal diagonal, window, ALiBi), the mode's new   #}
{# reference per row (none, paper, robust), exponentials, l and the rescale of O.  #}
{# The kernel provides j, n_unmasked, m0, warp, kWarpRows, g, qd, diag, c, row_m,  #}
{# row_l, tau_raw (robust), eps_raw (paper), acc; ws tiles (O in flight during the #}
{# softmax) leave the rescale to the kernel: row_r and row_moved take r and        #}
{# whether a row of the warp moved its reference.                                   #}
{# Window variants count keys from the block's first visible key tile (SK below,  #}
{# as in fwd.cu.tpl); a row's visible keys end at ROW_END; a ws varlen tile's rows   #}
{# past seqlen_q (the next sequence's queries, loaded by TMA) see none.             #}
{% local SK = window and "win_seqlen_k" or varlen and "seqlen_k" or "p.seqlen_k" %}
{% local ROW_END = function(r) if not window then return "kCausal ? min(" .. SK .. ", " .. r .. " + diag + 1) : " .. SK end return "(p.window_right < 0 ? " .. SK .. " : min(" .. SK .. ", " .. r .. " + diag + p.window_right + 1))" end %}
{% if softcap %}
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = cap_out * tanh_approx(s[mt][nt][e] * cap_in);
{% end %}
    if (j >= n_unmasked{{ window and " || j < n_lmasked" or "" }}) { // sequence tail and/or causal diagonal{{ window and ", window edges" or "" }}
      const int key0 = j * kBlockN + 2 * qd;
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + warp * kWarpRows + mt * 16 + h * 8 + g;
          const int limit = {{ ws and varlen and "row >= seqlen_q ? 0 : " or "" }}{{ ROW_END("row") }};
{% if alibi %}
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              s[mt][nt][2 * h + e] -= alibi * fabsf((float)(row + diag - (key0 + nt * 8 + e)));
{% end %}
{% if window %}
          const int first = p.window_left < 0 ? 0 : row + diag - p.window_left;
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int key = key0 + nt * 8 + e;
              if (key >= limit || key < first) s[mt][nt][2 * h + e] = neg_inf();
            }
{% else %}
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (key0 + nt * 8 + e >= limit) s[mt][nt][2 * h + e] = neg_inf();
{% end %}
        }
    }

    // Online softmax: new reference per row, P = exp2(s*c - m*c), rescale l and O.
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float rm = quad_max(row_max_of(s[mt], h));
        const float m_old = row_m[mt][h];
{% if softmax == "none" %}
        const float m_new = fmaxf(m_old, rm);
{% elif softmax == "paper" %}
        // Algorithm 3 of the paper, per tile: when the tile's max is attained
        // more than once (within eps), move the reference to beta*rm (rm > 0)
        // or 0 (rm < 0) so that no P is exactly 1. The count runs on every
        // lane (shuffles must not diverge); rows with nothing visible ignore it.
        // The exponentials below start from the classic reference m_exp while
        // the count runs: it is off their dependency chain, so its ALU work
        // fills the gaps between them; a row whose count moves the reference
        // (rare) has its P rescaled afterwards, the same P mathematically.
        const float m_exp = fmaxf(m_old, rm);
        const float thr = rm - eps_raw;
        unsigned below_thr = 0; // scores of this row under thr, on this lane
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
          below_thr += below(s[mt][nt][2 * h], thr) + below(s[mt][nt][2 * h + 1], thr);
        below_thr += __shfl_xor_sync(0xffffffffu, below_thr, 1);
        below_thr += __shfl_xor_sync(0xffffffffu, below_thr, 2);
        const bool tied = kBlockN - (int)below_thr > 1; // more than one score >= thr
        float m_prime = rm;
        if (tied && rm > 0.f && rm != pos_inf()) m_prime = kBeta * rm;
        if (tied && rm < 0.f && rm != neg_inf()) m_prime = 0.f;
        const float m_new = fmaxf(m_old, m_prime);
{% elif softmax == "robust" %}
        // fa2gen robust: the reference sits tau above the running max, tau
        // fixed per row at the first tile (every visible row sees key 0 there)
        // and row-dependent, so P is never 1 and ties in any tile round without
        // bias; bounded, so nothing underflows. One add per row and tile.
{% if window %}
        // A row's window may start past this block's first tile: its shift is fixed at
        // the first tile where it sees a key (the running max is -inf until then).
        if (m_old == neg_inf()) {
          const int row = m0 + warp * kWarpRows + mt * 16 + h * 8 + g;
          const int first = p.window_left < 0 ? 0 : max(0, row + diag - p.window_left);
          tau_raw[mt][h] = robust_shift(rm, row, bh_mix(batch, head), {{ ROW_END("row") }} - first,
                                        p.scale);
        }
{% else %}
        if (j == 0) {
          const int row = m0 + warp * kWarpRows + mt * 16 + h * 8 + g;
          tau_raw[mt][h] = robust_shift(rm, row, bh_mix(batch, head), {{ ROW_END("row") }},
                                        p.scale);
        }
{% end %}
        const float m_new = fmaxf(m_old, rm + tau_raw[mt][h]);
{% end %}
        const float m_use = m_new == neg_inf() ? 0.f : m_new; // row with nothing visible yet
        const float mc = m_use * c;
        const float r = exp2_approx(m_old * c - mc);
        row_m[mt][h] = m_new;
{% if softmax == "paper" %}
        const float mc_exp = (m_exp == neg_inf() ? 0.f : m_exp) * c;
{% end %}
        float sum[2] = {0.f, 0.f}; // two chains: half the dependent adds
{% if softcap and out_round == "balanced" %}
        // Balanced with softcap: l sums P as P V takes it, rounded to {{ dtype }} in the
        // pairs softmax_pack packs (the consistent normalizer). Softcap's bias is in the
        // fp32 l otherwise, where the rounding of O cannot reach it (lab/README.md).
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          const unsigned pr = pack2(exp2_approx(fmaf(s[mt][nt][2 * h], c, -mc)),
                                    exp2_approx(fmaf(s[mt][nt][2 * h + 1], c, -mc)));
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            s[mt][nt][2 * h + e] = elem_bits_f32(pr >> (16 * e) & 0xffffu);
            sum[e] += s[mt][nt][2 * h + e];
          }
        }
{% else %}
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pe = exp2_approx(fmaf(s[mt][nt][2 * h + e], c, -{{ softmax == "paper" and "mc_exp" or "mc" }}));
            s[mt][nt][2 * h + e] = pe;
            sum[e] += pe;
          }
{% end %}
{% if softmax == "paper" %}
        if (__any_sync(0xffffffffu, m_new != m_exp)) { // a tie moved a row's reference
          const float fix = exp2_approx(mc_exp - mc);    // 1 on the other rows
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) s[mt][nt][2 * h + e] *= fix;
          sum[0] *= fix;
          sum[1] *= fix;
        }
{% end %}
        row_l[mt][h] = row_l[mt][h] * r + (sum[0] + sum[1]);
{% if ws %}
        // O is in flight (the previous tile's P V): the kernel rescales it before
        // it adds this tile's P V, when a row of the warp moved its reference.
        row_r[mt][h] = r;
        row_moved[mt][h] = __any_sync(0xffffffffu, m_new != m_old);
{% else %}
        // Rescale O only when a row of this warp moved its reference: after the
        // first tiles the max rarely changes, and this is 2*kDTiles FMULs.
        if (__any_sync(0xffffffffu, m_new != m_old)) {
#pragma unroll
          for (int dt = 0; dt < kDTiles; ++dt) {
            acc[mt][dt][2 * h] *= r;
            acc[mt][dt][2 * h + 1] *= r;
          }
        }
{% end %}
      }
