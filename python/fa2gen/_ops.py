"""fa2gen's PyTorch operators: `torch.ops.fa2gen.fwd` and `torch.ops.fa2gen.bwd`.

Registered with torch.library as custom operators, so torch.compile, torch.export,
CUDA graphs and FakeTensor tracing see each pass as one opaque node: a fake
(meta) implementation gives the outputs' exact shapes, dtypes and strides without
running anything, and autograd is registered on the forward operator. The CUDA
implementations take the current stream of the tensors' device when they run
(never while tracing) and launch through libfa2rt on that device's context,
whatever the current device is (PyTorch's rule for its own operators); tensors
on different devices are a ValueError naming each one's device, at trace time
too.

    o, lse, o32 = torch.ops.fa2gen.fwd(q, k, v, causal, stab, beta, eps, scale,
                                       want_o32, deterministic, window_left, window_right,
                                       alibi_slopes, softcap, dropout_p, rng, sinks)
    dq, dk, dv, dsinks = torch.ops.fa2gen.bwd(dout, q, k, v, o, lse, o32, causal, stab, beta,
                                              eps, scale, deterministic, window_left,
                                              window_right, alibi_slopes, softcap, dropout_p,
                                              rng, sinks)
    # variable-length batches: torch.ops.fa2gen.varlen_fwd / varlen_bwd (below)

q (B, Sq, H, d), k/v (B, Sk, Hkv, d), bf16 or fp16, last dim contiguous;
o (B, Sq, H, d) contiguous; lse (B, H, Sq) fp32, natural log, +inf for a row that
sees no key; o32 (B, Sq, H, d) fp32 when want_o32 (the backward's precise delta),
else an empty tensor. beta, eps, scale: 0 means the default (2, 1e-3, 1/sqrt(d)).
window_left/right: a sliding window (query i sees keys i + diag - left .. i + diag +
right, -1 unbounded; causal then False), both -1 for none. alibi_slopes: None, or fp32
slopes (H,) or (B, H) on q's device: each score loses slope * |i + diag - j|.
softcap: 0 for none, else each scaled score x becomes softcap * tanh(x / softcap).
dropout_p, rng: attention dropout when rng is given (None: none, and dropout_p must be 0):
each probability kept with probability 1 - dropout_p and scaled by 1 / (1 - dropout_p),
the mask Philox's of seed rng[0] and offset rng[1] (an int64 tensor of 2 on q's device,
read by the kernels: draw it with dropout_rng(), PyTorch's generator, so a CUDA graph
replays with a fresh mask); the backward gets the same p and rng and the same mask.
sinks: None, or fp32 logits (H,) on q's device (gpt-oss's attention sinks): exp(sinks[h])
joins every row's softmax sum and LSE, not O; a row that sees no key then has O = 0 and
LSE = sinks[h]. The backward returns their gradient dsinks (H,) fp32 (an empty tensor
without sinks), the same bits on every run.
deterministic only matters to the backward, which the forward's autograd runs.
"""
import ctypes
import functools
from typing import Optional

import torch

from . import _native
from ._lib import BF16, DELTA, FP16, STAB, BwdArgs, FwdArgs, check, lib

_STAB_NAMES = tuple(STAB)


def _dtype_code(t):
    if t.dtype == torch.bfloat16:
        return BF16
    if t.dtype == torch.float16:
        return FP16
    raise TypeError(f"fa2gen: dtype {t.dtype} is not supported: use torch.bfloat16 or "
                    "torch.float16")


def _aligned(t):
    """t as the kernels can read it: last dim contiguous, 16-byte aligned rows
    (a copy only when it is not; packed QKV views pass as they are)."""
    sizes, strides = t.shape, t.stride()
    ok = strides[3] == 1 and t.data_ptr() % 16 == 0 and all(
        sizes[i] <= 1 or strides[i] % 8 == 0 for i in range(3))
    return t if ok else t.clone(memory_format=torch.contiguous_format)


def _tensor(t):
    """The fields of t's fa2_tensor, as a tuple (ctypes fills the structure from it, at
    a third of the cost of building a Tensor first)."""
    s = t.stride()
    return (t.data_ptr(), _dtype_code(t), s[0], s[1], s[2])


