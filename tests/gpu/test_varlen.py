"""Variable-length batches on a GPU (pytest; skips without one).

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q tests/gpu/test_varlen.py

Each sequence of a packed batch against a float64 attention of that sequence alone
(FA2's rule: outputs <= 2x and gradients <= 3x the same-precision PyTorch error),
causal aligned bottom-right per sequence, lengths 0, 1, 17, 128, 1000 and 4097 with
seqlen_q != seqlen_k, GQA; equal lengths give the fixed-length call's bits.
"""
import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the varlen tests need a GPU", allow_module_level=True)

import fa2gen  # noqa: E402
from fa2gen import _torch  # noqa: E402
from test_torch_dropin import check_rule, max_err, rand, ref_attention  # noqa: E402

DEV = "cuda"
LENS_Q = [0, 1, 17, 128, 1000, 4097, 300]
LENS_K = [5, 0, 40, 128, 1000, 4097, 17]


def offsets(lens):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=DEV)


def per_sequence(fn, q, k, v, lens_q, lens_k):
    """fn on each sequence alone ((1, S, H, d) slices), concatenated back."""
    outs, iq, ik = [], 0, 0
    for sq, sk in zip(lens_q, lens_k):
        o = fn(q[iq:iq + sq].unsqueeze(0), k[ik:ik + sk].unsqueeze(0), v[ik:ik + sk].unsqueeze(0))
        outs.append(o.squeeze(0))
        iq, ik = iq + sq, ik + sk
    return torch.cat(outs)


def grads(fn, tensors, do):
    ts = [t.detach().clone().requires_grad_() for t in tensors]
    o = fn(*ts)
    o.backward(do)
    return [o.detach()] + [t.grad for t in ts]


# Every kernel head dim and mode, and head dims that run on the tiles of the next one
# (8, 40, 120, 200: the columns past d masked); balanced stops at d = 128 (the generator
# refuses it past that: its rounding spills)
MODES_BY_DIM = [(d, stab) for d in (8, 16, 32, 40, 48, 64, 80, 96, 120, 128, 160, 192, 200, 224, 256)
                for stab in ("none", "paper", "robust", "balanced") if stab != "balanced" or d <= 128]


