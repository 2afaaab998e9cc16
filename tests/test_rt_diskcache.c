/* The disk cache: entry format, verification and recovery, degradation to
 * memory-only, and processes racing on one cold entry. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>

#include "rt_diskcache.h"
#include "rt_test_util.h"

static const rt_key K1 = {0x1111, 0x2222}, K2 = {0x3333, 0x4444};

typedef struct {
  int calls;
  size_t size;
  unsigned char fill;
} builder;

static int build(void *user, rt_blob *out, char *err, size_t errlen) {
  builder *b = user;
  b->calls++;
  out->data = malloc(b->size);
  out->size = b->size;
  for (size_t i = 0; i < b->size; i++) out->data[i] = (unsigned char)(b->fill + i * 7);
  return 0;
}

static int build_fails(void *user, rt_blob *out, char *err, size_t errlen) {
  snprintf(err, errlen, "compile error on purpose");
  return 5;
}

static int payload_ok(const rt_blob *b, size_t size, unsigned char fill) {
  if (b->size != size) return 0;
  for (size_t i = 0; i < size; i++)
    if (b->data[i] != (unsigned char)(fill + i * 7)) return 0;
  return 1;
}

typedef struct {
  char root[256];
  rt_diskcache dc;
  rt_log log;
  tu_log seen;
} fixture;

static void open_fixture(fixture *f) {
  memset(f, 0, sizeof *f);
  tu_tmpdir(f->root, sizeof f->root);
  f->log = (rt_log){FA2_LOG_INFO, tu_log_fn, &f->seen};
  cr_assert_eq(rt_dc_open(&f->dc, f->root, &f->log), 1);
}

Test(rt_diskcache, miss_build_then_hit) {
  fixture f;
  open_fixture(&f);
  builder b = {0, 1000, 3};
  rt_blob out;
  int built;
  char err[256];
  cr_assert_eq(rt_dc_get_or_build(&f.dc, K1, build, &b, &out, &built, err, sizeof err), 0);
  cr_expect_eq(built, 1);
  cr_expect(payload_ok(&out, 1000, 3));
  rt_blob_free(&out);
  cr_assert_eq(rt_dc_get_or_build(&f.dc, K1, build, &b, &out, &built, err, sizeof err), 0);
  cr_expect_eq(built, 0);
  cr_expect_eq(b.calls, 1);
  cr_expect(payload_ok(&out, 1000, 3));
  rt_blob_free(&out);
  char dir[300];
  snprintf(dir, sizeof dir, "%s/kernels", f.root);
  cr_expect_eq(tu_count(dir, NULL), 1); /* the entry; no temp or lock file */
  cr_expect_eq(tu_count(dir, ".fa2k"), 1);
  tu_rmtree(f.root);
}

Test(rt_diskcache, header_layout) {
  fixture f;
  open_fixture(&f);
  unsigned char data[5] = {1, 2, 3, 4, 5};
  cr_assert_eq(rt_dc_write(&f.dc, K1, data, 5), 0);
  char path[1200];
  rt_dc_entry_path(&f.dc, K1, path, sizeof path);
  cr_expect(strstr(path, "/kernels/00000000000022220000000000001111.fa2k") != NULL, "%s", path);
  unsigned char buf[128];
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp);
  size_t n = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  cr_expect_eq(n, 69);
  cr_expect_eq(memcmp(buf, "FA2KCUBN", 8), 0);
  cr_expect_eq(buf[8], 1);   /* format version */
  cr_expect_eq(buf[12], 64); /* header size */
  cr_expect_eq(buf[16], 0x11);
  cr_expect_eq(buf[17], 0x11);
  cr_expect_eq(buf[24], 0x22);
  cr_expect_eq(buf[32], 5); /* payload size */
  uint64_t sum = 0;
  for (int i = 7; i >= 0; i--) sum = sum << 8 | buf[40 + i];
  cr_expect_eq(sum, rt_hash64(data, 5));
  cr_expect_eq(memcmp(buf + 64, data, 5), 0);
  tu_rmtree(f.root);
}

/* Damages K1's entry with fn, then checks: miss, entry removed, rebuilt. */
static void damage_and_recover(void (*fn)(const char *path)) {
  fixture f;
  open_fixture(&f);
  builder b = {0, 4096, 9};
  rt_blob out;
  int built;
  char err[256], path[1200];
  cr_assert_eq(rt_dc_get_or_build(&f.dc, K1, build, &b, &out, &built, err, sizeof err), 0);
  rt_blob_free(&out);
  rt_dc_entry_path(&f.dc, K1, path, sizeof path);
  fn(path);
  cr_expect_eq(rt_dc_read(&f.dc, K1, &out), 0);
  cr_expect_null(out.data);
  cr_expect_eq(tu_file_size(path), -1, "the bad entry is removed");
  cr_expect_eq(f.seen.count[FA2_LOG_INFO], 1);
  cr_expect(strstr(f.seen.last, "removing bad entry") != NULL, "%s", f.seen.last);
  fn(path); /* damaged again (or recreated bad): get_or_build must rebuild */
  cr_assert_eq(rt_dc_get_or_build(&f.dc, K1, build, &b, &out, &built, err, sizeof err), 0);
  cr_expect_eq(built, 1);
  cr_expect_eq(b.calls, 2);
  cr_expect(payload_ok(&out, 4096, 9));
  rt_blob_free(&out);
  cr_expect_eq(rt_dc_read(&f.dc, K1, &out), 1, "the rebuilt entry is valid");
  cr_expect(payload_ok(&out, 4096, 9));
  rt_blob_free(&out);
  tu_rmtree(f.root);
}

