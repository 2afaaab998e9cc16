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
    if q.shape[2] % k.shape[2] != 0:
        raise ValueError(f"{fn}: q has {q.shape[2]} heads and k {k.shape[2]}: the query heads "
                         "must be a multiple of the key/value heads (GQA/MQA)")


def check_mode(fn, stab, delta):
    if stab not in STAB:
        raise ValueError(f"{fn}: stab={stab!r}: allowed 'none', 'paper', 'robust', 'tuned'")
    if delta not in DELTA:
        raise ValueError(f"{fn}: delta={delta!r}: allowed 'lowp', 'fp32'")


def attention(q, k, v, causal=False, stab="robust", beta=None, eps=None, scale=None,
              delta="lowp", deterministic=False, return_lse=False):
    """softmax(scale q k^T) v for CUDA tensors of shape (B, N, H, d), bf16 or fp16.

    k and v may have fewer heads than q (GQA/MQA). stab: "none" (classic FA2),
    "paper" (Algorithm 3 of the paper), "robust" (default) or "tuned" (the
    tuning database's choice). beta/eps/scale None: defaults (2, 1e-3,
    1/sqrt(d)). Causal is aligned bottom-right (FlashAttention-2's rule); a
    query row that sees no key gets O = 0 and LSE = +inf. Runs on the current
    stream of the tensors' device. Differentiable (head dims up to 128):
    delta="fp32" makes the forward also keep O in fp32 so the backward's
    delta = rowsum(dO * O) is computed from it, at 4 bytes per output element.
    deterministic=True: dQ without atomics, bit-identical from run to run.
    return_lse=True: returns (o, lse), lse (B, H, N) fp32, natural log.
    A torch.library custom operator (torch.ops.fa2gen.fwd/bwd): torch.compile
    traces it without graph breaks, and it can be captured in a CUDA graph
    once its kernels are loaded (one eager call, or fa2gen.prepare)."""
    fn = "fa2gen.attention"
    check_mode(fn, stab, delta)
    check_inputs(fn, q, k, v)
    return forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse)


def forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse):
    """The checked call of torch.ops.fa2gen.fwd."""
    # The fp32 copy of O is only worth writing when a backward will read it.
    want_o32 = (delta == "fp32" and torch.is_grad_enabled() and
                (q.requires_grad or k.requires_grad or v.requires_grad))
    o, lse, _ = torch.ops.fa2gen.fwd(q, k, v, bool(causal), stab, float(beta or 0.0),
                                     float(eps or 0.0), float(scale or 0.0), want_o32,
                                     bool(deterministic))
    return (o, lse) if return_lse else o
