"""FlashAttention-2's Python functions on fa2gen's kernels.

    from fa2gen import flash_attn_func      # instead of: from flash_attn import ...
    out = flash_attn_func(q, k, v, causal=True)

Same signatures, layouts and semantics as flash_attn 2.x: q (B, Sq, H, d), k/v
(B, Sk, Hkv, d), causal aligned bottom-right, softmax_lse (B, H, Sq) fp32,
packed QKV / KV read in place as strided views. One extra keyword, `stab`
("robust" by default; "none" is FlashAttention-2's own arithmetic). Arguments
fa2gen cannot honour yet (dropout, a sliding window, softcap, ALiBi) raise
NotImplementedError naming them: never ignored.
"""
from . import _torch
from ._torch import torch


def _unsupported(fn, what, value, allowed):
    raise NotImplementedError(f"{fn}: {what}={value!r} is not supported by fa2gen yet; "
                              f"allowed: {allowed}")


def _causal_from_window(fn, causal, window_size, seqlen_q, seqlen_k):
    """FlashAttention-2's reading of (causal, window_size): causal sets the
    right window to 0, a window side >= seqlen_k is unbounded (-1), and
    (-1, 0) is causal. Returns causal, or raises for a real window."""
    left, right = window_size
    if causal:
        right = 0
    if left >= seqlen_k:
        left = -1
    if right >= seqlen_k:
        right = -1
    if left < 0 and right < 0:
        return False
    if left < 0 and right == 0:
        return True
    _unsupported(fn, "window_size", tuple(window_size),
                 "(-1, -1), (-1, 0) or sides >= seqlen_k (sliding windows come later)")


def _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
               alibi_slopes, deterministic, return_attn_probs, stab):
    _torch.check_mode(fn, stab, "lowp")
    _torch.check_inputs(fn, q, k, v)
    if dropout_p != 0.0:
        _unsupported(fn, "dropout_p", dropout_p, "0.0")
    if softcap != 0.0:
        _unsupported(fn, "softcap", softcap, "0.0")
    if alibi_slopes is not None:
        _unsupported(fn, "alibi_slopes", "<tensor>", "None")
    causal = _causal_from_window(fn, causal, window_size, q.shape[1], k.shape[1])
    out, lse = _torch.forward(q, k, v, causal, stab, None, None, softmax_scale, "lowp",
                              deterministic, True)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                    return_attn_probs=False, *, stab="robust"):
    """flash_attn.flash_attn_func: q (B, Sq, H, d), k and v (B, Sk, Hkv, d).
    Returns out (B, Sq, H, d), or (out, softmax_lse, None) with
    return_attn_probs (fa2gen returns no probabilities)."""
    return _attention("fa2gen.flash_attn_func", q, k, v, dropout_p, softmax_scale, causal,
                      window_size, softcap, alibi_slopes, deterministic, return_attn_probs, stab)


def _unpack(fn, name, t, n):
    if not isinstance(t, torch.Tensor) or t.dim() != 5 or t.shape[2] != n:
        shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
        raise ValueError(f"{fn}: {name} has shape {shape}: expected (batch, seqlen, {n}, "
                         "heads, head_dim)")
    return t.unbind(2)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                             deterministic=False, return_attn_probs=False, *, stab="robust"):
    """flash_attn.flash_attn_kvpacked_func: kv (B, Sk, 2, Hkv, d), read in place."""
    fn = "fa2gen.flash_attn_kvpacked_func"
    k, v = _unpack(fn, "kv", kv, 2)
    return _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs, stab)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                              deterministic=False, return_attn_probs=False, *, stab="robust"):
    """flash_attn.flash_attn_qkvpacked_func: qkv (B, S, 3, H, d), read in place."""
    fn = "fa2gen.flash_attn_qkvpacked_func"
    q, k, v = _unpack(fn, "qkv", qkv, 3)
    return _attention(fn, q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs, stab)
