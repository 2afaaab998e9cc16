/* Loading generated forward variants for the GPU programs (tests, bench). */
#include "fwd_check.h"
#include "gen.h"
#include "bwd_check.h"
#include "rt_nvrtc.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first score modifier (or varlen, dropout, sinks) of v, or NULL: these programs
 * pass none of their arguments, so they neither check nor time such variants. */
static const char *modifier_of(const gen_variant *v) {
  return v->varlen ? "varlen" : v->window ? "window" : v->alibi ? "alibi" : v->softcap ? "softcap"
         : v->dropout ? "dropout" : v->sinks ? "sinks" : NULL;
}

/* 1 when v's instructions exist on this device and these programs can launch it;
 * else a line says why it is skipped. */
static int runs_here(const gpu *g, const gen_variant *v) {
  const char *m = modifier_of(v);
  if (m) {
    printf("skipped: %s (%s: its arguments are not set here; tests/gpu/*.py check it through "
           "PyTorch)\n", v->name, m);
    return 0;
  }
  if (gen_variant_runs_on(v, g->arch)) return 1;
  printf("skipped: %s (wgmma tiles run on sm_90 only; this device is %s)\n", v->name, g->arch);
  return 0;
}

/* The generator's NVRTC options; with $FA2_WATCHDOG (clocks) set, also
 * -DFA2_WATCHDOG: a ws kernel's mbarrier wait traps after that long instead of
 * hanging (templates/hopper.cuh.tpl). Timings leave it unset. */
const char *const *gpu_nvrtc_options(void) {
  static const char *opts[16];
  static char define[64];
  if (opts[0]) return opts;
  const char *const *base = gen_nvrtc_options();
  int n = 0;
  while (base[n] && n < 14) opts[n] = base[n], n++;
  const char *w = getenv("FA2_WATCHDOG");
  if (w && *w) {
    snprintf(define, sizeof define, "-DFA2_WATCHDOG=%sLL", w);
    opts[n++] = define;
  }
  opts[n] = NULL;
  return opts;
}

/* The launch facts of a completed forward variant. */
static void fill_fwd(const gen_variant *gv, fwd_variant *v) {
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", gv->name);
  v->bf16 = gv->dtype == GEN_DTYPE_BF16;
  v->head_dim = gv->head_dim;
  v->causal = gv->causal;
  v->block_m = gv->block_m;
  v->block_n = gv->block_n;
  v->ws = gv->ws;
  v->persistent = gv->persistent;
  v->balanced = gv->stab == GEN_STAB_BALANCED;
  v->threads = gv->threads;
  v->smem_bytes = gv->smem_bytes;
}

/* A source of DIR named by its canonical name: 0 loaded, 1 skipped (not for
 * this device), -1 failed. */
