#!/usr/bin/env python3
"""The cost of each score modifier, timed side by side, one call.

    FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/modifiers_bench.py [--json FILE]

B*N = 16k tokens, H*d = 2048, bf16, d 64 and 128, causal and not, N = 4096 (--seqlens),
forward and forward+backward, for each modifier (softcap 30, ALiBi slopes, attention
sinks; dropout has its place in MODIFIERS, filled by its own branch):
  fa2gen on   flash_attn_func with the modifier (robust, the default mode)
  fa2gen off  the same call without it: the modifier's cost is on / off
  flex        torch.compile'd FlexAttention doing the same modification: a score_mod
              for softcap and ALiBi (causal as a block mask); sinks as FlexAttention
              has no sink, its output and LSE rescaled exactly: O * sigmoid(lse - sink)
Times: medians of CUDA-event-timed launches, the three interleaved (timed_group); the
table prints last, with max |fa2gen - flex| of the outputs. --warm-only runs every call
once, forward and backward, and times nothing: it fills the kernel caches (fa2gen's on
disk, Inductor's FX graph and Triton caches), so that it can run beside other work
and a timed run after it compiles little.
"""
import argparse
import json

import torch

import fa2gen
from varlen_bench import fwd_bwd, rand, timed_group

DEV = "cuda"


def alibi_slopes(H):
    """ALiBi's geometric slopes for H heads (2^(-8 h / H))."""
    return torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)], device=DEV)


def flex_api():
    from torch.nn.attention import flex_attention as fa
    torch._dynamo.config.cache_size_limit = 64  # one compile per modifier and shape
    torch._dynamo.config.accumulated_cache_size_limit = 512
    return fa, torch.compile(fa.flex_attention, dynamic=False)


def flex_call(fa, flex, score_mod, mask, lse_sinks=None):
    """FlexAttention on fa2gen's (B, N, H, d) tensors (transposed views); with sinks,
    the output rescaled by sigmoid(lse - sink): softmax over the keys and the sink."""
    def run(q, k, v):
        qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
        if lse_sinks is None:
            return flex(qt, kt, vt, score_mod=score_mod, block_mask=mask).transpose(1, 2)
        if hasattr(fa, "AuxRequest"):  # PyTorch >= 2.9
            o, aux = flex(qt, kt, vt, score_mod=score_mod, block_mask=mask,
                          return_aux=fa.AuxRequest(lse=True))
            lse = aux.lse
        else:
            o, lse = flex(qt, kt, vt, score_mod=score_mod, block_mask=mask, return_lse=True)
        scale = torch.sigmoid(lse - lse_sinks.view(1, -1, 1))  # (B, H, N), exact
        return (o * scale.unsqueeze(-1).to(o.dtype)).transpose(1, 2)
    return run


