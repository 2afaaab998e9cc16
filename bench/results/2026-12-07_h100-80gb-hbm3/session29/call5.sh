#!/bin/bash
# Session 29, call 5: the ws forward at d 192 and 256 as sm_90's default (gen/defaults.lua TILES_SM90_WS; a window at
# d = 256 keeps the wgmma tile). Through PyTorch against float64: every head dim's grid (test_head_dims.py), the
# backward-modifier tests at d 160-256 (their forwards), varlen, dropout and sinks at those dims; memcheck and
# racecheck of tests/gpu/ws_wide_sanitize_spec.lua (odd shapes); then the d = 192 and 256 rows through PyTorch
# against SDPA flash and cuDNN (sdpa_bench.py --backward, queued).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Error:\|Hazard" $OUT/$name.txt | cut -c1-60) $(tail -n 1 $OUT/$name.txt | cut -c1-100) [$((SECONDS - t0)) s]"; }
run native_build 90 python3 -m fa2gen._native
K="d160 or d192 or d200 or d224 or d256"
run wide_checks 240 python3 -m pytest -q -rfE -n 8 tests/gpu/test_head_dims.py tests/gpu/test_torch_dropin.py \
  tests/gpu/test_varlen.py tests/gpu/test_dropout.py tests/gpu/test_sinks.py -k "test_head_dim or test_every_head_dim or (($K) and (backward_modifiers or varlen or dropout or sinks))"
grep -h "FAILED\|ERROR" $OUT/wide_checks.txt | head -10
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  run san_$tool 60 $CS --tool $tool --error-exitcode 9 bin/fa2_gpu_tests --spec tests/gpu/ws_wide_sanitize_spec.lua --no-smoke --odd-shapes
done
run sdpa 150 python3 bench/sdpa_bench.py --backward --reps 10 --inner 5 --backends flash,cudnn,fa2gen-none,fa2gen-robust \
  --head-dims 192,256 --seqlens 512,1024,2048,4096,8192,16384 --json $OUT/sdpa.json
cd $OUT
python3 - <<'PY' | tee summary.txt
import json
rows = json.load(open("sdpa.json"))["rows"]
ms = {(r["backend"], r["pass_"], r["head_dim"], r["causal"], r["seqlen"]): (r["ms"], r["tflops"]) for r in rows}
print("cudnn / fa2gen and flash / fa2gen (> 1: fa2gen faster), none (robust); fa2gen none TFLOP/s")
for (b, p, d, c, n), (t, tf) in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
    if b == "fa2gen-none":
        u, f, r = ms[("cudnn", p, d, c, n)][0], ms[("flash", p, d, c, n)][0], ms[("fa2gen-robust", p, d, c, n)][0]
        print(f"{p} d{d:<3d} {'causal' if c else 'full  '} N {n:5d}  vs cudnn {u / t:5.2f} ({u / r:5.2f})  vs flash {f / t:5.2f} ({f / r:5.2f})  {tf}")
PY
tar czf call5_logs.tar.gz *.txt *.json && rm -f *.json native_build.txt wide_checks.txt san_*.txt sdpa.txt
