#!/bin/bash
# Session 20, call 5: (1) call 4's tune stopped on an illegal address: the tuner's normal grid at d 16, 48, 80, 160,
# 224 (grid_d*.lua: the tiles the generator accepts, forward and backward, causal or not) through fa2_gpu_tests'
# float64 checks, one process a head dim, to find the tile; (2) fa2 bias --gpu past d = 128 (balanced left out there
# now); (3) varlen_bench with the ragged-batch rule (d = 64: equal lengths and the mix).
set -u
cd "$(dirname "$0")/../../../.."
S=bench/results/2026-11-28_h200/session20
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
tar xzf $S/grid_specs.tgz -C /tmp
for d in 16 48 80 160 224; do
  run grid_d$d 70 bin/fa2_gpu_tests --no-smoke --spec /tmp/grid_d$d.lua
  grep -m3 -E "FAIL|error|illegal|ILLEGAL|cannot" $OUT/grid_d$d.txt | cut -c1-200
done
FA2_LIB=lib/libfa2rt.so run varlen 200 python3 bench/varlen_bench.py --equal-dims 64 --mix-dims 64
sed -n '/varlen with equal lengths/,$p' $OUT/varlen.txt
run bias 200 bin/fa2 bias --gpu --head-dims 160,224,256
run bias_varlen 100 bin/fa2 bias --gpu --varlen --head-dims 256
for f in bias bias_varlen; do echo "== $f (largest |bias| by mode and head dim, and its case)"
  awk '($4 == "robust" || $4 == "none") && $5 ~ /^[-+]/ { b = $5 < 0 ? -$5 : $5; k = $4 " d" $3
    if (b > m[k]) { m[k] = b; c[k] = $1 " R" $2 } } END { for (k in m) print k, m[k], c[k] }' $OUT/$f.txt | sort; done
