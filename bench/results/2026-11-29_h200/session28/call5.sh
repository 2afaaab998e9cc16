#!/bin/bash
# Session 28, call 5: a persistent ws backward (branch exp/ws-bwd-persistent, binaries in build/s28/wp): a grid of one
# block an SM walking items of two key blocks (j and nb - 1 - j, so causal items cost alike), the producer loading
# each block's K and V once the MMA warpgroups are done with the last block's, while they store its dK and dV.
# Prediction: the ~4 us a block of ends that cuDNN's kernel does not pay (call 1) half hidden: +4-8 % at N = 1k,
# +1-3 % from 4k. float64 over tests/gpu/ws_bwd_spec.lua (normal with the deterministic mode, odd, empty rows),
# memcheck, racecheck and synccheck over the sanitize spec's odd shapes, then fa2_bench alternating main's binary
# (bin/, softcap branch; the plain sources are the same) and the branch's over d 64 and 128 (ratio test / base
# time: < 1 is the branch faster).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
WP=build/s28/wp WD="env FA2_WATCHDOG=4000000000" # (a stuck pipeline traps in 2 s instead of hanging)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-90) [$((SECONDS - t0)) s]"; }
run check 120 $WD $WP/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_bwd_spec.lua
run check_odd 60 $WD $WP/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_bwd_spec.lua
run check_empty 60 $WD $WP/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/ws_bwd_spec.lua
grep -c "FAIL" $OUT/check.txt $OUT/check_odd.txt $OUT/check_empty.txt
for tool in memcheck racecheck synccheck; do
  run $tool 80 compute-sanitizer --tool $tool --error-exitcode 9 $WP/fa2_gpu_tests --no-smoke --odd-shapes \
    --spec tests/gpu/ws_bwd_sanitize_spec.lua
done
for i in 1 2; do
  run bench_base_$i 70 bin/fa2_bench --spec build/s28/bwd_bench.lua --reps 10 --rounds 2 --json $OUT/base_$i.json
  run bench_test_$i 70 $WP/fa2_bench --spec build/s28/bwd_bench.lua --reps 10 --rounds 2 --json $OUT/test_$i.json
done
python3 bench/ab_ratio.py --title "persistent ws backward / main" --base $OUT/base_*.json --test $OUT/test_*.json \
  | tee $OUT/ab_ratio.txt
cd $OUT && tar czf call5_logs.tar.gz *.txt *.json && rm -f *.txt *.json
