"""fa2gen.attention against PyTorch in float64, on the GPU machine.

    PYTHONPATH=python FA2_LIB=lib/libfa2rt.so python3 bench/py_smoke.py
    (or after `pip install ./python`: python3 bench/py_smoke.py)

Checks (B, N, H, d) bf16/fp16 inputs, GQA, causal (bottom-right), a
transposed (non-contiguous) layout, the backward's NotImplementedError, and
prints the context's cache statistics."""
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
    q = torch.randn(1, 64, 2, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    try:
        fa2gen.attention(q, q, q).sum().backward()
        print("FAIL backward did not raise")
        ok = False
    except NotImplementedError as e:
        print(f"ok   backward raises NotImplementedError: {e}")
    x = torch.zeros(1, 64, 2, 64, device="cuda", dtype=torch.bfloat16)
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
