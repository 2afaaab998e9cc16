#!/bin/bash
# Session 23, call 5 (main at 65a9cd0 + bench/varlen_ncu.py --backward): where varlen's forward+backward loses
# 2-4 % to the fixed-length call at d = 128 non-causal (call 4: 1.027-1.038 at N = 2k, fwd alone 1.00): ncu of
# the backward's three kernels, fixed against equal-length varlen, at d = 128 N = 2k non-causal.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
run ncu_bwd_d128_2k 150 $NCU --kernel-name regex:fa2_bwd --launch-skip 6 --launch-count 6 \
  --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis \
  python3 bench/varlen_ncu.py --shape 8,2048,16,128 --backward
cd $OUT
grep -E "^  fa2_|Duration|Grid Size|Registers Per|Memory Throughput|DRAM Throughput|Mem Busy" ncu_bwd_d128_2k.txt | cut -c1-110
gzip ncu_bwd_d128_2k.txt
