"""fa2gen as a drop-in for PyTorch trainers, on a GPU (pytest; skips without one).

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q tests/gpu/test_torch_dropin.py

Accuracy rule everywhere (FlashAttention-2's own): max |out - float64 ref| <= 2x
that of the same computation done in the input precision by PyTorch; gradients
<= 3x. What each test shows is in its docstring.
"""
import copy
import math
import re
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the drop-in tests need a GPU", allow_module_level=True)

import fa2gen  # noqa: E402
from fa2gen import flash_attn_func, flash_attn_kvpacked_func, flash_attn_qkvpacked_func  # noqa: E402

DEV = "cuda"


def ref_attention(q, k, v, causal, scale=None, dtype=torch.float64, window=(-1, -1), alibi=None,
                  softcap=0.0, sinks=None, return_lse=False):
    """Attention computed in dtype (float64: the reference; the inputs' dtype:
    PyTorch's same-precision computation), FA2's bottom-right causal rule and
    window (query i sees keys i + Sk - Sq - left .. i + Sk - Sq + right, -1
    unbounded), ALiBi (slopes (H,) or (B, H): score -= slope |i + Sk - Sq - j|), a row
    that sees no key giving 0, attention sinks (H,) as gpt-oss has them (a column of
    per-head logits joins the softmax and is dropped). q (B, Sq, H, d), k/v (B, Sk,
    Hkv, d). return_lse: also the LSE (B, H, Sq) of the scores and the sink."""
    B, Sq, H, d = q.shape
    Sk, Hk = k.shape[1], k.shape[2]
    scale = scale or 1.0 / math.sqrt(d)
    qd, kd, vd = (t.to(dtype).transpose(1, 2) for t in (q, k, v))
    kd, vd = (t.repeat_interleave(H // Hk, dim=1) for t in (kd, vd))
    s = torch.matmul(qd, kd.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(Sq, device=q.device)[:, None]
    j = torch.arange(Sk, device=q.device)[None, :]
    if alibi is not None:
        slope = alibi.to(dtype).reshape(-1 if alibi.dim() == 2 else 1, H, 1, 1)
        s = s - slope * (i + Sk - Sq - j).abs().to(dtype)
    if causal:
        s = s.masked_fill(j > i + Sk - Sq, float("-inf"))
    if window[0] >= 0:
        s = s.masked_fill(j < i + Sk - Sq - window[0], float("-inf"))
    if window[1] >= 0:
        s = s.masked_fill(j > i + Sk - Sq + window[1], float("-inf"))
    empty = torch.isinf(s).all(-1, keepdim=True) if Sk else torch.ones_like(s[..., :1], dtype=torch.bool)
    s = s.float() if dtype != torch.float64 else s  # PyTorch's softmax of low-precision scores
    if sinks is not None:  # (fp32 sinks for the low-precision computation, as the kernels)
        s = torch.cat([s, sinks.to(s.dtype).reshape(1, H, 1, 1).expand(B, H, Sq, 1)], -1)
    lse = torch.logsumexp(s.double(), -1)  # -inf on a row without keys (nor sink): +inf below
    lse = lse.masked_fill(lse == float("-inf"), float("inf"))
    if sinks is None:
        s = s.masked_fill(empty, 0.0)  # no NaN from an all -inf row, in the output or its gradient
    p = torch.softmax(s, dim=-1).to(dtype)[..., :Sk]
    p = p.masked_fill(empty, 0.0)
    o = torch.matmul(p, vd).transpose(1, 2)
    return (o, lse) if return_lse else o


def max_err(a, b):
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def rand(*shape, dtype=torch.bfloat16, scale=1.0):
    return (torch.randn(*shape, device=DEV, dtype=torch.float32) * scale).to(dtype)


def check_rule(name, got, ref64, lowp, factor, slack=0.0):
    e, e_pt = max_err(got, ref64), max_err(lowp, ref64)
    assert torch.isfinite(got).all(), f"{name}: NaN/Inf"
    assert e <= factor * e_pt + slack, f"{name}: max err {e:.3e} > {factor} x {e_pt:.3e}"
    return e, e_pt


def capture_graph(step):
    """step() warmed up twice on a side stream, then captured: (graph, its outputs)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step()
    return g, out


def grads(fn, q, k, v, do):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    o = fn(q, k, v)
    o.backward(do)
    return o.detach(), q.grad, k.grad, v.grad


# ---------------------------------------------------------------------------
# Accuracy through the custom ops, and rows that see no key


SHAPES = [  # B, Sq, Sk, H, Hkv, d
    (2, 128, 128, 4, 4, 64), (3, 17, 17, 12, 12, 64), (2, 1000, 1000, 8, 2, 128),
    (1, 17, 128, 4, 1, 64), (2, 128, 17, 4, 2, 128), (8, 239, 1, 9, 9, 32), (8, 799, 3, 9, 3, 32),
    (2, 512, 127, 4, 4, 96), (2, 513, 127, 4, 2, 64), (2, 256, 108, 4, 4, 128),
    (2, 512, 256, 4, 1, 64), (1, 1024, 128, 4, 4, 128), (2, 300, 0, 3, 3, 64),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b%d_q%d_k%d_h%d/%d_d%d" % s)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("stab", ["none", "robust", "balanced"])
def test_forward_backward_against_float64(shape, dtype, stab):
    """Outputs <= 2x and gradients <= 3x the same-precision PyTorch error; a row
    with no visible key: O = 0, LSE = +inf, dQ = 0; two calls give the same bits
    (balanced: after the same torch.manual_seed, as its draws come from the generator)."""
    torch.manual_seed(hash(shape) % 1000)
    B, Sq, Sk, H, Hk, d = shape
    causal = Sq > Sk or Sk == 0 or Sq % 2 == 0
    q, k, v = rand(B, Sq, H, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype)
    do = rand(B, Sq, H, d, dtype=dtype)
    f = lambda q, k, v: fa2gen.attention(q, k, v, causal=causal, stab=stab)
    torch.manual_seed(7)
    o, dq, dk, dv = grads(f, q, k, v, do)
    o64, dq64, dk64, dv64 = grads(lambda q, k, v: ref_attention(q, k, v, causal), q.double(), k.double(),
                                  v.double(), do.double())
    opt, dqpt, dkpt, dvpt = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=dtype), q, k, v, do)
    check_rule("out", o, o64, opt, 2)
    for name, g, g64, gpt in (("dq", dq, dq64, dqpt), ("dk", dk, dk64, dkpt), ("dv", dv, dv64, dvpt)):
        check_rule(name, g, g64, gpt, 3, slack=1e-6)
    torch.manual_seed(7)
    o2, lse = fa2gen.attention(q, k, v, causal=causal, stab=stab, return_lse=True)
    assert torch.equal(o2, o), "two calls gave different bits"
    assert lse.shape == (B, H, Sq) and lse.dtype == torch.float32
    empty_rows = max(0, Sq - Sk) if causal else (Sq if Sk == 0 else 0)
    if empty_rows:
        assert (o[:, :empty_rows] == 0).all(), "rows that see no key must be 0"
        assert torch.isinf(lse[:, :, :empty_rows]).all() and (lse[:, :, :empty_rows] > 0).all()
        assert (dq[:, :empty_rows] == 0).all()
    if Sk and empty_rows < Sq:
        s = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double().repeat_interleave(H // Hk, 2)) / math.sqrt(d)
        if causal:
            i, j = torch.arange(Sq, device=DEV)[:, None], torch.arange(Sk, device=DEV)[None, :]
            s = s.masked_fill(j > i + Sk - Sq, float("-inf"))
        lse64 = torch.logsumexp(s, -1)[:, :, empty_rows:]
        assert max_err(lse[:, :, empty_rows:], lse64) < 1e-3


@pytest.mark.parametrize("delta", ["lowp", "fp32"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("stab", ["none", "robust", "balanced"])
def test_large_logit_fp16_backward(stab, causal, delta, request):
    """Issue 22's case, FlashAttention-2's test_flash_attn_bwd_overflow: fp16, batch 2,
    seqlen 2, 5 heads, d 32, torch.manual_seed(0), q = 5 randn, k and v 3 randn (fp16
    draws), output <= 2x and gradients <= 5x the fp16 PyTorch reference's error + 0.001
    (dO drawn before the forward, so that every mode sees the same: balanced's forward
    draws from the generator). Causal with the delta of the fp16 O, none and balanced
    fail it (H200, session 19: dQ 8.9e-3 and 7.2e-3, dK 1.7e-2 and 1.4e-2 against 4.3e-3
    and 3.2e-3 allowed): near one-hot rows make dS = P (dP - delta) a difference of two
    close numbers, and delta = rowsum(dO O) from the rounded O is off by ~|dO| |O| ulp.
    With delta="fp32" both pass (dQ 5.4e-4, dK 1.0e-3). robust fails either way (dQ
    1.1e-2: its O is less accurate)."""
    if stab == "robust":
        request.applymarker(pytest.mark.xfail(reason="issue 22: robust's O in fp16", strict=False))
    elif causal and delta == "lowp":
        request.applymarker(pytest.mark.xfail(reason="delta from the fp16 O (see the docstring)", strict=True))
    torch.manual_seed(0)
    q = torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16) * 5
    k, v = (torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16) * 3 for _ in range(2))
    do = torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16)
    f = lambda q, k, v: fa2gen.attention(q, k, v, causal=causal, stab=stab, delta=delta)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, causal), q.double(), k.double(), v.double(), do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=torch.float16), q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 5, slack=1e-3)


# ---------------------------------------------------------------------------
# flash_attn's API


def test_flash_attn_func_matches_attention_and_packed_views():
    """flash_attn_func == fa2gen.attention bit for bit; the packed QKV/KV
    functions read strided views in place and give the same bits; LSE layout."""
    B, S, H, d = 2, 333, 8, 64
    qkv = rand(B, S, 3, H, d)
    q, k, v = qkv.unbind(2)
    ref = fa2gen.attention(q, k, v, causal=True)
    out = flash_attn_func(q, k, v, causal=True)
    assert torch.equal(out, ref)
    assert torch.equal(flash_attn_qkvpacked_func(qkv, causal=True), ref)
    assert torch.equal(flash_attn_kvpacked_func(q, torch.stack((k, v), 2), causal=True), ref)
    out2, lse, probs = flash_attn_func(q, k, v, causal=True, return_attn_probs=True)
    assert torch.equal(out2, ref)
    # FA2's S_dmask without dropout: the softmax probabilities, rows summing to 1, none negated
    assert probs.shape == (B, H, S, S) and probs.dtype == torch.float32 and not torch.signbit(probs).any()
    torch.testing.assert_close(probs.sum(-1), torch.ones(B, H, S, device=DEV), rtol=0, atol=1e-4)
    assert lse.shape == (B, H, S) and lse.dtype == torch.float32 and lse.is_contiguous()
    # no copy of the packed input: the op hands the strided views to the kernel as they are
    from fa2gen import _ops
    assert _ops._aligned(q) is q and _ops._aligned(k) is k
    # window_size's FA2 reading: (-1, 0) is causal, sides >= seqlen_k unbounded
    assert torch.equal(flash_attn_func(q, k, v, window_size=(-1, 0)), ref)
    assert torch.equal(flash_attn_func(q, k, v, window_size=(S, S)), flash_attn_func(q, k, v))
    assert torch.equal(flash_attn_func(q, k, v, causal=True, window_size=(S, -1)), ref)
    scaled = flash_attn_func(q, k, v, softmax_scale=0.05, causal=True)
    check_rule("scale", scaled, ref_attention(q.double(), k.double(), v.double(), True, 0.05),
               ref_attention(q, k, v, True, 0.05, dtype=torch.bfloat16), 2)


@pytest.mark.parametrize("kw,text", [({"dropout_p": 1.0}, "dropout_p=1.0: allowed 0.0 <= dropout_p < 1.0"),
                                     ({"softcap": -1.0}, "softcap=-1.0: allowed 0.0 (none) or a finite cap > 0")])
def test_flash_attn_func_refuses_bad_values(kw, text):
    """Every FA2 argument is honoured now; a value out of its range is a ValueError
    naming it and what is allowed (the paged KV cache, block_table, is refused by the
    varlen function: test_varlen.py)."""
    q = rand(1, 300, 2, 64)
    with pytest.raises(ValueError, match=f"fa2gen.flash_attn_func: {re.escape(text)}"):
        flash_attn_func(q, q, q, **kw)


# ---------------------------------------------------------------------------
# torch.compile, torch.export, opcheck


class Block(torch.nn.Module):
    def __init__(self, api, dim=256, heads=4):
        super().__init__()
        self.api, self.heads = api, heads
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, N, D = x.shape
        qkv = self.qkv(x).view(B, N, 3, self.heads, D // self.heads)
        if self.api == "attention":
            o = fa2gen.attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True)
        elif self.api == "flash_attn_func":
            o = flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True)
        else:
            o = flash_attn_qkvpacked_func(qkv, causal=True)
        return x + self.proj(o.reshape(B, N, D))


def gpt(api, layers=2):
    torch.manual_seed(0)
    return torch.nn.Sequential(*(Block(api) for _ in range(layers))).to(DEV, torch.bfloat16)


APIS = ["attention", "flash_attn_func", "flash_attn_qkvpacked_func"]


@pytest.mark.parametrize("api", APIS)
def test_dynamo_explain_one_graph_no_breaks(api):
    x = rand(2, 256, 256)
    ex = torch._dynamo.explain(gpt(api))(x)
    print(f"explain {api}: {ex.graph_count} graph(s), {ex.graph_break_count} break(s)")
    assert ex.graph_count == 1 and ex.graph_break_count == 0, ex.break_reasons


def train_steps(model, steps=3, seed=1):
    torch.manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        x = rand(2, 256, 256)
        loss = model(x).float().square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("mode", ["default", "max-autotune", "reduce-overhead"])
@pytest.mark.parametrize("api", ["attention", "flash_attn_qkvpacked_func"])
def test_compiled_training_matches_eager(mode, api):
    torch._dynamo.reset()
    eager_losses, eager_grads = train_steps(gpt(api))
    compiled = torch.compile(gpt(api), fullgraph=True, mode=mode)
    losses, cgrads = train_steps(compiled)
    print(f"compile {mode} {api}: losses {losses} eager {eager_losses}")
    for a, b in zip(losses, eager_losses):
        assert abs(a - b) <= 2e-2 * abs(b) + 1e-4
    for g, e in zip(cgrads, eager_grads):
        assert max_err(g, e) <= 0.05 * e.abs().max().item() + 1e-4


def test_torch_export():
    x = rand(2, 256, 256)
    ep = torch.export.export(gpt("attention"), (x,))
    text = str(ep.graph)
    assert "fa2gen.fwd" in text
    assert max_err(ep.module()(x), gpt("attention")(x)) < 1e-2


def opcheck_args():
    q, k, v = rand(2, 100, 4, 64), rand(2, 80, 2, 64), rand(2, 80, 2, 64)
    return q, k, v


@pytest.mark.parametrize("want_o32", [False, True])
def test_opcheck_forward(want_o32):
    q, k, v = (t.requires_grad_() for t in opcheck_args())
    res = torch.library.opcheck(torch.ops.fa2gen.fwd.default,
                                (q, k, v, True, "robust", 0.0, 0.0, 0.0, want_o32, True, -1, -1, None, 0.0))
    print("opcheck fa2gen::fwd", res)
    assert all(r == "SUCCESS" for r in res.values()), res


def test_opcheck_backward():
    q, k, v = opcheck_args()
    slopes = torch.rand(2, 4, device=DEV) * 0.5  # ALiBi, a slope per batch and head
    sinks = torch.randn(4, device=DEV)
    o, lse, o32 = torch.ops.fa2gen.fwd(q, k, v, False, "robust", 0.0, 0.0, 0.0, True, True, 30, 0,
                                           slopes, 30.0, sinks=sinks)
    do = rand(*o.shape)
    res = torch.library.opcheck(torch.ops.fa2gen.bwd.default,
                                (do, q, k, v, o, lse, o32, False, "robust", 0.0, 0.0, 0.0, True, 30, 0,
                                 slopes, 30.0, 0.0, None, sinks))
    print("opcheck fa2gen::bwd", res)
    assert all(r == "SUCCESS" for r in res.values()), res


# ---------------------------------------------------------------------------
# CUDA graphs


def test_cuda_graph_replay_matches_eager_bit_for_bit():
    """One forward + backward captured after a warm-up on a side stream; replays
    after in-place input changes equal eager calls bit for bit (deterministic)."""
    B, S, H, d = 2, 500, 8, 128
    q, k, v, do = (rand(B, S, H, d) for _ in range(4))
    q.requires_grad_(), k.requires_grad_(), v.requires_grad_()

    def step():
        for t in (q, k, v):
            t.grad = None
        o = fa2gen.attention(q, k, v, causal=True, deterministic=True)
        o.backward(do)
        return o

    g, o_static = capture_graph(step)
    static = [o_static, q.grad, k.grad, v.grad]
    for seed in range(3):
        torch.manual_seed(100 + seed)
        with torch.no_grad():
            for t in (q, k, v, do):
                t.copy_(rand(*t.shape))
        g.replay()
        torch.cuda.synchronize()
        got = [t.clone() for t in static]
        want = step()
        for a, b in zip(got, [want, q.grad, k.grad, v.grad]):
            assert torch.equal(a, b), "replay differs from the eager call"
    print("cuda graph: 3 replays equal eager bit for bit")


def test_cuda_graph_missing_kernel_is_a_clear_error_and_capture_stays_valid():
    """A variant never loaded, asked for during capture: FA2_ERR_CAPTURING naming
    it; the capture is not invalidated; prepared afterwards, it captures."""
    q = rand(1, 64, 2, 96)
    with pytest.raises(fa2gen.Fa2Error) as e:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fa2gen.attention(q, q, q, causal=True, stab="paper", beta=3.0)
    assert e.value.status_name == "FA2_ERR_CAPTURING", str(e.value)
    assert "fwd_bf16_d96_causal" in str(e.value) and "fa2gen.prepare" in str(e.value)
    name = str(e.value).split("kernel ")[1].split(" ")[0]
    fa2gen.prepare([name])
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        o = fa2gen.attention(q, q, q, causal=True, stab="paper", beta=3.0)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(o, fa2gen.attention(q, q, q, causal=True, stab="paper", beta=3.0))
    print("cuda graph: missing kernel ->", str(e.value)[:160])


def test_failed_backward_raises_fa2error_on_the_device_thread():
    """A failed fa2_backward inside the native autograd node (which autograd runs on its
    CUDA device thread, not the caller's) reaches backward()'s caller as Fa2Error with the
    status, as from the Python path's node; the next backward works again."""
    import sys
    from fa2gen import _native
    module = _native.module()
    if module is None:
        pytest.skip("the native operator is not built here (no C++ compiler or Python headers)")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "python_torch"))
    from arg_blocks import Recorder
    q = rand(2, 128, 4, 64).requires_grad_()
    o = fa2gen.attention(q, q, q, causal=True, stab="none")
    assert "fa2gen::Attention" in o.grad_fn.name(), o.grad_fn.name()  # the native node
    rec = Recorder()
    rec.status = 6
    rec.init(module)  # fa2_backward (and device 0's context) now the recorder's
    try:
        with pytest.raises(fa2gen.Fa2Error) as e:
            o.sum().backward()
    finally:
        _native._init(module)
        fa2gen._ops._context(q.device)  # device 0's real context again
    assert e.value.status_name == "FA2_ERR_CUDA", str(e.value)
    assert [kind for kind, _, _ in rec.calls] == ["backward"]
    o = fa2gen.attention(q, q, q, causal=True, stab="none")
    o.sum().backward()
    assert torch.isfinite(q.grad).all()


# ---------------------------------------------------------------------------
# Hugging Face transformers


def tiny_config(family):
    tr = pytest.importorskip("transformers")
    common = dict(vocab_size=1000, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=512, max_position_embeddings=512)
    if family == "gpt2":
        return tr.GPT2Config(vocab_size=1000, n_embd=256, n_layer=2, n_head=4, n_positions=512,
                             attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0)
    cls = {"llama": tr.LlamaConfig, "qwen2": tr.Qwen2Config, "mistral": tr.MistralConfig}[family]
    extra = {"sliding_window": None} if family in ("mistral", "qwen2") else {}
    return cls(num_key_value_heads=2, **common, **extra)


@pytest.mark.parametrize("family", ["llama", "qwen2", "mistral", "gpt2"])
def test_transformers_logits_and_gradients_against_sdpa(family):
    tr = pytest.importorskip("transformers")
    import fa2gen.integrations.transformers as fa2gen_hf
    fa2gen_hf.register()
    cfg = tiny_config(family)
    torch.manual_seed(0)
    # a config each: from_config records the attention implementation in it
    ref = tr.AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="eager")
    ref = ref.to(DEV, torch.float64)
    sd = ref.state_dict()
    models = {}
    for impl in ("sdpa", "fa2gen"):
        m = tr.AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation=impl)
        m = m.to(DEV, torch.bfloat16)
        m.load_state_dict(sd)
        models[impl] = m
    ids = torch.randint(0, 1000, (2, 300), device=DEV)
    out = {}
    for impl, m in [("ref", ref)] + list(models.items()):
        m.zero_grad()
        logits = m(ids).logits
        logits.double().square().mean().backward()
        out[impl] = (logits.detach(), {n: p.grad for n, p in m.named_parameters() if "proj" in n or "attn" in n})
    check_rule(f"{family} logits", out["fa2gen"][0], out["ref"][0], out["sdpa"][0], 2)
    # gradients of the attention layers' weights, each error relative to the
    # largest float64 gradient of its tensor, worst over the tensors
    rel = {impl: max(max_err(out[impl][1][n], g64) / g64.abs().max().item()
                     for n, g64 in out["ref"][1].items()) for impl in ("fa2gen", "sdpa")}
    print(f"transformers {family}: logits err {max_err(out['fa2gen'][0], out['ref'][0]):.3e} "
          f"(sdpa {max_err(out['sdpa'][0], out['ref'][0]):.3e}), attention-weight grads rel err "
          f"{rel['fa2gen']:.3e} (sdpa {rel['sdpa']:.3e})")
    assert rel["fa2gen"] <= 3 * rel["sdpa"], rel
    # a padded batch (left padding, as generation uses) runs as a variable-length batch:
    # each row's real tokens against the float64 model on that row alone (unpadded), in
    # the rule of sdpa on the same unpadded rows (a float64 eager run of the padded batch
    # itself is NaN: its fully masked padding rows poison the next layer's values)
    mask = torch.ones_like(ids)
    mask[0, :37] = 0
    mask[1, :5] = 0
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    got = models["fa2gen"](ids, attention_mask=mask, position_ids=pos).logits.detach()
    real = mask.bool()
    alone = {impl: torch.cat([m(ids[b][real[b]][None]).logits.detach()[0] for b in range(2)])
             for impl, m in (("ref", ref), ("sdpa", models["sdpa"]))}
    check_rule(f"{family} padded logits", got[real], alone["ref"], alone["sdpa"], 2)
    print(f"transformers {family} padded: logits err {max_err(got[real], alone['ref']):.3e} "
          f"(sdpa unpadded {max_err(alone['sdpa'], alone['ref']):.3e})")
    # one training step under torch.compile
    m = models["fa2gen"]
    cm = torch.compile(m)
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    loss = cm(ids, labels=ids).loss
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item())


