#!/bin/bash
# Session 20, call 6: fa2 tune over bench/specs/tune_new_dims.lua at N = 2k after the fix of its buffers (LSE and
# workspace for 2048 / 16 = 128 heads; call 4 stopped on an illegal address), dry run, tiles only, a time budget; and
# fa2 bias --gpu at d = 256 (the default 256 heads; robust read 0.0342 at 128 heads in session 8).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run tune 200 bin/fa2 tune bench/specs/tune_new_dims.lua --no-beta --dry-run --shapes 2048 --budget 120 -j 16 \
  --reps 3 --rounds 1 --finalists 3 --final-reps 5 --report $OUT/tune --db /tmp/tune_new_dims.json
grep -v "compile\|time [0-9]" $OUT/tune.txt | grep -v "^\s*$" | tail -45
run bias 150 bin/fa2 bias --gpu --head-dims 256
awk '$4 == "robust" || $4 == "none"' $OUT/bias.txt | awk '{print $1, $2, $3, $4, $5, $7}'
