#!/bin/bash
# Session 21, call 2: head dims that are not kernel head dims, on the tiles of the next one with the
# columns past d masked: float64 checks in C (tests/gpu/padded_dims_spec.lua, normal and odd shapes)
# and through PyTorch (every multiple of 8, varlen at 8/40/120/200), the masks' cost (fa2_bench,
# bench/specs/padded_cost.lua) and masked against the Python layer's padding (bench/padded_dims_bench.py).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run check 200 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/padded_dims_spec.lua
run check_odd 80 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/padded_dims_spec.lua
grep -h "FAIL\|differ from\|error" $OUT/check*.txt | head -8 | cut -c1-220
export PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
run pytest 150 python3 -m pytest -q -rfEx -n 14 -p no:cacheprovider tests/gpu/test_head_dims.py tests/gpu/test_varlen.py \
  -k "test_head_dims or d8- or d40- or d120- or d200-"
grep -E "passed|failed|FAILED|XPASS|Error" $OUT/pytest.txt | tail -12 | cut -c1-240
run cost 40 bin/fa2_bench --spec bench/specs/padded_cost.lua --reps 5 --rounds 2 --seqlen 4096
grep -v "^fa2_bench" $OUT/cost.txt | tail -25 | cut -c1-100
run padded 130 python3 bench/padded_dims_bench.py --json $OUT/padded.json
tail -62 $OUT/padded.txt
