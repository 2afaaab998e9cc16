#!/bin/bash
# Session 21, call 4: (a) d = 56 on the tiles of d = 64's length rules (ws forwards, the two-warpgroup backward)
# and the fp16 d = 200 causal backward call 3 did not reach, against float64; (b) the varlen ws forward's
# hand-over with the sequence in the item's slot (consumers read no cu_seqlens): test_varlen.py, then
# bench/varlen_bench.py's equal lengths at d = 64 (twice) and the mix at d = 128 with the library before (build/base_lib, e2c2014)
# and after, alternating.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run check 100 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/padded_ws_spec.lua
grep -h "FAIL\|differ from\|error" $OUT/check.txt | head -8 | cut -c1-220
FA2_LIB=lib/libfa2rt.so run pytest 120 python3 -m pytest -q -rfEx -n 14 -p no:cacheprovider tests/gpu/test_varlen.py
grep -E "passed|failed|FAILED|XPASS|Error" $OUT/pytest.txt | tail -8 | cut -c1-240
for i in 1 2; do
  FA2_LIB=build/base_lib/libfa2rt.so run equal_base$i 50 python3 bench/varlen_bench.py --skip-mix --equal-dims 64
  FA2_LIB=lib/libfa2rt.so run equal_test$i 50 python3 bench/varlen_bench.py --skip-mix --equal-dims 64
done
FA2_LIB=build/base_lib/libfa2rt.so run mix_base 50 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
FA2_LIB=lib/libfa2rt.so run mix_test 50 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
for f in $OUT/equal_*.txt; do echo "== $(basename $f)"; grep -E "^ *64 " $f | head -16; done
grep -H "fa2gen varlen" $OUT/mix_*.txt
