"""The operators' eager path (_ops.eager, _CudaOp.call) without a GPU: when a call skips
the dispatcher, and that it hands libfa2rt the same arguments as the dispatcher's path,
forward and backward, with the gradient recorded the same way.

CPU tensors stand in for CUDA ones: the operators' implementations are registered for
the CPU key here, CPU joins _ops.EAGER_DEVICES, and a recorder replaces the device's
fa2gen.Context (nothing is launched; bench/host_path.py times the same path).
Run by `make test` with the Python of tools/torch_python.sh."""
import contextlib
import ctypes
import os
import sys
import unittest
from unittest import mock

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import fa2gen  # noqa: E402
from fa2gen import _native, _ops  # noqa: E402
from fa2gen._lib import BwdArgs, FwdArgs  # noqa: E402
from arg_blocks import fields  # noqa: E402

_CPU = torch.library.Library("fa2gen", "IMPL")  # the CUDA implementations, for CPU tensors
for _op in (_ops.fwd, _ops.bwd):
    _CPU.impl(_op.short, _op._fn, "CPU")


class Recorder:
    """A context that keeps each call's argument block (as a copy) instead of launching."""

    def __init__(self):
        self.calls = []

    def forward(self, args, stream):
        self.calls.append(("forward", FwdArgs.from_buffer_copy(args)))

    def backward(self, args, stream):
        self.calls.append(("backward", BwdArgs.from_buffer_copy(args)))


class EagerPath(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        for target, name, value in ((_ops, "EAGER_DEVICES", ("cuda", "cpu")),
                                    (_ops, "_context", lambda device: self.rec),
                                    (_ops, "_stream", lambda device: 0),
                                    (_native, "module", lambda: None),  # test_native.py's
                                    (torch.cuda, "device", lambda device: contextlib.nullcontext())):
            patcher = mock.patch.object(target, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def inputs(self, grad):
        torch.manual_seed(0)
        return [torch.randn(2, 64, 4, 64, dtype=torch.bfloat16, requires_grad=grad) for _ in range(3)]

    def test_eager_only_where_nothing_must_see_the_operator(self):
        q = torch.zeros(2, dtype=torch.bfloat16)
        self.assertTrue(_ops.eager((q, None, True, 1.0)))
        self.assertFalse(_ops.eager((torch.zeros(2, device="meta"),)))
        with FakeTensorMode():
            self.assertFalse(_ops.eager((torch.zeros(2),)))
        with TorchDispatchMode():
            self.assertFalse(_ops.eager((q,)))
        with TorchFunctionMode():
            self.assertFalse(_ops.eager((q,)))
        seen = []
        torch.func.vmap(lambda x: seen.append(_ops.eager((x,))) or x)(torch.zeros(3, 2))
        self.assertEqual(seen, [False])
        with mock.patch.object(torch.compiler, "is_compiling", lambda: True):
            self.assertFalse(_ops.eager((q,)))
        with mock.patch.object(_ops, "EAGER_DEVICES", ("cuda",)):
            self.assertFalse(_ops.eager((q,)))

    def run_both(self, grad):
        """The forward (and with grad the backward) of one call, each path in turn: the
        argument blocks the recorder saw, and the outputs."""
        seen, outs = {}, {}
        for path, devices in (("eager", ("cuda", "cpu")), ("dispatcher", ())):
            self.rec.calls.clear()
            q, k, v = self.inputs(grad)
            with mock.patch.object(_ops, "EAGER_DEVICES", devices):
                o, lse, o32 = _ops.fwd.call(q, k, v, True, "robust", 0.0, 0.0, 0.0, False, False,
                                            -1, -1, None, 0.0, 0.0, None, None)
                named = {q.data_ptr(): "q", k.data_ptr(): "k", v.data_ptr(): "v", o.data_ptr(): "o"}
                if grad:
                    self.assertIsNotNone(o.grad_fn, path)
                    dout = torch.ones_like(o)
                    dq, dk, dv = torch.autograd.grad(o, (q, k, v), dout)
                    named.update({t.data_ptr(): n for n, t in
                                  (("dout", dout), ("dq", dq), ("dk", dk), ("dv", dv))})
                    self.assertEqual([t.shape for t in (dq, dk, dv)], [q.shape] * 3, path)
                else:
                    self.assertIsNone(o.grad_fn, path)
            seen[path] = [(what, fields(a, named)) for what, a in self.rec.calls]
            outs[path] = (o.shape, lse.shape, o32.shape)
        return seen, outs

    def test_same_arguments_as_the_dispatcher_forward(self):
        seen, outs = self.run_both(grad=False)
        self.assertEqual([w for w, _ in seen["eager"]], ["forward"])
        self.assertEqual(seen["eager"], seen["dispatcher"])
        self.assertEqual(outs["eager"], outs["dispatcher"])
        self.assertEqual(seen["eager"][0][1]["stab"], 2)  # robust: the call's own fields

    def test_same_arguments_as_the_dispatcher_with_a_gradient(self):
        seen, outs = self.run_both(grad=True)
        self.assertEqual([w for w, _ in seen["eager"]], ["forward", "backward"])
        self.assertEqual(seen["eager"], seen["dispatcher"])
        self.assertEqual(outs["eager"], outs["dispatcher"])
        bwd = seen["eager"][1][1]
        self.assertEqual((bwd["dq"][0], bwd["dk"][0], bwd["dv"][0]), ("dq", "dk", "dv"))
        self.assertEqual(bwd["workspace"], "workspace")

    def test_the_backward_operator_keeps_the_dispatcher_when_it_would_record(self):
        # create_graph=True: bwd has no autograd formula; the dispatcher's fallback, not an
        # eager call that would hand back gradients without a history.
        q, k, v = self.inputs(grad=True)
        o, lse, o32 = _ops.fwd.call(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                                    None, 0.0, 0.0, None, None)
        with mock.patch.object(_ops.bwd, "_fn", side_effect=AssertionError("eager")) as direct:
            with torch.enable_grad():
                _ops.bwd.call(torch.ones_like(o), q, k, v, o, lse, o32, False, "none", 0.0, 0.0,
                              0.0, False, -1, -1, None, 0.0, 0.0, None, None)
        direct.assert_not_called()


if __name__ == "__main__":
    unittest.main()
