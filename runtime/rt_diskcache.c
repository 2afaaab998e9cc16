/* rt_diskcache: entries, atomic writes, verification, build locks (see .h). */
#include "rt_diskcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt_paths.h"

static atomic_int fail_writes_errno;

void rt_dc_fail_writes_for_tests(int errno_value) { atomic_store(&fail_writes_errno, errno_value); }

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Memory-only from now on (reads too when reads_too), warning once. */
static void degrade(rt_diskcache *dc, int reads_too, const char *what, int err) {
  atomic_store(&dc->writable, 0);
  if (reads_too) atomic_store(&dc->readable, 0);
  if (atomic_exchange(&dc->warned, 1) == 0)
    rt_logf(dc->log, FA2_LOG_WARN,
            "disk cache %s: %s (%s); compiled kernels are kept in memory only", dc->dir, what,
            strerror(err));
}

/* Removes the temporary files (<key>.fa2k.tmp.XXXXXX) of writers killed
 * before their rename: those whose mtime is more than RT_DC_STALE_TMP_SECONDS
 * old. A younger one may belong to a live writer and stays. */
static void remove_stale_temporaries(rt_diskcache *dc) {
  DIR *d = opendir(dc->dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strstr(e->d_name, ".fa2k.tmp.")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        now - st.st_mtime <= RT_DC_STALE_TMP_SECONDS)
      continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0)
      rt_logf(dc->log, FA2_LOG_INFO,
              "disk cache: removed %s/%s, the temporary file of a writer killed %lld minutes ago",
              dc->dir, e->d_name, (long long)(now - st.st_mtime) / 60);
  }
  closedir(d);
}

int rt_dc_open(rt_diskcache *dc, const char *cache_dir, const rt_log *log) {
  memset(dc, 0, sizeof *dc);
  dc->log = log;
  if (!cache_dir || !*cache_dir) return 0; /* disabled on purpose: no warning */
  int n = snprintf(dc->dir, sizeof dc->dir, "%s/kernels", cache_dir);
  if (n < 0 || (size_t)n >= sizeof dc->dir) {
    snprintf(dc->dir, sizeof dc->dir, "%.64s...", cache_dir);
    degrade(dc, 1, "path too long", ENAMETOOLONG);
    return 0;
  }
  if (rt_mkdirs(dc->dir) != 0) {
    degrade(dc, 1, "cannot create the folder", errno);
    return 0;
  }
  atomic_store(&dc->readable, 1);
  if (access(dc->dir, W_OK) != 0) {
    degrade(dc, 0, "folder not writable", errno);
    return 0;
  }
  atomic_store(&dc->writable, 1);
  remove_stale_temporaries(dc);
  return 1;
}

void rt_dc_entry_path(const rt_diskcache *dc, rt_key key, char *buf, size_t len) {
  char hex[33];
  rt_key_hex(key, hex);
  snprintf(buf, len, "%s/%s.fa2k", dc->dir, hex);
}

/* Removes path if it is still the file fd refers to (a writer may have
 * renamed a good entry over it meanwhile). */
static void remove_if_same(const char *path, int fd) {
  struct stat a, b;
  if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
    unlink(path);
}

