#!/bin/bash
# Session 24, call 1 (main at 5bbe9c0: the native eager forward, python/fa2gen/_native.cpp): the module built on the
# GPU host (its time), the PyTorch GPU suites with it (FA2_NATIVE=require: a failed build fails them), and the host
# time per call native against the Python eager path, SDPA flash and cuDNN in the same rounds (seven alternations in
# one process): the GPT-2 shape's forward without and with grad and its training step.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 150 python3 -m fa2gen._native
FA2_NATIVE=require run pytest_suites 300 python3 -m pytest -q -n 8 tests/gpu/test_torch_dropin.py \
  tests/gpu/test_head_dims.py tests/gpu/test_sinks.py tests/gpu/test_dropout.py tests/gpu/test_varlen.py
for mode in "" --grad --train; do run gpt2$mode 60 python3 bench/host_overhead.py --causal --native-ab $mode; done
cd $OUT
for mode in "" --grad --train; do echo "== GPT-2 shape causal $mode"; grep "host us" gpt2$mode.txt; done
tail -n 3 pytest_suites.txt
tar czf call1_logs.tar.gz *.txt && rm -f *.txt
