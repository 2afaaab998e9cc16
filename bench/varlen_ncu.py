#!/usr/bin/env python3
"""One fixed-length and one equal-length varlen forward of the same data, for a profiler.

    ncu --kernel-name regex:fa2_fwd --launch-skip 2 --launch-count 2 ... \\
        python3 bench/varlen_ncu.py [--shape B,N,H,d] [--causal] [--stab none] [--backward]

Each call runs once first (compiles, fills the caches), so the profiled launches are the
third (fixed) and fourth (varlen) of the process (bench/NOTES.md, session 22).
--backward: each call is a forward and a backward (torch.autograd.grad); the backward's
three kernels (fa2_bwd_pre, fa2_bwd, fa2_bwd_dq) of the third and fourth calls are
--kernel-name regex:fa2_bwd --launch-skip 6 --launch-count 6.
"""
import argparse

import torch

import fa2gen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="4,4096,32,64", help="B,N,H,d")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--stab", default="none")
    ap.add_argument("--backward", action="store_true", help="forward and backward per call")
    args = ap.parse_args()
    B, N, H, d = (int(x) for x in args.shape.split(","))
    q, k, v = (torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=args.backward) for _ in range(3))
    cu = torch.arange(0, (B + 1) * N, N, dtype=torch.int32, device="cuda")
    flat = [t.detach().reshape(B * N, H, d).requires_grad_(args.backward) for t in (q, k, v)]
    fixed = lambda: fa2gen.attention(q, k, v, causal=args.causal, stab=args.stab)
    varlen = lambda: fa2gen.flash_attn_varlen_func(*flat, cu, cu, N, N, causal=args.causal,
                                                   stab=args.stab)
    if args.backward:
        dout = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16)
        f_fwd, v_fwd = fixed, varlen
        fixed = lambda: torch.autograd.grad(f_fwd(), (q, k, v), dout)
        varlen = lambda: torch.autograd.grad(v_fwd(), flat, dout.reshape(B * N, H, d))
    for f in (fixed, varlen, fixed, varlen):
        f()
        torch.cuda.synchronize()
    print("done")


if __name__ == "__main__":
    main()