static int read_all(int fd, unsigned char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

int rt_dc_read(rt_diskcache *dc, rt_key key, rt_blob *out) {
  out->data = NULL;
  out->size = 0;
  if (!atomic_load(&dc->readable)) return 0;
  char path[1200];
  rt_dc_entry_path(dc, key, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const char *bad = NULL;
  unsigned char h[RT_DC_HEADER_SIZE];
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < RT_DC_HEADER_SIZE || read_all(fd, h, sizeof h))
    bad = "truncated header";
  else if (memcmp(h, RT_DC_MAGIC, 8) != 0)
    bad = "bad magic";
  else if (get_u32(h + 8) != RT_DC_FORMAT_VERSION || get_u32(h + 12) != RT_DC_HEADER_SIZE)
    bad = "other format version";
  else if (get_u64(h + 48) != rt_hash64(h, 48))
    bad = "header checksum mismatch";
  else if (get_u64(h + 16) != key.lo || get_u64(h + 24) != key.hi)
    bad = "entry of another key";
  else if (get_u64(h + 32) != (uint64_t)st.st_size - RT_DC_HEADER_SIZE ||
           get_u64(h + 32) > RT_DC_MAX_PAYLOAD || get_u64(h + 32) == 0)
    bad = "truncated payload";
  if (!bad) {
    size_t size = (size_t)get_u64(h + 32);
    out->data = malloc(size);
    if (!out->data) {
      close(fd);
      return 0; /* out of memory: a miss, the entry stays */
    }
    if (read_all(fd, out->data, size))
      bad = "truncated payload";
    else if (rt_hash64(out->data, size) != get_u64(h + 40))
      bad = "payload checksum mismatch";
    else
      out->size = size;
  }
  if (bad) {
    rt_blob_free(out);
    rt_logf(dc->log, FA2_LOG_INFO, "disk cache: removing bad entry %s (%s)", path, bad);
    remove_if_same(path, fd);
  }
  close(fd);
  return bad ? 0 : 1;
}

static int write_all(int fd, const void *buf, size_t n) {
  const unsigned char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int rt_dc_write(rt_diskcache *dc, rt_key key, const void *data, size_t size) {
  if (!atomic_load(&dc->writable)) return -1;
  char path[1200], tmp[1300];
  rt_dc_entry_path(dc, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int injected = atomic_load(&fail_writes_errno);
  int fd = injected ? (errno = injected, -1) : mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    degrade(dc, 0, "cannot create a file", errno);
    return -1;
  }
  unsigned char h[RT_DC_HEADER_SIZE] = {0};
  memcpy(h, RT_DC_MAGIC, 8);
  put_u32(h + 8, RT_DC_FORMAT_VERSION);
  put_u32(h + 12, RT_DC_HEADER_SIZE);
  put_u64(h + 16, key.lo);
  put_u64(h + 24, key.hi);
  put_u64(h + 32, size);
  put_u64(h + 40, rt_hash64(data, size));
  put_u64(h + 48, rt_hash64(h, 48));
  /* mkstemp makes 0600; entries are shareable like any cache file. */
  mode_t mask = umask(0);
  umask(mask);
  int ok = fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, h, sizeof h) == 0 &&
           write_all(fd, data, size) == 0;
  int e = errno;
  if (close(fd) != 0 && ok) ok = 0, e = errno; /* NFS reports write errors at close */
  if (ok && rename(tmp, path) != 0) ok = 0, e = errno;
  if (!ok) {
    unlink(tmp);
    degrade(dc, 0, "cannot write an entry", e);
    return -1;
  }
  return 0;
}

/* Takes the build lock of key: an open file holding flock(LOCK_EX) that is
 * still linked at its path. Returns the fd, or -1 (then build unlocked). */
static int lock_key(rt_diskcache *dc, rt_key key, char *lock_path, size_t len) {
  char hex[33];
  rt_key_hex(key, hex);
  snprintf(lock_path, len, "%s/%s.lock", dc->dir, hex);
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    int r;
    while ((r = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    struct stat a, b;
    if (r == 0 && fstat(fd, &a) == 0 && stat(lock_path, &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
      return fd;
    close(fd); /* the holder removed it meanwhile: take the new one */
    if (r != 0) return -1;
  }
  return -1;
}

static void unlock_key(const char *lock_path, int fd) {
  unlink(lock_path); /* before unlocking: waiters on this inode see it gone and retry */
  close(fd);
}

int rt_dc_get_or_build(rt_diskcache *dc, rt_key key, rt_build_fn build, void *user,
                       rt_blob *out, int *built, char *err, size_t errlen) {
  *built = 0;
  if (rt_dc_read(dc, key, out)) return 0;
  char lock_path[1200];
  int lock = atomic_load(&dc->writable) ? lock_key(dc, key, lock_path, sizeof lock_path) : -1;
  if (lock >= 0 && rt_dc_read(dc, key, out)) { /* another process built it meanwhile */
    unlock_key(lock_path, lock);
    return 0;
  }
  int rc = build(user, out, err, errlen);
  if (rc == 0) {
    *built = 1;
    rt_dc_write(dc, key, out->data, out->size);
  }
  if (lock >= 0) unlock_key(lock_path, lock);
  return rc;
}
