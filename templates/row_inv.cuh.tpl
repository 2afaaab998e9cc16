{# The forward's epilogue, per row: inv, the factor of the row's O (acc * inv), from #}
{# its quad-summed l and reference row_m[mt][h] (raw units); with sinks, also top and #}
{# lt, the sum with the sink relative to 2^top, for the LSE (the kernel provides c,   #}
{# sink2 and, with dropout, p.dropout_scale).                                          #}
{% if sinks %}
      // l and acc are relative to the row's reference m (log2 units mc; -inf when the
      // row saw no key): the sum is l 2^(mc - top) + 2^(sink2 - top) relative to top =
      // max(mc, sink2), so neither term overflows, and O = acc 2^(mc - top) / sum. Exact
      // whatever reference the mode chose. A row that sees no key: O = 0, LSE = sink.
      const float mc = row_m[mt][h] * c, big = fmaxf(mc, sink2);
      const float top = big == neg_inf() ? 0.f : big;
      const float keep = exp2_approx(mc - top);
      const float lt = l * keep + exp2_approx(sink2 - top);
{% if dropout %}
      const float inv = (lt != 0.f ? keep / lt : 0.f) * p.dropout_scale; // and the kept P's 1 / (1 - p)
{% else %}
      const float inv = lt != 0.f ? keep / lt : 0.f; // (a NaN sink stays NaN)
{% end %}
{% elif dropout %}
      const float inv = (l > 0.f ? 1.f / l : 0.f) * p.dropout_scale; // the kept P's 1 / (1 - p)
{% else %}
      const float inv = l > 0.f ? 1.f / l : 0.f;
{% end %}
