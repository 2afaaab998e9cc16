#!/bin/bash
# Session 27, call 4: the ws backward's masks out of the exponentials' loop (tM). Call 2's SASS counts (d = 128,
# N = 8k, non-causal, where no step is masked): 2.01 G warp instructions against cuDNN's 1.49 G (session 17), the
# runtime `masked` flag's tests predicated into every score (ISETP 1.7, PLOP3 1, FSEL 1 and a VIADD a score). tM: the
# exponentials unmasked, then a pass of its own that zeroes hidden scores on masked steps only. Prediction: -10 % warp
# instructions; +2-5 % at d = 64 (issue slots 51 % busy), +1-3 % at d = 128 (39 %). tK = main (e0f8641). float64
# checks of tM (d 56, 64, 120, 128, bf16/fp16, causal and not; normal with the deterministic mode, odd, empty rows),
# racecheck, then fa2_bench tK/tM alternating at d 64 and 128.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
T=tM
run check_$T 120 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_all.lua --no-smoke
run check_odd_$T 60 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_all.lua --no-smoke --odd-shapes
run check_empty_$T 60 env FA2_TEMPLATES=build/s27/$T bin/fa2_gpu_tests --spec build/s27/ws_bwd_all.lua --no-smoke --empty-rows
run racecheck_$T 150 env FA2_TEMPLATES=build/s27/$T compute-sanitizer --tool racecheck --error-exitcode 9 \
  bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_bwd_sanitize_spec.lua
for T in tK tM tM tK tK tM; do
  run bench_${T}_$SECONDS 90 env FA2_TEMPLATES=build/s27/$T bin/fa2_bench --spec build/s27/bwd_bench.lua --rounds 2 --json $OUT/${T}_$SECONDS.json
done
cd $OUT
python3 - <<'PY'
import glob, json, collections, statistics as st
t = collections.defaultdict(list)
for path in glob.glob("t[KM]_*.json"):
    for r in json.load(open(path)):
        t[(path[:2], r["variant"], r["seqlen"])].append(r["ms"])
Ns = sorted({k[2] for k in t})
print(f"variant: tM / tK speed per N {Ns} (>1: tM faster)")
for v in sorted({k[1] for k in t}):
    print(f"{v:42s} " + " ".join(f"{st.median(t[('tK', v, N)]) / st.median(t[('tM', v, N)]):.3f}" for N in Ns))
PY
grep -h "failure\|ERROR SUMMARY\|RACECHECK SUMMARY" check*.txt racecheck*.txt | tail -5
tar czf call4_logs.tar.gz check*.txt racecheck*.txt bench_*.txt t[KM]_*.json && rm -f *.txt *.json