def check_one_device(fn, **tensors):
    """ValueError naming each tensor's device unless all are on one. The
    kernels launch on the first tensor's device (as PyTorch's own operators
    do, whatever the current device), so a tensor elsewhere would be read
    through a pointer of another GPU. None (an absent optional tensor) is skipped."""
    tensors = {name: t for name, t in tensors.items() if t is not None}
    (first, t0), *rest = tensors.items()
    if any(t.device != t0.device for _, t in rest):
        where = ", ".join(f"{name} on {t.device}" for name, t in tensors.items())
        raise ValueError(f"{fn}: {where}: all must be on one device (it runs on {first}'s, "
                         f"{t0.device}; move the others with .to({str(t0.device)!r}))")


# The current stream's raw handle without a torch.cuda.Stream object per call (what
# Inductor's generated code uses); current_stream where this PyTorch lacks it.
_RAW_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _index(device):
    return device.index if device.index is not None else torch.cuda.current_device()


def _stream(device):
    """The current CUDA stream of device, as a CUstream handle (int)."""
    if _RAW_STREAM is not None:
        return _RAW_STREAM(_index(device))
    return torch.cuda.current_stream(device).cuda_stream


_package = None  # fa2gen itself, looked up on first use (it imports this module)


def _context(device):
    """The shared fa2gen.Context of device (a dict lookup once it exists)."""
    global _package
    if _package is None:
        import importlib
        _package = importlib.import_module(__package__)
    index = _index(device)
    ctx = _package._contexts.get(index) or _package.context(index)
    # the loaded module's next call on this device takes it; never a load here, which would
    # re-register the operators' kernels inside a dispatcher call of one of them
    native = _native.loaded() if getattr(ctx, "_ptr", None) else None
    if native is not None:
        native.set_context(index, ctx._ptr.value)
    return ctx


def _alibi(slopes):
    """The C fields of ALiBi: fp32 slopes (heads,) or (batch, heads), or none."""
    if slopes is None:
        return dict(alibi_slopes=None, alibi_batch_stride=0)
    return dict(alibi_slopes=slopes.data_ptr(),
                alibi_batch_stride=slopes.stride(0) if slopes.dim() == 2 else 0)


def _dropout(p, rng, stab):
    """The C fields of attention dropout: the dropout kernel when rng (the device's int64
    {seed, offset}) is given, keeping 1 - p; none without it. Mode balanced draws its
    rounding from rng too: with p = 0 there, rng seeds only that."""
    return dict(dropout=int(rng is not None and not (stab == "balanced" and p == 0)), dropout_p=p,
                dropout_rng=rng.data_ptr() if rng is not None else None)


def check_rng(fn, rng):
    """rng as the kernels read it: int64, 2 elements, contiguous, on device."""
    if rng is None:
        return
    if rng.dtype != torch.int64 or tuple(rng.shape) != (2,) or rng.stride(0) != 1:
        raise ValueError(f"{fn}: rng is {rng.dtype} of shape {tuple(rng.shape)}: expected a "
                         "contiguous torch.int64 tensor of 2 (seed, offset), e.g. "
                         "fa2gen.dropout_rng(device)")


def check_sinks(fn, sinks, heads):
    """The operators' sinks: None or a contiguous fp32 (heads,) tensor."""
    if sinks is not None and (sinks.dtype != torch.float32 or tuple(sinks.shape) != (heads,) or
                              sinks.stride(0) != 1):
        raise ValueError(f"{fn}: sinks is {sinks.dtype} of shape {tuple(sinks.shape)}: expected "
                         f"a contiguous torch.float32 tensor of shape ({heads},)")


def _sinks(sinks, dsinks=None):
    """The C fields of attention sinks; the backward's also their gradient."""
    fields = dict(sinks=sinks.data_ptr() if sinks is not None else None)
    if dsinks is not None:
        fields["dsinks"] = dsinks.data_ptr() if sinks is not None else None
    return fields


def _window(left, right):
    """The C fields of a sliding window: none when both sides are unbounded (-1)."""
    return dict(window=int(left >= 0 or right >= 0), window_left=left, window_right=right)


