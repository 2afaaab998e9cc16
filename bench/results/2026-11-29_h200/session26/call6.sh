#!/bin/bash
# Session 26, call 6: issue 21's rows through PyTorch with the ws backward as the default (main at 7220b6b): sdpa_bench
# --backward, queued (--inner 5), SDPA flash and cuDNN in the same runs: the shape table (B*N = 16k, H*d = 2048, d 64 and
# 128, N = 1k..16k, causal and not), the N = 512 rows and the GPT-2 small shape (B 8, N 1024, H 12, d 64).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 120 python3 -m fa2gen._native
B="--backward --reps 10 --inner 5 --backends flash,cudnn,fa2gen-none,fa2gen-robust"
run table 300 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 1024,2048,4096,8192,16384 --json $OUT/table.json
run n512 60 python3 bench/sdpa_bench.py $B --head-dims 64,128 --seqlens 512 --json $OUT/n512.json
run gpt2 60 python3 bench/sdpa_bench.py $B --tokens 8192 --width 768 --head-dims 64 --seqlens 1024 --json $OUT/gpt2.json
cd $OUT
python3 - <<'PY'
import glob, json
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
