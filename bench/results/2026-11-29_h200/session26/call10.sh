#!/bin/bash
# Session 26, call 10: main with d = 128's dQ by the block's dS (call 9's tC, merged: templates/bwd_ws.cuh.tpl
# shared_ds) and d = 64's as before. The float64 check of tests/gpu/ws_bwd_spec.lua (normal with the deterministic
# mode, odd, empty rows), compute-sanitizer racecheck, synccheck and memcheck over tests/gpu/ws_bwd_sanitize_spec.lua
# (d 64 and 128, odd shapes), then issue 21's backward rows through PyTorch (sdpa_bench.py --backward, queued, SDPA
# flash and cuDNN in the same run): the shape table, N = 512 and the GPT-2 small shape.
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
for tool in racecheck synccheck memcheck; do run san_$tool 100 $CS --tool $tool bin/fa2_gpu_tests --spec tests/gpu/ws_bwd_sanitize_spec.lua --no-smoke --odd-shapes; done
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
    print(f"== {path[:-5]} backward: cudnn / fa2gen and flash / fa2gen (> 1: fa2gen faster), none (robust)")
    for (b, p, d, c, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
        if b == "fa2gen-none" and p == "bwd":
            u, f, r = ms[("cudnn", p, d, c, n)], ms[("flash", p, d, c, n)], ms.get(("fa2gen-robust", p, d, c, n), float("nan"))
            print(f"d{d:<3d} {'causal' if c else 'full  '} N {n:5d}  vs cudnn {u / t:5.2f} ({u / r:5.2f})  vs flash {f / t:5.2f} ({f / r:5.2f})")
PY
tar czf call10_logs.tar.gz *.txt *.json && rm -f *.txt *.json
