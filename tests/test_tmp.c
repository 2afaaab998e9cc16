/* One scratch folder per run of fa2_tests: the runner makes it before the first
 * test and removes it after the last, and every test's temporary folders
 * (tu_tmpdir, in both helper headers) go under it through $TMPDIR, which the
 * test processes inherit. Tests need not clean up after themselves, and a
 * failed assertion (which ends its test before any cleanup) leaves nothing in
 * /tmp either. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_fs.h"
#include "gen_test_util.h"

static char run_dir[512];

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  const char *base = getenv("TMPDIR");
  snprintf(run_dir, sizeof run_dir, "%s/fa2tests.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(run_dir)) {
    fprintf(stderr, "fa2_tests: cannot make a scratch folder under %s\n", base && *base ? base : "/tmp");
    run_dir[0] = 0;
    return;
  }
  setenv("TMPDIR", run_dir, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
  (void)stats;
  if (!run_dir[0]) return;
  gen_fs_rmtree(run_dir);
  if (access(run_dir, F_OK) == 0) fprintf(stderr, "fa2_tests: could not remove %s\n", run_dir);
}

Test(tmp, test_folders_go_in_the_run_folder) {
  const char *t = getenv("TMPDIR");
  cr_assert(t && strstr(t, "/fa2tests."), "TMPDIR is %s, not the run folder", t ? t : "(unset)");
  char *d = tu_tmpdir();
  cr_expect(!strncmp(d, t, strlen(t)) && d[strlen(t)] == '/', "%s is not under %s", d, t);
  free(d);
}
