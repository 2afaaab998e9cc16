#!/usr/bin/env python3
"""Two builds of libfa2rt through bench/sdpa_bench.py, side by side with SDPA.

    python3 bench/sdpa_ab.py --test T1.json T2.json ... --base B1.json B2.json ...

Each file is one sdpa_bench.py run (the test build's runs also time flash and
cuDNN); rows are medians over the runs of each. Per head dim, causal flag, N and
pass: fa2gen-none's TFLOP/s with each build, flash's and cuDNN's, and the ratios
test/base, test/flash and test/cuDNN (> 1: the test build is faster)."""
import argparse, json, statistics


def load(paths):
    by = {}
    for path in paths:
        for r in json.load(open(path))["rows"]:
            key = (r["backend"], r["pass_"], r["head_dim"], r["causal"], r["seqlen"])
            by.setdefault(key, []).append(r["tflops"])
    return {k: statistics.median(v) for k, v in by.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--test", nargs="+", required=True)
    ap.add_argument("--base", nargs="+", required=True)
    args = ap.parse_args()
    test, base = load(args.test), load(args.base)
    rows = sorted({k[1:] for k in test if k[0] == "fa2gen-none"}, key=lambda k: (k[0] != "fwd", k[1:]))
    print(f"{'pass':>4} {'d':>4} {'causal':>6} {'N':>6} {'test':>7} {'base':>7} {'flash':>7} {'cudnn':>7}"
          f" {'/base':>6} {'/flash':>6} {'/cudnn':>6}   (TFLOP/s, fa2gen none)")
    for p, d, causal, n in rows:
        t = test[("fa2gen-none", p, d, causal, n)]
        b = base.get(("fa2gen-none", p, d, causal, n))
        fl, cu = test.get(("flash", p, d, causal, n)), test.get(("cudnn", p, d, causal, n))
        ratio = lambda x: f"{t / x:6.3f}" if x else f"{'-':>6}"
        num = lambda x: f"{x:7.1f}" if x else f"{'-':>7}"
        print(f"{p:>4} {d:>4} {str(causal):>6} {n:>6} {t:7.1f} {num(b)} {num(fl)} {num(cu)}"
              f" {ratio(b)} {ratio(fl)} {ratio(cu)}")


if __name__ == "__main__":
    main()