# ---------------------------------------------------------------------------
# Head dims the kernels are not generated for: zero-padded to the next one


@pytest.mark.parametrize("d", [8, 40, 59, 80, 111, 200])
def test_any_head_dim_through_padding(d):
    """Outputs and gradients against float64 by FA2's rule; the softmax scale is
    the real head dim's (tests/gpu/test_head_dims.py covers every head dim)."""
    torch.manual_seed(d)
    B, Sq, Sk, H, Hk = 2, 300, 257, 4, 2
    q, k, v = rand(B, Sq, H, d), rand(B, Sk, Hk, d), rand(B, Sk, Hk, d)
    do = rand(B, Sq, H, d)
    f = lambda q, k, v: fa2gen.attention(q, k, v, causal=True)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, True), q.double(), k.double(), v.double(),
                do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, True, dtype=torch.bfloat16), q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6)
    assert got[0].shape == (B, Sq, H, d) and got[1].shape == q.shape


# ---------------------------------------------------------------------------
# Sliding windows (FlashAttention-2's window_size)


WINDOW_CASES = [  # B, Sq, Sk, H, Hkv, d, window, causal
    (2, 1000, 1000, 4, 2, 64, (127, 0), False), (2, 1000, 1000, 4, 4, 128, (100, 50), False),
    (1, 700, 1300, 8, 2, 64, (256, -1), False), (2, 1300, 700, 4, 1, 128, (-1, 31), False),
    (2, 513, 513, 4, 4, 96, (64, 64), True), (1, 4097, 4097, 4, 2, 128, (1023, 0), False),
    (3, 17, 17, 2, 2, 32, (0, 0), False), (2, 300, 40, 4, 2, 64, (5, 3), False),
    # a window of 512 keys or more at d <= 64: the backward's ws tile on sm_90 (rt_select.c's window rule)
    (2, 1500, 1500, 4, 2, 64, (600, 100), False),
]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: "q%d_k%d_d%d_w%d_%d%s" % (
    c[1], c[2], c[5], c[6][0], c[6][1], "_causal" if c[7] else ""))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("stab", ["none", "robust", "balanced"])
