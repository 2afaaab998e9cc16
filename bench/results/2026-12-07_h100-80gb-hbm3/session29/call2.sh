#!/bin/bash
# Session 29, call 2: the working tree's library (lib/: dropout on the ws backward, the persistent walk for the d <= 64
# modifiers) against main's at 41a13d5 (build/s29/base) through PyTorch: bench/gpu_run.sh lib_ab (forward + backward
# time, test / base: < 1 is the new library faster) over dropout, ALiBi, softcap, sinks and plain at d 64 and 128,
# N = 4096, then at N = 1024 for d = 64; bench/varlen_bench.py on each library.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONPATH=python:bench
B=build/s29/base/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-90) [$((SECONDS - t0)) s]"; }
AB_BASE=$B AB_TEST=lib/libfa2rt.so AB_CASES=dropout,alibi,softcap,sinks,plain AB_DIMS=64,128 \
  AB_TITLE="session 29 / main, N 4k" bench/gpu_run.sh lib_ab | tail -n 3
AB_BASE=$B AB_TEST=lib/libfa2rt.so AB_CASES=dropout,alibi,softcap,plain AB_DIMS=64 AB_SEQLEN=1024 AB_TAG=_1k \
  AB_TITLE="session 29 / main, N 1k" bench/gpu_run.sh lib_ab | tail -n 3
run varlen_bench_base 120 env FA2_LIB=$B python3 bench/varlen_bench.py
run varlen_bench_new 120 env FA2_LIB=lib/libfa2rt.so python3 bench/varlen_bench.py
cat $OUT/lib_ab.txt $OUT/lib_ab_1k.txt
tail -n 22 $OUT/varlen_bench_base.txt; tail -n 22 $OUT/varlen_bench_new.txt
cd $OUT && tar czf call2_logs.tar.gz *.txt *.json && rm -f *.txt *.json
