#!/bin/bash
# Session 27, call 6: main at eb58217 (the ws backward with K and V in registers at d = 64, call 2, and the masks out of
# the exponentials' loop, call 4). The float64 check of tests/gpu/ws_bwd_spec.lua (normal with the deterministic mode,
# odd, empty rows), memcheck over tests/gpu/ws_bwd_sanitize_spec.lua (racecheck ran on the same kernels in calls 2
# and 4), then issue 21's rows through PyTorch (sdpa_bench.py --backward, queued, SDPA flash and cuDNN in the same
# run): the shape table, N = 512 and the GPT-2 small shape, forward and backward.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
S=tests/gpu/ws_bwd_spec.lua
run check 150 bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 40 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 40 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
grep -h "FAIL" $OUT/check*.txt | head -5 | cut -c1-200
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck; do run san_$tool 100 $CS --tool $tool bin/fa2_gpu_tests --spec tests/gpu/ws_bwd_sanitize_spec.lua --no-smoke --odd-shapes; done
run native_build 60 python3 -m fa2gen._native
B="--backward --reps 10 --inner 5 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
run table 150 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 1024,2048,4096,8192,16384 --json $OUT/table.json
run n512 40 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 512 --json $OUT/n512.json
run gpt2 40 python3 bench/sdpa_bench.py $B --tokens 8192 --width 768 --head-dims 64 --seqlens 1024 --json $OUT/gpt2.json
cd $OUT
python3 - <<'PY'
import json
for path in ("table.json", "n512.json", "gpt2.json"):
    try: rows = json.load(open(path))["rows"]
    except Exception as e: print(path, e); continue
    ms = {(r["backend"], r["pass_"], r["head_dim"], r["causal"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: cudnn / fa2gen and flash / fa2gen (> 1: fa2gen faster), none (robust)")
    for (b, p, d, c, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
        if b == "fa2gen-none":
            u, f, r = ms[("cudnn", p, d, c, n)], ms[("flash", p, d, c, n)], ms.get(("fa2gen-robust", p, d, c, n), float("nan"))
            print(f"{p} d{d:<3d} {'causal' if c else 'full  '} N {n:5d}  vs cudnn {u / t:5.2f} ({u / r:5.2f})  vs flash {f / t:5.2f} ({f / r:5.2f})")
PY
tar czf call6_logs.tar.gz *.txt *.json && rm -f *.txt *.json
