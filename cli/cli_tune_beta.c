/* fa2 tune: beta calibration on the tie suite of `fa2 bias --gpu`. The
 * suite runs once per head dim with every beta (the float64 reference is
 * computed once per case); the rule that picks a beta is cli_tune.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli_bias.h"
#include "cli_tune.h"

enum { SEED = 1 };
static const lab_mode MODES[3] = {LAB_NONE, LAB_PAPER, LAB_ROBUST};

int cli_tune_beta(const char *db, lab_dtype t, const int *head_dims, const int *block_n,
                  int n_hd, const double *betas, int n_betas, double eps, cli_beta_row *rows) {
  cli_bias_gpu *g;
  char err[600];
  int rc = cli_bias_gpu_open(&g, db, err, sizeof err);
  if (rc) {
    fprintf(stderr, "fa2 tune: beta calibration: %s%s\n", rc > 0 ? "no GPU: " : "", err);
    return 1;
  }
  const int per = 3 * n_betas;
  lab_result *res = malloc(sizeof *res * (size_t)(CLI_BIAS_N_SUITE * per));
  rc = res ? 0 : (fprintf(stderr, "fa2 tune: out of memory\n"), 1);
  cli_beta_row *row = rows;
  const int seqlen = cli_bias_seqlen(block_n, n_hd); /* as fa2 bias on these tiles */
  for (int h = 0; !rc && h < n_hd; h++) {
    lab_case cases[CLI_BIAS_N_SUITE];
    cli_bias_suite(head_dims[h], block_n[h], seqlen, CLI_BIAS_HEADS, cases);
    for (int i = 0; !rc && i < CLI_BIAS_N_SUITE; i++) {
      lab_inputs in;
      if (lab_inputs_make(&cases[i], t, SEED, &in) != 0) {
        fprintf(stderr, "fa2 tune: cannot make the suite's inputs (%d keys, key tiles of %d; "
                        "or out of memory)\n", seqlen, block_n[h]);
        rc = 1;
        break;
      }
      if (cli_bias_gpu_run(g, &cases[i], &in, MODES, 3, betas, n_betas, eps,
                           res + i * per, err, sizeof err) != 0) {
        fprintf(stderr, "fa2 tune: beta calibration: %s\n", err);
        rc = 1;
      }
      lab_inputs_free(&in);
      if (isatty(2)) fprintf(stderr, "\rfa2 tune: beta calibration d=%d: %d/%d cases   ", head_dims[h], i + 1, CLI_BIAS_N_SUITE);
    }
    if (rc) break;
    /* none's mean |error| over the suite (the same for every beta) */
    double none_err = 0;
    for (int i = 0; i < CLI_BIAS_N_SUITE; i++) none_err += res[i * per].err.mean_abs_err;
    for (int b = -1; b < n_betas; b++)
      for (int m = b < 0 ? 0 : 1; m < (b < 0 ? 1 : 3); m++) {
        cli_beta_row r = {head_dims[h], MODES[m], b < 0 ? 0 : betas[b], 0, 0, 0, 0};
        double e = 0;
        for (int i = 0; i < CLI_BIAS_N_SUITE; i++) {
          const lab_result *x = &res[i * per + (b < 0 ? 0 : b) * 3 + m];
          r.max_abs_bias = fmax(r.max_abs_bias, fabs(x->err.bias_ratio));
          r.nans += x->err.nan_count;
          e += x->err.mean_abs_err;
        }
        r.err_ratio = none_err > 0 ? e / none_err : 1;
        r.eligible = r.nans == 0 && r.err_ratio <= CLI_BETA_MAX_ERR_RATIO;
        *row++ = r;
      }
  }
  if (isatty(2)) fprintf(stderr, "\r%60s\r", "");
  free(res);
  cli_bias_gpu_close(g);
  return rc;
}
