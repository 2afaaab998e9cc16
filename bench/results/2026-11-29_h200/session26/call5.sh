#!/bin/bash
# Session 26, call 5: the ws backward as sm_90's default for plain d 40-64 and 104-128 (gen/defaults.lua
# BWD_TILES_SM90_WS): the float64 check of tests/gpu/ws_bwd_spec.lua with the padded head dims 56 and 120 (normal, odd
# and empty-row shapes), then the PyTorch suites through the runtime (test_torch_dropin, test_head_dims, test_sinks,
# test_varlen, test_dropout: every backward now on the ws tile where plain).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
S=tests/gpu/ws_bwd_spec.lua
run check 150 bin/fa2_gpu_tests --spec $S --no-smoke
run check_odd 60 bin/fa2_gpu_tests --spec $S --no-smoke --odd-shapes
run check_empty 60 bin/fa2_gpu_tests --spec $S --no-smoke --empty-rows
grep -h "FAIL" $OUT/check*.txt | head -5 | cut -c1-200
run native_build 120 python3 -m fa2gen._native
run pytest 280 python3 -m pytest -q -rfEsx -n 8 -p no:cacheprovider tests/gpu/test_torch_dropin.py tests/gpu/test_head_dims.py \
  tests/gpu/test_sinks.py tests/gpu/test_varlen.py tests/gpu/test_dropout.py
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/pytest.txt | tail -12 | cut -c1-220
cd $OUT && tar czf call5_logs.tar.gz *.txt && rm -f *.txt
