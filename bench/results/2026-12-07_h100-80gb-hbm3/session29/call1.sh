#!/bin/bash
# Session 29, call 1: dropout on the ws backward and the persistent walk for every d <= 64 ws backward but windows
# (ALiBi, softcap, varlen, dropout), through PyTorch against float64 on the working tree's library (lib/, whose
# "auto" gives them the ws tile): test_dropout (every case, both dtypes, deterministic, p = 0 bits), the varlen and
# sinks suites, the drop-in's ALiBi, softcap, varlen and dropout tests; memcheck over a dropout subset; racecheck of
# one small backward per new case (race_cases.py).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python
R=bench/results/2026-12-07_h100-80gb-hbm3/session29/race_cases.py
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(grep -m1 "Internal\|Error:\|Hazard" $OUT/$name.txt | cut -c1-80) $(tail -n 1 $OUT/$name.txt | cut -c1-90) [$((SECONDS - t0)) s]"; }
run dropout_checks 200 python3 -m pytest -q -rfE -n 8 tests/gpu/test_dropout.py
run d64_mods_checks 240 python3 -m pytest -q -rfE -n 8 tests/gpu/test_varlen.py tests/gpu/test_sinks.py \
  tests/gpu/test_torch_dropin.py -k "alibi or softcap or varlen or dropout or sinks or backward_modifiers"
run memcheck 120 compute-sanitizer --tool memcheck --kernel-name kns=fa2_bwd --error-exitcode 9 \
  python3 -m pytest -q -x tests/gpu/test_dropout.py -k "test_forward_backward_against_float64_with_the_mask and bf16 and none and (d64 or d128)"
for c in dropout dropout_d128 varlen_dropout alibi softcap varlen_mixed; do
  run race_$c 60 compute-sanitizer --tool racecheck --kernel-name kns=fa2_bwd --error-exitcode 9 python3 $R $c
done
grep -h "FAILED\|ERROR" $OUT/dropout_checks.txt $OUT/d64_mods_checks.txt | head -20
cd $OUT && tar czf call1_logs.tar.gz *.txt && rm -f *.txt