def test_sliding_window_against_float64(case, dtype, stab, request):
    """flash_attn_func(window_size=...) against a float64 attention with FA2's
    window mask (causal: the right edge 0), outputs <= 2x, gradients <= 3x."""
    B, Sq, Sk, H, Hk, d, window, causal = case
    if stab == "robust" and dtype == torch.float16 and window == (127, 0):
        # H100 2026-11-25 run 10: dQ 4.1e-3 against 3 x 1.26e-3, `none` passes on the same
        # inputs: robust's O is less accurate in fp16 (issue 22), and 128 keys a row average
        # its error less. Kept visible here until issue 22's construction lands.
        request.applymarker(pytest.mark.xfail(reason="issue 22: robust fp16 dQ 3.3x", strict=False))
    torch.manual_seed(Sq + Sk + d)
    q, k, v = rand(B, Sq, H, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype)
    do = rand(B, Sq, H, d, dtype=dtype)
    ref_window = (window[0], 0 if causal else window[1])
    f = lambda q, k, v: flash_attn_func(q, k, v, causal=causal, window_size=window, stab=stab)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, False, window=ref_window), q.double(),
                k.double(), v.double(), do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, False, dtype=dtype, window=ref_window), q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6 * math.sqrt(max(Sq, Sk)))
    det = []
    for _ in range(2):
        torch.manual_seed(7)  # (balanced's draws)
        det.append(flash_attn_func(q, k, v, causal=causal, window_size=window, stab=stab, deterministic=True))
    assert torch.equal(det[0], det[1])


