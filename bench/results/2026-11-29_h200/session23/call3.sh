#!/bin/bash
# Session 23, call 3: calls 1 and 2's library and Python package. Every other PyTorch GPU suite (test_varlen.py ran
# in call 1; test_multi_device.py needs two GPUs) with the eager path; the d = 128 mix's forward before and after
# varlen's TMA stores, alternating three times (call 1: 0.321 against 0.346 ms in one sample each); ncu of the
# fixed and equal-length varlen forward at d = 64 N = 4k causal with both libraries; fa2 bias --gpu at d = 40 on
# d = 64's wgmma tiles (0835cd3), fixed and varlen.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
FA2_LIB=lib/libfa2rt.so run pytest_suites 240 python3 -m pytest -q -n 8 tests/gpu/test_torch_dropin.py \
  tests/gpu/test_head_dims.py tests/gpu/test_sinks.py tests/gpu/test_dropout.py
for i in 1 2 3; do
  for lib in base test; do
    l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
    FA2_LIB=$l run mix_${lib}$i 45 python3 bench/varlen_bench.py --skip-equal --mix-dims 128
  done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for lib in base test; do
  l=lib/libfa2rt.so; [ $lib = base ] && l=build/base_lib/libfa2rt.so
  FA2_LIB=$l run ncu_d64_4k_$lib 60 $NCU --kernel-name regex:fa2_fwd --launch-skip 2 --launch-count 2 \
    --section SpeedOfLight python3 bench/varlen_ncu.py --shape 4,4096,32,64 --causal
done
FA2_LIB=lib/libfa2rt.so run bias_d40 150 bin/fa2 bias --gpu --head-dims 40 -j 16
FA2_LIB=lib/libfa2rt.so run bias_d40_varlen 150 bin/fa2 bias --gpu --varlen --head-dims 40 -j 16
cd $OUT
tail -n 1 pytest_suites.txt
for i in 1 2 3; do for lib in base test; do echo "== mix_$lib$i $(grep 'fa2gen varlen' mix_$lib$i.txt)"; done; done
for lib in base test; do echo "== ncu_d64_4k_$lib"; grep -E "fa2_fwd|Duration" ncu_d64_4k_$lib.txt | cut -c1-100; done
grep -E "max \|bias\||robust" bias_d40*.txt | head -20
tar czf call3_logs.tar.gz *.txt && rm -f *.txt
