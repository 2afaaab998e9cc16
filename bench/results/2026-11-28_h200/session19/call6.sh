#!/bin/bash
# Session 19, call 6 (issue 21): where the d = 128 wgmma backward waits. ncu's WarpStateStats (stall reasons) and
# SourceCounters (stall samples per SASS line) of fa2_bwd at N = 8k (bf16, non-causal), raw CSV gzipped.
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
t0=$SECONDS
timeout 300 $NCU --section WarpStateStats --section SourceCounters --import-source yes --kernel-name fa2_bwd \
  --launch-count 1 -f -o /tmp/bwd8k bin/fa2_bench --spec bench/specs/bwd_wgmma_default.lua \
  --only bwd_bf16_d128_m64n128w8s2wg --seqlen 8192 --reps 1 --rounds 1 > $OUT/ncu_run.txt 2>&1
echo "ncu rc=$? [$((SECONDS - t0)) s]"; tail -3 $OUT/ncu_run.txt
$NCU --import /tmp/bwd8k.ncu-rep --page details > $OUT/details.txt 2>&1
grep -iE "stall|warp cycles|issued|Active" $OUT/details.txt | head -40
$NCU --import /tmp/bwd8k.ncu-rep --page source --csv --print-source sass > $OUT/source_sass.csv 2>&1
echo "source csv: $(wc -l < $OUT/source_sass.csv) lines"; head -2 $OUT/source_sass.csv | cut -c1-600
gzip -9 $OUT/source_sass.csv
