#!/usr/bin/env python3
"""The Python path of one fa2gen.attention call, timed on a machine without a GPU.

    FA2_LIB=lib/libfa2rt.so FA2_CUDA_LIBRARY=$PWD/build/libfakecuda.so \\
        $(tools/torch_python.sh) bench/host_path.py [B,N,H,d] [--grad | --backward] [--stab=MODE] [--dispatcher | --ab | --native-ab] [--profile]

CPU tensors are dispatched to the operators' CUDA implementation, the device guard and
the stream are stubbed, and the stand-in driver (tests/fake) takes the launch: every
step of a call but the GPU's runs (checks, allocations, the argument block, kernel
selection in libfa2rt), so a change to the Python layer can be measured here before a
GPU run (bench/NOTES.md "Session 22"). The CPU's tensors come from another allocator
than CUDA's caching one, and the fake launch costs less than cuLaunchKernel: compare
changes, not absolute times, with bench/host_overhead.py on a GPU.
--grad: the forward of a training step (inputs that require grad); --backward: the
backward alone (torch.autograd.grad on a kept graph, as bench/sdpa_bench.py times it).
--dispatcher: every call through torch.ops' dispatcher, as under tracing (no eager path);
--ab: both, alternating seven times in one process (min and median of each);
--native-ab: the eager path native (fa2gen/_native.cpp) and in Python, the same way.
"""
import contextlib
import cProfile
import inspect
import os
import pstats
import sys
import time

import torch

_impl = torch.library.Library.impl


def _impl_cpu_too(self, name, fn, key=None, *args, **kwargs):
    """Library.impl that registers each CUDA implementation for CPU tensors as well."""
    _impl(self, name, fn, key, *args, **kwargs)
    if key == "CUDA":
        _impl(self, name, fn, "CPU", *args, **kwargs)


torch.library.Library.impl = _impl_cpu_too
torch.cuda.device = lambda device: contextlib.nullcontext()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))
import fa2gen  # noqa: E402
from fa2gen import _native, _ops, _torch  # noqa: E402

# CPU tensors take the eager path as CUDA ones would (--dispatcher: neither does)
_ops.EAGER_DEVICES = () if "--dispatcher" in sys.argv else ("cuda", "cpu")
_ops._stream = lambda device: 0
_ops._index = lambda device: 0
# the same checks, with CPU tensors allowed
exec(inspect.getsource(_torch.check_inputs).replace('("cuda", "meta")', '("cuda", "meta", "cpu")'),
     _torch.__dict__)


def per_call(call, n):
    """Microseconds per call over n calls."""
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    shape = next((a for a in sys.argv[1:] if not a.startswith("--")), "2,128,8,64")
    stab = next((a[7:] for a in sys.argv[1:] if a.startswith("--stab=")), "none")
    B, N, H, d = (int(x) for x in shape.split(","))
    backward = "--backward" in sys.argv
    grad = backward or "--grad" in sys.argv
    q, k, v = (torch.randn(B, N, H, d, dtype=torch.bfloat16, requires_grad=grad) for _ in range(3))

    def make_call():
        """The timed call; --backward: of a graph recorded now (by the path in force)."""
        call = lambda: fa2gen.attention(q, k, v, causal=True, stab=stab)
        if not backward:
            return call
        out = call()
        dout = torch.randn_like(out)
        return lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)

    call = make_call()
    for _ in range(50):  # the first compiles (NVRTC) and loads (fake)
        call()
    what = f"B={B} N={N} H={H} d={d} {stab} {'backward' if backward else f'grad={grad}'}"
    native = _native.module
    paths = {  # name: (EAGER_DEVICES, the native module's getter)
        "--ab": {"eager": (("cuda", "cpu"), native), "dispatcher": ((), native)},
        "--native-ab": {"native": (("cuda", "cpu"), native),
                        "python": (("cuda", "cpu"), lambda: None)},
    }
    ab = next((paths[a] for a in sys.argv[1:] if a in paths), None)
    if ab:  # two paths alternating seven times in one process
        calls = {}
        for path, (devices, module) in ab.items():
            _ops.EAGER_DEVICES, _native.module = devices, module
            calls[path] = make_call()
            calls[path]()
        times = {path: [] for path in ab}
        for _ in range(7):
            for path, (devices, module) in ab.items():
                _ops.EAGER_DEVICES, _native.module = devices, module
                times[path].append(per_call(calls[path], 500))
        for path, t in times.items():
            print(f"{what} {path}: min {min(t):.1f}, median {sorted(t)[3]:.1f} us a call")
        return
    print(f"{what}: {per_call(call, 2000):.1f} us a call")
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(500):
            call()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
