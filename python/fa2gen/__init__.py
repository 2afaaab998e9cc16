"""fa2gen: FlashAttention-2 kernels generated and JIT-compiled per variant,
with the softmax stabilization that keeps BF16 attention unbiased.

    import fa2gen
    o = fa2gen.attention(q, k, v, causal=True)   # (B, N, H, d) CUDA bf16/fp16

Imports without PyTorch or a GPU; fa2gen.attention then raises a clear error.
The C runtime (libfa2rt.so) is loaded on first use: see fa2gen._lib.
"""
import threading

from ._lib import (BF16, FP16, STAB, BwdArgs, CacheStats, Fa2Error, FwdArgs, KernelDesc,
                   Options, Tensor, bytes_or_none, check, find_nvrtc_dirs, lib)

__all__ = ["attention", "Context", "Fa2Error", "check_forward", "check_backward", "version",
           "find_nvrtc_dirs"]


def version():
    """fa2gen's version, as the C runtime reports it."""
    return lib().fa2_version().decode()


class Context:
    """One fa2_context: a device, its primary CUDA context, the kernel caches.

    Options default as in C (cache dir $FA2_CACHE_DIR, else
    $XDG_CACHE_HOME/fa2gen, else ~/.cache/fa2gen). The NVIDIA pip packages'
    NVRTC folders are passed along so that a PyTorch install can JIT."""

    def __init__(self, device=0, cache_dir=None, aot_dir=None, tuning_db=None, log_level=0,
                 no_disk_cache=False, jobs=0, nvrtc_dirs=None):
        h = lib()
        if nvrtc_dirs is None:
            nvrtc_dirs = find_nvrtc_dirs()
        self._keep = [bytes_or_none(cache_dir), bytes_or_none(aot_dir), bytes_or_none(tuning_db),
                      ":".join(nvrtc_dirs).encode() if nvrtc_dirs else None]
        opt = Options(device=device, cache_dir=self._keep[0], no_disk_cache=int(no_disk_cache),
                      aot_dir=self._keep[1], tuning_db=self._keep[2], log_level=log_level,
                      nvrtc_dirs=self._keep[3], jobs=jobs)
        import ctypes
        self._ptr = ctypes.c_void_p()
        check(h.fa2_create(ctypes.byref(self._ptr), ctypes.byref(opt)))
        self.device = device

    def close(self):
        if getattr(self, "_ptr", None):
            lib().fa2_destroy(self._ptr)
            self._ptr = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def forward(self, args, stream):
        """fa2_forward with a filled FwdArgs on a CUstream handle (int)."""
        import ctypes
        check(lib().fa2_forward(self._ptr, ctypes.byref(args), ctypes.c_void_p(stream or None)))

    def backward(self, args, stream):
        """fa2_backward with a filled BwdArgs on a CUstream handle (int)."""
        import ctypes
        check(lib().fa2_backward(self._ptr, ctypes.byref(args), ctypes.c_void_p(stream or None)))

    def prepare(self, kernels):
        """kernels: variant names (str) or dicts with dtype ("bf16"/"fp16"), head_dim,
        causal, stab, beta, eps, seqlen (the calls' length: tuned per-length tiles)."""
        import ctypes
        arr = (KernelDesc * len(kernels))()
        keep = []
        for i, k in enumerate(kernels):
            if isinstance(k, str):
                keep.append(k.encode())
                arr[i].name = keep[-1]
            else:
                arr[i].dtype = FP16 if k.get("dtype", "bf16") == "fp16" else BF16
                arr[i].head_dim = k["head_dim"]
                arr[i].causal = int(bool(k.get("causal", False)))
                arr[i].stab = _stab(k.get("stab", "robust"))
                arr[i].beta = k.get("beta") or 0.0
                arr[i].eps = k.get("eps") or 0.0
                arr[i].seqlen = k.get("seqlen") or 0
        check(lib().fa2_prepare(self._ptr, arr, len(kernels)))

    def prepare_spec(self, path=None):
        check(lib().fa2_prepare_spec(self._ptr, bytes_or_none(path)))

    def stats(self):
        import ctypes
        s = CacheStats()
        check(lib().fa2_stats(self._ptr, ctypes.byref(s)))
        out = {name: getattr(s, name) for name, _ in CacheStats._fields_}
        for key in ("arch", "device_name", "cache_dir"):
            out[key] = out[key].decode()
        return out


def _stab(name):
    if name not in STAB:
        raise ValueError(f"stab={name!r}: allowed 'none', 'paper', 'robust', 'tuned'")
    return STAB[name]


def check_forward(args):
    """Runs the C runtime's argument checks on a FwdArgs (no GPU needed)."""
    import ctypes
    check(lib().fa2_check_forward(ctypes.byref(args)))


def check_backward(args):
    """Runs the C runtime's argument checks on a BwdArgs (no GPU needed)."""
    import ctypes
    check(lib().fa2_check_backward(ctypes.byref(args)))


_contexts = {}
_contexts_lock = threading.Lock()


def context(device=0):
    """The shared Context of a device, created on first use."""
    with _contexts_lock:
        if device not in _contexts:
            _contexts[device] = Context(device)
        return _contexts[device]


def attention(q, k, v, causal=False, stab="robust", beta=None, eps=None, scale=None,
              delta="lowp", deterministic=False):
    """softmax(scale q k^T) v for CUDA tensors of shape (B, N, H, d), bf16 or fp16.

    k and v may have fewer heads than q (GQA/MQA). stab: "none" (classic FA2),
    "paper" (Algorithm 3 of the paper), "robust" (default) or "tuned" (the
    tuning database's choice). beta/eps/scale None: defaults (2, 1e-3,
    1/sqrt(d)). Runs on torch.cuda.current_stream(). Differentiable (head
    dims up to 128): delta="fp32" makes the forward also keep O in fp32 so the
    backward's delta = rowsum(dO * O) is computed from it (the paper found an
    fp32 delta alone restores stability), at 4 bytes per output element.
    deterministic=True: dQ without atomics, bit-identical from run to run (a
    second kernel recomputes the scores per query block)."""
    from . import _torch
    return _torch.attention(q, k, v, causal, stab, beta, eps, scale, delta, deterministic)
