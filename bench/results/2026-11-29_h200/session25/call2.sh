#!/bin/bash
# Session 25, call 2: single calls on an idle GPU without the profiler (host_overhead.py --profile timeline's
# first line: the host's time until the call returns, and CUDA events around the call), fa2gen none and
# robust, SDPA flash and cuDNN: N = 512 d 64 (B 32, H 32) and the GPT-2 small shape, causal and not.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 150 python3 -m fa2gen._native
for shape in 32,512,32,64 8,1024,12,64; do
  for c in "" --causal; do
    run timeline_${shape//,/x}$c 150 python3 bench/host_overhead.py --shape $shape $c --profile timeline --calls 40
  done
done
cd $OUT
for f in timeline_*.txt; do echo "== $f"; grep "unprofiled" $f | cut -c1-200; done
tar czf call2_logs.tar.gz *.txt && rm -f *.txt
