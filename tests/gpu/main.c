/* fa2_gpu_tests: kernels against the float64 reference on a real GPU.
 * Without a CUDA device it prints one "skipped" line and exits 0.
 *   --bench   also the default spec through fa2_forward (check + time, a table) and
 *             start-up timings (cold/warm JIT of the default spec, launch overhead) */
#include <stdio.h>
#include <string.h>

#include "rt_cuda.h"
#include "rt_smoke.h"

int main(int argc, char **argv) {
  char err[512];
  const rt_cuda_api *cu = rt_cuda_load(err, sizeof err);
  int n = 0;
  if (!cu || cu->cuDeviceGetCount(&n) != RT_CUDA_SUCCESS || n == 0) {
    printf("fa2_gpu_tests: skipped: no CUDA device (%s)\n", cu ? "device count is 0" : err);
    return 0;
  }
  int bench = argc > 1 && !strcmp(argv[1], "--bench");
  printf("fa2_gpu_tests: %d CUDA device(s)\n", n);
  int failures = rt_smoke(cu, bench);
  printf("fa2_gpu_tests: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
