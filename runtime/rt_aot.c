/* rt_aot: the out/ directory reader (see rt_aot.h). */
#include "rt_aot.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rt_key.h"

struct rt_aot {
  char dir[1024], arch[16];
  json_t *manifest, *build; /* read-only after open */
  const rt_log *log;
};

static json_t *load(const char *dir, const char *name, const rt_log *log) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j && errno != ENOENT && strstr(je.text, "unable to open") == NULL)
    rt_logf(log, FA2_LOG_WARN, "AOT: %s does not parse (%s); ignored", path, je.text);
  return j;
}

rt_aot *rt_aot_open(const char *dir, const char *arch, const rt_log *log) {
  if (!dir || !*dir) return NULL;
  rt_aot *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  snprintf(a->dir, sizeof a->dir, "%s", dir);
  snprintf(a->arch, sizeof a->arch, "%s", arch);
  a->log = log;
  a->manifest = load(dir, "manifest.json", log);
  char name[64];
  const char *per_arch[] = {"%s/build.json", "%s/manifest.json", "%s.json"};
  for (int i = 0; i < 3 && !a->build; i++) {
    snprintf(name, sizeof name, per_arch[i], arch);
    a->build = load(dir, name, log);
  }
  if (!a->manifest || !a->build) {
    rt_logf(log, FA2_LOG_INFO, "AOT: %s has no %s; its cubins for %s are not used", dir,
            a->manifest ? "build record (<arch>/build.json)" : "manifest.json", arch);
    rt_aot_free(a);
    return NULL;
  }
  return a;
}

void rt_aot_free(rt_aot *a) {
  if (!a) return;
  json_decref(a->manifest);
  json_decref(a->build);
  free(a);
}

static json_t *find_entry(json_t *root, const char *name) {
  static const char *const lists[] = {"variants", "kernels", "cubins"};
  for (int i = 0; i < 3; i++) {
    json_t *list = json_object_get(root, lists[i]), *e;
    size_t idx;
    if (json_is_array(list)) {
      json_array_foreach(list, idx, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && !strcmp(n, name)) return e;
      }
    } else if (json_is_object(list) && json_is_object(json_object_get(list, name))) {
      return json_object_get(list, name);
    }
  }
  json_t *e = json_object_get(root, name);
  return json_is_object(e) ? e : NULL;
}

/* The 32 hex digits of an xxh3-128 hash field, or NULL. */
static const char *hash_field(json_t *entry, const char *const *keys) {
  for (int i = 0; keys[i]; i++) {
    const char *h = json_string_value(json_object_get(entry, keys[i]));
    if (!h) continue;
    if (!strncasecmp(h, "xxh3_128:", 9) || !strncasecmp(h, "xxh3-128:", 9)) h += 9;
    if (strlen(h) != 32) return NULL;
    for (int k = 0; k < 32; k++)
      if (!isxdigit((unsigned char)h[k])) return NULL;
    return h;
  }
  return NULL;
}

static const char *const source_keys[] = {"source_hash", "hash", "content_hash", NULL};
static const char *const cubin_keys[] = {"cubin_hash", NULL};

static int read_file(const char *path, rt_blob *out) {
  out->data = NULL;
  out->size = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  long size = (fseek(fp, 0, SEEK_END) == 0) ? ftell(fp) : -1;
  if (size <= 0 || fseek(fp, 0, SEEK_SET) != 0 || !(out->data = malloc((size_t)size)) ||
      fread(out->data, 1, (size_t)size, fp) != (size_t)size) {
    fclose(fp);
    rt_blob_free(out);
    return -1;
  }
  fclose(fp);
  out->size = (size_t)size;
  return 0;
}

int rt_aot_find(rt_aot *a, const char *name, const char *source_hash, rt_blob *cubin) {
  cubin->data = NULL;
  cubin->size = 0;
  if (!a) return 0;
  json_t *m = find_entry(a->manifest, name), *b = find_entry(a->build, name);
  if (!m && !b) return 0; /* not built ahead of time: not worth a message */
  const char *mh = m ? hash_field(m, source_keys) : NULL;
  const char *bh = b ? hash_field(b, source_keys) : NULL;
  const char *why = NULL;
  if (!m || !b)
    why = m ? "no build record for this arch" : "not in manifest.json";
  else if (!mh || !bh)
    why = "no xxh3-128 source hash recorded";
  else if (strcasecmp(mh, source_hash) != 0)
    why = "manifest.json's source differs from what this fa2gen renders (stale out/)";
  else if (strcasecmp(bh, source_hash) != 0)
    why = "the cubin was built from another source (stale build)";
  char path[1300];
  const char *file = b ? json_string_value(json_object_get(b, "cubin")) : NULL;
  if (file && *file && !strchr(file, '/')) /* the build record names the file */
    snprintf(path, sizeof path, "%s/%s/%s", a->dir, a->arch, file);
  else
    snprintf(path, sizeof path, "%s/%s/%s.cubin", a->dir, a->arch, name);
  if (!why && read_file(path, cubin) != 0) why = "cubin missing or unreadable";
  const char *ch = why ? NULL : hash_field(b, cubin_keys);
  if (ch) {
    char got[33];
    rt_hash128_hex(cubin->data, cubin->size, got);
    if (strcasecmp(got, ch) != 0) why = "cubin hash mismatch (corrupt file)";
  }
  if (why) {
    rt_blob_free(cubin);
    rt_logf(a->log, FA2_LOG_INFO, "AOT: not using %s: %s", path, why);
    return 0;
  }
  return 1;
}
