-- d = 64's forward tiles on Hopper: the wgmma default ("auto"), the ws tile with two
-- consumer warpgroups (m128n128w12s2ws, persistent: the block's start and end hide
-- behind the last item) and with three (m192n128w16s2ws, one item a block: the
-- runtime's length rule before session 17), none and robust, causal and not
-- (bench/gpu_run.sh ws_persistent).
return {
  dtype    = { "bf16" },
  head_dim = { 64 },
  causal   = { false, true },
  stab     = { { mode = "none" }, { mode = "robust", beta = 2, eps = 1e-3 } },
  tiles    = { "auto", { block_m = 128, block_n = 128, warps = 12, stages = 2, ws = true },
               { block_m = 192, block_n = 128, warps = 16, stages = 2, ws = true } },
  pass     = { "fwd" },
  arch     = { "sm_90" },
}
