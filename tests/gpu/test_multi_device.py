"""fa2gen where the device or stream is not the default one (pytest; GPU).

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rA tests/gpu/test_multi_device.py

The operators launch on the tensors' device and on that device's current
stream, with the context of that device, whatever the current device is (as
PyTorch's own operators do). One GPU checks the stream half: a side stream
whose work is held back by a sleep kernel, so a launch on the wrong stream
reads stale inputs. The device half (tensors on cuda:1 while cuda:0 is
current, and the reverse) needs two GPUs: those tests skip on one, saying so.
A call made while torch.cuda.set_device points at another GPU than the
tensors' cannot happen with one GPU, so only the two-GPU run shows it; the
CPU tests (tests/python_torch/test_devices.py) check which context and device
each call picks on fake cuda:0/cuda:1 tensors.
"""
import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the multi-device tests need a GPU", allow_module_level=True)

import fa2gen  # noqa: E402

TWO = pytest.mark.skipif(torch.cuda.device_count() < 2,
                         reason=f"needs 2 CUDA devices, this machine has "
                                f"{torch.cuda.device_count()}: the launch on a device other "
                                "than the current one is only shown on a multi-GPU machine")
SHAPE = (2, 256, 4, 64)  # B, N, H, d


def ref(q, k, v, causal=True):
    """float64 attention, (B, N, H, d), top-left causal (square here)."""
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    s = qd @ kd.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ vd).transpose(1, 2)


def close(got, want, name):
    # bf16 output of fp32-accumulated attention over N = 256: well under 2e-2
    err = (got.double() - want).abs().max().item()
    assert torch.isfinite(got).all(), f"{name}: NaN/Inf"
    assert err < 2e-2, f"{name}: max |err| {err:.3e} >= 2e-2"


def rand(device, grad=False):
    return torch.randn(*SHAPE, device=device, dtype=torch.bfloat16).requires_grad_(grad)


def launches(device):
    return fa2gen.context(device).stats()["launches"]


def test_side_stream_orders_after_earlier_work():
    """A call under torch.cuda.stream(s) launches on s: it runs after the
    sleep and the in-place update of q queued before it on s. On the default
    stream it would run at once, on the old q."""
    dev = torch.device("cuda", torch.cuda.current_device())
    q, k, v = rand(dev), rand(dev), rand(dev)
    q_new = rand(dev)
    fa2gen.attention(q, k, v, causal=True)  # loads the kernel outside the timed part
    torch.cuda.synchronize()
    s = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of one SM spinning: holds s back
        q.copy_(q_new)
        o = fa2gen.attention(q, k, v, causal=True)
    s.synchronize()
    close(o, ref(q_new, k, v), "forward on a side stream")


def test_side_stream_backward():
    """Forward and backward on a side stream (autograd runs the backward on
    the forward's stream): gradients as on the default stream."""
    dev = torch.device("cuda", torch.cuda.current_device())
    q, k, v = rand(dev, True), rand(dev, True), rand(dev, True)
    do = rand(dev)
    o = fa2gen.attention(q, k, v, causal=True)
    want = torch.autograd.grad(o, (q, k, v), do)
    torch.cuda.synchronize()
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        o = fa2gen.attention(q, k, v, causal=True)
        got = torch.autograd.grad(o, (q, k, v), do)
    s.synchronize()
    for name, g, w in zip("qkv", got, want):
        err = (g.float() - w.float()).abs().max().item()
        assert err < 2e-2, f"d{name} on a side stream differs from the default stream's by {err:.3e}"


def test_context_of_the_tensors_device_and_current_device_kept():
    cur = torch.cuda.current_device()
    q = rand(torch.device("cuda", cur))
    n0 = launches(cur)
    fa2gen.attention(q, q, q)
    torch.cuda.synchronize()
    assert launches(cur) == n0 + 1
    assert fa2gen.context(torch.device("cuda", cur)) is fa2gen.context(cur)
    assert fa2gen.context(f"cuda:{cur}") is fa2gen.context(cur)
    assert torch.cuda.current_device() == cur


def test_cpu_tensor_among_cuda_ones_is_a_clear_error():
    q = rand("cuda")
    with pytest.raises(ValueError, match=r"fa2gen.attention: k is on cpu: fa2gen runs on CUDA"):
        fa2gen.attention(q, q.cpu(), q)


@TWO
@pytest.mark.parametrize("current,other", [(0, 1), (1, 0)])
def test_tensors_on_another_device_than_the_current_one(current, other):
    """Current device `current`, tensors on `other`: forward and backward run
    on `other` with its context (its launch counter moves, not the current
    device's), the results match float64 there, the current device stays."""
    torch.cuda.set_device(current)
    try:
        dev = torch.device("cuda", other)
        q, k, v = rand(dev, True), rand(dev, True), rand(dev, True)
        fa2gen.context(current)  # both exist, so a wrong pick would show in the counters
        n_cur, n_other = launches(current), launches(other)
        do = rand(dev)
        o = fa2gen.attention(q, k, v, causal=True)
        o.backward(do)
        torch.cuda.synchronize(dev)
        assert o.device == dev and q.grad.device == dev
        assert torch.cuda.current_device() == current
        assert launches(other) > n_other, "no launch counted on the tensors' device"
        assert launches(current) == n_cur, "a launch counted on the current device's context"
        qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
        r = ref(qd, kd, vd)
        close(o, r, f"forward on cuda:{other} (current cuda:{current})")
        r.backward(do.double())
        for name, g, w in (("dq", q.grad, qd.grad), ("dk", k.grad, kd.grad), ("dv", v.grad, vd.grad)):
            err = (g.double() - w).abs().max().item() / max(w.abs().max().item(), 1e-6)
            assert err < 5e-2, f"{name} on cuda:{other}: relative max error {err:.3e}"
    finally:
        torch.cuda.set_device(0)


@TWO
def test_devices_mixed_is_a_clear_error():
    q0, q1 = rand("cuda:0"), rand("cuda:1")
    with pytest.raises(ValueError, match=r"q on cuda:0, k on cuda:1, v on cuda:0: all must be on "
                                         r"one device \(it runs on q's, cuda:0"):
        fa2gen.attention(q0, q1, q0)
    with pytest.raises(ValueError, match=r"fa2gen.fwd: q on cuda:1, k on cuda:1, v on cuda:0"):
        torch.ops.fa2gen.fwd(q1, q1, q0, True, "robust", 0.0, 0.0, 0.0, False, False, -1, -1, None, 0.0, None)


@TWO
def test_compiled_and_graph_captured_on_cuda1():
    """torch.compile (fullgraph) and a CUDA-graph capture with every tensor
    on cuda:1 while cuda:0 is current: the same bits as eager there."""
    torch.cuda.set_device(0)
    dev = torch.device("cuda", 1)
    q, k, v = rand(dev), rand(dev), rand(dev)
    eager = fa2gen.attention(q, k, v, causal=True)
    comp = torch.compile(lambda a, b, c: fa2gen.attention(a, b, c, causal=True), fullgraph=True)
    assert torch.equal(comp(q, k, v), eager)
    with torch.cuda.device(dev):  # a capture is made on the current device's side stream
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = fa2gen.attention(q, k, v, causal=True)
        g.replay()
        torch.cuda.synchronize(dev)
    assert torch.equal(out, eager)
    assert torch.cuda.current_device() == 0
