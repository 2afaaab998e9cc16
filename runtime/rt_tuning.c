/* rt_tuning: reads the tuning database, see rt_tuning.h. */
#include "rt_tuning.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"

struct rt_tuning {
  json_t *entries; /* owned; read-only after load */
  int has_lengths; /* some entry has by_seqlen */
  char path[1024];
  rt_log log;
};

static const char *str_field(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

int rt_tuning_identity(json_t *root, rt_identity *id, char *err, size_t len) {
  memset(id, 0, sizeof *id);
  const char *format = str_field(root, "format");
  json_t *version = json_object_get(root, "version");
  json_t *gpu = json_object_get(root, "gpu"), *made = json_object_get(root, "made_with");
  if (!format || strcmp(format, RT_TUNING_FORMAT))
    return snprintf(err, len, "not an fa2gen tuning database (\"format\" is not \"%s\")",
                    RT_TUNING_FORMAT), -1;
  if (!json_is_integer(version) || json_integer_value(version) != RT_TUNING_VERSION)
    return snprintf(err, len, "format version is not %d (run fa2 tune again)", RT_TUNING_VERSION),
           -1;
  const char *name = str_field(gpu, "name"), *arch = str_field(gpu, "arch");
  json_t *sms = json_object_get(gpu, "sm_count");
  const char *fa2gen = str_field(made, "fa2gen");
  if (!name || !arch || !json_is_integer(sms) || !fa2gen)
    return snprintf(err, len, "no gpu name, arch, sm_count or made_with.fa2gen"), -1;
  snprintf(id->name, sizeof id->name, "%s", name);
  snprintf(id->arch, sizeof id->arch, "%s", arch);
  snprintf(id->fa2gen, sizeof id->fa2gen, "%s", fa2gen);
  json_int_t n = json_integer_value(sms);
  id->sm_count = n > 0 && n < 100000 ? (int)n : -1;
  json_t *drv = json_object_get(made, "driver");
  id->driver = json_is_integer(drv) ? (int)json_integer_value(drv) : 0;
  const char *nvrtc = str_field(made, "nvrtc");
  if (nvrtc && sscanf(nvrtc, "%d.%d", &id->nvrtc_major, &id->nvrtc_minor) != 2)
    id->nvrtc_major = id->nvrtc_minor = 0;
  return 0;
}

rt_tuning *rt_tuning_load(const char *path, const rt_identity *now, int missing_ok,
                          const rt_log *log) {
  if (!path || !*path) return NULL;
  if (missing_ok && access(path, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    rt_logf(log, FA2_LOG_INFO, "no tuning database at %s: built-in tiles", path);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  char why[600] = "";
  rt_identity made;
  if (!root)
    snprintf(why, sizeof why, "%s", je.text);
  else if (!json_is_object(root) || !json_is_object(json_object_get(root, "entries")))
    snprintf(why, sizeof why, "no \"entries\" object");
  else if (now && rt_tuning_identity(root, &made, why, sizeof why) == 0 &&
           rt_identity_matches(&made, now, why, sizeof why)) {
    if (made.driver != now->driver ||
        (now->nvrtc_major && (made.nvrtc_major != now->nvrtc_major ||
                              made.nvrtc_minor != now->nvrtc_minor)))
      rt_logf(log, FA2_LOG_INFO,
              "tuning database %s was timed with driver %d and NVRTC %d.%d (now %d, %d.%d); "
              "using it (run fa2 tune again to refresh)",
              path, made.driver, made.nvrtc_major, made.nvrtc_minor, now->driver,
              now->nvrtc_major, now->nvrtc_minor);
  }
  if (why[0]) {
    rt_logf(log, FA2_LOG_WARN, "tuning database %s ignored (%s); using the built-in defaults",
            path, why);
    json_decref(root);
    return NULL;
  }
  rt_tuning *t = calloc(1, sizeof *t);
  if (!t) {
    json_decref(root);
    return NULL;
  }
  t->entries = json_incref(json_object_get(root, "entries"));
  const char *key;
  json_t *e;
  json_object_foreach(t->entries, key, e) t->has_lengths |= json_object_get(e, "by_seqlen") != NULL;
  snprintf(t->path, sizeof t->path, "%s", path);
  t->log = *log;
  json_decref(root);
  rt_logf(log, FA2_LOG_INFO, "tuning database %s: %zu entries", path,
          json_object_size(t->entries));
  return t;
}

void rt_tuning_free(rt_tuning *t) {
  if (!t) return;
  json_decref(t->entries);
  free(t);
}

const char *rt_tuning_path(const rt_tuning *t) { return t ? t->path : ""; }

int rt_tuning_has_lengths(const rt_tuning *t) { return t && t->has_lengths; }

const rt_log *rt_tuning_log(const rt_tuning *t) {
  static const rt_log quiet = {FA2_LOG_QUIET, NULL, NULL};
  return t ? &t->log : &quiet;
}

/* A tile field: an integer 1..RT_TUNING_MAX_TILE, else 0 (absent) or -1. */
static int tile_field(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  if (!v) return 0;
  if (!json_is_integer(v)) return -1;
  json_int_t i = json_integer_value(v);
  return i >= 1 && i <= RT_TUNING_MAX_TILE ? (int)i : -1;
}

/* The four tile fields of o into tile[0..3] and its optional "wgmma" and
 * "ws" flags into tile[4] and tile[5]: 1 when all four are there and valid, 0
 * when none is, -1 (with a warning naming where) otherwise. */
static int read_tiles(const rt_tuning *t, json_t *o, const char *where, int tile[6]) {
  static const char *const names[4] = {"block_m", "block_n", "warps", "stages"};
  static const char *const flags[2] = {"wgmma", "ws"};
  for (int i = 0; i < 2; i++) {
    json_t *f = json_object_get(o, flags[i]);
    tile[4 + i] = json_is_true(f);
    if (f && !json_is_boolean(f)) {
      rt_logf(&t->log, FA2_LOG_WARN,
              "tuning database %s, entry %s: %s is not true or false; built-in tiles for it",
              t->path, where, flags[i]);
      return -1;
    }
  }
  int present = 0, bad = -1;
  for (int i = 0; i < 4; i++) {
    tile[i] = tile_field(o, names[i]);
    present += tile[i] != 0;
    if (tile[i] < 0 && bad < 0) bad = i;
  }
  if (bad >= 0) {
    char *v = json_dumps(json_object_get(o, names[bad]), JSON_ENCODE_ANY);
    rt_logf(&t->log, FA2_LOG_WARN,
            "tuning database %s, entry %s: %s = %s is not a tile size (integers 1 to %d); "
            "built-in tiles for it",
            t->path, where, names[bad], v ? v : "?", RT_TUNING_MAX_TILE);
    free(v);
    return -1;
  }
  if (present && present < 4) { /* all or nothing */
    rt_logf(&t->log, FA2_LOG_WARN,
            "tuning database %s, entry %s: block_m, block_n, warps and stages go together; "
            "built-in tiles for it",
            t->path, where);
    return -1;
  }
  return present ? 1 : 0;
}

static void set_tiles(rt_tuning_entry *out, const int tile[6]) {
  out->block_m = tile[0], out->block_n = tile[1], out->warps = tile[2], out->stages = tile[3];
  out->wgmma = tile[4], out->ws = tile[5];
}

/* by_seqlen's entry nearest to seqlen (log scale; a tie: the shorter), or
 * NULL; a key that is not a length, or a value that is not an object, makes
 * the whole by_seqlen void (with a warning). */
static json_t *nearest_length(const rt_tuning *t, const char *key, json_t *by, double seqlen,
                              long *len) {
  const char *k;
  json_t *v, *pick = NULL;
  double best = INFINITY;
  json_object_foreach(by, k, v) {
    char *end;
    errno = 0;
    const long n = strtol(k, &end, 10);
    if (end == k || *end || errno || n < 1 || n > (1L << 30) || !json_is_object(v)) {
      rt_logf(&t->log, FA2_LOG_WARN,
              "tuning database %s, entry %s: by_seqlen \"%s\" is not a sequence length (1 to "
              "2^30) with tiles; by_seqlen ignored",
              t->path, key, k);
      return NULL;
    }
    const double d = fabs(log2((double)n) - log2(seqlen));
    if (d < best || (d == best && n < *len)) best = d, pick = v, *len = n;
  }
  return pick;
}

int rt_tuning_find(const rt_tuning *t, const char *key, double seqlen, rt_tuning_entry *out) {
  memset(out, 0, sizeof *out);
  out->stab = -1;
  if (!t) return 0;
  json_t *e = json_object_get(t->entries, key);
  if (!json_is_object(e)) return 0;
  int tile[6];
  if (read_tiles(t, e, key, tile) > 0) set_tiles(out, tile);
  json_t *by = json_object_get(e, "by_seqlen");
  if (by && !json_is_object(by))
    rt_logf(&t->log, FA2_LOG_WARN, "tuning database %s, entry %s: by_seqlen is not an object; ignored",
            t->path, key);
  long n = 0;
  json_t *at = seqlen > 0 && json_is_object(by) ? nearest_length(t, key, by, seqlen, &n) : NULL;
  char where[160];
  snprintf(where, sizeof where, "%s, by_seqlen %ld", key, n);
  if (at && read_tiles(t, at, where, tile) > 0) {
    set_tiles(out, tile);
    out->seqlen = (int)n;
  }
  const char *stab = str_field(e, "stab");
  if (stab && !strcmp(stab, "none")) out->stab = GEN_STAB_NONE;
  if (stab && !strcmp(stab, "paper")) out->stab = GEN_STAB_PAPER;
  if (stab && !strcmp(stab, "robust")) out->stab = GEN_STAB_ROBUST;
  out->beta = json_number_value(json_object_get(e, "beta"));
  out->eps = json_number_value(json_object_get(e, "eps"));
  return 1;
}
