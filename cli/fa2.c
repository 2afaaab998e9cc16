/* fa2: the command (README "The fa2 command"). cli/ is the top layer: it uses
 * the generator (gen/), the runtime (runtime/) and the numerics lab (lab/), and
 * unlike those libraries, prints and exits with a status. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gen.h"

static const cli_command commands[] = {
    {"gen", cli_gen, "render every variant of a spec into out/ (sources + manifest.json)"},
    {"list", cli_list, "list the variants of a spec"},
    {"build", cli_build, "NVRTC-compile every variant ahead of time, with a resource table"},
    {"bias", cli_bias, "measure rounding bias on the tie-heavy suite (CPU lab or GPU kernels)"},
    {"tune", cli_tune, "choose tiles and beta for this GPU (autotuner; tuning database)"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: fa2 <command> [options]   (fa2 <command> --help for details)\n\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-6s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nfa2gen %s\n", gen_version());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("fa2gen %s\n", gen_version());
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "fa2: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
