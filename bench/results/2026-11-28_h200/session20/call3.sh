#!/bin/bash
# Session 20, call 3: softcap against float64 through PyTorch in both dtypes and every mode (balanced's l from the
# rounded P); varlen with d = 64 on the length rules' tiles: bench/varlen_bench.py with the library before the change
# (build/base_lib: varlen kept the wgmma tile) and after (lib/), equal lengths and a realistic mix at d = 64.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest 200 python3 -m pytest -q -rfEx -n 12 -p no:cacheprovider tests/gpu/test_torch_dropin.py -k "softcap_against_float64"
grep -E "passed|failed|FAILED|Error" $OUT/pytest.txt | tail -8 | cut -c1-240
FA2_LIB=build/base_lib/libfa2rt.so run varlen_base 240 python3 bench/varlen_bench.py --equal-dims 64 --mix-dims 64
FA2_LIB=lib/libfa2rt.so run varlen_test 300 python3 bench/varlen_bench.py --equal-dims 64,128 --mix-dims 64,128
for f in varlen_base varlen_test; do echo "== $f"; sed -n '/varlen with equal lengths/,$p' $OUT/$f.txt; done
