#!/usr/bin/env python3
"""Where a backward's GPU time goes, per kernel: fa2gen against SDPA flash and cuDNN.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/bwd_breakdown.py \
        [--head-dims 192,256] [--seqlens 1024,4096] [--reps 10]

For each head dim, causal flag and N (B*N = 16k tokens, H*d = 2048, bf16): one
forward, then --reps backward calls (torch.autograd.grad) under torch.profiler;
prints each kernel's mean time per backward call and the sum, per backend."""
import argparse
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile


def kernels(fn, reps):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    per = defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name] += getattr(e, "device_time", e.cuda_time) / reps
    return per


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--head-dims", default="192,256")
    ap.add_argument("--seqlens", default="1024,4096")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import fa2gen
    for d in [int(x) for x in args.head_dims.split(",")]:
        H = 2048 // d
        for N in [int(x) for x in args.seqlens.split(",")]:
            B = 16384 // N
            for causal in (False, True):
                q, k, v = (torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16).requires_grad_()
                           for _ in range(3))
                dout = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16)
                def sdpa(be):
                    def call():
                        with sdpa_kernel([be]):  # the forward picks the backward's kernel
                            return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                                  v.transpose(1, 2), is_causal=causal).transpose(1, 2)
                    return call
                calls = {"fa2gen": lambda: fa2gen.attention(q, k, v, causal=causal, stab="none"),
                         "flash": sdpa(SDPBackend.FLASH_ATTENTION), "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
                print(f"\nd {d}, N {N}, {'causal' if causal else 'not causal'} (B {B}, H {H}): "
                      "backward kernels, us per call")
                for name, call in calls.items():
                    out = call()
                    per = kernels(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True), args.reps)
                    total = sum(per.values())
                    print(f"  {name:7s} total {total:9.1f}")
                    for kname, us in sorted(per.items(), key=lambda kv: -kv[1]):
                        print(f"  {'':7s} {us:9.1f}  {kname[:90]}")
                    del out


if __name__ == "__main__":
    main()
