#!/bin/bash
# Session 24, call 5 (main at 5bbe9c0, 2 x H200): tests/gpu/test_multi_device.py with the native eager forward
# (FA2_NATIVE=require): launches on the tensors' device whatever the current one is, on that device's current stream
# (a side stream held back by a sleep kernel), forward and backward.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m fa2gen._native
FA2_NATIVE=require timeout 300 python3 -m pytest -q -rA tests/gpu/test_multi_device.py 2>&1 | tail -n 30
