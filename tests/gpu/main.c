/* fa2_gpu_tests: kernels against the float64 reference on a real GPU.
 * Without a CUDA device it prints one "skipped" line and exits 0. */
#include <stdio.h>

#include "rt_cuda.h"

int main(void) {
  char err[512];
  const rt_cuda_api *cu = rt_cuda_load(err, sizeof err);
  int n = 0;
  if (!cu || cu->cuDeviceGetCount(&n) != RT_CUDA_SUCCESS || n == 0) {
    printf("fa2_gpu_tests: skipped: no CUDA device (%s)\n", cu ? "device count is 0" : err);
    return 0;
  }
  printf("fa2_gpu_tests: %d CUDA device(s); no GPU tests yet\n", n);
  return 0;
}