def test_sliding_window_varlen_and_transformers_mistral():
    """A window on a variable-length batch against each sequence alone; Mistral
    with sliding_window smaller than the sequence against float64."""
    from test_varlen import offsets, per_sequence
    lens_q, lens_k = [0, 1, 17, 600, 1000], [3, 1, 40, 600, 1100]
    H, Hk, d, window = 4, 2, 64, (100, 0)
    q, k, v = rand(sum(lens_q), H, d), rand(sum(lens_k), Hk, d), rand(sum(lens_k), Hk, d)
    cq, ck = offsets(lens_q), offsets(lens_k)
    got = fa2gen.flash_attn_varlen_func(q, k, v, cq, ck, max(lens_q), max(lens_k), window_size=window)
    ref = per_sequence(lambda a, b, c: ref_attention(a, b, c, False, window=window), q.double(), k.double(),
                       v.double(), lens_q, lens_k)
    low = per_sequence(lambda a, b, c: ref_attention(a, b, c, False, dtype=torch.bfloat16, window=window),
                       q, k, v, lens_q, lens_k)
    check_rule("varlen window out", got, ref, low, 2)
    tr = pytest.importorskip("transformers")
    import fa2gen.integrations.transformers as fa2gen_hf
    fa2gen_hf.register()
    cfg = tr.MistralConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, intermediate_size=512, max_position_embeddings=512,
                           sliding_window=64)
    torch.manual_seed(0)
    models = {impl: tr.AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation=impl)
              for impl in ("eager", "sdpa", "fa2gen")}
    sd = models["eager"].state_dict()
    for impl, m in models.items():
        m.load_state_dict(sd)
        m.to(DEV, torch.float64 if impl == "eager" else torch.bfloat16)
    ids = torch.randint(0, 1000, (2, 300), device=DEV)
    logits = {impl: m(ids).logits.detach() for impl, m in models.items()}
    check_rule("mistral window logits", logits["fa2gen"], logits["eager"], logits["sdpa"], 2)
    print(f"mistral sliding_window 64: logits err {max_err(logits['fa2gen'], logits['eager']):.3e} "
          f"(sdpa {max_err(logits['sdpa'], logits['eager']):.3e})")


