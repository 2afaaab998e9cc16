/* A generator stand-in for runtime tests that must not depend on gen/ or
 * spend NVRTC time: names and sizes follow the ARCHITECTURE.md rules, the
 * "source" is one line, the "compiler" wraps the source in a marker. */
#ifndef RT_FAKE_GEN_H
#define RT_FAKE_GEN_H
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "rt_jit.h"
#include "rt_source.h"

static atomic_int fg_compiles;
static char fg_salt[64] = ""; /* changes every rendered source (a "new fa2gen") */
static const char *const fg_opts[] = {"-std=c++17", NULL};

static void fg_name(gen_variant *v) {
  static const char *const modes[] = {"none", "paper", "robust", "balanced"};
  int n = snprintf(v->name, sizeof v->name, "%s_%s_d%d%s%s%s%s%s%s%s_m%dn%dw%ds%d_%s",
                   v->pass == GEN_PASS_BWD ? "bwd" : "fwd", v->dtype ? "fp16" : "bf16",
                   v->head_dim, v->causal ? "_causal" : "", v->varlen ? "_varlen" : "",
                   v->window ? "_window" : "", v->alibi ? "_alibi" : "",
                   v->softcap ? "_softcap" : "", v->dropout ? "_dropout" : "",
                   v->sinks ? "_sinks" : "",
                   v->block_m, v->block_n, v->warps, v->stages, modes[v->stab]);
  if (v->stab == GEN_STAB_PAPER || v->stab == GEN_STAB_ROBUST)
    snprintf(v->name + n, sizeof v->name - (size_t)n, "_b%g_e%g", v->beta, v->eps);
}

static int fg_complete(gen_variant *v, const char *arch, char *err, size_t n) {
  if (v->stab < 0 || v->stab > GEN_STAB_BALANCED) {
    snprintf(err, n, "bad stab %d", v->stab);
    return 2;
  }
  if (!v->block_m) {
    v->block_m = 64;
    v->block_n = 64;
    v->warps = 4;
    v->stages = 2;
  }
  v->threads = 32 * v->warps;
  v->tile_dim = v->head_dim; /* the kernel head dims these tests use */
  if (v->pass == GEN_PASS_BWD) { /* mode-independent; four entries (gen/variant.lua) */
    v->stab = GEN_STAB_NONE, v->beta = v->eps = 0;
    const int d8 = v->head_dim + 8, bm = v->block_m, bn = v->block_n, s = v->stages;
    const int main_smem = 2 * d8 * (2 * bn + 2 * s * bm) + 8 * s * bm + 2 * bn * (bm + 8);
    const int det_smem = 4 * d8 * (16 * v->warps + bn);
    v->smem_bytes = main_smem > det_smem ? main_smem : det_smem;
    v->n_entries = 4;
    snprintf(v->entries[0], sizeof v->entries[0], "fa2_bwd_pre");
    snprintf(v->entries[1], sizeof v->entries[1], "fa2_bwd");
    snprintf(v->entries[2], sizeof v->entries[2], "fa2_bwd_dq");
    snprintf(v->entries[3], sizeof v->entries[3], "fa2_bwd_dq_det");
    if (v->sinks) v->n_entries = 5, snprintf(v->entries[4], sizeof v->entries[4], "fa2_bwd_sink");
  } else {
    v->smem_bytes = 2 * (v->head_dim + 8) * (v->block_m + 2 * v->stages * v->block_n);
    v->n_entries = v->dropout ? 2 : 1; /* a dropout forward carries its mask kernel */
    snprintf(v->entries[0], sizeof v->entries[0], "fa2_fwd");
    snprintf(v->entries[1], sizeof v->entries[1], "fa2_dropout_mask");
  }
  fg_name(v);
  return 0;
}

static int fg_from_name(const char *name, gen_variant *v, char *err, size_t n) {
  memset(v, 0, sizeof *v);
  const char *p;
  if (strncmp(name, "fwd_", 4) || !(p = strstr(name, "_d")) || sscanf(p, "_d%d", &v->head_dim) != 1 ||
      !(p = strstr(name, "_m")) ||
      sscanf(p, "_m%dn%dw%ds%d", &v->block_m, &v->block_n, &v->warps, &v->stages) != 4) {
    snprintf(err, n, "unknown variant name '%s'", name);
    return 2;
  }
  v->dtype = strstr(name, "_fp16_") ? 1 : 0;
  v->causal = strstr(name, "_causal") != NULL;
  v->varlen = strstr(name, "_varlen") != NULL;
  v->window = strstr(name, "_window") != NULL;
  v->alibi = strstr(name, "_alibi") != NULL;
  v->softcap = strstr(name, "_softcap") != NULL;
  v->dropout = strstr(name, "_dropout") != NULL;
  v->sinks = strstr(name, "_sinks") != NULL;
  v->stab = strstr(name, "_robust") ? 2 : strstr(name, "_paper") ? 1 : strstr(name, "_balanced") ? 3 : 0;
  p = strstr(name, v->stab == 2 ? "_robust" : "_paper");
  if ((v->stab == 1 || v->stab == 2) && p) sscanf(strchr(p + 1, '_'), "_b%lf_e%lf", &v->beta, &v->eps);
  return fg_complete(v, NULL, err, n);
}

static int fg_render(const gen_variant *v, char **src, size_t *len, char *err, size_t n) {
  char buf[512];
  int k = snprintf(buf, sizeof buf, "// %s%s\nextern \"C\" __global__ void fa2_fwd() {}\n",
                   v->name, fg_salt);
  *src = strdup(buf);
  *len = (size_t)k;
  return 0;
}

static int fg_compile(const char *src, const char *program, const char *arch,
                      const char *const *opts, rt_blob *cubin, char *err, size_t errlen) {
  atomic_fetch_add(&fg_compiles, 1);
  size_t n = strlen(src);
  cubin->data = malloc(n + 6);
  memcpy(cubin->data, "CUBIN:", 6);
  memcpy(cubin->data + 6, src, n);
  cubin->size = n + 6;
  return 0;
}

static const rt_source_ops fg_ops = {fg_complete, fg_from_name, fg_render, fg_opts};

/* Installs the stand-ins (the compiler only when fake_compiler). */
static inline void fg_install(int fake_compiler) {
  rt_source_set_ops_for_tests(&fg_ops);
  if (fake_compiler) rt_jit_set_compiler_for_tests(fg_compile);
}

#endif
