#!/bin/bash
# Session 24, call 10 (main at the commit that registers the native module's kernels in the dispatcher): the module
# built, then the PyTorch GPU suites and test_multi_device with it (FA2_NATIVE=require); a compiled training run
# (bench/train_gpt.py, 6 layers, d 64, N 512, batch 32) with fa2gen's kernels native and Python (FA2_NATIVE=0),
# SDPA flash and cuDNN beside them.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 120 python3 -m fa2gen._native
FA2_NATIVE=require run pytest_suites 240 python3 -m pytest -q -n 8 tests/gpu/test_torch_dropin.py \
  tests/gpu/test_head_dims.py tests/gpu/test_sinks.py tests/gpu/test_dropout.py tests/gpu/test_varlen.py \
  tests/gpu/test_multi_device.py
run train_native 150 python3 bench/train_gpt.py --modes none,sdpa-flash,sdpa-cudnn --steps 300 --out $OUT/train_native
FA2_NATIVE=0 run train_python 90 python3 bench/train_gpt.py --modes none --steps 300 --out $OUT/train_python
cd $OUT
tail -n 2 pytest_suites.txt
for t in train_native train_python; do echo "== $t"; tail -n 6 $t.txt; done
tar czf call10_logs.tar.gz *.txt && rm -rf *.txt train_native train_python
