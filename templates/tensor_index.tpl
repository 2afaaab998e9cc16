{# How a kernel spells where a sequence's rows are, for fixed-length and variable-length #}
{# (varlen) batches; renders no text. Varlen: sequence `batch` is rows seq_q0.. of q and #}
{# seq_k0.. of k/v (cu_seqlens), and LSE is (heads, total_q). These spell, for either #}
{# layout, the sequence's lengths, a tensor's start, the flat index of its first q row, #}
{# an LSE row. Included once by fwd.cu.tpl and bwd.cu.tpl (set: their includes see them). #}
{% set SQ = varlen and "seqlen_q" or "p.seqlen_q" %}
{% set SK = varlen and "seqlen_k" or "p.seqlen_k" %}
{% set QROW0 = varlen and "(long long)seq_q0" or "(long long)batch * p.seqlen_q" %}
{% set Q_SIDE = { q = true, o = true, ["do"] = true, dq = true } %}
{% set BASE = function(t) if not varlen then return "batch * p." .. t .. "_batch_stride" end return "(long long)" .. (Q_SIDE[t] and "seq_q0" or "seq_k0") .. " * p." .. t .. "_row_stride" end %}
{% set LSE = function(h) if not varlen then return "((long long)batch * p.heads_q + " .. h .. ") * p.seqlen_q" end return "((long long)" .. h .. " * p.total_q + seq_q0)" end %}
