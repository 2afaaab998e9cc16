{# The forward's epilogue, per row ROW (mt, h) of matrix (batch, head): the row's fp32 O  #}
{# when the call asks for it (first: the rounding's arrays need the registers), then      #}
{# o2[dt], its O in {{ dtype }} pairs (columns 8 dt + 2 qd, + 1) from acc * inv, rounded to   #}
{# nearest, or balanced (round_balanced.cuh.tpl) with the row's draw.                     #}
      if (p.o_f32 && {{ ROW }} < {{ SQ }}) { // fp32 O for the backward's precise delta
        float *of = p.o_f32 + (({{ QROW0 }} + {{ ROW }}) * p.heads_q + head) * {{ padded and "kTensorDim" or "kHeadDim" }};
#pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt)
          {{ padded and "if (dt * 8 < kTensorDim) " or "" }}*(float2 *)(of + dt * 8 + 2 * qd) = make_float2(acc[mt][dt][2 * h] * inv, acc[mt][dt][2 * h + 1] * inv);
      }
      unsigned o2[kDTiles];
{% if out_round == "balanced" %}
      {
        float x[2 * kDTiles]; // products rounded once, never fused into the errors' sums
#pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt)
          x[2 * dt] = __fmul_rn(acc[mt][dt][2 * h], inv), x[2 * dt + 1] = __fmul_rn(acc[mt][dt][2 * h + 1], inv);
        round_row_balanced(x, o2, round_draw(p, (long long)batch * p.heads_q + head, {{ ROW }}));
      }
{% else %}
#pragma unroll
      for (int dt = 0; dt < kDTiles; ++dt) o2[dt] = pack2(acc[mt][dt][2 * h] * inv, acc[mt][dt][2 * h + 1] * inv);
{% end %}
