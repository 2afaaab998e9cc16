#!/bin/bash
# Session 23, call 1: varlen's O by TMA for row blocks inside their sequence (or in the last one), the chunk copy
# only for a block a sequence ends in. test_varlen.py (float64, equal lengths bit for bit with the fixed call),
# compute-sanitizer memcheck and racecheck (3 x 1000 rows, d 128 causal: blocks that end inside the next sequence,
# and the last sequence clipped by the tensor's end), varlen / fixed forward with the library before
# (build/base_lib, HEAD a465336) and after, alternating twice, the d = 128 mix, ncu of the d = 128 N = 1k pair.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest_varlen 200 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py
for tool in memcheck racecheck; do
  FA2_LIB=lib/libfa2rt.so run ${tool} 90 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 bench/varlen_ncu.py --shape 3,1000,4,128 --causal
done
for i in 1 2; do
  for lib in base test; do
    l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
    FA2_LIB=$l run equal_${lib}$i 60 python3 bench/varlen_bench.py --skip-mix --equal-what fwd
  done
done
for lib in base test; do
  l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
  FA2_LIB=$l run mix_${lib} 45 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
done
FA2_LIB=lib/libfa2rt.so run ncu_d128_1k 100 $(command -v ncu || echo /usr/local/cuda/bin/ncu) --kernel-name regex:fa2_fwd \
  --launch-skip 2 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  python3 bench/varlen_ncu.py --shape 16,1024,16,128 --causal
cd $OUT && grep -E "Duration|bytes transmitted|Mem Busy" ncu_d128_1k.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" memcheck.txt racecheck.txt; tail -n 2 pytest_varlen.txt
for i in 1 2; do for lib in base test; do echo "== equal_$lib$i"; grep -E "True|False" equal_$lib$i.txt | grep fwd; done; done
for lib in base test; do echo "== mix_$lib $(grep 'fa2gen varlen' mix_$lib.txt)"; done
tar czf call1_logs.tar.gz *.txt && rm -f *.txt
