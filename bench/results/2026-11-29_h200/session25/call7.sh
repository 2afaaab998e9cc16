#!/bin/bash
# Session 25, call 7 (sdpa_bench.py with each API's own layout: fa2gen's (B, N, H, d) views made once, outside the
# timed call): issue 21's GPT-2 small row (B 8, N 1024, H 12, d 64) per call and queued, forward and backward, two
# rounds; the N = 512 rows (d 64, 128) the same, one round. SDPA flash and cuDNN in the same runs.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 150 python3 -m fa2gen._native
B="--backward --reps 30 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
G="$B --tokens 8192 --width 768 --head-dims 64 --seqlens 1024"
for r in 1 2; do
  run gpt2_percall$r 90 python3 bench/sdpa_bench.py $G --json $OUT/gpt2_percall$r.json
  run gpt2_queued$r 90 python3 bench/sdpa_bench.py $G --inner 5 --json $OUT/gpt2_queued$r.json
done
run n512_percall 120 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 512 --json $OUT/n512_percall.json
run n512_queued 120 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 512 --inner 5 --json $OUT/n512_queued.json
cd $OUT
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("*.json")):
    rows = json.load(open(path))["rows"]
    ms = {(r["backend"], r["pass_"], r["head_dim"], r["causal"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: ms; cudnn / fa2gen, flash / fa2gen (> 1: fa2gen faster)")
    for (b, p, d, c), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][0])):
        if b.startswith("fa2gen"):
            u, f = ms[("cudnn", p, d, c)], ms[("flash", p, d, c)]
            print(f"{b:14s} {p} d{d:<3d} {'causal' if c else 'full  '} {t:6.3f} cudnn {u:6.3f} flash {f:6.3f} "
                  f"vs cudnn {u / t:5.2f} vs flash {f / t:5.2f}")
PY
tar czf call7_logs.tar.gz *.txt *.json && rm -f *.txt *.json
