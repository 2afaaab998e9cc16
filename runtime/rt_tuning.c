/* rt_tuning: reads the (provisional) tuning database, see rt_tuning.h. */
#include "rt_tuning.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

struct rt_tuning {
  json_t *entries; /* owned; read-only after load */
};

rt_tuning *rt_tuning_load(const char *path, const char *arch, const rt_log *log) {
  if (!path || !*path) return NULL;
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  const char *why = NULL;
  if (!root)
    why = je.text;
  else if (!json_is_object(root) || !json_is_object(json_object_get(root, "entries")))
    why = "no \"entries\" object";
  else {
    const char *file_arch = json_string_value(json_object_get(root, "arch"));
    if (file_arch && arch && strcmp(file_arch, arch) != 0) why = "made for another arch";
  }
  if (why) {
    rt_logf(log, FA2_LOG_WARN, "tuning database %s ignored (%s); using the built-in defaults",
            path, why);
    json_decref(root);
    return NULL;
  }
  rt_tuning *t = malloc(sizeof *t);
  if (!t) {
    json_decref(root);
    return NULL;
  }
  t->entries = json_incref(json_object_get(root, "entries"));
  json_decref(root);
  return t;
}

void rt_tuning_free(rt_tuning *t) {
  if (!t) return;
  json_decref(t->entries);
  free(t);
}

static int int_field(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  return json_is_integer(v) ? (int)json_integer_value(v) : 0;
}

int rt_tuning_find(const rt_tuning *t, const char *key, rt_tuning_entry *out) {
  memset(out, 0, sizeof *out);
  out->stab = -1;
  if (!t) return 0;
  json_t *e = json_object_get(t->entries, key);
  if (!json_is_object(e)) return 0;
  out->block_m = int_field(e, "block_m");
  out->block_n = int_field(e, "block_n");
  out->warps = int_field(e, "warps");
  out->stages = int_field(e, "stages");
  if (!out->block_n || !out->warps || !out->stages) out->block_m = 0; /* all or nothing */
  const char *stab = json_string_value(json_object_get(e, "stab"));
  if (stab && !strcmp(stab, "none")) out->stab = GEN_STAB_NONE;
  if (stab && !strcmp(stab, "paper")) out->stab = GEN_STAB_PAPER;
  if (stab && !strcmp(stab, "robust")) out->stab = GEN_STAB_ROBUST;
  out->beta = json_number_value(json_object_get(e, "beta"));
  out->eps = json_number_value(json_object_get(e, "eps"));
  return 1;
}
