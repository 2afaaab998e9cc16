#!/bin/bash
# Session 29, call 4: the forward past d = 128 on warp-specialized tiles (never timed before). Float64 checks of
# tests/gpu/ws_wide_spec.lua (d 192: 64 and 80 keys a tile; d 256: 48, persistent, and 64; both dtypes, none and
# robust; normal, odd and empty-row shapes), memcheck and racecheck of the d = 256 tiles on odd shapes, fa2_bench of
# bench/specs/ws_wide.lua (the ws tiles against today's wgmma tiles), and SDPA flash and cuDNN at the same shapes.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Error:\|Hazard" $OUT/$name.txt | cut -c1-60) $(tail -n 1 $OUT/$name.txt | cut -c1-100) [$((SECONDS - t0)) s]"; }
S=tests/gpu/ws_wide_spec.lua
run check 150 bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 60 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 60 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
grep -h "FAIL" $OUT/check*.txt | head -5 | cut -c1-200
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  run san_$tool 70 $CS --tool $tool --error-exitcode 9 bin/fa2_gpu_tests --spec tests/gpu/ws_wide_sanitize_spec.lua --no-smoke --odd-shapes
done
run bench 150 bin/fa2_bench --spec bench/specs/ws_wide.lua --json $OUT/bench.json --reps 10 --rounds 3
run sdpa 90 python3 bench/sdpa_bench.py --reps 10 --inner 5 --backends flash,cudnn --head-dims 192,256 --json $OUT/sdpa.json
cd $OUT
python3 - <<'PY' | tee summary.txt
import json, collections
b = json.load(open("bench.json"))
try: s = json.load(open("sdpa.json"))["rows"]
except Exception: s = []
ref = {(r["backend"], r["head_dim"], r["causal"], r["seqlen"]): r["tflops"] for r in s if r["pass_"] == "fwd"}
tf = collections.defaultdict(dict)
for r in b:
    mode = "none" if r["variant"].endswith("_none") else "robust"
    tf[(r["head_dim"], r["causal"], mode)].setdefault(r["seqlen"], {})[r["variant"].split("_m", 1)[1].split("_")[0]] = r["tflops"]
print("forward TFLOP/s (fa2_bench; cudnn, flash: sdpa_bench queued, same shapes)")
for (d, c, mode), by_n in sorted(tf.items()):
    for n, t in sorted(by_n.items()):
        print(f"d{d} {'causal' if c else 'full  '} {mode:6s} N {n:5d}  " + "  ".join(f"{k} {v:6.1f}" for k, v in sorted(t.items()))
              + f"  | cudnn {ref.get(('cudnn', d, c, n), 0):6.1f} flash {ref.get(('flash', d, c, n), 0):6.1f}")
PY
tar czf call4_logs.tar.gz *.txt *.json && rm -f *.json check*.txt san_*.txt bench.txt sdpa.txt
