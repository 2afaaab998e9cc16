/* rt_tuning_write: stores tuning results, see rt_tuning.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_paths.h"
#include "rt_tuning.h"

/* The entries of the file at path when it is for id; else a new object. */
static json_t *existing_entries(const char *path, const rt_identity *id) {
  json_t *root = json_load_file(path, 0, NULL);
  rt_identity made;
  char why[600];
  json_t *entries = NULL;
  if (root && rt_tuning_identity(root, &made, why, sizeof why) == 0 &&
      rt_identity_matches(&made, id, why, sizeof why) &&
      json_is_object(json_object_get(root, "entries")))
    entries = json_deep_copy(json_object_get(root, "entries"));
  json_decref(root);
  return entries ? entries : json_object();
}

/* The fields one tile timing writes together: an entry with new tiles
 * replaces all of them (an older run's by_seqlen must not outlive it). */
static const char *const TILE_FIELDS[] = {"block_m", "block_n", "warps", "stages", "wgmma", "ws",
                                          "ms", "by_seqlen"};

int rt_tuning_save(const char *path, const rt_identity *id, json_t *entries, char *err,
                   size_t len) {
  if (rt_mkdirs_parent(path) != 0)
    return snprintf(err, len, "cannot create the folder of %s: %s", path, strerror(errno)), -1;
  json_t *all = existing_entries(path, id);
  const char *key;
  json_t *e;
  json_object_foreach(entries, key, e) {
    json_t *old = json_object_get(all, key);
    if (json_is_object(old) && json_is_object(e)) {
      if (json_object_get(e, "block_m"))
        for (size_t i = 0; i < sizeof TILE_FIELDS / sizeof *TILE_FIELDS; i++)
          json_object_del(old, TILE_FIELDS[i]);
      json_object_update(old, e);
    } else
      json_object_set(all, key, e);
  }
  char nvrtc[32], stamp[32];
  snprintf(nvrtc, sizeof nvrtc, "%d.%d", id->nvrtc_major, id->nvrtc_minor);
  time_t now = time(NULL);
  struct tm tm;
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  json_t *root = json_pack("{s:s, s:i, s:{s:s, s:s, s:i}, s:{s:s, s:i, s:s}, s:s, s:o}", "format",
                           RT_TUNING_FORMAT, "version", RT_TUNING_VERSION, "gpu", "name", id->name,
                           "arch", id->arch, "sm_count", id->sm_count, "made_with", "fa2gen",
                           id->fa2gen, "driver", id->driver, "nvrtc", nvrtc, "updated", stamp,
                           "entries", all);
  if (!root) return snprintf(err, len, "out of memory"), -1;
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  int rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
  json_decref(root);
  if (rc != 0 || rename(tmp, path) != 0) {
    snprintf(err, len, "cannot write %s: %s", rc ? tmp : path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}
