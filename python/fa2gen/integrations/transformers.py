"""fa2gen as a Hugging Face transformers attention implementation.

    import fa2gen.integrations.transformers as fa2gen_hf
    fa2gen_hf.register()                     # attn_implementation="fa2gen" (stab robust)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="fa2gen")

register() adds the attention function to transformers' AttentionInterface and,
under the same name, FlashAttention-2's mask function to AttentionMaskInterface:
without a mask function transformers would drop the padding mask silently; with
it the mask is None unless the batch has padding, and a padded batch runs as a
variable-length batch of its real tokens (zeros where the padding was). Causal attention is aligned
bottom-right, as FlashAttention-2 and transformers' flash integration expect.
Sliding windows, softcap, dropout and attention sinks (gpt-oss's `s_aux`, a per-head logit in the
model's dtype, differentiable) pass through to the kernels.
"""
from .. import _torch
from .._torch import torch

_UNSUPPORTED = "is not supported by fa2gen yet (use attn_implementation='sdpa' for this model)"


def _refuse(what):
    raise NotImplementedError(f"fa2gen attention: {what} {_UNSUPPORTED}")


def make_attention_forward(stab="robust"):
    """The function transformers calls per attention layer, for one mode."""
    _torch.check_mode("fa2gen.integrations.transformers", stab, "lowp")

    def fa2gen_attention_forward(module, query, key, value, attention_mask, dropout=0.0,
                                 scaling=None, sliding_window=None, softcap=None, is_causal=None,
                                 s_aux=None, **kwargs):
        if attention_mask is not None and (attention_mask.dim() != 2 or
                                           query.shape[2] != key.shape[2]):
            _refuse(f"an attention mask of shape {tuple(attention_mask.shape)} with "
                    f"{query.shape[2]} queries and {key.shape[2]} keys (a 2-D padding mask "
                    "over the same tokens is)")
        if kwargs.get("position_bias") is not None:
            _refuse("a position bias")
        # transformers' sliding_window counts the query's own key: FA2's window_size
        # (sliding_window - 1, sliding_window - 1), the right edge 0 when causal
        window = (-1, -1)
        if sliding_window is not None and key.shape[2] > sliding_window:
            window = (sliding_window - 1, sliding_window - 1)
        if query.dtype == torch.float32:
            if not torch.is_autocast_enabled("cuda"):
                raise TypeError("fa2gen attention: the model runs in float32; fa2gen needs "
                                "bfloat16 or float16 (model.to(torch.bfloat16) or autocast)")
            dt = torch.get_autocast_dtype("cuda")
            query, key, value = query.to(dt), key.to(dt), value.to(dt)
        causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
        if window != (-1, -1):
            causal, window = False, (window[0], 0 if causal else window[1])
        # transformers hands (B, H, S, d); fa2gen reads the (B, S, H, d) views in place.
        q, k, v = query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2)
        _torch.check_inputs("fa2gen attention", q, k, v)
        # attention sinks: fp32 for the kernels (the conversion is differentiable)
        sinks = _torch.check_sinks("fa2gen attention", s_aux, q)
        if attention_mask is not None:
            return _padded(q, k, v, attention_mask, bool(causal), stab, scaling, window,
                           softcap or 0.0, dropout or 0.0, sinks), None
        out = _torch.forward(q, k, v, bool(causal), stab, None, None, scaling, "lowp", False,
                             False, window, None, softcap or 0.0, dropout or 0.0, sinks=sinks)
        return out, None

    return fa2gen_attention_forward


def _padded(q, k, v, mask, causal, stab, scaling, window, softcap, dropout_p, sinks):
    """A padded batch (B, S, H, d) with its (B, S) mask (True: a real token) as a
    variable-length batch of the real tokens; zeros where the padding was."""
    B, S, H, d = q.shape
    mask = mask.bool()
    seqlens = mask.sum(-1, dtype=torch.int32)
    cu = torch.nn.functional.pad(seqlens.cumsum(0, dtype=torch.int32), (1, 0))
    index = mask.flatten().nonzero().flatten()
    rows = lambda t: t.reshape(B * S, t.shape[2], d).index_select(0, index)
    longest = int(seqlens.max())  # the grid's length: one host sync, as in FA2's unpadding
    out = _torch.varlen_forward(rows(q), rows(k), rows(v), cu, cu, longest, longest, causal, stab,
                                None, None, scaling, "lowp", False, False, window, None, softcap,
                                dropout_p, sinks=sinks)
    return out.new_zeros(B * S, H, d).index_copy(0, index, out).view(B, S, H, d)


def register(name="fa2gen", stab="robust"):
    """Registers attn_implementation=name (stab: "robust", "none", "paper", "tuned" or
    "balanced") with transformers. Returns name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask
    AttentionInterface.register(name, make_attention_forward(stab))
    AttentionMaskInterface.register(name, flash_attention_mask)
    return name
