#!/bin/bash
# Session 25, call 1: the native autograd node's failure on autograd's CUDA device thread (Fa2Error, the
# new test of test_torch_dropin.py), and where a single call's time goes at issue 21's small rows
# (host_overhead.py --profile timeline: single calls on an idle GPU under torch.profiler, fa2gen none and
# robust, SDPA flash and cuDNN): N = 512 d 64 and d 128 of the shape table and the GPT-2 small shape,
# with sdpa_bench's per-call and queued times of the same rows beside them.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 150 python3 -m fa2gen._native
FA2_NATIVE=require run pytest_node 200 python3 -m pytest -q tests/gpu/test_torch_dropin.py -k "failed_backward or cuda_graph or opcheck"
for shape in 32,512,32,64 32,512,16,128 8,1024,12,64; do
  for c in "" --causal; do
    run timeline_${shape//,/x}$c 150 python3 bench/host_overhead.py --shape $shape $c --profile timeline --calls 40
  done
done
S="--seqlens 512 --head-dims 64,128 --reps 30 --backends flash,cudnn,fa2gen-none"
run n512_percall 150 python3 bench/sdpa_bench.py $S --json $OUT/n512_percall.json
run n512_queued 150 python3 bench/sdpa_bench.py $S --inner 5 --json $OUT/n512_queued.json
cd $OUT
tail -n 2 pytest_node.txt
for f in timeline_*.txt; do echo "== $f"; grep -A2 "=====" $f | grep -v "^--" | cut -c1-240; done
grep -h "d64 \|d128" n512_percall.txt n512_queued.txt
tar czf call1_logs.tar.gz *.txt *.json && rm -f *.txt *.json
