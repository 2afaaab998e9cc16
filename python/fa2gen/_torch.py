"""The PyTorch side of fa2gen.attention (imported only when it is called)."""
from ._lib import BF16, FP16, FwdArgs, Tensor


def _require_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("fa2gen.attention needs PyTorch with CUDA (pip install torch); "
                          "the C API and fa2gen.Context work without it") from e
    return torch


torch = _require_torch()


def _dtype_code(t):
    if t.dtype == torch.bfloat16:
        return BF16
    if t.dtype == torch.float16:
        return FP16
    raise TypeError(f"fa2gen.attention: dtype {t.dtype} is not supported: use torch.bfloat16 "
                    "or torch.float16")


def _aligned(t):
    """t as the kernels can read it: last dim contiguous, 16-byte aligned rows."""
    sizes, strides = t.shape, t.stride()
    ok = strides[3] == 1 and t.data_ptr() % 16 == 0 and all(
        sizes[i] <= 1 or strides[i] % 8 == 0 for i in range(3))
    return t if ok else t.clone(memory_format=torch.contiguous_format)


def _tensor(t):
    s = t.stride()
    return Tensor(t.data_ptr(), _dtype_code(t), s[0], s[1], s[2])


def _check_inputs(q, k, v):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"fa2gen.attention: {name} is {type(t).__name__}, not a torch.Tensor")
        if not t.is_cuda:
            raise ValueError(f"fa2gen.attention: {name} is on {t.device}: fa2gen runs on CUDA "
                             "tensors")
        if t.dim() != 4:
            raise ValueError(f"fa2gen.attention: {name} has shape {tuple(t.shape)}: expected 4 "
                             "dimensions (batch, seqlen, heads, head_dim)")
    if not (q.device == k.device == v.device):
        raise ValueError(f"fa2gen.attention: q, k, v on {q.device}, {k.device}, {v.device}: "
                         "expected one device")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"fa2gen.attention: dtypes {q.dtype}, {k.dtype}, {v.dtype}: q, k and v "
                        "must have the same dtype")
    if k.shape != v.shape:
        raise ValueError(f"fa2gen.attention: k {tuple(k.shape)} and v {tuple(v.shape)} differ")
    if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
        raise ValueError(f"fa2gen.attention: q {tuple(q.shape)} and k {tuple(k.shape)}: batch "
                         "and head_dim must match")


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(fctx, q, k, v, causal, stab, beta, eps, scale):
        from . import _stab, context
        stab_code = _stab(stab)
        _check_inputs(q, k, v)
        q, k, v = _aligned(q), _aligned(k), _aligned(v)
        B, N, H, d = q.shape
        o = torch.empty((B, N, H, d), dtype=q.dtype, device=q.device)
        lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
        a = FwdArgs(q=_tensor(q), k=_tensor(k), v=_tensor(v), o=_tensor(o), lse=lse.data_ptr(),
                    batch=B, seqlen_q=N, seqlen_k=k.shape[1], heads_q=H, heads_kv=k.shape[2],
                    head_dim=d, scale=scale or 0.0, causal=int(bool(causal)), stab=stab_code,
                    beta=beta or 0.0, eps=eps or 0.0)
        device = q.device.index if q.device.index is not None else torch.cuda.current_device()
        ctx = context(device)
        with torch.cuda.device(device):
            ctx.forward(a, torch.cuda.current_stream(device).cuda_stream)
        fctx.save_for_backward(q, k, v, o, lse)
        fctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(fctx, do, dlse):
        raise NotImplementedError(
            "fa2gen.attention: the backward pass is not available yet (the backward kernels "
            "are fa2gen issue 6); use fa2gen.attention under torch.no_grad() for now")


def attention(q, k, v, causal, stab, beta, eps, scale):
    o, _ = _Attention.apply(q, k, v, causal, stab, beta, eps, scale)
    return o
