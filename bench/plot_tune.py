#!/usr/bin/env python3
"""Draws DIR/tune.png from `fa2 tune --report DIR`: TFLOP/s of every timed
candidate per sequence length, one panel per tuning key (the chosen tiles
in red, the built-in ones in black), and the beta calibration (largest
|bias ratio| and mean |error| over none's, per beta).

    python3 bench/plot_tune.py DIR
"""
import json, math, os, sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    d = sys.argv[1]
    tune = json.load(open(os.path.join(d, "tune.json")))
    beta_path = os.path.join(d, "beta.json")
    betas = json.load(open(beta_path)) if os.path.exists(beta_path) else []
    groups = tune["groups"]
    extra = 2 if betas else 0
    cols = 4
    rows = math.ceil((len(groups) + extra) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, g in zip(axes.flat, groups):
        for c in g["candidates"]:
            if c["pruned"] or not c["tflops"]:
                continue
            ns = sorted(int(n) for n in c["tflops"])
            tf = [c["tflops"][str(n)] for n in ns]
            chosen, default = c["name"] == g.get("best"), c["default"]
            style = dict(color="red", lw=2, zorder=3, label="chosen " + c["tile"]) if chosen else \
                dict(color="black", lw=1.5, ls="--", zorder=2, label="built-in " + c["tile"]) if default else \
                dict(color="0.75", lw=0.8, zorder=1)
            ax.plot(ns, tf, marker="." if chosen or default else None, **style)
        ax.set_xscale("log", base=2)
        ax.set_title(g["key"], fontsize=9)
        ax.set_xlabel("N", fontsize=8)
        ax.set_ylabel("TFLOP/s", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="lower right")
    left = list(axes.flat)[len(groups):]
    if betas:
        for ax, field, label in ((left[0], "max_abs_bias", "largest |bias ratio|"),
                                 (left[1], "err_ratio", "mean |error| / none's")):
            for hd in sorted({b["head_dim"] for b in betas}):
                for mode, ls in (("paper", "--"), ("robust", "-")):
                    pts = sorted((b["beta"], b[field]) for b in betas if b["head_dim"] == hd and b["mode"] == mode)
                    if pts:
                        ax.plot(*zip(*pts), ls=ls, marker="o", label=f"{mode} d={hd}")
                none = [b[field] for b in betas if b["head_dim"] == hd and b["mode"] == "none"]
                if none:
                    ax.axhline(none[0], color="0.5", lw=0.8, ls=":")
            if field == "err_ratio":
                ax.axhline(1.5, color="red", lw=0.8, ls=":")
            ax.set_xlabel("beta", fontsize=8)
            ax.set_title(f"beta calibration: {label}", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=6)
        left = left[2:]
    for ax in left:
        ax.axis("off")
    gpu = tune["gpu"]
    fig.suptitle(f"fa2 tune on {gpu['name']} ({gpu['arch']}, {gpu['sm_count']} SMs), fa2gen {gpu['fa2gen']}: "
                 f"B*N = 16k tokens, H*d = 2048", fontsize=11)
    fig.tight_layout()
    out = os.path.join(d, "tune.png")
    fig.savefig(out, dpi=90)
    print("wrote", out)


if __name__ == "__main__":
    main()
