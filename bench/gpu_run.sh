#!/bin/bash
# One call on the GPU machine: checks, the bias suite and the timings, each
# step's raw output under $OUT (copy them to bench/results/<date>_<device>/).
# Build here first (make test-bins), then, through the device tool, carrying
# bin and lib:
#
#   bench/gpu_run.sh [STEP ...]       (default: check bias sdpa_bias perf plots)
#
#   check     bin/fa2_gpu_tests: runtime smoke test, every forward and backward
#             variant of specs/default.lua against float64 over odd shapes
#   startup   the runtime smoke test with its start-up timings only (cold JIT of one
#             variant, the default spec cold in parallel and warm, launch overhead)
#   bias      fa2 bias --gpu (table and JSON), the CPU lab on the same inputs (with
#             Hopper's tensor-core sums on sm_90) and the gap (bench/bias_gap.py)
#   perf      forward and backward TFLOP/s of specs/default.lua (fa2_bench) and
#             PyTorch SDPA flash/cuDNN (sdpa_bench.py) on one shape table
#   plots     speed.png and bias.png from the steps above (bench/plot_results.py)
#   sanitize  compute-sanitizer memcheck and racecheck over the kernel check
#             (tests/gpu/sanitize_spec.lua, fa2_gpu_tests --odd-shapes)
#   layouts   every backward layout (paired and not) and head dim against float64
#             (tests/gpu/bwd_layouts_spec.lua), then timed
#   wgmma     the forward's wgmma tiles against float64 (tests/gpu/wgmma_spec.lua)
#             and under compute-sanitizer, then timed (bench/specs/wgmma_probe.lua)
#             next to the mma.sync defaults (bench/specs/sync_fwd.lua) and SDPA
#   ws_bwd    the warp-specialized backward (templates/bwd_ws.cuh.tpl, sm_90's plain default):
#             tests/gpu/ws_bwd_spec.lua against float64 (normal with the deterministic mode,
#             odd and empty-row shapes), the three sanitizers over
#             tests/gpu/ws_bwd_sanitize_spec.lua, then bench/specs/bwd_ws.lua timed (ws beside
#             the wgmma tiles it replaced)
#   wgmma_bwd the backward's wgmma tiles against float64 (tests/gpu/wgmma_bwd_spec.lua),
#             then timed (bench/specs/wgmma_bwd_probe.lua) next to the mma.sync
#             built-ins and SDPA
#   head_dims head dims past 128 against float64: the wgmma forward at d 192/256,
#             the backward's pair (wgmma) and quad (mma.sync) layouts, every built-in
#             tile d 160-256 (fa2_gpu_tests --spec tests/gpu/head_dims_spec.lua), and
#             every head dim 8..256 through PyTorch (tests/gpu/test_head_dims.py)
#   head_dims16 the head dims 16, 48 and 80 (mma.sync, forward and backward) against
#             float64 (tests/gpu/head_dims16_spec.lua: normal, odd and empty-row
#             shapes), then every head dim 8..256 through PyTorch
#             (tests/gpu/test_head_dims.py) and the varlen kernels at d = 48 and 80
#             (tests/gpu/test_varlen.py)
#   head_dims16_perf  d = 48 and 80 native next to 64 and 96
#             (bench/specs/head_dims16_probe.lua, fa2_bench), and through PyTorch: SDPA
#             flash/cuDNN, fa2gen native and padded to a multiple of 32
#             (sdpa_bench.py fa2gen-none-pad32)
#   head_dims_perf  d = 192 and 256 tiles (bench/specs/head_dims_probe.lua) and the
#             built-ins (specs/full.lua's d 256 bf16 none) timed by fa2_bench next to
#             SDPA flash/cuDNN in the same call; tables per tile and per mode
#   bias_head_dims  fa2 bias --gpu at d 160..256, and through the varlen kernels
#             (each case's heads as 4 sequences of one batch) at d 192 and 256
#   padded_dims  head dims on the next kernel head dim's tiles, columns masked: float64 in C
#             (tests/gpu/padded_dims_spec.lua normal and odd shapes, padded_ws_spec.lua),
#             the masks' cost (bench/specs/padded_cost.lua) and against the Python
#             padding (bench/padded_dims_bench.py)
#   bias_padded_dims  fa2 bias --gpu at d 40, 120, 200 (lab: robust <= 0.021), fixed and
#             varlen, and d 160, 224 at the suite's 256 heads
#   wgmma_wider  head dims 33-48 on d = 64's wgmma, ws and backward tiles on sm_90: float64
#             over tests/gpu/wgmma_wider_spec.lua (normal and odd shapes), the bias at d 40
#             on them, and against the old padding to 64 (bench/padded_dims_bench.py --dims 40)
#   varlen_ncu  ncu's full set of the fixed and the equal-length varlen forward of the same
#             data (bench/varlen_ncu.py): d = 128 N = 1k and d = 64 N = 4k, causal
#   tune_head_dims  fa2 tune over bench/specs/tune_head_dims.lua (d 192/256, fixed and
#             varlen keys; a dry run: report only, no database written)
#   ws        the warp-specialized forward (ws tiles, TMA; templates/fwd_ws.cu.tpl):
#             tests/gpu/ws_spec.lua against float64 (all shapes, then the empty-row
#             ones; ws_check alone), then bench/specs/ws_probe.lua timed (ws tiles and
#             the wgmma default of each key) with SDPA flash/cuDNN: bench/ws_compare.py's
#             table (ws_perf alone)
#   suites    every correctness check at once, no timings: all of tests/gpu/*.py on 8
#             pytest-xdist workers beside fa2_gpu_tests on the default spec, the head
#             dims past 128 and the ws tiles (forward and backward)
#   ws_sanitize compute-sanitizer memcheck, racecheck and synccheck over the odd
#             shapes on tests/gpu/ws_sanitize_spec.lua
#   ws_persistent the persistent ws forward: tests/gpu/ws_spec.lua against float64 on
#             one block per SM and on the full grid (FA2_PERSISTENT=0), empty rows, the
#             three sanitizers on the normal shapes (more work items than SMs), then
#             fa2_bench of d = 128's default (bench/specs/ws_default.lua) persistent and
#             on the full grid, and $WS_BASE_BENCH (another build's fa2_bench) if set;
#             bench/ab_ratio.py's ratios; d = 64's wgmma default beside the persistent
#             two-consumer ws tile (bench/specs/ws_d64_short.lua)
#   ws_ncu    ncu (speed of light, pipes, warp states, scheduler) of one N = 8k launch:
#             the d = 128 and d = 64 ws tiles and the d = 128 wgmma default (after ws)
#   bwd_modes the d = 64 backward after a `none` and after a `robust` forward through
#             Python (sdpa_bench.py --backward), in both orders, N = 512 and 1k
#   modes     the cost of `paper` and `robust` over `none`: the three modes of each
#             default forward tile interleaved, two calls of 15 rounds each
#             (bench/mode_cost.py takes the median of both)
#   tpl_ab    two template folders timed by this binary: fa2_bench --spec $TPL_SPEC
#             (default specs/default.lua) with FA2_TEMPLATES=$TPL_BASE (default templates)
#             and =$TPL_TEST, alternating three times; bench/ab_ratio.py's time ratios
#             (an experiment's templates without a build of its own: make a folder with
#             `git archive COMMIT templates | tar -x -C DIR --strip-components=1`)
#   delta32   the fp32-delta option's time: fa2_bench over the default spec's
#             `none` variants, three calls without and three with --fp32-delta,
#             alternating; ratio table by bench/ab_ratio.py
#   sweep     backward tile candidates (bench/specs/bwd_sweep.lua), timed
#   python    the Python binding against PyTorch (bench/py_smoke.py)
#   empty_rows rows that see no key (causal, seqlen_q > seqlen_k; seqlen_k = 0) on
#             both tile families, every head dim to 128, both dtypes, forward
#             (two launches, same bits) and backward (tests/gpu/empty_rows_spec.lua)
#   dropin    the trainer drop-in through PyTorch (tests/gpu/test_torch_dropin.py):
#             accuracy and empty rows through the custom ops, flash_attn's API,
#             torch.compile (explain, three modes), export, opcheck, CUDA graphs,
#             transformers (Llama, Qwen2, Mistral, GPT-2 against sdpa)
#   dropout   attention dropout (tests/gpu/test_dropout.py: the mask against the C host
#             definition, kept fraction, outputs and gradients against float64 with the
#             call's mask, generator state, CUDA graphs, compile, varlen), then its cost
#             (bench/dropout_bench.py: fa2gen and SDPA flash, with and without p = 0.1);
#             the kernels built ahead with 16 threads (bench/specs/dropout_gpu.lua)
#   train     bench/train_gpt.py compiled: SDPA flash, SDPA cuDNN, fa2gen none and
#             robust in turn ($TRAIN_SECONDS each, default 60), tokens/s table
#   sinks     attention sinks through PyTorch (tests/gpu/test_sinks.py): float64 per mode
#             and tile family with windows/ALiBi/softcap, empty rows, deterministic
#             bits, varlen, opcheck, compiled training, gpt-oss through transformers
#   modifiers the cost of softcap, ALiBi and sinks: fa2gen with and without each, and
#             FlexAttention (compiled) doing the same (bench/modifiers_bench.py; a
#             --warm-only pass first fills the kernel caches)
#   windows   causal sliding windows W = 128 ... 16k at N = 16k, d = 128: fa2gen
#             against FlexAttention, forward and forward + backward (bench/window_bench.py;
#             $WINDOW_LIB another build, $AB_TAG a suffix of the files)
#   modifier_checks  every score modifier through PyTorch against float64 (ALiBi, softcap,
#             windows, the d = 96 and 128 backward with each in both dQ paths, sinks, dropout,
#             varlen), then fa2_gpu_tests on the default spec and the head dims past 128
#   varlen    variable-length batches against float64 (tests/gpu/test_varlen.py whole, the
#             varlen cases of the sinks, dropout and drop-in files), then
#             bench/varlen_bench.py (equal lengths against the fixed-length call; the
#             realistic mix against FlexAttention, torch's varlen and padding)
#   lib_ab    another build ($AB_BASE, default build/base_lib/libfa2rt.so: make one from
#             an older commit) against $AB_TEST (default lib/libfa2rt.so) through PyTorch
#             (bench/lib_ab.py: plain, each modifier, deterministic, d 64/128/256;
#             $AB_DIMS the head dims, $AB_TAG a suffix of the files; $AB_CASES, $AB_TOKENS and
#             $AB_SEQLEN are its --cases, --tokens and --seqlen), alternating runs; ratios
#   bwd_breakdown the backward's kernels, fa2gen against SDPA flash and cuDNN, under
#             torch.profiler (bench/bwd_breakdown.py at head dims $AB_DIMS, N 1k and 4k)
#   wide_bwd  the backward's wide layouts through PyTorch (every modifier, both dQ
#             paths, d 96..256; dropout past d = 128)
#   sdpa_ab   this build against $AB_BASE (default build/base_lib/libfa2rt.so) through
#             bench/sdpa_bench.py with SDPA flash and cuDNN in the same runs, forward and
#             backward at head dims $AB_DIMS (default 192,256), N 512..16k; two rounds,
#             medians (bench/sdpa_ab.py); $SB_INNER calls per timed region (default 1:
#             the host's time counts; 5: queued, GPU-bound), $AB_TAG a suffix of the files
#   multi_device the operators off the default device and stream
#             (tests/gpu/test_multi_device.py; the cuda:1 parts skip on one GPU)
#   cold_start 4 processes on one empty kernel cache (bench/cold_start.py): each
#             kernel compiled once, counters per rank, a fresh process loads all;
#             against one rank alone
#   ddp       bench/train_gpt.py --ddp, fa2gen robust and SDPA flash: one rank, then
#             two and every GPU of the machine with the scaling efficiency ($DDP_STEPS
#             each mode, default 500, at most $DDP_SECONDS, default 90; NVLink
#             multicast off)
#   fsdp      bench/train_gpt.py --fsdp (FSDP2, fullgraph per block) on every GPU,
#             same modes and length, scaling against the ddp step's one rank
#   sdpa_bias the bias suite's inputs through PyTorch SDPA flash/cuDNN and fa2gen
#   determ    the backward in deterministic mode, timed (after perf: compared with SDPA)
#   tune      fa2 tune over specs/default.lua (tiles and beta, report and plot),
#             then the runtime's forward and backward without and with its database
#   tune_sweep the wider manual sweep (bench/specs/tune_sweep.lua), and the tuned
#             choices against it (needs tune's tune.json: $TUNE_JSON or $OUT/tune)
#
# Each step runs under a time limit and says how long it took; the summary
# table prints last. With BUNDLE=1 every file under $OUT also goes into
# $OUT/all.tgz at the end, and nothing else stays there (the device tool brings
# back only a few files of a call); build/commit.txt, when there, is copied in
# first (write it with `git rev-parse HEAD > build/commit.txt` and carry it).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fa2_gpu_out}
mkdir -p "$OUT"
export FA2_CACHE_DIR=/tmp/fa2cache PYTHONUNBUFFERED=1
steps=${*:-check bias sdpa_bias perf plots}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
  --format=csv >"$OUT/device.txt" 2>&1
