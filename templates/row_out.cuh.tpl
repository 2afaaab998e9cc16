{# The forward's epilogue, per row (mt, h): o2[dt], the row's O in {{ dtype }} pairs  #}
{# (columns 8 dt + 2 qd, + 1) from acc * inv, rounded to nearest, or balanced         #}
{# (round_balanced.cuh.tpl) with the draw of row ROW of matrix (batch, head).         #}
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
