"""FlashAttention-2's Python functions on fa2gen's kernels.

    from fa2gen import flash_attn_func      # instead of: from flash_attn import ...
    out = flash_attn_func(q, k, v, causal=True)

Same signatures, layouts and semantics as flash_attn 2.x: q (B, Sq, H, d), k/v
(B, Sk, Hkv, d), causal aligned bottom-right, softmax_lse (B, H, Sq) fp32,
packed QKV / KV read in place as strided views, sliding windows (window_size),
ALiBi (alibi_slopes), softcap, dropout (dropout_p; the mask's seed drawn from PyTorch's
CUDA generator, so torch.manual_seed reproduces it and CUDA graphs replay fresh masks).
Two extra keywords: `stab` ("robust" by default; "none" is FlashAttention-2's own
arithmetic; "balanced" is none's with O rounded unbiased, its draws from the generator) and `sinks` (gpt-oss's attention sinks, a float tensor (heads,) of per-head
logits that join each row's softmax sum, not the output; differentiable; FA2 has no such
argument). return_attn_probs=True returns (out, softmax_lse, S_dmask), S_dmask the
softmax probabilities (B, H, Sq, Sk) fp32, negated where dropout dropped them
(~torch.signbit(S_dmask) is the keep mask): for tests, O(N^2) memory, as in FA2. The
varlen functions take FA2's
packed-sequence layout: (total_tokens, heads, head_dim) tensors and int32
cu_seqlens offsets on the device.
"""
from . import _torch
from ._torch import causal_and_window as _causal_and_window
from ._torch import torch


def _unsupported(fn, what, value, allowed):
    raise NotImplementedError(f"{fn}: {what}={value!r} is not supported by fa2gen yet; "
                              f"allowed: {allowed}")


def _check_modifiers(fn, dropout_p, softcap):
    """dropout_p in [0, 1); softcap 0 (none) or a finite positive cap."""
    _torch.check_dropout(fn, dropout_p)
    _torch.check_softcap(fn, softcap)


def _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
               alibi_slopes, deterministic, return_attn_probs, stab, sinks=None):
    _torch.check_mode(fn, stab, "lowp")
    _torch.check_inputs(fn, q, k, v)
    _check_modifiers(fn, dropout_p, softcap)
    alibi_slopes = _torch.check_alibi(fn, alibi_slopes, q, q.shape[0])
    causal, window = _causal_and_window(fn, causal, window_size, q.shape[1], k.shape[1])
    sinks = _torch.check_sinks(fn, sinks, q)
    rng = _torch.dropout_rng(q.device) if dropout_p > 0 else None
    out, lse = _torch.forward(q, k, v, causal, stab, None, None, softmax_scale, "lowp",
                              deterministic, True, window, alibi_slopes, softcap, dropout_p, rng,
                              sinks)
    if not return_attn_probs:
        return out
    return out, lse, _torch.attention_probs(q, k, lse, softmax_scale, causal, window,
                                            alibi_slopes, softcap, dropout_p, rng)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                    return_attn_probs=False, *, stab="robust", sinks=None):
    """flash_attn.flash_attn_func: q (B, Sq, H, d), k and v (B, Sk, Hkv, d).
    Returns out (B, Sq, H, d), or (out, softmax_lse, S_dmask) with return_attn_probs."""
    return _attention("fa2gen.flash_attn_func", q, k, v, dropout_p, softmax_scale, causal,
                      window_size, softcap, alibi_slopes, deterministic, return_attn_probs, stab,
                      sinks)


