#!/bin/bash
# Session 25, call 3: d = 64 causal forward below N = 1k on Hopper (bench/specs/d64_causal_short.lua): the float64
# check of the spec's 24 variants (normal, odd and empty-row shapes), then fa2_bench at N = 256, 512 and 1024 over its
# bf16 variants (built-in m64n128w4s2wg, the tuner's m64n64w4s2wg, m64n64w4s3wg, the persistent ws m128), six
# alternating rounds; the summary: each tile's time over the built-in's per mode and N.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
S=bench/specs/d64_causal_short.lua
run check 300 bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 200 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 200 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
for N in 256 512 1024; do run bench_$N 200 bin/fa2_bench --spec $S --only bf16 --seqlen $N --rounds 6 --json $OUT/bench_$N.json; done
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
PY
grep -h -i "fail\|passed\|error" check*.txt | tail -n 6
tar czf call3_logs.tar.gz *.txt *.json && rm -f *.txt *.json