# The operators are defined with torch.library.define and a CUDA impl, and their
# autograd is an autograd kernel of our own, not torch.library.custom_op and
# register_autograd: the same schema (inferred from the annotations) and fake
# registration, but register_autograd's wrapper refills the schema's defaults on every
# call (torch/_library/utils.py fill_defaults reads schema.arguments, a fresh list, once
# per argument: 236 us of a 419 us forward under cProfile on the H200's host, bench/NOTES.md
# "Host time per call, session 10"), and a training step's small attention calls are
# host-bound.
_LIB = torch.library.Library("fa2gen", "DEF")
# The Python CUDA implementations apart, so that the native module's kernels can take their
# place (use_native_kernels); they stay the fallback those kernels call.
_PY_CUDA = torch.library.Library("fa2gen", "IMPL")
_NATIVE_KERNELS = ("fwd", "bwd", "varlen_fwd", "varlen_bwd")  # _native.cpp's register_kernels


# Devices whose plain tensors take the eager path (bench/host_path.py adds "cpu").
EAGER_DEVICES = ("cuda",)


def eager(args):
    """True when a call with these arguments may run the operator's implementation
    without the dispatcher: its tensors plain ones on a CUDA device, and nothing that
    must see the operator (Dynamo or AOTAutograd tracing, a dispatch or torch-function
    mode such as FlopCounterMode or make_fx, functorch's transforms). The dispatcher's
    round trips (the arguments boxed and unboxed twice in a forward that records a
    gradient) cost more than the implementation's own Python (bench/NOTES.md "Session 23")."""
    if torch.compiler.is_compiling():  # first: Dynamo reads only this line
        return False
    if (torch._C._len_torch_dispatch_stack() or torch._C._is_torch_function_mode_enabled() or
            torch._C._are_functorch_transforms_active()):
        return False
    for a in args:
        if isinstance(a, torch.Tensor) and (type(a) is not torch.Tensor or
                                            a.device.type not in EAGER_DEVICES):
            return False
    return True


class _CudaOp:
    """torch.ops.fa2gen.<name> defined from fn, called like it, with custom_op's two
    registration methods: register_fake (a decorator) and register_autograd; call()
    takes the eager path when it can, native (_native.cpp's function of the same name)
    where that exists and is built."""

    def __init__(self, fn, native=False):
        self.short = fn.__name__
        self._native = self.short if native else None
        _LIB.define(self.short + torch.library.infer_schema(fn, mutates_args=()))
        # the attention operators' Python CUDA implementations give way to the native kernels
        (_PY_CUDA if self.short in _NATIVE_KERNELS else _LIB).impl(self.short, fn, "CUDA")
        self._op = getattr(torch.ops.fa2gen, self.short).default
        # what the dispatcher leaves out of a call (arguments at their defaults), once
        self._defaults = tuple(a.default_value for a in self._op._schema.arguments)
        self._fn = fn
        self._eager_function = None  # the autograd.Function of eager calls, if differentiable

    def __call__(self, *args):
        return self._op(*args)

    def call(self, *args):
        """The operator on all its arguments: directly, as the dispatcher would run it,
        when eager() allows (through autograd.Function when a gradient is recorded, and
        only for an operator with an autograd formula); else through the dispatcher."""
        if eager(args):
            native = _native.module() if self._native else None
            if native is not None:
                out = getattr(native, self._native)(*args)
                if out is not None:  # None: the Python implementation's checks or context
                    if type(out) is int:
                        check(out)  # an fa2_* call's status: Fa2Error, its message
                    return out
            if not _records_grad(args):
                return self._fn(*args)
            if self._eager_function is not None:
                return self._eager_function.apply(*args)
        return self._op(*args)

    def register_fake(self, fn):
        torch.library.register_fake("fa2gen::" + self.short, fn, lib=_LIB)
        return fn

    def register_autograd(self, backward, setup_context):
        """backward(ctx, *output_grads) and setup_context(ctx, inputs, output) as
        torch.library.register_autograd takes them; output gradients nobody asked for
        arrive as None (not materialized as zeros: two fewer allocations per step)."""
        op, defaults = self._op, self._defaults

        def below_autograd(*args):
            with torch._C._AutoDispatchBelowAutograd():
                return op(*args)

        def function(run):
            class Function(torch.autograd.Function):
                @staticmethod
                def forward(ctx, *args):
                    out = run(*args)
                    setup_context(ctx, args, out)
                    ctx.set_materialize_grads(False)
                    return out

                @staticmethod
                def backward(ctx, *grads):
                    return backward(ctx, *grads)
            return Function

        Function = function(below_autograd)
        self._eager_function = function(self._fn)  # apply() runs forward without grad

        def autograd_kernel(*args):
            # No gradient to record (inference, torch.no_grad, inputs without grad): the
            # operator below autograd, without autograd.Function's per-call wrapping.
            if not _records_grad(args):
                return below_autograd(*args)
            return Function.apply(*args, *defaults[len(args):])

        _LIB.impl(self.short, autograd_kernel, "Autograd")


