-- The warp-specialized backward under compute-sanitizer (memcheck, racecheck, synccheck;
-- fa2_gpu_tests --odd-shapes; bench/gpu_run.sh ws_bwd): bf16 d = 64 (each warpgroup's own dQ) and 128 (the block's
-- dS^T shared, double-buffered), causal, windowed, with ALiBi, softcap, varlen and plain, two Q/dO stages. make test
-- compiles it for spills (tests/test_rt_build.c).
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  window   = { false, true },   -- (never causal; fa2_gpu_tests skips every modifier and varlen: tests/gpu/*.py check them)
  alibi    = { false, true },
  softcap  = { false, true },
  varlen   = { false, true },
  pass     = { "bwd" },
  tiles    = { { block_m = 64, block_n = 128, warps = 12, stages = 2, ws = true } },
  arch     = { "sm_90" },
  exclude  = function(v) -- softcap: plain, causal, with ALiBi and (d = 128) a window
    return v.alibi and (v.window or v.varlen) or v.softcap and (v.varlen or v.window and v.head_dim == 64)
  end,
}
