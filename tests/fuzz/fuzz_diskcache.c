/* Fuzz target: the disk-cache entry reader (runtime/rt_diskcache.c).
 *
 * Input: one mode byte, then the bytes of an entry file placed at key K's
 * path. Random bytes rarely get past the checksums, so the mode byte can
 * make the harness repair parts of the header first:
 *   bit 0: set the header checksum (bytes 48..55)
 *   bit 1: set the payload size and checksum to match the bytes that follow
 *   bit 2: set magic, format version, header size and K's key
 * Contracts checked besides the sanitizers: rt_dc_read accepts only an
 * entry whose header is valid for K and whose payload matches its size and
 * checksum, and returns that payload byte for byte; a rejected entry is
 * removed; rt_dc_get_or_build then rebuilds it, and the rebuilt entry
 * reads back; no temporary or lock file is left. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "rt_diskcache.h"

static const rt_key K = {0x0123456789abcdefull, 0xfedcba9876543210ull};
static const unsigned char REBUILT[] = "a rebuilt payload";

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* What a correct reader must conclude about entry e of n bytes for K. */
static int entry_valid(const unsigned char *e, size_t n) {
  if (n <= RT_DC_HEADER_SIZE) return 0;
  size_t payload = n - RT_DC_HEADER_SIZE;
  return !memcmp(e, RT_DC_MAGIC, 8) && get_u64(e + 8) == ((uint64_t)RT_DC_HEADER_SIZE << 32 | RT_DC_FORMAT_VERSION) &&
         get_u64(e + 16) == K.lo && get_u64(e + 24) == K.hi && get_u64(e + 32) == payload &&
         get_u64(e + 40) == rt_hash64(e + RT_DC_HEADER_SIZE, payload) &&
         get_u64(e + 48) == rt_hash64(e, 48);
}

static int build(void *user, rt_blob *out, char *err, size_t errlen) {
  out->size = sizeof REBUILT;
  out->data = malloc(out->size);
  if (!out->data) return 1;
  memcpy(out->data, REBUILT, out->size);
  return 0;
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) fz_fail("opendir %s", dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (de->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int mode = data[0];
  size_t n = size - 1;
  unsigned char *e = malloc(n ? n : 1);
  if (!e) return 0;
  memcpy(e, data + 1, n);
  if (n >= RT_DC_HEADER_SIZE) {
    if (mode & 4) {
      memcpy(e, RT_DC_MAGIC, 8);
      put_u32(e + 8, RT_DC_FORMAT_VERSION);
      put_u32(e + 12, RT_DC_HEADER_SIZE);
      put_u64(e + 16, K.lo);
      put_u64(e + 24, K.hi);
    }
    if (mode & 2) {
      put_u64(e + 32, n - RT_DC_HEADER_SIZE);
      put_u64(e + 40, rt_hash64(e + RT_DC_HEADER_SIZE, n - RT_DC_HEADER_SIZE));
    }
    if (mode & 1) put_u64(e + 48, rt_hash64(e, 48));
  }

  rt_log quiet = {FA2_LOG_QUIET, NULL, NULL};
  rt_diskcache dc;
  if (rt_dc_open(&dc, fz_tmpdir(), &quiet) != 1) fz_fail("cache folder not writable");
  char path[1200];
  rt_dc_entry_path(&dc, K, path, sizeof path);
  fz_write(path, e, n);

  rt_blob out;
  int hit = rt_dc_read(&dc, K, &out);
  int valid = entry_valid(e, n);
  if (hit != valid) fz_fail("reader says %d for an entry that is %s", hit, valid ? "valid" : "bad");
  if (hit) {
    if (out.size != n - RT_DC_HEADER_SIZE || memcmp(out.data, e + RT_DC_HEADER_SIZE, out.size))
      fz_fail("payload read back differs from the entry's");
    rt_blob_free(&out);
  } else {
    if (out.data || out.size) fz_fail("a miss returned data");
    if (access(path, F_OK) == 0) fz_fail("a bad entry stayed on disk");
    int built = 0;
    char err[256];
    if (rt_dc_get_or_build(&dc, K, build, NULL, &out, &built, err, sizeof err) != 0 || !built)
      fz_fail("no rebuild after a bad entry");
    rt_blob_free(&out);
    if (rt_dc_read(&dc, K, &out) != 1 || out.size != sizeof REBUILT ||
        memcmp(out.data, REBUILT, sizeof REBUILT))
      fz_fail("the rebuilt entry does not read back");
    rt_blob_free(&out);
  }
  if (count_files(dc.dir) != 1) fz_fail("%d files in the cache folder, want 1", count_files(dc.dir));
  unlink(path);
  free(e);
  return 0;
}