# ---------------------------------------------------------------------------
# ALiBi (FlashAttention-2's alibi_slopes)


ALIBI_CASES = [  # B, Sq, Sk, H, Hkv, d, causal, per-batch slopes, window
    (2, 1000, 1000, 8, 2, 64, True, False, (-1, -1)), (2, 700, 1300, 4, 4, 128, False, True, (-1, -1)),
    (2, 1300, 700, 4, 1, 128, True, False, (-1, -1)), (3, 17, 17, 2, 2, 32, False, False, (-1, -1)),
    (2, 1000, 1000, 4, 2, 64, True, True, (255, 0)),
]


@pytest.mark.parametrize("case", ALIBI_CASES, ids=lambda c: "q%d_k%d_d%d%s%s%s" % (
    c[1], c[2], c[5], "_causal" if c[6] else "", "_per_batch" if c[7] else "",
    "_window" if c[8][0] >= 0 else ""))
@pytest.mark.parametrize("stab", ["none", "robust", "balanced"])
def test_alibi_against_float64(case, stab):
    B, Sq, Sk, H, Hk, d, causal, per_batch, window = case
    torch.manual_seed(Sq + d)
    q, k, v, do = rand(B, Sq, H, d), rand(B, Sk, Hk, d), rand(B, Sk, Hk, d), rand(B, Sq, H, d)
    slopes = torch.rand(*((B, H) if per_batch else (H,)), device=DEV) * 0.3
    f = lambda q, k, v: flash_attn_func(q, k, v, causal=causal, window_size=window,
                                        alibi_slopes=slopes, stab=stab)
    ref_window = (window[0], 0) if window[0] >= 0 and causal else window
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, causal, window=ref_window, alibi=slopes),
                q.double(), k.double(), v.double(), do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=torch.bfloat16, window=ref_window,
                                              alibi=slopes), q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6 * math.sqrt(max(Sq, Sk)))


