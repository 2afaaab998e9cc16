#!/bin/bash
# Session 23, call 8 (main at 7467940): where a GPT-2-shape training step's attention spends its ~600 us of host
# time with the eager path (cProfile over 200 steps, host_overhead.py --profile cprofile --train).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 python3 bench/host_overhead.py --causal --train --profile cprofile 2>&1 | grep -v Warning | head -45
