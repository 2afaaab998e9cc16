#!/bin/bash
# Session 29, call 3: issue 21's rows through PyTorch on the H100, main at the session's kernel commit (fc86019's kernels;
# sdpa_bench.py --backward, queued: 5 calls a timed region, SDPA flash and cuDNN in the same run): the shape table
# (d 64, 128; N 1k-16k; B*N = 16k, H*d = 2048), N = 512, the GPT-2 small shape, d = 256 (N 1k-8k).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 90 python3 -m fa2gen._native
B="--backward --reps 10 --inner 5 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
run table 200 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 1024,2048,4096,8192,16384 --json $OUT/table.json
run n512 60 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 512 --json $OUT/n512.json
run gpt2 60 python3 bench/sdpa_bench.py $B --tokens 8192 --width 768 --head-dims 64 --seqlens 1024 --json $OUT/gpt2.json
run d256 120 python3 bench/sdpa_bench.py $B --head-dims 256 --seqlens 1024,2048,4096,8192 --json $OUT/d256.json
cd $OUT
python3 - <<'PY' | tee summary.txt
import json
for path in ("table.json", "n512.json", "gpt2.json", "d256.json"):
    try: rows = json.load(open(path))["rows"]
    except Exception as e: print(path, e); continue
    ms = {(r["backend"], r["pass_"], r["head_dim"], r["causal"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: cudnn / fa2gen and flash / fa2gen (> 1: fa2gen faster), none (robust); fa2gen none TFLOP/s")
    for (b, p, d, c, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
        if b == "fa2gen-none":
            u, f, r = ms[("cudnn", p, d, c, n)], ms[("flash", p, d, c, n)], ms.get(("fa2gen-robust", p, d, c, n), float("nan"))
            tf = [x.get("tflops") for x in rows if (x["backend"], x["pass_"], x["head_dim"], x["causal"], x["seqlen"]) == (b, p, d, c, n)][0]
            print(f"{p} d{d:<3d} {'causal' if c else 'full  '} N {n:5d}  vs cudnn {u / t:5.2f} ({u / r:5.2f})  vs flash {f / t:5.2f} ({f / r:5.2f})  {tf}")
PY
tar czf call3_logs.tar.gz *.txt *.json && rm -f table.json n512.json gpt2.json d256.json native_build.txt table.txt n512.txt gpt2.txt d256.txt
