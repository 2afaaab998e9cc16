#!/bin/bash
# Session 25, call 4 (the causal d = 64 length rule below 1k: m64n64w4s2wg from N = 256, rt_select.c): float64 check
# of the rule's tile at every head dim on 64's tiles (tests/gpu/short_causal_spec.lua: normal, odd, empty-row
# shapes); fa2_bench's A/B again (bench/specs/d64_causal_short.lua, N = 256 and 512, six rounds); the PyTorch GPU
# suites with the new library (FA2_NATIVE=require); the N = 256 and 512 causal d = 64 rows per call and queued
# against SDPA flash and cuDNN.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
S=tests/gpu/short_causal_spec.lua
run check 300 bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 200 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 200 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
for N in 256 512; do
  run bench_$N 200 bin/fa2_bench --spec bench/specs/d64_causal_short.lua --only bf16 --seqlen $N --rounds 6 --json $OUT/bench_$N.json
done
run native_build 150 python3 -m fa2gen._native
FA2_NATIVE=require run pytest_suites 330 python3 -m pytest -q -n 8 tests/gpu/test_torch_dropin.py \
  tests/gpu/test_head_dims.py tests/gpu/test_sinks.py tests/gpu/test_dropout.py tests/gpu/test_varlen.py
P="--seqlens 256,512 --head-dims 64 --reps 30 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
run rows_percall 150 python3 bench/sdpa_bench.py $P --json $OUT/rows_percall.json
run rows_queued 150 python3 bench/sdpa_bench.py $P --inner 5 --json $OUT/rows_queued.json
cd $OUT
python3 - <<'PY'
import glob, json, re
for path in sorted(glob.glob("bench_*.json"), key=lambda p: int(re.findall(r"\d+", p)[0])):
    rows = json.load(open(path))
    t = {r["variant"]: r["ms"] for r in rows}
    N = rows[0]["seqlen"]
    for mode in ("none", "robust_b2_e1em3", "balanced"):
        base = t[f"fwd_bf16_d64_causal_m64n128w4s2wg_{mode}"]
        cells = [f"{tile} {base / t[f'fwd_bf16_d64_causal_{tile}_{mode}']:.3f}x"
                 for tile in ("m64n64w4s2wg", "m64n64w4s3wg", "m128n128w12s2ws")]
        print(f"N {N:5d} {mode:16s} built-in {base:.4f} ms; " + ", ".join(cells))
for path in ("rows_percall.json", "rows_queued.json"):
    rows = json.load(open(path))["rows"]
    ms = {(r["backend"], r["causal"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: ms; cudnn / fa2gen, flash / fa2gen (> 1: fa2gen faster)")
    for (b, c, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][0])):
        if b.startswith("fa2gen"):
            u, f = ms[("cudnn", c, n)], ms[("flash", c, n)]
            print(f"{b:14s} N {n:4d} {'causal' if c else 'full  '} {t:6.3f} cudnn {u:6.3f} flash {f:6.3f} "
                  f"vs cudnn {u / t:5.2f} vs flash {f / t:5.2f}")
PY
grep -h "failure(s)$" check*.txt | tail -n 3
tail -n 2 pytest_suites.txt
tar czf call4_logs.tar.gz *.txt *.json && rm -f *.txt *.json
