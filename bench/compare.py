#!/usr/bin/env python3
"""Side-by-side forward table: fa2gen variants (fa2_bench --json) against
PyTorch SDPA flash and cuDNN (sdpa_bench.py --json).

    python3 bench/compare.py FA2.json SDPA.json [--markdown] [--backward] [--by-variant]

For each head dim, causal flag and N: TFLOP/s of every fa2gen stabilization
mode (best tile per mode when several were timed), SDPA flash and cuDNN, and
the ratios ours/flash and ours/cuDNN. --by-variant: one row per timed variant
and N instead (TFLOP/s, /flash, /cuDNN), to compare tiles."""
import json, re, sys


def mode_of(name):
    return re.search(r"_(none|paper|robust)", name).group(1)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ours = json.load(open(sys.argv[1]))
    sdpa = json.load(open(sys.argv[2]))
    md = "--markdown" in sys.argv
    which = "bwd" if "--backward" in sys.argv else "fwd"
    ref = {(r["backend"], r["head_dim"], r["causal"], r["seqlen"]): r["tflops"] for r in sdpa["rows"]
           if r.get("pass_", "fwd") == which}
    if "--by-variant" in sys.argv:
        return by_variant(ours, ref, which, md)
    best = {}
    for r in ours:
        if r.get("pass", "fwd") != which:
            continue
        key = (mode_of(r["variant"]), r["head_dim"], r["causal"], r["seqlen"])
        if r["tflops"] > best.get(key, (0, ""))[0]:
            best[key] = (r["tflops"], r["variant"])
    modes = [m for m in ("none", "paper", "robust") if any(k[0] == m for k in best)]
    hdr = ["d", "causal", "N"] + modes + ["flash", "cudnn"] + [f"{m}/flash" for m in modes] + ["robust/none", "none/cudnn"]
    sep = " | " if md else "  "
    print(("| " if md else "") + sep.join(hdr) + (" |" if md else ""))
    if md:
        print("|" + "|".join("---" for _ in hdr) + "|")
    for d, causal, n in sorted({k[1:] for k in best}):
        t = {m: best.get((m, d, causal, n), (0, ""))[0] for m in modes}
        fl, cu = ref.get(("flash", d, causal, n), 0), ref.get(("cudnn", d, causal, n), 0)
        cells = [str(d), "yes" if causal else "no", str(n)] + [f"{t[m]:.1f}" for m in modes] + [f"{fl:.1f}", f"{cu:.1f}"]
        cells += [f"{t[m] / fl:.2f}" if fl else "-" for m in modes]
        cells += [f"{t['robust'] / t['none']:.3f}" if t.get("none") and t.get("robust") else "-"]
        cells += [f"{t['none'] / cu:.2f}" if cu and t.get("none") else "-"]
        print(("| " if md else "") + sep.join(cells) + (" |" if md else ""))
    print(f"\n(device: {sdpa.get('device')}, torch {sdpa.get('torch')})")


def by_variant(ours, ref, which, md):
    sep = " | " if md else "  "
    hdr = ["variant", "N", "TFLOP/s", "flash", "cudnn", "/flash", "/cudnn"]
    print(("| " if md else "") + sep.join(hdr) + (" |" if md else ""))
    if md:
        print("|" + "|".join("---" for _ in hdr) + "|")
    for r in sorted((r for r in ours if r.get("pass", "fwd") == which),
                    key=lambda r: (r["head_dim"], r["causal"], r["variant"], r["seqlen"])):
        fl = ref.get(("flash", r["head_dim"], r["causal"], r["seqlen"]), 0)
        cu = ref.get(("cudnn", r["head_dim"], r["causal"], r["seqlen"]), 0)
        cells = [r["variant"], str(r["seqlen"]), f"{r['tflops']:.1f}", f"{fl:.1f}", f"{cu:.1f}",
                 f"{r['tflops'] / fl:.2f}" if fl else "-", f"{r['tflops'] / cu:.2f}" if cu else "-"]
        print(("| " if md else "") + sep.join(cells) + (" |" if md else ""))


if __name__ == "__main__":
    main()
