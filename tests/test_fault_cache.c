/* Fault injection on the disk cache with real failures, not test hooks: a
 * full disk (the file-size limit makes writes fail with EFBIG), a writer
 * killed in the middle of an entry (the same limit with SIGXFSZ's default
 * action kills it there), a builder killed while it holds the build lock,
 * and entries damaged on disk between two runs. After each, the next run
 * works and never loads a partial or corrupt entry. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "fault_util.h"
#include "rt_diskcache.h"

TestSuite(fault_cache, .init = fu_setup, .fini = fu_teardown);

static const rt_key K = {0x5555, 0x6666};
enum { PAYLOAD = 4096 };

static int build(void *user, rt_blob *out, char *err, size_t errlen) {
  out->data = malloc(PAYLOAD);
  out->size = PAYLOAD;
  for (int i = 0; i < PAYLOAD; i++) out->data[i] = (unsigned char)(i * 13 + 1);
  return 0;
}

static int build_and_die(void *user, rt_blob *out, char *err, size_t errlen) {
  raise(SIGKILL); /* killed while holding the build lock */
  return 1;
}

static int payload_ok(const rt_blob *b) {
  if (b->size != PAYLOAD) return 0;
  for (int i = 0; i < PAYLOAD; i++)
    if (b->data[i] != (unsigned char)(i * 13 + 1)) return 0;
  return 1;
}

/* Runs fn in a child whose files may not grow past limit bytes (0: no
 * limit). With SIGXFSZ ignored a write past it fails with EFBIG, as on a
 * full disk; with the default action the kernel kills the child inside
 * that write. Returns the wait status; fn's return value is the exit code. */
static int in_child(int (*fn)(void), rlim_t limit, int kill_at_limit) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    struct rlimit no_core = {0, 0}, fsize = {limit, limit};
    setrlimit(RLIMIT_CORE, &no_core);
    if (limit && setrlimit(RLIMIT_FSIZE, &fsize) != 0) _exit(90);
    signal(SIGXFSZ, kill_at_limit ? SIG_DFL : SIG_IGN);
    _exit(fn());
  }
  int status;
  alarm(60); /* a hang (say, on a dead holder's lock) fails the test */
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  alarm(0);
  return status;
}

static char kernels[500];
static const char *open_cache(rt_diskcache *dc, const rt_log *log) {
  cr_assert_eq(rt_dc_open(dc, root, log), 1);
  snprintf(kernels, sizeof kernels, "%s/kernels", root);
  return kernels;
}

/* The parent's run after a fault: a miss, then a rebuild that stores a
 * valid entry and leaves no lock file. */
static void expect_next_run_rebuilds(void) {
  rt_diskcache dc;
  const char *dir = open_cache(&dc, NULL);
  char path[1200];
  rt_dc_entry_path(&dc, K, path, sizeof path);
  cr_expect_eq(tu_file_size(path), -1, "no entry at the final path");
  rt_blob out;
  cr_expect_eq(rt_dc_read(&dc, K, &out), 0);
  int built = 0;
  char err[256];
  alarm(60);
  cr_assert_eq(rt_dc_get_or_build(&dc, K, build, NULL, &out, &built, err, sizeof err), 0);
  alarm(0);
  cr_expect_eq(built, 1);
  cr_expect(payload_ok(&out));
  rt_blob_free(&out);
  cr_expect_eq(rt_dc_read(&dc, K, &out), 1, "the rebuilt entry is valid");
  cr_expect(payload_ok(&out));
  rt_blob_free(&out);
  cr_expect_eq(fu_count_suffix(dir, ".fa2k"), 1);
  cr_expect_eq(fu_count_suffix(dir, ".lock"), 0);
}

static tu_log child_seen;
static int child_full_disk(void) {
  rt_log log = {FA2_LOG_WARN, tu_log_fn, &child_seen};
  rt_diskcache dc;
  open_cache(&dc, &log);
  for (int i = 0; i < 2; i++) { /* the second build runs memory-only, silently */
    rt_blob out;
    int built = 0;
    char err[256];
    if (rt_dc_get_or_build(&dc, K, build, NULL, &out, &built, err, sizeof err) != 0) return 11;
    if (!built || !payload_ok(&out)) return 12;
    rt_blob_free(&out);
  }
  if (child_seen.count[FA2_LOG_WARN] != 1) return 13;
  if (!strstr(child_seen.last, "File too large") || !strstr(child_seen.last, "memory only")) return 14;
  return 0;
}

