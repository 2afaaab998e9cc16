#!/usr/bin/env python3
"""The CPU lab's bias ratios next to the GPU kernels' on the same suite.

  bias_gap.py GPU.json LAB.json

Both files are `fa2 bias --json` output (GPU: --gpu; LAB: the CPU lab with the
same seed, heads and --arch). Prints one markdown row per case, head dim and
mode (GPU, lab, GPU - lab), then the largest |GPU - lab| per mode: how well the
lab predicts the kernels (lab/README.md, "The lab against the GPU")."""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        return {(r["case"], r["repeats"], r["head_dim"], r["mode"]): r["bias_ratio"] for r in json.load(f)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpu")
    ap.add_argument("lab")
    a = ap.parse_args()
    gpu, lab = load(a.gpu), load(a.lab)
    keys = [k for k in gpu if k in lab]
    if not keys:
        sys.exit("bias_gap.py: no (case, repeats, head_dim, mode) in both files")
    print("| case | r | d | mode | GPU | lab | GPU - lab |")
    print("|---|---|---|---|---|---|---|")
    worst = {}
    for k in keys:
        gap = gpu[k] - lab[k]
        worst[k[3]] = max(worst.get(k[3], 0.0), abs(gap))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {gpu[k]:+.4f} | {lab[k]:+.4f} | {gap:+.4f} |")
    print()
    for mode, w in worst.items():
        print(f"{mode}: largest |GPU - lab| {w:.4f}")


if __name__ == "__main__":
    main()
