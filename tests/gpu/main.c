/* fa2_gpu_tests: the generated kernels on a real GPU. Without a CUDA device
 * it prints one "skipped" line and exits 0.
 *
 *   fa2_gpu_tests [--spec FILE | --src DIR] [--bench] [--no-smoke | --smoke-only]
 *                 [--odd-shapes | --empty-rows]
 *
 * 1. Runtime smoke test: fa2_forward end to end (JIT, caches, launch) against
 *    a float64 CPU attention (tests/gpu/rt_smoke.c); --bench adds start-up
 *    timings; --smoke-only stops after it.
 * 2. Kernel check: every forward variant of --spec (default
 *    specs/default.lua), or the sources DIR/fwd_*.cu named by canonical name
 *    (--src), against float64 references computed on the GPU over the shapes
 *    below (tests/gpu/fwd_check.c); then every backward variant of the spec
 *    against float64 reference gradients (tests/gpu/bwd_check.c). Run from
 *    the repository root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_check.h"
#include "fwd_check.h"
#include "gen.h"
#include "rt_smoke.h"

/* batch, heads_q, heads_kv, seqlen_q, seqlen_k, packed QKV */
static const fwd_shape shapes[] = {
    {1, 1, 1, 1, 1, 0},          {1, 1, 1, 17, 17, 0},      {3, 12, 12, 128, 128, 0},
    {1, 12, 12, 1000, 1000, 1},  {3, 8, 2, 1000, 1000, 0},  {1, 8, 2, 4097, 4097, 0},
    {1, 1, 1, 17, 128, 0},       {1, 1, 1, 128, 17, 0},     {3, 12, 12, 1, 4097, 0},
    {1, 12, 12, 4097, 4097, 1},
};

/* --odd-shapes: the few that cover every boundary (seqlen 1, 17, 4097, GQA,
 * Nq != Nk, packed) at a size compute-sanitizer gets through in minutes. */
static const fwd_shape odd_shapes[] = {
    {1, 1, 1, 1, 1, 0},   {1, 2, 1, 17, 17, 1},     {2, 4, 2, 17, 128, 0},
    {1, 1, 1, 128, 17, 0}, {1, 2, 2, 4097, 4097, 0},
};

/* --empty-rows: causal with seqlen_q > seqlen_k (bottom-right: the first
 * seqlen_q - seqlen_k rows see no key, whole query blocks among them) and
 * seqlen_k = 0; GQA and not. O must be 0 and LSE +inf there, same bits twice. */
static const fwd_shape empty_row_shapes[] = {
    {8, 9, 9, 239, 1, 0},   {8, 9, 3, 799, 3, 0},   {2, 4, 4, 512, 127, 0},
    {2, 4, 2, 513, 127, 0}, {2, 4, 4, 256, 108, 0}, {2, 4, 1, 512, 256, 0},
    {1, 4, 4, 1024, 128, 0}, {2, 3, 3, 300, 0, 0},  {1, 1, 1, 17, 17, 0},
};

static void report_bwd(void *ctx, const bwd_variant *v, const fwd_shape *s, const bwd_result *r) {
  printf("%-40s b%d h%d/%d q%-5d k%-5d%s  dq %.2e/%.2e  dk %.2e/%.2e  dv %.2e/%.2e  %s%s%s\n",
         v->name, s->batch, s->heads_q, s->heads_kv, s->seqlen_q, s->seqlen_k,
         r->fp32_delta ? " fp32-delta" : r->deterministic ? " determ." : "", r->err[0], r->plain[0],
         r->err[1], r->plain[1], r->err[2], r->plain[2], r->pass ? "ok" : "FAIL",
         r->bad_values ? " (NaN/unwritten)" : "",
         r->deterministic ? (r->bit_identical ? " (same bits twice)" : " (bits differ between runs)") : "");
  fflush(stdout);
}

