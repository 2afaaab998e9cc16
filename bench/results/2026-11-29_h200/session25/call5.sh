#!/bin/bash
# Session 25, call 5 (main with the causal length rule): test_dropout.py whole (its p = 0 bit test moved to N = 200)
# with FA2_NATIVE=require, and the non-causal d = 64 tiles below 1k (bench/specs/d64_noncausal_short.lua, fa2_bench
# at N = 256 and 512, six rounds; each tile's speed over the built-in m64n128w4s2wg).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for N in 256 512; do
  run bench_$N 200 bin/fa2_bench --spec bench/specs/d64_noncausal_short.lua --seqlen $N --rounds 6 --json $OUT/bench_$N.json
done
run native_build 150 python3 -m fa2gen._native
FA2_NATIVE=require run pytest_dropout 300 python3 -m pytest -q -n 8 tests/gpu/test_dropout.py
cd $OUT
python3 - <<'PY'
import glob, json, re
for path in sorted(glob.glob("bench_*.json"), key=lambda p: int(re.findall(r"\d+", p)[0])):
    rows = json.load(open(path))
    t = {r["variant"]: r["ms"] for r in rows}
    N = rows[0]["seqlen"]
    for mode in ("none", "robust_b2_e1em3", "balanced"):
        base = t[f"fwd_bf16_d64_m64n128w4s2wg_{mode}"]
        cells = [f"{tile} {base / t[f'fwd_bf16_d64_{tile}_{mode}']:.3f}x"
                 for tile in ("m64n64w4s2wg", "m64n64w4s3wg", "m128n128w12s2ws")]
        print(f"N {N:5d} {mode:16s} built-in {base:.4f} ms; " + ", ".join(cells))
PY
tail -n 1 pytest_dropout.txt
tar czf call5_logs.tar.gz *.txt *.json && rm -f *.txt *.json
