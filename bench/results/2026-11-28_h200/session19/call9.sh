#!/bin/bash
# Session 19, call 9 (issue 22): fa2 bias --gpu at the suite's default 256 heads, bf16 and fp16 (64 heads read a
# mode's bias within a few thousandths only), with mode balanced.
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
t0=$SECONDS; timeout 280 bin/fa2 bias --gpu > $OUT/bias_gpu_bf16_256.txt 2>&1; echo "bf16 rc=$? [$((SECONDS - t0)) s]"
t0=$SECONDS; timeout 280 bin/fa2 bias --gpu --fp16 > $OUT/bias_gpu_fp16_256.txt 2>&1; echo "fp16 rc=$? [$((SECONDS - t0)) s]"
for f in bias_gpu_bf16_256 bias_gpu_fp16_256; do echo "== $f"; grep -E " (none|balanced) " $OUT/$f.txt | awk '{print $1,$2,$3,$4,$5,$7,$10}' | paste - - | awk '{printf "%s %s %s none %s bal %s mean %.3f max %.2f\n",$1,$2,$3,$5,$12,$13/$6,$14/$7}'; done
gzip -9 $OUT/*.txt
