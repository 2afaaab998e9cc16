/* fa2 bias: the suite's cases and the backends that measure them. */
#ifndef CLI_BIAS_H
#define CLI_BIAS_H
#include "lab.h"

/* The GPU backend: runs the generated forward kernels (through libfa2rt:
 * JIT, caches) on a case's inputs and scores them like the CPU lab. */
typedef struct cli_bias_gpu cli_bias_gpu;

/* Opens device 0 with the tuning database tuning_db (NULL: the default
 * one; "off": built-in tiles). Returns 0, 1 when there is no usable GPU (why in err),
 * -1 on a CUDA or runtime failure (why in err). */
int cli_bias_gpu_open(cli_bias_gpu **out, const char *tuning_db, char *err, size_t errlen);
void cli_bias_gpu_close(cli_bias_gpu *g);
const char *cli_bias_gpu_name(const cli_bias_gpu *g);
/* The device's arch, e.g. "sm_90" (its default tiles are the ones used). */
const char *cli_bias_gpu_arch(const cli_bias_gpu *g);

/* 0: fixed-length calls; n: each case's heads split over n sequences of one
 * variable-length batch (cu_seqlens), run through the varlen kernels: the same
 * attention, so the same scores (fa2 bias --gpu --varlen). */
enum { CLI_BIAS_VARLEN_SEQS = 4 };
void cli_bias_gpu_set_varlen(cli_bias_gpu *g, int sequences);
/* The seed of mode balanced's draws (fa2_round_draw; offset 0), the lab's. */
void cli_bias_gpu_set_seed(cli_bias_gpu *g, unsigned long long seed);

/* Measures one case's inputs in every mode (as lab_run_cpu) for each of
 * betas[n_betas]: results[b * n_modes + m]. The float64 reference is
 * computed once. Returns 0 or -1 (why in err). */
int cli_bias_gpu_run(cli_bias_gpu *g, const lab_case *c, const lab_inputs *in,
                     const lab_mode *modes, int n_modes, const double *betas, int n_betas,
                     double eps, lab_result *results, char *err, size_t errlen);

/* The suite: CLI_BIAS_N_SUITE cases per head dim, ties placed against the
 * key tile block_n. CLI_BIAS_HEADS heads per case by default: each row is a
 * sample, and with 64 heads the single-maximum case's bias ratio under
 * `robust` moved by +-0.03 from seed to seed (its expected value is 0), as
 * wide as the 0.03 the issue allows; 256 halve that. */
enum { CLI_BIAS_N_SUITE = 9, CLI_BIAS_HEADS = 256 };
void cli_bias_suite(int head_dim, int block_n, int seqlen, int heads, lab_case *out);
/* The modifier cases of `fa2 bias` (softcap, ALiBi, window, sinks: lab_suite.c),
 * CLI_BIAS_N_MODIFIERS per head dim, after the suite's; fa2 tune leaves them out. */
enum { CLI_BIAS_N_MODIFIERS = 4 };
void cli_bias_modifier_suite(int head_dim, int block_n, int seqlen, int heads, lab_case *out);
/* The suite's default length for key tiles block_n[0..n): 256 keys, or two
 * whole tiles of the widest (the cross-tile case needs two) in multiples of
 * 128. */
int cli_bias_seqlen(const int *block_n, int n);

/* fa2 bias --dump: writes the inputs of cases[n] into dir (cases.json and one
 * .bin per case). Returns the exit status (0 or 1, with a message). */
int cli_bias_dump(const lab_case *cases, int n, lab_dtype t, uint64_t seed, const char *dir);

#endif
