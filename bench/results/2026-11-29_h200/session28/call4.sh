#!/bin/bash
# Session 28, call 4: softcap on the ws backward (branch exp/ws-bwd-softcap, build/s28/sc): t = tanh(S^T cap_in) in
# place while dP^T runs, hidden entries -inf, then P^T and dS^T = P^T (dP^T - delta) (1 - min(t^2, 1)) per k16 step;
# "auto" gives softcap backwards the ws tile (every feature but dropout; windows at d <= 64 stay on wgmma). The
# drop-in's softcap and backward-modifier tests and the varlen softcap test against float64, memcheck over the
# softcap tests, racecheck of a softcap backward at d 64 and 128, then lib_ab over the softcap and plain cases against
# call 3's library (build/s28/wv2, main at 749e8a2: softcap on wgmma).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python:bench
W=build/s28/sc/libfa2rt.so B=build/s28/wv2/libfa2rt.so R=bench/results/2026-11-29_h200/session28/race_cases.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-70) [$((SECONDS - t0)) s]"; }
run softcap_checks 240 env FA2_LIB=$W python3 -m pytest -q -rA -n 8 tests/gpu/test_torch_dropin.py \
  tests/gpu/test_varlen.py -k "softcap or backward_modifiers"
run memcheck 150 env FA2_LIB=$W compute-sanitizer --tool memcheck --kernel-name kns=fa2_bwd --error-exitcode 9 \
  python3 -m pytest -q -x tests/gpu/test_torch_dropin.py -k "test_softcap_against_float64 and none and bf16"
for c in softcap softcap_d128; do
  run race_$c 60 env FA2_LIB=$W compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd --error-exitcode 9 \
    python3 $R $c
done
AB_BASE=$B AB_TEST=$W AB_CASES=softcap,plain AB_DIMS=64,128 AB_TITLE="ws softcap / main" \
  bench/gpu_run.sh lib_ab | tail -n 8
cat $OUT/lib_ab.txt
cd $OUT && tar czf call4_logs.tar.gz *.txt *.json && rm -f *.txt *.json
