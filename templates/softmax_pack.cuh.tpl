{# The forward's softmax, part 4: P (in s) rounded to the dtype into pf[kMTiles][kPSteps][4], #}
{# the A fragments of P V (both forward templates).                                       #}
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int ps = 0; ps < kPSteps; ++ps) {
{% if dropout %}
        // Dropout: l above summed every P; the dropped ones are zeroed here and O
        // is scaled by 1 / (1 - p) at the end (FlashAttention-2's order).
#pragma unroll
        for (int w = 0; w < 4; ++w)
#pragma unroll
          for (int x = 0; x < 2; ++x)
            if (!kept[mt].has(8 * ps + 2 * w + x)) s[mt][2 * ps + (w & 1)][2 * (w >> 1) + x] = 0.f;
{% end %}
        pf[mt][ps][0] = pack2(s[mt][2 * ps][0], s[mt][2 * ps][1]);
        pf[mt][ps][1] = pack2(s[mt][2 * ps][2], s[mt][2 * ps][3]);
        pf[mt][ps][2] = pack2(s[mt][2 * ps + 1][0], s[mt][2 * ps + 1][1]);
        pf[mt][ps][3] = pack2(s[mt][2 * ps + 1][2], s[mt][2 * ps + 1][3]);
      }
