#!/bin/bash
# Session 28, call 2: call 1's racecheck of the branch's varlen backward stopped on "Internal Sanitizer Error: failed
# to handle a hardware exception" (memcheck clean, every float64 check passed). Racecheck of one small backward per
# case (race_cases.py: plain on main's library, where the ws backward has passed racecheck in the C harness; then
# window, ALiBi, equal and mixed varlen lengths on branch exp/ws-bwd-varlen's), then the branch against main through
# PyTorch: bench/gpu_run.sh lib_ab over the window and ALiBi cases at d 64 and 128 (ratio test / base: < 1 is the
# branch faster), and bench/varlen_bench.py on each library.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python:bench
W=build/s28/wv/libfa2rt.so R=bench/results/2026-11-29_h200/session28/race_cases.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-70) [$((SECONDS - t0)) s]"; }
SAN=(compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd --error-exitcode 9 python3 $R)
run race_plain_main 60 env FA2_LIB=lib/libfa2rt.so "${SAN[@]}" plain
for c in plain window alibi varlen_equal varlen_mixed; do run race_$c 60 env FA2_LIB=$W "${SAN[@]}" $c; done
AB_BASE=lib/libfa2rt.so AB_TEST=$W AB_CASES=window,alibi AB_DIMS=64,128 AB_TITLE="ws-bwd-varlen / main" \
  bench/gpu_run.sh lib_ab | tail -n 8
run varlen_bench_main 150 env FA2_LIB=lib/libfa2rt.so python3 bench/varlen_bench.py
run varlen_bench_wv 150 env FA2_LIB=$W python3 bench/varlen_bench.py
cat $OUT/lib_ab.txt
tail -n 25 $OUT/varlen_bench_main.txt; tail -n 25 $OUT/varlen_bench_wv.txt
cd $OUT && tar czf call2_logs.tar.gz *.txt *.json && rm -f *.txt *.json
