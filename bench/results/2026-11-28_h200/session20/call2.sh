#!/bin/bash
# Session 20, call 2: balanced with softcap summing l from the rounded P (float64 + bits against the lab, fa2 bias
# --gpu's softcap rows, cost against none+softcap), and the varlen float64 test over every kernel head dim and mode
# with d = 64 varlen taking the length rules' tiles (pytest), the equal-length bit test.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run check 100 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/balanced_softcap_spec.lua
run check_odd 60 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/balanced_softcap_spec.lua
grep -h "FAIL\|differ from" $OUT/check*.txt | head -8 | cut -c1-220
for round in 1 2 3; do run bench_$round 60 bin/fa2_bench --spec bench/specs/balanced_softcap_cost.lua --json /tmp/cost_$round.json --reps 10 --rounds 2; done
python3 bench/mode_cost.py /tmp/cost_*.json | tee $OUT/mode_cost.txt
export PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
run pytest 300 python3 -m pytest -q -rfEx -n 12 -p no:cacheprovider tests/gpu/test_varlen.py tests/gpu/test_torch_dropin.py -k "varlen_against_float64 or equal_lengths or (balanced and softcap)"
grep -E "passed|failed|FAILED|XPASS|xfail|Error" $OUT/pytest.txt | tail -20 | cut -c1-240
run bias 150 bin/fa2 bias --gpu --heads 64 --head-dims 64,128
grep -E "^softcap" $OUT/bias.txt | awk '{print $1,$2,$3,$4,$5,$7}'
