/* fa2 bias: the suite's cases and the backends that measure them. */
#ifndef CLI_BIAS_H
#define CLI_BIAS_H
#include "lab.h"

/* The GPU backend: runs the generated forward kernels (through libfa2rt:
 * JIT, caches) on a case's inputs and scores them like the CPU lab. */
typedef struct cli_bias_gpu cli_bias_gpu;

/* Opens device 0. Returns 0, 1 when there is no usable GPU (why in err),
 * -1 on a CUDA or runtime failure (why in err). */
int cli_bias_gpu_open(cli_bias_gpu **out, char *err, size_t errlen);
void cli_bias_gpu_close(cli_bias_gpu *g);
const char *cli_bias_gpu_name(const cli_bias_gpu *g);

/* Measures one case's inputs in every mode (as lab_run_cpu). Returns 0 or -1
 * (why in err). */
int cli_bias_gpu_run(cli_bias_gpu *g, const lab_case *c, const lab_inputs *in,
                     const lab_mode *modes, int n_modes, double beta, double eps,
                     lab_result *results, char *err, size_t errlen);

/* fa2 bias --dump: writes the inputs of cases[n] into dir (cases.json and one
 * .bin per case). Returns the exit status (0 or 1, with a message). */
int cli_bias_dump(const lab_case *cases, int n, lab_dtype t, uint64_t seed, const char *dir);

#endif
