#!/usr/bin/env python3
"""Variable-length batches timed on a GPU, one call, side by side.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/varlen_bench.py [--json FILE]

1. Equal lengths: fa2gen's varlen kernels (B sequences of N rows; the package's varlen call
   hands such a batch to the fixed-length kernels, switched off here) against its
   fixed-length call on the same (B, N, H, d) data, forward and forward+backward,
   B*N = 16k tokens, H*d = 2048, d 64 and 128 (--equal-dims), causal and not (the varlen kernel
   must cost within 3 % of the fixed one).
2. A realistic mix: 16k tokens of documents whose lengths follow a long-tailed
   (log-normal, median 256) distribution, causal within each document, d 128 (--mix-dims), 2048 / d
   heads: fa2gen varlen; FlexAttention (compiled) with a document mask over the
   packed sequence; padding every document to the longest (fa2gen fixed length and
   SDPA flash on the padded batch); torch.nn.attention.varlen where this PyTorch
   has it.
Times are medians of CUDA-event-timed launches after a warm-up, two input sets in
turn (the L2 cache does not flatter); the equal-length pairs are timed interleaved,
five calls per timed region in alternating order (timed_pair), so host work stays
out; the table prints last.
"""
import argparse
import json
import math
import statistics

import torch

import fa2gen
from fa2gen import _torch
from sdpa_bench import time_one  # median ms of CUDA-event-timed calls, after a warm-up

DEV = "cuda"


def timed_group(*fns, reps=15, inner=5, warmup=2):
    """Median ms per call of each of fns, interleaved: each rep times `inner`
    back-to-back calls of each in turn, with one synchronize per rep, so the host
    queues ahead of the GPU and its per-call Python work stays out of the times; the
    order rotates from rep to rep, so none always goes first."""
    for _ in range(warmup):
        for f in fns:
            f()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for rep in range(reps):
        order = [(rep + i) % len(fns) for i in range(len(fns))]
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2 * len(fns))]
        for slot, i in enumerate(order):
            ev[2 * slot].record()
            for _ in range(inner):
                fns[i]()
            ev[2 * slot + 1].record()
        ev[-1].synchronize()
        for slot, i in enumerate(order):
            times[i].append(ev[2 * slot].elapsed_time(ev[2 * slot + 1]) / inner)
    return tuple(statistics.median(t) for t in times)


def spin_up(seconds=2.0):
    """Busy GPU work for a while, so the first timed row does not meet idle clocks
    (session 13: a call's first window row read 0.32 ms where it reads 0.20 warm)."""
    import time
    a = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def timed_pair(fa, fb, reps=15, inner=5, warmup=2):
    """timed_group of two: each goes first in every other rep."""
    return timed_group(fa, fb, reps=reps, inner=inner, warmup=warmup)


def rand(*shape, grad=False):
    return torch.randn(*shape, device=DEV, dtype=torch.bfloat16).requires_grad_(grad)


def fwd_bwd(f, inputs, do):
    def run():
        for t in inputs:
            t.grad = None
        f(*inputs).backward(do)
    return run


def equal_lengths(rows, dims, whats=("fwd", "fwd+bwd")):
    # the varlen kernels themselves: flash_attn_varlen_func hands an equal-length batch to the
    # fixed-length call (fa2gen._torch.EQUAL_LENGTHS_FIXED), which would time the same call twice
    _torch.EQUAL_LENGTHS_FIXED = False
    for d in dims:
        H = 2048 // d
        for N in (1024, 2048, 4096, 16384):
            B = 16384 // N
            for causal in (False, True):
                sets = [[rand(B, N, H, d, grad=True) for _ in range(3)] for _ in range(2)]
                do = rand(B, N, H, d)
                cu = torch.arange(0, (B + 1) * N, N, dtype=torch.int32, device=DEV)
                flat = lambda t: t.detach().reshape(B * N, H, d).requires_grad_()
                vsets = [[flat(t) for t in s] for s in sets]
                fixed = lambda q, k, v: fa2gen.attention(q, k, v, causal=causal)
                var = lambda q, k, v: fa2gen.flash_attn_varlen_func(q, k, v, cu, cu, N, N,
                                                                    causal=causal)
                flops = 4 * B * H * N * N * d / (2 if causal else 1)
                for what, mk, mult in (("fwd", lambda f, s: (lambda: f(*s)), 1),
                                       ("fwd+bwd", lambda f, s: fwd_bwd(f, s, do if f is fixed else
                                                                        do.reshape(B * N, H, d)), 3.5)):
                    if what not in whats:
                        continue
                    tf = [mk(fixed, s) for s in sets]
                    tv = [mk(var, s) for s in vsets]
                    t_fixed, t_var = timed_pair(lambda: [f() for f in tf], lambda: [f() for f in tv])
                    t_fixed, t_var = t_fixed / 2, t_var / 2
                    rows.append(dict(table="equal", d=d, N=N, causal=causal, what=what,
                                     fixed_ms=t_fixed, varlen_ms=t_var, ratio=t_var / t_fixed,
                                     tflops=flops * mult / t_var / 1e9))


def doc_lengths(total, seed=0):
    g = torch.Generator().manual_seed(seed)
    lens = []
    while sum(lens) < total:
        n = int(math.exp(math.log(256) + 1.0 * torch.randn(1, generator=g).item()))
        lens.append(max(1, min(n, 8192, total - sum(lens))))
    return lens


