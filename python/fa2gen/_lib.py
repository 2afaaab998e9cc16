"""ctypes view of libfa2rt (include/fa2.h): structures, loading, errors.

Nothing here needs PyTorch or a GPU; the library itself is loaded on first
use, so `import fa2gen` always works.
"""
import ctypes
import os
import site
import sys
import threading

# fa2_status
OK = 0
STATUS_NAMES = [
    "FA2_OK", "FA2_ERR_INVALID_ARGUMENT", "FA2_ERR_UNSUPPORTED", "FA2_ERR_NO_DRIVER",
    "FA2_ERR_NO_NVRTC", "FA2_ERR_COMPILE", "FA2_ERR_CUDA", "FA2_ERR_OUT_OF_MEMORY",
    "FA2_ERR_NOT_AVAILABLE", "FA2_ERR_INTERNAL", "FA2_ERR_CAPTURING",
]
BF16, FP16 = 0, 1
STAB = {"none": 0, "paper": 1, "robust": 2, "tuned": 3, "balanced": 4}


class Fa2Error(RuntimeError):
    """A failed libfa2rt call: .status (int), .status_name, and the message."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
        super().__init__(f"{message} [{self.status_name}]")


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("batch_stride", ctypes.c_longlong), ("seq_stride", ctypes.c_longlong),
                ("head_stride", ctypes.c_longlong)]


class FwdArgs(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("o", Tensor),
                ("lse", ctypes.c_void_p),
                ("batch", ctypes.c_int), ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
                ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("scale", ctypes.c_float), ("causal", ctypes.c_int), ("stab", ctypes.c_int),
                ("beta", ctypes.c_double), ("eps", ctypes.c_double), ("o_fp32", ctypes.c_void_p),
                ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p),
                ("total_q", ctypes.c_int), ("total_k", ctypes.c_int),
                ("window", ctypes.c_int), ("window_left", ctypes.c_int),
                ("window_right", ctypes.c_int), ("alibi_slopes", ctypes.c_void_p),
                ("alibi_batch_stride", ctypes.c_longlong), ("softcap", ctypes.c_float),
                ("dropout", ctypes.c_int), ("dropout_p", ctypes.c_float),
                ("dropout_rng", ctypes.c_void_p), ("dropout_seed", ctypes.c_ulonglong),
                ("dropout_offset", ctypes.c_ulonglong), ("sinks", ctypes.c_void_p)]


DELTA = {"lowp": 0, "fp32": 1}


class BwdArgs(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("o", Tensor), ("dout", Tensor),
                ("dq", Tensor), ("dk", Tensor), ("dv", Tensor),
                ("lse", ctypes.c_void_p), ("delta", ctypes.c_int), ("o_fp32", ctypes.c_void_p),
                ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
                ("deterministic", ctypes.c_int),
                ("batch", ctypes.c_int), ("seqlen_q", ctypes.c_int), ("seqlen_k", ctypes.c_int),
                ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("scale", ctypes.c_float), ("causal", ctypes.c_int), ("stab", ctypes.c_int),
                ("beta", ctypes.c_double), ("eps", ctypes.c_double),
                ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p),
                ("total_q", ctypes.c_int), ("total_k", ctypes.c_int),
                ("window", ctypes.c_int), ("window_left", ctypes.c_int),
                ("window_right", ctypes.c_int), ("alibi_slopes", ctypes.c_void_p),
                ("alibi_batch_stride", ctypes.c_longlong), ("softcap", ctypes.c_float),
                ("dropout", ctypes.c_int), ("dropout_p", ctypes.c_float),
                ("dropout_rng", ctypes.c_void_p), ("dropout_seed", ctypes.c_ulonglong),
                ("dropout_offset", ctypes.c_ulonglong), ("sinks", ctypes.c_void_p),
                ("dsinks", ctypes.c_void_p)]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class Options(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("cache_dir", ctypes.c_char_p),
                ("no_disk_cache", ctypes.c_int), ("aot_dir", ctypes.c_char_p),
                ("tuning_db", ctypes.c_char_p), ("log_level", ctypes.c_int),
                ("log_fn", ctypes.c_void_p), ("log_user", ctypes.c_void_p),
                ("nvrtc_dirs", ctypes.c_char_p), ("jobs", ctypes.c_int)]


class KernelDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("causal", ctypes.c_int), ("stab", ctypes.c_int),
                ("beta", ctypes.c_double), ("eps", ctypes.c_double), ("seqlen", ctypes.c_int),
                ("varlen", ctypes.c_int), ("window", ctypes.c_int), ("alibi", ctypes.c_int),
                ("softcap", ctypes.c_int), ("dropout", ctypes.c_int), ("sinks", ctypes.c_int)]


class CacheStats(ctypes.Structure):
    _fields_ = [("memory_hits", ctypes.c_ulonglong), ("aot_hits", ctypes.c_ulonglong),
                ("disk_hits", ctypes.c_ulonglong), ("misses", ctypes.c_ulonglong),
                ("launches", ctypes.c_ulonglong), ("compile_ms", ctypes.c_double),
                ("load_ms", ctypes.c_double), ("disk_cache", ctypes.c_int),
                ("arch", ctypes.c_char * 16), ("device_name", ctypes.c_char * 96),
                ("cache_dir", ctypes.c_char * 1024)]


def _candidates():
    """Where libfa2rt.so may be, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("FA2_LIB")
    if env:
        return [env]  # an explicit choice is final
    return [
        os.path.join(here, "libfa2rt.so"),                       # installed by pip
        os.path.join(here, os.pardir, os.pardir, "lib", "libfa2rt.so"),  # source checkout
        "libfa2rt.so",                                           # make install / loader path
    ]


