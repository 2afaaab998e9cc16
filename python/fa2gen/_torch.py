"""The PyTorch side of fa2gen.attention (imported only when it is called)."""
from ._lib import BF16, DELTA, FP16, BwdArgs, FwdArgs, Tensor, lib


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


def _device(t):
    return t.device.index if t.device.index is not None else torch.cuda.current_device()


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(fctx, q, k, v, causal, stab, beta, eps, scale, delta, deterministic):
        from . import _stab, context
        stab_code = _stab(stab)
        if delta not in DELTA:
            raise ValueError(f"fa2gen.attention: delta={delta!r}: allowed 'lowp', 'fp32'")
        _check_inputs(q, k, v)
        q, k, v = _aligned(q), _aligned(k), _aligned(v)
        B, N, H, d = q.shape
        o = torch.empty((B, N, H, d), dtype=q.dtype, device=q.device)
        lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
        # (grad mode is off inside Function.forward: ask which inputs need grads)
        o32 = (torch.empty((B, N, H, d), dtype=torch.float32, device=q.device)
               if delta == "fp32" and any(fctx.needs_input_grad[:3]) else None)
        a = FwdArgs(q=_tensor(q), k=_tensor(k), v=_tensor(v), o=_tensor(o), lse=lse.data_ptr(),
                    batch=B, seqlen_q=N, seqlen_k=k.shape[1], heads_q=H, heads_kv=k.shape[2],
                    head_dim=d, scale=scale or 0.0, causal=int(bool(causal)), stab=stab_code,
                    beta=beta or 0.0, eps=eps or 0.0,
                    o_fp32=o32.data_ptr() if o32 is not None else None)
        device = _device(q)
        with torch.cuda.device(device):
            context(device).forward(a, torch.cuda.current_stream(device).cuda_stream)
        fctx.save_for_backward(q, k, v, o, lse, o32 if o32 is not None else torch.empty(0))
        fctx.args = (causal, stab_code, beta, eps, scale, delta, deterministic)
        fctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(fctx, do, dlse):
        from . import context
        q, k, v, o, lse, o32 = fctx.saved_tensors
        causal, stab_code, beta, eps, scale, delta, deterministic = fctx.args
        do = _aligned(do)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        B, N, H, d = q.shape
        a = BwdArgs(q=_tensor(q), k=_tensor(k), v=_tensor(v), o=_tensor(o), dout=_tensor(do),
                    dq=_tensor(dq), dk=_tensor(dk), dv=_tensor(dv), lse=lse.data_ptr(),
                    delta=DELTA[delta], o_fp32=o32.data_ptr() if o32.numel() else None,
                    batch=B, seqlen_q=N, seqlen_k=k.shape[1], heads_q=H, heads_kv=k.shape[2],
                    head_dim=d, scale=scale or 0.0, causal=int(bool(causal)), stab=stab_code,
                    beta=beta or 0.0, eps=eps or 0.0, deterministic=int(bool(deterministic)))
        import ctypes
        ws = torch.empty(lib().fa2_backward_workspace_size(ctypes.byref(a)), dtype=torch.uint8,
                         device=q.device)
        a.workspace, a.workspace_bytes = ws.data_ptr(), ws.numel()
        device = _device(q)
        with torch.cuda.device(device):
            context(device).backward(a, torch.cuda.current_stream(device).cuda_stream)
        return dq, dk, dv, None, None, None, None, None, None, None


def attention(q, k, v, causal, stab, beta, eps, scale, delta, deterministic):
    o, _ = _Attention.apply(q, k, v, causal, stab, beta, eps, scale, delta, deterministic)
    return o
