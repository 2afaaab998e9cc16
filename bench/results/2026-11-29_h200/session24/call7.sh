#!/bin/bash
# Session 24, call 7 (main as call 6): issue 21's N = 512 rows, host or kernel? Per call (sdpa_bench, one launch a timed
# region) fa2gen's native path reads 0.20-0.29 ms where `fa2 tune` times its kernels at 0.10-0.19 (call 6): the same
# rows queued (--inner 5: the host ahead of the GPU), and host_overhead at the d = 64 shape (B 32, H 32).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
B="flash,cudnn,fa2gen-none,fa2gen-robust"
run n512_percall 120 python3 bench/sdpa_bench.py --backward --head-dims 64,128 --seqlens 512 --backends $B --json $OUT/n512_percall.json
run n512_queued 120 python3 bench/sdpa_bench.py --backward --head-dims 64,128 --seqlens 512 --backends $B --inner 5 --json $OUT/n512_queued.json
for c in "" --causal; do run host_d64$c 60 python3 bench/host_overhead.py --shape 32,512,32,64 $c --native-ab; done
cd $OUT
for c in "" --causal; do echo "== 32,512,32,64 $c"; grep "host us" host_d64$c.txt; done
python3 - <<'PY'
import json
for name in ("n512_percall", "n512_queued"):
    rows = json.load(open(name + ".json"))["rows"]
    ms = {(r["backend"], r["pass_"], r["causal"], r["head_dim"]): r["ms"] for r in rows}
    print(f"== {name}: ms; flash / fa2gen, cudnn / fa2gen (> 1: fa2gen faster)")
    for (b, p, c, d), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][0])):
        if b.startswith("fa2gen"):
            f, u = ms[("flash", p, c, d)], ms[("cudnn", p, c, d)]
            print(f"{b:14s} {p} {'causal' if c else 'full  '} d{d:<3d} {t:6.3f} flash {f:6.3f} cudnn {u:6.3f} vs flash {f / t:5.2f} vs cudnn {u / t:5.2f}")
PY
tar czf call7_logs.tar.gz *.txt *.json && rm -f *.txt *.json
