#!/bin/bash
# Session 21, call 1: (a) fa2 bias --gpu on threads (f6f19cb) must reproduce session 20's bias_gpu_bf16_call2 table;
# (b) the d = 256 bias at 256 heads, fixed and varlen (issue 19: robust <= 0.03);
# (c) branch exp/bwd-160-224-tiles (its bin/ and lib/ under .carry/bwd): float64 checks of the d 160/224 backward
#     tiles, fa2_bench old against new tiles, and the PyTorch backward tests with the branch's library.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run bias64 90 bin/fa2 bias --gpu --heads 64 --head-dims 64,128 -j 16
zcat bench/results/2026-11-28_h200/session20/bias_gpu_bf16_call2.txt.gz | tail -n +3 > /tmp/old.txt
tail -n +3 $OUT/bias64.txt > /tmp/new.txt
if cmp -s /tmp/old.txt /tmp/new.txt; then echo "bias64: same table as session 20 call 2"; else echo "bias64 DIFFERS"; diff /tmp/old.txt /tmp/new.txt | head -6; fi
run bias256 120 bin/fa2 bias --gpu --head-dims 256 -j 16
awk '$4 == "robust" || $4 == "none"' $OUT/bias256.txt | awk '{print $1, $2, $3, $4, $5, $7}' | head -40
run bias256_varlen 120 bin/fa2 bias --gpu --varlen --head-dims 256 -j 16
awk '$4 == "robust"' $OUT/bias256_varlen.txt | awk '{print $1, $2, $3, $4, $5, $7}' | head -20
B=.carry/bwd
run bwd_check 100 $B/bin/fa2_gpu_tests --no-smoke --spec $B/bench/specs/bwd_160_224_tiles.lua
run bwd_check_odd 60 $B/bin/fa2_gpu_tests --no-smoke --odd-shapes --spec $B/bench/specs/bwd_160_224_tiles.lua
grep -h "FAIL\|differ from" $OUT/bwd_check*.txt | head -8 | cut -c1-220
run bwd_bench 100 $B/bin/fa2_bench --spec $B/bench/specs/bwd_160_224_tiles.lua --reps 5 --rounds 2
tail -n 20 $OUT/bwd_bench.txt | cut -c1-160
export PYTHONPATH=python FA2_LIB=$B/lib/libfa2rt.so
run pytest 150 python3 -m pytest -q -rfEx -n 12 -p no:cacheprovider tests/gpu/test_torch_dropin.py -k "backward_modifiers or head_dim"
grep -E "passed|failed|FAILED|XPASS|Error" $OUT/pytest.txt | tail -10 | cut -c1-240
