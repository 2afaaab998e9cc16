#!/bin/bash
# Session 26, call 7: the ws backward's dQ issued behind dV and dK (one wait for dV, dK; dQ's blocks waited one by one)
# against main's 7220b6b (dQ after a wait for dV, dK), template folders through FA2_TEMPLATES (build/s26/tA: 7220b6b's
# templates, tB: the change), fa2_bench over bench/specs/bwd_ws.lua (ws with 2 stages, and 3 at d = 64; the wgmma
# tiles it replaced), four alternating runs of two rounds; then the float64 check of tB (tests/gpu/ws_bwd_spec.lua,
# normal and odd shapes).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for T in tA tB tB tA; do
  run bench_${T}_$SECONDS 120 env FA2_TEMPLATES=build/s26/$T bin/fa2_bench --spec bench/specs/bwd_ws.lua --rounds 2 --json $OUT/${T}_$SECONDS.json
done
run check_tB 200 env FA2_TEMPLATES=build/s26/tB bin/fa2_gpu_tests --spec tests/gpu/ws_bwd_spec.lua --no-smoke
run check_odd_tB 60 env FA2_TEMPLATES=build/s26/tB bin/fa2_gpu_tests --spec tests/gpu/ws_bwd_spec.lua --no-smoke --odd-shapes
cd $OUT
python3 - <<'PY'
import glob, json, collections, statistics as st
t = collections.defaultdict(list)
for path in glob.glob("t[AB]_*.json"):
    for r in json.load(open(path)):
        t[(path[:2], r["variant"], r["seqlen"])].append(r["ms"])
names = sorted({k[1] for k in t})
Ns = sorted({k[2] for k in t})
print("variant: tB / tA speed per N (>1: tB faster); and tA's over the wgmma tile")
for v in names:
    cells = [f"{st.median(t[('tA', v, N)]) / st.median(t[('tB', v, N)]):.3f}" for N in Ns]
    print(f"{v:42s} " + " ".join(cells))
for d, base in ((64, "m64n64w4s3wg"), (128, "m64n128w8s2wg")):
    for c in ("", "_causal"):
        for ws in ("m64n128w12s2ws", "m64n128w12s3ws"):
            v = f"bwd_bf16_d{d}{c}_{ws}_none"
            if ("tB", v, Ns[0]) not in t: continue
            b = f"bwd_bf16_d{d}{c}_{base}_none"
            print(f"tB {v:42s} over wgmma " + " ".join(f"{st.median(t[('tB', b, N)]) / st.median(t[('tB', v, N)]):.3f}" for N in Ns))
PY
grep -h "failure" check*.txt | tail -2
tar czf call7_logs.tar.gz *.txt *.json && rm -f *.txt *.json
