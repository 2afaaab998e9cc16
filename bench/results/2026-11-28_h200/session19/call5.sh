#!/bin/bash
# Session 19, call 5: the overflow test as committed (delta lowp and fp32; strict xfail where lowp fails)
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
timeout 200 python3 -m pytest -q -rfEsxX -n 4 -p no:cacheprovider tests/gpu/test_torch_dropin.py -k large_logit 2>&1 | grep -E "^(FAILED|XFAIL|XPASS|ERROR)|passed|failed" | cut -c1-180