static void truncate_payload(const char *path) {
  long size = tu_file_size(path);
  if (size < 0) { /* removed: write a fresh truncated one */
    FILE *fp = fopen(path, "wb");
    fwrite("FA2KCUBN", 1, 8, fp);
    fclose(fp);
    return;
  }
  cr_assert_eq(truncate(path, size - 100), 0);
}
static void truncate_header(const char *path) {
  FILE *fp = fopen(path, "wb");
  fwrite("FA2KCUBN\1\0\0\0", 1, 12, fp);
  fclose(fp);
}
static void empty_file(const char *path) {
  FILE *fp = fopen(path, "wb");
  fclose(fp);
}
static void flip_payload_byte(const char *path) {
  int fd = open(path, O_RDWR);
  if (fd < 0) { /* removed: recreate a valid-looking header with a bad payload */
    truncate_header(path);
    return;
  }
  unsigned char c;
  cr_assert_eq(pread(fd, &c, 1, 64 + 1000), 1);
  c ^= 0x40;
  cr_assert_eq(pwrite(fd, &c, 1, 64 + 1000), 1);
  close(fd);
}
static void flip_header_byte(const char *path) {
  int fd = open(path, O_RDWR);
  if (fd < 0) {
    empty_file(path);
    return;
  }
  unsigned char c = 0x7f;
  cr_assert_eq(pwrite(fd, &c, 1, 33), 1); /* payload size field */
  close(fd);
}
static void garbage(const char *path) {
  FILE *fp = fopen(path, "wb");
  for (int i = 0; i < 500; i++) fputc(i * 31, fp);
  fclose(fp);
}

Test(rt_diskcache, truncated_payload_is_removed_and_rebuilt) { damage_and_recover(truncate_payload); }
Test(rt_diskcache, truncated_header_is_removed_and_rebuilt) { damage_and_recover(truncate_header); }
Test(rt_diskcache, empty_entry_is_removed_and_rebuilt) { damage_and_recover(empty_file); }
Test(rt_diskcache, corrupted_payload_is_removed_and_rebuilt) { damage_and_recover(flip_payload_byte); }
Test(rt_diskcache, corrupted_header_is_removed_and_rebuilt) { damage_and_recover(flip_header_byte); }
Test(rt_diskcache, garbage_entry_is_removed_and_rebuilt) { damage_and_recover(garbage); }

/* An entry renamed to another key's path (a bad copy) is not that key's. */
Test(rt_diskcache, entry_of_another_key_is_removed) {
  fixture f;
  open_fixture(&f);
  unsigned char data[100] = {7};
  cr_assert_eq(rt_dc_write(&f.dc, K1, data, sizeof data), 0);
  char p1[1200], p2[1200];
  rt_dc_entry_path(&f.dc, K1, p1, sizeof p1);
  rt_dc_entry_path(&f.dc, K2, p2, sizeof p2);
  cr_assert_eq(rename(p1, p2), 0);
  rt_blob out;
  cr_expect_eq(rt_dc_read(&f.dc, K2, &out), 0);
  cr_expect_eq(tu_file_size(p2), -1);
  cr_expect(strstr(f.seen.last, "entry of another key") != NULL, "%s", f.seen.last);
  tu_rmtree(f.root);
}

Test(rt_diskcache, failed_build_stores_nothing) {
  fixture f;
  open_fixture(&f);
  rt_blob out;
  int built = 7;
  char err[256], dir[300];
  cr_expect_eq(rt_dc_get_or_build(&f.dc, K1, build_fails, NULL, &out, &built, err, sizeof err), 5);
  cr_expect_str_eq(err, "compile error on purpose");
  cr_expect_eq(built, 0);
  snprintf(dir, sizeof dir, "%s/kernels", f.root);
  cr_expect_eq(tu_count(dir, NULL), 0, "no entry, temp or lock file left");
  tu_rmtree(f.root);
}

/* A cache folder that cannot exist or be written: memory-only, one warning,
 * every build still succeeds. (Tests may run as root, where chmod does not
 * stop writes: use paths that no one can create.) */
static void expect_memory_only(const char *cache_dir, int opens_writable, const char *why) {
  tu_log seen = {0};
  rt_log log = {FA2_LOG_WARN, tu_log_fn, &seen};
  rt_diskcache dc;
  cr_expect_eq(rt_dc_open(&dc, cache_dir, &log), opens_writable);
  builder b = {0, 64, 1};
  for (int i = 0; i < 3; i++) {
    rt_blob out;
    int built;
    char err[256];
    cr_expect_eq(rt_dc_get_or_build(&dc, K1, build, &b, &out, &built, err, sizeof err), 0);
    cr_expect_eq(built, 1);
    cr_expect(payload_ok(&out, 64, 1));
    rt_blob_free(&out);
  }
  cr_expect_eq(b.calls, 3);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1, "exactly one warning");
  cr_expect(strstr(seen.last, "memory only") != NULL, "%s", seen.last);
  cr_expect(strstr(seen.last, why) != NULL, "%s", seen.last);
}

