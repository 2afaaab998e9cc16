#!/bin/bash
# Session 23, call 4 (main at 65a9cd0: varlen's TMA stores and the eager Python path): issue 19's tables with the
# final library and package. Varlen with equal lengths against the fixed-length call (forward and forward +
# backward, d 64 and 128, N 1k-16k, two rounds); d = 256 against SDPA flash and cuDNN on every row N >= 1k, per
# call (the host's time before the launch counts) and queued (five calls a timed region).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for i in 1 2; do run equal$i 150 python3 bench/varlen_bench.py --skip-mix; done
run d256_percall 200 python3 bench/sdpa_bench.py --backward --head-dims 256 --seqlens 1024,2048,4096,8192,16384 \
  --backends flash,cudnn,fa2gen-none,fa2gen-robust --json $OUT/d256_percall.json
run d256_queued 200 python3 bench/sdpa_bench.py --backward --head-dims 256 --seqlens 1024,2048,4096,8192,16384 \
  --backends flash,cudnn,fa2gen-none,fa2gen-robust --inner 5 --json $OUT/d256_queued.json
cd $OUT
for i in 1 2; do echo "== equal$i"; grep -E "True|False" equal$i.txt; done
python3 - <<'PY'
import json
for name in ("d256_percall", "d256_queued"):
    rows = json.load(open(name + ".json"))["rows"]
    ms = {(r["backend"], r["pass_"], r["causal"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {name}: fa2gen time ratio (flash / fa2gen, cudnn / fa2gen; > 1: fa2gen faster)")
    for (b, p, c, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][0])):
        if b.startswith("fa2gen"):
            f, d = ms.get(("flash", p, c, n)), ms.get(("cudnn", p, c, n))
            print(f"{b:14s} {p} {'causal' if c else 'full  '} N{n:<6d} {t:7.3f} ms  vs flash {f / t:5.2f}  vs cudnn {d / t:5.2f}")
PY
tar czf call4_logs.tar.gz *.txt *.json && rm -f *.txt *.json
