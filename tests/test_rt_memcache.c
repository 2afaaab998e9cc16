/* The in-memory kernel table: lookups, first writer wins, growth, and
 * readers running while writers insert. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rt_memcache.h"

Test(rt_memcache, put_then_get) {
  rt_memcache mc;
  cr_assert_eq(rt_mc_init(&mc), 0);
  int a = 1, b = 2;
  cr_expect_null(rt_mc_get(&mc, "fwd_x@sm_90", 11));
  cr_expect_eq(rt_mc_put(&mc, "fwd_x@sm_90", 11, &a), &a);
  cr_expect_eq(rt_mc_get(&mc, "fwd_x@sm_90", 11), &a);
  /* A key that is a prefix of another is a different key. */
  cr_expect_null(rt_mc_get(&mc, "fwd_x@sm_9", 10));
  /* The first value stays: a second compile of the same variant loses. */
  cr_expect_eq(rt_mc_put(&mc, "fwd_x@sm_90", 11, &b), &a);
  cr_expect_eq(rt_mc_get(&mc, "fwd_x@sm_90", 11), &a);
  cr_expect_eq(rt_mc_count(&mc), 1);
  rt_mc_free(&mc);
}

Test(rt_memcache, grows_and_keeps_every_entry) {
  rt_memcache mc;
  cr_assert_eq(rt_mc_init(&mc), 0);
  static int vals[5000];
  char key[32];
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(key, sizeof key, "k%d", i);
    cr_assert_eq(rt_mc_put(&mc, key, (size_t)n, &vals[i]), &vals[i]);
  }
  cr_expect_eq(rt_mc_count(&mc), 5000);
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(key, sizeof key, "k%d", i);
    cr_expect_eq(rt_mc_get(&mc, key, (size_t)n), &vals[i], "key %s", key);
  }
  cr_expect_null(rt_mc_get(&mc, "k5000", 5));
  rt_mc_free(&mc);
}

/* Binary keys (the launch path packs a struct): zero bytes are fine. */
Test(rt_memcache, binary_keys) {
  rt_memcache mc;
  cr_assert_eq(rt_mc_init(&mc), 0);
  int a = 1, b = 2;
  unsigned char k1[8] = {0, 0, 0, 1, 0, 0, 0, 0}, k2[8] = {0, 0, 0, 2, 0, 0, 0, 0};
  rt_mc_put(&mc, k1, 8, &a);
  rt_mc_put(&mc, k2, 8, &b);
  cr_expect_eq(rt_mc_get(&mc, k1, 8), &a);
  cr_expect_eq(rt_mc_get(&mc, k2, 8), &b);
  rt_mc_free(&mc);
}

typedef struct {
  rt_memcache *mc;
  int id;
  int missing; /* reader: keys of the first half not found */
} worker;

static int values[4][2000];

static void *writer(void *p) {
  worker *w = p;
  char key[32];
  for (int i = 0; i < 2000; i++) {
    int n = snprintf(key, sizeof key, "w%d-%d", w->id, i);
    rt_mc_put(w->mc, key, (size_t)n, &values[w->id][i]);
  }
  return NULL;
}

static void *reader(void *p) {
  worker *w = p;
  char key[32];
  for (int round = 0; round < 50; round++)
    for (int i = 0; i < 100; i++) {
      int n = snprintf(key, sizeof key, "pre-%d", i);
      if (rt_mc_get(w->mc, key, (size_t)n) != &values[0][i]) w->missing++;
    }
  return NULL;
}

/* Keys present before the writers start stay visible throughout growth. */
Test(rt_memcache, concurrent_readers_and_writers) {
  rt_memcache mc;
  cr_assert_eq(rt_mc_init(&mc), 0);
  char key[32];
  for (int i = 0; i < 100; i++) {
    int n = snprintf(key, sizeof key, "pre-%d", i);
    rt_mc_put(&mc, key, (size_t)n, &values[0][i]);
  }
  pthread_t t[6];
  worker w[6];
  for (int i = 0; i < 6; i++) {
    w[i] = (worker){&mc, i % 4, 0};
    pthread_create(&t[i], NULL, i < 4 ? writer : reader, &w[i]);
  }
  for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
  cr_expect_eq(w[4].missing + w[5].missing, 0);
  cr_expect_eq(rt_mc_count(&mc), 100 + 4 * 2000);
  for (int id = 0; id < 4; id++)
    for (int i = 0; i < 2000; i++) {
      int n = snprintf(key, sizeof key, "w%d-%d", id, i);
      cr_expect_eq(rt_mc_get(&mc, key, (size_t)n), &values[id][i]);
    }
  rt_mc_free(&mc);
}
