"""fa2gen.attention against PyTorch in float64, on the GPU machine.

    PYTHONPATH=python FA2_LIB=lib/libfa2rt.so python3 bench/py_smoke.py
    (or after `pip install .`: python3 bench/py_smoke.py)

Checks (B, N, H, d) bf16/fp16 inputs, GQA, causal (bottom-right), a
transposed (non-contiguous) layout, and the gradients of the autograd
backward against PyTorch's math attention in float64 (FlashAttention's rule:
within 2x the error of autograd through the plain same-precision attention),
with delta from the 16-bit O and from the fp32 O; prints the context's
cache statistics."""
import math
import sys
import time

import torch

import fa2gen


def reference(q, k, v, causal, scale):
    q, k, v = (t.double().transpose(1, 2) for t in (q, k, v))  # (B, H, N, d)
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = scale * q @ k.transpose(-1, -2)
    if causal:
        nq, nk = s.shape[-2:]
        i = torch.arange(nq, device=s.device)[:, None]
        j = torch.arange(nk, device=s.device)[None, :]
        s = s.masked_fill(j > i + nk - nq, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p @ v).transpose(1, 2)


def plain(q, k, v, causal, scale):
    """The plain same-precision attention (FlashAttention's test baseline)."""
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q * scale) @ k.transpose(-1, -2)
    if causal:
        nq, nk = s.shape[-2:]
        i = torch.arange(nq, device=s.device)[:, None]
        j = torch.arange(nk, device=s.device)[None, :]
        s = s.masked_fill(j > i + nk - nq, float("-inf"))
    p = torch.softmax(s.float(), -1).nan_to_num(0.0).to(q.dtype)
    return (p @ v).transpose(1, 2)


def grad_case(dtype, B, Nq, Nk, H, Hkv, d, causal, stab, delta):
    g = torch.Generator(device="cuda").manual_seed(1)
    mk = lambda n, h: torch.rand((B, n, h, d), generator=g, device="cuda").mul(2).sub(1).to(dtype)
    q, k, v, do = mk(Nq, H), mk(Nk, Hkv), mk(Nk, Hkv), mk(Nq, H)
    scale = 1 / math.sqrt(d)
    grads = {}
    for name, fn, cast in (("ours", lambda a, b, c: fa2gen.attention(a, b, c, causal=causal, stab=stab,
                                                                      delta=delta), dtype),
                           ("ref", lambda a, b, c: reference(a, b, c, causal, scale), torch.float64),
                           ("plain", lambda a, b, c: plain(a, b, c, causal, scale), dtype)):
        leaves = [t.detach().to(cast).requires_grad_() for t in (q, k, v)]
        fn(*leaves).backward(do.to(cast))
        grads[name] = [t.grad.double() for t in leaves]
    torch.cuda.synchronize()
    ok, msg = True, []
    for i, x in enumerate(("dq", "dk", "dv")):
        err = (grads["ours"][i] - grads["ref"][i]).abs().max().item()
        perr = (grads["plain"][i] - grads["ref"][i]).abs().max().item()
        good = err <= 2 * perr + 1e-4 and not torch.isnan(grads["ours"][i]).any()
        ok &= good
        msg.append(f"{x} {err:.2e}/{perr:.2e}")
    print(f"{'ok  ' if ok else 'FAIL'} grad {str(dtype):15} B{B} Nq{Nq} Nk{Nk} H{H}/{Hkv} d{d} "
          f"causal={causal} {stab:6} delta={delta}: {'  '.join(msg)} (ours/plain max err)")
    return ok


def case(dtype, B, Nq, Nk, H, Hkv, d, causal, stab, transposed=False):
    g = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda n, h: torch.rand((B, n, h, d), generator=g, device="cuda").mul(2).sub(1).to(dtype)
    q, k, v = mk(Nq, H), mk(Nk, Hkv), mk(Nk, Hkv)
    if transposed:  # (B, H, N, d) storage seen as (B, N, H, d)
        q = q.transpose(1, 2).contiguous().transpose(1, 2)
    o = fa2gen.attention(q, k, v, causal=causal, stab=stab)
    torch.cuda.synchronize()
    ref = reference(q, k, v, causal, 1 / math.sqrt(d))
    err = (o.double() - ref).abs().max().item()
    # The FA2 rule: within 2x of a plain same-precision attention's error.
    plain = reference(q.to(dtype), k, v, causal, 1 / math.sqrt(d)).to(dtype).double()
    plain_err = max((plain - ref).abs().max().item(), 2 ** -9)
    ok = err <= 2 * plain_err + 1e-2 and not torch.isnan(o).any()
    print(f"{'ok  ' if ok else 'FAIL'} {str(dtype):15} B{B} Nq{Nq} Nk{Nk} H{H}/{Hkv} d{d} "
          f"causal={causal} {stab:6} transposed={transposed}: max err {err:.2e}")
    return ok


def deterministic_case():
    """deterministic=True: two backward passes give the same bits."""
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v, do = (torch.randn((2, 1000, 8, 64), generator=g, device="cuda").to(torch.bfloat16)
                   for _ in range(4))
    runs = []
    for _ in range(2):
        leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
        fa2gen.attention(*leaves, causal=True, deterministic=True).backward(do)
        runs.append([t.grad.clone() for t in leaves])
    same = all(torch.equal(a, b) for a, b in zip(*runs))
    print(f"{'ok  ' if same else 'FAIL'} deterministic=True: dq, dk, dv bit-identical over two runs")
    return same


def main():
    if not torch.cuda.is_available():
        print("py_smoke: skipped: no CUDA device")
        return 0
    ok = True
    ok &= case(torch.bfloat16, 2, 128, 128, 4, 2, 64, False, "none")
    ok &= case(torch.bfloat16, 2, 128, 128, 4, 4, 64, True, "robust")
    ok &= case(torch.bfloat16, 1, 17, 300, 2, 1, 128, True, "paper")
    ok &= case(torch.float16, 1, 200, 200, 3, 3, 64, False, "robust")
    ok &= case(torch.bfloat16, 2, 100, 100, 4, 4, 128, False, "robust", transposed=True)
    ok &= grad_case(torch.bfloat16, 2, 128, 128, 4, 2, 64, False, "none", "lowp")
    ok &= grad_case(torch.bfloat16, 2, 130, 130, 4, 4, 128, True, "robust", "lowp")
    ok &= grad_case(torch.bfloat16, 1, 17, 300, 2, 1, 128, True, "paper", "fp32")
    ok &= grad_case(torch.float16, 1, 200, 77, 3, 3, 64, True, "robust", "fp32")
    ok &= grad_case(torch.bfloat16, 3, 64, 64, 2, 2, 32, False, "robust", "lowp")
    ok &= deterministic_case()
    x = torch.rand(1, 64, 2, 64, device="cuda").to(torch.bfloat16)
    fa2gen.attention(x, x, x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(1000):
        fa2gen.attention(x, x, x)
    torch.cuda.synchronize()
    print(f"fa2gen.attention Python overhead per call: {(time.perf_counter() - t0) * 1e3:.1f} us")
    print("stats:", fa2gen.context(0).stats())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
