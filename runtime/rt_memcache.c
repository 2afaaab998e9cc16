/* rt_memcache: open addressing, linear probing, lock-free reads (see .h). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rt_memcache.h"

#include <stdlib.h>
#include <string.h>

struct rt_mc_entry {
  uint64_t hash;
  void *value;
  rt_mc_entry *next; /* writer-side list of all entries */
  size_t len;
  unsigned char key[];
};

struct rt_mc_table {
  size_t mask;
  rt_mc_table *next_retired;
  _Atomic(rt_mc_entry *) slots[];
};

static rt_mc_table *table_new(size_t capacity) {
  rt_mc_table *t = calloc(1, sizeof *t + capacity * sizeof t->slots[0]);
  if (!t) return NULL;
  t->mask = capacity - 1;
  for (size_t i = 0; i < capacity; i++) atomic_init(&t->slots[i], NULL);
  return t;
}

int rt_mc_init(rt_memcache *mc) {
  memset(mc, 0, sizeof *mc);
  rt_mc_table *t = table_new(64);
  if (!t) return -1;
  atomic_init(&mc->table, t);
  pthread_mutex_init(&mc->lock, NULL);
  return 0;
}

void rt_mc_free(rt_memcache *mc) {
  rt_mc_table *t = atomic_load(&mc->table);
  if (!t) return;
  free(t);
  for (rt_mc_table *r = mc->retired, *next; r; r = next) {
    next = r->next_retired;
    free(r);
  }
  for (rt_mc_entry *e = mc->entries, *next; e; e = next) {
    next = e->next;
    free(e);
  }
  pthread_mutex_destroy(&mc->lock);
  memset(mc, 0, sizeof *mc);
}

static rt_mc_entry *probe(rt_mc_table *t, uint64_t h, const void *key, size_t len) {
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    rt_mc_entry *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
    if (!e) return NULL;
    if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) return e;
  }
}

void *rt_mc_get(rt_memcache *mc, const void *key, size_t len) {
  rt_mc_table *t = atomic_load_explicit(&mc->table, memory_order_acquire);
  rt_mc_entry *e = probe(t, XXH3_64bits(key, len), key, len);
  return e ? e->value : NULL;
}

static void place(rt_mc_table *t, rt_mc_entry *e) {
  size_t i = e->hash & t->mask;
  while (atomic_load_explicit(&t->slots[i], memory_order_relaxed)) i = (i + 1) & t->mask;
  atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

void *rt_mc_put(rt_memcache *mc, const void *key, size_t len, void *value) {
  uint64_t h = XXH3_64bits(key, len);
  pthread_mutex_lock(&mc->lock);
  rt_mc_table *t = atomic_load_explicit(&mc->table, memory_order_relaxed);
  rt_mc_entry *old = probe(t, h, key, len);
  if (old) {
    pthread_mutex_unlock(&mc->lock);
    return old->value;
  }
  if (2 * (mc->count + 1) > t->mask + 1) { /* keep load <= 1/2: short probes */
    rt_mc_table *bigger = table_new(2 * (t->mask + 1));
    if (!bigger) {
      pthread_mutex_unlock(&mc->lock);
      return NULL;
    }
    for (rt_mc_entry *e = mc->entries; e; e = e->next) place(bigger, e);
    atomic_store_explicit(&mc->table, bigger, memory_order_release);
    t->next_retired = mc->retired;
    mc->retired = t;
    t = bigger;
  }
  rt_mc_entry *e = malloc(sizeof *e + len);
  if (!e) {
    pthread_mutex_unlock(&mc->lock);
    return NULL;
  }
  e->hash = h;
  e->value = value;
  e->len = len;
  memcpy(e->key, key, len);
  e->next = mc->entries;
  mc->entries = e;
  mc->count++;
  place(t, e);
  pthread_mutex_unlock(&mc->lock);
  return value;
}

size_t rt_mc_count(rt_memcache *mc) {
  pthread_mutex_lock(&mc->lock);
  size_t n = mc->count;
  pthread_mutex_unlock(&mc->lock);
  return n;
}
