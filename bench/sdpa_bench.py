#!/usr/bin/env python3
"""PyTorch SDPA forward and backward TFLOP/s (flash = FlashAttention-2, and
cuDNN) on the shape table fa2_bench uses: B*N = 16k tokens, H*d = 2048,
N = 512..16k. The backward is timed alone (torch.autograd.grad on a kept
graph) and counts 2.5x the forward's FLOPs.

    python3 bench/sdpa_bench.py --json FILE [--reps N] [--backends flash,cudnn,fa2gen-robust,...]
                                [--tokens 16384 --width 2048] (GPT-2 small: --tokens 8192 --width 768
                                --head-dims 64 --seqlens 1024)

Backends fa2gen-none, fa2gen-paper, fa2gen-robust and fa2gen-tuned time
fa2gen.attention through the Python binding on the same tensors: run once
with FA2_TUNING_DB=off and once without to see what the tuning database of
`fa2 tune` changes (bench/tune_check.py effect BEFORE AFTER). A "-pad32"
suffix (fa2gen-none-pad32) zero-pads d to the next multiple of 32 in the
call and slices the output, as the Python layer did before the kernels had
head dims 16, 48 and 80: the native kernel against the padded one. "-pad64"
pads to the next multiple of 64 (d 160 and 224 onto sm_90's ws tiles of 192
and 256, copies included).

Inputs are (B, N, H, d) bf16 (--dtype fp16: fp16) tensors viewed as (B, H, N, d), the layout a
model hands to SDPA (and the one fa2gen kernels read). Median of --reps
launches timed with CUDA events, after two warm-up launches."""
import argparse, json, re, statistics, sys
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def time_one(fn, reps, inner=1):
    """Median ms per call over reps timed regions of `inner` calls each: with one
    call the host's time before its first launch counts; with several, an untimed
    call first, the host queues ahead of the GPU (GPU-bound, as in a training step)."""
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if inner > 1:
            fn()  # the GPU is busy with it while the host reaches the timed calls
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / inner)
    return statistics.median(times)


def attention(backend, q, k, v, causal):
    """A call of one backend on (B, H, N, d) views of (B, N, H, d) tensors, and the tensors
    its backward differentiates. Each API gets its own layout, as a model hands it: SDPA
    the (B, H, N, d) views, fa2gen the (B, N, H, d) ones, made once outside the timed call
    (before session 25 the call made them, four autograd views a call: ~20 us of host time
    with grad at the GPT-2 shape, bench/NOTES.md "Session 25")."""
    if not isinstance(backend, str):
        return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), (q, k, v)
    import fa2gen
    stab, _, pad = backend.partition("-pad")
    d = q.shape[-1]
    kd = -(-d // int(pad)) * int(pad) if pad else d
    if kd == d:
        qn, kn, vn = (t.transpose(1, 2) for t in (q, k, v))
        return (lambda: fa2gen.attention(qn, kn, vn, causal=causal, stab=stab)), (qn, kn, vn)
    grow = lambda t: F.pad(t.transpose(1, 2), (0, kd - d))
    return (lambda: fa2gen.attention(grow(q), grow(k), grow(v), causal=causal, stab=stab,
                                     scale=d ** -0.5)[..., :d].transpose(1, 2)), (q, k, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--head-dims", default="64,128", help="comma-separated; H = --width // d heads")
    ap.add_argument("--tokens", type=int, default=16384, help="B * N (B = tokens // N; GPT-2 small: 8192)")
    ap.add_argument("--width", type=int, default=2048, help="H * d (GPT-2 small: 768)")
    ap.add_argument("--backward", action="store_true", help="also time the backward")
    ap.add_argument("--backends", default="flash,cudnn")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"), help="the inputs' dtype")
    ap.add_argument("--inner", type=int, default=1,
                    help="calls per timed region (1: per call, host time included; 5: queued)")
    args = ap.parse_args()
    backends = {}
    for name in args.backends.split(","):
        if name in BACKENDS:
            backends[name] = BACKENDS[name]
        elif re.fullmatch(r"fa2gen-(none|paper|robust|tuned)(-pad32|-pad64)?", name):
            backends[name] = name[7:]
        else:
            ap.error(f"--backends: {name!r}: allowed flash, cudnn, fa2gen-none, fa2gen-paper, "
                     "fa2gen-robust, fa2gen-tuned, each fa2gen one with -pad32 or -pad64")
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    rows = []
    for d in [int(x) for x in args.head_dims.split(",")]:
        H = args.width // d
        for causal in (False, True):
            for N in [int(x) for x in args.seqlens.split(",")]:
                B = args.tokens // N
                q, k, v = (torch.empty(B, N, H, d, device="cuda", dtype=dtype).uniform_(-2, 2)
                           .transpose(1, 2).requires_grad_(args.backward) for _ in range(3))
                flops = 4 * B * H * N * N * d / (2 if causal else 1)
                for name, backend in backends.items():
                    attend, wrt = attention(backend, q, k, v, causal)
                    try:
                        with sdpa_kernel([backend]) if not isinstance(backend, str) else nullcontext():
                            ms = time_one(attend, args.reps, args.inner)
                    except RuntimeError as e:  # backend unavailable for this shape
                        print(f"sdpa {name} d{d} N{N} causal={causal}: {e}", file=sys.stderr)
                        continue
                    tf = flops / (ms * 1e-3) / 1e12
                    rows.append(dict(backend=name, pass_="fwd", head_dim=d, causal=causal, seqlen=N, batch=B,
                                     heads=H, ms=round(ms, 5), tflops=round(tf, 2)))
                    if args.backward:
                        with sdpa_kernel([backend]) if not isinstance(backend, str) else nullcontext():
                            out = attend()
                            dout = torch.empty_like(out).uniform_(-1, 1)
                            bms = time_one(lambda: torch.autograd.grad(out, wrt, dout, retain_graph=True),
                                           args.reps, args.inner)
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
                cudnn=torch.backends.cudnn.version(), dtype=args.dtype, rows=rows)
    with open(args.json, "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
