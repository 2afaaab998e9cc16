#!/bin/bash
# Session 20, call 1: a8b1365's balanced rounding (t computed once an element) on the GPU: float64 + bits against
# the lab (normal, odd, empty rows), and its cost against none (fa2_bench, three rounds).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log -1 --format=%h 2>/dev/null
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/balanced_spec.lua
run check_odd 90 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/balanced_spec.lua
run check_empty 60 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/balanced_spec.lua
grep -h "FAIL\|differ from" $OUT/check*.txt | head -8 | cut -c1-220
for round in 1 2 3; do run bench_$round 90 bin/fa2_bench --spec bench/specs/balanced_cost.lua --json $OUT/cost_$round.json --reps 10 --rounds 2; done
python3 bench/mode_cost.py $OUT/cost_*.json | tee $OUT/mode_cost.txt
