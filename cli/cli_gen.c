/* fa2 gen: render every variant of a spec into DIR (sources + manifest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "gen_out.h"

enum { OPT_TEMPLATES = 256 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: fa2 gen [SPEC] [-o DIR] [--templates DIR]\n"
          "\n"
          "Renders every variant of SPEC into DIR: one self-contained CUDA source per\n"
          "variant (DIR/src/<name>.cu) and DIR/manifest.json (names, kernel entries,\n"
          "parameters, sources, content hashes). Same spec, same bytes.\n"
          "DIR is written next to itself and renamed into place: a failed run leaves\n"
          "it untouched. It is replaced whole (cubins of `fa2 build` too), so it must\n"
          "be absent, empty, or an earlier output.\n"
          "\n"
          "  SPEC              spec file (default specs/default.lua; the embedded copy\n"
          "                    when that file does not exist)\n"
          "  -o, --output DIR  output folder (default out)\n"
          "  --templates DIR   read templates from DIR instead of the embedded ones\n"
          "  -h, --help        this help\n"
          "\n"
          "Exit status: 0 done, 1 failed (template, file system), 2 bad usage or spec.\n");
}

int cli_gen(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                       {"templates", required_argument, NULL, OPT_TEMPLATES},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *out = "out", *templates = NULL, *spec_arg = NULL;
  optind = 0;
  for (int c; (c = cli_getopt("gen", argc, argv, ":o:h", opts)) != -1;) {
    if (c == 'o') out = optarg;
    else if (c == OPT_TEMPLATES) templates = optarg;
    else if (c == 'h') return usage(stdout), 0;
    else return 2;
  }
  if (optind < argc) spec_arg = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "fa2 gen: one SPEC at most, got '%s' too (fa2 gen --help)\n", argv[optind]);
    return 2;
  }

  gen_state *g;
  gen_spec spec;
  int rc = cli_open("gen", spec_arg, templates, &g, &spec);
  if (rc) return rc;
  gen_rendered r;
  gen_err err;
  int code = gen_render_all(g, &spec, &r, &err);
  if (!code) {
    code = gen_write_tree(&spec, &r, out, &err);
    gen_rendered_free(&r);
  }
  if (code) {
    fprintf(stderr, "fa2 gen: %s\n", err.msg);
    rc = code == GEN_ESPEC ? 2 : 1;
  } else {
    printf("fa2 gen: %d variants of %s -> %s/ (manifest.json, src/)\n", spec.n_variants,
           spec.path, out);
  }
  cli_close(g, &spec);
  return rc;
}
