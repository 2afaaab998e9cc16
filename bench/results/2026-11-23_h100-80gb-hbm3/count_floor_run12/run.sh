#!/bin/bash
# Session 6 run 2: the floor of a per-score count. `robust` slots hold probes:
# pA = none + one LEA.HI per score, pB = none + packed bf16x2 compare (HSET2) + IADD3 per 4 scores.
set -u
R=$OUT/r; mkdir -p $R
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/device.txt
date -u +%FT%TZ >> $R/device.txt
t0=$(date +%s)
for i in 1 2; do
  for ab in pA pB; do
    timeout 200 bin/fa2_bench --src build/ab/$ab --reps 5 --rounds 10 --json $R/${ab}_$i.json > $R/${ab}_$i.txt 2>&1
    echo "bench $ab $i rc=$? $(( $(date +%s)-t0 ))s"
  done
done
for ab in pA pB; do python3 bench/mode_cost.py $R/${ab}_*.json > $R/mode_cost_$ab.txt; done
tar czf $OUT/run2.tgz -C $OUT r
for ab in pA pB; do echo "== $ab (robust = probe)"; cat $R/mode_cost_$ab.txt; done
