/* bench_lookup: what the launch path costs on the host.
 *
 *   1. rt_mc_get: one in-memory cache lookup of a launch request (the key
 *      fa2_forward builds), in a table holding as many kernels as a large
 *      spec, single-threaded and with every core reading at once;
 *   2. fa2_forward end to end on the stand-in driver (tests/fake): argument
 *      checks, lookup, argument block, the (fake, empty) cuLaunchKernel.
 * Run: make bench-lookup (prints ns per call; no GPU needed). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../tests/rt_fake_gen.h"
#include "fa2.h"
#include "rt_cuda.h"
#include "rt_memcache.h"
#include "rt_select.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum { KEYS = 256, ITERS = 20000000 };
static rt_memcache mc;
static rt_request keys[KEYS];
static int values[KEYS];

static void *reader(void *arg) {
  double *ns = arg;
  unsigned long misses = 0;
  double t0 = now_ns();
  for (long i = 0; i < ITERS; i++)
    if (rt_mc_get(&mc, &keys[i & (KEYS - 1)], sizeof keys[0]) != &values[i & (KEYS - 1)])
      misses++;
  *ns = (now_ns() - t0) / ITERS;
  if (misses) fprintf(stderr, "bench: %lu wrong lookups\n", misses);
  return NULL;
}

static void bench_memcache(void) {
  rt_mc_init(&mc);
  static const int dims[] = {32, 64, 96, 128, 160, 192, 224, 256};
  for (int i = 0; i < KEYS; i++) {
    fa2_fwd_args a = {0};
    a.q.dtype = (fa2_dtype)(i & 1);
    a.head_dim = dims[(i >> 1) & 7];
    a.causal = (i >> 4) & 1;
    a.stab = (fa2_stab)(1 + ((i >> 5) & 1)); /* paper/robust: beta is part of the key */
    a.beta = 2 + (i >> 6);
    rt_request_fwd(&a, 0, &keys[i]);
    rt_mc_put(&mc, &keys[i], sizeof keys[i], &values[i]);
  }
  double ns;
  reader(&ns);
  printf("memory-cache lookup (%d kernels, 1 thread):   %6.1f ns\n", (int)rt_mc_count(&mc), ns);
  int n = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (n > 16) n = 16;
  pthread_t t[16];
  double each[16];
  for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, reader, &each[i]);
  double worst = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(t[i], NULL);
    if (each[i] > worst) worst = each[i];
  }
  printf("memory-cache lookup (%d threads at once, worst): %6.1f ns\n", n, worst);
  rt_mc_free(&mc);
}

static void bench_forward(const char *fake) {
  rt_cuda_set_library_for_tests(fake);
  fg_install(1);
  fa2_options o = {0};
  o.no_disk_cache = 1;
  fa2_context *ctx;
  if (fa2_create(&ctx, &o) != FA2_OK) {
    printf("fa2_forward host path: skipped (%s)\n", fa2_last_error());
    return;
  }
  fa2_fwd_args a = {0};
  int n = 2048, h = 16, d = 128;
  a.q = (fa2_tensor){(void *)0x100000, FA2_BF16, (long long)n * h * d, h * d, d};
  a.k = a.v = a.o = a.q;
  a.lse = (float *)0x500000;
  a.batch = 8;
  a.seqlen_q = a.seqlen_k = n;
  a.heads_q = a.heads_kv = h;
  a.head_dim = d;
  a.causal = 1;
  a.stab = FA2_STAB_ROBUST;
  if (fa2_forward(ctx, &a, NULL) != FA2_OK) { /* the miss: compiles (fake) */
    printf("fa2_forward host path: failed (%s)\n", fa2_last_error());
    fa2_destroy(ctx);
    return;
  }
  enum { N = 5000000 };
  double t0 = now_ns();
  for (int i = 0; i < N; i++) fa2_check_forward(&a);
  printf("fa2_check_forward (argument checks alone):   %6.1f ns\n", (now_ns() - t0) / N);
  t0 = now_ns();
  for (int i = 0; i < N; i++) fa2_forward(ctx, &a, NULL);
  printf("fa2_forward host path (fake driver, warm):   %6.1f ns\n", (now_ns() - t0) / N);
  fa2_destroy(ctx);
}

int main(int argc, char **argv) {
  bench_memcache();
  bench_forward(argc > 1 ? argv[1] : "build/libfakecuda.so");
  return 0;
}
