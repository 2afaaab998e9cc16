/* Shared by the tests that run contexts on the stand-in driver (tests/fake):
 * the fault-injection tests (tests/test_fault_*.c) and test_rt_context.c.
 * The driver, contexts on it, tensors at fake addresses, and counting the
 * files a cache folder holds. */
#ifndef FAULT_UTIL_H
#define FAULT_UTIL_H
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <string.h>

#include "fa2.h"
#include "fake_driver.h"
#include "rt_cuda.h"
#include "rt_fake_gen.h"
#include "rt_test_util.h"

static fake_cuda_state *fake;
static char root[256];
static tu_log seen;

/* Fake driver, generator stand-in and fake compiler; a fresh folder. */
static inline void fu_setup(void) {
  fake = tu_fake_driver();
  tu_tmpdir(root, sizeof root);
  memset(&seen, 0, sizeof seen);
  fg_install(1);
}

static inline void fu_teardown(void) { tu_rmtree(root); }

/* root/name, in a static buffer per slot (0..3). */
static inline const char *fu_path(int slot, const char *name) {
  static char buf[4][400];
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", root, name);
  return buf[slot];
}

/* A context whose messages up to level (0: the default) go to seen. */
static inline fa2_context *fu_ctx(const char *cache_dir, int level) {
  fa2_options o = {0};
  o.cache_dir = cache_dir;
  o.log_level = level;
  o.log_fn = tu_log_fn;
  o.log_user = &seen;
  fa2_context *ctx = NULL;
  fa2_status st = fa2_create(&ctx, &o);
  cr_assert_eq(st, FA2_OK, "fa2_create: %s", fa2_last_error());
  return ctx;
}

static inline fa2_cache_stats fu_stats(fa2_context *ctx) {
  fa2_cache_stats s;
  cr_assert_eq(fa2_stats(ctx, &s), FA2_OK);
  return s;
}

/* (B, N, H, d) contiguous bf16 tensors, K and V with hkv heads, at fake,
 * 256-byte aligned addresses. */
static inline fa2_fwd_args fu_args(int b, int n, int h, int hkv, int d) {
  fa2_fwd_args a = {0};
  a.q = (fa2_tensor){(void *)0x100000, FA2_BF16, (long long)n * h * d, h * d, d};
  a.k = (fa2_tensor){(void *)0x200000, FA2_BF16, (long long)n * hkv * d, hkv * d, d};
  a.v = (fa2_tensor){(void *)0x300000, FA2_BF16, (long long)n * hkv * d, hkv * d, d};
  a.o = (fa2_tensor){(void *)0x400000, FA2_BF16, (long long)n * h * d, h * d, d};
  a.lse = (float *)0x500000;
  a.batch = b;
  a.seqlen_q = a.seqlen_k = n;
  a.heads_q = h;
  a.heads_kv = hkv;
  a.head_dim = d;
  a.stab = FA2_STAB_ROBUST;
  return a;
}

/* fu_args' tensors plus dO, dQ, dK, dV. workspace: the caller's (its size
 * is fa2_backward_workspace_size), or NULL for the context's own. */
static inline fa2_bwd_args fu_bwd_args(int b, int n, int h, int hkv, int d, void *workspace) {
  fa2_fwd_args f = fu_args(b, n, h, hkv, d);
  fa2_bwd_args a = {0};
  a.q = f.q, a.k = f.k, a.v = f.v, a.o = f.o, a.lse = f.lse;
  a.dout = (fa2_tensor){(void *)0x600000, FA2_BF16, f.o.batch_stride, f.o.seq_stride, d};
  a.dq = (fa2_tensor){(void *)0x700000, FA2_BF16, f.q.batch_stride, f.q.seq_stride, d};
  a.dk = (fa2_tensor){(void *)0x800000, FA2_BF16, f.k.batch_stride, f.k.seq_stride, d};
  a.dv = (fa2_tensor){(void *)0x900000, FA2_BF16, f.v.batch_stride, f.v.seq_stride, d};
  a.batch = b, a.seqlen_q = a.seqlen_k = n, a.heads_q = h, a.heads_kv = hkv, a.head_dim = d;
  a.stab = FA2_STAB_ROBUST; /* the backward does not depend on it */
  if (workspace) {
    a.workspace = workspace;
    a.workspace_bytes = fa2_backward_workspace_size(&a);
  }
  return a;
}

/* Files in dir whose name ends with suffix (NULL: every file). */
static inline int fu_count_suffix(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  size_t k = suffix ? strlen(suffix) : 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] != '.' && (!suffix || (len >= k && !strcmp(e->d_name + len - k, suffix))))
      n++;
  }
  closedir(d);
  return n;
}

#endif
