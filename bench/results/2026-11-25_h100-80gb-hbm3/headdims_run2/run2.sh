#!/bin/bash
# headdims GPU run 2 (final evidence): float64 checks of the new kernels, the GPU
# bias suite at the new head dims (fixed and varlen), tiles and built-ins timed
# against SDPA flash/cuDNN in one call, and fa2 tune covering d 256 + varlen.
set -u
cd "$(dirname "$0")"
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c 'import torch; print("torch", torch.__version__)'; date -u +%FT%TZ; } > "$OUT/device.txt" 2>&1
T0=$SECONDS
sed 's/pass     = { "fwd", "bwd" },/pass = { "fwd" },/' tests/gpu/head_dims_spec.lua > /tmp/hd_fwd.lua
sed 's/pass     = { "fwd", "bwd" },/pass = { "bwd" },/' tests/gpu/head_dims_spec.lua > /tmp/hd_bwd.lua
bg() { local name=$1 lim=$2; shift 2; ( timeout "$lim" "$@" > "$OUT/$name.txt" 2>&1; echo "rc=$? at $((SECONDS - T0))s" >> "$OUT/$name.txt" ) & }
bg check_fwd 125 bin/fa2_gpu_tests --no-smoke --spec /tmp/hd_fwd.lua
bg check_bwd 125 bin/fa2_gpu_tests --no-smoke --spec /tmp/hd_bwd.lua
bg bias_192 125 bin/fa2 bias --gpu --head-dims 192 --heads 128
bg bias_256 125 bin/fa2 bias --gpu --head-dims 256 --heads 128
bg bias_192_varlen 125 bin/fa2 bias --gpu --varlen --head-dims 192 --heads 128
bg bias_256_varlen 125 bin/fa2 bias --gpu --varlen --head-dims 256 --heads 128
bg bias_160_224 125 bin/fa2 bias --gpu --head-dims 160,224 --heads 64
wait
echo "phase A done at $((SECONDS - T0))s"
timeout 75 bin/fa2_bench --spec bench/specs/head_dims_probe.lua --json "$OUT/hd_bench.json" --reps 8 --rounds 3 > "$OUT/hd_bench.txt" 2>&1; echo "bench rc=$? at $((SECONDS - T0))s"
timeout 40 python3 bench/sdpa_bench.py --backward --head-dims 192,256 --seqlens 512,1024,2048,4096,8192,16384 --reps 8 --json "$OUT/sdpa_hd.json" > "$OUT/sdpa_hd.txt" 2>&1; echo "sdpa rc=$? at $((SECONDS - T0))s"
sed 's/head_dim = { 192, 256 },/head_dim = { 256 },/; s/causal   = { false, true },/causal = { false },/' bench/specs/tune_head_dims.lua > /tmp/tune_hd.lua
TL=$((285 - (SECONDS - T0))); [ $TL -lt 5 ] && TL=5; timeout $TL bin/fa2 tune /tmp/tune_hd.lua --no-beta --dry-run -j 16 --shapes 2048 --reps 2 --rounds 1 --finalists 0 --report "$OUT/tune_hd" --db /tmp/fa2_tune_hd.json > "$OUT/tune_hd.txt" 2>&1; echo "tune rc=$? at $((SECONDS - T0))s"
for p in fwd bwd; do
  python3 bench/compare.py "$OUT/hd_bench.json" "$OUT/sdpa_hd.json" --by-variant $([ $p = bwd ] && echo --backward) > "$OUT/cmp_$p.txt" 2>&1
done
grep -hE "failure|rc=" "$OUT"/check_*.txt
for f in "$OUT"/bias_*.txt; do echo "$(basename $f): max|robust bias| $(awk '$4 == "robust" || $5 == "robust" {for (i=1;i<=NF;i++) if ($i=="robust") {b=$(i+1); if (b<0) b=-b; if (b>m) m=b}} END {print m}' $f) $(grep -c NaN $f) $(tail -1 $f)"; done
grep -hE "^(fwd|bwd)_bf16_d256.* (1024|16384) " "$OUT/cmp_fwd.txt" "$OUT/cmp_bwd.txt" | awk '{print $1, $2, $3, $6, $7}' | head -60
tail -12 "$OUT/tune_hd.txt"
cd "$OUT" && tar czf all.tgz *.txt *.json tune_hd 2>/dev/null; ls "$OUT"
