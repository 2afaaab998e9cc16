#!/bin/bash
# Session 26, call 2: call 1's illegal instruction under compute-sanitizer memcheck (one variant, odd shapes). It named
# the 1-d TMA load of LSE and delta: a box must start on 16 bytes, and a head's LSE rows start anywhere; they now go by
# cp.async (build/s26/one_d64.lua: bf16 d = 64 non-causal m64n128w12s2ws).
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "cs: $CS"
timeout 200 $CS --tool memcheck --show-backtrace no bin/fa2_gpu_tests --spec build/s26/one_d64.lua --no-smoke --odd-shapes 2>&1 | head -40 | cut -c1-250
