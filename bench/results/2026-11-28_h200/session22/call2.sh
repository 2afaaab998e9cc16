#!/bin/bash
# Session 22, call 2: the persistent ws forward takes its next item while the consumers finish the last one
# (the atomic before the hand-over; a varlen item's offsets by cp.async into its slot). Correctness
# (test_varlen.py, fa2_gpu_tests float64 over the persistent fixed-length tiles), then the varlen / fixed forward
# ratio with the library before (build/base_lib, ce8b8b2) and after, alternating, and the d = 128 mix.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest_varlen 300 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py
run check_ws 150 bin/fa2_gpu_tests --no-smoke --spec bench/specs/ws_default.lua
run check_ws64 150 bin/fa2_gpu_tests --no-smoke --spec bench/specs/ws_d64_short.lua
run check_ws_odd 150 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec bench/specs/ws_default.lua
for i in 1 2; do
  for lib in base test; do
    l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
    FA2_LIB=$l run equal_${lib}$i 90 python3 bench/varlen_bench.py --skip-mix --equal-what fwd
    FA2_LIB=$l run mix_${lib}$i 60 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
  done
done
cd $OUT && tar czf call2_logs.tar.gz *.txt && rm -f *.txt
tar xzf call2_logs.tar.gz -O pytest_varlen.txt | tail -n 3
for f in check_ws check_ws64 check_ws_odd; do tar xzf call2_logs.tar.gz -O $f.txt | tail -n 2; done
for i in 1 2; do for lib in base test; do echo "== equal_$lib$i"; tar xzf call2_logs.tar.gz -O equal_$lib$i.txt | grep -E "True|False" | grep fwd; done; done
for i in 1 2; do for lib in base test; do echo "== mix_$lib$i"; tar xzf call2_logs.tar.gz -O mix_$lib$i.txt | grep -E "fa2gen varlen"; done; done