def modifiers(H, N, fa, flex):
    """name -> (fa2gen keywords, flex call builder taking (causal mask or None))."""
    cap, slopes, sinks = 30.0, alibi_slopes(H), torch.randn(H, device=DEV) * 2
    softcap_mod = lambda s, b, h, i, j: cap * torch.tanh(s / cap)
    alibi_mod = lambda s, b, h, i, j: s - slopes[h] * (i - j).abs()  # N = seqlen_q = seqlen_k
    return {
        "softcap": (dict(softcap=cap), lambda mask: flex_call(fa, flex, softcap_mod, mask)),
        "alibi": (dict(alibi_slopes=slopes), lambda mask: flex_call(fa, flex, alibi_mod, mask)),
        "sinks": (dict(sinks=sinks), lambda mask: flex_call(fa, flex, None, mask, lse_sinks=sinks)),
        # "dropout": (dict(dropout_p=0.1), ...): issue 20 item 5, in its own branch; FlexAttention
        # has no dropout, so its column would be n/a there.
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--seqlens", default="4096")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--only", default="", help="comma-separated modifiers (default: all)")
    ap.add_argument("--warm-only", action="store_true", help="compile everything, time nothing")
    args = ap.parse_args()
    fa, flex = flex_api()
    rows = []
    for d in map(int, args.head_dims.split(",")):
        H = 2048 // d
        for N in map(int, args.seqlens.split(",")):
            B = 16384 // N
            q, k, v = (rand(B, N, H, d, grad=True) for _ in range(3))
            do = rand(B, N, H, d)
            mods = modifiers(H, N, fa, flex)
            for causal in (False, True):
                mask = fa.create_block_mask(lambda b, h, i, j: j <= i, None, None, N, N, device=DEV) \
                    if causal else None
                flops = 4 * B * H * N * N * d / (2 if causal else 1)
                off = lambda q, k, v: fa2gen.flash_attn_func(q, k, v, causal=causal)
                for name, (kw, make_flex) in mods.items():
                    if args.only and name not in args.only.split(","):
                        continue
                    on = lambda q, k, v, kw=kw: fa2gen.flash_attn_func(q, k, v, causal=causal, **kw)
                    theirs = make_flex(mask)
                    row = dict(modifier=name, d=d, N=N, B=B, H=H, causal=causal)
                    fns = ((lambda: on(q, k, v), lambda: off(q, k, v), lambda: theirs(q, k, v)),
                           (fwd_bwd(on, (q, k, v), do), fwd_bwd(off, (q, k, v), do),
                            fwd_bwd(theirs, (q, k, v), do)))
                    for what, group in zip(("fwd", "fb"), fns):
                        try:  # a FlexAttention feature this PyTorch lacks: say so, time fa2gen alone
                            group[2]()
                            if what == "fwd":
                                with torch.no_grad():
                                    diff = on(q, k, v).float() - theirs(q, k, v).float()
                                row["max_diff"] = diff.abs().max().item()
                        except Exception as e:
                            row[f"{what}_error"] = f"flex: {type(e).__name__}: {str(e).splitlines()[0][:150]}"
                            group = group[:2]
                        if args.warm_only:
                            for fn in group:
                                fn()
                            continue
                        t = timed_group(*group)
                        row.update({f"{what}_on": t[0], f"{what}_off": t[1]})
                        if len(t) > 2:
                            row[f"{what}_flex"] = t[2]
                    if "fwd_on" in row:
                        row["tflops_fwd"] = flops / row["fwd_on"] / 1e9
                    print(f"{name} d{d} N{N} causal={causal}: " + ", ".join(
                        f"{key} {x:.3f}" if isinstance(x, float) else f"{key} {x}" for key, x in row.items()
                        if key.startswith(("fwd_", "fb_", "max"))), flush=True)
                    rows.append(row)
    if args.warm_only:
        torch.cuda.synchronize()
        print(f"warm: {len(rows)} rows compiled and run once")
        return
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print(f"\n{torch.cuda.get_device_name()}, PyTorch {torch.__version__}: score modifiers, bf16, "
          "B*N = 16384, H*d = 2048; ms (medians), on/off = the modifier's cost in fa2gen, "
          "flex/on = FlexAttention's time over fa2gen's")
    print(f"{'modifier':<9}{'d':>4}{'N':>6}{'causal':>7} | {'fwd on':>7}{'off':>7}{'flex':>7}"
          f"{'on/off':>7}{'flex/on':>8} | {'f+b on':>7}{'off':>7}{'flex':>7}{'on/off':>7}{'flex/on':>8}"
          f" | {'TFLOP/s':>7}{'max diff':>9}")

    def cells(r, what):
        on, off = r[f"{what}_on"], r[f"{what}_off"]
        flex = r.get(f"{what}_flex")
        if flex is None:
            return f"{on:>7.3f}{off:>7.3f}{'n/a':>7}{on / off:>7.3f}{'n/a':>8}"
        return f"{on:>7.3f}{off:>7.3f}{flex:>7.3f}{on / off:>7.3f}{flex / on:>8.2f}"
    for r in rows:
        done = "tflops_fwd" in r and "max_diff" in r
        tail = f"{r['tflops_fwd']:>7.0f}{r['max_diff']:>9.4f}" if done else ""
        print(f"{r['modifier']:<9}{r['d']:>4}{r['N']:>6}{str(r['causal']):>7} | {cells(r, 'fwd')} | "
              f"{cells(r, 'fb')} | {tail}")
    for r in rows:
        for what in ("fwd", "fb"):
            if what + "_error" in r:
                print(f"{r['modifier']} d{r['d']} causal={r['causal']} {what}: {r[what + '_error']}")


if __name__ == "__main__":
    main()
