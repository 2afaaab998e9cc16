#!/bin/bash
# Session 22, call 1: ea2b7ea's varlen ws call sites on a GPU (test_varlen.py); fa2 bias --gpu at the masked head
# dims (40, 120, 200, fixed and varlen) and d 160 / 224 at 256 heads; host time per call of the varlen path against
# the fixed one (host_overhead.py --varlen); varlen_bench's equal lengths at d = 64.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run pytest_varlen 300 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py
run bias_padded 240 bin/fa2 bias --gpu --head-dims 40,120,200 -j 16
run bias_padded_varlen 240 bin/fa2 bias --gpu --varlen --head-dims 40,120,200 -j 16
run bias_160_224 240 bin/fa2 bias --gpu --head-dims 160,224 -j 16
for shape in 16,1024,16,128 8,2048,16,128 8,2048,32,64 4,4096,32,64; do
  run host_${shape//,/_} 60 python3 bench/host_overhead.py --varlen --causal --shape $shape
  run host_train_${shape//,/_} 60 python3 bench/host_overhead.py --varlen --causal --train --shape $shape
done
run varlen_equal 200 python3 bench/varlen_bench.py --skip-mix
for f in $OUT/host_*.txt; do echo "== $(basename $f)"; grep -E "shape|fa2gen|sdpa" $f; done
grep -E "max \|bias\||robust" $OUT/bias_*.txt | head -30
tail -n 30 $OUT/varlen_equal.txt
