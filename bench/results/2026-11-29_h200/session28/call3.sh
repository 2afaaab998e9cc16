#!/bin/bash
# Session 28, call 3: branch exp/ws-bwd-varlen's library again (build/s28/wv2), its "auto" now also giving sinks
# backwards the ws tile (the main kernel is the plain one; the sinks' gradient is fa2_bwd_sink) and keeping windows at
# d <= 64 on wgmma (call 2: ws 1.10-1.16x slower at windows of 128 and 256 keys). Sinks and varlen against float64
# (tests/gpu/test_sinks.py, test_varlen.py), the drop-in's sink and window tests, racecheck of a sinks backward, call
# 1's failing racecheck case on main's library (is the "hardware exception" the tool's?), then lib_ab over the sinks
# cases at d 64 and 128 against main (ratio test / base: < 1 is the branch faster).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python:bench
W=build/s28/wv2/libfa2rt.so R=bench/results/2026-11-29_h200/session28/race_cases.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-70) [$((SECONDS - t0)) s]"; }
run sinks_checks 240 env FA2_LIB=$W python3 -m pytest -q -rA -n 8 tests/gpu/test_sinks.py tests/gpu/test_varlen.py \
  tests/gpu/test_torch_dropin.py -k "sink or varlen or window or equal_lengths"
run race_sinks 60 env FA2_LIB=$W compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd --error-exitcode 9 \
  python3 $R sinks
run race_varlen_main 120 env FA2_LIB=lib/libfa2rt.so compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd \
  --error-exitcode 9 python3 -m pytest -q -x tests/gpu/test_varlen.py -k "test_varlen_against_float64 and full and bf16 and d64 and none"
run race_varlen_wv 120 env FA2_LIB=$W compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd \
  --error-exitcode 9 python3 -m pytest -q -x tests/gpu/test_varlen.py -k "test_varlen_against_float64 and full and bf16 and d64 and none"
AB_BASE=lib/libfa2rt.so AB_TEST=$W AB_CASES=sinks,plain AB_DIMS=64,128 AB_TITLE="ws-bwd-varlen / main" \
  bench/gpu_run.sh lib_ab | tail -n 8
cat $OUT/lib_ab.txt
cd $OUT && tar czf call3_logs.tar.gz *.txt *.json && rm -f *.txt *.json
