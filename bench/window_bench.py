#!/usr/bin/env python3
"""Sliding-window attention timed against the window size, one call.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/window_bench.py [--json FILE]

N = 16k tokens, d = 128, 16 heads, bf16, causal windows (left W, right 0) for
W = 128 ... 16k in powers of two (16k: the whole causal attention): fa2gen's flash_attn_func with
window_size against FlexAttention (compiled) with the same sliding-window mask. The
cost should grow with W, not with N: TFLOP/s over the visible (query, key) pairs stays
flat where it does (forward + backward counted as 3.5 forwards, FA2's convention).
"""
import argparse
import json

import torch

import fa2gen
from varlen_bench import fwd_bwd, rand, spin_up, timed_pair


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    args = ap.parse_args()
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    flex = torch.compile(flex_attention)
    N, H, d = 16384, 16, 128
    q, k, v = (rand(1, N, H, d, grad=True) for _ in range(3))
    do = rand(1, N, H, d)
    rows = []
    spin_up()
    for W in (128, 256, 512, 1024, 2048, 4096, 8192, 16384):
        ours = lambda q, k, v: fa2gen.flash_attn_func(q, k, v, causal=True, window_size=(W - 1, 0))
        mask = create_block_mask(lambda b, h, i, j: (j <= i) & (i - j < W), 1, 1, N, N, device="cuda")
        theirs = lambda q, k, v: flex(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                      block_mask=mask).transpose(1, 2)
        err = (ours(q, k, v) - theirs(q, k, v)).abs().max().item()
        f_ours, f_theirs = timed_pair(lambda: ours(q, k, v), lambda: theirs(q, k, v))
        b_ours, b_theirs = timed_pair(fwd_bwd(ours, (q, k, v), do), fwd_bwd(theirs, (q, k, v), do))
        keys = sum(min(i + 1, W) for i in range(N))  # visible (query, key) pairs
        rows.append(dict(window=W, fa2gen_fwd_ms=f_ours, flex_fwd_ms=f_theirs,
                         fa2gen_fwd_bwd_ms=b_ours, flex_fwd_bwd_ms=b_theirs, max_diff=err,
                         tflops_fwd=4 * keys * H * d / f_ours / 1e9,
                         tflops_fwd_bwd=3.5 * 4 * keys * H * d / b_ours / 1e9))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print(f"\n{torch.cuda.get_device_name()}: causal sliding window, N {N}, d {d}, {H} heads, bf16")
    print(f"{'window':>7}{'fa2gen fwd':>12}{'flex fwd':>10}{'fa2gen f+b':>12}{'flex f+b':>10}"
          f"{'fwd TFLOP/s':>13}{'f+b TFLOP/s':>13}{'max diff':>10}")
    for r in rows:
        print(f"{r['window']:>7}{r['fa2gen_fwd_ms']:>12.3f}{r['flex_fwd_ms']:>10.3f}"
              f"{r['fa2gen_fwd_bwd_ms']:>12.3f}{r['flex_fwd_bwd_ms']:>10.3f}{r['tflops_fwd']:>13.0f}"
              f"{r['tflops_fwd_bwd']:>13.0f}"
              f"{r['max_diff']:>10.4f}")


if __name__ == "__main__":
    main()
