#!/bin/bash
# Session 22, call 5: the rest of the varlen checks with 7b6631a's library (sinks, dropout and the drop-in's varlen
# cases), compute-sanitizer memcheck and racecheck of the varlen ws forward (3 sequences of 1000 rows: the last
# row block ends inside the next sequence), and d = 256 per call against SDPA at N = 1k, 2k (issue 19's row).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
run pytest_varlen_rest 240 python3 -m pytest -q -n 8 tests/gpu/test_sinks.py tests/gpu/test_dropout.py \
  tests/gpu/test_torch_dropin.py -k "varlen or equal_lengths"
for shape in 3,1000,4,128; do
  for tool in memcheck racecheck; do
    run ${tool}_${shape//,/_} 100 compute-sanitizer --tool $tool --error-exitcode 9 \
      python3 bench/varlen_ncu.py --shape $shape --causal
  done
done
run sdpa_d256 150 python3 bench/sdpa_bench.py --backward --head-dims 256 --seqlens 1024,2048 \
  --backends flash,cudnn,fa2gen-none,fa2gen-robust --json $OUT/sdpa_d256.json
cd $OUT && tail -n 25 sdpa_d256.txt; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" *check_*.txt
tar czf call5_logs.tar.gz *.txt *.json && rm -f *.txt *.json