def realistic_mix(rows, d):
    H, total = 2048 // d, 16384
    lens = doc_lengths(total)
    n, longest = len(lens), max(lens)
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=DEV)
    q, k, v = (rand(total, H, d, grad=True) for _ in range(3))
    do = rand(total, H, d)
    flops = sum(4 * H * s * s * d / 2 for s in lens)
    cands = {}
    cands["fa2gen varlen"] = lambda q, k, v: fa2gen.flash_attn_varlen_func(
        q, k, v, cu, cu, longest, longest, causal=True)
    # FlexAttention: one packed sequence, causal inside each document
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    doc = torch.repeat_interleave(torch.arange(n, device=DEV), torch.tensor(lens, device=DEV))
    mask = create_block_mask(lambda b, h, i, j: (doc[i] == doc[j]) & (j <= i), 1, 1, total, total,
                             device=DEV)
    flex = torch.compile(flex_attention)
    cands["flex (document mask)"] = lambda q, k, v: flex(
        q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
        block_mask=mask)[0].transpose(0, 1)
    # padding to the longest document (right padding; causal keeps real rows exact)
    pos = torch.cat([torch.arange(s, device=DEV) for s in lens])
    idx = torch.repeat_interleave(torch.arange(n, device=DEV), torch.tensor(lens, device=DEV)) * longest + pos

    def padded(f):
        def run(q, k, v):
            P = [t.new_zeros(n * longest, H, d).index_copy(0, idx, t).view(n, longest, H, d)
                 for t in (q, k, v)]
            return f(*P).reshape(n * longest, H, d).index_select(0, idx)
        return run
    cands["fa2gen padded"] = padded(lambda q, k, v: fa2gen.attention(q, k, v, causal=True))
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def sdpa_flash(q, k, v):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)
    cands["sdpa flash padded"] = padded(sdpa_flash)
    try:
        import inspect
        from torch.nn.attention import varlen as tv
        # causal is is_causal=True in some versions, window_size=(-1, 0) in others
        params = inspect.signature(tv.varlen_attn).parameters
        causal_kw = {"is_causal": True} if "is_causal" in params else {"window_size": (-1, 0)}
        cands["torch varlen_attn"] = lambda q, k, v: tv.varlen_attn(
            q, k, v, cu, cu, longest, longest, **causal_kw)
    except (ImportError, AttributeError) as e:
        print("torch.nn.attention.varlen: not in this PyTorch:", e)
    ref = None
    for name, f in cands.items():
        try:
            out = f(q, k, v)
            if ref is None:
                ref = out.detach().float()
            err = (out.detach().float() - ref).abs().max().item()
            t_f = time_one(lambda: f(q, k, v), 20)
            t_fb = time_one(fwd_bwd(f, (q, k, v), do), 20)
        except Exception as e:  # a backend that cannot run here: say so, go on
            print(f"{name}: failed: {type(e).__name__}: {str(e)[:200]}")
            continue
        rows.append(dict(table="mix", d=d, name=name, docs=n, longest=longest, fwd_ms=t_f,
                         fwd_bwd_ms=t_fb, tflops_fwd=flops / t_f / 1e9, max_diff=err))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--skip-equal", action="store_true")
    ap.add_argument("--skip-mix", action="store_true")
    ap.add_argument("--equal-dims", default="64,128", help="head dims of the equal lengths, comma-separated")
    ap.add_argument("--equal-what", default="fwd,fwd+bwd",
                    help="what the equal lengths time: fwd, fwd+bwd or both, comma-separated")
    ap.add_argument("--mix-dims", default="128", help="head dims of the mix, comma-separated")
    args = ap.parse_args()
    rows = []
    if not args.skip_equal:
        equal_lengths(rows, [int(d) for d in args.equal_dims.split(",")], args.equal_what.split(","))
    if not args.skip_mix:
        for d in [int(d) for d in args.mix_dims.split(",")]:
            realistic_mix(rows, d)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print(f"\n{torch.cuda.get_device_name()}: varlen with equal lengths against fixed length")
    print(f"{'d':>4}{'N':>7}{'causal':>8}{'pass':>9}{'fixed ms':>10}{'varlen ms':>11}{'ratio':>8}{'TFLOP/s':>9}")
    for r in rows:
        if r["table"] == "equal":
            print(f"{r['d']:>4}{r['N']:>7}{str(r['causal']):>8}{r['what']:>9}{r['fixed_ms']:>10.3f}"
                  f"{r['varlen_ms']:>11.3f}{r['ratio']:>8.3f}{r['tflops']:>9.0f}")
    for d in sorted({r["d"] for r in rows if r["table"] == "mix"}):
        mix = [r for r in rows if r["table"] == "mix" and r["d"] == d]
        print(f"\nrealistic mix: 16384 tokens, {mix[0]['docs']} documents, longest {mix[0]['longest']}, "
              f"causal, d {d}, {2048 // d} heads")
        print(f"{'':<24}{'fwd ms':>9}{'fwd+bwd ms':>12}{'fwd TFLOP/s':>13}{'max diff':>10}")
        for r in mix:
            print(f"{r['name']:<24}{r['fwd_ms']:>9.3f}{r['fwd_bwd_ms']:>12.3f}{r['tflops_fwd']:>13.0f}"
                  f"{r['max_diff']:>10.4f}")


if __name__ == "__main__":
    main()
