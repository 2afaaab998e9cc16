#!/bin/bash
# Session 19, call 1: mode balanced (issue 22). float64 + O's bits against the lab's rounding of the kernel's
# fp32 O (tests/gpu/balanced_spec.lua: normal, odd and empty-row shapes); cost against none (fa2_bench,
# bench/specs/balanced_cost.lua, three rounds); fa2 bias --gpu (64 heads, d 64 and 128, bf16) against the lab.
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
FINAL=$OUT; export OUT=/tmp/raw1; mkdir -p $OUT
trap 'cd $OUT && tar czf "$FINAL/all.tgz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt"; cat $OUT/device.txt
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-100) [$((SECONDS - t0)) s]"; }
run check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/balanced_spec.lua
run check_odd 90 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/balanced_spec.lua
run check_empty 60 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/balanced_spec.lua
grep -h "FAIL\|differ from" $OUT/check*.txt | head -8 | cut -c1-220
for round in 1 2 3; do run bench_$round 90 bin/fa2_bench --spec bench/specs/balanced_cost.lua --json $OUT/cost_$round.json --reps 10 --rounds 2; done
python3 bench/mode_cost.py $OUT/cost_*.json | tee $OUT/mode_cost.txt
run bias 150 bin/fa2 bias --gpu --heads 64 --head-dims 64,128
grep -E "^(random|repeat|same_tile|cross_tile|sink|pos_v|softcap|alibi|window|sink_logit) .*(none|balanced) " $OUT/bias.txt | awk '{print $1,$2,$3,$4,$5,$7,$10}' | paste - - | head -30
