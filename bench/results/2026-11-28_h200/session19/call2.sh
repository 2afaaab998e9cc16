#!/bin/bash
# Session 19, call 2: mode balanced after call 1 (errors under 2^-10 of a gap count as none, two bisection steps, the
# fp32 O stored before the rounding): float64 + bits against the lab (normal, odd, empty rows), cost against none
# (three rounds), fa2 bias --gpu bf16 and fp16, the Python op (test_torch_dropin.py's balanced cases, the large-logit
# fp16 backward), static SASS of the epilogue (instructions of the balanced and none cubins).
set -u
cd "$(dirname "$0")/../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
FINAL=$OUT; export OUT=/tmp/raw2; mkdir -p $OUT
trap 'cd $OUT && tar czf "$FINAL/all.tgz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt"; cat $OUT/device.txt
git log -1 --format=%h > $OUT/commit.txt 2>/dev/null
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-100) [$((SECONDS - t0)) s]"; }
run check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/balanced_spec.lua
run check_odd 90 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/balanced_spec.lua
run check_empty 60 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/balanced_spec.lua
grep -h "FAIL\|differ from" $OUT/check*.txt | head -8 | cut -c1-220
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for f in build/s19/cubins/*.cubin; do n=$(basename $f .cubin); $CUOBJ -sass $f > $OUT/sass_$n.txt 2>&1
  echo "$n: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $OUT/sass_$n.txt) SASS instructions"; done
for round in 1 2 3; do run bench_$round 90 bin/fa2_bench --spec bench/specs/balanced_cost.lua --json $OUT/cost_$round.json --reps 10 --rounds 2; done
python3 bench/mode_cost.py $OUT/cost_*.json | tee $OUT/mode_cost.txt
export PYTHONPATH=python FA2_LIB=lib/libfa2rt.so
run pytest 300 python3 -m pytest -q -rfEsx -n 8 -p no:cacheprovider tests/gpu/test_torch_dropin.py -k "balanced or large_logit"
grep -E "passed|failed|FAILED|XPASS|xfail" $OUT/pytest.txt | tail -12 | cut -c1-200
run bias 120 bin/fa2 bias --gpu --heads 64 --head-dims 64,128
run bias_fp16 120 bin/fa2 bias --gpu --heads 64 --head-dims 64,128 --fp16
for f in bias bias_fp16; do echo "== $f"; grep -E " (none|balanced) " $OUT/$f.txt | awk '{print $1,$2,$3,$4,$5,$7,$10}' | paste - - | awk '{printf "%s %s %s none %s bal %s mean %.3f max %.2f\n",$1,$2,$3,$5,$12,$13/$6,$14/$7}'; done
