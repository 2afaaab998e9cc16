#!/bin/bash
# Session 21, call 5: the varlen ws forward's O by TMA for a warpgroup's rows inside the sequence (step 2, with
# call 4's hand-over): test_varlen.py, then varlen_bench.py's equal lengths (d 64 and 128, then d 64 again) and the
# d = 128 mix with the library before both steps (build/base_lib, e2c2014) and after, alternating.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest 100 python3 -m pytest -q -rfEx -n 14 -p no:cacheprovider tests/gpu/test_varlen.py
grep -E "passed|failed|FAILED|XPASS|Error" $OUT/pytest.txt | tail -8 | cut -c1-240
FA2_LIB=build/base_lib/libfa2rt.so run equal_base1 70 python3 bench/varlen_bench.py --skip-mix --equal-dims 64,128
FA2_LIB=lib/libfa2rt.so run equal_test1 70 python3 bench/varlen_bench.py --skip-mix --equal-dims 64,128
FA2_LIB=build/base_lib/libfa2rt.so run equal_base2 45 python3 bench/varlen_bench.py --skip-mix --equal-dims 64
FA2_LIB=lib/libfa2rt.so run equal_test2 45 python3 bench/varlen_bench.py --skip-mix --equal-dims 64
FA2_LIB=build/base_lib/libfa2rt.so run mix_base 40 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
FA2_LIB=lib/libfa2rt.so run mix_test 40 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
for f in $OUT/equal_*.txt; do echo "== $(basename $f)"; grep -E "^ *(64|128) .* fwd " $f | head -16; done
grep -H "fa2gen varlen" $OUT/mix_*.txt
