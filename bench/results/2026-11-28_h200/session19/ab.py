# median TFLOP/s per (side, variant, N) over ab_<side>_<round>.json, ratios to the first side
import json, os, glob, statistics, sys
out = os.environ["OUT"]; pref = sys.argv[1]; sides = sys.argv[2:]; by = {}
for f in sorted(glob.glob(f"{out}/{pref}_*_*.json")):
    side = os.path.basename(f)[len(pref) + 1:].rsplit("_", 1)[0]
    for r in json.load(open(f)):
        by.setdefault((side, r["variant"], r["seqlen"]), []).append(r["tflops"])
print(f"{'variant':52} {'N':>6} " + " ".join(f"{s:>9}" for s in sides) + " " + " ".join(f"{s + '/' + sides[0]:>14}" for s in sides[1:]))
for name, n in sorted({k[1:] for k in by}):
    m = [statistics.median(by[(s, name, n)]) if (s, name, n) in by else float("nan") for s in sides]
    print(f"{name:52} {n:>6} " + " ".join(f"{x:9.1f}" for x in m) + " " + " ".join(f"{x / m[0]:14.3f}" for x in m[1:]))
