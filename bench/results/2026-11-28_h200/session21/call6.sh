#!/bin/bash
# Session 21, call 6: the varlen ws hand-over alone (call 5's TMA store of O reverted): the d = 128 mix, the library
# before (build/base_lib, e2c2014) and after, alternating three times.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for i in 1 2 3; do
  FA2_LIB=build/base_lib/libfa2rt.so run mix_base$i 40 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
  FA2_LIB=lib/libfa2rt.so run mix_test$i 40 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
done
grep -H "fa2gen varlen\|torch varlen" $OUT/mix_*.txt
