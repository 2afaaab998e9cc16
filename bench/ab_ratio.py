#!/usr/bin/env python3
"""Time ratio of two sets of fa2_bench runs of the same variants: test / base.

  ab_ratio.py --base A1.json [A2.json ...] --test B1.json [B2.json ...] [--title T]

Each JSON is fa2_bench's --json output. Runs of each set are meant to alternate
(A, B, A, B ...) so a drifting clock hits both alike; a cell is the median of
the set's per-run medians, and the ratio 1.03 means the test is 3 % slower.
Prints one markdown row per variant with a column per sequence length."""
import argparse
import statistics
import sys

from bench_json import median_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", nargs="+", required=True)
    ap.add_argument("--test", nargs="+", required=True)
    ap.add_argument("--title", default="test / base")
    a = ap.parse_args()
    base, test = median_ms(a.base), median_ms(a.test)
    keys = sorted(set(base) & set(test))
    if not keys:
        sys.exit("ab_ratio.py: the two sets share no (variant, seqlen)")
    seqlens = sorted({k[2] for k in keys})
    rows = sorted({(k[0], k[1]) for k in keys})
    print(f"| {a.title} | pass | " + " | ".join(str(n) for n in seqlens) + " |")
    print("|---|---|" + "---|" * len(seqlens))
    ratios = []
    for variant, pas in rows:
        cells = []
        for n in seqlens:
            k = (variant, pas, n)
            if k in base and k in test:
                ratios.append(test[k] / base[k])
                cells.append(f"{test[k] / base[k]:.3f}")
            else:
                cells.append("-")
        print(f"| {variant} | {pas} | " + " | ".join(cells) + " |")
    print(f"\n{len(ratios)} cells: ratio min {min(ratios):.3f}, median "
          f"{statistics.median(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