# ---------------------------------------------------------------------------
# softcap (Gemma 2's logit capping, FlashAttention-2's softcap)


SOFTCAP_CASES = [  # B, Sq, Sk, H, Hkv, d, causal, cap, q scale (large: saturated scores)
    (2, 1000, 1000, 8, 2, 64, True, 30.0, 1.0), (2, 700, 1300, 4, 4, 128, False, 50.0, 1.0),
    (2, 513, 513, 4, 2, 128, True, 5.0, 8.0), (3, 17, 17, 2, 2, 32, False, 2.0, 8.0),
]


@pytest.mark.parametrize("case", SOFTCAP_CASES, ids=lambda c: "q%d_k%d_d%d_cap%g%s" % (
    c[1], c[2], c[5], c[7], "_causal" if c[6] else ""))
@pytest.mark.parametrize("stab", ["none", "robust", "balanced"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_softcap_against_float64(case, stab, dtype):
    B, Sq, Sk, H, Hk, d, causal, cap, qs = case
    torch.manual_seed(Sq + d)
    q, k, v, do = (rand(B, Sq, H, d, scale=qs, dtype=dtype), rand(B, Sk, Hk, d, dtype=dtype),
                   rand(B, Sk, Hk, d, dtype=dtype), rand(B, Sq, H, d, dtype=dtype))
    f = lambda q, k, v: flash_attn_func(q, k, v, causal=causal, softcap=cap, stab=stab)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, causal, softcap=cap), q.double(), k.double(),
                v.double(), do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=dtype, softcap=cap),
                q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6 * math.sqrt(max(Sq, Sk)))


