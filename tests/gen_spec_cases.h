/* Bad specs, one per error class, with the pieces their message must hold
 * (key path, bad value, what is allowed). Shared by test_gen_spec.c (the
 * library) and test_gen_cli.c (fa2: exit 2, nothing written). */
#ifndef GEN_SPEC_CASES_H
#define GEN_SPEC_CASES_H
#include <stddef.h>

typedef struct spec_case {
  const char *text;
  const char *want[3];
} spec_case;

#define OK_AXES "dtype = {'bf16'}, head_dim = {64}"

static const spec_case spec_cases[] = {
    /* unknown key, missing key, not a table */
    {"return { " OK_AXES ", heads = 3 }", {"heads = 3: unknown key", "allowed: allow_spills, arch"}},
    {"return { " OK_AXES ", [1] = 2 }", {"[1] = 2: unknown key"}},
    {"return { head_dim = {64} }", {"dtype: missing", "dtype = { \"bf16\" }"}},
    {"return { dtype = {'bf16'} }", {"head_dim: missing"}},
    {"return 5", {"the spec must return a table, got 5"}},
    /* values */
    {"return { dtype = {'bf16'}, head_dim = {64, 100} }",
     {"head_dim[2] = 100", "not a supported head dim", "allowed: multiples of 8 from 8 to 256 (tiles for 16, 32, 48, 64, 80, 96, 128, 160, 192, 224, 256)"}},
    {"return { dtype = {'bf16'}, head_dim = {44} }", {"head_dim[1] = 44", "allowed: multiples of 8 from 8"}},
    {"return { dtype = {'bf16'}, head_dim = {264} }", {"head_dim[1] = 264", "multiples of 8 from 8 to 256"}},
    {"return { dtype = {'bf16'}, head_dim = {64.5} }", {"head_dim[1] = 64.5", "expected an integer"}},
    {"return { dtype = {'bf32'}, head_dim = {64} }", {"dtype[1] = \"bf32\"", "allowed: bf16, fp16"}},
    {"return { " OK_AXES ", arch = {'sm_80', 'sm_99'} }",
     {"arch[2] = \"sm_99\"", "not a supported arch", "allowed: sm_80, sm_86"}},
    {"return { " OK_AXES ", stab = {{ mode = 'paper', beta = 1 }} }",
     {"stab[1].beta = 1", "beta > 1"}},
    {"return { " OK_AXES ", stab = {{ mode = 'robust', beta = 0.5 }} }",
     {"stab[1].beta = 0.5", "beta > 1"}},
    {"return { " OK_AXES ", stab = {{ mode = 'robust', eps = 0 }} }", {"stab[1].eps = 0", "eps > 0"}},
    {"return { " OK_AXES ", stab = {{ mode = 'robust', eps = -1e-3 }} }",
     {"stab[1].eps = -0.001", "eps > 0"}},
    {"return { " OK_AXES ", stab = {{ mode = 'paper', beta = 0/0 }} }", {"stab[1].beta = nan"}},
    /* the kernels hold beta and eps in float32 */
    {"return { " OK_AXES ", stab = {{ mode = 'paper', beta = 1.00000001 }} }",
     {"stab[1].beta = 1.00000001", "beta > 1"}},
    {"return { " OK_AXES ", stab = {{ mode = 'paper', beta = 1e300 }} }", {"stab[1].beta = 1e+300"}},
    {"return { " OK_AXES ", stab = {{ mode = 'robust', eps = 1e-50 }} }", {"stab[1].eps = 1e-50"}},
    {"return { " OK_AXES ", stab = {{ mode = 'paper', eps = math.huge }} }", {"stab[1].eps = inf"}},
    {"return { " OK_AXES ", stab = {{ mode = 'fancy' }} }",
     {"stab[1].mode = \"fancy\"", "allowed: none, paper, robust"}},
    {"return { " OK_AXES ", stab = {{ mode = 'none', beta = 2 }} }",
     {"stab[1].beta = 2", "not used with mode \"none\""}},
    {"return { " OK_AXES ", stab = {{ mode = 'paper', gamma = 2 }} }",
     {"stab[1].gamma = 2", "unknown stab key", "mode, beta, eps"}},
    {"return { dtype = {'bf16'}, head_dim = {160}, pass = {'bwd'},\n"
     "  tiles = {{block_m=32, block_n=64, warps=8, stages=2}} }",
     {"tiles[1].warps = 8", "cannot split its 160 columns into whole pairs of 8",
      "allowed: fewer warps, or a larger block_m"}},
    {"return { " OK_AXES ", pass = {'bwd'}, tiles = {{block_m=64, block_n=64, warps=4, stages=1}} }",
     {"tiles[1].stages = 1", "double-buffers", "allowed: 2 or 3"}},
    {"return { " OK_AXES ", pass = {'both'} }", {"pass[1] = \"both\"", "allowed: fwd, bwd"}},
    /* control characters in a value are escaped: the message stays one line */
    {"return { dtype = {'bf16\\nfoo'}, head_dim = {64} }",
     {"dtype[1] = \"bf16\\nfoo\": not a supported dtype; allowed: bf16, fp16"}},
    /* tiles */
    {"return { " OK_AXES ", tiles = {{ block_m = 48, block_n = 64, warps = 4, stages = 2 }} }",
     {"tiles[1].block_m = 48", "4 warps cannot tile 48 query rows", "64, 128 or 256"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 512, block_n = 64, warps = 4, stages = 2 }} }",
     {"tiles[1].block_m = 512", "cannot tile"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 128, block_n = 64, warps = 3, stages = 2 }} }",
     {"tiles[1].warps = 3", "allowed: 1, 2, 4, 8"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 128, block_n = 72, warps = 4, stages = 2 }} }",
     {"tiles[1].block_n = 72", "multiples of 16 from 16 to 256"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 128, block_n = 64, warps = 4, stages = 0 }} }",
     {"tiles[1].stages = 0", "1 to 4"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 128, block_n = 64, warps = 4 }} }",
     {"tiles[1] = {block_m=128, block_n=64, warps=4}", "missing stages"}},
    {"return { " OK_AXES ", tiles = {{ block_m = 128, block_n = 64, warps = 4, stages = 2, x = 1 }} }",
     {"tiles[1].x = 1", "unknown tile key"}},
    {"return { " OK_AXES ", tiles = 'big' }", {"tiles = \"big\"", "\"auto\""}},
    {"return { " OK_AXES ", tiles = { block_m = 128, block_n = 64, warps = 4, stages = 2 } }",
     {"tiles = {", "wrap it in { }"}},
    {"return { dtype = {'bf16'}, head_dim = {256},\n"
     "  tiles = {{ block_m = 128, block_n = 128, warps = 4, stages = 2 }} }",
     {"tiles[1] = {block_m=128, block_n=128, stages=2, warps=4}", "need 337920 bytes",
      "sm_80 allows 166912"}},
    {"return { dtype = {'bf16'}, head_dim = {160}, arch = {'sm_86'} }",
     {"tiles = \"auto\"", "129024 bytes", "sm_86 allows 101376"}},
    /* wgmma tiles: Hopper only, whole warpgroups, a boolean */
    {"return { " OK_AXES ", tiles = {{ block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = true }} }",
     {"tiles[1] = {block_m=64, block_n=64, stages=2, warps=4, wgmma=true}",
      "wgmma tiles run on sm_90 only", "allowed: wgmma tiles with arch = { \"sm_90\" } only"}},
    {"return { " OK_AXES ", arch = {'sm_90'},\n"
     "  tiles = {{ block_m = 128, block_n = 64, warps = 4, stages = 2, wgmma = true }} }",
     {"tiles[1].block_m = 128", "a wgmma tile's warpgroups take 64 query rows", "allowed: 64 with warps = 4"}},
    {"return { " OK_AXES ", arch = {'sm_90'},\n"
     "  tiles = {{ block_m = 64, block_n = 64, warps = 4, stages = 2, wgmma = 1 }} }",
     {"tiles[1].wgmma = 1", "expected a boolean"}},
    /* types and list shapes */
    {"return { dtype = 'bf16', head_dim = {64} }", {"dtype = \"bf16\"", "expected a list"}},
    {"return { dtype = {'bf16'}, head_dim = {} }", {"head_dim = {}", "non-empty list"}},
    {"return { dtype = {'bf16'}, head_dim = {64, nil, 128} }", {"head_dim[2] = nil", "a hole"}},
    {"return { dtype = {'bf16'}, head_dim = {64, x = 1} }", {"head_dim.x = 1", "not a list entry"}},
    {"return { " OK_AXES ", causal = {1} }", {"causal[1] = 1", "expected a boolean"}},
    {"return { " OK_AXES ", dropout = {0.1} }", {"dropout[1] = 0.1", "expected a boolean", "true, false"}},
    {"return { " OK_AXES ", stab = {{ mode = 'none' }, 'paper'} }", {"stab[2] = \"paper\"", "expected a table"}},
    {"return { " OK_AXES ", stab = { mode = 'none' } }", {"stab = {mode=\"none\"}", "wrap it in { }"}},
    {"return { " OK_AXES ", allow_spills = 'yes' }", {"allow_spills = \"yes\"", "expected a boolean"}},
    {"return { " OK_AXES ", exclude = true }", {"exclude = true", "expected a function"}},
    /* exclude */
    {"return { " OK_AXES ", exclude = function(v) return true end }", {"exclude drops every variant"}},
    {"return { " OK_AXES ", exclude = function(v) return 'no' end }",
     {"exclude returned \"no\"", "true (drop it), false or nil"}},
    {"return { " OK_AXES ",\n  exclude = function(v)\n    return v.x.y\n  end }",
     {"s.lua:3: attempt to index a nil value", "in exclude, for variant fwd_bf16_d64"}},
    /* Lua problems and the sandbox */
    {"return {", {"s.lua:1:", "expected"}},
    {"\x1bLua", {"s.lua: attempt to load a binary chunk"}},
    {"return { dtype = { string.rep('x', 1000) }, head_dim = {64} }",
     {"dtype[1] = \"xxxxxxxxxx", "...\" (1000 bytes): not a supported dtype"}},
    {"local x = 1\nerror('my own error')", {"s.lua:2: my own error"}},
    {"error('a\\nb\\tc')", {"s.lua:1: a\\nb\\tc"}}, /* one line, escaped */
    {"error({ code = 0, msg = 'spoof' })", {"the spec raised {code=0, msg=\"spoof\"}"}},
    {"local t = os.time()\nreturn {}", {"s.lua:1: 'os' is not available in specs"}},
    {"\nio.write('x')", {"s.lua:2: 'io' is not available in specs"}},
    {"require('socket')", {"s.lua:1: 'require' is not available in specs"}},
    {"load('return 1')()", {"s.lua:1: 'load' is not available in specs"}},
    {"dofile('/etc/passwd')", {"s.lua:1: 'dofile' is not available in specs"}},
    {"loadstring('x')", {"s.lua:1: 'loadstring' is not available in specs"}},
    {"rawset(_ENV, 'x', 1)", {"s.lua:1: 'rawset' is not available in specs"}},
    {"setmetatable({}, {})", {"s.lua:1: 'setmetatable' is not available in specs"}},
    {"debug.traceback()", {"s.lua:1: 'debug' is not available in specs"}},
    {"package.loaded.x = 1", {"s.lua:1: 'package' is not available in specs"}},
    {"local x = unknwon_name", {"s.lua:1: 'unknwon_name' is not available in specs"}},
    {"while true do end", {"s.lua:1: gave up after", "endless loop"}},
    {"local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end",
     {"s.lua", "not enough memory"}},
};
#define N_SPEC_CASES (sizeof spec_cases / sizeof spec_cases[0])

#endif
