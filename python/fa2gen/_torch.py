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


def check_inputs(fn, q, k, v):
    """The checks PyTorch can make before a launch, named after the caller fn."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{fn}: {name} is {type(t).__name__}, not a torch.Tensor")
        if t.device.type not in ("cuda", "meta"):  # meta: shapes only (tracing, tests)
            raise ValueError(f"{fn}: {name} is on {t.device}: fa2gen runs on CUDA tensors")
        if t.dim() != 4:
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
    if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
        raise ValueError(f"{fn}: q {tuple(q.shape)} and k {tuple(k.shape)}: batch and head_dim "
                         "must match")
    padded_head_dim(fn, q.shape[3])
    if q.shape[2] % k.shape[2] != 0:
        raise ValueError(f"{fn}: q has {q.shape[2]} heads and k {k.shape[2]}: the query heads "
                         "must be a multiple of the key/value heads (GQA/MQA)")


def check_mode(fn, stab, delta):
    if stab not in STAB:
        raise ValueError(f"{fn}: stab={stab!r}: allowed 'none', 'paper', 'robust', 'tuned'")
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
              delta="lowp", deterministic=False, return_lse=False, window_size=(-1, -1)):
    """softmax(scale q k^T) v for CUDA tensors of shape (B, N, H, d), bf16 or fp16.

    k and v may have fewer heads than q (GQA/MQA). stab: "none" (classic FA2),
    "paper" (Algorithm 3 of the paper), "robust" (default) or "tuned" (the
    tuning database's choice). beta/eps/scale None: defaults (2, 1e-3,
    1/sqrt(d)). Causal is aligned bottom-right (FlashAttention-2's rule); a
    query row that sees no key gets O = 0 and LSE = +inf. Runs on the current
    stream of the tensors' device. Differentiable (every head dim):
    delta="fp32" makes the forward also keep O in fp32 so the backward's
    delta = rowsum(dO * O) is computed from it, at 4 bytes per output element.
    deterministic=True: dQ without atomics, bit-identical from run to run.
    return_lse=True: returns (o, lse), lse (B, H, N) fp32, natural log.
    window_size=(left, right): a sliding window as in flash_attn_func (-1: unbounded;
    with causal the right edge is 0).
    A torch.library custom operator (torch.ops.fa2gen.fwd/bwd): torch.compile
    traces it without graph breaks, and it can be captured in a CUDA graph
    once its kernels are loaded (one eager call, or fa2gen.prepare)."""
    fn = "fa2gen.attention"
    check_mode(fn, stab, delta)
    check_inputs(fn, q, k, v)
    causal, window = causal_and_window(fn, causal, window_size, q.shape[1], k.shape[1])
    return forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse,
                   window)


# Head dims the kernels are generated for; any other d up to 256 is zero-padded to the
# next of these (exact: the extra columns add 0 to every score and give 0 outputs,
# sliced off again, and their gradients are dropped by the pad's backward).
KERNEL_HEAD_DIMS = (32, 64, 96, 128, 160, 192, 224, 256)


def padded_head_dim(fn, d):
    for kd in KERNEL_HEAD_DIMS:
        if 1 <= d <= kd:
            return kd
    raise ValueError(f"{fn}: head_dim {d} is not supported: allowed 1 to 256 (the kernels "
                     f"run {', '.join(map(str, KERNEL_HEAD_DIMS))}; others are padded)")


def _pad_head_dim(q, k, v, scale):
    """q, k, v padded to a kernel head dim, the scale of the real one, and d."""
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
            window=(-1, -1), alibi_slopes=None, softcap=0.0):
    """The checked call of torch.ops.fa2gen.fwd. window: (left, right) edges of a
    sliding window, -1 unbounded (then causal is False: its edge is right = 0).
    alibi_slopes: None or checked fp32 slopes (check_alibi). softcap: 0 or > 0."""
    want_o32 = _want_o32(delta, q, k, v)
    q, k, v, scale, d = _pad_head_dim(q, k, v, scale)
    o, lse, _ = torch.ops.fa2gen.fwd(q, k, v, bool(causal), stab, float(beta or 0.0),
                                     float(eps or 0.0), float(scale or 0.0), want_o32,
                                     bool(deterministic), int(window[0]), int(window[1]),
                                     alibi_slopes, float(softcap))
    o = o[..., :d] if o.shape[-1] != d else o
    return (o, lse) if return_lse else o


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
    check_inputs(fn, q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0))
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


def varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, stab,
                   beta, eps, scale, delta, deterministic, return_lse, window=(-1, -1),
                   alibi_slopes=None, softcap=0.0):
    """The checked call of torch.ops.fa2gen.varlen_fwd."""
    want_o32 = _want_o32(delta, q, k, v)
    q, k, v, scale, d = _pad_head_dim(q, k, v, scale)
    o, lse, _ = torch.ops.fa2gen.varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                                            int(max_seqlen_k), bool(causal), stab,
                                            float(beta or 0.0), float(eps or 0.0),
                                            float(scale or 0.0), want_o32, bool(deterministic),
                                            int(window[0]), int(window[1]), alibi_slopes,
                                            float(softcap))
    o = o[..., :d] if o.shape[-1] != d else o
    return (o, lse) if return_lse else o
