#!/bin/bash
# Session 19, call 8 (issue 21): dQ's MMAs before the wait for dV's and dK's at d = 128 too (exp/bwd-defer-dq):
# float64 (d = 128 tile, normal and odd shapes), racecheck and synccheck (d 64 and 128 tiles, odd shapes), fa2_bench
# A/B against main's templates on the default tiles from 4k (d = 64 m64n128w8s3wg, d = 128 m64n128w8s2wg), 3 rounds.
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
S=build/s19
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-80) [$((SECONDS - t0)) s]"; }
export FA2_TEMPLATES=$S/tpl_defer
run check_d128 120 bin/fa2_gpu_tests --no-smoke --spec $S/bwd128_check.lua
run check_d128_odd 60 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec $S/bwd128_check.lua
for tool in racecheck synccheck; do
  run ${tool}_d64 150 compute-sanitizer --tool $tool --error-exitcode 9 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec $S/bwd64_check.lua
  run ${tool}_d128 150 compute-sanitizer --tool $tool --error-exitcode 9 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec $S/bwd128_check.lua
done
grep -h "FAIL\|ERROR SUMMARY" $OUT/check*.txt $OUT/racecheck*.txt $OUT/synccheck*.txt | sort | uniq -c | head -8 | cut -c1-200
unset FA2_TEMPLATES
for round in 1 2 3; do for v in main defer; do t0=$SECONDS
  FA2_TEMPLATES=$S/tpl_$v timeout 80 bin/fa2_bench --spec $S/bwd_ab.lua --json $OUT/ab_${v}_$round.json --reps 10 --rounds 2 > $OUT/ab_${v}_$round.txt 2>&1 || echo "$v $round rc=$?"
  echo "ab $v $round [$((SECONDS - t0)) s]"
done; done
OUT=$OUT python3 $S/ab.py ab main defer > $OUT/ab_table.txt; cat $OUT/ab_table.txt
rm -f $OUT/ab_*.json $OUT/ab_*_?.txt
