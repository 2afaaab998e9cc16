#!/bin/bash
# Session 26, call 8: where the ws backward's d = 128 kernel waits (main's templates, 7220b6b): ncu's SpeedOfLight,
# ComputeWorkloadAnalysis (tensor pipe), WarpStateStats and SourceCounters (stall samples per SASS line) of fa2_bwd
# at N = 8k, bf16, non-causal (bench/specs/bwd_ws.lua's bwd_bf16_d128_m64n128w12s2ws_none), raw source CSV gzipped.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
timeout 300 $NCU --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
  --import-source yes --kernel-name fa2_bwd --launch-count 1 -f -o /tmp/ws8k bin/fa2_bench --spec bench/specs/bwd_ws.lua \
  --only bwd_bf16_d128_m64n128w12s2ws --seqlen 8192 --reps 1 --rounds 1 > $OUT/ncu_run.txt 2>&1
echo "ncu rc=$? [$((SECONDS - t0)) s]"; tail -2 $OUT/ncu_run.txt
$NCU --import /tmp/ws8k.ncu-rep --page details > $OUT/details.txt 2>&1
grep -iE "duration|throughput|tensor|pipe|stall|warp cycles|issued|eligible|active" $OUT/details.txt | head -50
$NCU --import /tmp/ws8k.ncu-rep --page source --csv --print-source sass > $OUT/source_sass.csv 2>&1
echo "source csv: $(wc -l < $OUT/source_sass.csv) lines"
gzip -9 $OUT/source_sass.csv
cd $OUT && tar czf call8_logs.tar.gz *.txt *.csv.gz && rm -f *.txt *.csv.gz
