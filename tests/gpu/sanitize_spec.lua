-- The variants compute-sanitizer checks (bench/gpu_run.sh sanitize): both
-- pipelines (stages 1 and 2), causal and not, every stabilization mode, GQA
-- through the shapes of fa2_gpu_tests --odd-shapes, forward and backward.
return {
  dtype    = { "bf16" },
  head_dim = { 64, 128 },
  causal   = { false, true },
  pass     = { "fwd", "bwd" },
  stab     = { { mode = "none" }, { mode = "robust" } },
  exclude  = function(v) return v.pass == "bwd" and v.stab ~= "none" end,
}
