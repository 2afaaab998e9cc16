#!/bin/bash
# Session 23, call 7 (main at fc9f4a7 + host_overhead.py --eager-ab): the eager path against the dispatcher on the
# H200's host, alternating seven times in one process (call 2 compared two packages across processes, where the
# host's noise hid it): the GPT-2 shape's forward without and with grad and its training step; d = 256 N = 1k's.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for mode in "" --grad --train; do
  echo "== GPT-2 shape causal $mode"; timeout 60 python3 bench/host_overhead.py --causal --eager-ab $mode 2>&1 | grep fa2gen-none
done
for mode in --grad --train; do
  echo "== 16,1024,8,256 causal $mode"
  timeout 60 python3 bench/host_overhead.py --shape 16,1024,8,256 --causal --eager-ab $mode 2>&1 | grep fa2gen-none
done
