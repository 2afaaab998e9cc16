#!/bin/bash
# Session 24, call 2 (main at 5bbe9c0, the machine of call 1): per-call rows through PyTorch with the native eager
# forward and with the Python path (FA2_NATIVE=0), SDPA flash and cuDNN in each run: d = 256 N = 1k and 2k (issue 19),
# N = 512 at d 64 and 128 (issue 21), forward and backward; the host time per call at d = 256 N = 1k causal.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
B="flash,cudnn,fa2gen-none,fa2gen-robust"
for r in 1 2; do
  for n in 1 0; do
    FA2_NATIVE=$n run d256_native${n}_$r 120 python3 bench/sdpa_bench.py --backward --head-dims 256 \
      --seqlens 1024,2048 --backends $B --json $OUT/d256_native${n}_$r.json
    FA2_NATIVE=$n run n512_native${n}_$r 120 python3 bench/sdpa_bench.py --backward --head-dims 64,128 \
      --seqlens 512 --backends $B --json $OUT/n512_native${n}_$r.json
  done
done
for mode in --grad --train; do
  run d256$mode 60 python3 bench/host_overhead.py --shape 16,1024,8,256 --causal --native-ab $mode
done
cd $OUT
for mode in --grad --train; do echo "== 16,1024,8,256 causal $mode"; grep "host us" d256$mode.txt; done
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("*.json")):
    rows = json.load(open(path))["rows"]
    ms = {(r["backend"], r["pass_"], r["causal"], r["head_dim"], r["seqlen"]): r["ms"] for r in rows}
    print(f"== {path[:-5]}: ms, and best of flash and cudnn / fa2gen (> 1: fa2gen faster)")
    for (b, p, c, d, n), t in sorted(ms.items(), key=lambda x: (x[0][1], x[0][2], x[0][3], x[0][4], x[0][0])):
        if b.startswith("fa2gen"):
            f, u = ms.get(("flash", p, c, d, n)), ms.get(("cudnn", p, c, d, n))
            print(f"{b:14s} {p} {'causal' if c else 'full  '} d{d:<3d} N{n:<5d} {t:7.3f}  flash {f:7.3f} cudnn {u:7.3f}"
                  f"  vs flash {f / t:5.2f} vs cudnn {u / t:5.2f}")
PY
tar czf call2_logs.tar.gz *.txt *.json && rm -f *.txt *.json
