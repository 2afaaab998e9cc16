/* rt_build: NVRTC over a spec's variants in worker threads (rt_build.h). */
#include "rt_build.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen_fs.h"
#include "gen_lua.h"

#define MAX_JOBS 64

typedef struct work {
  const gen_spec *s;
  const gen_rendered *r;
  rt_build *b;
  pthread_mutex_t lock;
  int next, done;
  rt_build_progress progress;
  void *user;
} work;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void compile_item(work *w, rt_build_item *it) {
  const gen_variant *v = &w->s->variants[it->variant];
  char prog[200];
  char *log = NULL;
  snprintf(prog, sizeof prog, "%s.cu", v->name);
  double t0 = now_ms();
  int rc = rt_nvrtc_compile(w->r->src[it->variant], prog, gen_compile_arch(v, w->b->arch[it->arch]),
                            gen_nvrtc_options(),
                            &it->cubin, &log, it->err, sizeof it->err);
  it->compile_ms = now_ms() - t0;
  if (rc == 0) {
    it->ok = 1;
    for (int e = 0; e < v->n_entries; e++) {
      rt_ptxas_info *x = &it->entry[e];
      if (rt_ptxas_parse(log, v->entries[e], x) != 0) {
        it->ok = 0;
        snprintf(it->err, sizeof it->err,
                 "%s for %s: no ptxas report for kernel entry %s (is it extern \"C\" "
                 "__global__ in the template?)",
                 v->name, w->b->arch[it->arch], v->entries[e]);
        break;
      }
      if (x->registers > it->registers) it->registers = x->registers;
      if (x->stack_bytes > it->stack_bytes) it->stack_bytes = x->stack_bytes;
      if (x->static_smem_bytes > it->static_smem_bytes) it->static_smem_bytes = x->static_smem_bytes;
      it->spill_store_bytes += x->spill_store_bytes;
      it->spill_load_bytes += x->spill_load_bytes;
    }
    if (it->ok) gen_hash(it->cubin.data, it->cubin.size, it->cubin_hash);
  }
  free(log);
}

static void *worker(void *arg) {
  work *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    int i = w->next < w->b->n_items ? w->next++ : -1;
    pthread_mutex_unlock(&w->lock);
    if (i < 0) return NULL;
    rt_build_item *it = &w->b->items[i];
    compile_item(w, it);
    pthread_mutex_lock(&w->lock);
    w->done++;
    if (!it->ok) w->b->failed++;
    if (it->ok && (it->stack_bytes || it->spill_store_bytes || it->spill_load_bytes)) w->b->spilling++;
    if (w->progress)
      w->progress(w->user, w->done, w->b->n_items, w->s->variants[it->variant].name,
                  w->b->arch[it->arch]);
    pthread_mutex_unlock(&w->lock);
  }
}

int rt_build_run(const gen_spec *s, const gen_rendered *r, const char *const *arch, int n_arch,
                 int jobs, rt_build_progress progress, void *user, rt_build *b, gen_err *err) {
  memset(b, 0, sizeof *b);
  if (n_arch < 1 || n_arch > (int)(sizeof b->arch / sizeof b->arch[0]))
    return gen_fail(err, GEN_EINTERNAL, "rt_build_run: %d arches (1 to 8)", n_arch);
  if (r->n != s->n_variants)
    return gen_fail(err, GEN_EINTERNAL, "rt_build_run: %d sources for %d variants", r->n,
                    s->n_variants);
  for (int a = 0; a < n_arch; a++) {
    if (strlen(arch[a]) >= sizeof b->arch[a])
      return gen_fail(err, GEN_EINTERNAL, "rt_build_run: arch name too long");
    strcpy(b->arch[a], arch[a]);
  }
  b->n_arch = n_arch;
  char why[1024];
  if (rt_nvrtc_load(NULL, why, sizeof why) != 0) return gen_fail(err, GEN_EIO, "%s", why);
  rt_nvrtc_version(&b->nvrtc_major, &b->nvrtc_minor);

  /* Every variant on every arch it is built for (a spec's "auto" tiles that
   * differ per arch, the wgmma ones among them, are each their arch's pick). */
  b->items = calloc((size_t)(s->n_variants * n_arch + 1), sizeof *b->items);
  if (!b->items) return gen_fail(err, GEN_EINTERNAL, "out of memory");
  for (int i = 0; i < s->n_variants * n_arch; i++) {
    if (!gen_spec_runs_on(s, i / n_arch, arch[i % n_arch])) continue;
    b->items[b->n_items].variant = i / n_arch;
    b->items[b->n_items++].arch = i % n_arch;
  }
  work w = {.s = s, .r = r, .b = b, .progress = progress, .user = user};
  pthread_mutex_init(&w.lock, NULL);
  if (jobs < 1) jobs = 1;
  if (jobs > MAX_JOBS) jobs = MAX_JOBS;
  if (jobs > b->n_items) jobs = b->n_items > 0 ? b->n_items : 1;
  pthread_t threads[MAX_JOBS];
  int started = 0;
  double t0 = now_ms();
  /* The calling thread works too; a thread that cannot start is not needed. */
  for (int i = 1; i < jobs; i++)
    if (pthread_create(&threads[started], NULL, worker, &w) == 0) started++;
  worker(&w);
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
  b->wall_ms = now_ms() - t0;
  pthread_mutex_destroy(&w.lock);
  return GEN_OK;
}

