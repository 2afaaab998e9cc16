#!/bin/bash
# Session 27, call 2. Call 1 rejected dQ in turns (tT 0.71-0.83x main: one warpgroup's dQ over 128 keys sits on the
# step's critical path, the other waits for it at the dS^T barrier) and could not weigh K and V in registers on top of
# it. tK: main's templates (tA, 557aeb3) with only K's and V's A fragments of S^T and dP^T in registers at d = 64
# (32 KB less shared-memory reads a step of ~224 KB). Prediction: +5-12 % if shared memory bounds d = 64's step as it
# does d = 128's, nothing if not. float64 checks and racecheck of tK, fa2_bench tA/tK alternating, then ncu
# (SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats, SourceCounters) of main's kernel at d = 64 and d = 128
# (the merged dQ body), N = 8k, bf16, non-causal.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
T=tK
run check_$T 90 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_d64.lua --no-smoke
run check_odd_$T 60 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_d64.lua --no-smoke --odd-shapes
run check_empty_$T 60 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_d64.lua --no-smoke --empty-rows
run racecheck_$T 120 env FA2_TEMPLATES=build/s27/$T compute-sanitizer --tool racecheck --error-exitcode 9 \
  bin/fa2_gpu_tests --no-smoke --odd-shapes --spec build/s27/ws_bwd_d64_san.lua
for T in tA tK tK tA tA tK; do
  run bench_${T}_$SECONDS 90 env FA2_TEMPLATES=build/s27/$T bin/fa2_bench --spec build/s27/bwd_d64_bench.lua --rounds 2 --json $OUT/${T}_$SECONDS.json
done
for D in 64 128; do
  t0=$SECONDS
  timeout 200 $NCU --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section MemoryWorkloadAnalysis --import-source yes --kernel-name fa2_bwd --launch-count 1 -f -o /tmp/ws_d$D \
    env FA2_TEMPLATES=build/s27/tA bin/fa2_bench --spec bench/specs/bwd_ws.lua \
    --only bwd_bf16_d${D}_m64n128w12s2ws --seqlen 8192 --reps 1 --rounds 1 > $OUT/ncu_run_d$D.txt 2>&1
  echo "ncu d$D rc=$? [$((SECONDS - t0)) s]"
  $NCU --import /tmp/ws_d$D.ncu-rep --page details > $OUT/details_d$D.txt 2>&1
  grep -iE "^ *(duration|sm busy|issue slots busy|mem.*busy|l1/tex.*throughput|compute \(sm\) throughput|max bandwidth|shared.*|warp cycles per issued|issued ipc|eligible warps|no eligible)" $OUT/details_d$D.txt | head -24
  $NCU --import /tmp/ws_d$D.ncu-rep --page source --csv --print-source sass > $OUT/source_sass_d$D.csv 2>&1
  gzip -9 $OUT/source_sass_d$D.csv
done
cd $OUT
python3 - <<'PY'
import glob, json, collections, statistics as st
t = collections.defaultdict(list)
for path in glob.glob("t[AK]_*.json"):
    for r in json.load(open(path)):
        t[(path[:2], r["variant"], r["seqlen"])].append(r["ms"])
Ns = sorted({k[2] for k in t})
print(f"variant: tK / tA speed per N {Ns} (>1: tK faster)")
for v in sorted({k[1] for k in t}):
    print(f"{v:42s} " + " ".join(f"{st.median(t[('tA', v, N)]) / st.median(t[('tK', v, N)]):.3f}" for N in Ns))
PY
grep -h "failure\|hazard\|ERROR SUMMARY" check*.txt racecheck*.txt | tail -5
tar czf call2_logs.tar.gz *.txt *.json *.csv.gz && rm -f *.txt *.json *.csv.gz
