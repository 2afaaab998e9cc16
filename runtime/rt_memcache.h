/* rt_memcache: the in-memory kernel table, read without locks.
 *
 * Keys are byte strings (a variant name + arch, or the packed selection of
 * a launch), values are opaque pointers owned by the caller. Entries are
 * never removed while the table lives, so a reader needs no lock: it loads
 * the current table and probes slots whose entries are immutable once
 * published. Writers serialize on a mutex; growing publishes a new table
 * and keeps the old one until rt_mc_free (readers may still be on it).
 */
#ifndef RT_MEMCACHE_H
#define RT_MEMCACHE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_mc_entry rt_mc_entry;
typedef struct rt_mc_table rt_mc_table;

typedef struct rt_memcache {
  _Atomic(rt_mc_table *) table;
  pthread_mutex_t lock;
  size_t count;
  rt_mc_entry *entries;  /* all entries, for rt_mc_free */
  rt_mc_table *retired;  /* outgrown tables, for rt_mc_free */
} rt_memcache;

int rt_mc_init(rt_memcache *mc); /* 0, or -1 out of memory */
void rt_mc_free(rt_memcache *mc);

/* The value stored under key, or NULL. Lock-free; safe against concurrent
 * rt_mc_put. */
void *rt_mc_get(rt_memcache *mc, const void *key, size_t len);

/* Stores value under key unless the key is there already. Returns the
 * value now stored (the earlier one if any), or NULL when out of memory. */
void *rt_mc_put(rt_memcache *mc, const void *key, size_t len, void *value);

size_t rt_mc_count(rt_memcache *mc);

#endif
