#!/usr/bin/env python3
"""Checks of the autotuner (issue 7), from the JSON that `fa2 tune --report`
and bench/sdpa_bench.py write.

    python3 bench/tune_check.py sweep TUNE.json WIDE.json [--tolerance 1.03]
        Per key and sequence length: the time of the tiles `fa2 tune` chose
        for that length (by_seqlen, else the key's), as the wider manual sweep
        (fa2 tune --wide --dry-run) measured them (re-timed when a finalist
        there), over the fastest candidate of that sweep. Exit 1 when a ratio is
        above the tolerance.
    python3 bench/tune_check.py effect BEFORE.json AFTER.json
        sdpa_bench.py rows with FA2_TUNING_DB=off (before) and with the
        database (after): ms and speed-up per row, geometric mean per backend.
"""
import argparse, json, math, sys


def ms_of(c, n):
    """A candidate's time at length n: re-timed (a finalist) when it was."""
    return c.get("ms_final", {}).get(n) or c["ms"].get(n)


def sweep(args):
    tune, wide = json.load(open(args.tune)), json.load(open(args.wide))
    wide_groups = {g["key"]: g for g in wide["groups"]}
    print(f"| key | chosen | N | chosen ms (sweep) | sweep best | best ms | ratio |\n|---|---|---|---|---|---|---|")
    worst, rows, missing = 0.0, 0, []
    for g in tune["groups"]:
        w = wide_groups.get(g["key"])
        if not w or not g.get("best"):
            continue
        cands = {c["name"]: c for c in w["candidates"]}
        for n in sorted(cands.get(g["best"], {}).get("ms", {}), key=int):
            name = g.get("by_seqlen", {}).get(n, g["best"])  # the tiles a call at n gets
            chosen = cands.get(name)
            if not chosen or chosen["pruned"] or not ms_of(chosen, n):
                missing.append(f"{g['key']} N={n} ({name})")
                continue
            timed = [(ms_of(c, n), c["tile"]) for c in w["candidates"]
                     if not c["pruned"] and ms_of(c, n)]
            best_ms, best_tile = min(timed)
            ms = ms_of(chosen, n)
            r = ms / best_ms
            worst, rows = max(worst, r), rows + 1
            flag = "" if r <= args.tolerance else " **over**"
            print(f"| {g['key']} | {chosen['tile']} | {n} | {ms:.4f} | {best_tile} | {best_ms:.4f} | {r:.3f}{flag} |")
    for k in missing:
        print(f"{k}: the chosen tiles are not in the sweep's race", file=sys.stderr)
    print(f"\n{rows} rows; worst ratio {worst:.3f} (tolerance {args.tolerance})")
    return 0 if rows and worst <= args.tolerance and not missing else 1


def effect(args):
    def rows(path):
        return {(r["backend"], r["pass_"], r["head_dim"], r["causal"], r["seqlen"]): r
                for r in json.load(open(path))["rows"]}
    before, after = rows(args.before), rows(args.after)
    print("| backend | pass | d | causal | N | ms before | ms after | speed-up |\n|---|---|---|---|---|---|---|---|")
    logs = {}
    for key in sorted(before):
        if key not in after:
            continue
        b, a = before[key]["ms"], after[key]["ms"]
        logs.setdefault((key[0], key[1]), []).append(math.log(b / a))
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[4]} | {b:.3f} | {a:.3f} | {b / a:.3f} |")
    print()
    for (backend, pass_), l in sorted(logs.items()):
        print(f"{backend} {pass_}: geometric-mean speed-up {math.exp(sum(l) / len(l)):.3f} over {len(l)} rows")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep")
    s.add_argument("tune"), s.add_argument("wide")
    s.add_argument("--tolerance", type=float, default=1.03)
    e = sub.add_parser("effect")
    e.add_argument("before"), e.add_argument("after")
    args = ap.parse_args()
    sys.exit(sweep(args) if args.cmd == "sweep" else effect(args))


if __name__ == "__main__":
    main()