void rt_build_free(rt_build *b) {
  for (int i = 0; b->items && i < b->n_items; i++) rt_blob_free(&b->items[i].cubin);
  free(b->items);
  memset(b, 0, sizeof *b);
}

static json_t *resources(int regs, int stack, int st, int ld, int smem) {
  json_t *o = json_object();
  json_object_set_new(o, "registers", json_integer(regs));
  json_object_set_new(o, "stack_bytes", json_integer(stack));
  json_object_set_new(o, "spill_store_bytes", json_integer(st));
  json_object_set_new(o, "spill_load_bytes", json_integer(ld));
  json_object_set_new(o, "static_smem_bytes", json_integer(smem));
  return o;
}

int rt_build_json(const gen_spec *s, const gen_rendered *r, const rt_build *b, int arch,
                  char **json, gen_err *err) {
  char ver[32], rel[256], cubin[256];
  *json = NULL;
  snprintf(ver, sizeof ver, "%d.%d", b->nvrtc_major, b->nvrtc_minor);
  json_t *m = json_object();
  json_object_set_new(m, "fa2gen_version", json_string(gen_version()));
  json_object_set_new(m, "arch", json_string(b->arch[arch]));
  json_object_set_new(m, "nvrtc_version", json_string(ver));
  json_t *opts = json_array();
  for (const char *const *o = gen_nvrtc_options(); *o; o++) json_array_append_new(opts, json_string(*o));
  json_object_set_new(m, "nvrtc_options", opts);
  json_t *ks = json_object();
  for (int i = 0; i < b->n_items; i++) {
    const rt_build_item *it = &b->items[i];
    if (it->arch != arch) continue;
    const gen_variant *v = &s->variants[it->variant];
    gen_source_path(v, rel, sizeof rel);
    snprintf(cubin, sizeof cubin, "%s.cubin", v->name);
    json_t *k = json_object();
    json_object_set_new(k, "source", json_string(rel));
    json_object_set_new(k, "source_hash", json_string(r->hash[it->variant]));
    json_object_set_new(k, "cubin", json_string(cubin));
    json_object_set_new(k, "cubin_hash", json_string(it->cubin_hash));
    json_object_set_new(k, "threads", json_integer(v->threads));
    json_object_set_new(k, "smem_bytes", json_integer(v->smem_bytes));
    json_object_update_new(k, resources(it->registers, it->stack_bytes, it->spill_store_bytes,
                                    it->spill_load_bytes, it->static_smem_bytes));
    json_t *es = json_object();
    for (int e = 0; e < v->n_entries; e++) {
      const rt_ptxas_info *x = &it->entry[e];
      json_object_set_new(es, v->entries[e],
                          resources(x->registers, x->stack_bytes, x->spill_store_bytes,
                                    x->spill_load_bytes, x->static_smem_bytes));
    }
    json_object_set_new(k, "entries", es);
    json_object_set_new(ks, v->name, k);
  }
  json_object_set_new(m, "kernels", ks);
  char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(m);
  size_t n = text ? strlen(text) : 0;
  char *out = text ? malloc(n + 2) : NULL;
  if (!out) {
    free(text);
    return gen_fail(err, GEN_EINTERNAL, "cannot encode build.json (out of memory?)");
  }
  memcpy(out, text, n);
  memcpy(out + n, "\n", 2);
  free(text);
  *json = out;
  return GEN_OK;
}

static int write_arch(const gen_spec *s, const gen_rendered *r, const rt_build *b, int a,
                      const char *dir, gen_err *err) {
  char adir[1300], tmp[1400], path[1700];
  snprintf(adir, sizeof adir, "%s/%s", dir, b->arch[a]);
  int rc = gen_fs_replaceable(adir, "build.json", err);
  if (!rc) rc = gen_fs_make_tmp(adir, tmp, sizeof tmp, err);
  if (rc) return rc;
  for (int i = 0; !rc && i < b->n_items; i++) {
    const rt_build_item *it = &b->items[i];
    if (it->arch != a) continue;
    snprintf(path, sizeof path, "%s/%s.cubin", tmp, s->variants[it->variant].name);
    rc = gen_fs_write(path, it->cubin.data, it->cubin.size, err);
  }
  char *json = NULL;
  if (!rc) rc = rt_build_json(s, r, b, a, &json, err);
  if (!rc) {
    snprintf(path, sizeof path, "%s/build.json", tmp);
    rc = gen_fs_write(path, json, strlen(json), err);
  }
  free(json);
  if (!rc) rc = gen_fs_replace(tmp, adir, err);
  if (rc) gen_fs_rmtree(tmp);
  return rc;
}

int rt_build_write(const gen_spec *s, const gen_rendered *r, const rt_build *b, const char *dir_arg,
                   gen_err *err) {
  char dir[1200];
  int rc = gen_fs_clean_dir(dir_arg, dir, sizeof dir, err);
  if (rc) return rc;
  if (b->failed)
    return gen_fail(err, GEN_EINTERNAL, "%d of %d compiles failed: nothing written", b->failed,
                    b->n_items);
  for (int a = 0; a < b->n_arch; a++)
    if ((rc = write_arch(s, r, b, a, dir, err))) return rc;
  return GEN_OK;
}
