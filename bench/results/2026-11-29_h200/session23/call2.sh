#!/bin/bash
# Session 23, call 2: the Python operators' eager path (plain CUDA tensors, nothing tracing: the implementation
# without the dispatcher's round trips) and call 1's library: host time per call, the package before (.carry/base_python, HEAD
# a465336) against the working tree's, alternating twice: the GPT-2 shape's forward (no grad) and training step,
# d = 256 causal 1k's training step, and d = 256 per call against SDPA flash and cuDNN (issue 19's causal 1k row).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for i in 1 2; do
  for py in base test; do
    p=python; [ $py = base ] && p=.carry/base_python
    PYTHONPATH=$p:bench run host_fwd_$py$i 40 python3 bench/host_overhead.py --causal
    PYTHONPATH=$p:bench run host_train_$py$i 40 python3 bench/host_overhead.py --causal --train
    PYTHONPATH=$p:bench run host_d256_$py$i 40 python3 bench/host_overhead.py --shape 16,1024,8,256 --causal --train
    PYTHONPATH=$p:bench run d256_$py$i 60 python3 bench/sdpa_bench.py --backward --head-dims 256 --seqlens 1024 \
      --backends flash,cudnn,fa2gen-none --json $OUT/d256_$py$i.json
  done
done
cd $OUT
for i in 1 2; do for py in base test; do for m in fwd train d256; do echo "== host_${m}_$py$i"; grep -E "fa2gen-none|sdpa" host_${m}_$py$i.txt 2>/dev/null; done; done; done
for i in 1 2; do for py in base test; do echo "== d256_$py$i"; grep -E "causal" d256_$py$i.txt; done; done
tar czf call2_logs.tar.gz *.txt *.json && rm -f *.txt *.json