[ -f build/commit.txt ] && cp build/commit.txt "$OUT/"
if [ "${BUNDLE:-0}" = 1 ]; then # everything into one archive on exit, whatever ends the run
  trap 'tar czf /tmp/fa2_gpu_all.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete &&
        mv /tmp/fa2_gpu_all.tgz "$OUT/all.tgz"' EXIT
fi
python3 -c 'import torch; print("torch", torch.__version__)' >>"$OUT/device.txt" 2>&1
date -u +%FT%TZ >>"$OUT/device.txt"

# The CPU lab and the dumped suite place ties against the key tiles of this
# GPU's default variants, as fa2 bias --gpu does.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
arch=sm_${cc:-80}

summary=()
step() { # step NAME LIMIT_S command...
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  summary+=("$(printf '%-16s rc=%-3d %4ds  %s' "$name" "$rc" $((SECONDS - t0)) "$(tail -n 1 "$OUT/$name.txt")")")
}

for s in $steps; do
  case $s in
  check) step check 420 bin/fa2_gpu_tests --bench ;;
  startup) step startup 180 bin/fa2_gpu_tests --bench --smoke-only ;;
  bias)
    step bias_gpu 240 bin/fa2 bias --gpu
    step bias_gpu_json 240 bin/fa2 bias --gpu --json
    step bias_cpu 300 bin/fa2 bias -j 16 --arch "$arch"
    step bias_cpu_json 300 bin/fa2 bias -j 16 --arch "$arch" --json
    step bias_gap 60 python3 bench/bias_gap.py "$OUT/bias_gpu_json.txt" "$OUT/bias_cpu_json.txt"
    ;;
  sdpa_bias)
    step bias_dump 120 bin/fa2 bias --dump /tmp/fa2_bias_inputs --arch "$arch"
    step bias_vs_sdpa 300 env PYTHONPATH=python FA2_LIB=lib/libfa2rt.so python3 bench/bias_vs_sdpa.py /tmp/fa2_bias_inputs --json "$OUT/bias_vs_sdpa.json"
    ;;
  perf)
    step fa2_bench 420 bin/fa2_bench --spec specs/default.lua --json "$OUT/fa2_bench.json" --reps 10 --rounds 3
    step sdpa_bench 300 python3 bench/sdpa_bench.py --backward --json "$OUT/sdpa.json"
    step compare_fwd 60 python3 bench/compare.py "$OUT/fa2_bench.json" "$OUT/sdpa.json" --markdown
    step compare_bwd 60 python3 bench/compare.py "$OUT/fa2_bench.json" "$OUT/sdpa.json" --markdown --backward
    ;;
  determ)
    step fa2_bench_det 300 bin/fa2_bench --spec specs/default.lua --only bwd --deterministic --json "$OUT/fa2_bench_det.json" --reps 10 --rounds 3
    [ -s "$OUT/sdpa.json" ] && step compare_det 60 python3 bench/compare.py "$OUT/fa2_bench_det.json" "$OUT/sdpa.json" --markdown --backward
    ;;
  layouts)
    step check_layouts 300 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/bwd_layouts_spec.lua
    step bwd_layouts 300 bin/fa2_bench --spec tests/gpu/bwd_layouts_spec.lua --json "$OUT/bwd_layouts.json" --reps 10 --rounds 3
    ;;
  wgmma)
    step check_wgmma 300 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/wgmma_spec.lua
    step memcheck_wgmma 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
      bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/wgmma_sanitize_spec.lua
    step racecheck_wgmma 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
      bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/wgmma_sanitize_spec.lua
    step wgmma_bench 300 bin/fa2_bench --spec bench/specs/wgmma_probe.lua --json "$OUT/wgmma_bench.json" --reps 10 --rounds 3
    step sync_bench 300 bin/fa2_bench --spec bench/specs/sync_fwd.lua --json "$OUT/sync_bench.json" --reps 10 --rounds 3
    step sdpa_fwd 300 python3 bench/sdpa_bench.py --json "$OUT/sdpa_fwd.json"
    step compare_wgmma 60 python3 bench/compare.py "$OUT/wgmma_bench.json" "$OUT/sdpa_fwd.json" --markdown
    step compare_sync 60 python3 bench/compare.py "$OUT/sync_bench.json" "$OUT/sdpa_fwd.json" --markdown
    ;;
  ws_bwd)
    step check_ws_bwd 200 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_bwd_spec.lua
    step check_ws_bwd_odd 60 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_bwd_spec.lua
    step check_ws_bwd_empty 60 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/ws_bwd_spec.lua
    for tool in memcheck racecheck synccheck; do
      step "${tool}_ws_bwd" 200 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_bwd_sanitize_spec.lua
    done
    step ws_bwd_bench 200 bin/fa2_bench --spec bench/specs/bwd_ws.lua --json "$OUT/ws_bwd_bench.json" --rounds 3
    ;;
  wgmma_bwd)
    step check_wgmma_bwd 300 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/wgmma_bwd_spec.lua
    for tool in memcheck racecheck synccheck; do
      step "${tool}_wgmma_bwd" 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/wgmma_bwd_sanitize_spec.lua
    done
    step wgmma_bwd_bench 300 bin/fa2_bench --spec bench/specs/wgmma_bwd_probe.lua --json "$OUT/wgmma_bwd_bench.json" --reps 10 --rounds 3
    step sync_bwd_bench 300 bin/fa2_bench --spec specs/default.lua --only bwd --json "$OUT/sync_bwd_bench.json" --reps 10 --rounds 3
    [ -s "$OUT/sdpa.json" ] || step sdpa_bench 300 python3 bench/sdpa_bench.py --backward --json "$OUT/sdpa.json"
    step compare_wgmma_bwd 60 python3 bench/compare.py "$OUT/wgmma_bwd_bench.json" "$OUT/sdpa.json" --markdown --backward
    step compare_sync_bwd 60 python3 bench/compare.py "$OUT/sync_bwd_bench.json" "$OUT/sdpa.json" --markdown --backward
    ;;
  head_dims)
    step check_head_dims 300 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/head_dims_spec.lua
    step test_head_dims 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -rA tests/gpu/test_head_dims.py tests/gpu/test_torch_dropin.py -k "head_dim"
    ;;
  bwd_breakdown) step bwd_breakdown 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 bench/bwd_breakdown.py --head-dims "${AB_DIMS:-192,256}" ;;
  wide_bwd)
    # the backward's wide layouts (pair, quad) through PyTorch: every score modifier in
    # both dQ paths at d 96..256, dropout's cases past d = 128 (the head-dim grid: head_dims)
    step wide_bwd 420 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rA -n 8 \
      tests/gpu/test_torch_dropin.py tests/gpu/test_dropout.py -k "backward_modifiers or d160 or d192 or d256"
    ;;
  head_dims16)
    step head_dims16_check 400 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/head_dims16_spec.lua
    step head_dims16_odd 300 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/head_dims16_spec.lua
    step head_dims16_empty 300 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/head_dims16_spec.lua
    step head_dims16_torch 400 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -n 8 tests/gpu/test_head_dims.py
    step head_dims16_varlen 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -n 4 tests/gpu/test_varlen.py -k "48 or 80"
    ;;
  head_dims16_perf)
    step head_dims16_bench 300 bin/fa2_bench --spec bench/specs/head_dims16_probe.lua \
      --json "$OUT/head_dims16_bench.json" --reps "${HD_REPS:-10}" --rounds "${HD_ROUNDS:-3}"
    step sdpa_head_dims16 400 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/sdpa_bench.py \
      --backward --head-dims 48,80 --backends flash,cudnn,fa2gen-none,fa2gen-none-pad32 \
      --reps "${HD_REPS:-10}" --json "$OUT/sdpa_head_dims16.json"
    for p in fwd bwd; do
      step "compare_head_dims16_$p" 60 python3 bench/compare.py "$OUT/head_dims16_bench.json" \
        "$OUT/sdpa_head_dims16.json" --markdown --by-variant $([ $p = bwd ] && echo --backward)
    done
    ;;
  head_dims_perf)
    step head_dims_bench 300 bin/fa2_bench --spec bench/specs/head_dims_probe.lua \
      --json "$OUT/head_dims_bench.json" --reps "${HD_REPS:-10}" --rounds "${HD_ROUNDS:-3}"
    step sdpa_head_dims 300 python3 bench/sdpa_bench.py --backward --head-dims 192,256 \
      --reps "${HD_REPS:-10}" --json "$OUT/sdpa_head_dims.json"
    for p in fwd bwd; do
      step "compare_head_dims_$p" 60 python3 bench/compare.py "$OUT/head_dims_bench.json" \
        "$OUT/sdpa_head_dims.json" --markdown --by-variant $([ $p = bwd ] && echo --backward)
    done
    ;;
  bias_head_dims)
    step bias_head_dims 600 bin/fa2 bias --gpu --head-dims 160,192,224,256
    step bias_head_dims_varlen 600 bin/fa2 bias --gpu --varlen --head-dims 192,256
    ;;
  padded_dims)
    step padded_check 300 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/padded_dims_spec.lua
    step padded_odd 120 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/padded_dims_spec.lua
    step padded_ws 120 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/padded_ws_spec.lua
    step padded_cost 120 bin/fa2_bench --spec bench/specs/padded_cost.lua --reps 5 --rounds 2 --seqlen 4096
    step padded_bench 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python:bench python3 bench/padded_dims_bench.py
    ;;
  bias_padded_dims)
    step bias_padded 300 bin/fa2 bias --gpu --head-dims 40,120,200 -j 16
    step bias_padded_varlen 300 bin/fa2 bias --gpu --varlen --head-dims 40,120,200 -j 16
    step bias_160_224 300 bin/fa2 bias --gpu --head-dims 160,224 -j 16
    ;;
  wgmma_wider)
    step wider_check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/wgmma_wider_spec.lua
    step wider_odd 100 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/wgmma_wider_spec.lua
    step bias_wider 300 bin/fa2 bias --gpu --head-dims 40 -j 16
    step wider_bench 150 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python:bench python3 bench/padded_dims_bench.py --dims 40
    ;;
  varlen_ncu)
    for shape in 16,1024,16,128 4,4096,32,64; do
      step "varlen_ncu_${shape//,/_}" 240 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
        "$(command -v ncu || echo /usr/local/cuda/bin/ncu)" --kernel-name regex:fa2_fwd --launch-skip 2 \
        --launch-count 2 --set full --import-source no python3 bench/varlen_ncu.py --shape "$shape" --causal
    done
    ;;
  tune_head_dims) step tune_head_dims 600 bin/fa2 tune bench/specs/tune_head_dims.lua --no-beta \
      --dry-run -j 16 --report "$OUT/tune_head_dims" --db /tmp/fa2_tune_head_dims.json ;;
  ws|ws_check)
    # Built here in parallel (the checks then load the cubins); a kernel that
    # hangs ends its program after 20 s (gpu_sync).
    # (A failed build leaves no folder: the programs then compile the spec themselves.)
    step build_ws 90 bin/fa2 build tests/gpu/ws_spec.lua -o /tmp/fa2_ws -j 16
    check="--src /tmp/fa2_ws"
    [ -d /tmp/fa2_ws/sm_90 ] || check="--spec tests/gpu/ws_spec.lua"
    step check_ws 130 bin/fa2_gpu_tests --no-smoke $check
    step empty_rows_ws 60 bin/fa2_gpu_tests --no-smoke --empty-rows $check
    ;;&
  ws|ws_perf)
    step build_ws_probe 90 bin/fa2 build bench/specs/ws_probe.lua -o /tmp/fa2_ws_probe -j 16
    probe="--src /tmp/fa2_ws_probe"
    [ -d /tmp/fa2_ws_probe/sm_90 ] || probe="--spec bench/specs/ws_probe.lua"
    step ws_bench 120 bin/fa2_bench $probe --json "$OUT/ws_bench.json" --reps 10 --rounds 3
    [ -s "$OUT/sdpa_fwd.json" ] || step sdpa_fwd 90 python3 bench/sdpa_bench.py --json "$OUT/sdpa_fwd.json"
    step ws_compare 30 python3 bench/ws_compare.py "$OUT/ws_bench.json" "$OUT/sdpa_fwd.json"
    ;;
  ws_check|ws_perf) ;;
  suites)
    # Correctness of everything at once, no timings: every PyTorch GPU suite on 8
    # pytest-xdist workers sharing one kernel cache (each kernel compiled once)
    # beside the C checks: the default spec, the head dims past 128, the ws tiles (forward
    # and backward).
    ( t0=$SECONDS
      timeout "${SUITES_LIMIT:-480}" env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
        python3 -m pytest -q -rfEsx -n 8 -p no:cacheprovider tests/gpu >"$OUT/pytest_suites.txt" 2>&1
      printf '%-16s rc=%-3d %4ds  %s\n' pytest_suites $? $((SECONDS - t0)) \
        "$(tail -n 1 "$OUT/pytest_suites.txt")" >"$OUT/.pytest_summary" ) &
    step check 150 bin/fa2_gpu_tests --bench
    step check_head_dims 200 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/head_dims_spec.lua
    step build_ws 60 bin/fa2 build tests/gpu/ws_spec.lua -o /tmp/fa2_ws -j 8
    step check_ws 100 bin/fa2_gpu_tests --no-smoke --src /tmp/fa2_ws
    step check_ws_bwd 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_bwd_spec.lua
    step empty_rows_ws 40 bin/fa2_gpu_tests --no-smoke --empty-rows --src /tmp/fa2_ws
    wait
    summary+=("$(cat "$OUT/.pytest_summary" 2>/dev/null || echo 'pytest_suites    no summary')")
    rm -f "$OUT/.pytest_summary"
    ;;
  ws_ncu)
    [ -d /tmp/fa2_ws_probe/sm_90 ] || step build_ws_probe 90 bin/fa2 build bench/specs/ws_probe.lua -o /tmp/fa2_ws_probe -j 16
    for v in d128_m128n128w12s2ws_none d64_m128n128w12s2ws_none d128_m64n96w4s2wg_none; do
      step "ncu_$v" 120 "$(command -v ncu || echo /usr/local/cuda/bin/ncu)" --kernel-name regex:fa2_fwd --launch-count 1 --section SpeedOfLight \
        --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        bin/fa2_bench --src /tmp/fa2_ws_probe --only "fwd_bf16_$v" --seqlen 8192 --reps 1 --rounds 1
    done
    ;;
  bwd_modes)
    for order in fa2gen-none,fa2gen-robust fa2gen-robust,fa2gen-none; do
      step "bwd_modes_${order%%,*}_first" 150 env PYTHONPATH=python FA2_LIB=lib/libfa2rt.so \
        python3 bench/sdpa_bench.py --backward --backends "$order" --head-dims 64 \
        --seqlens 512,1024 --reps 30 --json "$OUT/bwd_modes_${order%%,*}_first.json"
    done
    ;;
  ws_sanitize)
    step build_ws_san 60 bin/fa2 build tests/gpu/ws_sanitize_spec.lua -o /tmp/fa2_ws_san -j 16
    for tool in memcheck racecheck synccheck; do
      step "${tool}_ws" "${SANITIZE_LIMIT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        bin/fa2_gpu_tests --no-smoke --odd-shapes --src /tmp/fa2_ws_san
    done
    ;;
  ws_persistent)
    step ws_check 150 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_spec.lua
    step ws_check_odd 100 bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/ws_spec.lua
    step ws_empty_rows 100 bin/fa2_gpu_tests --no-smoke --empty-rows --spec tests/gpu/ws_empty_rows_spec.lua
    step ws_check_full_grid 150 env FA2_PERSISTENT=0 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_spec.lua
    for tool in memcheck racecheck synccheck; do
      step "${tool}_ws_pers" 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        bin/fa2_gpu_tests --no-smoke --spec tests/gpu/ws_sanitize_spec.lua
    done
    for i in 1 2 3; do
      step "ws_pers_$i" 60 env FA2_PERSISTENT=1 bin/fa2_bench --spec bench/specs/ws_default.lua \
        --json "$OUT/ws_pers_$i.json" --reps 10 --rounds 2
      step "ws_grid_$i" 60 env FA2_PERSISTENT=0 bin/fa2_bench --spec bench/specs/ws_default.lua \
        --json "$OUT/ws_grid_$i.json" --reps 10 --rounds 2
      [ -z "${WS_BASE_BENCH:-}" ] || step "ws_base_$i" 60 "$WS_BASE_BENCH" --spec bench/specs/ws_default.lua \
        --json "$OUT/ws_base_$i.json" --reps 10 --rounds 2
    done
    step ws_ratio_grid 60 python3 bench/ab_ratio.py --title "persistent / full grid" \
      --base "$OUT"/ws_grid_*.json --test "$OUT"/ws_pers_*.json
    [ -z "${WS_BASE_BENCH:-}" ] || step ws_ratio_base 60 python3 bench/ab_ratio.py \
      --title "persistent / $WS_BASE_BENCH" --base "$OUT"/ws_base_*.json --test "$OUT"/ws_pers_*.json
    step ws_d64_short 120 bin/fa2_bench --spec bench/specs/ws_d64_short.lua --json "$OUT/ws_d64_short.json" \
      --reps 10 --rounds 3
    ;;
  modes)
    # The default spec's forward tiles, from the generator (they move with gen/defaults.lua).
    tiles=$(bin/fa2 list specs/default.lua |
      sed -n 's/^fwd_.*_\(m[0-9]*n[0-9]*w[0-9]*s[0-9]*\(wg\)\{0,1\}\)_none .*/\1/p' | sort -u)
    for i in 1 2; do
      for tile in $tiles; do
        step "modes_${tile}_$i" 200 bin/fa2_bench --spec specs/default.lua --only "$tile" --reps 5 \
          --rounds 15 --json "$OUT/modes_${tile}_$i.json"
      done
    done
    step mode_cost 60 python3 bench/mode_cost.py "$OUT"/modes_*.json
    ;;
  delta32)
    for i in 1 2 3; do
      for opt in plain fp32; do
        step "delta32_${opt}_$i" 200 bin/fa2_bench --spec specs/default.lua --only _none \
          --reps 5 --rounds 4 --json "$OUT/delta32_${opt}_$i.json" $([ $opt = fp32 ] && echo --fp32-delta)
      done
    done
    step delta32_ratio 60 python3 bench/ab_ratio.py --title "fp32 delta / plain" \
      --base "$OUT"/delta32_plain_*.json --test "$OUT"/delta32_fp32_*.json
    ;;
  tpl_ab)
    [ -n "${TPL_TEST:-}" ] || { echo "gpu_run.sh tpl_ab: set TPL_TEST to a template folder" >&2; exit 2; }
    for i in 1 2 3; do
      for side in base test; do
        dir=${TPL_BASE:-templates}
        [ $side = test ] && dir=$TPL_TEST
        step "tpl_${side}_$i" 300 env FA2_TEMPLATES="$dir" bin/fa2_bench --spec "${TPL_SPEC:-specs/default.lua}" \
          --reps 10 --rounds 2 --json "$OUT/tpl_${side}_$i.json"
      done
    done
    step tpl_ratio 60 python3 bench/ab_ratio.py --title "${TPL_TITLE:-$TPL_TEST / ${TPL_BASE:-templates}}" \
      --base "$OUT"/tpl_base_*.json --test "$OUT"/tpl_test_*.json
    ;;
  sweep) step bwd_sweep 300 bin/fa2_bench --spec bench/specs/bwd_sweep.lua --json "$OUT/bwd_sweep.json" --reps 10 --rounds 3 ;;
  empty_rows) step empty_rows 480 bin/fa2_gpu_tests --no-smoke --empty-rows \
      --spec tests/gpu/empty_rows_spec.lua ;;
  dropin) step dropin 540 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -rA -s tests/gpu/test_torch_dropin.py ;;
  dropout)
    step dropout_aot 60 bin/fa2 build bench/specs/dropout_gpu.lua -j 16 -o /tmp/fa2_dropout_aot
    step dropout_tests 110 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python FA2_AOT_DIR=/tmp/fa2_dropout_aot \
      python3 -m pytest -q -rA -s tests/gpu/test_dropout.py
    step dropout_bench 60 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python FA2_AOT_DIR=/tmp/fa2_dropout_aot \
      python3 bench/dropout_bench.py --json "$OUT/dropout_bench.json"
    ;;
  train) step train 570 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/train_gpt.py \
      --modes sdpa-flash,sdpa-cudnn,none,robust --seconds "${TRAIN_SECONDS:-60}" --out "$OUT/train" ;;
  sinks) step sinks 420 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -rA -s tests/gpu/test_sinks.py ;;
  modifiers)
    step modifiers_warm 420 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/modifiers_bench.py --warm-only
    step modifiers_bench 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/modifiers_bench.py \
      --json "$OUT/modifiers_bench.json"
    ;;
  windows)
    # the window-size table at N = 16k against FlexAttention (bench/window_bench.py),
    # with $WINDOW_LIB (default lib/libfa2rt.so); $AB_TAG a suffix of the files
    step "window_bench${AB_TAG:-}" 400 env FA2_LIB="${WINDOW_LIB:-lib/libfa2rt.so}" PYTHONPATH=python:bench \
      python3 bench/window_bench.py --json "$OUT/window_bench${AB_TAG:-}.json"
    ;;
  modifier_checks)
    # every modifier through PyTorch against float64 (ALiBi, softcap, windows, the d = 96 and 128
    # backward with each, both dQ paths; sinks, dropout, varlen), then the default spec
    # and the head dims past 128 (the wgmma backward) in fa2_gpu_tests
    # (-k applies to every file named: the drop-in file's modifier tests, then the
    # modifier files whole)
    step modifier_checks 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rA -n 8 \
      tests/gpu/test_torch_dropin.py -k "alibi or softcap or window or backward_modifiers"
    step modifier_files 420 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rA -n 8 \
      tests/gpu/test_sinks.py tests/gpu/test_dropout.py tests/gpu/test_varlen.py
    step check 420 bin/fa2_gpu_tests
    step check_head_dims 420 bin/fa2_gpu_tests --no-smoke --spec tests/gpu/head_dims_spec.lua
    ;;
  varlen)
    step varlen_checks 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 -m pytest -q -rA -n 8 \
      tests/gpu/test_varlen.py tests/gpu/test_sinks.py tests/gpu/test_dropout.py tests/gpu/test_torch_dropin.py \
      -k "varlen or equal_lengths"
    step varlen_bench 200 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python:bench python3 bench/varlen_bench.py \
      --json "$OUT/varlen_bench.json"
    ;;
  lib_ab)
    # $AB_BASE (another build's libfa2rt.so, default build/base_lib/libfa2rt.so) against
    # lib/libfa2rt.so through PyTorch (bench/lib_ab.py): one warm-up run each, then
    # base, test, base, test; the ratio table
    base=${AB_BASE:-build/base_lib/libfa2rt.so} test=${AB_TEST:-lib/libfa2rt.so} tag=${AB_TAG:-}
    ab=(env PYTHONPATH=python:bench python3 bench/lib_ab.py --run --cases "${AB_CASES:-}"
        --tokens "${AB_TOKENS:-16384}" --seqlen "${AB_SEQLEN:-4096}" --head-dims "${AB_DIMS:-64,128,256}" --json)
    step "ab_warm_base$tag" 420 env FA2_LIB="$base" "${ab[@]}" /tmp/ab_warm_base.json
    step "ab_warm_test$tag" 420 env FA2_LIB="$test" "${ab[@]}" /tmp/ab_warm_test.json
    for i in 1 2; do
      step "ab_base$tag$i" 120 env FA2_LIB="$base" "${ab[@]}" "$OUT/ab_base$tag$i.json"
      step "ab_test$tag$i" 120 env FA2_LIB="$test" "${ab[@]}" "$OUT/ab_test$tag$i.json"
    done
    step "lib_ab$tag" 30 python3 bench/lib_ab.py --base "$OUT"/ab_base"$tag"?.json \
      --test "$OUT"/ab_test"$tag"?.json --title "${AB_TITLE:-this build / base}"
    ;;
  sdpa_ab)
    # fa2gen none with this build (and SDPA flash, cuDNN) and with $AB_BASE through
    # bench/sdpa_bench.py, forward and backward at head dims $AB_DIMS (default 192,256),
    # alternating twice; bench/sdpa_ab.py's table of medians
    base=${AB_BASE:-build/base_lib/libfa2rt.so} dims=${AB_DIMS:-192,256} tag=${AB_TAG:-}
    sb=(python3 bench/sdpa_bench.py --backward --head-dims "$dims" --reps "${HD_REPS:-10}"
        --inner "${SB_INNER:-1}")
    for i in 1 2; do
      step "sdpa_test$tag$i" 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python "${sb[@]}" \
        --backends flash,cudnn,fa2gen-none --json "$OUT/sdpa_test$tag$i.json"
      step "sdpa_base$tag$i" 200 env FA2_LIB="$base" PYTHONPATH=python "${sb[@]}" \
        --backends fa2gen-none --json "$OUT/sdpa_base$tag$i.json"
    done
    step "sdpa_ab$tag" 30 python3 bench/sdpa_ab.py --test "$OUT"/sdpa_test"$tag"?.json \
      --base "$OUT"/sdpa_base"$tag"?.json
    ;;
  multi_device) step multi_device 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python \
      python3 -m pytest -q -rA tests/gpu/test_multi_device.py ;;
  cold_start) step cold_start 300 env FA2_LIB=lib/libfa2rt.so python3 bench/cold_start.py \
      --ranks "${COLD_RANKS:-4}" --json "$OUT/cold_start.json" ;;
  ddp | fsdp)
    # torchrun, NVLink multicast off; the one-rank ddp run is every scaling's baseline
    ngpu=$(nvidia-smi -L | wc -l)
    dist=(env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python NCCL_NVLS_ENABLE=0
          TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
          python3 -m torch.distributed.run --standalone)
    # a fixed number of steps, so the modes' losses compare at the same step
    train=(bench/train_gpt.py --modes robust,sdpa-flash --steps "${DDP_STEPS:-500}"
           --seconds "${DDP_SECONDS:-90}")
    base=${DDP_BASELINE:-$OUT/ddp/summary_ddp1.json}
    if [ "$s" = ddp ]; then
      step ddp_1 200 "${dist[@]}" --nproc_per_node=1 "${train[@]}" --ddp --out "$OUT/ddp"
      for n in 2 4 8; do  # 2 ranks, then every GPU of a larger machine
        [ "$n" -le "$ngpu" ] && { [ "$n" -eq 2 ] || [ "$n" -eq "$ngpu" ]; } &&
          step "ddp_$n" 240 "${dist[@]}" --nproc_per_node="$n" "${train[@]}" --ddp \
            --out "$OUT/ddp" --baseline "$base"
      done
    else
      step "fsdp_$ngpu" 240 "${dist[@]}" --nproc_per_node="$ngpu" "${train[@]}" --fsdp \
        --out "$OUT/fsdp" $([ -s "$base" ] && echo --baseline "$base")
    fi
    ;;
  python) step py_smoke 300 env FA2_LIB=lib/libfa2rt.so PYTHONPATH=python python3 bench/py_smoke.py ;;
  plots) step plots 120 python3 bench/plot_results.py "$OUT" ;;
  tune)
    step tune 420 bin/fa2 tune --report "$OUT/tune" -j 16
    step tune_show 30 bin/fa2 tune --show
    step tune_plot 120 python3 bench/plot_tune.py "$OUT/tune"
    fwd_bwd=(python3 bench/sdpa_bench.py --backward --backends fa2gen-none,fa2gen-robust,fa2gen-tuned
             --seqlens 1024,2048,4096,8192,16384)
    step tune_before 300 env FA2_TUNING_DB=off PYTHONPATH=python FA2_LIB=lib/libfa2rt.so "${fwd_bwd[@]}" --json "$OUT/tune/before.json"
    step tune_after 300 env PYTHONPATH=python FA2_LIB=lib/libfa2rt.so "${fwd_bwd[@]}" --json "$OUT/tune/after.json"
    step tune_effect 60 python3 bench/tune_check.py effect "$OUT/tune/before.json" "$OUT/tune/after.json"
    ;;
  tune_sweep)
    step tune_wide 560 bin/fa2 tune bench/specs/tune_sweep.lua --wide --dry-run --no-beta \
      --reps 3 --rounds 2 --shapes 1024,4096,16384 --budget 300 -j 16 --report "$OUT/wide" \
      --db /tmp/fa2_wide.json
    step tune_check 60 python3 bench/tune_check.py sweep "${TUNE_JSON:-$OUT/tune/tune.json}" "$OUT/wide/tune.json"
    ;;
  sanitize)
    for tool in memcheck racecheck; do
      step "sanitize_$tool" 500 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        bin/fa2_gpu_tests --no-smoke --odd-shapes --spec tests/gpu/sanitize_spec.lua
    done
    ;;
  *) echo "gpu_run.sh: unknown step '$s' (check, startup, bias, sdpa_bias, perf, determ, head_dims, head_dims16, head_dims16_perf, head_dims_perf, bias_head_dims, padded_dims, bias_padded_dims, wgmma_wider, varlen_ncu, tune_head_dims, suites, empty_rows, dropin, dropout, sinks, modifiers, modifier_checks, varlen, lib_ab, sdpa_ab, bwd_breakdown, wide_bwd, train, multi_device, cold_start, ddp, fsdp, layouts, wgmma, wgmma_bwd, ws, ws_check, ws_perf, ws_sanitize, ws_persistent, ws_ncu, bwd_modes, modes, tpl_ab, delta32, sweep, python, plots, sanitize, tune, tune_sweep)" >&2; exit 2 ;;
  esac
done

cat "$OUT/device.txt"
for f in lib_ab lib_ab${AB_TAG:-} window_bench${AB_TAG:-} dropout_bench varlen_bench modifiers_bench tune tune_effect tune_check ws_compare compare_head_dims16_fwd compare_head_dims16_bwd compare_head_dims_fwd compare_head_dims_bwd compare_wgmma compare_sync compare_wgmma_bwd compare_sync_bwd compare_fwd compare_bwd compare_det; do [ -s "$OUT/$f.txt" ] && cat "$OUT/$f.txt"; done
[ -s "$OUT/bias_gpu.txt" ] && cat "$OUT/bias_gpu.txt"
[ -s "$OUT/bias_vs_sdpa.txt" ] && cat "$OUT/bias_vs_sdpa.txt"
printf '%s\n' "${summary[@]}"
