#!/bin/bash
# Session 26, call 9: d = 128's dQ the FA3 way (build/s26/tC: both warpgroups' dS^T in shared memory, double-buffered,
# a barrier of the two each step, each warpgroup dQ's 64 columns over the block's 128 keys, one fp32 staging buffer
# the dQ warps add as it is) against main's 7220b6b (tA: each warpgroup dQ over its own 64 keys, two buffers summed by
# the dQ warps). Prediction from call 8 (L1/TEX 77 %, tensor pipe 48 %): 48 of ~450 KB of shared-memory traffic a
# step less, +5-10 %. fa2_bench over bench/specs/bwd_ws.lua's d = 128 variants, four alternating runs; float64 check
# of tC at d 120 and 128 (build/s26/ws_bwd_d128.lua, normal and odd shapes).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for T in tA tC tC tA; do
  run bench_${T}_$SECONDS 120 env FA2_TEMPLATES=build/s26/$T bin/fa2_bench --spec bench/specs/bwd_ws.lua --only d128 --rounds 2 --json $OUT/${T}_$SECONDS.json
done
run check_odd_tC 60 env FA2_TEMPLATES=build/s26/tC bin/fa2_gpu_tests --spec build/s26/ws_bwd_d128.lua --no-smoke --odd-shapes
run check_tC 150 env FA2_TEMPLATES=build/s26/tC bin/fa2_gpu_tests --spec build/s26/ws_bwd_d128.lua --no-smoke
cd $OUT
python3 - <<'PY'
import glob, json, collections, statistics as st
t = collections.defaultdict(list)
for path in glob.glob("t[AC]_*.json"):
    for r in json.load(open(path)):
        t[(path[:2], r["variant"], r["seqlen"])].append(r["ms"])
Ns = sorted({k[2] for k in t})
print("variant: tC / tA speed per N (>1: tC faster)")
for v in sorted({k[1] for k in t}):
    print(f"{v:42s} " + " ".join(f"{st.median(t[('tA', v, N)]) / st.median(t[('tC', v, N)]):.3f}" for N in Ns))
PY
grep -h "failure" check*.txt | tail -2
tar czf call9_logs.tar.gz *.txt *.json && rm -f *.txt *.json
