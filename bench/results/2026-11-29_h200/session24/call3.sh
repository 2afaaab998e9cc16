#!/bin/bash
# Session 24, call 3 (main at 5bbe9c0, the machine of call 2): the shape tables per call through PyTorch with the native
# eager forward, SDPA flash and cuDNN in each run: d = 256 at N = 1k..16k (issue 19), d 64 and 128 at N = 1k..16k
# (issue 21's table), forward and backward, none and robust.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
B="flash,cudnn,fa2gen-none,fa2gen-robust"
run d256 200 python3 bench/sdpa_bench.py --backward --head-dims 256 --seqlens 1024,2048,4096,8192,16384 \
  --backends $B --json $OUT/d256.json
run d64_d128 300 python3 bench/sdpa_bench.py --backward --head-dims 64,128 --seqlens 1024,2048,4096,8192,16384 \
  --backends $B --json $OUT/d64_d128.json
cd $OUT
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("*.json")):
    rows = json.load(open(path))["rows"]
    ms = {(r["backend"], r["pass_"], r["causal"], r["head_dim"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: ms; flash / fa2gen and cudnn / fa2gen (> 1: fa2gen faster)")
    for (b, p, c, d, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
        if b.startswith("fa2gen"):
            f, u = ms.get(("flash", p, c, d, n)), ms.get(("cudnn", p, c, d, n))
            print(f"{b:14s} {p} {'causal' if c else 'full  '} d{d:<3d} N{n:<5d} {t:7.3f}  flash {f:7.3f} cudnn {u:7.3f}"
                  f"  vs flash {f / t:5.2f} vs cudnn {u / t:5.2f}")
PY
tar czf call3_logs.tar.gz *.txt *.json && rm -f *.txt *.json
