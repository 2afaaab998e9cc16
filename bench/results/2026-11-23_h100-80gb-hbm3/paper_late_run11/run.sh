#!/bin/bash
# Session 6 run 1: paper's late tie count (build/ab/new) against HEAD (build/ab/old).
set -u
R=$OUT/r; mkdir -p $R
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/device.txt
date -u +%FT%TZ >> $R/device.txt
t0=$(date +%s)
timeout 240 bin/fa2_gpu_tests --src build/ab/new --no-smoke > $R/check_new.txt 2>&1; echo "check rc=$? $(( $(date +%s)-t0 ))s"
tail -2 $R/check_new.txt
for i in 1 2; do
  for ab in old new; do
    timeout 200 bin/fa2_bench --src build/ab/$ab --reps 5 --rounds 8 --json $R/${ab}_$i.json > $R/${ab}_$i.txt 2>&1
    echo "bench $ab $i rc=$? $(( $(date +%s)-t0 ))s"
  done
done
python3 bench/mode_cost.py $R/old_*.json > $R/mode_cost_old.txt
python3 bench/mode_cost.py $R/new_*.json > $R/mode_cost_new.txt
timeout 200 bin/fa2 bias --gpu > $R/bias_gpu.txt 2>&1; echo "bias rc=$? $(( $(date +%s)-t0 ))s"
tar czf $OUT/run1.tgz -C $OUT r
echo "== old"; cat $R/mode_cost_old.txt; echo "== new"; cat $R/mode_cost_new.txt
grep -E "paper" $R/bias_gpu.txt | head -40
