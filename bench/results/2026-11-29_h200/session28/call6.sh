#!/bin/bash
# Session 28, call 6: call 5's timing ran the branch's fa2_bench on 13 blocks (the test harness's launch, tests/gpu's
# gpu_launch_bwd, had the check's grid); now one block an SM as the runtime's (the check keeps 13 blocks for its
# atomics mode, so blocks walk several items). The odd shapes again on the new harness, the fa2_bench A/B of call 5
# (ratio test / base time: < 1 is the persistent branch faster), then racecheck over the sanitize spec's odd shapes
# with a longer limit (call 5's stopped at 80 s, its lines passing).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
WP=build/s28/wp WD="env FA2_WATCHDOG=4000000000"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-90) [$((SECONDS - t0)) s]"; }
run check_odd 60 $WD $WP/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_bwd_spec.lua
for i in 1 2; do
  run bench_base_$i 70 bin/fa2_bench --spec build/s28/bwd_bench.lua --reps 10 --rounds 2 --json $OUT/base_$i.json
  run bench_test_$i 70 $WP/fa2_bench --spec build/s28/bwd_bench.lua --reps 10 --rounds 2 --json $OUT/test_$i.json
done
python3 bench/ab_ratio.py --title "persistent ws backward / main" --base $OUT/base_*.json --test $OUT/test_*.json \
  | tee $OUT/ab_ratio.txt
run racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 9 $WP/fa2_gpu_tests --no-smoke --odd-shapes \
  --spec tests/gpu/ws_bwd_sanitize_spec.lua
grep -c "PASS\|pass" $OUT/racecheck.txt
cd $OUT && tar czf call6_logs.tar.gz *.txt *.json && rm -f *.txt *.json
