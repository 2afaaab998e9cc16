"""The PyTorch side of fa2gen (imported only when a torch function is called):
argument checks, then the operators of _ops. Everything here is plain Python
that torch.compile traces without a graph break; the launches happen inside
the operators."""


def _require_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("fa2gen.attention needs PyTorch with CUDA (pip install torch); "
                          "the C API and fa2gen.Context work without it") from e
    return torch


torch = _require_torch()

import math  # noqa: E402

from . import _ops  # noqa: E402  (registers torch.ops.fa2gen.*)
from ._lib import DELTA, STAB  # noqa: E402


def check_inputs(fn, q, k, v, varlen=False):
    """The checks PyTorch can make before a launch, named after the caller fn.
    varlen: (total, heads, head_dim) tensors whose dimensions check_varlen_inputs
    checked; else (batch, seqlen, heads, head_dim)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{fn}: {name} is {type(t).__name__}, not a torch.Tensor")
        if t.device.type not in ("cuda", "meta"):  # meta: shapes only (tracing, tests)
            raise ValueError(f"{fn}: {name} is on {t.device}: fa2gen runs on CUDA tensors")
        if not varlen and t.dim() != 4:
            raise ValueError(f"{fn}: {name} has shape {tuple(t.shape)}: expected 4 dimensions "
                             "(batch, seqlen, heads, head_dim)")
    _ops.check_one_device(fn, q=q, k=k, v=v)
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"{fn}: dtypes {q.dtype}, {k.dtype}, {v.dtype}: q, k and v must have "
                        "the same dtype")
    if q.dtype not in (torch.bfloat16, torch.float16):
        raise TypeError(f"{fn}: dtype {q.dtype} is not supported: use torch.bfloat16 or "
                        "torch.float16")
    if k.shape != v.shape:
        raise ValueError(f"{fn}: k {tuple(k.shape)} and v {tuple(v.shape)} differ")
    if (not varlen and k.shape[0] != q.shape[0]) or k.shape[-1] != q.shape[-1]:
        raise ValueError(f"{fn}: q {tuple(q.shape)} and k {tuple(k.shape)}: "
                         f"{'head_dim' if varlen else 'batch and head_dim'} must match")
    padded_head_dim(fn, q.shape[-1])
    if q.shape[-2] % k.shape[-2] != 0:
        raise ValueError(f"{fn}: q has {q.shape[-2]} heads and k {k.shape[-2]}: the query heads "
                         "must be a multiple of the key/value heads (GQA/MQA)")


def check_mode(fn, stab, delta):
    if stab not in STAB:
        raise ValueError(f"{fn}: stab={stab!r}: allowed 'none', 'paper', 'robust', 'tuned', 'balanced'")
    if delta not in DELTA:
        raise ValueError(f"{fn}: delta={delta!r}: allowed 'lowp', 'fp32'")


def causal_and_window(fn, causal, window_size, seqlen_q, seqlen_k):
    """FlashAttention-2's reading of (causal, window_size): causal sets the right
    edge to 0, a side >= seqlen_k is unbounded (-1), (-1, -1) is no window and
    (-1, 0) is plain causal. Returns (causal, (left, right)) for the kernels: a
    causal flag with no window, or a window (with causal False)."""
    if not (isinstance(window_size, (tuple, list)) and len(window_size) == 2):
        raise ValueError(f"{fn}: window_size={window_size!r}: expected (left, right)")
    left, right = window_size
    if left < -1 or right < -1:
        raise ValueError(f"{fn}: window_size={tuple(window_size)!r}: each side >= 0, or -1 for "
                         "unbounded")
    if causal:
        right = 0
    if left >= seqlen_k:
        left = -1
    if right >= seqlen_k:
        right = -1
    if left < 0 and right < 0:
        return False, (-1, -1)
    if left < 0 and right == 0:
        return True, (-1, -1)
    return False, (int(left), int(right))


def attention(q, k, v, causal=False, stab="robust", beta=None, eps=None, scale=None,
              delta="lowp", deterministic=False, return_lse=False, window_size=(-1, -1),
              dropout_p=0.0, sinks=None, softcap=0.0, alibi_slopes=None):
    """softmax(scale q k^T) v for CUDA tensors of shape (B, N, H, d), bf16 or fp16.

    k and v may have fewer heads than q (GQA/MQA). stab: "none" (classic FA2),
    "paper" (Algorithm 3 of the paper), "robust" (default), "tuned" (the
    tuning database's choice) or "balanced" (none's softmax, O rounded so that each
    row's rounding errors sum to zero in expectation: unbiased at none's error; its
    draws come from PyTorch's generator like dropout's). beta/eps/scale None: defaults (2, 1e-3,
    1/sqrt(d)). Causal is aligned bottom-right (FlashAttention-2's rule); a
    query row that sees no key gets O = 0 and LSE = +inf (the sink with sinks). Runs on the current
    stream of the tensors' device. Differentiable (every head dim):
    delta="fp32" makes the forward also keep O in fp32 so the backward's
    delta = rowsum(dO * O) is computed from it, at 4 bytes per output element.
    deterministic=True: dQ without atomics, bit-identical from run to run.
    return_lse=True: returns (o, lse), lse (B, H, N) fp32, natural log.
    window_size=(left, right): a sliding window as in flash_attn_func (-1: unbounded;
    with causal the right edge is 0).
    dropout_p: attention dropout as in flash_attn_func (each probability kept with
    probability 1 - dropout_p, scaled by 1 / (1 - dropout_p); the mask's seed drawn
    from PyTorch's CUDA generator: see dropout_rng).
    sinks: attention sinks (gpt-oss), a float tensor (H,) on q's device, one logit per
    query head in the units of the scaled scores: exp(sinks[h]) joins every row's
    softmax sum (and LSE) but not the output, so O = softmax([S, sink])[:, :-1] V; a row
    that sees no key gives O = 0 and LSE = sinks[h]. Differentiable: sinks.grad is
    -sum over batch and rows of exp(sink - LSE) rowsum(dO * O), the same bits every run.
    softcap: 0 (none) or a cap c > 0: each scaled score s becomes c tanh(s / c) before the
    softmax (Gemma 2), as flash_attn_func's softcap.
    alibi_slopes: None or fp32 slopes (H,) or (B, H) on q's device: each scaled score
    gets -slope |i + seqlen_k - seqlen_q - j|, as flash_attn_func's alibi_slopes.
    A torch.library custom operator (torch.ops.fa2gen.fwd/bwd): torch.compile
    traces it without graph breaks, and it can be captured in a CUDA graph
    once its kernels are loaded (one eager call, or fa2gen.prepare)."""
    fn = "fa2gen.attention"
    check_mode(fn, stab, delta)
    check_inputs(fn, q, k, v)
    causal, window = causal_and_window(fn, causal, window_size, q.shape[1], k.shape[1])
    check_dropout(fn, dropout_p)
    check_softcap(fn, softcap)
    alibi_slopes = check_alibi(fn, alibi_slopes, q, q.shape[0])
    sinks = check_sinks(fn, sinks, q)
    return forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse,
                   window, alibi_slopes=alibi_slopes, softcap=softcap, dropout_p=dropout_p,
                   sinks=sinks)


# Every multiple of 8 up to 256 runs as it is (the C layer puts it on the tiles of the
# next kernel head dim, the columns past d zero in shared memory and never stored: on
# Hopper 33-48 on 64's wgmma tiles); any other d is zero-padded to the next multiple of 8,
# as FlashAttention-2 does (exact: the extra columns add 0 to every score and give 0
# outputs, sliced off again, and their gradients are dropped by the pad's backward).
def padded_head_dim(fn, d):
    if 1 <= d <= 256:
        return (d + 7) // 8 * 8
    raise ValueError(f"{fn}: head_dim {d} is not supported: allowed 1 to 256 (multiples of 8 "
                     f"run as they are, others are padded to the next one)")


def _pad_head_dim(q, k, v, scale):
    """q, k, v padded to the head dim the kernels take, the scale of the real one, and d."""
    d = q.shape[-1]
    kd = padded_head_dim("fa2gen", d)
    if kd == d:
        return q, k, v, scale, d
    pad = lambda t: torch.nn.functional.pad(t, (0, kd - d))
    return pad(q), pad(k), pad(v), scale or 1.0 / math.sqrt(d), d


def _want_o32(delta, q, k, v):
    # The fp32 copy of O is only worth writing when a backward will read it.
    return (delta == "fp32" and torch.is_grad_enabled() and
            (q.requires_grad or k.requires_grad or v.requires_grad))


def forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse,
            window=(-1, -1), alibi_slopes=None, softcap=0.0, dropout_p=0.0, rng=None,
            sinks=None):
    """The checked call of torch.ops.fa2gen.fwd (an eager call runs its implementation,
    _ops.eager). window: (left, right) edges of a sliding window, -1 unbounded (then
    causal is False: its edge is right = 0).
    alibi_slopes: None or checked fp32 slopes (check_alibi). softcap: 0 or > 0.
    dropout_p: checked (check_dropout); > 0 draws the mask's seed (dropout_rng) unless
    rng gives it. sinks: None or checked fp32 sinks (check_sinks)."""
    want_o32 = _want_o32(delta, q, k, v)
    q, k, v, scale, d = _pad_head_dim(q, k, v, scale)
    if (dropout_p > 0 or stab == "balanced") and rng is None:
        rng = dropout_rng(q.device)
    o, lse, _ = _ops.fwd.call(q, k, v, bool(causal), stab, float(beta or 0.0), float(eps or 0.0),
                              float(scale or 0.0), want_o32, bool(deterministic), int(window[0]),
                              int(window[1]), alibi_slopes, float(softcap), float(dropout_p), rng,
                              sinks)
    o = o[..., :d] if o.shape[-1] != d else o
    return (o, lse) if return_lse else o


def dropout_rng(device=None):
    """The seed and offset of one dropout call, drawn from PyTorch's CUDA generator of
    device: an int64 tensor of 2 on the device, which the kernels read (never the host).
    torch.manual_seed(s) before a call reproduces its mask (the call draws this first);
    inside a captured CUDA graph torch.randint is replayed with the generator's new
    state, so each replay drops other elements (as PyTorch's own fused attention)."""
    return torch.randint(0, 2 ** 63 - 1, (2,), dtype=torch.int64,
                         device=device if device is not None else "cuda")


def dropout_mask(rng, dropout_p, batch, heads, seqlen_q, seqlen_k):
    """The keep mask (batch, heads, seqlen_q, seqlen_k) bool of a dropout call with seed
    and offset rng (dropout_rng's tensor) and dropout_p: True where the kernels keep the
    probability of query i and key j (varlen: batch is the sequence, the lengths the
    longest). torch.manual_seed(s); rng = dropout_rng(device) gives the rng of a call
    made right after torch.manual_seed(s)."""
    check_dropout("fa2gen.dropout_mask", dropout_p)
    return torch.ops.fa2gen.dropout_mask(rng, float(dropout_p), int(batch), int(heads),
                                         int(seqlen_q), int(seqlen_k))


def check_dropout(fn, p):
    """dropout_p as FlashAttention-2 takes it: 0 <= p < 1."""
    if not (isinstance(p, (int, float)) and 0.0 <= p < 1.0):
        raise ValueError(f"{fn}: dropout_p={p!r}: allowed 0.0 <= dropout_p < 1.0 (the "
                         "probability of dropping an attention weight; 0.0: none)")


def check_softcap(fn, softcap):
    """softcap as FlashAttention-2 takes it: 0.0 (none) or a finite cap > 0."""
    if not (isinstance(softcap, (int, float)) and
            (softcap == 0.0 or 0.0 < softcap < float("inf"))):
        raise ValueError(f"{fn}: softcap={softcap!r}: allowed 0.0 (none) or a finite cap > 0")


def check_sinks(fn, sinks, q):
    """Attention sinks as the operators take them: one logit per query head, a float
    tensor (heads,) on q's device (gpt-oss keeps them in the model's dtype), as fp32:
    the conversion stays in the autograd graph, so their gradient reaches them in their
    own dtype. None stays None."""
    if sinks is None:
        return None
    heads = q.shape[-2]
    if not isinstance(sinks, torch.Tensor) or not sinks.is_floating_point() or \
            tuple(sinks.shape) != (heads,):
        what = (f"{sinks.dtype} of shape {tuple(sinks.shape)}" if isinstance(sinks, torch.Tensor)
                else type(sinks).__name__)
        raise ValueError(f"{fn}: sinks is {what}: expected a float tensor of shape ({heads},), "
                         "one logit per query head")
    if sinks.device != q.device:
        raise ValueError(f"{fn}: sinks is on {sinks.device} and q on {q.device}")
    return sinks.to(torch.float32).contiguous()


def check_alibi(fn, slopes, q, batch):
    """alibi_slopes as FlashAttention-2 takes them: fp32 (heads,) or (batch, heads) on
    q's device, the heads dimension contiguous. Returns them (None stays None)."""
    if slopes is None:
        return None
    heads = q.shape[-2]
    if not isinstance(slopes, torch.Tensor) or slopes.dtype != torch.float32 or \
            tuple(slopes.shape) not in ((heads,), (batch, heads)) or slopes.stride(-1) != 1:
        what = (f"{slopes.dtype} of shape {tuple(slopes.shape)}" if isinstance(slopes, torch.Tensor)
                else type(slopes).__name__)
        raise ValueError(f"{fn}: alibi_slopes is {what}: expected torch.float32 of shape "
                         f"({heads},) or ({batch}, {heads}), the heads contiguous")
    if slopes.device != q.device:
        raise ValueError(f"{fn}: alibi_slopes is on {slopes.device} and q on {q.device}")
    return slopes


def check_varlen_inputs(fn, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    """The checks of a variable-length call: (total, heads, head_dim) tensors,
    int32 offsets of one batch on q's device, non-negative maxima."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{fn}: {name} has shape {shape}: expected 3 dimensions "
                             "(total_tokens, heads, head_dim)")
    check_inputs(fn, q, k, v, varlen=True)
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != 1:
            what = f"{t.dtype} of shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) \
                else type(t).__name__
            raise TypeError(f"{fn}: {name} is {what}: expected a 1-D torch.int32 tensor of "
                            "batch + 1 offsets")
        if t.device != q.device:
            raise ValueError(f"{fn}: {name} is on {t.device} and q on {q.device}: the offsets "
                             "are read by the kernels, on q's device")
        if t.shape[0] < 1:
            raise ValueError(f"{fn}: {name} is empty: expected batch + 1 >= 1 offsets")
    if cu_seqlens_q.shape[0] != cu_seqlens_k.shape[0]:
        raise ValueError(f"{fn}: cu_seqlens_q has {cu_seqlens_q.shape[0]} offsets and "
                         f"cu_seqlens_k {cu_seqlens_k.shape[0]}: one batch, batch + 1 each")
    for name, x in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if x < 0:
            raise ValueError(f"{fn}: {name} is {x}: must be >= 0")


# A variable-length batch whose sequences all have the longest length is a fixed-length
# batch: the varlen kernels write the fixed-length kernels' bits there (tests/gpu/test_varlen.py),
# and the fixed-length ones are faster (the d = 128 backward by 3.6 %: bench/NOTES.md "Session
# 24"). The sizes tell it on the host: batch sequences of at most max_seqlen rows (FA2's
# contract for max_seqlen) that add up to batch * max_seqlen are all max_seqlen long. False
# here (tests, bench/varlen_bench.py's kernel table) keeps the varlen kernels for them.
EQUAL_LENGTHS_FIXED = True


def equal_lengths(q, k, batch, max_seqlen_q, max_seqlen_k):
    """Whether every sequence of a varlen call has max_seqlen_q query and max_seqlen_k key rows."""
    return (batch > 0 and max_seqlen_q > 0 and max_seqlen_k > 0 and
            q.shape[0] == batch * max_seqlen_q and k.shape[0] == batch * max_seqlen_k)


def varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, stab,
                   beta, eps, scale, delta, deterministic, return_lse, window=(-1, -1),
                   alibi_slopes=None, softcap=0.0, dropout_p=0.0, rng=None, sinks=None):
    """The checked call of torch.ops.fa2gen.varlen_fwd; a batch of equal lengths takes the
    fixed-length call (equal_lengths)."""
    batch = cu_seqlens_q.shape[0] - 1
    if EQUAL_LENGTHS_FIXED and equal_lengths(q, k, batch, max_seqlen_q, max_seqlen_k):
        rows = lambda t, n: t.unflatten(0, (batch, n))  # (total, H, d) -> (batch, n, H, d): a view
        o = forward(rows(q, max_seqlen_q), rows(k, max_seqlen_k), rows(v, max_seqlen_k), causal,
                    stab, beta, eps, scale, delta, deterministic, return_lse, window, alibi_slopes,
                    softcap, dropout_p, rng, sinks)
        if not return_lse:
            return o.flatten(0, 1)
        o, lse = o
        return o.flatten(0, 1), lse.transpose(0, 1).reshape(lse.shape[1], -1)  # (H, total)
    want_o32 = _want_o32(delta, q, k, v)
    q, k, v, scale, d = _pad_head_dim(q, k, v, scale)
    if (dropout_p > 0 or stab == "balanced") and rng is None:
        rng = dropout_rng(q.device)
    o, lse, _ = _ops.varlen_fwd.call(q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                                     int(max_seqlen_k), bool(causal), stab, float(beta or 0.0),
                                     float(eps or 0.0), float(scale or 0.0), want_o32,
                                     bool(deterministic), int(window[0]), int(window[1]),
                                     alibi_slopes, float(softcap), float(dropout_p), rng, sinks)
    o = o[..., :d] if o.shape[-1] != d else o
    return (o, lse) if return_lse else o


def attention_probs(q, k, lse, scale, causal, window, alibi_slopes, softcap, dropout_p, rng):
    """FlashAttention-2's S_dmask of return_attn_probs (testing only, O(N^2) memory):
    (B, H, Sq, Sk) fp32 softmax probabilities P = exp(s - LSE) of a fixed-length call,
    s the modified scaled score (softcap, ALiBi, causal/window masks: 0 where masked),
    negated where dropout drops them: the keep mask is ~torch.signbit(S_dmask) (a
    probability of 0 keeps its sign: -0.0 when dropped)."""
    B, Sq, H, d = q.shape
    Sk = k.shape[1]
    scale = scale or 1.0 / math.sqrt(d)
    kk = k.float().repeat_interleave(H // k.shape[2], dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), kk) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    rel = (torch.arange(Sq, device=q.device)[:, None] + (Sk - Sq) -
           torch.arange(Sk, device=q.device)[None, :])  # i + diag - j
    if alibi_slopes is not None:
        slopes = alibi_slopes if alibi_slopes.dim() == 2 else alibi_slopes.expand(B, H)
        s = s - slopes[:, :, None, None] * rel.abs()
    left, right = window
    hidden = (rel < 0) if causal else torch.zeros_like(rel, dtype=torch.bool)
    if left >= 0:
        hidden |= rel > left
    if right >= 0:
        hidden |= rel < -right
    p = torch.exp(s.masked_fill(hidden, -math.inf) - lse[..., None])
    if rng is None:
        return p
    keep = torch.ops.fa2gen.dropout_mask(rng, float(dropout_p), B, H, Sq, Sk)
    return torch.where(keep, p, -p)


def varlen_attention_probs(q, k, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           scale, causal, window, alibi_slopes, softcap, dropout_p, rng):
    """attention_probs of a variable-length call: (batch, H, max_seqlen_q, max_seqlen_k),
    sequence b in [b, :, :len_q, :len_k], 0 elsewhere (reads the offsets on the host)."""
    cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    B, H = len(cq) - 1, q.shape[1]
    out = q.new_zeros((B, H, max_seqlen_q, max_seqlen_k), dtype=torch.float32)
    keep = (torch.ops.fa2gen.dropout_mask(rng, float(dropout_p), B, H, max_seqlen_q, max_seqlen_k)
            if rng is not None else None)
    for b in range(B):
        nq, nk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        if nq == 0 or nk == 0:
            continue
        slopes = alibi_slopes[b:b + 1] if alibi_slopes is not None and alibi_slopes.dim() == 2 \
            else alibi_slopes
        p = attention_probs(q[None, cq[b]:cq[b + 1]], k[None, ck[b]:ck[b + 1]],
                            lse[None, :, cq[b]:cq[b + 1]], scale, causal, window, slopes,
                            softcap, 0.0, None)[0]
        if keep is not None:
            p = torch.where(keep[b, :, :nq, :nk], p, -p)
        out[b, :, :nq, :nk] = p
    return out
