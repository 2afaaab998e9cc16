#!/usr/bin/env python3
"""PyTorch SDPA forward and backward TFLOP/s (flash = FlashAttention-2, and
cuDNN) on the shape table fa2_bench uses: B*N = 16k tokens, H*d = 2048,
N = 512..16k. The backward is timed alone (torch.autograd.grad on a kept
graph) and counts 2.5x the forward's FLOPs.

    python3 bench/sdpa_bench.py --json FILE [--reps N]

Inputs are (B, N, H, d) bf16 tensors viewed as (B, H, N, d), the layout a
model hands to SDPA (and the one fa2gen kernels read). Median of --reps
launches timed with CUDA events, after two warm-up launches."""
import argparse, json, statistics, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def time_one(fn, reps):
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--backward", action="store_true", help="also time the backward")
    args = ap.parse_args()
    rows = []
    for d in [int(x) for x in args.head_dims.split(",")]:
        H = 2048 // d
        for causal in (False, True):
            for N in (512, 1024, 2048, 4096, 8192, 16384):
                B = 16384 // N
                q, k, v = (torch.empty(B, N, H, d, device="cuda", dtype=torch.bfloat16).uniform_(-2, 2)
                           .transpose(1, 2).requires_grad_(args.backward) for _ in range(3))
                flops = 4 * B * H * N * N * d / (2 if causal else 1)
                for name, backend in BACKENDS.items():
                    try:
                        with sdpa_kernel([backend]):
                            ms = time_one(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), args.reps)
                    except RuntimeError as e:  # backend unavailable for this shape
                        print(f"sdpa {name} d{d} N{N} causal={causal}: {e}", file=sys.stderr)
                        continue
                    tf = flops / (ms * 1e-3) / 1e12
                    rows.append(dict(backend=name, pass_="fwd", head_dim=d, causal=causal, seqlen=N, batch=B,
                                     heads=H, ms=round(ms, 5), tflops=round(tf, 2)))
                    if args.backward:
                        with sdpa_kernel([backend]):
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            dout = torch.empty_like(out).uniform_(-1, 1)
                            bms = time_one(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True),
                                           args.reps)
                        del out, dout
                        btf = 2.5 * flops / (bms * 1e-3) / 1e12
                        rows.append(dict(backend=name, pass_="bwd", head_dim=d, causal=causal, seqlen=N,
                                         batch=B, heads=H, ms=round(bms, 5), tflops=round(btf, 2)))
                        print(f"sdpa-{name:5s} bwd d{d:<3d} {'causal' if causal else 'full  '} N{N:<6d} "
                              f"{bms:8.3f} ms {btf:7.1f} TFLOP/s", flush=True)
                    print(f"sdpa-{name:5s} d{d:<3d} {'causal' if causal else 'full  '} N{N:<6d} {ms:8.3f} ms {tf:7.1f} TFLOP/s",
                          flush=True)
                del q, k, v
    info = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                cudnn=torch.backends.cudnn.version(), rows=rows)
    with open(args.json, "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
