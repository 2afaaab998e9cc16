#!/usr/bin/env python3
"""Cost of the modes: time of `paper`, `robust` and `balanced` over `none` of the
same tile, head dim, causality and N, from fa2_bench JSON files.

  mode_cost.py FILE.json [FILE.json ...]

Meant for runs that time the three modes of one tile interleaved (fa2_bench
--only <tile>, many rounds): 1.030 means 3 % slower than `none`. A variant
timed in several files counts with the median of its times."""
import argparse
import re
import sys

from bench_json import median_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    ms = {}
    for (variant, pas, seqlen), t in median_ms(a.files).items():
        m = re.match(r"(fwd_.*?)_(none|paper|robust|balanced)(_.*)?$", variant)
        if pas == "fwd" and m:
            ms[(m.group(1), seqlen, m.group(2))] = t
    tiles = sorted({k[0] for k in ms})
    seqlens = sorted({k[1] for k in ms})
    if not tiles:
        sys.exit("mode_cost.py: no forward variants in the input")
    print("| variant (mode / none) | " + " | ".join(str(n) for n in seqlens) + " |")
    print("|---|" + "---|" * len(seqlens))
    worst = {}
    for t in tiles:
        for mode in ("robust", "paper", "balanced"):
            cells = []
            for n in seqlens:
                base, x = ms.get((t, n, "none")), ms.get((t, n, mode))
                if base and x:
                    cells.append(f"{x / base:.3f}")
                    key = (mode, n >= 1024)
                    worst[key] = max(worst.get(key, 0), x / base)
                else:
                    cells.append("-")
            if all(c == "-" for c in cells):
                continue
            print(f"| {t} {mode} | " + " | ".join(cells) + " |")
    print()
    for (mode, long_), w in sorted(worst.items()):
        print(f"{mode}: worst {w:.3f} at N {'>= 1k' if long_ else '< 1k'}")


if __name__ == "__main__":
    main()
