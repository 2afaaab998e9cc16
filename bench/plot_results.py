#!/usr/bin/env python3
"""Plots of one results folder of bench/gpu_run.sh, readable at a glance.

    python3 bench/plot_results.py DIR

DIR/fa2_bench.json + DIR/sdpa.json -> DIR/speed.png: forward and backward
TFLOP/s against N for each head dim and causal flag, fa2gen's modes beside
PyTorch SDPA's flash and cuDNN backends (the best tile per mode when several
were timed). DIR/bias_vs_sdpa.json -> DIR/bias.png: the bias ratio of every
implementation on every case of the tie suite. Files that are missing are
skipped with a line saying so."""
import json, os, re, sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLE = {"none": ("tab:blue", "-"), "paper": ("tab:orange", "-"), "robust": ("tab:green", "-"),
         "flash": ("black", "--"), "cudnn": ("gray", ":")}


def speed(d):
    ours, ref = (os.path.join(d, f) for f in ("fa2_bench.json", "sdpa.json"))
    if not (os.path.isfile(ours) and os.path.isfile(ref)):
        print(f"plot_results: {d}: no fa2_bench.json + sdpa.json, speed.png skipped")
        return
    best = {}
    for r in json.load(open(ours)):
        key = (r.get("pass", "fwd"), re.search(r"_(none|paper|robust)", r["variant"]).group(1),
               r["head_dim"], r["causal"], r["seqlen"])
        best[key] = max(best.get(key, 0), r["tflops"])
    sd = json.load(open(ref))
    for r in sd["rows"]:
        best[(r.get("pass_", "fwd"), r["backend"], r["head_dim"], r["causal"], r["seqlen"])] = r["tflops"]
    panels = sorted({(k[0], k[2], k[3]) for k in best}, key=lambda p: (p[0] != "fwd", p[1], p[2]))
    cols = 4
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, (pas, hd, causal) in zip(axes.flat, panels):
        for impl, (color, ls) in STYLE.items():
            pts = sorted((k[4], v) for k, v in best.items() if k[:4] == (pas, impl, hd, causal))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, color=color, marker="o", ms=3,
                        label=impl)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{'forward' if pas == 'fwd' else 'backward'}, d={hd}{', causal' if causal else ''}")
        ax.set_xlabel("N (B*N = 16k tokens, H*d = 2048)")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"fa2gen vs PyTorch SDPA on {sd.get('device', '?')} (torch {sd.get('torch', '?')})")
    fig.tight_layout()
    out = os.path.join(d, "speed.png")
    fig.savefig(out, dpi=100)
    print("wrote", out)


def bias(d):
    path = os.path.join(d, "bias_vs_sdpa.json")
    if not os.path.isfile(path):
        print(f"plot_results: {d}: no bias_vs_sdpa.json, bias.png skipped")
        return
    data = json.load(open(path))
    cases = []
    for r in data["rows"]:
        c = (r["case"], r["repeats"], r["head_dim"])
        if c not in cases:
            cases.append(c)
    impls = [i for i in STYLE if any(r["impl"] == i for r in data["rows"])]
    fig, ax = plt.subplots(figsize=(14, 4.5))
    width = 0.8 / len(impls)
    for n, impl in enumerate(impls):
        val = {(r["case"], r["repeats"], r["head_dim"]): r["bias_ratio"] for r in data["rows"] if r["impl"] == impl}
        ax.bar([i + n * width for i in range(len(cases))], [val.get(c, 0) for c in cases], width,
               label=impl, color=STYLE[impl][0])
    ax.axhline(0.03, color="red", lw=0.8, ls="--")
    ax.axhline(-0.03, color="red", lw=0.8, ls="--")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax.set_xticklabels([f"{c}\nr={r} d={h}" for c, r, h in cases], fontsize=7)
    ax.set_ylabel("bias ratio  mean(O - O_ref) / mean|O - O_ref|")
    ax.set_title(f"Rounding bias on the tie suite (0 = unbiased; dashed: +-0.03), {data.get('device', '?')}")
    ax.legend(ncol=len(impls), fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out = os.path.join(d, "bias.png")
    fig.savefig(out, dpi=100)
    print("wrote", out)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    speed(sys.argv[1])
    bias(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
