#!/bin/bash
# Session 22, call 8 (main at 31b472d): (1) call 2's next-item take again (branch exp/varlen-lookahead, its library
# under build/exp_lib), now that varlen's O stores match the fixed kernel's: d = 128 equal lengths and the mix,
# against main's library, alternating twice; test_varlen.py's equal-length bit test with it. (2) The Python
# operators' autograd kernel calling the operator directly when no gradient is recorded (working tree) against
# main's package (.carry/base_python): host_overhead.py at the GPT-2 shape, forward without grad.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
export PYTHONPATH=python:bench
for i in 1 2; do
  for lib in base exp; do
    FA2_LIB=build/${lib}_lib/libfa2rt.so run equal_${lib}$i 40 python3 bench/varlen_bench.py --skip-mix --equal-what fwd --equal-dims 128
    FA2_LIB=build/${lib}_lib/libfa2rt.so run mix_${lib}$i 45 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
  done
done
FA2_LIB=build/exp_lib/libfa2rt.so run pytest_exp 60 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py -k "equal_lengths or float64"
for i in 1 2; do
  FA2_LIB=lib/libfa2rt.so PYTHONPATH=.carry/base_python:bench run host_base$i 30 python3 bench/host_overhead.py --causal
  FA2_LIB=lib/libfa2rt.so run host_test$i 30 python3 bench/host_overhead.py --causal
done
cd $OUT
for i in 1 2; do for lib in base exp; do echo "== equal_$lib$i"; grep -E "True|False" equal_$lib$i.txt | grep fwd; done; done
for i in 1 2; do for lib in base exp; do echo "== mix_$lib$i $(grep 'fa2gen varlen' mix_$lib$i.txt)"; done; done
tail -n 1 pytest_exp.txt; grep -H "fa2gen-none\|fa2gen-robust" host_*.txt
tar czf call8_logs.tar.gz *.txt && rm -f *.txt
