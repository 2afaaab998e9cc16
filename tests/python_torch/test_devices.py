"""fa2gen on several devices, without a GPU: which device a call runs on and
which context it takes, and the error for tensors on different devices.

FakeTensorMode makes tensors on cuda:0 and cuda:1 here, where no CUDA device
exists; the operators' fake implementations run the same device check as the
CUDA ones, so what is refused here is refused on a GPU and at trace time.
The GPU side (launches on cuda:1, on a side stream) is tests/gpu/test_multi_device.py.

Run by `make test` with the Python of tools/torch_python.sh."""
import os
import sys
import unittest
from unittest import mock

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import fa2gen  # noqa: E402
from fa2gen import _ops  # noqa: E402

BF16 = torch.bfloat16


def on(device, *shape, dtype=BF16):
    return torch.empty(*shape, device=device, dtype=dtype)


class DeviceIndex(unittest.TestCase):
    def test_forms(self):
        for dev, want in ((0, 0), (3, 3), ("cuda:1", 1), ("cuda:12", 12),
                          (torch.device("cuda", 2), 2), (torch.device("cuda:5"), 5)):
            self.assertEqual(fa2gen.device_index(dev), want, dev)

    def test_current_device_for_cuda_and_none(self):
        with mock.patch.object(torch.cuda, "current_device", return_value=4):
            for dev in (None, "cuda", torch.device("cuda")):
                self.assertEqual(fa2gen.device_index(dev), 4, dev)

    def test_refusals_name_the_value(self):
        for dev, exc, text in ((-1, ValueError, "device=-1: a CUDA device index is >= 0"),
                               ("cpu", ValueError, "device='cpu': fa2gen runs on CUDA devices"),
                               ("cuda:x", ValueError, "device='cuda:x': expected 'cuda' or 'cuda:N'"),
                               (torch.device("cpu"), ValueError, "fa2gen runs on CUDA devices"),
                               (True, TypeError, "device=True: expected an index")):
            with self.assertRaises(exc) as cm:
                fa2gen.device_index(dev)
            self.assertIn(text, str(cm.exception))


class Contexts(unittest.TestCase):
    """One shared context per device index, whatever form names it (no
    driver here: Context is replaced by a recorder)."""

    def setUp(self):
        self.made = []
        saved = dict(fa2gen._contexts)
        fa2gen._contexts.clear()
        self.addCleanup(lambda: (fa2gen._contexts.clear(), fa2gen._contexts.update(saved)))

        class Recorder:
            def __init__(rec, device):
                self.made.append(device)
                rec.device = device
                rec.prepared = []

            def prepare(rec, kernels):
                rec.prepared.append(kernels)

        patcher = mock.patch.object(fa2gen, "Context", Recorder)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_one_context_per_index(self):
        c1 = fa2gen.context(1)
        self.assertIs(fa2gen.context("cuda:1"), c1)
        self.assertIs(fa2gen.context(torch.device("cuda", 1)), c1)
        self.assertIsNot(fa2gen.context(0), c1)
        self.assertEqual(self.made, [1, 0])

    def test_operators_take_the_tensors_device_context(self):
        self.assertEqual(_ops._context(torch.device("cuda", 1)).device, 1)
        with mock.patch.object(torch.cuda, "current_device", return_value=0):
            self.assertEqual(_ops._context(torch.device("cuda:1")).device, 1)
        self.assertEqual(self.made, [1])

    def test_prepare_on_the_named_or_current_device(self):
        fa2gen.prepare(["x"], device=torch.device("cuda", 2))
        with mock.patch.object(torch.cuda, "current_device", return_value=3):
            fa2gen.prepare(["y"])                        # the current device, not 0
            fa2gen.prepare(["z"], device=torch.device("cuda"))
        self.assertEqual(self.made, [2, 3])
        self.assertEqual(fa2gen.context(3).prepared, [["y"], ["z"]])


class MixedDevices(unittest.TestCase):
    def setUp(self):
        self.mode = FakeTensorMode()
        self.mode.__enter__()
        self.addCleanup(self.mode.__exit__, None, None, None)

    def raises(self, text, fn, *args, **kw):
        with self.assertRaises(ValueError) as cm:
            fn(*args, **kw)
        self.assertEqual(str(cm.exception), text)

    def test_attention_names_each_device(self):
        q, k = on("cuda:1", 2, 64, 4, 64), on("cuda:0", 2, 64, 4, 64)
        self.raises("fa2gen.attention: q on cuda:1, k on cuda:0, v on cuda:1: all must be on one "
                    "device (it runs on q's, cuda:1; move the others with .to('cuda:1'))",
                    fa2gen.attention, q, k, q)
        self.raises("fa2gen.flash_attn_func: q on cuda:1, k on cuda:1, v on cuda:0: all must be on "
                    "one device (it runs on q's, cuda:1; move the others with .to('cuda:1'))",
                    fa2gen.flash_attn_func, q, q, k)

    def test_operators_check_every_tensor(self):
        q1, q0 = on("cuda:1", 2, 64, 4, 64), on("cuda:0", 2, 64, 4, 64)
        with self.assertRaises(ValueError) as cm:
            torch.ops.fa2gen.fwd(q1, q1, q0, True, "robust", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0, None)
        self.assertIn("fa2gen.fwd: q on cuda:1, k on cuda:1, v on cuda:0", str(cm.exception))
        o, lse, o32 = torch.ops.fa2gen.fwd(q1, q1, q1, True, "robust", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0, None)
        lse0 = on("cuda:0", *lse.shape, dtype=torch.float32)
        with self.assertRaises(ValueError) as cm:
            torch.ops.fa2gen.bwd(o, q1, q1, q1, o, lse0, o32, True, "robust", 0.0, 0.0, 0.0, False,
                                 -1, -1, None, 0.0, None)
        self.assertIn("fa2gen.bwd: dout on cuda:1, q on cuda:1, k on cuda:1, v on cuda:1, "
                      "o on cuda:1, lse on cuda:0, o32 on cuda:1", str(cm.exception))

    def test_outputs_and_gradients_on_the_inputs_device(self):
        # (autograd's engine needs a real device, so the backward operator is called as
        # the registered autograd calls it)
        q, k = on("cuda:1", 2, 64, 4, 64), on("cuda:1", 2, 32, 2, 64)
        o, lse, o32 = torch.ops.fa2gen.fwd(q, k, k, True, "robust", 0.0, 0.0, 0.0, True, False, -1, -1, None, 0.0, None)
        for t in (fa2gen.attention(q, k, k, causal=True), o, lse, o32):
            self.assertEqual(t.device, torch.device("cuda", 1))
        for g in torch.ops.fa2gen.bwd(o, q, k, k, o, lse, o32, True, "robust", 0.0, 0.0, 0.0,
                                      False, -1, -1, None, 0.0, None):
            self.assertEqual(g.device, torch.device("cuda", 1))


if __name__ == "__main__":
    unittest.main()
