/* fa2 tune: the pieces of the command (cli_tune.c drives them). */
#ifndef CLI_TUNE_H
#define CLI_TUNE_H
#include "lab.h"

/* One row of the beta calibration: a mode and beta on the tie suite of one
 * head dim (mode none: the baseline, beta 0). */
typedef struct cli_beta_row {
  int head_dim;
  lab_mode mode;
  double beta;
  double max_abs_bias; /* largest |bias ratio| over the suite's cases */
  long long nans;      /* NaN/Inf outputs over the suite */
  double err_ratio;    /* mean |error| over the suite / the same for none */
  int eligible;        /* no NaN/Inf and err_ratio <= CLI_BETA_MAX_ERR_RATIO */
} cli_beta_row;

#define CLI_BETA_MAX_ERR_RATIO 1.5

/* Runs the suite for each head dim (ties against block_n[i]) and beta on the
 * GPU kernels, with the tuning database db ("off": built-in tiles). Fills
 * rows[n_hd * (1 + 2 * n_betas)]: per head dim, none, then paper and robust
 * for each beta. Returns 0, or 1 with the reason printed. */
int cli_tune_beta(const char *db, lab_dtype t, const int *head_dims, const int *block_n,
                  int n_hd, const double *betas, int n_betas, double eps, cli_beta_row *rows);

#endif
