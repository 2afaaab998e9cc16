#ifndef RT_SMOKE_H
#define RT_SMOKE_H
#include "rt_cuda.h"
/* The runtime's GPU smoke test; returns the number of failures. */
int rt_smoke(const rt_cuda_api *cu, int with_bench);
#endif
