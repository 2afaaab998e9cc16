"""fa2gen's operators in C++ (_native.cpp): built on first use, loaded at import once built.

The Python operators (_ops) run everywhere; where a C++ compiler and PyTorch's and
Python's headers are present, an eager call's host path is native instead: no Python
between the checks and the launch, and no Python node in the autograd engine's backward
(bench/NOTES.md "Session 24"); and the operators' CUDA kernels in the dispatcher are the
module's (_ops.use_native_kernels), so compiled graphs launch without Python too.

FA2_NATIVE: unset or "1": load it at import when it is built, else build it on the first
eager call (once per source and PyTorch build) into the cache folder ($FA2_CACHE_DIR, else
$XDG_CACHE_HOME/fa2gen, else ~/.cache/fa2gen; under native/), and take the Python path with
one warning when that fails; "0": the Python path always; "require": raise when it cannot
be built. `python -m fa2gen._native` builds it now (about 30 s of one core), for programs
whose first call is a compiled one.
"""
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import threading
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.join(_HERE, "_native.cpp")
_module = None
_tried = False
_lock = threading.Lock()


def _header_dir():
    """The folder of fa2.h: beside the package when pip installed it, else the checkout's."""
    for d in (_HERE, os.path.join(_HERE, os.pardir, os.pardir, "include")):
        if os.path.isfile(os.path.join(d, "fa2.h")):
            return os.path.normpath(d)
    raise RuntimeError(f"fa2.h is neither in {_HERE} nor in the checkout's include/")


def cache_dir():
    """Where built modules go: the C runtime's cache folder, subfolder native."""
    root = os.environ.get("FA2_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "fa2gen")
    return os.path.join(root, "native")


def _command(name, out):
    """The compiler's command line for module name into out, and the build's key text."""
    import torch
    torch_dir = os.path.dirname(torch.__file__)
    include = [os.path.join(torch_dir, "include"),
               os.path.join(torch_dir, "include", "torch", "csrc", "api", "include"),
               sysconfig.get_paths()["include"]]
    lib = os.path.join(torch_dir, "lib")
    cxx = os.environ.get("CXX", "c++")
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    return ([cxx, "-std=c++17", "-O2", "-fPIC", "-shared", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
             f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H"] +
            [f"-isystem{d}" for d in include] + [f"-I{_header_dir()}", _SOURCE, "-o", out,
                                                  f"-L{lib}", "-lc10", "-ltorch", "-ltorch_cpu",
                                                  "-ltorch_python", f"-Wl,-rpath,{lib}"])


def _key():
    """What the module depends on: its source, fa2.h, PyTorch's build, Python's ABI, CXX."""
    import torch
    h = hashlib.sha256()
    for path in (_SOURCE, os.path.join(_header_dir(), "fa2.h")):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(f"{torch.__version__} {torch.__file__} {sys.implementation.cache_tag} "
             f"{sysconfig.get_config_var('EXT_SUFFIX')} {os.environ.get('CXX', 'c++')}".encode())
    return h.hexdigest()[:16]


def _path():
    """Where the module of this source and PyTorch is (or goes)."""
    return os.path.join(cache_dir(), "fa2gen_native_" + _key() + ".so")


def build(quiet=False):
    """The module, compiled into the cache folder unless it is there; raises RuntimeError
    with the compiler's output when it cannot be built."""
    path = _path()
    folder, name = os.path.dirname(path), os.path.basename(path)[:-3]
    if not os.path.isfile(path):
        os.makedirs(folder, exist_ok=True)
        if not quiet:
            print(f"fa2gen: building the native operator into {path} (once per PyTorch; about "
                  "30 s; FA2_NATIVE=0 skips it)", file=sys.stderr)
        tmp = f"{path}.{os.getpid()}.tmp"  # processes building at once each rename a whole file
        try:
            r = subprocess.run(_command(name, tmp), capture_output=True, text=True)
        except OSError as e:  # no compiler
            raise RuntimeError(f"cannot run the C++ compiler ({e}); set CXX, or install g++") from e
        if r.returncode != 0:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise RuntimeError("the C++ compiler failed:\n" + (r.stderr or r.stdout)[-4000:])
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(
        name, path, loader=importlib.machinery.ExtensionFileLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _init(module):
    """Hands the module libfa2rt's entry points (the library Python loaded)."""
    import ctypes
    from ._lib import lib
    h = lib()
    address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value
    module.init(address(h.fa2_forward), address(h.fa2_backward),
                address(h.fa2_backward_workspace_size), address(h.fa2_last_error))


_loaded = []  # on_load's callbacks


def on_load(fn):
    """fn(module) once the module is loaded and initialized (_ops registers its kernels)."""
    _loaded.append(fn)


def _mode():
    mode = os.environ.get("FA2_NATIVE", "1")
    if mode not in ("0", "1", "require"):
        raise ValueError(f"FA2_NATIVE={mode!r}: allowed '0', '1' or 'require'")
    return mode


def _take(m):
    global _module, _tried
    _init(m)
    for fn in _loaded:
        fn(m)
    _module, _tried = m, True


def module():
    """The initialized module, or None (FA2_NATIVE=0, or the build failed: one warning)."""
    global _tried
    if _tried:  # every eager call asks: no lock once decided
        return _module
    with _lock:
        if not _tried:
            mode = _mode()
            if mode != "0":
                try:
                    _take(build())
                except Exception as e:
                    if mode == "require":
                        raise
                    warnings.warn(f"fa2gen: the native operator is not available ({e}); eager "
                                  "calls take the Python path (FA2_NATIVE=0 silences this)")
            _tried = True
    return _module


def loaded():
    """The module if it is loaded already, else None (never builds or loads it)."""
    return _module


def load_if_built():
    """Loads the module now if it is in the cache folder already (no build, no warning);
    else the first eager call builds it (module())."""
    if _tried or _mode() == "0":
        return
    with _lock:
        if not _tried and os.path.isfile(_path()):
            try:
                _take(build(quiet=True))
            except Exception:  # module() tries again, and says why
                pass


if __name__ == "__main__":
    print(build(quiet=True).__file__)
