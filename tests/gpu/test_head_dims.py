"""Every head dim from 8 to 256 through PyTorch on a GPU (pytest; skips without one).

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q tests/gpu/test_head_dims.py

The kernels' tiles are built for 16, 32, 48, 64, 80, 96, 128, 160, ..., 256; every other
multiple of 8 runs on the tiles of the next of them with the columns past d masked (on
Hopper, 33-48 on 64's wgmma tiles), and any other
head dim is zero-padded to a multiple of 8 there, forward and backward. FlashAttention-2's accuracy rule
against float64: outputs <= 2x and gradients <= 3x the error of the same computation
in the input precision by PyTorch; no NaN; deterministic mode gives the same bits twice.
"""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the head-dim tests need a GPU", allow_module_level=True)

import fa2gen  # noqa: E402
from test_torch_dropin import check_rule, grads, rand, ref_attention  # noqa: E402

# every multiple of 8, and two that are not (padded to 64 and 112)
EVERY = list(range(8, 257, 8)) + [59, 111]
# the full grid (dtype x causal x GQA x mode): the kernel head dims 16 and 80, and one head
# dim on the tiles of each of 48, 128, 160 and 224
GRID = [16, 40, 80, 112, 144, 200]


def check_against_float64(d, dtype, causal, heads, stab, B=2, Sq=300, Sk=257, deterministic=False):
    H, Hk = heads
    q, k, v = rand(B, Sq, H, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype)
    do = rand(B, Sq, H, d, dtype=dtype)
    f = lambda q, k, v: fa2gen.attention(q, k, v, causal=causal, stab=stab, deterministic=deterministic)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, causal), q.double(), k.double(), v.double(),
                do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=dtype), q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6)
    assert [tuple(t.shape) for t in got] == [(B, Sq, H, d), (B, Sq, H, d), (B, Sk, Hk, d), (B, Sk, Hk, d)]
    return (q, k, v, do), f, got


@pytest.mark.parametrize("d", EVERY)
def test_every_head_dim_forward_backward(d):
    """bf16, causal, GQA 4:2, seqlen_q != seqlen_k; deterministic: same bits twice."""
    torch.manual_seed(d)
    inputs, f, got = check_against_float64(d, torch.bfloat16, True, (4, 2), "robust", deterministic=True)
    again = grads(f, *inputs)
    for a, b, name in zip(got, again, ("out", "dq", "dk", "dv")):
        assert torch.equal(a, b), f"{name}: deterministic mode gave different bits"


@pytest.mark.parametrize("stab", ["none", "robust"])
@pytest.mark.parametrize("heads", [(4, 4), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("d", GRID)
def test_head_dim_grid(d, dtype, causal, heads, stab):
    torch.manual_seed(d + 7 * causal)
    check_against_float64(d, dtype, causal, heads, stab, B=2, Sq=400, Sk=513)
