#!/usr/bin/env python3
"""Where a training step's attention spends its time, host and GPU (GPT-2 small shape).

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/host_profile.py cprofile
    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/host_profile.py kernels

cprofile: fa2gen.attention (stab none) with grad, forward and backward per step, then the
forward alone: host time per call, and cProfile's 25 costliest functions of 300 calls.
kernels: torch.profiler over 20 steps of fa2gen none/robust and SDPA flash/cuDNN: each
kernel's GPU time and the total host (self CPU) time (bench/NOTES.md "Host time per
call, session 10").
"""
import cProfile
import pstats
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa2gen

B, N, H, D = 8, 1024, 12, 64


def main():
    if sys.argv[1:] in (["-h"], ["--help"]):
        return print(__doc__)
    if len(sys.argv) != 2 or sys.argv[1] not in ("cprofile", "kernels"):
        sys.exit(__doc__)
    q, k, v = (torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    g = torch.randn(B, N, H, D, device="cuda", dtype=torch.bfloat16)

    def fa(stab):
        return lambda: torch.autograd.grad(fa2gen.attention(q, k, v, causal=True, stab=stab),
                                           (q, k, v), g)

    def sdpa(backend):
        def run():
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)),
                                                   is_causal=True)
            return torch.autograd.grad(o, (q, k, v), g.transpose(1, 2))
        return run

    if sys.argv[1] == "cprofile":
        for name, fn in (("train", fa("none")),
                         ("fwd-grad", lambda: fa2gen.attention(q, k, v, causal=True, stab="none"))):
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(300):
                fn()
            print(f"{name}: host {(time.perf_counter() - t) / 300 * 1e6:.1f} us per call")
            torch.cuda.synchronize()
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(300):
                fn()
            prof.disable()
            torch.cuda.synchronize()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    from torch.profiler import ProfilerActivity, profile
    for name, fn in (("fa2gen-none", fa("none")), ("fa2gen-robust", fa("robust")),
                     ("flash", sdpa(SDPBackend.FLASH_ATTENTION)),
                     ("cudnn", sdpa(SDPBackend.CUDNN_ATTENTION))):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
        print("=====", name)
        print(p.key_averages().table(sort_by="cuda_time_total", row_limit=12,
                                     max_name_column_width=60))


if __name__ == "__main__":
    main()
