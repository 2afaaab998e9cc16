/* rt_nvrtc: NVRTC through dlopen (see rt_nvrtc.h). */
#include "rt_nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
  nvrtcResult (*Version)(int *, int *);
  nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                               const char *const *, const char *const *);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*DestroyProgram)(nvrtcProgram *);
  const char *(*GetErrorString)(nvrtcResult);
} nv;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static int fail_for_tests;
static char loaded_path[1100];
static int ver_major, ver_minor;

static const char *const lib_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};

static void *try_open(const char *path, char *tried, size_t tlen) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  size_t n = strlen(tried);
  if (!h && n + 4 < tlen) snprintf(tried + n, tlen - n, "%s%s", n ? ", " : "", path);
  if (h) snprintf(loaded_path, sizeof loaded_path, "%s", path);
  return h;
}

static void *try_dir(const char *dir, char *tried, size_t tlen) {
  char path[1060];
  for (int i = 0; lib_names[i]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, lib_names[i]);
    void *h = try_open(path, tried, tlen);
    if (h) return h;
  }
  return NULL;
}

static void *open_library(const char *const *extra_dirs, char *tried, size_t tlen) {
  void *h;
  const char *env = getenv("FA2_NVRTC");
  if (env && *env) return try_open(env, tried, tlen); /* an explicit choice is final */
  const char *home = getenv("CUDA_HOME");
  if (home && *home) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/lib64", home);
    if ((h = try_dir(dir, tried, tlen))) return h;
  }
  for (int i = 0; lib_names[i]; i++)
    if ((h = try_open(lib_names[i], tried, tlen))) return h;
  for (int i = 0; extra_dirs && extra_dirs[i]; i++)
    if ((h = try_dir(extra_dirs[i], tried, tlen))) return h;
  return try_dir("/usr/local/cuda/lib64", tried, tlen);
}

