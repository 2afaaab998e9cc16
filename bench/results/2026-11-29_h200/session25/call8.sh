#!/bin/bash
# Session 25, call 8 (main with the causal d = 64 rule below 1k): compiled training (bench/train_gpt.py, 6 layers,
# d 64, N 512, batch 32: the rule's m64n64w4s2wg forward) with fa2gen none, SDPA flash and cuDNN, two runs each.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run native_build 120 python3 -m fa2gen._native
for r in 1 2; do
  run train$r 200 python3 bench/train_gpt.py --modes none,sdpa-flash,sdpa-cudnn --steps 300 --out $OUT/train$r
done
cd $OUT
for r in 1 2; do echo "== train$r"; tail -n 6 train$r.txt; done
tar czf call8_logs.tar.gz *.txt && rm -rf *.txt train1 train2
