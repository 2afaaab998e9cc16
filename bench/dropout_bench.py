#!/usr/bin/env python3
"""Attention dropout's cost: fa2gen and PyTorch SDPA's flash backend, with and without it.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/dropout_bench.py [--json FILE]

B*N = 16k tokens, H*d = 2048, bf16, N = 1k, 4k, 16k, d = 64 and 128, causal and not:
forward and forward+backward ms of fa2gen (robust, its default) with dropout_p = 0.1 and
without, and of SDPA's flash backend (FlashAttention-2's kernels, PyTorch's build) with
the same p and without; the four calls of a row interleaved, each rep a few back-to-back
calls with one synchronize, the median. Ratios: fa2gen with dropout over SDPA flash with
dropout, and each one's dropout over its own plain call (the price of the mask).
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa2gen
from varlen_bench import timed_group  # interleaved, CUDA-event-timed medians

DEV, P = "cuda", 0.1


def calls(B, N, H, d, causal):
    """fa2gen and SDPA flash, each with p and without; forward and forward+backward."""
    q, k, v = (torch.randn(B, N, H, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    do = torch.randn(B, N, H, d, device=DEV, dtype=torch.bfloat16)
    t = lambda x: x.transpose(1, 2)  # SDPA's (B, H, N, d) views of the same tensors

    def ours(p):
        return lambda: fa2gen.attention(q, k, v, causal=causal, dropout_p=p)

    def flash(p):
        def run():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return t(F.scaled_dot_product_attention(t(q), t(k), t(v), dropout_p=p,
                                                        is_causal=causal))
        return run

    def fwd_bwd(f):
        def run():
            for x in (q, k, v):
                x.grad = None
            f().backward(do)
        return run

    fwd = [ours(P), ours(0.0), flash(P), flash(0.0)]
    with torch.no_grad():  # the forward alone: no autograd state kept
        f_ms = timed_group(*fwd, reps=8, inner=2)
    return f_ms, timed_group(*[fwd_bwd(f) for f in fwd], reps=8, inner=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--seqlens", default="1024,4096,16384")
    args = ap.parse_args()
    rows = []
    for d in (64, 128):
        H = 2048 // d
        for N in map(int, args.seqlens.split(",")):
            B = 16384 // N
            for causal in (False, True):
                f_ms, b_ms = calls(B, N, H, d, causal)
                rows.append(dict(d=d, N=N, B=B, H=H, causal=causal, p=P,
                                 fwd_ms=dict(zip(("fa2gen_p", "fa2gen_0", "flash_p", "flash_0"), f_ms)),
                                 fwd_bwd_ms=dict(zip(("fa2gen_p", "fa2gen_0", "flash_p", "flash_0"),
                                                     b_ms))))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print(f"\n{torch.cuda.get_device_name()}: dropout_p {P}, B*N 16k, H*d 2048, bf16; ms "
          "(fa2gen robust; flash = SDPA's flash backend)")
    print(f"{'d':>4}{'N':>6}{'causal':>7} | {'fa2gen p':>9}{'fa2gen 0':>9}{'flash p':>9}{'flash 0':>9}"
          f"{'ours/flash':>11}{'ours p/0':>9}{'flash p/0':>10} | fwd+bwd: {'fa2gen p':>9}"
          f"{'fa2gen 0':>9}{'flash p':>9}{'flash 0':>9}{'ours/flash':>11}{'ours p/0':>9}"
          f"{'flash p/0':>10}")
    for r in rows:
        line = f"{r['d']:>4}{r['N']:>6}{str(r['causal']):>7} |"
        for key in ("fwd_ms", "fwd_bwd_ms"):
            m = r[key]
            line += (f" {m['fa2gen_p']:>8.3f}{m['fa2gen_0']:>9.3f}{m['flash_p']:>9.3f}"
                     f"{m['flash_0']:>9.3f}{m['fa2gen_p'] / m['flash_p']:>11.2f}"
                     f"{m['fa2gen_p'] / m['fa2gen_0']:>9.2f}{m['flash_p'] / m['flash_0']:>10.2f}")
            line += " | fwd+bwd:" if key == "fwd_ms" else ""
        print(line)


if __name__ == "__main__":
    main()
