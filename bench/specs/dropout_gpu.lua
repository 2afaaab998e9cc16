-- The kernels of tests/gpu/test_dropout.py and bench/dropout_bench.py on Hopper,
-- compiled ahead on the GPU machine's 16 cores (`gpu_run.sh dropout`: fa2 build -j 16,
-- then FA2_AOT_DIR), so the step's time goes to the checks and timings. The dropout
-- variants of head dims 32..128 (causal, windows; varlen at 64 and 128), and the plain
-- bf16 variants the p = 0 test and the timings compare with. Spills allowed: the d = 128
-- window backward spills with or without dropout (bench/NOTES.md "Dropout").
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 32, 64, 96, 128 },
  causal   = { false, true },
  window   = { false, true },
  varlen   = { false, true },
  dropout  = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = "auto",
  pass     = { "fwd", "bwd" },
  arch     = { "sm_90" },
  allow_spills = true,
  exclude  = function(v)
    if v.varlen and (v.window or v.head_dim == 32 or v.head_dim == 96) then return true end
    return not v.dropout and (v.dtype == "fp16" or v.window or v.varlen or v.head_dim == 32
      or v.head_dim == 96)
  end,
}
