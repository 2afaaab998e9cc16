#!/bin/bash
# Session 24, call 9 (main at the commit that adds sdpa_bench.py --tokens/--width): issue 21's GPT-2 small row (B 8,
# N 1024, H 12, d 64) through PyTorch with the native eager forward, SDPA flash and cuDNN in the same runs: per call
# (one launch a timed region: the host counts) and queued (--inner 5), forward and backward, two rounds each.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
G="--backward --tokens 8192 --width 768 --head-dims 64 --seqlens 1024 --reps 30 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
for r in 1 2; do
  run gpt2_percall$r 90 python3 bench/sdpa_bench.py $G --json $OUT/gpt2_percall$r.json
  run gpt2_queued$r 90 python3 bench/sdpa_bench.py $G --inner 5 --json $OUT/gpt2_queued$r.json
done
cd $OUT
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("*.json")):
    rows = json.load(open(path))["rows"]
    ms = {(r["backend"], r["pass_"], r["causal"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: ms; flash / fa2gen, cudnn / fa2gen (> 1: fa2gen faster)")
    for (b, p, c), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][0])):
        if b.startswith("fa2gen") and c:
            f, u = ms[("flash", p, c)], ms[("cudnn", p, c)]
            print(f"{b:14s} {p} causal {t:6.3f} flash {f:6.3f} cudnn {u:6.3f} vs flash {f / t:5.2f} vs cudnn {u / t:5.2f}")
PY
tar czf call9_logs.tar.gz *.txt *.json && rm -f *.txt *.json