# ---------------------------------------------------------------------------
# The forward and backward with each modifier at d = 96 (the forward's TILES_MODIFIED
# tile), 128 (fa2_bwd_dq_det's 64-key tiles at d >= 128) and past 128 (the quad backward
# at 160/224, the wgmma pair at 192/256: Gemma 2's d = 256 with a window and softcap),
# both dQ paths (dq_det and fa2_bwd's atomics), against float64, and the same bits twice
# in deterministic mode


MODIFIERS_BWD = {  # name: keyword arguments of flash_attn_func, and of ref_attention
    "softcap": (dict(softcap=20.0), dict(softcap=20.0)),
    "alibi": (dict(alibi_slopes="slopes"), dict(alibi="slopes")),
    "window": (dict(window_size=(200, 100)), dict(window=(200, 100))),
    "causal_alibi_softcap": (dict(causal=True, alibi_slopes="slopes", softcap=20.0),
                             dict(causal=True, alibi="slopes", softcap=20.0)),
    "window_softcap": (dict(window_size=(200, 0), softcap=20.0),  # Gemma 2's local layers
                       dict(window=(200, 0), softcap=20.0)),
    "window_sinks": (dict(window_size=(200, 0), sinks="sinks"),  # gpt-oss's local layers
                     dict(window=(200, 0), sinks="sinks")),
}