static int load_variant(gpu *g, gen_state *gs, const char *dir, const char *src_dir,
                        const char *file, fwd_variant *v) {
  char name[160], path[2100];
  snprintf(name, sizeof name, "%.*s", (int)(strlen(file) - 3), file);
  snprintf(path, sizeof path, "%s/%s", src_dir, file);
  gen_variant gv;
  gen_err e;
  if (gen_variant_from_name(gs, name, &gv, &e) != GEN_OK) {
    fprintf(stderr, "%s\n", e.msg);
    return -1;
  }
  if (gv.pass != GEN_PASS_FWD || !runs_here(g, &gv)) return 1;
  fill_fwd(&gv, v);
  /* A cubin compiled ahead of time for this device (same name) saves the
   * NVRTC time; otherwise compile the source here. */
  char cubin[1100];
  snprintf(cubin, sizeof cubin, "%s/%s/%s.cubin", dir, g->arch, name);
  char *bin = gpu_read_file(cubin);
  CUmodule mod;
  int rc;
  if (bin) {
    rc = GPU_OK(g, g->cu->cuModuleLoadData(&mod, bin)) ? 0 : -1;
    free(bin);
  } else {
    char *src = gpu_read_file(path);
    rc = src ? gpu_module(g, src, file, gen_compile_arch(&gv, g->arch), gpu_nvrtc_options(), &mod) : -1;
    free(src);
  }
  if (rc != 0 || !GPU_OK(g, g->cu->cuModuleGetFunction(&v->fn, mod, gv.entries[0])) ||
      !GPU_OK(g, g->cu->cuFuncSetAttribute(v->fn, RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           v->smem_bytes)))
    return -1;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int gpu_load_variants(gpu *g, const char *dir, fwd_variant **out) {
  *out = NULL;
  /* An out/ tree of `fa2 build` keeps sources in src/ and cubins in <arch>/. */
  char src_dir[1100];
  snprintf(src_dir, sizeof src_dir, "%s/src", dir);
  DIR *d = opendir(src_dir);
  if (d)
    closedir(d);
  else
    snprintf(src_dir, sizeof src_dir, "%s", dir);
  d = opendir(src_dir);
  if (!d) {
    fprintf(stderr, "cannot open %s\n", dir);
    return -1;
  }
  char *files[512];
  int n_files = 0;
  for (struct dirent *e; (e = readdir(d)) && n_files < 512;)
    if (!strncmp(e->d_name, "fwd_", 4) && strstr(e->d_name, ".cu")) files[n_files++] = strdup(e->d_name);
  closedir(d);
  qsort(files, (size_t)n_files, sizeof *files, cmp_str);
  fwd_variant *vars = calloc((size_t)n_files + 1, sizeof *vars);
  gen_state *gs = NULL;
  gen_err e;
  if (gen_open(&gs, NULL, &e) != GEN_OK) fprintf(stderr, "%s\n", e.msg);
  int n = 0;
  for (int i = 0; i < n_files; i++) {
    const int rc = vars && gs ? load_variant(g, gs, dir, src_dir, files[i], &vars[n]) : -1;
    if (rc == 0) n++;
    if (rc < 0) fprintf(stderr, "cannot load %s/%s\n", dir, files[i]);
    free(files[i]);
  }
  if (gs) gen_close(gs);
  *out = vars;
  return n;
}

/* NVRTC compiles of a spec's variants, on every CPU (a spec of 50 big kernels
 * took a minute one after the other): sources rendered first (the generator
 * is one Lua state), then compiled by threads taking the next one in turn. */
typedef struct compile_job {
  const gpu *g;
  const gen_variant *const *vs;
  char **src;
  rt_blob *cubin;
  int *ok, n, next;
  pthread_mutex_t lock;
} compile_job;

static void *compile_worker(void *arg) {
  compile_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    const int i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->n) return NULL;
    char err[4096];
    j->ok[i] = j->src[i] && rt_nvrtc_compile(j->src[i], j->vs[i]->name, gen_compile_arch(j->vs[i], j->g->arch),
                                             gpu_nvrtc_options(), &j->cubin[i], NULL, err, sizeof err) == 0;
    if (j->src[i] && !j->ok[i]) fprintf(stderr, "%s\n", err);
  }
}

/* Renders and compiles vs[n] for this device: cubin[i] valid where ok[i]. */
static void compile_all(const gpu *g, gen_state *gs, const gen_variant *const *vs, int n, rt_blob *cubin,
                        int *ok) {
  compile_job j = {g, vs, calloc((size_t)n + 1, sizeof(char *)), cubin, ok, n, 0};
  (void)gpu_nvrtc_options(); /* its static table filled once, before the threads read it */
  for (int i = 0; j.src && i < n; i++) {
    size_t len;
    gen_err e;
    if (gen_render(gs, vs[i], &j.src[i], &len, &e) != GEN_OK) fprintf(stderr, "%s\n", e.msg), j.src[i] = NULL;
  }
  if (!j.src) j.n = 0;
  pthread_mutex_init(&j.lock, NULL);
  pthread_t th[16];
  int started = 0;
  for (; started < 16 && started < n; started++)
    if (pthread_create(&th[started], NULL, compile_worker, &j) != 0) break;
  compile_worker(&j);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  pthread_mutex_destroy(&j.lock);
  for (int i = 0; j.src && i < n; i++) free(j.src[i]);
  free(j.src);
}

/* The variants of spec that are for pass and run here, in spec order; their count. */
static int pick(const gpu *g, const gen_spec *spec, int pass, const gen_variant **vs) {
  int n = 0;
  for (int i = 0; i < spec->n_variants; i++)
    if (spec->variants[i].pass == pass && runs_here(g, &spec->variants[i])) vs[n++] = &spec->variants[i];
  return n;
}