@pytest.mark.parametrize("d,stab", MODES_BY_DIM, ids=[f"d{d}-{s}" for d, s in MODES_BY_DIM])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_varlen_against_float64(d, dtype, causal, stab):
    torch.manual_seed(d + causal)
    H, Hk = 8, 2
    tq, tk = sum(LENS_Q), sum(LENS_K)
    q, k, v = rand(tq, H, d, dtype=dtype), rand(tk, Hk, d, dtype=dtype), rand(tk, Hk, d, dtype=dtype)
    do = rand(tq, H, d, dtype=dtype)
    cq, ck = offsets(LENS_Q), offsets(LENS_K)
    f = lambda q, k, v: fa2gen.flash_attn_varlen_func(q, k, v, cq, ck, max(LENS_Q), max(LENS_K),
                                                      causal=causal, stab=stab)
    got = grads(f, (q, k, v), do)
    ref = grads(lambda q, k, v: per_sequence(lambda a, b, c: ref_attention(a, b, c, causal), q, k, v,
                                             LENS_Q, LENS_K), (q.double(), k.double(), v.double()),
                do.double())
    low = grads(lambda q, k, v: per_sequence(lambda a, b, c: ref_attention(a, b, c, causal, dtype=dtype),
                                             q, k, v, LENS_Q, LENS_K), (q, k, v), do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6 * math.sqrt(max(LENS_Q)))
    # LSE (H, total_q): each sequence's logsumexp, +inf where a row sees no key
    _, lse, _ = fa2gen.flash_attn_varlen_func(q, k, v, cq, ck, max(LENS_Q), max(LENS_K),
                                              causal=causal, stab=stab, return_attn_probs=True)
    assert lse.shape == (H, tq) and lse.dtype == torch.float32
    iq, ik = 0, 0
    for sq, sk in zip(LENS_Q, LENS_K):
        if sq:
            s = torch.einsum("qhd,khd->hqk", q[iq:iq + sq].double(),
                             k[ik:ik + sk].double().repeat_interleave(H // Hk, 1)) / math.sqrt(d)
            if causal:
                i, j = torch.arange(sq, device=DEV)[:, None], torch.arange(sk, device=DEV)[None, :]
                s = s.masked_fill(j > i + sk - sq, float("-inf"))
            want = torch.logsumexp(s, -1) if sk else torch.full((H, sq), float("-inf"), device=DEV,
                                                                dtype=torch.float64)
            got_l = lse[:, iq:iq + sq].double()
            empty = torch.isinf(want)
            assert (torch.isinf(got_l[empty]) & (got_l[empty] > 0)).all()
            assert max_err(got_l[~empty], want[~empty]) < 1e-3
        iq, ik = iq + sq, ik + sk


@pytest.mark.parametrize("d", [48, 64, 80, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_equal_lengths_give_the_fixed_length_bits(d, causal, monkeypatch):
    """Same tiles, same arithmetic: the varlen kernel on B sequences of N rows
    writes the fixed-length kernel's bits; deterministic backward likewise (on
    Hopper at d = 128 both forwards run the ws tile)."""
    B, N, H, Hk = 4, 777, 8, 4
    q, k, v, do = rand(B, N, H, d), rand(B, N, Hk, d), rand(B, N, Hk, d), rand(B, N, H, d)
    cu = offsets([N] * B)
    monkeypatch.setattr(_torch, "EQUAL_LENGTHS_FIXED", False)  # the varlen kernels, not the handover
    fixed = grads(lambda q, k, v: fa2gen.flash_attn_func(q, k, v, causal=causal, deterministic=True),
                  (q, k, v), do)
    flat = lambda t: t.reshape(B * N, *t.shape[2:])
    var = grads(lambda q, k, v: fa2gen.flash_attn_varlen_func(q, k, v, cu, cu, N, N, causal=causal,
                                                               deterministic=True),
                (flat(q), flat(k), flat(v)), flat(do))
    for name, a, b in zip(("out", "dq", "dk", "dv"), var, fixed):
        assert torch.equal(a, flat(b)), f"{name}: varlen bits differ from fixed length"


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_equal_length_batches_take_the_fixed_length_kernels(d, causal, monkeypatch):
    """flash_attn_varlen_func hands a batch whose sequences all have max_seqlen rows (seqlen_q
    != seqlen_k, GQA, dropout) to the fixed-length call: the varlen kernels' bits, LSE in the
    varlen layout (heads, total_q), S_dmask and gradients included."""
    B, Nq, Nk, H, Hk, p = 3, 300, 500, 8, 2, 0.2
    q, k, v, do = rand(B * Nq, H, d), rand(B * Nk, Hk, d), rand(B * Nk, Hk, d), rand(B * Nq, H, d)
    cu_q, cu_k = offsets([Nq] * B), offsets([Nk] * B)
    seen = {}
    for handover in (False, True):
        monkeypatch.setattr(_torch, "EQUAL_LENGTHS_FIXED", handover)
        torch.manual_seed(5)  # the same dropout seed
        ts = [t.detach().clone().requires_grad_() for t in (q, k, v)]
        o, lse, s_dmask = fa2gen.flash_attn_varlen_func(*ts, cu_q, cu_k, Nq, Nk, dropout_p=p,
                                                        causal=causal, deterministic=True,
                                                        return_attn_probs=True)
        o.backward(do)
        seen[handover] = [o, lse, s_dmask] + [t.grad for t in ts]
    assert seen[True][1].shape == (H, B * Nq)
    for name, a, b in zip(("out", "lse", "S_dmask", "dq", "dk", "dv"), seen[True], seen[False]):
        assert torch.equal(a, b), f"{name}: the fixed-length handover differs from the varlen kernels"


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("per_seq", [False, True], ids=["head_slopes", "seq_head_slopes"])
def test_alibi_and_softcap_varlen_against_each_sequence(d, per_seq):
    """ALiBi (slopes per head, or per (sequence, head): FA2's (batch, heads) form) with
    softcap on a variable-length batch, causal, GQA, seqlen_q != seqlen_k per sequence:
    each sequence against float64 alone, FA2's rule (out <= 2x, gradients <= 3x)."""
    torch.manual_seed(12 + d)
    lens_q, lens_k, cap = [1, 17, 600, 1000], [1, 40, 600, 1100], 20.0
    H, Hk = 4, 2
    q, k, v = rand(sum(lens_q), H, d, scale=2.0), rand(sum(lens_k), Hk, d), rand(sum(lens_k), Hk, d)
    do = rand(sum(lens_q), H, d)
    slopes = torch.rand(len(lens_q), H, device=DEV) * 0.2 if per_seq else torch.rand(H, device=DEV) * 0.2
    cq, ck = offsets(lens_q), offsets(lens_k)
    ours = lambda q, k, v: fa2gen.flash_attn_varlen_func(q, k, v, cq, ck, max(lens_q), max(lens_k), causal=True,
                                                         alibi_slopes=slopes, softcap=cap)

    def one(t, a, n):  # rows a .. a + n - 1 as a batch of one
        return t[a:a + n].unsqueeze(0)

    def ref(dtype):
        def f(q, k, v):
            outs, iq, ik = [], 0, 0
            for i, (sq, sk) in enumerate(zip(lens_q, lens_k)):
                outs.append(ref_attention(one(q, iq, sq), one(k, ik, sk), one(v, ik, sk), True, dtype=dtype,
                                          alibi=slopes[i] if per_seq else slopes, softcap=cap).squeeze(0))
                iq, ik = iq + sq, ik + sk
            return torch.cat(outs)
        return f
    got = grads(ours, (q, k, v), do)
    r64 = grads(ref(torch.float64), (q.double(), k.double(), v.double()), do.double())
    low = grads(ref(torch.bfloat16), (q, k, v), do)
    check_rule("varlen alibi+softcap out", got[0], r64[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule("varlen alibi+softcap " + name, got[i], r64[i], low[i], 3, slack=1e-5)


def test_deterministic_same_bits_and_packed_views():
    H, d = 4, 64
    tq = sum(LENS_Q)
    qkv = rand(tq, 3, H, d)
    cu = offsets(LENS_Q)
    f = lambda t: fa2gen.flash_attn_varlen_qkvpacked_func(t, cu, max(LENS_Q), causal=True,
                                                          deterministic=True)
    do = rand(tq, H, d)
    a, b = grads(f, (qkv,), do), grads(f, (qkv,), do)
    assert all(torch.equal(x, y) for x, y in zip(a, b)), "deterministic varlen: bits differ"
    q, k, v = qkv.unbind(1)
    assert torch.equal(a[0], fa2gen.flash_attn_varlen_func(q, k, v, cu, cu, max(LENS_Q), max(LENS_Q),
                                                           causal=True))
    kv = torch.stack((k, v), 1)
    assert torch.equal(a[0], fa2gen.flash_attn_varlen_kvpacked_func(q, kv, cu, cu, max(LENS_Q),
                                                                    max(LENS_Q), causal=True))


def test_varlen_compiles_without_breaks_and_captures_in_a_graph():
    H, d = 4, 64
    cu = offsets([100, 0, 300, 57])
    q = rand(457, H, d)

    def f(q):
        return fa2gen.flash_attn_varlen_func(q, q, q, cu, cu, 300, 300, causal=True)

    ex = torch._dynamo.explain(f)(q)
    assert ex.graph_count == 1 and ex.graph_break_count == 0, ex.break_reasons
    want = f(q)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = f(q)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, want)


def test_argument_errors():
    q = rand(10, 2, 64)
    cu = offsets([4, 6])
    with pytest.raises(TypeError, match="cu_seqlens_q is torch.int64"):
        fa2gen.flash_attn_varlen_func(q, q, q, cu.long(), cu, 6, 6)
    with pytest.raises(ValueError, match="cu_seqlens_q has 3 offsets and cu_seqlens_k 2"):
        fa2gen.flash_attn_varlen_func(q, q, q, cu, cu[:2], 6, 6)
    with pytest.raises(ValueError, match="expected 3 dimensions"):
        fa2gen.flash_attn_varlen_func(q[None], q, q, cu, cu, 6, 6)
    with pytest.raises(NotImplementedError, match="block_table"):
        fa2gen.flash_attn_varlen_func(q, q, q, cu, cu, 6, 6, block_table=cu)


def test_opcheck_varlen_ops():
    q, k = rand(300, 4, 64), rand(250, 2, 64)
    cq, ck = offsets([100, 0, 200]), offsets([50, 100, 100])
    args = (cq, ck, 200, 100, True, "robust", 0.0, 0.0, 0.0)
    res = torch.library.opcheck(torch.ops.fa2gen.varlen_fwd.default,
                                (q.requires_grad_(), k.requires_grad_(), k) + args + (True, True, -1, -1, None, 0.0))
    print("opcheck fa2gen::varlen_fwd", res)
    assert all(r == "SUCCESS" for r in res.values()), res
    with torch.no_grad():  # the backward op's inputs: no autograd history of their own
        o, lse, o32 = torch.ops.fa2gen.varlen_fwd(q, k, k, *args, True, True, -1, -1, None, 0.0)
    res = torch.library.opcheck(torch.ops.fa2gen.varlen_bwd.default,
                                (rand(*o.shape), q.detach(), k.detach(), k.detach(), o, lse, o32) +
                                args + (True, -1, -1, None, 0.0))
    print("opcheck fa2gen::varlen_bwd", res)
    assert all(r == "SUCCESS" for r in res.values()), res