def _records_grad(args):
    """Whether autograd records a call with these arguments (a loop: a third of any()'s
    time over a generator)."""
    if not torch.is_grad_enabled():
        return False
    for a in args:
        if isinstance(a, torch.Tensor) and a.requires_grad:
            return True
    return False


def _outputs_fwd(q, want_o32):
    B, N, H, d = q.shape
    o = q.new_empty((B, N, H, d))
    lse = q.new_empty((B, H, N), dtype=torch.float32)
    o32 = q.new_empty((B, N, H, d) if want_o32 else (0,), dtype=torch.float32)
    return o, lse, o32


@functools.partial(_CudaOp, native=True)
def fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, stab: str,
        beta: float, eps: float, scale: float, want_o32: bool, deterministic: bool,
        window_left: int, window_right: int,
        alibi_slopes: Optional[torch.Tensor],
        softcap: float, dropout_p: float = 0.0, rng: Optional[torch.Tensor] = None,
        sinks: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_one_device("fa2gen.fwd", q=q, k=k, v=v, alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_rng("fa2gen.fwd", rng)
    check_sinks("fa2gen.fwd", sinks, q.shape[2])
    o, lse, o32 = _outputs_fwd(q, want_o32)
    q, k, v = _aligned(q), _aligned(k), _aligned(v)
    B, N, H, d = q.shape
    a = FwdArgs(q=_tensor(q), k=_tensor(k), v=_tensor(v), o=_tensor(o), lse=lse.data_ptr(),
                batch=B, seqlen_q=N, seqlen_k=k.shape[1], heads_q=H, heads_kv=k.shape[2],
                head_dim=d, scale=scale, causal=int(causal), stab=STAB[stab], beta=beta,
                eps=eps, o_fp32=o32.data_ptr() if want_o32 else None,
                **_window(window_left, window_right), **_alibi(alibi_slopes), softcap=softcap,
                **_dropout(dropout_p, rng, stab), **_sinks(sinks))
    with torch.cuda.device(q.device):
        _context(q.device).forward(a, _stream(q.device))
    return o, lse, o32


@fwd.register_fake
def _(q, k, v, causal, stab, beta, eps, scale, want_o32, deterministic, window_left, window_right,
      alibi_slopes, softcap, dropout_p=0.0, rng=None, sinks=None):
    # while tracing too: a mixed-device call fails at compile time
    check_one_device("fa2gen.fwd", q=q, k=k, v=v, alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_rng("fa2gen.fwd", rng)
    check_sinks("fa2gen.fwd", sinks, q.shape[2])
    return _outputs_fwd(q, want_o32)


def _outputs_bwd(q, k, v, sinks):
    # Contiguous whatever the inputs' strides (a packed QKV view's gradient
    # included): the kernels write whole 16-byte rows. dsinks: (H,) fp32, or empty.
    dsinks = q.new_empty(sinks.shape if sinks is not None else (0,), dtype=torch.float32)
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape), dsinks)