Test(rt_diskcache, file_in_place_of_the_folder) {
  char root[256], file[300];
  tu_tmpdir(root, sizeof root);
  snprintf(file, sizeof file, "%s/not-a-dir", root);
  FILE *fp = fopen(file, "w");
  fclose(fp);
  expect_memory_only(file, 0, "Not a directory");
  tu_rmtree(root);
}

Test(rt_diskcache, folder_under_proc) { expect_memory_only("/proc/self/fa2cache", 0, "cannot create"); }

Test(rt_diskcache, full_disk_degrades_once) {
  char root[256], dir[300];
  tu_tmpdir(root, sizeof root);
  rt_dc_fail_writes_for_tests(ENOSPC);
  expect_memory_only(root, 1, "No space left on device");
  rt_dc_fail_writes_for_tests(0);
  snprintf(dir, sizeof dir, "%s/kernels", root);
  cr_expect_eq(tu_count(dir, NULL), 0, "no temp or lock file left");
  tu_rmtree(root);
}

Test(rt_diskcache, disabled_cache_does_not_warn) {
  tu_log seen = {0};
  rt_log log = {FA2_LOG_DEBUG, tu_log_fn, &seen};
  rt_diskcache dc;
  cr_expect_eq(rt_dc_open(&dc, NULL, &log), 0);
  rt_blob out;
  cr_expect_eq(rt_dc_read(&dc, K1, &out), 0);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 0);
}

/* 8 processes start cold on one key at once: all get the right payload,
 * one entry remains, no temp or lock file, and the lock lets one build. */
Test(rt_diskcache, eight_processes_race_on_one_cold_entry) {
  char root[256], dir[300], counter[300];
  tu_tmpdir(root, sizeof root);
  snprintf(dir, sizeof dir, "%s/kernels", root);
  snprintf(counter, sizeof counter, "%s/builds", root);
  pid_t pids[8];
  for (int i = 0; i < 8; i++) {
    pids[i] = fork();
    cr_assert_neq(pids[i], -1);
    if (pids[i] == 0) {
      rt_diskcache dc;
      if (rt_dc_open(&dc, root, NULL) != 1) _exit(10);
      builder b = {0, 200000, 42};
      rt_blob out;
      int built;
      char err[256];
      if (rt_dc_get_or_build(&dc, K1, build, &b, &out, &built, err, sizeof err) != 0) _exit(11);
      if (!payload_ok(&out, 200000, 42)) _exit(12);
      if (built) {
        int fd = open(counter, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0 || write(fd, "b", 1) != 1) _exit(13);
        close(fd);
      }
      rt_blob_free(&out);
      _exit(0);
    }
  }
  for (int i = 0; i < 8; i++) {
    int status;
    cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i, status);
  }
  cr_expect_eq(tu_count(dir, NULL), 1, "one entry, no temp or lock file");
  cr_expect_eq(tu_count(dir, ".fa2k"), 1);
  cr_expect_eq(tu_file_size(counter), 1, "one process compiled");
  rt_diskcache dc;
  rt_dc_open(&dc, root, NULL);
  rt_blob out;
  cr_expect_eq(rt_dc_read(&dc, K1, &out), 1);
  cr_expect(payload_ok(&out, 200000, 42));
  rt_blob_free(&out);
  tu_rmtree(root);
}

/* Writers replacing an entry while readers read it (no build lock): a
 * reader sees the whole entry or a miss, never a corrupt payload. */
Test(rt_diskcache, readers_never_see_a_partial_entry) {
  char root[256], dir[300];
  tu_tmpdir(root, sizeof root);
  snprintf(dir, sizeof dir, "%s/kernels", root);
  pid_t pids[6];
  for (int i = 0; i < 6; i++) {
    pids[i] = fork();
    cr_assert_neq(pids[i], -1);
    if (pids[i] == 0) {
      rt_diskcache dc;
      if (rt_dc_open(&dc, root, NULL) != 1) _exit(10);
      builder b = {0, 300000, 5};
      rt_blob payload;
      build(&b, &payload, NULL, 0);
      int hits = 0;
      for (int round = 0; round < 40; round++) {
        if (i < 3) {
          if (rt_dc_write(&dc, K1, payload.data, payload.size) != 0) _exit(11);
        } else {
          rt_blob out;
          if (rt_dc_read(&dc, K1, &out)) {
            if (!payload_ok(&out, 300000, 5)) _exit(12);
            hits++;
            rt_blob_free(&out);
          }
        }
      }
      rt_blob_free(&payload);
      _exit(0);
    }
  }
  for (int i = 0; i < 6; i++) {
    int status;
    cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i, status);
  }
  cr_expect_eq(tu_count(dir, NULL), 1);
  tu_rmtree(root);
}