def _unpack(fn, name, t, n, varlen=False):
    """The n tensors packed in t along FA2's packing axis, as strided views."""
    axis, form = (1, f"(total_tokens, {n}, heads, head_dim)") if varlen else \
        (2, f"(batch, seqlen, {n}, heads, head_dim)")
    if not isinstance(t, torch.Tensor) or t.dim() != axis + 3 or t.shape[axis] != n:
        shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
        raise ValueError(f"{fn}: {name} has shape {shape}: expected {form}")
    return t.unbind(axis)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                             deterministic=False, return_attn_probs=False, *, stab="robust",
                             sinks=None):
    """flash_attn.flash_attn_kvpacked_func: kv (B, Sk, 2, Hkv, d), read in place."""
    fn = "fa2gen.flash_attn_kvpacked_func"
    k, v = _unpack(fn, "kv", kv, 2)
    return _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs, stab, sinks)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                              deterministic=False, return_attn_probs=False, *, stab="robust",
                              sinks=None):
    """flash_attn.flash_attn_qkvpacked_func: qkv (B, S, 3, H, d), read in place."""
    fn = "fa2gen.flash_attn_qkvpacked_func"
    q, k, v = _unpack(fn, "qkv", qkv, 3)
    return _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs, stab, sinks)


def _varlen(fn, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
            softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
            return_attn_probs, block_table, stab, sinks=None):
    _torch.check_mode(fn, stab, "lowp")
    _torch.check_varlen_inputs(fn, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                               max_seqlen_k)
    _check_modifiers(fn, dropout_p, softcap)
    alibi_slopes = _torch.check_alibi(fn, alibi_slopes, q, cu_seqlens_q.shape[0] - 1)
    if block_table is not None:
        _unsupported(fn, "block_table", "<tensor>", "None (no paged KV cache)")
    causal, window = _causal_and_window(fn, causal, window_size, max_seqlen_q, max_seqlen_k)
    sinks = _torch.check_sinks(fn, sinks, q)
    rng = _torch.dropout_rng(q.device) if dropout_p > 0 else None
    out = _torch.varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                causal, stab, None, None, softmax_scale, "lowp", deterministic,
                                return_attn_probs, window, alibi_slopes, softcap, dropout_p, rng,
                                sinks)
    if not return_attn_probs:
        return out
    out, lse = out
    return out, lse, _torch.varlen_attention_probs(
        q, k, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
        window, alibi_slopes, softcap, dropout_p, rng)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                           softcap=0.0, alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None, *, stab="robust", sinks=None):
    """flash_attn.flash_attn_varlen_func: q (total_q, H, d), k and v (total_k, Hkv, d),
    cu_seqlens_q/k int32 (batch + 1). Returns out (total_q, H, d), or
    (out, softmax_lse (H, total_q) fp32, S_dmask (B, H, max_seqlen_q, max_seqlen_k)) with
    return_attn_probs."""
    return _varlen("fa2gen.flash_attn_varlen_func", q, k, v, cu_seqlens_q, cu_seqlens_k,
                   max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, window_size,
                   softcap, alibi_slopes, deterministic, return_attn_probs, block_table, stab,
                   sinks)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                    max_seqlen_k, dropout_p=0.0, softmax_scale=None, causal=False,
                                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                                    deterministic=False, return_attn_probs=False, *,
                                    stab="robust", sinks=None):
    """flash_attn.flash_attn_varlen_kvpacked_func: kv (total_k, 2, Hkv, d), read in place."""
    fn = "fa2gen.flash_attn_varlen_kvpacked_func"
    k, v = _unpack(fn, "kv", kv, 2, varlen=True)
    return _varlen(fn, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                   dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                   deterministic, return_attn_probs, None, stab, sinks)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0,
                                     softmax_scale=None, causal=False, window_size=(-1, -1),
                                     softcap=0.0, alibi_slopes=None, deterministic=False,
                                     return_attn_probs=False, *, stab="robust", sinks=None):
    """flash_attn.flash_attn_varlen_qkvpacked_func: qkv (total, 3, H, d), read in place."""
    fn = "fa2gen.flash_attn_varlen_qkvpacked_func"
    q, k, v = _unpack(fn, "qkv", qkv, 3, varlen=True)
    return _varlen(fn, q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, dropout_p,
                   softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                   return_attn_probs, None, stab, sinks)
