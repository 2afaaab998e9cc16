#!/bin/bash
# Session 29, call 6: the backward's window rule (rt_select.c: at d <= 64 a window of 512 keys or more, or open on a
# side, takes the ws tile): the drop-in's sliding-window tests against float64 (the d = 64 cases of 600 + 100 keys
# and of 256 keys open to the right now run it) and racecheck of a d = 64 backward with a window of 1024 keys.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
R=bench/results/2026-12-07_h100-80gb-hbm3/session29/race_cases.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Error:\|Hazard" $OUT/$name.txt | cut -c1-60) $(tail -n 1 $OUT/$name.txt | cut -c1-100) [$((SECONDS - t0)) s]"; }
run window_checks 90 python3 -m pytest -q -rfE -n 4 tests/gpu/test_torch_dropin.py -k "sliding_window and d64"
run race_window_wide 40 compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd --error-exitcode 9 python3 $R window_wide
grep -h "FAILED" $OUT/window_checks.txt | head -5
cd $OUT && tar czf call6_logs.tar.gz *.txt && rm -f *.txt
