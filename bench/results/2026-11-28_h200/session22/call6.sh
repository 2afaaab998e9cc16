#!/bin/bash
# Session 22, call 6: head dims 33-48 on sm_90 take d = 64's wgmma tiles (columns past d masked) instead of the
# Python layer's padding to 64: fa2_gpu_tests against float64 over tests/gpu/wgmma_wider_spec.lua (normal and odd
# shapes), the PyTorch head-dim and varlen tests at those dims, and bench/padded_dims_bench.py at d = 40 (masked on
# 64's tiles against padding to 64 in Python, and SDPA flash).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run wider_check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/wgmma_wider_spec.lua
run wider_odd 100 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/wgmma_wider_spec.lua
run pytest_dims 150 python3 -m pytest -q -n 8 tests/gpu/test_head_dims.py tests/gpu/test_varlen.py -k "40 or 48 or 37"
run padded_bench 120 python3 bench/padded_dims_bench.py --dims 40
cd $OUT && grep -h "failure" wider_*.txt | tail -n 4; tail -n 16 padded_bench.txt
tar czf call6_logs.tar.gz *.txt && rm -f *.txt