static void report(void *ctx, const fwd_variant *v, const fwd_shape *s, const fwd_result *r) {
  printf("%-52s b%d h%d/%d q%-5d k%-5d%s  err %.3e  plain %.3e  lse %.1e  %s%s%s\n", v->name,
         s->batch, s->heads_q, s->heads_kv, s->seqlen_q, s->seqlen_k, s->packed ? " packed" : "",
         r->max_err, r->plain_err, r->lse_err, r->pass ? "ok" : "FAIL",
         r->bad_values ? " (NaN/unwritten values)" : "",
         r->same_bits ? "" : " (bits differ between two runs)");
  if (r->unbalanced > 0) printf("  %lld elements differ from the lab's balanced rounding\n", r->unbalanced);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *src_dir = NULL, *spec = "specs/default.lua";
  int bench = 0, smoke = 1, smoke_only = 0, odd = 0, empty = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--src") && i + 1 < argc) src_dir = argv[++i];
    else if (!strcmp(argv[i], "--spec") && i + 1 < argc) spec = argv[++i];
    else if (!strcmp(argv[i], "--bench")) bench = 1;
    else if (!strcmp(argv[i], "--no-smoke")) smoke = 0;
    else if (!strcmp(argv[i], "--smoke-only")) smoke_only = 1;
    else if (!strcmp(argv[i], "--odd-shapes")) odd = 1;
    else if (!strcmp(argv[i], "--empty-rows")) empty = 1;
    else {
      int help = !strcmp(argv[i], "--help");
      fprintf(help ? stdout : stderr,
              "usage: fa2_gpu_tests [--spec FILE | --src DIR] [--bench] [--no-smoke | --smoke-only] "
              "[--odd-shapes | --empty-rows]\n");
      return help ? 0 : 2;
    }
  }
  gpu g;
  char err[512];
  int rc = gpu_open(&g, err, sizeof err);
  if (rc == 1) {
    printf("fa2_gpu_tests: skipped: no CUDA device (%s)\n", err);
    return 0;
  }
  if (rc != 0) return 1;
  printf("fa2_gpu_tests: %s (%s, %d SMs)\n", g.name, g.arch, g.sms);

  int failures = smoke ? rt_smoke(g.cu, bench) : 0;
  if (smoke) printf("fa2_gpu_tests: runtime smoke test: %d failure(s)\n", failures);
  if (smoke_only) return failures ? 1 : 0;

  fwd_variant *vars;
  int n_vars = src_dir ? gpu_load_variants(&g, src_dir, &vars) : gpu_render_variants(&g, spec, &vars);
  if (n_vars < 0 || (src_dir && n_vars == 0)) {
    fprintf(stderr, "fa2_gpu_tests: no forward variant loaded from %s\n", src_dir ? src_dir : spec);
    return 1;
  }
#define N_OF(a) (int)(sizeof a / sizeof *a)
  const fwd_shape *sh = odd ? odd_shapes : empty ? empty_row_shapes : shapes;
  const int n_shapes = odd ? N_OF(odd_shapes) : empty ? N_OF(empty_row_shapes) : N_OF(shapes);
  int kf = n_vars ? fwd_check(&g, vars, n_vars, sh, n_shapes, report, NULL) : 0;
  if (kf < 0) {
    printf("fa2_gpu_tests: CUDA failure (see above)\n");
    return 1;
  }
  printf("fa2_gpu_tests: kernel check: %d variant(s) x %d shape(s): %d failure(s)\n", n_vars,
         n_shapes, kf);
  failures += kf;
  if (!src_dir) {
    bwd_variant *bv;
    int n_bwd = gpu_render_bwd_variants(&g, spec, &bv);
    if (n_bwd < 0) return 1;
    int bf = n_bwd ? bwd_check(&g, bv, n_bwd, sh, n_shapes, report_bwd, NULL) : 0;
    if (bf < 0) {
      printf("fa2_gpu_tests: CUDA failure (see above)\n");
      return 1;
    }
    printf("fa2_gpu_tests: backward check: %d variant(s) x %d shape(s): %d failure(s)\n", n_bwd,
           n_shapes, bf);
    failures += bf;
  }
  printf("fa2_gpu_tests: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
