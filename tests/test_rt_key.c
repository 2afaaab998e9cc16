/* The disk-cache key: every input changes it, nothing else does. */
#include <criterion/criterion.h>
#include <string.h>

#include "rt_key.h"

static const char *opts_a[] = {"-std=c++17", "--use_fast_math", NULL};
static const char *opts_b[] = {"-std=c++17", "--use_fast_math", "-lineinfo", NULL};
static const char *opts_c[] = {"-std=c++17", "--use_fast_math=0", NULL};
static const char *opts_d[] = {"--use_fast_math", "-std=c++17", NULL};
/* Same bytes as opts_a, cut elsewhere: the option boundaries are part of the key. */
static const char *opts_e[] = {"-std=c++17--use", "_fast_math", NULL};

static rt_key base_key(void) {
  rt_key_inputs in = {"__global__ void k(){}", 21, opts_a, 13, 0, "sm_90", "0.1.0"};
  return rt_key_compute(&in);
}

Test(rt_key, same_inputs_same_key) {
  rt_key a = base_key(), b = base_key();
  cr_expect(rt_key_equal(a, b));
  char hex[33];
  rt_key_hex(a, hex);
  cr_expect_eq(strlen(hex), 32);
  cr_expect_eq(strspn(hex, "0123456789abcdef"), 32);
}

Test(rt_key, every_input_changes_the_key) {
  rt_key_inputs v[] = {
      {"__global__ void k(){}", 21, opts_a, 13, 0, "sm_90", "0.1.0"}, /* base */
      {"__global__ void k(){ }", 22, opts_a, 13, 0, "sm_90", "0.1.0"}, /* source */
      {"__global__ void j(){}", 21, opts_a, 13, 0, "sm_90", "0.1.0"},  /* source, same length */
      {"__global__ void k(){}", 21, opts_b, 13, 0, "sm_90", "0.1.0"},  /* option added */
      {"__global__ void k(){}", 21, opts_c, 13, 0, "sm_90", "0.1.0"},  /* option changed */
      {"__global__ void k(){}", 21, opts_d, 13, 0, "sm_90", "0.1.0"},  /* option order */
      {"__global__ void k(){}", 21, opts_e, 13, 0, "sm_90", "0.1.0"},  /* option boundary */
      {"__global__ void k(){}", 21, NULL, 13, 0, "sm_90", "0.1.0"},    /* no options */
      {"__global__ void k(){}", 21, opts_a, 12, 0, "sm_90", "0.1.0"},  /* NVRTC major */
      {"__global__ void k(){}", 21, opts_a, 13, 1, "sm_90", "0.1.0"},  /* NVRTC minor */
      {"__global__ void k(){}", 21, opts_a, 13, 0, "sm_80", "0.1.0"},  /* arch */
      {"__global__ void k(){}", 21, opts_a, 13, 0, "sm_90a", "0.1.0"}, /* arch suffix */
      {"__global__ void k(){}", 21, opts_a, 13, 0, "sm_90", "0.1.1"},  /* fa2gen version */
      {"__global__ void k(){}", 20, opts_a, 13, 0, "sm_90", "0.1.0"},  /* source length */
  };
  int n = sizeof v / sizeof v[0];
  rt_key k[sizeof v / sizeof v[0]];
  for (int i = 0; i < n; i++) k[i] = rt_key_compute(&v[i]);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      cr_expect(!rt_key_equal(k[i], k[j]), "inputs %d and %d give the same key", i, j);
  cr_expect(rt_key_equal(k[0], base_key()));
}

Test(rt_key, content_hash_is_xxh3_128_hex) {
  char a[33], b[33];
  rt_hash128_hex("abc", 3, a);
  rt_hash128_hex("abd", 3, b);
  cr_expect_eq(strlen(a), 32);
  cr_expect_str_neq(a, b);
  /* Known value of XXH3-128("abc", seed 0), high half first. */
  cr_expect_str_eq(a, "06b05ab6733a618578af5f94892f3950");
}
