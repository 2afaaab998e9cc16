#!/bin/bash
# Session 20, call 4: (1) the realistic mix at d = 64, the library before the varlen length rule (build/base_lib) and
# after (lib/), alternating twice; (2) fa2 bias --gpu at the head dims past 128 at the default 256 heads, and a varlen
# batch at d = 256; (3) fa2 tune over bench/specs/tune_new_dims.lua at N = 2k (dry run, tiles only, a time budget).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/$name.txt 2>&1; local rc=$?
  echo "$name rc=$rc; $(tail -n 1 $OUT/$name.txt | cut -c1-110) [$((SECONDS - t0)) s]"; }
for i in 1 2; do
  FA2_LIB=build/base_lib/libfa2rt.so run mix_base$i 60 python3 bench/varlen_bench.py --skip-equal --mix-dims 64
  FA2_LIB=lib/libfa2rt.so run mix_test$i 60 python3 bench/varlen_bench.py --skip-equal --mix-dims 64
done
grep -H "fa2gen varlen\|torch varlen" $OUT/mix_*.txt
run bias 240 bin/fa2 bias --gpu --head-dims 160,224,256
run bias_varlen 120 bin/fa2 bias --gpu --varlen --head-dims 256
for f in bias bias_varlen; do echo "== $f (robust, by head dim: largest |bias| and its case; none's largest)"
  awk '($4 == "robust" || $4 == "none") && $5 ~ /^[-+]/ { b = $5 < 0 ? -$5 : $5; k = $4 " d" $3
    if (b > m[k]) { m[k] = b; c[k] = $1 " R" $2 } } END { for (k in m) print k, m[k], c[k] }' $OUT/$f.txt | sort; done
run tune 240 bin/fa2 tune bench/specs/tune_new_dims.lua --no-beta --dry-run --shapes 2048 --budget 200 -j 16 \
  --reps 3 --rounds 1 --finalists 3 --final-reps 5 --report $OUT/tune --db /tmp/tune_new_dims.json
tail -50 $OUT/tune.txt | grep -v "^\s*$" | tail -48
