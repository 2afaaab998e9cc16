/* rt_diskcache: compiled kernels on disk, safe across processes.
 *
 * One file per key: <cache_dir>/kernels/<32 hex digits of the key>.fa2k,
 * a 64-byte header then the cubin. Header (little-endian):
 *   0  magic "FA2KCUBN"        8 bytes
 *   8  format version (1)      u32
 *   12 header size (64)        u32
 *   16 key (lo, hi)            2 x u64
 *   32 payload size            u64
 *   40 payload checksum        u64, xxh3-64 of the payload
 *   48 header checksum         u64, xxh3-64 of bytes 0..47
 *   56 reserved (0)            u64
 * Writers write a temporary file in the same folder and rename it over the
 * entry (atomic), so a reader sees a whole entry or none. A writer killed
 * before its rename leaves its temporary file (<hex>.fa2k.tmp.XXXXXX, never
 * read); rt_dc_open removes those more than an hour old (a younger one may
 * be a live writer's). Readers verify everything; a bad entry (truncated,
 * corrupted, another key) is removed and counts as a miss. Builders of the
 * same key serialize on a lock file (<hex>.lock, flock), so N processes
 * starting cold compile once, not N times; the lock file is removed by its
 * holder.
 * An unwritable or full folder degrades to memory-only: one warning, no
 * failure.
 */
#ifndef RT_DISKCACHE_H
#define RT_DISKCACHE_H
#include <stdatomic.h>
#include <stddef.h>

#include "rt_key.h"
#include "rt_log.h"
#include "rt_nvrtc.h" /* rt_blob */

enum { RT_DC_HEADER_SIZE = 64, RT_DC_FORMAT_VERSION = 1 };
#define RT_DC_MAGIC "FA2KCUBN"
#define RT_DC_MAX_PAYLOAD ((size_t)1 << 30)
/* Temporary files older than this are a killed writer's: rt_dc_open removes them. */
#define RT_DC_STALE_TMP_SECONDS 3600

typedef struct rt_diskcache {
  char dir[1100];      /* <cache_dir>/kernels */
  atomic_int readable; /* 0: memory-only */
  atomic_int writable; /* 0 after a failed write: reads only */
  atomic_int warned;
  const rt_log *log;
} rt_diskcache;

/* Creates the folder when needed; when writable, removes the temporary
 * files of killed writers older than RT_DC_STALE_TMP_SECONDS. Never fails:
 * an unusable folder (or cache_dir NULL) leaves the cache memory-only, with
 * one warning unless cache_dir is NULL. Returns 1 when writable, else 0. */
int rt_dc_open(rt_diskcache *dc, const char *cache_dir, const rt_log *log);

/* Path of key's entry. */
void rt_dc_entry_path(const rt_diskcache *dc, rt_key key, char *buf, size_t len);

/* 1 and the payload in *out on a valid entry; 0 on a miss (absent, or bad
 * and removed). */
int rt_dc_read(rt_diskcache *dc, rt_key key, rt_blob *out);

/* Best effort: a failure degrades the cache (one warning). Returns 0 when
 * the entry was written. */
int rt_dc_write(rt_diskcache *dc, rt_key key, const void *data, size_t size);

/* Builds a payload: returns 0, or a non-zero status with a message in err. */
typedef int (*rt_build_fn)(void *user, rt_blob *out, char *err, size_t errlen);

/* The entry of key, building and storing it when missing. *built says
 * which. Returns 0, or build's status. */
int rt_dc_get_or_build(rt_diskcache *dc, rt_key key, rt_build_fn build, void *user,
                       rt_blob *out, int *built, char *err, size_t errlen);

/* Test hook (fault injection): writes fail with this errno (0: off). */
void rt_dc_fail_writes_for_tests(int errno_value);

#endif
