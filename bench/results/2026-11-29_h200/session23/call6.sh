#!/bin/bash
# Session 23, call 6: call 5's varlen backward gap (main kernel 2.30 against 2.22 ms at d = 128 N = 2k non-causal,
# same registers) under ncu's full set, fixed and equal-length varlen, for the next session's comparison.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 300 $NCU --kernel-name regex:'^fa2_bwd$' --launch-skip 2 --launch-count 2 --set full \
  python3 bench/varlen_ncu.py --shape 8,2048,16,128 --backward > $OUT/ncu_bwd_full_d128_2k.txt 2>&1; echo "rc=$?"
cd $OUT
grep -E "^  fa2_|Duration|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|No Eligible|L2 Hit Rate|L1/TEX Hit|Eligible Warps" ncu_bwd_full_d128_2k.txt | cut -c1-110
gzip ncu_bwd_full_d128_2k.txt
