return {
  dtype = { "bf16" }, head_dim = { 64, 128 }, causal = { false, true },
  stab = { { mode = "none" }, { mode = "paper", beta = 2, eps = 1e-3 }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles = "auto", pass = { "fwd" }, arch = { "sm_90" },
}
