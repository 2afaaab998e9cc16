#!/bin/bash
# Session 21, call 3: call 2 again after the harnesses' fixes (fa2_gpu_tests' float64 reference modules were
# cached per head_dim / 32, so 56 used 40's and 120 used 104's; its backward and fa2_bench sized dQ's accumulator
# and the row kernels' grid by d, not the tiles' head dim); without the PyTorch tests (call 2: 190 passed).
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
run cost 60 bin/fa2_bench --spec bench/specs/padded_cost.lua --reps 5 --rounds 2 --seqlen 4096
grep -v "^fa2_bench" $OUT/cost.txt | tail -25 | cut -c1-100
run padded 200 python3 bench/padded_dims_bench.py --json $OUT/padded.json
tail -40 $OUT/padded.txt
