"""The native eager forward (fa2gen/_native.cpp) without a GPU: that it hands libfa2rt the
same argument blocks as the Python implementation, forward and backward, fixed length and
varlen, with its autograd node in C++; that it leaves to Python what Python must check;
and that a failed fa2_* call raises Fa2Error.

CPU tensors stand in for CUDA ones (as in test_eager_path.py); ctypes recorders stand in
for fa2_forward and fa2_backward in both paths. The module is built here if it is not in
the cache folder yet (about 30 s of one core). Run by `make test`."""
import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import unittest
from unittest import mock

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import fa2gen  # noqa: E402
from fa2gen import _native, _ops  # noqa: E402
from fa2gen._lib import Fa2Error, lib  # noqa: E402
from arg_blocks import FAKE_CONTEXT, Recorder, address, fields  # noqa: E402
import test_eager_path  # noqa: E402,F401  (registers fwd and bwd for CPU tensors)

_CPU = torch.library.Library("fa2gen", "IMPL")  # test_eager_path registers fwd and bwd's
for _op in (_ops.varlen_fwd, _ops.varlen_bwd):
    _CPU.impl(_op.short, _op._fn, "CPU")

def _build():
    """The module, or the reason there is none (no C++ compiler or no Python headers: a
    skip, said; a failed compile with both fails the suite)."""
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return None, "no C++ compiler (c++ or $CXX; make deps installs g++): the native operator is not built"
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        return None, f"no Python.h in {include} (make deps installs python3-dev): the native operator is not built"
    return _native.build(quiet=True), None


MODULE, NO_MODULE = _build()


