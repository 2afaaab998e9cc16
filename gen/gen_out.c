/* gen_out: rendering a whole spec, manifest.json, and the output tree. */
#include "gen_out.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_fs.h"
#include "gen_lua.h"

static const char *const pass_names[] = {"fwd", "bwd"};
static const char *const dtype_names[] = {"bf16", "fp16"};
static const char *const stab_names[] = {"none", "paper", "robust", "balanced"};

void gen_source_path(const gen_variant *v, char *out, size_t cap) {
  snprintf(out, cap, "src/%s.cu", v->name);
}

int gen_render_all(gen_state *g, const gen_spec *s, gen_rendered *out, gen_err *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)(s->n_variants ? s->n_variants : 1);
  out->src = calloc(n, sizeof *out->src);
  out->len = calloc(n, sizeof *out->len);
  out->hash = calloc(n, sizeof *out->hash);
  if (!out->src || !out->len || !out->hash) {
    gen_rendered_free(out);
    return gen_fail(err, GEN_EINTERNAL, "out of memory");
  }
  for (int i = 0; i < s->n_variants; i++) {
    int rc = gen_render(g, &s->variants[i], &out->src[i], &out->len[i], err);
    if (rc) {
      gen_rendered_free(out);
      return rc;
    }
    gen_hash(out->src[i], out->len[i], out->hash[i]);
    out->n = i + 1;
  }
  return GEN_OK;
}

void gen_rendered_free(gen_rendered *r) {
  for (int i = 0; r->src && i < r->n; i++) free(r->src[i]);
  free(r->src);
  free(r->len);
  free(r->hash);
  memset(r, 0, sizeof *r);
}

static json_t *string_list(const char *const *items, int n) {
  json_t *a = json_array();
  for (int i = 0; n < 0 ? items[i] != NULL : i < n; i++) json_array_append_new(a, json_string(items[i]));
  return a;
}

static json_t *variant_json(const gen_variant *v, const char *hash) {
  char src[256];
  const char *entries[GEN_MAX_ENTRIES];
  for (int i = 0; i < v->n_entries; i++) entries[i] = v->entries[i];
  gen_source_path(v, src, sizeof src);
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(v->name));
  json_object_set_new(o, "pass", json_string(pass_names[v->pass]));
  json_object_set_new(o, "entries", string_list(entries, v->n_entries));
  json_object_set_new(o, "dtype", json_string(dtype_names[v->dtype]));
  json_object_set_new(o, "head_dim", json_integer(v->head_dim));
  json_object_set_new(o, "causal", json_boolean(v->causal));
  if (v->varlen) json_object_set_new(o, "varlen", json_true()); /* absent: fixed length */
  json_object_set_new(o, "block_m", json_integer(v->block_m));
  json_object_set_new(o, "block_n", json_integer(v->block_n));
  json_object_set_new(o, "warps", json_integer(v->warps));
  json_object_set_new(o, "stages", json_integer(v->stages));
  json_object_set_new(o, "wgmma", json_boolean(v->wgmma));
  json_object_set_new(o, "ws", json_boolean(v->ws));
  json_object_set_new(o, "stab", json_string(stab_names[v->stab]));
  json_object_set_new(o, "beta", json_real(v->beta));
  json_object_set_new(o, "eps", json_real(v->eps));
  json_object_set_new(o, "threads", json_integer(v->threads));
  json_object_set_new(o, "smem_bytes", json_integer(v->smem_bytes));
  json_object_set_new(o, "source", json_string(src));
  json_object_set_new(o, "source_hash", json_string(hash));
  return o;
}

int gen_manifest_json(const gen_spec *s, const gen_rendered *r, char **json, gen_err *err) {
  *json = NULL;
  const char *arch[8];
  for (int i = 0; i < s->n_arch; i++) arch[i] = s->arch[i];
  json_t *m = json_object();
  json_object_set_new(m, "fa2gen_version", json_string(gen_version()));
  json_object_set_new(m, "nvrtc_options", string_list(gen_nvrtc_options(), -1));
  json_object_set_new(m, "arch", string_list(arch, s->n_arch));
  json_object_set_new(m, "allow_spills", json_boolean(s->allow_spills));
  json_t *vs = json_array();
  for (int i = 0; i < s->n_variants; i++)
    json_array_append_new(vs, variant_json(&s->variants[i], r->hash[i]));
  json_object_set_new(m, "variants", vs);
  char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(m);
  if (!text) return gen_fail(err, GEN_EINTERNAL, "cannot encode manifest.json (out of memory?)");
  size_t n = strlen(text);
  char *out = malloc(n + 2);
  if (!out) {
    free(text);
    return gen_fail(err, GEN_EINTERNAL, "out of memory");
  }
  memcpy(out, text, n);
  out[n] = '\n';
  out[n + 1] = 0;
  free(text);
  *json = out;
  return GEN_OK;
}

int gen_write_tree(const gen_spec *s, const gen_rendered *r, const char *dir_arg, gen_err *err) {
  char dir[1200], tmp[1300], path[1600];
  int rc = gen_fs_clean_dir(dir_arg, dir, sizeof dir, err);
  if (!rc) rc = gen_fs_replaceable(dir, "manifest.json", err);
  if (rc) return rc;
  char *manifest = NULL;
  if ((rc = gen_manifest_json(s, r, &manifest, err))) return rc;
  if ((rc = gen_fs_make_tmp(dir, tmp, sizeof tmp, err))) {
    free(manifest);
    return rc;
  }
  snprintf(path, sizeof path, "%s/src", tmp);
  rc = gen_fs_mkdir_p(path, err);
  for (int i = 0; !rc && i < s->n_variants; i++) {
    char rel[256];
    gen_source_path(&s->variants[i], rel, sizeof rel);
    snprintf(path, sizeof path, "%s/%s", tmp, rel);
    rc = gen_fs_write(path, r->src[i], r->len[i], err);
  }
  if (!rc) {
    snprintf(path, sizeof path, "%s/manifest.json", tmp);
    rc = gen_fs_write(path, manifest, strlen(manifest), err);
  }
  free(manifest);
  if (!rc) rc = gen_fs_replace(tmp, dir, err);
  if (rc) gen_fs_rmtree(tmp);
  return rc;
}

int gen_tree_current(const gen_spec *s, const gen_rendered *r, const char *dir) {
  char path[1300], *want = NULL, *have = NULL;
  size_t have_len = 0;
  gen_err ignore;
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  int same = gen_manifest_json(s, r, &want, &ignore) == GEN_OK &&
             gen_read_file(path, &have, &have_len, &ignore) == GEN_OK &&
             have_len == strlen(want) && !memcmp(have, want, have_len);
  free(want);
  free(have);
  return same;
}
