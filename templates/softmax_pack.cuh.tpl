{# The forward's softmax, part 4: P (in s) rounded to the dtype into pf[kMTiles][kPSteps][4], #}
{# the A fragments of P V (both forward templates).                                       #}
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int ps = 0; ps < kPSteps; ++ps) {
        pf[mt][ps][0] = pack2(s[mt][2 * ps][0], s[mt][2 * ps][1]);
        pf[mt][ps][1] = pack2(s[mt][2 * ps][2], s[mt][2 * ps][3]);
        pf[mt][ps][2] = pack2(s[mt][2 * ps + 1][0], s[mt][2 * ps + 1][1]);
        pf[mt][ps][3] = pack2(s[mt][2 * ps + 1][2], s[mt][2 * ps + 1][3]);
      }
