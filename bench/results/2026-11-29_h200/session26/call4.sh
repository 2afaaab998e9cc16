#!/bin/bash
# Session 26, call 4 (call 3 again with LSE and delta by TMA from fa2_bwd_pre's padded copies: call 3 ran them by cp.async,
# whose mbarrier hand-over racecheck does not follow, and with two dQ warps): the warp-specialized
# backward (templates/bwd_ws.cuh.tpl). The float64 check of
# tests/gpu/ws_bwd_spec.lua (normal shapes with the deterministic mode, odd shapes, empty rows), then fa2_bench's
# backward over bench/specs/bwd_ws.lua (the built-in wgmma tiles and ws m64n128w12s2 at d 64 and 128, causal and not),
# two calls of two alternating rounds; the summary: ws over the built-in per N.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
S=tests/gpu/ws_bwd_spec.lua
run check 200 bin/fa2_gpu_tests --spec $S --no-smoke
grep -h "FAIL\|differ\|error\|rror" $OUT/check.txt | head -5 | cut -c1-200
run check_odd 120 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 60 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in racecheck synccheck memcheck; do run san_$tool 140 $CS --tool $tool bin/fa2_gpu_tests --spec tests/gpu/ws_bwd_sanitize_spec.lua --no-smoke --odd-shapes; done
grep -h "ERROR SUMMARY\|Race\|hazard" $OUT/san_*.txt | sort | uniq -c | head -8
for r in 1 2; do run bench_$r 150 bin/fa2_bench --spec bench/specs/bwd_ws.lua --rounds 2 --json $OUT/bench_$r.json; done
cd $OUT
python3 - <<'PY'
import glob, json, collections
t = collections.defaultdict(list)
for path in sorted(glob.glob("bench_*.json")):
    for r in json.load(open(path)):
        t[(r["variant"], r["seqlen"])].append(r["ms"])
for d in (64, 128):
    for causal in ("", "_causal"):
        base = {64: "m64n64w4s3wg", 128: "m64n128w8s2wg"}[d]
        cells = []
        for N in sorted({k[1] for k in t}):
            b, w = t.get((f"bwd_bf16_d{d}{causal}_{base}_none", N)), t.get((f"bwd_bf16_d{d}{causal}_m64n128w12s2ws_none", N))
            if b and w: cells.append(f"{N}: " + "/".join(f"{x / y:.3f}" for x, y in zip(b, w)))
        print(f"d {d}{causal or ' non-causal'} ws over built-in  " + "  ".join(cells))
PY
grep -h -i "fail\|passed\|error" check*.txt | tail -n 6
tar czf call4_logs.tar.gz *.txt *.json && rm -f *.txt *.json
