/* fa2 list: the variants of a spec as a table (or bare names). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: fa2 list [SPEC] [--names]\n"
          "\n"
          "Lists the variants of SPEC (default specs/default.lua, or the embedded copy)\n"
          "as a table: canonical name, head dim, causal, tiles, stabilization, threads,\n"
          "dynamic shared memory (bytes).\n"
          "\n"
          "  --names     print only the canonical names, one per line\n"
          "  -h, --help  this help\n"
          "\n"
          "Exit status: 0 done, 2 bad usage or spec.\n");
}

static const char *const stab_names[] = {"none", "paper", "robust", "balanced"};

int cli_list(int argc, char **argv) {
  enum { OPT_NAMES = 256 };
  static const struct option opts[] = {{"names", no_argument, NULL, OPT_NAMES},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *spec_arg = NULL;
  int names = 0;
  optind = 0;
  for (int c; (c = cli_getopt("list", argc, argv, ":h", opts)) != -1;) {
    if (c == OPT_NAMES) names = 1;
    else if (c == 'h') return usage(stdout), 0;
    else return 2;
  }
  if (optind < argc) spec_arg = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "fa2 list: one SPEC at most, got '%s' too (fa2 list --help)\n", argv[optind]);
    return 2;
  }
  gen_state *g;
  gen_spec s;
  int rc = cli_open("list", spec_arg, NULL, &g, &s);
  if (rc) return rc;
  if (names) {
    for (int i = 0; i < s.n_variants; i++) printf("%s\n", s.variants[i].name);
    cli_close(g, &s);
    return 0;
  }
  int w = 7;
  for (int i = 0; i < s.n_variants; i++)
    if ((int)strlen(s.variants[i].name) > w) w = (int)strlen(s.variants[i].name);
  printf("%s: %d variants; arch", s.path, s.n_variants);
  for (int a = 0; a < s.n_arch; a++) printf("%s%s", a ? ", " : " ", s.arch[a]);
  printf("; spills %s\n\n", s.allow_spills ? "allowed" : "not allowed");
  printf("%-*s  %4s  %-6s  %7s  %7s  %5s  %6s  %-8s  %-6s  %-8s  %7s  %6s\n", w, "VARIANT", "D",
         "CAUSAL", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "STAB", "BETA", "EPS", "THREADS",
         "SMEM");
  for (int i = 0; i < s.n_variants; i++) {
    const gen_variant *v = &s.variants[i];
    char beta[32] = "-", eps[32] = "-";
    if (v->stab != GEN_STAB_NONE && v->stab != GEN_STAB_BALANCED) {
      snprintf(beta, sizeof beta, "%g", v->beta);
      snprintf(eps, sizeof eps, "%g", v->eps);
    }
    printf("%-*s  %4d  %-6s  %7d  %7d  %5d  %6d  %-8s  %-6s  %-8s  %7d  %6d\n", w, v->name,
           v->head_dim, v->causal ? "yes" : "no", v->block_m, v->block_n, v->warps, v->stages,
           stab_names[v->stab], beta, eps, v->threads, v->smem_bytes);
  }
  cli_close(g, &s);
  return 0;
}
