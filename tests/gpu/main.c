/* fa2_gpu_tests: the generated kernels against the float64 reference on a
 * real GPU. Without a CUDA device it prints one "skipped" line and exits 0.
 *
 *   fa2_gpu_tests [--src DIR]
 *
 * --src DIR: test the sources DIR/fwd_*.cu (named by canonical variant name)
 * instead of rendering specs/default.lua. Run from the repository root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_check.h"

static const fwd_shape shapes[] = {
    {1, 1, 1, 1, 1, 0},          {1, 1, 1, 17, 17, 0},      {3, 12, 12, 128, 128, 0},
    {1, 12, 12, 1000, 1000, 1},  {3, 8, 2, 1000, 1000, 0},  {1, 8, 2, 4097, 4097, 0},
    {1, 1, 1, 17, 128, 0},       {1, 1, 1, 128, 17, 0},     {3, 12, 12, 1, 4097, 0},
    {1, 12, 12, 4097, 4097, 1},
};

static void report(void *ctx, const fwd_variant *v, const fwd_shape *s, const fwd_result *r) {
  printf("%-52s b%d h%d/%d q%-5d k%-5d%s  err %.3e  plain %.3e  lse %.1e  %s%s\n", v->name,
         s->batch, s->heads_q, s->heads_kv, s->seqlen_q, s->seqlen_k, s->packed ? " packed" : "",
         r->max_err, r->plain_err, r->lse_err, r->pass ? "ok" : "FAIL",
         r->bad_values ? " (NaN/unwritten values)" : "");
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *src_dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--src") && i + 1 < argc) src_dir = argv[++i];
    else if (!strcmp(argv[i], "--help")) {
      printf("usage: fa2_gpu_tests [--src DIR]\n");
      return 0;
    } else {
      fprintf(stderr, "fa2_gpu_tests: unknown argument '%s'\n", argv[i]);
      return 2;
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
  if (!src_dir) {
    printf("fa2_gpu_tests: no variants (pass --src DIR)\n");
    return 1;
  }

  fwd_variant *vars;
  int n_vars = gpu_load_variants(&g, src_dir, &vars);
  if (n_vars <= 0) {
    fprintf(stderr, "fa2_gpu_tests: no variant loaded from %s\n", src_dir);
    return 1;
  }
  int failures = fwd_check(&g, vars, n_vars, shapes, (int)(sizeof shapes / sizeof *shapes), report, NULL);
  if (failures < 0) {
    printf("fa2_gpu_tests: CUDA failure (see above)\n");
    return 1;
  }
  printf("fa2_gpu_tests: %d variant(s) x %d shape(s): %d failure(s)\n", n_vars,
         (int)(sizeof shapes / sizeof *shapes), failures);
  return failures ? 1 : 0;
}
