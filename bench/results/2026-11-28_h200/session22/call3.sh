#!/bin/bash
# Session 22, call 3: ncu (full set) of the fixed-length and the equal-length varlen forward on the persistent
# ws tile, d = 64 causal N = 4k (B 4, H 32) and d = 128 causal N = 1k (B 16, H 16), none: where the varlen
# call's 5-8 % goes (call 2: taking the next item early did not change it).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run ncu_d64_4k 240 $NCU --kernel-name regex:fa2_fwd --launch-skip 2 --launch-count 2 --set full --import-source no \
  python3 bench/varlen_ncu.py --shape 4,4096,32,64 --causal
run ncu_d128_1k 240 $NCU --kernel-name regex:fa2_fwd --launch-skip 2 --launch-count 2 --set full --import-source no \
  python3 bench/varlen_ncu.py --shape 16,1024,16,128 --causal
cd $OUT && for f in ncu_*.txt; do
  echo "== $f"; grep -E "fa2_fwd|Duration|Executed Ipc Active|Issue Slots Busy|^ +Instructions|Executed Instructions  |Warp Cycles Per Issued|No Eligible|Registers Per|Dynamic Shared|Grid Size|Block Size|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit" $f | head -60
done
gzip -9 ncu_*.txt