@unittest.skipIf(MODULE is None, NO_MODULE)
class NativePath(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        self.rec.init(MODULE)
        self.addCleanup(_native._init, MODULE)
        self.addCleanup(MODULE.set_context, 0, 0)
        context = self.rec.python_context()  # the Python implementation's: the same stand-ins
        self.native = MODULE
        for target, name, value in ((_ops, "EAGER_DEVICES", ("cuda", "cpu")),
                                    (_ops, "_context", lambda device: context),
                                    (_ops, "_stream", lambda device: 0),
                                    (_native, "module", lambda: self.native),
                                    (torch.cuda, "device", lambda device: contextlib.nullcontext())):
            patcher = mock.patch.object(target, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def inputs(self, grad, varlen=False):
        torch.manual_seed(0)
        shape = (96, 4, 64) if varlen else (2, 48, 4, 64)
        return [torch.randn(*shape, dtype=torch.bfloat16, requires_grad=grad) for _ in range(3)]

    def run_both(self, grad, varlen=False, sinks=None, want_o32=False):
        """One call (and with grad its backward) by each path: the argument blocks the
        recorders saw, with pointers named, and the outputs' shapes and strides."""
        seen, outs, o_native = {}, {}, None
        cu = torch.tensor([0, 17, 17, 96], dtype=torch.int32)
        for path in ("native", "python"):
            self.native = MODULE if path == "native" else None
            self.rec.calls.clear()
            q, k, v = self.inputs(grad, varlen)
            s = sinks.detach().clone().requires_grad_(grad) if sinks is not None else None
            common = (True, "robust", 0.0, 0.0, 0.125, want_o32, False, -1, 7, None, 30.0, 0.0,
                      None, s)
            if varlen:
                o, lse, o32 = _ops.varlen_fwd.call(q, k, v, cu, cu, 79, 79, *common)
            else:
                o, lse, o32 = _ops.fwd.call(q, k, v, *common)
            named = {t.data_ptr(): n for n, t in (("q", q), ("k", k), ("v", v), ("o", o), ("cu", cu), ("o32", o32))}
            if s is not None:
                named[s.data_ptr()] = "sinks"
            if grad:
                self.assertIsNotNone(o.grad_fn, path)
                dout = torch.ones_like(o)
                wrt = (q, k, v) + ((s,) if s is not None else ())
                grads = torch.autograd.grad(o, wrt, dout)
                named.update({t.data_ptr(): n for n, t in zip(("dout", "dq", "dk", "dv", "dsinks"),
                                                              (dout,) + grads)})
                outs[path + " grads"] = [(g.shape, g.stride(), g.dtype) for g in grads]
            else:
                self.assertIsNone(o.grad_fn, path)
            seen[path] = [(what, where, fields(a, named)) for what, where, a in self.rec.calls]
            o_native = o if path == "native" else o_native
            outs[path] = [(t.shape, t.stride(), t.dtype) for t in (o, lse, o32)]
        return seen, outs, o_native

    def assert_same(self, seen, outs, kinds):
        self.assertEqual([w for w, _, _ in seen["native"]], kinds)
        self.assertEqual({where for _, where, _ in seen["native"]}, {(FAKE_CONTEXT, None)})
        self.assertEqual(seen["native"], seen["python"])
        self.assertEqual(outs["native"], outs["python"])
        self.assertEqual(outs.get("native grads"), outs.get("python grads"))

    def test_forward_blocks_equal_the_python_implementation(self):
        seen, outs, _ = self.run_both(grad=False)
        self.assert_same(seen, outs, ["forward"])
        block = seen["native"][0][2]
        self.assertEqual((block["stab"], block["window_right"], block["softcap"]), (2, 7, 30.0))
        self.assertEqual(block["q"][0], "q")

    def test_forward_and_backward_blocks_with_a_gradient(self):
        seen, outs, o = self.run_both(grad=True, want_o32=True)
        self.assert_same(seen, outs, ["forward", "backward"])
        self.assertEqual(o.grad_fn.name(), "torch::autograd::CppNode<fa2gen::Attention>")
        bwd = seen["native"][1][2]
        self.assertEqual((bwd["dq"][0], bwd["dk"][0], bwd["dv"][0], bwd["delta"]), ("dq", "dk", "dv", 1))
        self.assertEqual(bwd["workspace"], "workspace")

    def test_sinks_get_their_gradient(self):
        sinks = torch.randn(4, dtype=torch.float32)
        seen, outs, _ = self.run_both(grad=True, sinks=sinks)
        self.assert_same(seen, outs, ["forward", "backward"])
        self.assertEqual(seen["native"][1][2]["dsinks"], "dsinks")
        self.assertEqual(seen["native"][0][2]["sinks"], "sinks")

    def test_varlen_blocks(self):
        seen, outs, _ = self.run_both(grad=True, varlen=True)
        self.assert_same(seen, outs, ["forward", "backward"])
        block = seen["native"][0][2]
        self.assertEqual((block["batch"], block["total_q"], block["seqlen_q"]), (3, 96, 79))
        self.assertEqual(block["cu_seqlens_q"], "cu_seqlens_q")  # fields(): the named pointer

    def test_python_checks_what_python_checks(self):
        q, k, v = self.inputs(False)
        bad_sinks = torch.zeros(3, dtype=torch.float32)
        with self.assertRaisesRegex(ValueError, r"sinks is torch.float32 of shape \(3,\)"):
            _ops.fwd.call(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0,
                          0.0, None, bad_sinks)
        self.assertIsNone(MODULE.fwd(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                                     None, 0.0, 0.0, None, bad_sinks))
        self.assertIsNone(MODULE.fwd(q, k, v, False, "fast", 0.0, 0.0, 0.0, False, False, -1, -1,
                                     None, 0.0, 0.0, None, None))
        self.assertIsNone(MODULE.fwd(q.float(), k, v, False, "none", 0.0, 0.0, 0.0, False, False,
                                     -1, -1, None, 0.0, 0.0, None, None))
        MODULE.set_context(0, 0)  # no context yet: Python makes it (here: the recorder)
        self.assertIsNone(MODULE.fwd(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                                     None, 0.0, 0.0, None, None))
        self.assertEqual(self.rec.calls, [])

    def test_a_failed_call_raises_fa2error(self):
        q, k, v = self.inputs(True)
        self.rec.status = 1
        with self.assertRaises(Fa2Error) as e:
            _ops.fwd.call(q.detach(), k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                          None, 0.0, 0.0, None, None)
        self.assertEqual(e.exception.status_name, "FA2_ERR_INVALID_ARGUMENT")
        self.rec.status = 0
        o, _, _ = _ops.fwd.call(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1, None,
                                0.0, 0.0, None, None)
        self.rec.status = 6
        with self.assertRaises(Fa2Error) as e:  # from the C++ autograd node, as from the Python one
            o.sum().backward()
        self.assertEqual(e.exception.status_name, "FA2_ERR_CUDA")

    def test_dispatcher_kernels_in_a_process_of_their_own(self):
        # native_kernels_cpu.py: torch.ops.fa2gen.* through the module's kernels (registered
        # for CPU there, where no other test registers the Python implementations for it)
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "native_kernels_cpu.py")],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "native_kernels_cpu: OK"), r.stderr[-3000:])

    def test_the_launch_runs_without_the_gil(self):
        # libc's usleep stands in for fa2_forward (its first argument, the context, is the
        # microseconds): another Python thread runs while it sleeps only without the GIL
        # (ctypes released it too; a first call's NVRTC compile takes seconds)
        libc, h = ctypes.CDLL(None), lib()
        MODULE.init(address(libc.usleep), address(libc.usleep), address(h.fa2_backward_workspace_size),
                    address(h.fa2_last_error))
        MODULE.set_context(0, 300000)  # 0.3 s
        q, k, v = self.inputs(False)
        count, stop = [0], threading.Event()

        def spin():
            while not stop.is_set():
                count[0] += 1
        thread = threading.Thread(target=spin)
        thread.start()
        try:
            time.sleep(0.05)  # (sleep releases the GIL) the thread's pace alone, per 0.1 s
            start = count[0]
            time.sleep(0.1)
            pace = count[0] - start
            before = count[0]
            out = MODULE.fwd(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0,
                             0.0, None, None)
            during = count[0] - before
        finally:
            stop.set()
            thread.join()
        self.assertEqual(out[0].shape, q.shape)
        # 0.3 s free: about 3 paces; held, at most a switch interval's (5 ms) worth
        self.assertGreater(during, pace, f"{during} counts in the 0.3 s launch, {pace} in 0.1 s alone")

    def test_attention_takes_the_native_path(self):
        q, k, v = self.inputs(False)
        from fa2gen import _torch
        with mock.patch.object(_ops.fwd, "_fn", side_effect=AssertionError("python path")), \
                mock.patch.object(_torch, "check_inputs", lambda *args, **kwargs: None):  # CPU
            o = fa2gen.attention(q, k, v, causal=True)
        self.assertEqual(o.shape, q.shape)
        self.assertEqual([w for w, _, _ in self.rec.calls], ["forward"])


if __name__ == "__main__":
    unittest.main()
