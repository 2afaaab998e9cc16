#!/bin/bash
# headdims GPU run 1: correctness of the new kernels, then first timings.
# (The carry lacked tests/gpu/ref_attention.cu: fa2_gpu_tests and fa2_bench stopped
# at "cannot read tests/gpu/ref_attention.cu"; the pytest half and SDPA ran.)
set -u
cd "$(dirname "$0")"
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__)' >> "$OUT/device.txt" 2>&1
T0=$SECONDS
( timeout 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/head_dims_spec.lua > "$OUT/check_head_dims.txt" 2>&1; echo "rc=$? ${SECONDS}s" >> "$OUT/check_head_dims.txt" ) &
( timeout 150 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rfE -p no:cacheprovider \
    tests/gpu/test_head_dims.py > "$OUT/test_head_dims.txt" 2>&1; echo "rc=$? ${SECONDS}s" >> "$OUT/test_head_dims.txt" ) &
wait
echo "correctness done at $((SECONDS - T0))s"
timeout 80 bin/fa2_bench --spec bench/specs/head_dims_probe.lua --json "$OUT/hd_bench.json" --reps 4 --rounds 2 > "$OUT/hd_bench.txt" 2>&1; echo "bench rc=$? at $((SECONDS - T0))s"
timeout 40 python3 bench/sdpa_bench.py --backward --head-dims 192,256 --seqlens 1024,2048,4096,8192,16384 --reps 5 --json "$OUT/sdpa_hd.json" > "$OUT/sdpa_hd.txt" 2>&1; echo "sdpa rc=$? at $((SECONDS - T0))s"