Test(fault_cache, full_disk_mid_entry_leaves_nothing_and_next_run_stores) {
  int st = in_child(child_full_disk, RT_DC_HEADER_SIZE + 1000, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", root);
  cr_expect_eq(fu_count_suffix(dir, NULL), 0, "no partial entry, temporary or lock file");
  expect_next_run_rebuilds();
}

static int child_write(void) {
  rt_diskcache dc;
  open_cache(&dc, NULL);
  rt_blob out;
  int built;
  char err[256];
  rt_dc_get_or_build(&dc, K, build, NULL, &out, &built, err, sizeof err);
  return 20; /* not reached: killed inside the write */
}

Test(fault_cache, writer_killed_mid_entry_is_never_loaded) {
  int st = in_child(child_write, RT_DC_HEADER_SIZE + 1000, 1);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ, "child status %d", st);
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", root);
  /* The kill came mid-entry: a partial temporary file is what it left. */
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  int partial = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (strstr(e->d_name, ".tmp.")) {
      partial++;
      cr_expect_eq(tu_file_size(p), RT_DC_HEADER_SIZE + 1000);
    }
  }
  closedir(d);
  cr_expect_eq(partial, 1);
  expect_next_run_rebuilds();
}

/* The temporary files in dir other than skip (NULL: none skipped): their
 * count, and the path of the last in path. */
static int tmp_files(const char *dir, const char *skip, char *path, size_t len) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (strstr(e->d_name, ".tmp.") && !(skip && !strcmp(p, skip))) {
      n++;
      snprintf(path, len, "%s", p);
    }
  }
  closedir(d);
  return n;
}

/* Sets path's access and modification times to seconds ago. */
/* time(), the clock rt_diskcache reads: gettimeofday() runs up to a tick
 * ahead of it (time() may read the coarse clock), and at a second boundary
 * the cache then saw 7199 s, "119 minutes", for a file made 7200 s old. */
static void make_old(const char *path, long seconds) {
  struct timeval tv[2];
  tv[0] = tv[1] = (struct timeval){time(NULL) - seconds, 0};
  cr_assert_eq(utimes(path, tv), 0, "utimes %s", path);
}

/* Two writers killed mid-entry leave two temporary files; one is made two
 * hours old, and a third is written 59 minutes old. The next open removes
 * the old one only (a younger one may be a live writer's), saying so. */
Test(fault_cache, killed_writers_temporary_file_is_removed_after_an_hour) {
  char dir[500], old[1400], fresh[1400], young[1400];
  snprintf(dir, sizeof dir, "%s/kernels", root);
  for (int i = 0; i < 2; i++) {
    int st = in_child(child_write, RT_DC_HEADER_SIZE + 1000, 1);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ, "child status %d", st);
  }
  cr_assert_eq(tmp_files(dir, NULL, old, sizeof old), 2);
  cr_assert_eq(tmp_files(dir, old, fresh, sizeof fresh), 1);
  make_old(old, 2 * 3600);
  snprintf(young, sizeof young, "%.*s.tmp.young1", (int)(strstr(old, ".tmp.") - old), old);
  FILE *f = fopen(young, "w");
  cr_assert_not_null(f);
  fputs("partial", f);
  fclose(f);
  make_old(young, RT_DC_STALE_TMP_SECONDS - 60);

  rt_log log = {FA2_LOG_INFO, tu_log_fn, &seen};
  rt_diskcache dc;
  open_cache(&dc, &log);
  cr_expect_eq(tu_file_size(old), -1, "the two-hour-old temporary file is removed");
  cr_expect_eq(tu_file_size(fresh), RT_DC_HEADER_SIZE + 1000, "the new one stays");
  cr_expect_eq(tu_file_size(young), 7, "the 59-minute-old one stays");
  cr_expect_eq(tu_count(dir, ".tmp."), 2);
  cr_expect_eq(seen.count[FA2_LOG_INFO], 1);
  cr_expect(strstr(seen.last, old) && strstr(seen.last, "killed 120 minutes ago"), "%s", seen.last);
  expect_next_run_rebuilds();
  cr_expect_eq(tu_count(dir, ".tmp."), 2, "still there: younger than an hour");
}

static int child_build_and_die(void) {
  rt_diskcache dc;
  open_cache(&dc, NULL);
  rt_blob out;
  int built;
  char err[256];
  rt_dc_get_or_build(&dc, K, build_and_die, NULL, &out, &built, err, sizeof err);
  return 21;
}

