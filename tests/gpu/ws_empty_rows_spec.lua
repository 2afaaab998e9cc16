-- Rows that see no key on ws tiles (fa2_gpu_tests --empty-rows: causal with
-- seqlen_q > seqlen_k, whole blocks of such rows, seqlen_k = 0; GQA): O = 0,
-- LSE = +inf, the same bits on two launches (bench/gpu_run.sh ws).
return {
  dtype    = { "bf16", "fp16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = {
    { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
    { block_m = 192, block_n = 128, warps = 16, stages = 2, ws = true },
  },
  pass     = { "fwd" },
  arch     = { "sm_90" },
  exclude  = function(v) return v.head_dim == 128 and v.block_m == 192 end,
}
