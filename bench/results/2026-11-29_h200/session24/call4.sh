#!/bin/bash
# Session 24, call 4 (main at 5bbe9c0): the varlen backward's +3.6 % at d = 128 N = 2k non-causal (session 23: same
# instructions, L2 hit rate 88.1 against 90.4 %): ncu's source page (SASS, per-instruction memory counters) of the main
# backward kernel, fixed and equal-length varlen, to find the instructions whose L2 traffic or stalls differ.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
$NCU --version | tail -1
# the main kernel of the third (fixed) and fourth (varlen) calls: fa2_bwd launches 7 and 10 of fa2_bwd*
run ncu_src 240 $NCU --kernel-name regex:'^fa2_bwd$' --launch-skip 2 --launch-count 2 --set full --import-source yes \
  --page source --print-source sass --csv python3 bench/varlen_ncu.py --shape 8,2048,16,128 --backward
cd $OUT
head -c 600 ncu_src.txt; echo; wc -l ncu_src.txt
gzip ncu_src.txt
