#!/bin/bash
# Session 24, call 8 (main at the commit that hands equal-length varlen batches to the fixed-length call):
# tests/gpu/test_varlen.py with it (the new handover test compares it bit for bit with the varlen kernels, LSE and
# S_dmask included); test_torch_dropin's varlen and flash_attn cases.
set -u
cd "$(dirname "$0")/../../../.."
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1 PYTHONPATH=python:bench FA2_LIB=lib/libfa2rt.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m fa2gen._native >/dev/null
FA2_NATIVE=require timeout 300 python3 -m pytest -q -n 8 tests/gpu/test_varlen.py 2>&1 | tail -n 15