Test(fault_cache, builder_killed_holding_the_lock_does_not_block_the_next) {
  int st = in_child(child_build_and_die, 0, 0);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %d", st);
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", root);
  cr_expect_eq(fu_count_suffix(dir, ".lock"), 1, "the dead holder's lock file is still there");
  expect_next_run_rebuilds();
}

/* --- the same faults through fa2_forward -------------------------------- */

static const char *CUBIN_HEAD = "CUBIN:// fwd_bf16_d64_m64n64w4s2_robust_b2_e0.001";

static int child_forward(void) {
  fa2_options o = {0};
  o.cache_dir = fu_path(0, "cache");
  fa2_context *ctx;
  if (fa2_create(&ctx, &o) != FA2_OK) return 30;
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  fa2_forward(ctx, &a, NULL);
  return 31; /* not reached */
}

Test(fault_cache, process_killed_writing_a_kernel_then_next_run_works) {
  int st = in_child(child_forward, RT_DC_HEADER_SIZE + 10, 1);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ, "child status %d", st);
  const char *cache = fu_path(0, "cache");
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 1, "compiled again: the partial entry is not one");
  cr_expect_str_eq(fake->last_image_head, CUBIN_HEAD);
  fa2_destroy(ctx);
  ctx = fu_ctx(cache, FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).disk_hits, 1);
  cr_expect_str_eq(fake->last_image_head, CUBIN_HEAD);
  fa2_destroy(ctx);
}

Test(fault_cache, full_disk_through_the_context_then_next_run_stores) {
  const char *cache = fu_path(0, "cache");
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", cache);
  rt_dc_fail_writes_for_tests(ENOSPC);
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  a.causal = 1;
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 2);
  cr_expect_eq(seen.count[FA2_LOG_WARN], 1, "one warning for the whole context");
  cr_expect_eq(fu_count_suffix(dir, NULL), 0);
  fa2_destroy(ctx);
  rt_dc_fail_writes_for_tests(0); /* space again */
  ctx = fu_ctx(cache, FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).misses, 1);
  cr_expect_eq(fu_count_suffix(dir, ".fa2k"), 1);
  fa2_destroy(ctx);
  ctx = fu_ctx(cache, FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).disk_hits, 1);
  fa2_destroy(ctx);
}

/* An entry damaged between two runs: the next run removes it, compiles
 * again and launches the right kernel; the run after that hits the disk. */
static void damaged_entry_between_runs(long keep_bytes, int flip_at) {
  const char *cache = fu_path(0, "cache");
  char dir[500];
  snprintf(dir, sizeof dir, "%s/kernels", cache);
  fa2_context *ctx = fu_ctx(cache, FA2_LOG_INFO);
  fa2_fwd_args a = fu_args(1, 10, 2, 2, 64);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_destroy(ctx);
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  char entry[1400] = "";
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".fa2k")) snprintf(entry, sizeof entry, "%s/%s", dir, e->d_name);
  closedir(d);
  cr_assert(entry[0], "no entry written");
  if (keep_bytes >= 0) cr_assert_eq(truncate(entry, keep_bytes), 0);
  if (flip_at >= 0) {
    int fd = open(entry, O_RDWR);
    unsigned char c;
    cr_assert_eq(pread(fd, &c, 1, flip_at), 1);
    c ^= 0x20;
    cr_assert_eq(pwrite(fd, &c, 1, flip_at), 1);
    close(fd);
  }
  memset(&seen, 0, sizeof seen);
  ctx = fu_ctx(cache, FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  fa2_cache_stats s = fu_stats(ctx);
  cr_expect_eq(s.misses, 1);
  cr_expect_eq(s.disk_hits, 0);
  cr_expect_eq(atomic_load(&fg_compiles), 2);
  cr_expect_str_eq(fake->last_image_head, CUBIN_HEAD);
  fa2_destroy(ctx);
  ctx = fu_ctx(cache, FA2_LOG_INFO);
  cr_assert_eq(fa2_forward(ctx, &a, NULL), FA2_OK, "%s", fa2_last_error());
  cr_expect_eq(fu_stats(ctx).disk_hits, 1, "the rebuilt entry is valid");
  cr_expect_str_eq(fake->last_image_head, CUBIN_HEAD);
  fa2_destroy(ctx);
}

Test(fault_cache, truncated_entry_between_runs) { damaged_entry_between_runs(RT_DC_HEADER_SIZE + 5, -1); }
Test(fault_cache, corrupted_payload_between_runs) { damaged_entry_between_runs(-1, RT_DC_HEADER_SIZE + 12); }
Test(fault_cache, corrupted_header_between_runs) { damaged_entry_between_runs(-1, 20); }
