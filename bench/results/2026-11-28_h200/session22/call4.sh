#!/bin/bash
# Session 22, call 4: the varlen ws epilogue writes O from its shared-memory staging in 16-byte chunks (whole rows a warp)
# where it stored 4 bytes a thread from the accumulator's layout (half sectors; call 3's ncu). test_varlen.py
# (float64, equal lengths bit for bit with the fixed call), then varlen / fixed forward with the library before
# (build/base_lib, ce8b8b2) and after, alternating, the d = 128 mix, and ncu of the d = 128 N = 1k pair again.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest_varlen 300 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py
for i in 1 2; do
  for lib in base test; do
    l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
    FA2_LIB=$l run equal_${lib}$i 90 python3 bench/varlen_bench.py --skip-mix --equal-what fwd
    FA2_LIB=$l run mix_${lib}$i 60 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
  done
done
FA2_LIB=lib/libfa2rt.so run ncu_d128_1k 120 $(command -v ncu || echo /usr/local/cuda/bin/ncu) --kernel-name regex:fa2_fwd \
  --launch-skip 2 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  python3 bench/varlen_ncu.py --shape 16,1024,16,128 --causal
cd $OUT && grep -E "Duration|bytes transmitted|Mem Busy" ncu_d128_1k.txt
tar czf call4_logs.tar.gz *.txt && rm -f *.txt
tar xzf call4_logs.tar.gz -O pytest_varlen.txt | tail -n 3
for i in 1 2; do for lib in base test; do echo "== equal_$lib$i"; tar xzf call4_logs.tar.gz -O equal_$lib$i.txt | grep -E "True|False" | grep fwd; done; done
for i in 1 2; do for lib in base test; do echo "== mix_$lib$i"; tar xzf call4_logs.tar.gz -O mix_$lib$i.txt | grep -E "fa2gen varlen"; done; done
