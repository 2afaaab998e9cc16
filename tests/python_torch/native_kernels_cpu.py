"""The native module's dispatcher kernels (_native.cpp's register_kernels) on CPU tensors, in
a process of its own: test_native.py runs it (the other tests register the Python
implementations for the CPU key, which these kernels would replace). Checks that
torch.ops.fa2gen.* through the kernels hand libfa2rt the Python implementations' argument
blocks (fwd, bwd, varlen_fwd, varlen_bwd), that what the kernels do not take reaches the
Python implementation with its errors unchanged, and that a failed call raises Fa2Error.
ctypes recorders stand in for fa2_forward and fa2_backward. Prints OK; exits 1 on a failure."""
import contextlib
import os
import sys
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from arg_blocks import FAKE_CONTEXT, Recorder, fields  # noqa: E402
from fa2gen import _native, _ops  # noqa: E402
from fa2gen._lib import Fa2Error  # noqa: E402

REC = Recorder()


def blocks(run, named):
    """The argument blocks of run(), pointers named: named(outputs) maps data_ptr -> name."""
    REC.calls.clear()
    out = run()
    names = named(out)
    return [(kind, where, fields(a, names)) for kind, where, a in REC.calls], out


def check(what, a, b):
    if a != b:
        sys.exit(f"native_kernels_cpu: {what}:\n  kernels {a}\n  python  {b}")


def main():
    module = _native.build(quiet=True)
    REC.init(module)
    module.register_kernels(_ops.fwd._fn, _ops.bwd._fn, _ops.varlen_fwd._fn, _ops.varlen_bwd._fn,
                            "CPU")
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 48, 4, 64, dtype=torch.bfloat16) for _ in range(3))
    qv, kv, vv = (t.flatten(0, 1) for t in (q, k, v))
    cu = torch.tensor([0, 17, 17, 96], dtype=torch.int32)
    sinks = torch.randn(4)
    fwd = (True, "robust", 0.0, 0.0, 0.125, True, False, -1, 7, None, 30.0, 0.0, None, sinks)
    bwd = (True, "robust", 0.0, 0.0, 0.125, False, -1, 7, None, 30.0, 0.0, None, sinks)
    ptrs = lambda *ts: {t.data_ptr(): n for n, t in ts}
    inputs = (("q", q), ("k", k), ("v", v), ("sinks", sinks))
    vinputs = (("q", qv), ("k", kv), ("v", vv), ("sinks", sinks), ("cu", cu))
    fwd_names = lambda base: lambda out: ptrs(*base, ("o", out[0]), ("o32", out[2]))
    bwd_names = lambda base, o, o32: lambda out: ptrs(*base, ("o", o), ("o32", o32), ("dq", out[0]),
                                                      ("dk", out[1]), ("dv", out[2]),
                                                      ("dsinks", out[3]))
    with mock.patch.object(_ops, "_context", lambda device: REC.python_context()), \
            mock.patch.object(_ops, "_stream", lambda device: 0), \
            mock.patch.object(torch.cuda, "device", lambda device: contextlib.nullcontext()):
        for name, op, args, names in (
                ("fwd", _ops.fwd, (q, k, v) + fwd, fwd_names(inputs)),
                ("varlen_fwd", _ops.varlen_fwd, (qv, kv, vv, cu, cu, 79, 79) + fwd, fwd_names(vinputs))):
            REC.python_calls.clear()
            seen_k, out = blocks(lambda: op(*args), names)
            check(name + " through the kernel, not Python", REC.python_calls, [])
            seen_p, _ = blocks(lambda: op._fn(*args), names)
            check(name, seen_k, seen_p)
            check(name + " context", [w for _, w, _ in seen_k], [(FAKE_CONTEXT, None)])
            o, lse, o32 = out
            base = inputs if name == "fwd" else vinputs
            xs = (q, k, v) if name == "fwd" else (qv, kv, vv)
            bop = _ops.bwd if name == "fwd" else _ops.varlen_bwd
            bargs = ((o,) + xs + (o, lse, o32) + ((cu, cu, 79, 79) if name != "fwd" else ()) + bwd)
            REC.python_calls.clear()
            seen_k, _ = blocks(lambda: bop(*bargs), bwd_names(base, o, o32))
            check(bop.short + " through the kernel, not Python", REC.python_calls, [])
            seen_p, _ = blocks(lambda: bop._fn(*bargs), bwd_names(base, o, o32))
            check(bop.short, seen_k, seen_p)
            check(bop.short + " kinds", [kind for kind, _, _ in seen_k], ["backward"])
        # what the kernels leave to Python: its error, unchanged, through the dispatcher
        try:
            _ops.fwd(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0, 0.0,
                     None, torch.zeros(3))
            sys.exit("native_kernels_cpu: sinks of 3 for 4 heads did not raise")
        except ValueError as e:
            check("the Python implementation's message", "sinks is torch.float32 of shape (3,)" in str(e), True)
        module.set_context(0, 0)  # no context: the Python implementation (it makes one)
        REC.python_calls.clear()
        seen, _ = blocks(lambda: _ops.fwd(q, k, v, *fwd), fwd_names(inputs))
        check("without a context", (REC.python_calls, [kind for kind, _, _ in seen]), (["forward"], ["forward"]))
        module.set_context(0, FAKE_CONTEXT)
        REC.status = 1
        try:
            _ops.fwd(q, k, v, *fwd)
            sys.exit("native_kernels_cpu: a failed fa2_forward did not raise")
        except Fa2Error as e:
            check("the failed call's status", e.status_name, "FA2_ERR_INVALID_ARGUMENT")
    # the operators the module has no kernel for keep their Python ones (dropout's mask)
    from fa2gen import _ops as ops
    check("dropout_mask keeps its CUDA kernel",
          torch._C._dispatch_has_kernel_for_dispatch_key("fa2gen::dropout_mask", "CUDA"), True)
    for name in ops._NATIVE_KERNELS:  # loaded at import (built above): the module's CUDA kernels
        cuda = [line for line in torch._C._dispatch_dump("fa2gen::" + name).splitlines()
                if line.startswith("CUDA:")]
        check(name + "'s CUDA kernel", (ops._PY_CUDA, len(cuda), "_native.cpp" in cuda[0]), (None, 1, True))
    print("native_kernels_cpu: OK")


if __name__ == "__main__":
    main()