@pytest.mark.parametrize("mod", list(MODIFIERS_BWD))
@pytest.mark.parametrize("det", [False, True], ids=["atomic_dq", "deterministic"])
@pytest.mark.parametrize("d", [96, 128, 160, 192, 224, 256], ids=lambda d: f"d{d}")
def test_backward_modifiers(mod, det, d):
    B, Sq, Sk, H, Hk = 2, 700, 900, 4, 2
    torch.manual_seed(d)
    q, k, v, do = rand(B, Sq, H, d, scale=2.0), rand(B, Sk, Hk, d), rand(B, Sk, Hk, d), rand(B, Sq, H, d)
    named = {"slopes": torch.rand(H, device=DEV) * 0.2, "sinks": torch.randn(H, device=DEV) * 2}
    ours_kw, ref_kw = ({key: named.get(val, val) if isinstance(val, str) else val for key, val in kw.items()}
                       for kw in MODIFIERS_BWD[mod])
    causal = ref_kw.pop("causal", False)
    f = lambda q, k, v: flash_attn_func(q, k, v, deterministic=det, **ours_kw)
    got = grads(f, q, k, v, do)
    ref = grads(lambda q, k, v: ref_attention(q, k, v, causal, **ref_kw), q.double(), k.double(),
                v.double(), do.double())
    low = grads(lambda q, k, v: ref_attention(q, k, v, causal, dtype=torch.bfloat16, **ref_kw),
                q, k, v, do)
    check_rule("out", got[0], ref[0], low[0], 2)
    for i, name in ((1, "dq"), (2, "dk"), (3, "dv")):
        check_rule(name, got[i], ref[i], low[i], 3, slack=1e-6 * math.sqrt(max(Sq, Sk)))
    if det:
        again = grads(f, q, k, v, do)
        assert all(torch.equal(a, b) for a, b in zip(got, again)), "deterministic runs differ"
    print(f"d{d} {mod} {'det' if det else 'atomic'}: dq {max_err(got[1], ref[1]):.2e} "
          f"(bf16 {max_err(low[1], ref[1]):.2e})")
