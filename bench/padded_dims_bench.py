#!/usr/bin/env python3
"""Head dims that are not kernel head dims, timed on a GPU: masked in the kernels or
zero-padded by the Python layer, one call, side by side.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python:bench python3 bench/padded_dims_bench.py [--json FILE]

Per head dim d (40, 120, 200 by default), N = 1k, 4k, 16k (B*N = 16k tokens,
about 2048 / d heads), causal and not, forward and forward+backward through
fa2gen.attention (bf16, mode none):
- masked: the kernels take d as it is (the tiles of the next kernel head dim, the columns
  past d zero in shared memory and never stored);
- padded: the Python layer pads q, k, v to that kernel head dim and slices O (and the
  gradients) back, as it did before (fa2gen._torch.padded_head_dim replaced for the call);
- on Hopper at d = 40 also padded to 64 (what the Python layer did there until session 22,
  when the kernels of d 33-48 moved to 64's wgmma tiles themselves);
- PyTorch's SDPA flash backend (FlashAttention-2) on the same tensors.
Times: medians of interleaved CUDA-event-timed groups (varlen_bench.timed_group), the
host's per-call work outside. The table prints last.
"""
import argparse
import json
import os
import re

import torch
import torch.nn.functional as F

import fa2gen
import fa2gen._torch as ft
from varlen_bench import rand, spin_up, timed_group, fwd_bwd

DEV = "cuda"


def with_kernel_dim(kd, f):
    """f with the Python layer padding every head dim to kd (kd None: as the kernels take it)."""
    def run():
        saved = ft.padded_head_dim
        ft.padded_head_dim = (lambda fn, d: d) if kd is None else (lambda fn, d: kd)
        try:
            return f()
        finally:
            ft.padded_head_dim = saved
    return run


def _kernel_head_dims():
    """gen/variant.lua's HEAD_DIMS, the head dims the kernels' tiles are built for."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "gen", "variant.lua")
    dims = re.search(r"M.HEAD_DIMS = \{([^}]*)\}", open(path).read()).group(1)
    return tuple(int(x) for x in dims.split(","))


KERNEL_HEAD_DIMS = _kernel_head_dims()


def tile_head_dim(d):
    """The kernel head dim whose tiles run head dim d (a multiple of 8; mma.sync's)."""
    return next(kd for kd in KERNEL_HEAD_DIMS if kd >= d)


def rows_for(d, hopper):
    out = []
    tile = tile_head_dim(d)
    for N in (1024, 4096, 16384):
        B, H = 16384 // N, max(1, 2048 // d)
        for causal in (False, True):
            q, k, v = (rand(B, N, H, d, grad=True) for _ in range(3))
            do = rand(B, N, H, d)
            att = lambda q, k, v: fa2gen.attention(q, k, v, causal=causal)
            sdpa = lambda q, k, v: F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal).transpose(1, 2)
            ways = {"masked": None, "padded": tile}
            if hopper and tile == 48:
                ways["pad64"] = 64
            for what in ("fwd", "fwd+bwd"):
                fns = []
                for kd in ways.values():
                    call = (lambda: att(q, k, v)) if what == "fwd" else fwd_bwd(att, (q, k, v), do)
                    fns.append(with_kernel_dim(kd, call))
                with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                    flash = (lambda: sdpa(q, k, v)) if what == "fwd" else fwd_bwd(sdpa, (q, k, v), do)
                    times = timed_group(*fns, flash, reps=7, inner=3)
                row = dict(d=d, tile=tile, N=N, causal=causal, what=what, flash_ms=times[-1])
                for name, t in zip(ways, times):
                    row[name + "_ms"] = t
                out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", default="40,120,200", help="head dims (multiples of 8)")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    hopper = torch.cuda.get_device_capability()[0] == 9
    spin_up()
    rows = []
    for d in (int(x) for x in a.dims.split(",")):
        rows += rows_for(d, hopper)
        print(f"d = {d} done", flush=True)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)
    print(f"{torch.cuda.get_device_name()}: masked / padded = the kernels' masks against the Python "
          "layer's padding to the tile head dim (< 1: masking is faster); ms")
    print(f"{'d':>4} {'tile':>4} {'N':>6} {'causal':>6} {'what':>8} {'masked':>8} {'padded':>8} "
          f"{'ratio':>6} {'pad64':>8} {'flash':>8} {'m/flash':>7}")
    for r in rows:
        pad64 = f"{r['pad64_ms']:8.3f}" if "pad64_ms" in r else f"{'-':>8}"
        print(f"{r['d']:4d} {r['tile']:4d} {r['N']:6d} {str(r['causal']):>6} {r['what']:>8} "
              f"{r['masked_ms']:8.3f} {r['padded_ms']:8.3f} {r['masked_ms'] / r['padded_ms']:6.2f} "
              f"{pad64} {r['flash_ms']:8.3f} {r['masked_ms'] / r['flash_ms']:7.2f}")


if __name__ == "__main__":
    main()
