#!/bin/bash
# Session 27, call 7: dQ a step late (tQ, branch exp/ws-bwd-dq-late): dQ(t - 1) issued ahead of S^T(t), staged while
# S^T(t) runs, dP^T(t) after; the warpgroups meet at dS^T(t - 1)'s barrier a step after storing it, so their
# elementwise phases need not line up. d = 64 only (at d = 128 dQ's 32 accumulators beside S^T's in flight and dK, dV
# spill 128 bytes at 240 registers). Prediction +3-8 % over main (tM = eb58217). float64 (d 56, 64, bf16, fp16;
# normal with the deterministic mode, odd, empty rows), racecheck at d = 64, then bench/gpu_run.sh tpl_ab at d = 64
# (time ratios tQ / tM: < 1 is tQ faster).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
T=build/s27/tQ S=build/s27/ws_bwd_d64.lua
run check 60 env FA2_TEMPLATES=$T bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 30 env FA2_TEMPLATES=$T bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 30 env FA2_TEMPLATES=$T bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
run racecheck 80 env FA2_TEMPLATES=$T compute-sanitizer --tool racecheck --error-exitcode 9 \
  bin/fa2_gpu_tests --no-smoke --odd-shapes --spec build/s27/ws_bwd_d64_san.lua
TPL_BASE=build/s27/tM TPL_TEST=$T TPL_SPEC=build/s27/bwd_d64_bench.lua TPL_TITLE="tQ / tM" bench/gpu_run.sh tpl_ab
cat $OUT/tpl_ratio.txt
cd $OUT && tar czf call7_logs.tar.gz *.txt *.json && rm -f *.txt *.json