int rt_nvrtc_load(const char *const *extra_dirs, char *err, size_t errlen) {
  pthread_mutex_lock(&load_lock);
  if (loaded) {
    pthread_mutex_unlock(&load_lock);
    return 0;
  }
  if (fail_for_tests) {
    pthread_mutex_unlock(&load_lock);
    snprintf(err, errlen, "NVRTC not found (disabled by a test)");
    return -1;
  }
  char tried[2048] = "";
  void *h = open_library(extra_dirs, tried, sizeof tried);
  if (!h) {
    pthread_mutex_unlock(&load_lock);
    snprintf(err, errlen,
             "NVRTC not found (tried %s); install the CUDA toolkit, or set FA2_NVRTC to "
             "the path of libnvrtc.so",
             tried);
    return -1;
  }
#define RESOLVE(field)                                                                  \
  *(void **)&nv.field = dlsym(h, "nvrtc" #field);                                       \
  if (!nv.field) {                                                                      \
    snprintf(err, errlen, "%s lacks nvrtc%s (NVRTC too old?)", loaded_path, #field);    \
    dlclose(h);                                                                         \
    pthread_mutex_unlock(&load_lock);                                                   \
    return -1;                                                                          \
  }
  RESOLVE(Version) RESOLVE(CreateProgram) RESOLVE(CompileProgram)
  RESOLVE(GetProgramLogSize) RESOLVE(GetProgramLog) RESOLVE(GetCUBINSize)
  RESOLVE(GetCUBIN) RESOLVE(DestroyProgram) RESOLVE(GetErrorString)
#undef RESOLVE
  nv.Version(&ver_major, &ver_minor);
  loaded = 1;
  pthread_mutex_unlock(&load_lock);
  return 0;
}

const char *rt_nvrtc_path(void) { return loaded ? loaded_path : ""; }

void rt_nvrtc_version(int *major, int *minor) {
  *major = loaded ? ver_major : 0;
  *minor = loaded ? ver_minor : 0;
}

void rt_blob_free(rt_blob *b) {
  free(b->data);
  b->data = NULL;
  b->size = 0;
}

/* The first few lines of a compile log, for one-line error messages. */
static void log_head(const char *log, char *err, size_t errlen, const char *prefix) {
  size_t n = (size_t)snprintf(err, errlen, "%s", prefix);
  for (int lines = 0; *log && lines < 6 && n + 1 < errlen; log++) {
    if (*log == '\n') lines++;
    err[n++] = *log == '\n' ? ' ' : *log;
  }
  err[n < errlen ? n : errlen - 1] = 0;
}

int rt_nvrtc_compile(const char *src, const char *program_name, const char *arch,
                     const char *const *opts, rt_blob *cubin, char **log, char *err,
                     size_t errlen) {
  cubin->data = NULL;
  cubin->size = 0;
  if (log) *log = NULL;
  if (rt_nvrtc_load(NULL, err, errlen) != 0) return -1;

  const char *all[64];
  char arch_opt[64];
  int n = 0;
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
  all[n++] = arch_opt;
  all[n++] = "--ptxas-options=-v";
  for (int i = 0; opts && opts[i] && n < 63; i++) all[n++] = opts[i];

  nvrtcProgram prog;
  nvrtcResult r = nv.CreateProgram(&prog, src, program_name, 0, NULL, NULL);
  if (r != 0) {
    snprintf(err, errlen, "nvrtcCreateProgram: %s", nv.GetErrorString(r));
    return -1;
  }
  nvrtcResult cr = nv.CompileProgram(prog, n, all);
  size_t log_size = 0;
  nv.GetProgramLogSize(prog, &log_size);
  char *text = malloc(log_size + 1);
  if (!text) {
    nv.DestroyProgram(&prog);
    snprintf(err, errlen, "out of memory reading the NVRTC log");
    return -1;
  }
  text[0] = 0;
  if (log_size) nv.GetProgramLog(prog, text);
  text[log_size] = 0;
  int rc = 0;
  if (cr != 0) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "NVRTC failed to compile %s for %s (%s): ", program_name,
             arch, nv.GetErrorString(cr));
    log_head(text, err, errlen, prefix);
    rc = -1;
  } else {
    size_t size = 0;
    nv.GetCUBINSize(prog, &size);
    cubin->data = malloc(size ? size : 1);
    if (!cubin->data || nv.GetCUBIN(prog, (char *)cubin->data) != 0) {
      rt_blob_free(cubin);
      snprintf(err, errlen, "could not read the cubin of %s", program_name);
      rc = -1;
    } else {
      cubin->size = size;
    }
  }
  nv.DestroyProgram(&prog);
  if (log)
    *log = text;
  else
    free(text);
  return rc;
}

/* ptxas -v prints, per entry:
 *   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
 *   ptxas info    : Function properties for NAME
 *       16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
 *   (CUDA 13 starts that line with "ptxas         .")
 *   ptxas info    : Used 128 registers, used 1 barriers, 1024 bytes smem, ...
 */
int rt_ptxas_parse(const char *log, const char *entry, rt_ptxas_info *out) {
  char key[512];
  memset(out, 0, sizeof *out);
  snprintf(key, sizeof key, "Compiling entry function '%s'", entry);
  const char *p = log ? strstr(log, key) : NULL;
  if (!p) return -1;
  const char *end = strstr(p + strlen(key), "Compiling entry function");
  const char *s;
  if ((s = strstr(p, "bytes stack frame")) && (!end || s < end)) {
    /* Back to the number: CUDA 13 prefixes the line with "ptxas         .". */
    while (s > p && s[-1] == ' ') s--;
    while (s > p && s[-1] >= '0' && s[-1] <= '9') s--;
    sscanf(s, "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads",
           &out->stack_bytes, &out->spill_store_bytes, &out->spill_load_bytes);
  }
  if ((s = strstr(p, "Used ")) && (!end || s < end)) {
    sscanf(s, "Used %d registers", &out->registers);
    const char *line_end = strchr(s, '\n');
    const char *smem = strstr(s, " bytes smem");
    if (smem && (!line_end || smem < line_end)) {
      while (smem > s && smem[-1] != ' ') smem--;
      sscanf(smem, "%d", &out->static_smem_bytes);
    }
  }
  return 0;
}

void rt_nvrtc_fail_load_for_tests(int on) {
  pthread_mutex_lock(&load_lock);
  fail_for_tests = on;
  pthread_mutex_unlock(&load_lock);
}
