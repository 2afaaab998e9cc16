#!/bin/bash
# Session 24, call 6 (main at the commit that adds bench/specs/tune_n512.lua): issue 21's N = 512 rows are the kernels'
# now (the native path took the host's share): `fa2 tune` over every tile of the forward and backward at d 64 and 128,
# causal and not, at N = 512 only (dry run: no database), against the built-in tiles.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/tune
timeout 420 bin/fa2 tune bench/specs/tune_n512.lua --shapes 512 --no-beta --dry-run --report $OUT/tune -j 16 \
  > $OUT/tune_n512.txt 2>&1; echo "tune rc=$?"
tail -n 40 $OUT/tune_n512.txt
gzip $OUT/tune/tune.json
