"""fa2gen: FlashAttention-2 kernels generated and JIT-compiled per variant,
with the softmax stabilization that keeps BF16 attention unbiased.

    import fa2gen
    o = fa2gen.attention(q, k, v, causal=True)   # (B, N, H, d) CUDA bf16/fp16
    from fa2gen import flash_attn_func           # flash_attn 2.x's API

Imports without PyTorch or a GPU; the PyTorch functions (attention,
flash_attn_*) are loaded on first access, and without PyTorch that access
raises a clear ImportError. The C runtime (libfa2rt.so) is loaded on first
use: see fa2gen._lib.
"""
import sys
import threading

from ._lib import (BF16, FP16, STAB, BwdArgs, CacheStats, Fa2Error, FwdArgs, KernelDesc,
                   Options, Tensor, bytes_or_none, check, find_nvrtc_dirs, lib)

__all__ = ["attention", "flash_attn_func", "flash_attn_kvpacked_func",
           "flash_attn_qkvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_kvpacked_func", "flash_attn_varlen_qkvpacked_func", "prepare",
           "context", "Context", "Fa2Error", "check_forward", "check_backward", "version",
           "find_nvrtc_dirs", "device_index", "dropout_rng", "dropout_mask"]

# The PyTorch API, imported on first access (module __getattr__), so that
# `import fa2gen` needs no PyTorch and torch.compile traces plain functions.
_TORCH_API = {"attention": "_torch", "dropout_rng": "_torch", "dropout_mask": "_torch"}
_TORCH_API.update((name, "flash_api") for name in __all__ if name.startswith("flash_attn_"))


def __getattr__(name):
    if name in _TORCH_API:
        import importlib
        value = getattr(importlib.import_module("." + _TORCH_API[name], __name__), name)
        globals()[name] = value  # the next fa2gen.attention is a plain lookup (an import was 5 us)
        return value
    raise AttributeError(f"module 'fa2gen' has no attribute {name!r}")


def _current_device():
    """PyTorch's current CUDA device, or 0 without PyTorch (the C default)."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.current_device()


def device_index(device):
    """The CUDA device index of device: an int >= 0, "cuda", "cuda:N", or a
    torch.device; "cuda" and None mean PyTorch's current device (0 without
    PyTorch). Contexts are keyed by this index, so fa2gen.context(1),
    context("cuda:1") and context(torch.device("cuda", 1)) are one context."""
    if device is None:
        return _current_device()
    if isinstance(device, bool):  # an int to Python, never meant as a device
        raise TypeError(f"device={device!r}: expected an index, 'cuda', 'cuda:N' or a "
                        "torch.device")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"device={device}: a CUDA device index is >= 0")
        return device
    if isinstance(device, str):
        kind, _, rest = device.partition(":")
        if rest and not rest.isdigit():
            raise ValueError(f"device={device!r}: expected 'cuda' or 'cuda:N' with N >= 0")
        index = int(rest) if rest else None
    else:  # a torch.device, or anything shaped like one
        kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind != "cuda":
        raise ValueError(f"device={device!r}: fa2gen runs on CUDA devices ('cuda', 'cuda:N', "
                         "an index or a torch.device)")
    return _current_device() if index is None else index


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
        device = device_index(device)
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
            native = sys.modules.get(__name__ + "._native")
            if native is not None and native.loaded() is not None:  # it may hold this context
                native.loaded().set_context(self.device, 0)
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

    def dropout_mask(self, args, mask, stream):
        """fa2_dropout_mask: the keep bytes of args' call into the device buffer mask (int)."""
        import ctypes
        check(lib().fa2_dropout_mask(self._ptr, ctypes.byref(args), ctypes.c_void_p(mask),
                                     ctypes.c_void_p(stream or None)))

    def prepare(self, kernels):
        """kernels: variant names (str) or dicts with dtype ("bf16"/"fp16"), head_dim,
        causal, stab, beta, eps, seqlen (the calls' length: tuned per-length tiles) and
        the flags varlen, window, alibi, softcap, sinks (the kernels of those calls)."""
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
                for flag in ("varlen", "window", "alibi", "softcap", "sinks"):
                    setattr(arr[i], flag, int(bool(k.get(flag, False))))
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
        raise ValueError(f"stab={name!r}: allowed 'none', 'paper', 'robust', 'tuned', 'balanced'")
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
    """The shared Context of a device (an index, "cuda:N" or a torch.device;
    "cuda" or None: the current one), created on first use."""
    device = device_index(device)
    with _contexts_lock:
        if device not in _contexts:
            _contexts[device] = Context(device)
        return _contexts[device]


def prepare(kernels, device=None):
    """Loads (or compiles) kernels now, on the device's shared Context: what a
    CUDA-graph capture needs beforehand, since nothing may load while a stream
    captures. kernels: variant names (as an FA2_ERR_CAPTURING message or
    `fa2 list` prints them) or dicts as Context.prepare takes. device: an
    index, "cuda:N" or torch.device; None or "cuda": the current one (0
    without PyTorch). On several GPUs, each rank prepares its own device."""
    context(device_index(device)).prepare(kernels)
