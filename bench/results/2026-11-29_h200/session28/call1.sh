#!/bin/bash
# Session 28, call 1: the ws backward's windows, ALiBi and varlen through PyTorch against float64, on branch
# exp/ws-bwd-varlen's library (build/s28/wv, whose "auto" gives window, ALiBi and varlen backwards at d 40-64,
# 104-128 the ws tile): the varlen suites (equal lengths give the fixed-length bits, deterministic), the drop-in's
# window, ALiBi, softcap and backward-modifier tests, memcheck and racecheck of the backward kernels over a varlen,
# window and ALiBi subset; then main's backward kernels timed apart (bench/bwd_breakdown.py, d 64 and 128).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python
W=build/s28/wv/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run varlen_checks 240 env FA2_LIB=$W python3 -m pytest -q -rA -n 8 tests/gpu/test_varlen.py tests/gpu/test_sinks.py \
  tests/gpu/test_dropout.py tests/gpu/test_torch_dropin.py -k "varlen or equal_lengths"
run modifier_checks 240 env FA2_LIB=$W python3 -m pytest -q -rA -n 8 tests/gpu/test_torch_dropin.py \
  -k "alibi or softcap or window or backward_modifiers"
SUB=(tests/gpu/test_varlen.py tests/gpu/test_torch_dropin.py -k
  "(test_varlen_against_float64 and bf16 and none and (d64 or d128)) or (test_sliding_window_against_float64 and bf16 and none) or (test_alibi_against_float64 and none)")
for tool in memcheck racecheck; do
  run $tool 150 env FA2_LIB=$W compute-sanitizer --tool $tool --kernel-name kns=fa2_bwd --error-exitcode 9 \
    python3 -m pytest -q -x "${SUB[@]}"
  grep -c "ERROR SUMMARY\|Error\|Hazard" $OUT/$tool.txt
done
run bwd_breakdown 200 env FA2_LIB=lib/libfa2rt.so python3 bench/bwd_breakdown.py --head-dims 64,128
grep "^d \|total" $OUT/bwd_breakdown.txt
cd $OUT && tar czf call1_logs.tar.gz *.txt && rm -f *.txt
