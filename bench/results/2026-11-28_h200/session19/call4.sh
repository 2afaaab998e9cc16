#!/bin/bash
# Session 19, call 4: FA2's overflow test, causal, per mode and delta option (build/s19/overflow_probe.py)
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
timeout 200 python3 build/s19/overflow_probe.py 2>&1 | tail -20
