#!/bin/bash
# Session 19, call 3: the Python op after the changes to its rng and dropout fields (_ops._dropout takes the mode):
# FA2's overflow test with its own draws (none, robust, balanced; full and causal), the varlen cases with balanced,
# every dropout test, and the balanced cases of test_torch_dropin.py again.
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
FINAL=$OUT; export OUT=/tmp/raw3; mkdir -p $OUT
trap 'cd $OUT && tar czf "$FINAL/all.tgz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt"; cat $OUT/device.txt
t0=$SECONDS; timeout 420 python3 -m pytest -q -rfEsxX -n 8 -p no:cacheprovider tests/gpu/test_torch_dropin.py tests/gpu/test_varlen.py \
  tests/gpu/test_dropout.py -k "balanced or large_logit or dropout" > $OUT/pytest.txt 2>&1; echo "pytest rc=$? [$((SECONDS - t0)) s]"
grep -E "^(FAILED|XFAIL|XPASS|ERROR)|passed|failed" $OUT/pytest.txt | tail -20 | cut -c1-200
grep -E "max err" $OUT/pytest.txt | head -10 | cut -c1-160