/* A generated forward variant's compiled module: loaded, its launch facts filled. */
static int load_generated(gpu *g, const gen_variant *gv, const rt_blob *cubin, void *out) {
  fwd_variant *v = out;
  fill_fwd(gv, v);
  CUmodule mod;
  if (!GPU_OK(g, g->cu->cuModuleLoadData(&mod, cubin->data)) ||
      !GPU_OK(g, g->cu->cuModuleGetFunction(&v->fn, mod, gv->entries[0])) ||
      !GPU_OK(g, g->cu->cuFuncSetAttribute(v->fn, RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           v->smem_bytes)))
    return -1;
  return 0;
}

/* The variants of a spec file for pass that run here, compiled on every CPU and
 * loaded by load into an array of elements of size bytes (*out); their count,
 * or -1 when the spec does not load. */
typedef int (*load_fn)(gpu *g, const gen_variant *gv, const rt_blob *cubin, void *v);
static int load_spec(gpu *g, const char *spec_path, int pass, load_fn load, size_t size, void **out) {
  *out = NULL;
  gen_state *gs;
  gen_err e;
  gen_spec spec;
  /* FA2_TEMPLATES: another template folder (an experiment's variant, timed or
   * checked with the same spec as the embedded templates) */
  if (gen_open(&gs, getenv("FA2_TEMPLATES"), &e) != GEN_OK) {
    fprintf(stderr, "%s\n", e.msg);
    return -1;
  }
  if (gen_spec_load(gs, spec_path, &spec, &e) != GEN_OK) {
    fprintf(stderr, "%s\n", e.msg);
    gen_close(gs);
    return -1;
  }
  unsigned char *vars = calloc((size_t)spec.n_variants + 1, size);
  const gen_variant **vs = calloc((size_t)spec.n_variants + 1, sizeof *vs);
  rt_blob *cubin = calloc((size_t)spec.n_variants + 1, sizeof *cubin);
  int *ok = calloc((size_t)spec.n_variants + 1, sizeof *ok), n = 0;
  const int m = vars && vs && cubin && ok ? pick(g, &spec, pass, vs) : 0;
  compile_all(g, gs, vs, m, cubin, ok);
  for (int i = 0; i < m; i++) {
    if (ok[i] && load(g, vs[i], &cubin[i], vars + (size_t)n * size) == 0)
      n++;
    else
      fprintf(stderr, "cannot load %s\n", vs[i]->name);
    if (ok[i]) rt_blob_free(&cubin[i]);
  }
  free(vs), free(cubin), free(ok);
  gen_spec_free(&spec);
  gen_close(gs);
  *out = vars;
  return n;
}

int gpu_render_variants(gpu *g, const char *spec_path, fwd_variant **out) {
  return load_spec(g, spec_path, GEN_PASS_FWD, load_generated, sizeof **out, (void **)out);
}

static int load_bwd(gpu *g, const gen_variant *gv, const rt_blob *cubin, void *out) {
  bwd_variant *v = out;
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", gv->name);
  v->bf16 = gv->dtype == GEN_DTYPE_BF16;
  v->head_dim = gv->head_dim;
  v->tile_dim = gv->tile_dim;
  v->causal = gv->causal;
  v->block_n = gv->block_n;
  v->threads = gv->threads;
  v->smem_bytes = gv->smem_bytes;
  v->ws = gv->ws;
  v->persistent = gv->persistent;
  CUmodule mod;
  if (!GPU_OK(g, g->cu->cuModuleLoadData(&mod, cubin->data)) ||
      !GPU_OK(g, g->cu->cuModuleGetFunction(&v->pre, mod, "fa2_bwd_pre")) ||
      !GPU_OK(g, g->cu->cuModuleGetFunction(&v->main, mod, "fa2_bwd")) ||
      !GPU_OK(g, g->cu->cuModuleGetFunction(&v->dq, mod, "fa2_bwd_dq")) ||
      !GPU_OK(g, g->cu->cuModuleGetFunction(&v->dq_det, mod, "fa2_bwd_dq_det")) ||
      !GPU_OK(g, g->cu->cuFuncSetAttribute(v->main, RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           v->smem_bytes)) ||
      !GPU_OK(g, g->cu->cuFuncSetAttribute(v->dq_det, RT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           v->smem_bytes)))
    return -1;
  return 0;
}

int gpu_render_bwd_variants(gpu *g, const char *spec_path, bwd_variant **out) {
  return load_spec(g, spec_path, GEN_PASS_BWD, load_bwd, sizeof **out, (void **)out);
}
