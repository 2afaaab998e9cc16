#!/bin/bash
# Session 25, call 6: mode balanced's tile at short lengths (issue 22's cost): fa2_bench over
# bench/specs/balanced_short.lua (d 64 and 128, causal and not, none and balanced, the built-in, ws and two wgmma
# tiles) at N = 512, 1024, 2048, six rounds; the summary per row: balanced on each tile over none on its fastest.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for N in 512 1024 2048; do
  run bench_$N 200 bin/fa2_bench --spec bench/specs/balanced_short.lua --seqlen $N --rounds 6 --json $OUT/bench_$N.json
done
cd $OUT
python3 - <<'PY'
import glob, json, re
for path in sorted(glob.glob("bench_*.json"), key=lambda p: int(re.findall(r"\d+", p)[0])):
    rows = json.load(open(path))
    for d in (64, 128):
        for causal in (False, True):
            sel = [r for r in rows if r["head_dim"] == d and r["causal"] == causal]
            tile = lambda r: re.search(r"_(m\d+n\d+w\d+s\d+(?:wg|ws))_", r["variant"] + "_").group(1)
            none = {tile(r): r["ms"] for r in sel if r["variant"].endswith("_none")}
            bal = {tile(r): r["ms"] for r in sel if r["variant"].endswith("_balanced")}
            best = min(none, key=none.get)
            cells = ", ".join(f"{t} {bal[t] / none[best]:.2f}x" for t in sorted(bal))
            print(f"N {sel[0]['seqlen']:5d} d {d:3d} {'causal' if causal else 'full  '} none's fastest {best} "
                  f"{none[best]:.4f} ms; balanced over it: {cells}")
PY
tar czf call6_logs.tar.gz *.txt *.json && rm -f *.txt *.json