_lib = None
_lock = threading.Lock()


def lib():
    """The loaded library (loaded and typed on first call)."""
    global _lib
    if _lib is not None:  # every launch asks: no lock once loaded
        return _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                try:
                    handle = ctypes.CDLL(os.path.normpath(path) if os.sep in path else path)
                except OSError as e:
                    tried.append(f"{path} ({e})")
                    continue
                _declare(handle)
                _lib = handle
                break
            else:
                raise Fa2Error(9, "libfa2rt.so not found (tried " + "; ".join(tried) +
                               "): run `make` in the fa2gen checkout, reinstall the fa2gen "
                               "package, or set FA2_LIB to the library's path")
        return _lib


def _declare(h):
    c = ctypes
    h.fa2_last_error.restype = c.c_char_p
    h.fa2_status_name.restype = c.c_char_p
    h.fa2_status_name.argtypes = [c.c_int]
    h.fa2_version.restype = c.c_char_p
    h.fa2_create.argtypes = [c.POINTER(c.c_void_p), c.POINTER(Options)]
    h.fa2_destroy.argtypes = [c.c_void_p]
    h.fa2_destroy.restype = None
    h.fa2_check_forward.argtypes = [c.POINTER(FwdArgs)]
    h.fa2_forward.argtypes = [c.c_void_p, c.POINTER(FwdArgs), c.c_void_p]
    h.fa2_backward.argtypes = [c.c_void_p, c.POINTER(BwdArgs), c.c_void_p]
    h.fa2_check_backward.argtypes = [c.POINTER(BwdArgs)]
    h.fa2_backward_workspace_size.argtypes = [c.POINTER(BwdArgs)]
    h.fa2_backward_workspace_size.restype = c.c_size_t
    h.fa2_prepare.argtypes = [c.c_void_p, c.POINTER(KernelDesc), c.c_int]
    h.fa2_prepare_spec.argtypes = [c.c_void_p, c.c_char_p]
    h.fa2_stats.argtypes = [c.c_void_p, c.POINTER(CacheStats)]
    h.fa2_dropout_mask.argtypes = [c.c_void_p, c.POINTER(FwdArgs), c.c_void_p, c.c_void_p]
    h.fa2_dropout_mask_host.argtypes = [c.POINTER(FwdArgs), c.c_void_p]


def check(status):
    """Raises Fa2Error with the library's message unless status is OK."""
    if status != OK:
        raise Fa2Error(status, lib().fa2_last_error().decode("utf-8", "replace"))


def find_nvrtc_dirs(roots=None):
    """Lib folders of the NVIDIA pip packages that hold NVRTC: nvidia/cu13/lib
    (CUDA 13 wheels) and nvidia/cuda_nvrtc/lib (CUDA 12 wheels), under each
    site-packages folder. C cannot see sys.path, so we hand these over."""
    if roots is None:
        roots = list(sys.path)
        try:
            roots += site.getsitepackages() + [site.getusersitepackages()]
        except AttributeError:  # virtualenv's old site module
            pass
    found = []
    for root in roots:
        for sub in (("nvidia", "cu13", "lib"), ("nvidia", "cuda_nvrtc", "lib")):
            d = os.path.join(root or ".", *sub)
            if os.path.isdir(d) and d not in found:
                found.append(d)
    return found


def bytes_or_none(s):
    return None if s is None else os.fsencode(s)