@_CudaOp
def bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
        lse: torch.Tensor, o32: torch.Tensor, causal: bool, stab: str, beta: float, eps: float,
        scale: float, deterministic: bool, window_left: int, window_right: int,
        alibi_slopes: Optional[torch.Tensor],
        softcap: float, dropout_p: float = 0.0, rng: Optional[torch.Tensor] = None,
        sinks: Optional[torch.Tensor] = None
        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    check_one_device("fa2gen.bwd", dout=dout, q=q, k=k, v=v, o=o, lse=lse, o32=o32,
                     alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_sinks("fa2gen.bwd", sinks, q.shape[2])
    dq, dk, dv, dsinks = _outputs_bwd(q, k, v, sinks)
    q, k, v, o, dout = _aligned(q), _aligned(k), _aligned(v), _aligned(o), _aligned(dout)
    B, N, H, d = q.shape
    precise = o32.numel() > 0
    a = BwdArgs(q=_tensor(q), k=_tensor(k), v=_tensor(v), o=_tensor(o), dout=_tensor(dout),
                dq=_tensor(dq), dk=_tensor(dk), dv=_tensor(dv), lse=lse.data_ptr(),
                delta=DELTA["fp32" if precise else "lowp"],
                o_fp32=o32.data_ptr() if precise else None,
                batch=B, seqlen_q=N, seqlen_k=k.shape[1], heads_q=H, heads_kv=k.shape[2],
                head_dim=d, scale=scale, causal=int(causal), stab=STAB[stab], beta=beta, eps=eps,
                deterministic=int(deterministic), **_window(window_left, window_right),
                **_alibi(alibi_slopes), softcap=softcap, **_dropout(dropout_p, rng, stab),
                **_sinks(sinks, dsinks))
    _run_backward(a, q.device)
    return dq, dk, dv, dsinks


def _run_backward(a, device):
    """fa2_backward on device's current stream, with a workspace from PyTorch's
    allocator: inside a CUDA-graph capture it comes from the graph's pool, where the
    context's own cuMemAlloc could not."""
    ws = torch.empty(lib().fa2_backward_workspace_size(ctypes.byref(a)), dtype=torch.uint8,
                     device=device)
    a.workspace, a.workspace_bytes = ws.data_ptr(), ws.numel()
    with torch.cuda.device(device):
        _context(device).backward(a, _stream(device))


@bwd.register_fake
def _(dout, q, k, v, o, lse, o32, causal, stab, beta, eps, scale, deterministic, window_left,
      window_right, alibi_slopes, softcap, dropout_p=0.0, rng=None, sinks=None):
    check_one_device("fa2gen.bwd", dout=dout, q=q, k=k, v=v, o=o, lse=lse, o32=o32,
                     alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_sinks("fa2gen.bwd", sinks, q.shape[2])
    return _outputs_bwd(q, k, v, sinks)


def _setup_context(ctx, inputs, output):
    (q, k, v, causal, stab, beta, eps, scale, want_o32, deterministic, wl, wr, alibi, cap, drop_p,
     rng, sinks) = inputs
    o, lse, o32 = output
    ctx.save_for_backward(q, k, v, o, lse, o32, alibi, rng, sinks)  # rng: the forward's mask
    ctx.args = (causal, stab, beta, eps, scale, deterministic, wl, wr)
    ctx.softcap, ctx.dropout_p = cap, drop_p
    ctx.mark_non_differentiable(lse, o32)


def _backward(ctx, dout, dlse, do32):
    q, k, v, o, lse, o32, alibi, rng, sinks = ctx.saved_tensors
    dout = torch.zeros_like(o) if dout is None else dout  # only lse or o32 was used
    dq, dk, dv, dsinks = bwd.call(dout, q, k, v, o, lse, o32, *ctx.args, alibi, ctx.softcap,
                                  ctx.dropout_p, rng, sinks)
    return (dq, dk, dv) + (None,) * 13 + (dsinks if sinks is not None else None,)


fwd.register_autograd(_backward, setup_context=_setup_context)


# ---- variable-length batches (FlashAttention-2's varlen layout) --------------------
#
#     o, lse, o32 = torch.ops.fa2gen.varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k,
#                                               max_seqlen_q, max_seqlen_k, causal, stab,
#                                               beta, eps, scale, want_o32, deterministic,
#                                               window_left, window_right, alibi_slopes,
#                                               softcap, dropout_p, rng, sinks)
#
# q (total_q, H, d), k/v (total_k, Hkv, d); cu_seqlens_* int32 (batch + 1) on the
# device; o (total_q, H, d) contiguous, lse (H, total_q) fp32, o32 (total_q, H, d) or
# empty. Sequence b is rows cu_seqlens[b] .. cu_seqlens[b + 1] - 1; causal is aligned
# bottom-right per sequence.


def _aligned3(t):
    """A (rows, heads, head_dim) tensor as the kernels can read it."""
    sizes, strides = t.shape, t.stride()
    ok = strides[2] == 1 and t.data_ptr() % 16 == 0 and all(
        sizes[i] <= 1 or strides[i] % 8 == 0 for i in range(2))
    return t if ok else t.clone(memory_format=torch.contiguous_format)


def _tensor3(t):
    s = t.stride()
    return (t.data_ptr(), _dtype_code(t), 0, s[0], s[1])


def _varlen_sizes(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    return dict(batch=cu_seqlens_q.shape[0] - 1, seqlen_q=max_seqlen_q, seqlen_k=max_seqlen_k,
                heads_q=q.shape[1], heads_kv=k.shape[1], head_dim=q.shape[2],
                cu_seqlens_q=cu_seqlens_q.data_ptr(), cu_seqlens_k=cu_seqlens_k.data_ptr(),
                total_q=q.shape[0], total_k=k.shape[0])


def _outputs_varlen_fwd(q, want_o32):
    T, H, d = q.shape
    return (q.new_empty((T, H, d)), q.new_empty((H, T), dtype=torch.float32),
            q.new_empty((T, H, d) if want_o32 else (0,), dtype=torch.float32))


@functools.partial(_CudaOp, native=True)
def varlen_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int, causal: bool,
               stab: str, beta: float, eps: float, scale: float, want_o32: bool,
               deterministic: bool, window_left: int, window_right: int,
               alibi_slopes: Optional[torch.Tensor],
               softcap: float, dropout_p: float = 0.0, rng: Optional[torch.Tensor] = None,
               sinks: Optional[torch.Tensor] = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_one_device("fa2gen.varlen_fwd", q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q,
                     cu_seqlens_k=cu_seqlens_k, alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_rng("fa2gen.varlen_fwd", rng)
    check_sinks("fa2gen.varlen_fwd", sinks, q.shape[1])
    o, lse, o32 = _outputs_varlen_fwd(q, want_o32)
    q, k, v = _aligned3(q), _aligned3(k), _aligned3(v)
    a = FwdArgs(q=_tensor3(q), k=_tensor3(k), v=_tensor3(v), o=_tensor3(o), lse=lse.data_ptr(),
                scale=scale, causal=int(causal), stab=STAB[stab], beta=beta, eps=eps,
                o_fp32=o32.data_ptr() if want_o32 else None, **_window(window_left, window_right),
                **_alibi(alibi_slopes), softcap=softcap, **_dropout(dropout_p, rng, stab),
                **_sinks(sinks),
                **_varlen_sizes(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k))
    with torch.cuda.device(q.device):
        _context(q.device).forward(a, _stream(q.device))
    return o, lse, o32


@varlen_fwd.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, stab, beta, eps,
      scale, want_o32, deterministic, window_left, window_right, alibi_slopes, softcap, dropout_p=0.0,
      rng=None, sinks=None):
    check_one_device("fa2gen.varlen_fwd", q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q,
                     cu_seqlens_k=cu_seqlens_k, alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_rng("fa2gen.varlen_fwd", rng)
    check_sinks("fa2gen.varlen_fwd", sinks, q.shape[1])
    return _outputs_varlen_fwd(q, want_o32)


@_CudaOp
def varlen_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               o: torch.Tensor, lse: torch.Tensor, o32: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int, causal: bool,
               stab: str, beta: float, eps: float, scale: float, deterministic: bool,
               window_left: int, window_right: int, alibi_slopes: Optional[torch.Tensor],
               softcap: float, dropout_p: float = 0.0, rng: Optional[torch.Tensor] = None,
               sinks: Optional[torch.Tensor] = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    check_one_device("fa2gen.varlen_bwd", dout=dout, q=q, k=k, v=v, o=o, lse=lse, o32=o32,
                     cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                     alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_sinks("fa2gen.varlen_bwd", sinks, q.shape[1])
    dq, dk, dv, dsinks = _outputs_bwd(q, k, v, sinks)
    q, k, v, o, dout = _aligned3(q), _aligned3(k), _aligned3(v), _aligned3(o), _aligned3(dout)
    precise = o32.numel() > 0
    a = BwdArgs(q=_tensor3(q), k=_tensor3(k), v=_tensor3(v), o=_tensor3(o), dout=_tensor3(dout),
                dq=_tensor3(dq), dk=_tensor3(dk), dv=_tensor3(dv), lse=lse.data_ptr(),
                delta=DELTA["fp32" if precise else "lowp"],
                o_fp32=o32.data_ptr() if precise else None, scale=scale, causal=int(causal),
                stab=STAB[stab], beta=beta, eps=eps, deterministic=int(deterministic),
                **_window(window_left, window_right), **_alibi(alibi_slopes), softcap=softcap,
                **_dropout(dropout_p, rng, stab), **_sinks(sinks, dsinks),
                **_varlen_sizes(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k))
    _run_backward(a, q.device)
    return dq, dk, dv, dsinks


@varlen_bwd.register_fake
def _(dout, q, k, v, o, lse, o32, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
      stab, beta, eps, scale, deterministic, window_left, window_right, alibi_slopes, softcap,
      dropout_p=0.0, rng=None, sinks=None):
    check_one_device("fa2gen.varlen_bwd", dout=dout, q=q, k=k, v=v, o=o, lse=lse, o32=o32,
                     cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                     alibi_slopes=alibi_slopes, rng=rng, sinks=sinks)
    check_sinks("fa2gen.varlen_bwd", sinks, q.shape[1])
    return _outputs_bwd(q, k, v, sinks)


def _varlen_setup_context(ctx, inputs, output):
    (q, k, v, cu_q, cu_k, max_q, max_k, causal, stab, beta, eps, scale, want_o32,
     deterministic, wl, wr, alibi, cap, drop_p, rng, sinks) = inputs
    o, lse, o32 = output
    ctx.save_for_backward(q, k, v, o, lse, o32, cu_q, cu_k, alibi, rng, sinks)
    ctx.args = (max_q, max_k, causal, stab, beta, eps, scale, deterministic, wl, wr)
    ctx.softcap, ctx.dropout_p = cap, drop_p
    ctx.mark_non_differentiable(lse, o32)


def _varlen_backward(ctx, dout, dlse, do32):
    q, k, v, o, lse, o32, cu_q, cu_k, alibi, rng, sinks = ctx.saved_tensors
    dout = torch.zeros_like(o) if dout is None else dout  # only lse or o32 was used
    dq, dk, dv, dsinks = varlen_bwd.call(dout, q, k, v, o, lse, o32, cu_q, cu_k, *ctx.args, alibi,
                                         ctx.softcap, ctx.dropout_p, rng, sinks)
    return (dq, dk, dv) + (None,) * 17 + (dsinks if sinks is not None else None,)


varlen_fwd.register_autograd(_varlen_backward, setup_context=_varlen_setup_context)


# ---- attention dropout's mask (tests, return_attn_probs) ----------------------------
#
#     keep = torch.ops.fa2gen.dropout_mask(rng, dropout_p, batch, heads, seqlen_q, seqlen_k)
#
# keep (batch, heads, seqlen_q, seqlen_k) bool on rng's device: True where the kernels keep
# the probability of query i and key j (varlen: batch is the sequence, seqlen_* the longest).


@_CudaOp
def dropout_mask(rng: torch.Tensor, dropout_p: float, batch: int, heads: int, seqlen_q: int,
                 seqlen_k: int) -> torch.Tensor:
    check_rng("fa2gen.dropout_mask", rng)
    keep = torch.empty((batch, heads, seqlen_q, seqlen_k), dtype=torch.uint8, device=rng.device)
    a = FwdArgs(batch=batch, heads_q=heads, seqlen_q=seqlen_q, seqlen_k=seqlen_k,
                **_dropout(dropout_p, rng, "none"))
    with torch.cuda.device(rng.device):
        _context(rng.device).dropout_mask(a, keep.data_ptr(), _stream(rng.device))
    return keep.view(torch.bool)


@dropout_mask.register_fake
def _(rng, dropout_p, batch, heads, seqlen_q, seqlen_k):
    check_rng("fa2gen.dropout_mask", rng)
    return rng.new_empty((batch, heads, seqlen_q, seqlen_k), dtype=torch.bool)


# ---- the native module's kernels in the dispatcher -----------------------------------


def use_native_kernels(native):
    """The native module's CUDA kernels for fwd, bwd, varlen_fwd and varlen_bwd in place of
    the Python implementations (which they call for what they do not take): compiled graphs
    and every other dispatcher call launch without Python. Once, when the module loads."""
    global _PY_CUDA
    if _PY_CUDA is None:
        return
    _PY_CUDA._destroy()
    _PY_CUDA = None
    native.register_kernels(fwd._fn, bwd._fn, varlen_fwd._fn, varlen_bwd._fn, "CUDA")


_native.on_load(use_native_kernels)
_native.load_if_built()  # a module built before (this process or another): its kernels now
